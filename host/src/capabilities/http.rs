//! Outgoing HTTP (`wasi:http/outgoing-handler`) for plugins, scoped per call by an
//! [`HttpGrant`]:
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

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    AUTHORIZATION, CONTENT_LENGTH, ETAG, HeaderValue, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED,
};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::egress::EgressPolicy;

/// Default cap on a cached response (a repository index).
pub const DEFAULT_INDEX_CAP: u64 = 32 << 20;
/// Default cap on any other response (a chart archive).
pub const DEFAULT_RESPONSE_CAP: u64 = 100 << 20;
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Scheme, host and port of a URL (default ports filled in).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// Host name or address, lower case.
    pub host: String,
    /// Port.
    pub port: u16,
}

impl Origin {
    /// The origin of `url`, if it is an absolute http(s) URL.
    pub fn of(url: &str) -> Option<Origin> {
        let uri: Uri = url.trim().parse().ok()?;
        Origin::of_uri(&uri)
    }

    fn of_uri(uri: &Uri) -> Option<Origin> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = uri.authority()?;
        Some(Origin {
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16().unwrap_or(default_port),
            scheme,
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// A host granted in the configuration: `name` (any port) or `name:port`. The name may be
/// a glob (`*` any run of characters, `?` one), as Helm 4 plugins' `allowedHosts` are:
/// `*.example.com`, or `*` for any host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: String,
    port: Option<u16>,
}

impl HostPattern {
    /// Parse `host` or `host:port`; `host` may hold `*` and `?` wildcards.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let text = text.trim().to_ascii_lowercase();
        if text.contains('@') {
            return Err(format!("`{text}` must not contain user information"));
        }
        if text.contains(['*', '?']) {
            let (host, port) = match text.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => {
                    let port = port
                        .parse::<u16>()
                        .map_err(|e| format!("`{text}`: port `{port}`: {e}"))?;
                    (host, Some(port))
                }
                _ => (text.as_str(), None),
            };
            let valid = !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*' | '?'));
            if !valid {
                return Err(format!("`{text}` is not a host name pattern"));
            }
            return Ok(HostPattern {
                host: host.to_owned(),
                port,
            });
        }
        let authority: http::uri::Authority = text
            .parse()
            .map_err(|e| format!("`{text}` is not a host or host:port: {e}"))?;
        Ok(HostPattern {
            host: authority.host().to_owned(),
            port: authority.port_u16(),
        })
    }

    fn matches(&self, origin: &Origin) -> bool {
        glob_matches(&self.host, &origin.host) && self.port.is_none_or(|p| p == origin.port)
    }
}

/// Whether `text` matches `pattern` (`*`: any run of characters, `?`: one character).
fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Greedy match with one backtrack point: the last `*` seen and where it resumed.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((star_p, star_t)) = star {
            pi = star_p + 1;
            ti = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Username and password sent with basic auth. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BasicAuth(<redacted>)")
    }
}

impl BasicAuth {
    /// The `Authorization` header value (marked sensitive).
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.username, self.password));
        let mut value = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

#[derive(Debug)]
struct Cached {
    body: Bytes,
    etag: Option<HeaderValue>,
    last_modified: Option<HeaderValue>,
}

#[derive(Debug, Default)]
struct CacheSlot {
    entry: Option<Cached>,
    fresh: bool,
}

/// The last good response for one URL, shared by every call about the same source (e.g.
/// one per repository URL and credentials). The host says when it is stale.
#[derive(Debug, Default)]
pub struct ResponseCache {
    slot: tokio::sync::Mutex<CacheSlot>,
    requests: std::sync::atomic::AtomicU64,
    /// Set by [`ResponseCache::mark_stale`] without waiting for the slot (a request to a
    /// stalled server may hold it until its timeout); the next request takes it.
    stale: std::sync::atomic::AtomicBool,
}

impl ResponseCache {
    /// An empty cache.
    pub fn new() -> Arc<ResponseCache> {
        Arc::new(ResponseCache::default())
    }

    /// Make the next request revalidate (conditionally) with the server.
    pub async fn mark_stale(&self) {
        self.stale.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Requests actually sent to the server for this URL (including revalidations).
    pub fn requests(&self) -> u64 {
        self.requests.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A URL whose GET responses are served from a [`ResponseCache`].
#[derive(Debug, Clone)]
pub struct CachedUrl {
    /// The URL (as the plugin requests it).
    pub url: String,
    /// Where its response is kept.
    pub cache: Arc<ResponseCache>,
    /// Size cap of that response.
    pub max_bytes: u64,
}

/// TLS settings trusting a custom CA bundle (plus the Web PKI roots).
#[derive(Clone)]
pub struct CustomCa(Arc<rustls::ClientConfig>);

impl fmt::Debug for CustomCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomCa")
    }
}

impl CustomCa {
    /// Trust the certificates of a PEM bundle besides the Web PKI roots.
    pub fn from_pem(pem: &[u8]) -> Result<CustomCa, String> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        CustomCa::adding(roots, pem)
    }

    /// Trust the certificates of a PEM bundle and nothing else.
    pub fn only(pem: &[u8]) -> Result<CustomCa, String> {
        CustomCa::adding(rustls::RootCertStore::empty(), pem)
    }

    /// Trust this system's CA certificates (`SSL_CERT_FILE`, `SSL_CERT_DIR`, else the
    /// distribution's bundle), as libgit2 and the git CLI do; the Web PKI roots when the
    /// system has none.
    pub fn system() -> CustomCa {
        static SYSTEM: std::sync::OnceLock<CustomCa> = std::sync::OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                let mut roots = rustls::RootCertStore::empty();
                let found = rustls_native_certs::load_native_certs();
                for error in &found.errors {
                    tracing::debug!(%error, "reading the system's CA certificates");
                }
                let (added, _) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    return CustomCa(web_pki());
                }
                CustomCa::config(roots).unwrap_or_else(|_| CustomCa(web_pki()))
            })
            .clone()
    }

    fn config(roots: rustls::RootCertStore) -> Result<CustomCa, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(CustomCa(Arc::new(config)))
    }

    fn adding(mut roots: rustls::RootCertStore, pem: &[u8]) -> Result<CustomCa, String> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut added = 0;
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate =
                certificate.map_err(|e| format!("CA bundle is not valid PEM: {e}"))?;
            roots
                .add(certificate)
                .map_err(|e| format!("CA bundle holds an unusable certificate: {e}"))?;
            added += 1;
        }
        if added == 0 {
            return Err("CA bundle holds no certificate".into());
        }
        CustomCa::config(roots)
    }
}

/// What one plugin call may reach over HTTP.
#[derive(Debug, Clone)]
pub struct HttpGrant {
    /// Origins derived from the source's own spec fields.
    sources: Vec<Origin>,
    /// The subset of `sources` the host sends the source's credentials to.
    credentialed: Vec<Origin>,
    extra_hosts: Vec<HostPattern>,
    credentials: Option<BasicAuth>,
    ca: Option<CustomCa>,
    max_response_bytes: u64,
    timeout: Duration,
    cached: Vec<CachedUrl>,
    egress: Arc<EgressPolicy>,
}

impl HttpGrant {
    /// A grant for the origin of `source_url` (an http(s) URL), which also receives the
    /// credentials; none if the URL is not http(s).
    pub fn new(source_url: &str) -> Option<HttpGrant> {
        let origin = Origin::of(source_url)?;
        Some(HttpGrant::empty().with_origin(origin, true))
    }

    /// A grant that reaches nothing yet.
    pub fn empty() -> HttpGrant {
        HttpGrant {
            sources: Vec::new(),
            credentialed: Vec::new(),
            extra_hosts: Vec::new(),
            credentials: None,
            ca: None,
            max_response_bytes: DEFAULT_RESPONSE_CAP,
            timeout: DEFAULT_TIMEOUT,
            cached: Vec::new(),
            egress: Arc::new(EgressPolicy::public_only()),
        }
    }

    /// Which addresses requests may reach (default: public addresses only).
    pub fn with_egress(mut self, egress: Arc<EgressPolicy>) -> Self {
        self.egress = egress;
        self
    }

    /// Also allow `origin`; with `credentialed`, the host adds the credentials to requests
    /// sent there.
    pub fn with_origin(mut self, origin: Origin, credentialed: bool) -> Self {
        if credentialed && !self.credentialed.contains(&origin) {
            self.credentialed.push(origin.clone());
        }
        if !self.sources.contains(&origin) {
            self.sources.push(origin);
        }
        self
    }

    /// Also allow these configured hosts (never sent credentials).
    pub fn with_hosts(mut self, hosts: impl IntoIterator<Item = HostPattern>) -> Self {
        self.extra_hosts.extend(hosts);
        self
    }

    /// Basic auth to add to requests to the credentialed origins.
    pub fn with_credentials(mut self, credentials: Option<BasicAuth>) -> Self {
        self.credentials = credentials;
        self
    }

    /// A CA bundle to trust for HTTPS to the source origins.
    pub fn with_ca(mut self, ca: Option<CustomCa>) -> Self {
        self.ca = ca;
        self
    }

    /// Cap on response bodies (other than cached URLs).
    pub fn with_max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serve GETs of one URL from a shared cache.
    pub fn with_cached(mut self, cached: CachedUrl) -> Self {
        self.cached.push(cached);
        self
    }

    /// The source origins, for messages.
    pub fn origins(&self) -> String {
        let shown: Vec<String> = self.sources.iter().map(Origin::to_string).collect();
        shown.join(", ")
    }

    fn allows(&self, origin: &Origin) -> bool {
        self.sources.contains(origin) || self.extra_hosts.iter().any(|p| p.matches(origin))
    }
}

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
        Response<WasiBody>,
        Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ),
    HttpError,
>;

fn done() -> Box<dyn Future<Output = Result<(), HttpError>> + Send> {
    Box::new(async { Ok(()) })
}

pub(crate) fn full(body: Bytes) -> WasiBody {
    Full::new(body)
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// `url` without user information or query (which may hold secrets), for messages.
pub fn redacted_url(url: &str) -> String {
    match url.parse::<::http::Uri>() {
        Ok(uri) => format!(
            "{}://{}{}",
            uri.scheme_str().unwrap_or(""),
            uri.authority()
                .map_or("", |a| a.as_str().rsplit('@').next().unwrap_or("")),
            uri.path()
        ),
        Err(_) => "(an invalid URL)".into(),
    }
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

fn too_large(declared: Option<u64>, cap: u64) -> bool {
    declared.is_some_and(|length| length > cap)
}

fn content_length<B>(response: &Response<B>) -> Option<u64> {
    response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// Whether `uri` is `url` (same origin, path and query).
fn same_url(uri: &Uri, url: &str) -> bool {
    let Ok(other) = url.parse::<Uri>() else {
        return false;
    };
    Origin::of_uri(uri) == Origin::of_uri(&other)
        && uri.path_and_query().map(|p| p.as_str()) == other.path_and_query().map(|p| p.as_str())
}

/// Strip scheme and authority for logs: path only (queries may hold tokens).
fn path_of(uri: &Uri) -> &str {
    uri.path()
}

async fn send(
    grant: &HttpGrant,
    mut request: Request<WasiBody>,
    cap: u64,
) -> Result<Response<WasiBody>, HttpError> {
    // Where the host holds the credentials, it adds them (to credentialed origins only)
    // and the plugin's own Authorization header is dropped. Elsewhere a plugin may send
    // the header it built (e.g. a registry token it obtained), only to origins it may reach.
    let origin = Origin::of_uri(request.uri()).ok_or(HttpError::HttpRequestUriInvalid)?;
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
    .map_err(|_| HttpError::HttpResponseTimeout)??;
    if too_large(content_length(&response), cap) {
        return Err(HttpError::HttpResponseBodySize(Some(cap)));
    }
    Ok(response.map(move |body| {
        Limited::new(body, usize::try_from(cap).unwrap_or(usize::MAX))
            .map_err(move |error| match error.downcast::<HttpError>() {
                Ok(inner) => *inner,
                Err(_) => HttpError::HttpResponseBodySize(Some(cap)),
            })
            .boxed_unsync()
    }))
}

/// The TLS settings for HTTPS without a custom CA: the Web PKI roots.
fn web_pki() -> Arc<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    Arc::clone(CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        Arc::new(
            rustls::ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }))
}

/// Resolve the origin's host, keep the addresses `egress` allows, connect to the first
/// that answers (TLS for `https`: verified against `ca` when given, else the Web PKI),
/// and send the request over HTTP/1.1. The response body fails after `timeout` without a
/// byte.
pub(crate) async fn send_checked(
    mut request: Request<WasiBody>,
    origin: &Origin,
    ca: Option<&CustomCa>,
    egress: &EgressPolicy,
    timeout: Duration,
) -> Result<Response<WasiBody>, HttpError> {
    use rustls::pki_types::ServerName;
    let addresses = egress
        .resolve(&origin.host, origin.port)
        .await
        .map_err(|refused| {
            tracing::warn!(%refused, "http request refused by the egress guard");
            match refused {
                super::egress::EgressError::Unresolved { .. } => HttpError::DnsError {
                    rcode: None,
                    info_code: None,
                },
                // Carries the reason to the plugin, which puts it in its error.
                refused => HttpError::InternalError(Some(refused.to_string())),
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
            Err(_) => last_error = Some(HttpError::ConnectionTimeout),
        }
    }
    let stream = connected.ok_or(last_error.unwrap_or(HttpError::DestinationNotFound))?;
    let io: Box<dyn AsyncStream> = if origin.scheme == "https" {
        let host = origin.host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned()).map_err(|e| {
            HttpError::InternalError(Some(format!("TLS server name `{host}`: {e}")))
        })?;
        let config = ca.map_or_else(web_pki, |ca| Arc::clone(&ca.0));
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, stream)
            .await
            .map_err(|e| {
                HttpError::InternalError(Some(format!("TLS handshake with {origin} failed: {e}")))
            })?;
        Box::new(tls)
    } else {
        Box::new(stream)
    };
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(io)).await?;
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
    *request.uri_mut() = path.parse().map_err(|_| HttpError::HttpRequestUriInvalid)?;
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
                Poll::Ready(()) => Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout))),
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

/// A GET of the cached URL: from memory when fresh, else revalidated (one request at a
/// time per cache; concurrent callers wait and then share the result).
async fn send_cached(
    grant: &HttpGrant,
    cached: &CachedUrl,
    mut request: Request<WasiBody>,
) -> Result<Response<WasiBody>, HttpError> {
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

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.host),
            None => f.write_str(&self.host),
        }
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
            let origin = Origin::of_uri(request.uri());
            let host = request
                .uri()
                .authority()
                .map_or_else(String::new, |a| a.to_string());
            let Some(grant) = grant else {
                tracing::warn!(%host, "http request refused: this call has no http grant");
                return Err(HttpError::HttpRequestDenied);
            };
            if !origin.as_ref().is_some_and(|o| grant.allows(o)) {
                tracing::warn!(
                    %host,
                    allowed = %grant.origins(),
                    "http request refused: host is not on the allowlist of this call"
                );
                return Err(HttpError::HttpRequestDenied);
            }
            let method = request.method().clone();
            let path = path_of(request.uri()).to_owned();
            let cached = grant
                .cached
                .iter()
                .find(|c| method == Method::GET && same_url(request.uri(), &c.url));
            let response = match cached {
                Some(cached) => send_cached(&grant, cached, request).await,
                None => send(&grant, request, grant.max_response_bytes).await,
            };
            match &response {
                Ok(r) => {
                    tracing::debug!(%host, %path, status = r.status().as_u16(), "http request")
                }
                Err(error) => tracing::debug!(%host, %path, %error, "http request failed"),
            }
            Ok((response?, done()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_fill_default_ports_and_patterns_match_hosts() {
        let origin = Origin::of("https://Charts.Example.com/stable").unwrap();
        assert_eq!(origin.to_string(), "https://charts.example.com:443");
        assert!(Origin::of("oci://registry/x").is_none());
        let any_port = HostPattern::parse("charts.example.com").unwrap();
        let one_port = HostPattern::parse("charts.example.com:8443").unwrap();
        assert!(any_port.matches(&origin));
        assert!(!one_port.matches(&origin));
        assert!(HostPattern::parse("user:pw@host").is_err());
    }

    #[test]
    fn grant_allows_the_source_origin_and_granted_hosts_only() {
        let grant = HttpGrant::new("http://127.0.0.1:8080/charts")
            .unwrap()
            .with_hosts([HostPattern::parse("cdn.example.com").unwrap()]);
        assert!(grant.allows(&Origin::of("http://127.0.0.1:8080/other").unwrap()));
        assert!(!grant.allows(&Origin::of("http://127.0.0.1:8081/charts").unwrap()));
        assert!(!grant.allows(&Origin::of("https://127.0.0.1:8080/charts").unwrap()));
        assert!(grant.allows(&Origin::of("https://cdn.example.com/x.tgz").unwrap()));
    }

    #[test]
    fn glob_patterns_match_host_names_like_helm_allowed_hosts() {
        let origin = |url: &str| Origin::of(url).unwrap();
        let wildcard = HostPattern::parse("*.Example.com").unwrap();
        assert!(wildcard.matches(&origin("https://charts.example.com/x")));
        assert!(wildcard.matches(&origin("http://a.b.example.com:8080/x")));
        assert!(!wildcard.matches(&origin("https://example.com/x")));
        assert!(!wildcard.matches(&origin("https://example.com.evil.io/x")));
        assert!(
            HostPattern::parse("*")
                .unwrap()
                .matches(&origin("http://10.0.0.1/"))
        );
        let one = HostPattern::parse("host-?.internal:8443").unwrap();
        assert!(one.matches(&origin("https://host-a.internal:8443/")));
        assert!(!one.matches(&origin("https://host-ab.internal:8443/")));
        assert!(!one.matches(&origin("https://host-a.internal/")));
        assert!(HostPattern::parse("*/x").is_err());
        assert_eq!(wildcard.to_string(), "*.example.com");
    }

    #[test]
    fn credentials_are_never_printed() {
        let auth = BasicAuth {
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{auth:?}").contains("hunter2"));
        let grant = HttpGrant::new("http://h/")
            .unwrap()
            .with_credentials(Some(auth));
        assert!(!format!("{grant:?}").contains("hunter2"));
    }
}
