//! git's smart HTTP protocol spoken by the host's own HTTP client, for mirror fetches from
//! `http://` and `https://` remotes.
//!
//! libgit2's built-in HTTP transport resolves the remote's host name itself, after the
//! egress guard checked it (a DNS answer that changes in between — rebinding — would reach
//! an address the guard never saw), and hands a certificate callback only the server's own
//! certificate (a custom CA had to have issued it directly). So libgit2 keeps the protocol
//! (negotiation, pack indexing) and this module moves the bytes: a transport registered for
//! the private scheme `capstan-git-http://` whose subtransport sends each request through
//! [`crate::client::send_checked`] — the name resolved and every address
//! checked by the guard for each request, the connection made to a checked address, TLS
//! verified by rustls against the whole chain the server sends (the Secret's CA bundle
//! alone when it has one, else this system's CA certificates, as libgit2 read them).
//!
//! The protocol is git's "smart" HTTP (git's `gitprotocol-http` documentation): `GET
//! <url>/info/refs?service=git-upload-pack` for the advertisement, then one `POST
//! <url>/git-upload-pack` per negotiation round, bodies passed through unchanged. Credentials
//! are sent only after the server asks (401), as git does, to the remote's origin only;
//! redirects are refused (the guard could not vouch for the target, and credentials must
//! not follow). Only fetching is supported.
//!
//! A fetch registers its settings ([`register`]) and fetches from the URL it gets back,
//! which names the settings by a number; the registration ends with the fetch.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::Duration;

use crate::auth::BasicAuth;
use crate::client::{Body, full, send_checked};
use crate::egress::EgressPolicy;
use crate::origin::{Origin, redacted_url};
use crate::tls::CustomCa;
use bytes::Bytes;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION, USER_AGENT, WWW_AUTHENTICATE};
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;

/// The URL scheme the transport is registered for.
const SCHEME: &str = "capstan-git-http";

/// What one fetch may do: where, as whom, trusting what.
pub struct HttpRemote {
    /// The remote URL, without user information or a trailing `/`.
    base: String,
    origin: Origin,
    credentials: Option<BasicAuth>,
    tls: CustomCa,
    egress: Arc<EgressPolicy>,
    timeout: Duration,
    /// Drives the requests of this fetch (libgit2 calls the transport on the fetch's own,
    /// blocking, thread).
    runtime: tokio::runtime::Runtime,
    /// Why the transport failed, in this host's words (libgit2 may replace an I/O error's
    /// text with its own).
    failure: Mutex<Option<String>>,
}

impl HttpRemote {
    /// Settings for fetching `url` (an `http://` or `https://` remote): `credentials` are
    /// sent when the server asks (else user and password written in the URL, if any);
    /// HTTPS is verified against `ca_bundle` alone when given, else the system's CAs.
    pub fn new(
        url: &str,
        credentials: Option<BasicAuth>,
        ca_bundle: Option<&[u8]>,
        egress: Arc<EgressPolicy>,
        timeout: Duration,
    ) -> Result<HttpRemote, String> {
        let mut parsed = url::Url::parse(url.trim()).map_err(|e| format!("not a URL: {e}"))?;
        let written = (!parsed.username().is_empty()).then(|| BasicAuth {
            username: percent_decoded(parsed.username()),
            password: percent_decoded(parsed.password().unwrap_or_default()),
        });
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        parsed.set_query(None);
        parsed.set_fragment(None);
        let base = parsed.as_str().trim_end_matches('/').to_owned();
        let origin = Origin::of(&base).ok_or_else(|| "not an http(s) URL".to_owned())?;
        let tls = match ca_bundle {
            Some(bundle) => CustomCa::only(bundle)?,
            None => CustomCa::system(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the fetch's I/O driver: {e}"))?;
        Ok(HttpRemote {
            base,
            origin,
            credentials: credentials.or(written),
            tls,
            egress,
            timeout,
            runtime,
            failure: Mutex::new(None),
        })
    }

    /// Why the transport failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn failed(&self, message: String) -> io::Error {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(message.clone());
        io::Error::other(message)
    }

    /// Send one request of the protocol and return the response body: `Some(body)` for a
    /// POST of `git-upload-pack`, `None` for the GET of the advertisement.
    fn exchange(&self, post: Option<Bytes>) -> io::Result<Body> {
        let (method, path, accept) = match &post {
            None => (
                Method::GET,
                "/info/refs?service=git-upload-pack",
                "application/x-git-upload-pack-advertisement",
            ),
            Some(_) => (
                Method::POST,
                "/git-upload-pack",
                "application/x-git-upload-pack-result",
            ),
        };
        let url = format!("{}{path}", self.base);
        let shown = format!("{}{}", self.base, path.split('?').next().unwrap_or(path));
        self.runtime.block_on(async {
            let mut authenticated = false;
            loop {
                let mut request = Request::builder()
                    .method(method.clone())
                    .uri(&url)
                    .header(USER_AGENT, concat!("git/2.0 (capstan/", env!("CARGO_PKG_VERSION"), ")"))
                    .header(ACCEPT, accept);
                if post.is_some() {
                    request = request.header(CONTENT_TYPE, "application/x-git-upload-pack-request");
                }
                if authenticated && let Some(value) = self.credentials.as_ref().and_then(BasicAuth::header) {
                    request = request.header(http::header::AUTHORIZATION, value);
                }
                let request = request
                    .body(full(post.clone().unwrap_or_default()))
                    .map_err(|e| self.failed(format!("cannot build the request for {shown}: {e}")))?;
                let ca = (self.origin.scheme == "https").then_some(&self.tls);
                let response = tokio::time::timeout(
                    self.timeout,
                    send_checked(request, &self.origin, ca, &self.egress, self.timeout),
                )
                .await
                .map_err(|_| self.failed(format!("{shown}: no answer within {}s", self.timeout.as_secs())))?
                .map_err(|e| self.failed(format!("{shown}: {e}")))?;
                let status = response.status();
                if status == StatusCode::UNAUTHORIZED {
                    let asks_basic = response
                        .headers()
                        .get_all(WWW_AUTHENTICATE)
                        .iter()
                        .any(|v| v.to_str().is_ok_and(|v| v.trim_start().to_ascii_lowercase().starts_with("basic")));
                    return Err(self.failed(match (&self.credentials, authenticated) {
                        (None, _) => "the server asks for credentials and none are configured".into(),
                        (Some(_), true) => "authentication failed (credentials rejected)".into(),
                        (Some(_), false) if asks_basic => {
                            authenticated = true;
                            continue;
                        }
                        (Some(_), false) => "the server asks for an authentication scheme other than basic".into(),
                    }));
                }
                if status.is_redirection() {
                    let target = response
                        .headers()
                        .get(LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(redacted_url)
                        .unwrap_or_default();
                    return Err(self.failed(format!(
                        "{shown} redirects to {target}: redirects are not followed (the egress guard could not check the target, and credentials must not follow)"
                    )));
                }
                if !status.is_success() {
                    return Err(self.failed(format!("{shown}: the server answered {status}")));
                }
                let content_type = response
                    .headers()
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                if !content_type.starts_with(accept) {
                    return Err(self.failed(format!(
                        "{shown}: not a smart git HTTP server (content type `{content_type}`, expected `{accept}`)"
                    )));
                }
                return Ok(response.into_body());
            }
        })
    }
}

fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// The settings of the fetches in progress, by the number in their URL.
fn registry() -> &'static Mutex<HashMap<u64, Arc<HttpRemote>>> {
    static REMOTES: OnceLock<Mutex<HashMap<u64, Arc<HttpRemote>>>> = OnceLock::new();
    REMOTES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A fetch's settings, registered until this is dropped.
pub struct Registered {
    id: u64,
    remote: Arc<HttpRemote>,
}

impl Registered {
    /// The URL to fetch from (names the settings, not the remote).
    pub fn url(&self) -> String {
        format!("{SCHEME}://{}", self.id)
    }

    /// Why the transport failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.remote.failure()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// Register `remote` for one fetch (and the transport itself, on first use).
pub fn register(remote: HttpRemote) -> Result<Registered, git2::Error> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    install()?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let remote = Arc::new(remote);
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, Arc::clone(&remote));
    Ok(Registered { id, remote })
}

/// Register the transport with libgit2, once. Every fetch of this process calls
/// [`register`] (through `MirrorStore::fetch_blocking`) before it creates a remote, and
/// `Once` holds the others back until registration ends: libgit2 requires that no
/// transport is created while one is registered.
fn install() -> Result<(), git2::Error> {
    static INSTALL: Once = Once::new();
    static FAILED: OnceLock<String> = OnceLock::new();
    INSTALL.call_once(|| {
        // SAFETY: see above; no other transport of this process is being created now.
        let registered = unsafe {
            git2::transport::register(SCHEME, |remote| {
                let id = remote
                    .url()
                    .ok()
                    .and_then(|url| url.strip_prefix(SCHEME)?.strip_prefix("://"))
                    .and_then(|id| id.parse::<u64>().ok())
                    .ok_or_else(|| git2::Error::from_str("not a registered fetch"))?;
                let settings = registry()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| git2::Error::from_str("the fetch is no longer registered"))?;
                Transport::smart(remote, true, Subtransport { remote: settings })
            })
        };
        if let Err(error) = registered {
            let _ = FAILED.set(error.message().to_owned());
        }
    });
    match FAILED.get() {
        Some(message) => Err(git2::Error::from_str(&format!(
            "cannot register the HTTP git transport: {message}"
        ))),
        None => Ok(()),
    }
}

struct Subtransport {
    remote: Arc<HttpRemote>,
}

impl SmartSubtransport for Subtransport {
    fn action(
        &self,
        _url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let post = match action {
            Service::UploadPackLs => false,
            Service::UploadPack => true,
            Service::ReceivePackLs | Service::ReceivePack => {
                return Err(git2::Error::from_str("mirrors are fetched, never pushed"));
            }
        };
        Ok(Box::new(Exchange {
            remote: Arc::clone(&self.remote),
            post,
            request: Vec::new(),
            response: None,
            pending: Bytes::new(),
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One request and its response: libgit2 writes the request body (for a POST), then reads
/// the response, which is sent for on the first read.
struct Exchange {
    remote: Arc<HttpRemote>,
    post: bool,
    request: Vec<u8>,
    response: Option<Body>,
    /// Received and not yet read.
    pending: Bytes,
}

impl Write for Exchange {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.response.is_some() {
            return Err(io::Error::other("the request was already sent"));
        }
        self.request.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Exchange {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let remote = Arc::clone(&self.remote);
        let body = match &mut self.response {
            Some(body) => body,
            None => {
                let post = self
                    .post
                    .then(|| Bytes::from(std::mem::take(&mut self.request)));
                self.response.insert(remote.exchange(post)?)
            }
        };
        while self.pending.is_empty() {
            let frame = remote.runtime.block_on(body.frame());
            match frame {
                None => return Ok(0),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.pending = data;
                    }
                }
                Some(Err(error)) => {
                    return Err(
                        remote.failed(format!("reading the answer of {}: {error}", remote.base))
                    );
                }
            }
        }
        let n = buffer.len().min(self.pending.len());
        buffer[..n].copy_from_slice(&self.pending.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_url_loses_user_information_query_and_trailing_slash() {
        let remote = HttpRemote::new(
            "https://bob:p%40ss@git.example.com:8443/org/charts.git/?x=1",
            None,
            None,
            Arc::new(EgressPolicy::public_only()),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(remote.base, "https://git.example.com:8443/org/charts.git");
        let written = remote.credentials.clone().unwrap();
        assert_eq!(
            (written.username.as_str(), written.password.as_str()),
            ("bob", "p@ss")
        );
        let secret = BasicAuth {
            username: "alice".into(),
            password: "s3cret".into(),
        };
        let remote = HttpRemote::new(
            "http://bob:x@git.example.com/charts",
            Some(secret.clone()),
            None,
            Arc::new(EgressPolicy::public_only()),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(
            remote.credentials,
            Some(secret),
            "the Secret wins over the URL"
        );
        assert!(
            HttpRemote::new(
                "ssh://git@example.com/x",
                None,
                None,
                Arc::new(EgressPolicy::public_only()),
                Duration::from_secs(5)
            )
            .is_err()
        );
    }

    #[test]
    fn registrations_end_with_their_fetch() {
        let remote = HttpRemote::new(
            "https://git.example.com/charts.git",
            None,
            None,
            Arc::new(EgressPolicy::public_only()),
            Duration::from_secs(5),
        )
        .unwrap();
        let registered = register(remote).unwrap();
        let id = registered.id;
        assert_eq!(registered.url(), format!("capstan-git-http://{id}"));
        assert!(registry().lock().unwrap().contains_key(&id));
        drop(registered);
        assert!(!registry().lock().unwrap().contains_key(&id));
    }
}
