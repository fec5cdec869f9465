//! A read-only OCI distribution client for one repository: tag listing (with `Link`
//! pagination), manifest and blob downloads with digest checks, and authentication as
//! Docker/OCI registries and Helm (oras-go) do it.
//!
//! Authentication: requests go out anonymously first. On `401`, the `WWW-Authenticate`
//! challenge decides: `Basic` → retry with `username`/`password` from the credentials
//! Secret; `Bearer realm=…,service=…,scope=…` → use the Secret's `token` directly as the
//! bearer token when there is one, otherwise ask the realm for a token (with basic auth when
//! `username`/`password` are set, anonymously otherwise, which public repositories on Docker
//! Hub or GHCR need) and retry with it. The credentials are read from the host only when a
//! challenge asks for them and are sent only to the registry's origin and the token realm,
//! never across redirects to other origins (blob storage).
//!
//! The client is generic over the transport and the secret store so the whole flow is
//! tested natively with a scripted registry; the component plugs in `wasi:http` and the
//! `credentials` import.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};
use url::Url;

use crate::headers::{self, Challenge};
use crate::manifest::{self, Descriptor, MANIFEST_MEDIA_TYPE};
use crate::reference::Reference;

/// Redirects followed before giving up (Go's `http.Client` default).
const MAX_REDIRECTS: usize = 10;
/// Pages of a tag list followed before giving up.
const MAX_TAG_PAGES: usize = 1000;

/// HTTP methods the client uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }
}

/// One request.
#[derive(Clone, Debug)]
pub struct Request {
    /// Method.
    pub method: Method,
    /// Absolute `http(s)` URL.
    pub url: Url,
    /// Header names (lowercase) and values.
    pub headers: Vec<(&'static str, String)>,
}

/// One response, body read in full.
#[derive(Clone, Debug, Default)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header names (any case) and values.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// Every value of header `name`, as text.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .collect()
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<String> {
        self.header_values(name).into_iter().next()
    }
}

/// Sends requests; does not follow redirects.
pub trait Transport {
    /// Sends `request`; `Err` only when no response came (refused, unreachable, timeout).
    fn send(&mut self, request: &Request) -> Result<Response, Error>;
}

/// Reads keys of the release's credentials Secret.
pub trait Secrets {
    /// The value of `key`, if the Secret has it.
    fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, Error>;
}

/// The credentials found in the Secret (empty values count as absent).
#[derive(Clone, Default)]
struct Credentials {
    username: Option<String>,
    password: Option<String>,
    token: Option<String>,
}

impl Credentials {
    /// `Basic …` header value, when a username and a password are both set.
    fn basic(&self, subject: &str) -> Result<Option<String>, Error> {
        match (&self.username, &self.password) {
            (Some(user), Some(password)) => Ok(Some(format!(
                "Basic {}",
                BASE64.encode(format!("{user}:{password}"))
            ))),
            (None, None) => Ok(None),
            (Some(_), None) => Err(Error::new(
                ErrorCode::InvalidInput,
                format!("the credentials Secret for {subject} has `username` but no `password`"),
            )),
            (None, Some(_)) => Err(Error::new(
                ErrorCode::InvalidInput,
                format!("the credentials Secret for {subject} has `password` but no `username`"),
            )),
        }
    }
}

/// How requests to the registry are authorised at the moment.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Auth {
    Anonymous,
    /// A full `Authorization` value.
    Header(String),
}

/// A client for one repository of one registry.
pub struct Client<T, S> {
    transport: T,
    secrets: S,
    reference: Reference,
    base: Url,
    auth: Auth,
    /// Whether `auth` carries the Secret's credentials (or a token obtained with them).
    auth_uses_credentials: bool,
    credentials: Option<Credentials>,
}

/// A URL as shown in errors: without user information.
pub fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.to_string()
}

/// `realm` as shown in errors: without its query.
fn shown_realm(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    shown(&url)
}

/// The `errors` of a registry error body, as `CODE: message; …` (empty when none).
fn registry_errors(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Body {
        #[serde(default)]
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        #[serde(default)]
        code: String,
        #[serde(default)]
        message: String,
    }
    let Ok(body) = serde_json::from_slice::<Body>(body) else {
        return String::new();
    };
    body.errors
        .iter()
        .map(|e| match (e.code.is_empty(), e.message.is_empty()) {
            (false, false) => format!("{}: {}", e.code, e.message),
            (false, true) => e.code.clone(),
            _ => e.message.clone(),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl<T: Transport, S: Secrets> Client<T, S> {
    /// A client for `reference`, over `https`, or plain `http` when `insecure`.
    pub fn new(
        transport: T,
        secrets: S,
        reference: Reference,
        insecure: bool,
    ) -> Result<Self, Error> {
        let base = Url::parse(&format!("{}/", reference.base(insecure))).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("{reference}: registry address is not usable: {e}"),
            )
        })?;
        Ok(Client {
            transport,
            secrets,
            reference,
            base,
            auth: Auth::Anonymous,
            auth_uses_credentials: false,
            credentials: None,
        })
    }

    /// `oci://registry/repository`, for messages.
    pub fn subject(&self) -> String {
        self.reference.to_string()
    }

    fn api_url(&self, tail: &str) -> Result<Url, Error> {
        self.base
            .join(&format!("v2/{}/{tail}", self.reference.repository))
            .map_err(|e| {
                Error::new(
                    ErrorCode::InvalidInput,
                    format!("{}: cannot build the URL for `{tail}`: {e}", self.subject()),
                )
            })
    }

    fn load_credentials(&mut self) -> Result<Credentials, Error> {
        if let Some(credentials) = &self.credentials {
            return Ok(credentials.clone());
        }
        let mut read = |key: &str| -> Result<Option<String>, Error> {
            let Some(bytes) = self.secrets.get(key)? else {
                return Ok(None);
            };
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::new(
                    ErrorCode::InvalidInput,
                    format!("the credentials Secret's `{key}` is not UTF-8 text"),
                )
            })?;
            let text = text.trim_end_matches(['\r', '\n']).to_owned();
            Ok((!text.is_empty()).then_some(text))
        };
        let credentials = Credentials {
            username: read("username")?,
            password: read("password")?,
            token: read("token")?,
        };
        self.credentials = Some(credentials.clone());
        Ok(credentials)
    }

    /// Sends `method url`, following redirects. `authorization` is sent only to URLs of
    /// the origin it belongs to.
    fn follow(
        &mut self,
        method: Method,
        url: &Url,
        accept: Option<&str>,
        authorization: Option<(&Url, &str)>,
    ) -> Result<(Url, Response), Error> {
        let mut current = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut headers = Vec::new();
            if let Some(accept) = accept {
                headers.push(("accept", accept.to_owned()));
            }
            if let Some((origin, value)) = authorization
                && origin.origin() == current.origin()
            {
                headers.push(("authorization", value.to_owned()));
            }
            let request = Request {
                method,
                url: current.clone(),
                headers,
            };
            let response = self.transport.send(&request)?;
            if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
                return Ok((current, response));
            }
            let location = response.header("location").ok_or_else(|| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "{} {} answered {} without a Location",
                        method.as_str(),
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
            if !matches!(current.scheme(), "http" | "https") {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("{} redirects to a non-HTTP URL", shown(url)),
                ));
            }
        }
        Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "{} {} redirected more than {MAX_REDIRECTS} times",
                method.as_str(),
                shown(url)
            ),
        ))
    }

    /// Sends a registry API request, authenticating on `401` as the challenge asks. Any
    /// status but `401`/`403` is returned for the caller to judge.
    fn call(&mut self, method: Method, url: &Url, accept: Option<&str>) -> Result<Response, Error> {
        let mut authenticated = false;
        loop {
            let authorization = match &self.auth {
                Auth::Anonymous => None,
                Auth::Header(value) => Some(value.clone()),
            };
            let base = self.base.clone();
            let (final_url, response) = self.follow(
                method,
                url,
                accept,
                authorization.as_deref().map(|v| (&base, v)),
            )?;
            match response.status {
                401 if !authenticated => {
                    authenticated = true;
                    self.authenticate(&response, &final_url)?;
                }
                401 => return Err(self.refused(401, &response)),
                403 => return Err(self.refused(403, &response)),
                _ => return Ok(response),
            }
        }
    }

    fn refused(&self, status: u16, response: &Response) -> Error {
        let host = &self.reference.registry;
        let subject = self.subject();
        let detail = registry_errors(&response.body);
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        };
        let message = match (status, self.auth_uses_credentials) {
            (401, true) => format!(
                "registry {host} refused the credentials for {subject} (HTTP 401{detail}); check `username`/`password` or `token` in the release's credentials Secret"
            ),
            (401, false) => format!(
                "registry {host} requires credentials for {subject} (HTTP 401{detail}); set `username`/`password` or `token` in the release's credentials Secret"
            ),
            (_, true) => format!(
                "registry {host} denied access to {subject} with the given credentials (HTTP 403{detail})"
            ),
            (_, false) => format!(
                "registry {host} denied anonymous access to {subject} (HTTP 403{detail}); set credentials in the release's credentials Secret"
            ),
        };
        Error::new(ErrorCode::Denied, message)
    }

    /// Sets `self.auth` from the challenge of a `401` response.
    fn authenticate(&mut self, response: &Response, url: &Url) -> Result<(), Error> {
        let host = self.reference.registry.clone();
        let subject = self.subject();
        let challenges: Vec<Challenge> = response
            .header_values("www-authenticate")
            .iter()
            .flat_map(|value| headers::parse_challenges(value))
            .collect();
        let credentials = self.load_credentials()?;
        if let Some(bearer) = challenges.iter().find(|c| c.scheme == "bearer") {
            if let Some(token) = &credentials.token {
                self.auth = Auth::Header(format!("Bearer {token}"));
                self.auth_uses_credentials = true;
                return Ok(());
            }
            let token = self.fetch_token(bearer, url, &credentials)?;
            self.auth = Auth::Header(format!("Bearer {token}"));
            return Ok(());
        }
        if challenges.iter().any(|c| c.scheme == "basic") {
            return match credentials.basic(&subject)? {
                Some(value) => {
                    self.auth = Auth::Header(value);
                    self.auth_uses_credentials = true;
                    Ok(())
                }
                None if credentials.token.is_some() => Err(Error::new(
                    ErrorCode::Denied,
                    format!(
                        "registry {host} asks for basic authentication for {subject}, but the credentials Secret has only `token`; set `username` and `password`"
                    ),
                )),
                None => Err(Error::new(
                    ErrorCode::Denied,
                    format!(
                        "registry {host} requires credentials for {subject} (HTTP 401, basic authentication); set `username` and `password` in the release's credentials Secret"
                    ),
                )),
            };
        }
        let offered = response.header_values("www-authenticate").join(", ");
        Err(Error::new(
            ErrorCode::Denied,
            if offered.is_empty() {
                format!(
                    "registry {host} answered HTTP 401 for {subject} without an authentication challenge"
                )
            } else {
                format!(
                    "registry {host} asks for an unsupported authentication scheme for {subject}: {offered}"
                )
            },
        ))
    }

    /// Asks the realm of a `Bearer` challenge for a token.
    fn fetch_token(
        &mut self,
        challenge: &Challenge,
        url: &Url,
        credentials: &Credentials,
    ) -> Result<String, Error> {
        let host = self.reference.registry.clone();
        let subject = self.subject();
        let realm = challenge.param("realm").unwrap_or_default();
        let mut realm_url = url.join(realm).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "registry {host} names an invalid token realm `{realm}` for {subject}: {e}"
                ),
            )
        })?;
        if realm.is_empty() || !matches!(realm_url.scheme(), "http" | "https") {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "registry {host} sent a Bearer challenge without a usable realm for {subject}"
                ),
            ));
        }
        let default_scope = format!("repository:{}:pull", self.reference.repository);
        {
            let mut query = realm_url.query_pairs_mut();
            if let Some(service) = challenge.param("service") {
                query.append_pair("service", service);
            }
            query.append_pair("scope", challenge.param("scope").unwrap_or(&default_scope));
        }
        let basic = credentials.basic(&subject)?;
        let origin = realm_url.clone();
        let (_, response) = self.follow(
            Method::Get,
            &realm_url,
            None,
            basic.as_deref().map(|v| (&origin, v)),
        )?;
        let realm_shown = shown_realm(&realm_url);
        match response.status {
            200..=299 => {}
            401 | 403 if basic.is_some() => {
                return Err(Error::new(
                    ErrorCode::Denied,
                    format!(
                        "registry {host} refused the credentials for {subject}: its token service {realm_shown} answered HTTP {}; check `username`/`password` in the release's credentials Secret",
                        response.status
                    ),
                ));
            }
            401 | 403 => {
                return Err(Error::new(
                    ErrorCode::Denied,
                    format!(
                        "registry {host} requires credentials for {subject}: its token service {realm_shown} refused an anonymous token (HTTP {}); set `username`/`password` or `token` in the release's credentials Secret",
                        response.status
                    ),
                ));
            }
            status => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "token service {realm_shown} of registry {host} answered HTTP {status} for {subject}"
                    ),
                ));
            }
        }
        #[derive(serde::Deserialize)]
        struct TokenResponse {
            #[serde(default)]
            token: String,
            #[serde(default)]
            access_token: String,
        }
        let parsed: TokenResponse = serde_json::from_slice(&response.body).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "token service {realm_shown} of registry {host} answered with invalid JSON: {e}"
                ),
            )
        })?;
        let token = if parsed.token.is_empty() {
            parsed.access_token
        } else {
            parsed.token
        };
        if token.is_empty() {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("token service {realm_shown} of registry {host} answered without a token"),
            ));
        }
        self.auth_uses_credentials = basic.is_some();
        Ok(token)
    }

    /// An error for an unexpected status of `method url`.
    fn status_error(&self, method: Method, url: &Url, response: &Response, what: &str) -> Error {
        let status = response.status;
        let detail = registry_errors(&response.body);
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        };
        let (code, message) = match status {
            404 => (ErrorCode::NotFound, format!("{what} not found")),
            429 => (
                ErrorCode::Unavailable,
                "the registry is rate limiting requests".to_owned(),
            ),
            400..=499 => (ErrorCode::InvalidInput, format!("{what}: request refused")),
            _ => (ErrorCode::Unavailable, format!("{what}: registry error")),
        };
        Error::new(
            code,
            format!(
                "{message}: {} {} answered HTTP {status}{detail}",
                method.as_str(),
                shown(url)
            ),
        )
    }

    /// Every tag of the repository, following `Link` pagination.
    pub fn tags(&mut self) -> Result<Vec<String>, Error> {
        #[derive(serde::Deserialize)]
        struct TagList {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let subject = self.subject();
        let mut url = self.api_url("tags/list")?;
        let mut tags = Vec::new();
        let mut seen = HashSet::new();
        for _ in 0..MAX_TAG_PAGES {
            if !seen.insert(url.to_string()) {
                break;
            }
            let response = self.call(Method::Get, &url, Some("application/json"))?;
            if response.status != 200 {
                return Err(self.status_error(
                    Method::Get,
                    &url,
                    &response,
                    &format!("repository {subject}"),
                ));
            }
            let list: TagList = serde_json::from_slice(&response.body).map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("the tag list at {} is not valid JSON: {e}", shown(&url)),
                )
            })?;
            tags.extend(list.tags.unwrap_or_default());
            let Some(next) = response
                .header_values("link")
                .iter()
                .find_map(|v| headers::next_link(v))
            else {
                return Ok(tags);
            };
            url = url.join(&next).map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "the tag list at {} links to an invalid next page: {e}",
                        shown(&url)
                    ),
                )
            })?;
        }
        Err(Error::new(
            ErrorCode::Unavailable,
            format!("the tag list of {subject} has more than {MAX_TAG_PAGES} pages or loops"),
        ))
    }

    /// The manifest digest tag `tag` points at; none when the tag does not exist.
    pub fn resolve_tag(&mut self, tag: &str) -> Result<Option<String>, Error> {
        let url = self.api_url(&format!("manifests/{tag}"))?;
        let response = self.call(Method::Head, &url, Some(MANIFEST_MEDIA_TYPE))?;
        match response.status {
            200 => {
                if let Some(digest) = response.header("docker-content-digest")
                    && manifest::parse_digest(digest.trim()).is_ok()
                {
                    return Ok(Some(digest.trim().to_owned()));
                }
            }
            404 => return Ok(None),
            // Some registries refuse HEAD; GET below.
            405 | 501 => {}
            _ => {
                return Err(self.status_error(
                    Method::Head,
                    &url,
                    &response,
                    &format!("tag {tag} of {}", self.subject()),
                ));
            }
        }
        // No usable digest header: the digest of the manifest bytes themselves.
        let response = self.call(Method::Get, &url, Some(MANIFEST_MEDIA_TYPE))?;
        match response.status {
            200 => Ok(Some(manifest::sha256_digest(&response.body))),
            404 => Ok(None),
            _ => Err(self.status_error(
                Method::Get,
                &url,
                &response,
                &format!("tag {tag} of {}", self.subject()),
            )),
        }
    }

    /// The manifest with digest `digest`, checked against it.
    pub fn manifest(&mut self, digest: &str) -> Result<Vec<u8>, Error> {
        let url = self.api_url(&format!("manifests/{digest}"))?;
        let response = self.call(Method::Get, &url, Some(MANIFEST_MEDIA_TYPE))?;
        if response.status != 200 {
            return Err(self.status_error(
                Method::Get,
                &url,
                &response,
                &format!("manifest {}@{digest}", self.subject()),
            ));
        }
        manifest::verify(digest, &response.body).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "manifest {}@{digest} does not match its digest: {e}",
                    self.subject()
                ),
            )
        })?;
        Ok(response.body)
    }

    /// The blob `descriptor` names, checked against its size and digest.
    pub fn blob(&mut self, descriptor: &Descriptor) -> Result<Vec<u8>, Error> {
        let url = self.api_url(&format!("blobs/{}", descriptor.digest))?;
        let what = format!(
            "blob {} ({}) of {}",
            descriptor.digest,
            descriptor.media_type,
            self.subject()
        );
        let response = self.call(Method::Get, &url, None)?;
        if response.status != 200 {
            return Err(self.status_error(Method::Get, &url, &response, &what));
        }
        if response.body.len() as u64 != descriptor.size {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "{what} is {} bytes, the manifest says {}",
                    response.body.len(),
                    descriptor.size
                ),
            ));
        }
        manifest::verify(&descriptor.digest, &response.body).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("{what} does not match its digest: {e}"),
            )
        })?;
        Ok(response.body)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::manifest::sha256_digest;
    use crate::reference;

    /// A scripted registry: answers by `METHOD path?query`, records what it was sent.
    #[derive(Default)]
    struct Fake {
        routes: HashMap<String, Vec<Response>>,
        log: Vec<(String, Option<String>)>,
        /// `Authorization` values the registry accepts; others get a 401 with `challenge`.
        accept_auth: Vec<String>,
        challenge: Option<String>,
        /// Authorization values `/token` accepts (none: anonymous allowed) and the token.
        token_auth: Option<String>,
        issued: Option<String>,
        down: bool,
    }

    fn ok(body: &str) -> Response {
        Response {
            status: 200,
            headers: vec![],
            body: body.as_bytes().to_vec(),
        }
    }

    fn status(code: u16) -> Response {
        Response {
            status: code,
            ..Response::default()
        }
    }

    impl Fake {
        fn route(&mut self, key: &str, response: Response) {
            self.routes
                .entry(key.to_owned())
                .or_default()
                .push(response);
        }
    }

    impl Transport for &mut Fake {
        fn send(&mut self, request: &Request) -> Result<Response, Error> {
            let auth = request
                .headers
                .iter()
                .find(|(n, _)| *n == "authorization")
                .map(|(_, v)| v.clone());
            let path = match request.url.query() {
                Some(q) => format!("{}?{q}", request.url.path()),
                None => request.url.path().to_owned(),
            };
            let key = format!(
                "{} {}{}",
                request.method.as_str(),
                request.url.host_str().unwrap_or_default(),
                path
            );
            self.log.push((key.clone(), auth.clone()));
            if self.down {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot reach {}: ConnectionRefused", shown(&request.url)),
                ));
            }
            if request.url.path() == "/token" && request.url.host_str() == Some("auth.example") {
                if self.token_auth.is_some() && auth != self.token_auth {
                    return Ok(status(401));
                }
                return Ok(ok(&format!(
                    "{{\"access_token\":\"{}\"}}",
                    self.issued.clone().unwrap_or_default()
                )));
            }
            if request.url.host_str() == Some("registry.example")
                && let Some(challenge) = &self.challenge
                && !auth.as_ref().is_some_and(|a| self.accept_auth.contains(a))
            {
                return Ok(Response {
                    status: 401,
                    headers: vec![("WWW-Authenticate".into(), challenge.clone().into_bytes())],
                    body: br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#.to_vec(),
                });
            }
            let queue = self.routes.get_mut(&key);
            Ok(match queue {
                Some(queue) if queue.len() > 1 => queue.remove(0),
                Some(queue) => queue[0].clone(),
                None => Response {
                    status: 404,
                    headers: vec![],
                    body:
                        br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"Unknown manifest"}]}"#
                            .to_vec(),
                },
            })
        }
    }

    #[derive(Default, Clone)]
    struct Keys(HashMap<&'static str, &'static str>, usize);

    impl Secrets for &mut Keys {
        fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, Error> {
            self.1 += 1;
            Ok(self.0.get(key).map(|v| v.as_bytes().to_vec()))
        }
    }

    fn client<'a>(fake: &'a mut Fake, keys: &'a mut Keys) -> Client<&'a mut Fake, &'a mut Keys> {
        let reference = reference::parse("oci://registry.example/charts/hello").unwrap();
        Client::new(fake, keys, reference, false).unwrap()
    }

    fn basic(user: &str, password: &str) -> String {
        format!("Basic {}", BASE64.encode(format!("{user}:{password}")))
    }

    const HELLO_MANIFEST: &str = r#"{"schemaVersion":2,"config":{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:22546e7f6d550bb333905158d52b62aabfe0c9b2e4aa123a7002f61d823a8147","size":176},"layers":[]}"#;

    #[test]
    fn anonymous_registry_lists_tags_across_pages() {
        let mut fake = Fake::default();
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            Response {
                status: 200,
                headers: vec![(
                    "Link".into(),
                    br#"</v2/charts/hello/tags/list?last=0.2.0&n=2>; rel="next""#.to_vec(),
                )],
                body: br#"{"name":"charts/hello","tags":["0.1.0","0.2.0"]}"#.to_vec(),
            },
        );
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list?last=0.2.0&n=2",
            ok(r#"{"name":"charts/hello","tags":["1.0.0_build.1"]}"#),
        );
        let mut keys = Keys::default();
        let tags = client(&mut fake, &mut keys).tags().unwrap();
        assert_eq!(tags, ["0.1.0", "0.2.0", "1.0.0_build.1"]);
        assert_eq!(keys.1, 0, "no credentials read without a challenge");
        assert!(fake.log.iter().all(|(_, auth)| auth.is_none()));
    }

    #[test]
    fn basic_challenge_retries_with_username_and_password() {
        let mut fake = Fake {
            challenge: Some(r#"Basic realm="capstan-test""#.into()),
            accept_auth: vec![basic("alice", "s3cret")],
            ..Fake::default()
        };
        let digest = sha256_digest(HELLO_MANIFEST.as_bytes());
        fake.route(
            "HEAD registry.example/v2/charts/hello/manifests/0.1.0",
            Response {
                status: 200,
                headers: vec![("Docker-Content-Digest".into(), digest.clone().into_bytes())],
                body: vec![],
            },
        );
        fake.route(
            &format!("GET registry.example/v2/charts/hello/manifests/{digest}"),
            ok(HELLO_MANIFEST),
        );
        let mut keys = Keys(
            HashMap::from([("username", "alice"), ("password", "s3cret\n")]),
            0,
        );
        let mut c = client(&mut fake, &mut keys);
        assert_eq!(c.resolve_tag("0.1.0").unwrap(), Some(digest.clone()));
        assert_eq!(c.manifest(&digest).unwrap(), HELLO_MANIFEST.as_bytes());
        assert_eq!(c.resolve_tag("9.9.9").unwrap(), None);
        drop(c);
        // First request anonymous, then authorised; later requests authorised at once.
        let auths: Vec<Option<&str>> = fake.log.iter().map(|(_, a)| a.as_deref()).collect();
        let good = basic("alice", "s3cret");
        assert_eq!(
            auths,
            [
                None,
                Some(good.as_str()),
                Some(good.as_str()),
                Some(good.as_str())
            ]
        );
    }

    #[test]
    fn wrong_password_is_denied_without_naming_it() {
        let mut fake = Fake {
            challenge: Some(r#"Basic realm="capstan-test""#.into()),
            accept_auth: vec![basic("alice", "s3cret")],
            ..Fake::default()
        };
        let mut keys = Keys(
            HashMap::from([("username", "alice"), ("password", "hunter2")]),
            0,
        );
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied);
        assert!(!err.retryable);
        assert!(
            err.message
                .contains("registry.example refused the credentials"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("oci://registry.example/charts/hello"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("hunter2"), "{}", err.message);
    }

    #[test]
    fn no_credentials_for_a_basic_registry() {
        let mut fake = Fake {
            challenge: Some(r#"Basic realm="x""#.into()),
            ..Fake::default()
        };
        let mut keys = Keys::default();
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied);
        assert!(
            err.message.contains("requires credentials"),
            "{}",
            err.message
        );

        let mut keys = Keys(HashMap::from([("username", "alice")]), 0);
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(err.message.contains("no `password`"), "{}", err.message);
    }

    #[test]
    fn bearer_challenge_gets_a_token_with_basic_auth() {
        let mut fake = Fake {
            challenge: Some(
                r#"Bearer realm="https://auth.example/token",service="reg",scope="repository:charts/hello:pull""#
                    .into(),
            ),
            accept_auth: vec!["Bearer t0k3n".into()],
            token_auth: Some(basic("alice", "s3cret")),
            issued: Some("t0k3n".into()),
            ..Fake::default()
        };
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            ok(r#"{"tags":["0.1.0"]}"#),
        );
        let mut keys = Keys(
            HashMap::from([("username", "alice"), ("password", "s3cret")]),
            0,
        );
        assert_eq!(client(&mut fake, &mut keys).tags().unwrap(), ["0.1.0"]);
        let log: Vec<(&str, Option<&str>)> = fake
            .log
            .iter()
            .map(|(k, a)| (k.as_str(), a.as_deref()))
            .collect();
        let creds = basic("alice", "s3cret");
        assert_eq!(
            log,
            [
                ("GET registry.example/v2/charts/hello/tags/list", None),
                (
                    "GET auth.example/token?service=reg&scope=repository%3Acharts%2Fhello%3Apull",
                    Some(creds.as_str())
                ),
                (
                    "GET registry.example/v2/charts/hello/tags/list",
                    Some("Bearer t0k3n")
                ),
            ]
        );
    }

    #[test]
    fn bearer_challenge_anonymous_token_for_public_repositories() {
        let mut fake = Fake {
            challenge: Some(r#"Bearer realm="https://auth.example/token",service="reg""#.into()),
            accept_auth: vec!["Bearer anon".into()],
            issued: Some("anon".into()),
            ..Fake::default()
        };
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            ok(r#"{"tags":null}"#),
        );
        let mut keys = Keys::default();
        assert!(client(&mut fake, &mut keys).tags().unwrap().is_empty());
        assert_eq!(
            fake.log[1],
            (
                "GET auth.example/token?service=reg&scope=repository%3Acharts%2Fhello%3Apull"
                    .to_owned(),
                None
            ),
            "default scope when the challenge has none"
        );
    }

    #[test]
    fn bearer_token_from_the_secret_is_used_directly() {
        let mut fake = Fake {
            challenge: Some(r#"Bearer realm="https://auth.example/token",service="reg""#.into()),
            accept_auth: vec!["Bearer pat".into()],
            ..Fake::default()
        };
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            ok(r#"{"tags":["1.0.0"]}"#),
        );
        let mut keys = Keys(HashMap::from([("token", "pat")]), 0);
        assert_eq!(client(&mut fake, &mut keys).tags().unwrap(), ["1.0.0"]);
        assert!(fake.log.iter().all(|(k, _)| !k.contains("/token")));

        // A rejected token: denied, naming the registry, not the token.
        let mut fake = Fake {
            challenge: Some(r#"Bearer realm="https://auth.example/token""#.into()),
            accept_auth: vec!["Bearer other".into()],
            ..Fake::default()
        };
        let mut keys = Keys(HashMap::from([("token", "pat-secret")]), 0);
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied);
        assert!(
            err.message.contains("refused the credentials"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("pat-secret"));
    }

    #[test]
    fn token_service_refusing_credentials_is_denied() {
        let mut fake = Fake {
            challenge: Some(
                r#"Bearer realm="https://auth.example/token?x=1",service="reg""#.into(),
            ),
            token_auth: Some(basic("alice", "s3cret")),
            issued: Some("t".into()),
            ..Fake::default()
        };
        let mut keys = Keys(
            HashMap::from([("username", "alice"), ("password", "wrong")]),
            0,
        );
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied);
        assert!(
            err.message
                .contains("registry.example refused the credentials")
                && err.message.contains("https://auth.example/token")
                && !err.message.contains("x=1")
                && !err.message.contains("wrong"),
            "{}",
            err.message
        );
        let mut keys = Keys::default();
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert!(
            err.message.contains("requires credentials"),
            "{}",
            err.message
        );
    }

    #[test]
    fn unreachable_registry_is_unavailable_and_retryable() {
        let mut fake = Fake {
            down: true,
            ..Fake::default()
        };
        let mut keys = Keys::default();
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(err.retryable);
    }

    #[test]
    fn statuses_become_errors_naming_the_request() {
        let mut fake = Fake::default();
        let mut keys = Keys::default();
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert!(
            err.message
                .contains("repository oci://registry.example/charts/hello not found")
                && err.message.contains(
                    "GET https://registry.example/v2/charts/hello/tags/list answered HTTP 404"
                )
                && err.message.contains("MANIFEST_UNKNOWN"),
            "{}",
            err.message
        );
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            status(503),
        );
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(err.retryable);
        fake.routes.clear();
        fake.route(
            "GET registry.example/v2/charts/hello/tags/list",
            status(403),
        );
        let err = client(&mut fake, &mut keys).tags().unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied);
        assert!(
            err.message.contains("denied anonymous access"),
            "{}",
            err.message
        );
    }

    #[test]
    fn blobs_are_checked_and_redirects_drop_credentials() {
        let archive = b"\x1f\x8bnot really a chart";
        let digest = sha256_digest(archive);
        let mut fake = Fake {
            challenge: Some(r#"Basic realm="x""#.into()),
            accept_auth: vec![basic("alice", "s3cret")],
            ..Fake::default()
        };
        fake.route(
            &format!("GET registry.example/v2/charts/hello/blobs/{digest}"),
            Response {
                status: 307,
                headers: vec![(
                    "Location".into(),
                    b"https://cdn.example/blob?sig=1".to_vec(),
                )],
                body: vec![],
            },
        );
        fake.route(
            "GET cdn.example/blob?sig=1",
            Response {
                status: 200,
                headers: vec![],
                body: archive.to_vec(),
            },
        );
        let mut keys = Keys(
            HashMap::from([("username", "alice"), ("password", "s3cret")]),
            0,
        );
        let descriptor = Descriptor {
            media_type: "application/vnd.cncf.helm.chart.content.v1.tar+gzip".into(),
            digest: digest.clone(),
            size: archive.len() as u64,
        };
        let mut c = client(&mut fake, &mut keys);
        assert_eq!(c.blob(&descriptor).unwrap(), archive);
        let wrong_size = Descriptor {
            size: 3,
            ..descriptor.clone()
        };
        assert!(
            c.blob(&wrong_size)
                .unwrap_err()
                .message
                .contains("manifest says 3")
        );
        drop(c);
        let cdn: Vec<_> = fake
            .log
            .iter()
            .filter(|(k, _)| k.contains("cdn.example"))
            .collect();
        assert!(
            !cdn.is_empty() && cdn.iter().all(|(_, auth)| auth.is_none()),
            "{cdn:?}"
        );

        // A registry serving other bytes than the digest says.
        let mut fake = Fake::default();
        fake.route(
            &format!("GET registry.example/v2/charts/hello/blobs/{digest}"),
            ok("tampered bytes here!"),
        );
        let mut keys = Keys::default();
        let err = client(&mut fake, &mut keys)
            .blob(&Descriptor {
                size: 20,
                ..descriptor
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(
            err.message.contains("does not match its digest"),
            "{}",
            err.message
        );
    }

    #[test]
    fn manifest_digest_falls_back_to_get_and_manifests_are_verified() {
        let digest = sha256_digest(HELLO_MANIFEST.as_bytes());
        let mut fake = Fake::default();
        fake.route(
            "HEAD registry.example/v2/charts/hello/manifests/0.1.0",
            ok(""),
        );
        fake.route(
            "GET registry.example/v2/charts/hello/manifests/0.1.0",
            ok(HELLO_MANIFEST),
        );
        fake.route(
            &format!("GET registry.example/v2/charts/hello/manifests/{digest}"),
            ok("{\"other\":true}"),
        );
        let mut keys = Keys::default();
        let mut c = client(&mut fake, &mut keys);
        assert_eq!(c.resolve_tag("0.1.0").unwrap(), Some(digest.clone()));
        let err = c.manifest(&digest).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(
            err.message.contains("does not match its digest"),
            "{}",
            err.message
        );
    }
}
