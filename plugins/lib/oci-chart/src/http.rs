//! The [`Transport`] of the component: one request through `wasi:http/outgoing-handler`.
//! The host decides what may be reached (the registry of the call's spec, plain `http`
//! only when the spec says `insecure`, plus hosts granted in its configuration), caps
//! response sizes and times requests out; this module turns every failure into an error
//! naming the URL. Redirects and authentication are the caller's ([`crate::registry`]).

use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};
use url::Url;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode as HttpCode, Fields, Method as HttpMethod, OutgoingRequest, Scheme,
};
use wasip2::io::streams::StreamError;

use crate::registry::{Method, Request, Response, Transport, shown};

/// Bytes asked for per read of a response body.
const READ_CHUNK: u64 = 1 << 20;

/// `wasi:http` as a [`Transport`].
pub struct WasiHttp;

fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

fn failure(code: HttpCode, url: &Url) -> Error {
    let authority = authority(url);
    let shown = shown(url);
    let (kind, message) = match code {
        HttpCode::HttpRequestDenied => (
            ErrorCode::Denied,
            format!(
                "request to {shown} refused by the host: `{authority}` is not allowed for this source (only the registry of the spec's `url`, plain http only with `insecure: true`, and hosts granted in the configuration, e.g. a token service or blob storage on another host)"
            ),
        ),
        HttpCode::HttpResponseBodySize(limit) => (
            ErrorCode::InvalidInput,
            match limit {
                Some(limit) => {
                    format!("response from {shown} is larger than the size cap of {limit} bytes")
                }
                None => format!("response from {shown} is larger than the size cap"),
            },
        ),
        HttpCode::ConnectionRefused
        | HttpCode::DestinationNotFound
        | HttpCode::DestinationUnavailable
        | HttpCode::DestinationIpUnroutable
        | HttpCode::ConnectionTerminated
        | HttpCode::DnsTimeout
        | HttpCode::DnsError(_) => (
            ErrorCode::Unavailable,
            format!("cannot reach {shown}: {code:?}"),
        ),
        HttpCode::ConnectionTimeout
        | HttpCode::ConnectionReadTimeout
        | HttpCode::ConnectionWriteTimeout
        | HttpCode::HttpResponseTimeout => (
            ErrorCode::Timeout,
            format!("request to {shown} timed out: {code:?}"),
        ),
        HttpCode::TlsProtocolError
        | HttpCode::TlsCertificateError
        | HttpCode::TlsAlertReceived(_) => (
            ErrorCode::Unavailable,
            format!(
                "TLS with {shown} failed: {code:?} (a registry without TLS needs `insecure: true`)"
            ),
        ),
        HttpCode::InternalError(Some(message)) => (
            ErrorCode::Unavailable,
            format!("request to {shown} failed: {message}"),
        ),
        other => (
            ErrorCode::Unavailable,
            format!("request to {shown} failed: {other:?}"),
        ),
    };
    Error::new(kind, message)
}

fn internal(url: &Url, what: &str) -> Error {
    Error::new(
        ErrorCode::Internal,
        format!("request to {}: {what}", shown(url)),
    )
}

impl Transport for WasiHttp {
    fn send(&mut self, request: &Request) -> Result<Response, Error> {
        let url = &request.url;
        let entries: Vec<(String, Vec<u8>)> = request
            .headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.as_bytes().to_vec()))
            .collect();
        let fields = Fields::from_list(&entries)
            .map_err(|e| internal(url, &format!("invalid request header: {e:?}")))?;
        let outgoing = OutgoingRequest::new(fields);
        let scheme = match url.scheme() {
            "https" => Scheme::Https,
            "http" => Scheme::Http,
            other => Scheme::Other(other.to_owned()),
        };
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let method = match request.method {
            Method::Get => HttpMethod::Get,
            Method::Head => HttpMethod::Head,
        };
        outgoing
            .set_method(&method)
            .and_then(|()| outgoing.set_scheme(Some(&scheme)))
            .and_then(|()| outgoing.set_authority(Some(&authority(url))))
            .and_then(|()| outgoing.set_path_with_query(Some(&path)))
            .map_err(|()| internal(url, "the URL cannot be expressed as a request"))?;
        let pending =
            outgoing_handler::handle(outgoing, None).map_err(|code| failure(code, url))?;
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(code))) => return Err(failure(code, url)),
            Some(Err(())) | None => return Err(internal(url, "response future was not ready")),
        };
        let status = response.status();
        let headers = response.headers().entries();
        let incoming = response
            .consume()
            .map_err(|()| internal(url, "response body already taken"))?;
        let mut body = Vec::new();
        {
            let stream = incoming
                .stream()
                .map_err(|()| internal(url, "response body stream already taken"))?;
            loop {
                match stream.blocking_read(READ_CHUNK) {
                    Ok(chunk) => body.extend_from_slice(&chunk),
                    Err(StreamError::Closed) => break,
                    Err(StreamError::LastOperationFailed(error)) => {
                        return Err(match wasip2::http::types::http_error_code(&error) {
                            Some(code) => failure(code, url),
                            None => Error::new(
                                ErrorCode::Unavailable,
                                format!(
                                    "reading the response from {}: {}",
                                    shown(url),
                                    error.to_debug_string()
                                ),
                            ),
                        });
                    }
                }
            }
        }
        drop(incoming);
        drop(response);
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}
