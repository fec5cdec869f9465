//! Requests under an [`HttpGrant`]: the allowlist, the host's credentials, the size cap,
//! the timeouts and the shared response cache, for a plugin's `wasi:http` requests
//! ([`send_granted`]) and for runtimes with their own HTTP import ([`request`]).

use bytes::Bytes;
use http::header::{AUTHORIZATION, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};

use crate::auth::BasicAuth;
use crate::client::{Body, HttpError, content_length, full, send_checked, too_large};
use crate::grant::{Cached, CachedUrl, HttpGrant};
use crate::origin::{HostPattern, Origin, path_of, same_url};

/// Send a plugin's request under `grant` (none: refused): refused unless the grant allows
/// its host (logged, naming the host); a GET of a cached URL served from its cache; any
/// other with the grant's credentials, CA, cap and timeout.
pub async fn send_granted<B>(
    grant: Option<&HttpGrant>,
    request: Request<B>,
) -> Result<Response<Body>, HttpError>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let origin = Origin::of_uri(request.uri());
    let host = request
        .uri()
        .authority()
        .map_or_else(String::new, |a| a.to_string());
    let Some(grant) = grant else {
        tracing::warn!(%host, "http request refused: this call has no http grant");
        return Err(HttpError::Denied);
    };
    if !origin.as_ref().is_some_and(|o| grant.allows(o)) {
        tracing::warn!(
            %host,
            allowed = %grant.origins(),
            "http request refused: host is not on the allowlist of this call"
        );
        return Err(HttpError::Denied);
    }
    let method = request.method().clone();
    let path = path_of(request.uri()).to_owned();
    let cached = grant
        .cached
        .iter()
        .find(|c| method == Method::GET && same_url(request.uri(), &c.url));
    let response = match cached {
        Some(cached) => send_cached(grant, cached, request).await,
        None => send(grant, request, grant.max_response_bytes).await,
    };
    match &response {
        Ok(r) => {
            tracing::debug!(%host, %path, status = r.status().as_u16(), "http request")
        }
        Err(error) => tracing::debug!(%host, %path, %error, "http request failed"),
    }
    response
}

async fn send<B>(
    grant: &HttpGrant,
    mut request: Request<B>,
    cap: u64,
) -> Result<Response<Body>, HttpError>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // Where the host holds the credentials, it adds them (to credentialed origins only)
    // and the plugin's own Authorization header is dropped. Elsewhere a plugin may send
    // the header it built (e.g. a registry token it obtained), only to origins it may reach.
    let origin = Origin::of_uri(request.uri()).ok_or(HttpError::InvalidUri)?;
    if grant.credentials.is_some() {
        request.headers_mut().remove(AUTHORIZATION);
    }
    if grant.credentialed.contains(&origin)
        && let Some(value) = grant.credentials.as_ref().and_then(BasicAuth::header)
    {
        request.headers_mut().insert(AUTHORIZATION, value);
    }
    let ca = grant
        .ca
        .as_ref()
        .filter(|_| origin.scheme == "https" && grant.sources.contains(&origin));
    let response = tokio::time::timeout(
        grant.timeout,
        send_checked(request, &origin, ca, &grant.egress, grant.timeout),
    )
    .await
    .map_err(|_| HttpError::ResponseTimeout)??;
    if too_large(content_length(&response), cap) {
        return Err(HttpError::BodyTooLarge(cap));
    }
    Ok(response.map(move |body| {
        Limited::new(body, usize::try_from(cap).unwrap_or(usize::MAX))
            .map_err(move |error| match error.downcast::<HttpError>() {
                Ok(inner) => *inner,
                Err(_) => HttpError::BodyTooLarge(cap),
            })
            .boxed_unsync()
    }))
}

/// A GET of the cached URL: from memory when fresh, else revalidated (one request at a
/// time per cache; concurrent callers wait and then share the result).
async fn send_cached<B>(
    grant: &HttpGrant,
    cached: &CachedUrl,
    mut request: Request<B>,
) -> Result<Response<Body>, HttpError>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut slot = cached.cache.slot.lock().await;
    if cached
        .cache
        .stale
        .swap(false, std::sync::atomic::Ordering::AcqRel)
    {
        slot.fresh = false;
    }
    if slot.fresh
        && let Some(entry) = &slot.entry
    {
        return Ok(Response::new(full(entry.body.clone())));
    }
    if let Some(entry) = &slot.entry {
        if let Some(etag) = &entry.etag {
            request.headers_mut().insert(IF_NONE_MATCH, etag.clone());
        }
        if let Some(modified) = &entry.last_modified {
            request
                .headers_mut()
                .insert(IF_MODIFIED_SINCE, modified.clone());
        }
    }
    cached
        .cache
        .requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let response = send(grant, request, cached.max_bytes).await?;
    let status = response.status();
    if status == StatusCode::NOT_MODIFIED
        && let Some(body) = slot.entry.as_ref().map(|e| e.body.clone())
    {
        slot.fresh = true;
        return Ok(Response::new(full(body)));
    }
    if !status.is_success() {
        return Ok(response);
    }
    let etag = response.headers().get(ETAG).cloned();
    let last_modified = response.headers().get(LAST_MODIFIED).cloned();
    let body = response.into_body().collect().await?.to_bytes();
    slot.entry = Some(Cached {
        body: body.clone(),
        etag,
        last_modified,
    });
    slot.fresh = true;
    Ok(Response::new(full(body)))
}

/// Why a request made through [`request`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The grant does not allow the request's host.
    #[error("host `{host}` is not allowed (allowed: {allowed})")]
    Denied {
        /// The host asked for.
        host: String,
        /// What the grant allows.
        allowed: String,
    },
    /// The request could not be made or its response was refused (size cap, timeout).
    #[error("{0}")]
    Failed(HttpError),
}

/// One request for a runtime with its own HTTP import (Helm 4's Extism plugins), under
/// `grant` exactly as a `wasi:http` request would be: allowlist, caps, timeouts, CA. The
/// whole body is read (within the grant's cap).
pub async fn request(
    grant: &HttpGrant,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, RequestError> {
    let host = request
        .uri()
        .authority()
        .map_or_else(String::new, |a| a.to_string());
    let allowed = Origin::of_uri(request.uri()).is_some_and(|o| grant.allows(&o));
    if !allowed {
        let mut shown: Vec<String> = grant.sources.iter().map(Origin::to_string).collect();
        shown.extend(grant.extra_hosts.iter().map(HostPattern::to_string));
        return Err(RequestError::Denied {
            host,
            allowed: if shown.is_empty() {
                "nothing".into()
            } else {
                shown.join(", ")
            },
        });
    }
    let path = path_of(request.uri()).to_owned();
    let response = send(grant, request.map(full), grant.max_response_bytes)
        .await
        .map_err(RequestError::Failed)?;
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map_err(RequestError::Failed)?
        .to_bytes();
    tracing::debug!(%host, %path, status = parts.status.as_u16(), bytes = body.len(), "http request");
    Ok(Response::from_parts(parts, body))
}
