//! The checked HTTP client: every request's host resolved and each address checked by the
//! egress guard, the connection made to a checked address (TLS verified by rustls), over
//! HTTP/1.1, with timeouts for connecting, the first byte and between bytes.

use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HeaderValue};
use http::{Method, Request, Response, Uri};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};

use crate::egress::{EgressError, EgressPolicy};
use crate::origin::Origin;
use crate::tls::{CustomCa, web_pki};

/// Why a checked request failed. The messages are those `wasi:http` hosts give the same
/// failures.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The HTTP exchange failed.
    #[error("hyper error: {0}")]
    Hyper(#[from] hyper::Error),
    /// No connection could be made.
    #[error("connection error: {0}")]
    Connect(std::io::Error),
    /// The host name could not be resolved.
    #[error("DNS error")]
    Unresolved,
    /// The host resolved to no address.
    #[error("destination not found")]
    NoAddress,
    /// Connecting took longer than the timeout.
    #[error("connection timeout")]
    ConnectTimeout,
    /// No byte arrived for longer than the timeout.
    #[error("connection read timeout")]
    ReadTimeout,
    /// The request's URI cannot be sent.
    #[error("invalid HTTP request URI")]
    InvalidUri,
    /// No response arrived within the timeout.
    #[error("HTTP response timeout")]
    ResponseTimeout,
    /// The response's body is larger than the cap.
    #[error("HTTP response body size exceeds limit: {0} bytes")]
    BodyTooLarge(u64),
    /// The grant does not allow the request's host.
    #[error("HTTP request denied")]
    Denied,
    /// Refused by the egress guard, or TLS failed: the reason.
    #[error("internal error: {0}")]
    Other(String),
}

/// A response body as the checked client returns it.
pub type Body = UnsyncBoxBody<Bytes, HttpError>;

/// A body of `bytes`.
pub fn full(body: Bytes) -> Body {
    Full::new(body)
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub(crate) fn too_large(declared: Option<u64>, cap: u64) -> bool {
    declared.is_some_and(|length| length > cap)
}

pub(crate) fn content_length<B>(response: &Response<B>) -> Option<u64> {
    response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// GET `url` for the host itself (a values file of a HelmRelease): plain `http(s)`, the
/// addresses `egress` allows (checked after DNS resolution), no credentials, no redirects
/// followed, at most `cap` bytes, `timeout` per step; the body as UTF-8 text. The error
/// names what failed; the URL in it is the caller's to redact.
pub async fn fetch_text(
    url: &str,
    egress: &EgressPolicy,
    timeout: Duration,
    cap: u64,
) -> Result<String, String> {
    let uri: Uri = url.trim().parse().map_err(|e| format!("not a URL: {e}"))?;
    let origin = Origin::of_uri(&uri)
        .ok_or_else(|| "only http:// and https:// URLs are fetched".to_owned())?;
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err("credentials in the URL are not sent; use a Secret instead".to_owned());
    }
    let request = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .body(full(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let response = tokio::time::timeout(
        timeout,
        send_checked(request, &origin, None, egress, timeout),
    )
    .await
    .map_err(|_| format!("no answer within {}s", timeout.as_secs()))?
    .map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the server answered {status}"));
    }
    if too_large(content_length(&response), cap) {
        return Err(format!("larger than {cap} bytes"));
    }
    let body = Limited::new(
        response.into_body(),
        usize::try_from(cap).unwrap_or(usize::MAX),
    )
    .collect()
    .await
    .map_err(|e| format!("reading the body: {e}"))?
    .to_bytes();
    String::from_utf8(body.to_vec()).map_err(|_| "the body is not UTF-8 text".to_owned())
}

/// Resolve the origin's host, keep the addresses `egress` allows, connect to the first
/// that answers (TLS for `https`: verified against `ca` when given, else the Web PKI),
/// and send the request over HTTP/1.1. The response body fails after `timeout` without a
/// byte.
pub async fn send_checked<B>(
    mut request: Request<B>,
    origin: &Origin,
    ca: Option<&CustomCa>,
    egress: &EgressPolicy,
    timeout: Duration,
) -> Result<Response<Body>, HttpError>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use rustls::pki_types::ServerName;
    let addresses = egress
        .resolve(&origin.host, origin.port)
        .await
        .map_err(|refused| {
            tracing::warn!(%refused, "http request refused by the egress guard");
            match refused {
                EgressError::Unresolved { .. } => HttpError::Unresolved,
                // Carries the reason to the plugin, which puts it in its error.
                refused => HttpError::Other(refused.to_string()),
            }
        })?;
    let mut last_error = None;
    let mut connected = None;
    for address in addresses {
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                connected = Some(stream);
                break;
            }
            Ok(Err(error)) => last_error = Some(HttpError::Connect(error)),
            Err(_) => last_error = Some(HttpError::ConnectTimeout),
        }
    }
    let stream = connected.ok_or(last_error.unwrap_or(HttpError::NoAddress))?;
    let io: Box<dyn AsyncStream> = if origin.scheme == "https" {
        let host = origin.host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| HttpError::Other(format!("TLS server name `{host}`: {e}")))?;
        let config = ca.map_or_else(web_pki, CustomCa::client_config);
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, stream)
            .await
            .map_err(|e| HttpError::Other(format!("TLS handshake with {origin} failed: {e}")))?;
        Box::new(tls)
    } else {
        Box::new(stream)
    };
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io)).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "http connection ended with an error");
        }
    });
    // The request line carries the path only; the origin goes into `Host`.
    if !request.headers().contains_key(http::header::HOST)
        && let Some(authority) = request.uri().authority()
        && let Ok(value) = HeaderValue::from_str(authority.as_str())
    {
        request.headers_mut().insert(http::header::HOST, value);
    }
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    *request.uri_mut() = path.parse().map_err(|_| HttpError::InvalidUri)?;
    let response = sender.send_request(request).await?;
    Ok(response.map(|body| {
        BetweenBytes {
            inner: body,
            timeout,
            sleep: Box::pin(tokio::time::sleep(timeout)),
        }
        .boxed_unsync()
    }))
}

/// A connection, plain or TLS.
trait AsyncStream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> AsyncStream for T {}

/// A response body that fails when no data arrives for `timeout` (a stalled server).
struct BetweenBytes {
    inner: hyper::body::Incoming,
    timeout: Duration,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl hyper::body::Body for BetweenBytes {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, HttpError>>> {
        use std::task::Poll;
        match std::pin::Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = tokio::time::Instant::now() + self.timeout;
                self.sleep.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(HttpError::from(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(HttpError::ReadTimeout))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
