//! HTTP GET through `wasi:http/outgoing-handler`. The host decides what may be reached
//! (the repository of the call, plus hosts granted in its configuration), adds the
//! repository's credentials, caps response sizes and times requests out; this module
//! follows redirects and turns every failure into an error naming the URL.

use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};
use url::Url;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode as HttpCode, Fields, Method, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

/// Redirects followed before giving up (Go's `http.Client` default).
const MAX_REDIRECTS: usize = 10;

/// Bytes asked for per read of a response body.
const READ_CHUNK: u64 = 1 << 20;

/// A URL as shown in errors and logs: without user information.
pub fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.to_string()
}

fn failure(code: HttpCode, url: &Url) -> Error {
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let shown = shown(url);
    let (kind, message) = match code {
        HttpCode::HttpRequestDenied => (
            ErrorCode::Denied,
            format!(
                "request to {shown} refused: host `{authority}` is not allowed for this source (only the repository's host and hosts granted in the configuration)"
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

/// One response: status and the whole body.
struct Response {
    status: u16,
    location: Option<String>,
    body: Vec<u8>,
}

fn send(url: &Url) -> Result<Response, Error> {
    let request = OutgoingRequest::new(Fields::new());
    let scheme = match url.scheme() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => Scheme::Other(other.to_owned()),
    };
    let host = url.host_str().unwrap_or_default();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    request
        .set_method(&Method::Get)
        .and_then(|()| request.set_scheme(Some(&scheme)))
        .and_then(|()| request.set_authority(Some(&authority)))
        .and_then(|()| request.set_path_with_query(Some(&path)))
        .map_err(|()| internal(url, "the URL cannot be expressed as a request"))?;
    let pending = outgoing_handler::handle(request, None).map_err(|code| failure(code, url))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(failure(code, url)),
        Some(Err(())) | None => return Err(internal(url, "response future was not ready")),
    };
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .into_iter()
        .next()
        .map(|value| String::from_utf8_lossy(&value).into_owned());
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
        location,
        body,
    })
}

/// GET `url`, following redirects; the body of the final `200` response.
pub fn get(url: &Url) -> Result<Vec<u8>, Error> {
    let mut current = url.clone();
    for _ in 0..=MAX_REDIRECTS {
        let response = send(&current)?;
        match response.status {
            200..=299 => return Ok(response.body),
            301 | 302 | 303 | 307 | 308 => {
                let location = response.location.ok_or_else(|| {
                    Error::new(
                        ErrorCode::Unavailable,
                        format!(
                            "{} answered {} without a Location",
                            shown(&current),
                            response.status
                        ),
                    )
                })?;
                current = current.join(&location).map_err(|e| {
                    Error::new(
                        ErrorCode::Unavailable,
                        format!("{} redirects to an invalid URL: {e}", shown(&current)),
                    )
                })?;
            }
            status => {
                let code = match status {
                    401 | 403 => ErrorCode::Denied,
                    404 | 410 => ErrorCode::NotFound,
                    _ => ErrorCode::Unavailable,
                };
                let reason = match status {
                    401 => " (credentials missing or rejected)",
                    403 => " (forbidden)",
                    404 => " (not found)",
                    _ => "",
                };
                return Err(Error::new(
                    code,
                    format!("GET {} answered HTTP {status}{reason}", shown(&current)),
                ));
            }
        }
    }
    Err(Error::new(
        ErrorCode::Unavailable,
        format!(
            "GET {} redirected more than {MAX_REDIRECTS} times",
            shown(url)
        ),
    ))
}
