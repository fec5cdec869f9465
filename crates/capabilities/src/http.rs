//! Outgoing HTTP (`wasi:http/outgoing-handler`) for plugins, scoped per call by an
//! [`HttpGrant`] and sent by the checked client of `capstan-net`:
//!
//! - **allowlist**: a request may reach only the origin of the source the call handles
//!   (scheme, host and port of the repository URL) and the hosts granted in the
//!   configuration; anything else is refused before a connection is made, and the refusal
//!   is logged naming the host;
//! - **credentials**: basic auth from a Secret is added by the host, to requests to the
//!   repository's origin only; the plugin never sees it and it is never logged;
//! - **size caps**: responses larger than the grant's cap fail (checked against
//!   `Content-Length` up front and counted while streaming);
//! - **timeouts**: connect, first byte and between bytes, per request;
//! - **trust**: HTTPS to the source's origin may be verified against a custom CA bundle
//!   (from the release's Secret) in addition to the Web PKI roots;
//! - **a shared response cache** for one URL per grant (a repository's `index.yaml`):
//!   served from memory while the host considers it fresh, revalidated with
//!   `If-None-Match` / `If-Modified-Since` when the host marks it stale, so N releases on
//!   one repository cost one request per interval.
//!
//! - **egress guard**: the host name is resolved by the host and every address checked
//!   against the grant's [`EgressPolicy`] (no loopback, link-local, private… unless the
//!   configuration allows them); the connection goes to a checked address, so a DNS answer
//!   cannot change in between, and each request (a redirect too) is checked on its own.
//!
//! A call without an HTTP grant can reach nothing.

use std::sync::Arc;

use capstan_net::client::HttpError as NetError;
use http::Request;
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

pub use capstan_net::auth::BasicAuth;
pub use capstan_net::client::fetch_text;
pub use capstan_net::grant::{
    CachedUrl, DEFAULT_INDEX_CAP, DEFAULT_RESPONSE_CAP, DEFAULT_TIMEOUT, HttpGrant, ResponseCache,
};
pub use capstan_net::origin::{HostPattern, Origin, redacted_url};
pub use capstan_net::send::{RequestError, request};
pub use capstan_net::tls::CustomCa;

/// The `wasi:http` hooks of one call: everything goes through its grant.
#[derive(Default)]
pub struct HttpHooks {
    grant: Option<Arc<HttpGrant>>,
}

impl HttpHooks {
    /// Hooks enforcing `grant` (none: every request is refused).
    pub fn new(grant: Option<HttpGrant>) -> Self {
        HttpHooks {
            grant: grant.map(Arc::new),
        }
    }
}

type SendResult = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ),
    HttpError,
>;

fn done() -> Box<dyn Future<Output = Result<(), HttpError>> + Send> {
    Box::new(async { Ok(()) })
}

/// The `wasi:http` error of a failed checked request.
fn wasi_error(error: NetError) -> HttpError {
    match error {
        NetError::Hyper(error) => HttpError::Hyper(error),
        NetError::Connect(error) => HttpError::Connect(error),
        NetError::Unresolved => HttpError::DnsError {
            rcode: None,
            info_code: None,
        },
        NetError::NoAddress => HttpError::DestinationNotFound,
        NetError::ConnectTimeout => HttpError::ConnectionTimeout,
        NetError::ReadTimeout => HttpError::ConnectionReadTimeout,
        NetError::InvalidUri => HttpError::HttpRequestUriInvalid,
        NetError::ResponseTimeout => HttpError::HttpResponseTimeout,
        NetError::BodyTooLarge(cap) => HttpError::HttpResponseBodySize(Some(cap)),
        NetError::Denied => HttpError::HttpRequestDenied,
        NetError::Other(reason) => HttpError::InternalError(Some(reason)),
    }
}

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        let grant = self.grant.clone();
        Box::new(async move {
            let response = capstan_net::send::send_granted(grant.as_deref(), request)
                .await
                .map_err(wasi_error)?;
            let response = response.map(|body| body.map_err(wasi_error).boxed_unsync());
            Ok((response, done()))
        })
    }
}
