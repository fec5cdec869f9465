//! Bare git mirrors owned by the host, one per [`MirrorKey`] (URL + credentials), under a
//! cache folder. Folder names are a hash of the key, so URLs and credentials never appear
//! on disk; credentials never appear in errors or logs either.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use git2::{FetchOptions, RemoteCallbacks, Repository};

use capstan_net::egress::EgressPolicy;
use sha2::{Digest, Sha256};

use super::MirrorKey;
use capstan_net::auth::BasicAuth;
use capstan_net::git_http::{self, HttpRemote, Registered};
use capstan_net::git_route;

/// Credentials for one repository, read from a Kubernetes Secret by the caller.
#[derive(Clone, PartialEq, Eq)]
pub enum GitCredentials {
    /// HTTPS basic auth (`username`, `password` keys of the Secret).
    Basic {
        /// User name.
        username: String,
        /// Password or token.
        password: String,
    },
    /// An SSH private key (`identity` key of the Secret), for `ssh://` URLs.
    SshKey {
        /// User name (usually `git`).
        username: String,
        /// PEM private key.
        private_key: String,
    },
}

impl fmt::Debug for GitCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitCredentials::Basic { username, .. } => write!(
                f,
                "Basic {{ username: {username:?}, password: <redacted> }}"
            ),
            GitCredentials::SshKey { username, .. } => write!(
                f,
                "SshKey {{ username: {username:?}, private_key: <redacted> }}"
            ),
        }
    }
}

/// What a credentials Secret gives a git fetch.
#[derive(Debug, Clone, Default)]
pub struct GitAccess {
    /// Basic auth or an SSH key.
    pub credentials: Option<GitCredentials>,
    /// PEM CA bundle the HTTPS server's certificate must chain to (instead of the system's
    /// roots).
    pub ca_bundle: Option<Vec<u8>>,
    /// `known_hosts` lines the SSH server's host key must match.
    pub known_hosts: Option<String>,
}

/// Accept or refuse the host key an SSH remote presented: it must be listed in
/// `known_hosts` for the host (no `known_hosts`: refused, as an unknown host is). HTTP(S)
/// remotes never reach this check: their TLS is the host's own ([`capstan_net::git_http`]);
/// anything else libgit2 shows is left to libgit2.
fn check_remote_certificate(
    certificate: &git2::cert::Cert<'_>,
    host: &str,
    port: u16,
    known_hosts: Option<&str>,
) -> Result<git2::CertificateCheckStatus, git2::Error> {
    if let Some(hostkey) = certificate.as_hostkey() {
        let Some(key) = hostkey.hostkey() else {
            return Err(git2::Error::from_str("the SSH server sent no host key"));
        };
        let Some(known_hosts) = known_hosts else {
            return Err(git2::Error::from_str(&format!(
                "the host key of {host} cannot be checked: the credentials Secret has no `known_hosts`"
            )));
        };
        return if known_host_matches(known_hosts, host, port, key) {
            Ok(git2::CertificateCheckStatus::CertificateOk)
        } else {
            Err(git2::Error::from_str(&format!(
                "the host key of {host} is not in the `known_hosts` of the credentials Secret"
            )))
        };
    }
    Ok(git2::CertificateCheckStatus::CertificatePassthrough)
}

/// Whether `known_hosts` lists `key` (an SSH public key blob) for `host` on `port`, as
/// OpenSSH reads the file: the name is `host` on port 22 and `[host]:port` elsewhere,
/// matched against plain names (comma-separated, any case) and hashed entries
/// (`|1|salt|HMAC-SHA1(salt, name)`, as `ssh-keygen -H` writes them).
fn known_host_matches(known_hosts: &str, host: &str, port: u16, key: &[u8]) -> bool {
    use base64::Engine;
    use hmac::Mac;
    let b64 = base64::engine::general_purpose::STANDARD;
    let encoded = b64.encode(key);
    let name = if port == 22 {
        host.to_ascii_lowercase()
    } else {
        format!("[{}]:{port}", host.to_ascii_lowercase())
    };
    let hashed_matches = |entry: &str| {
        let Some((salt, hash)) = entry
            .strip_prefix("|1|")
            .and_then(|rest| rest.split_once('|'))
        else {
            return false;
        };
        let (Ok(salt), Ok(hash)) = (b64.decode(salt), b64.decode(hash)) else {
            return false;
        };
        let Ok(mut mac) = hmac::Hmac::<sha1::Sha1>::new_from_slice(&salt) else {
            return false;
        };
        mac.update(name.as_bytes());
        mac.verify_slice(&hash).is_ok()
    };
    known_hosts.lines().any(|line| {
        let mut fields = line.split_whitespace();
        let (Some(hosts), Some(_kind), Some(blob)) = (fields.next(), fields.next(), fields.next())
        else {
            return false;
        };
        if hosts.starts_with('#') || hosts.starts_with('@') {
            return false;
        }
        blob == encoded
            && hosts.split(',').any(|pattern| {
                if pattern.starts_with("|1|") {
                    hashed_matches(pattern)
                } else {
                    pattern.eq_ignore_ascii_case(&name)
                }
            })
    })
}

/// Why a mirror could not be fetched. Names the repository, never its credentials: a
/// `user:token@` in the URL (or echoed by git in the message) is left out when shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "fetching {}: {}",
    super::redact_userinfo(url),
    super::redact_userinfo(message)
)]
pub struct MirrorError {
    /// Repository URL.
    pub url: String,
    /// What failed.
    pub message: String,
}

/// A folder of bare mirrors.
#[derive(Debug)]
pub struct MirrorStore {
    dir: PathBuf,
    timeout: Duration,
    limits: MirrorLimits,
    /// Mirrors with a fetch still running (possibly stuck on a dead server).
    in_flight: Arc<Mutex<HashSet<PathBuf>>>,
}

/// How much one fetch may bring into a mirror: a repository built to fill the operator's
/// disk is cut off while it streams in, not after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MirrorLimits {
    /// Most bytes one fetch may receive.
    pub max_received_bytes: usize,
    /// Most objects one fetch may receive.
    pub max_objects: usize,
}

impl Default for MirrorLimits {
    fn default() -> Self {
        MirrorLimits {
            max_received_bytes: 1 << 30,
            max_objects: 2_000_000,
        }
    }
}

/// Removes a mirror from the in-flight set when its fetch ends, however it ends.
struct InFlight {
    set: Arc<Mutex<HashSet<PathBuf>>>,
    path: PathBuf,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.path);
    }
}

/// Make libgit2 give up on servers that do not answer: connecting and each network read
/// time out after `timeout`.
///
/// # Safety
/// Sets a libgit2 global without synchronization: call it before any other thread exists
/// (at the top of `main`).
pub unsafe fn set_network_timeouts(timeout: Duration) {
    let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: forwarded to the caller (no other thread is running yet). Both calls only
    // store an integer and cannot fail.
    unsafe {
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(millis);
        let _ = git2::opts::set_server_timeout_in_milliseconds(millis);
    }
}

impl MirrorStore {
    /// Mirrors under `dir`; each fetch is abandoned after `timeout`.
    pub fn new(dir: impl Into<PathBuf>, timeout: Duration) -> Self {
        MirrorStore {
            dir: dir.into(),
            timeout,
            limits: MirrorLimits::default(),
            in_flight: Arc::default(),
        }
    }

    /// The same store with other limits per fetch.
    pub fn with_limits(mut self, limits: MirrorLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Folder of the mirror of `key`.
    pub fn path_of(&self, key: &MirrorKey) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(key.url.as_bytes());
        if let Some(secret) = &key.credentials {
            hash.update([0]);
            hash.update(secret.namespace.as_bytes());
            hash.update([0]);
            hash.update(secret.name.as_bytes());
        }
        self.dir.join(&hex::encode(hash.finalize())[..32])
    }

    /// Mirror folders present on disk.
    pub fn on_disk(&self) -> std::io::Result<Vec<PathBuf>> {
        match std::fs::read_dir(&self.dir) {
            Ok(entries) => {
                let mut found = Vec::new();
                for entry in entries {
                    let entry = entry?;
                    if entry.file_type()?.is_dir() {
                        found.push(entry.path());
                    }
                }
                found.sort();
                Ok(found)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Create the mirror of `key` if needed and fetch every branch and tag into it, when
    /// `egress` lets the remote be reached. Redirects are not followed: the guard could
    /// not check where they lead. Blocking: run on a blocking thread.
    pub fn fetch_blocking(
        &self,
        key: &MirrorKey,
        access: Option<&GitAccess>,
        egress: &EgressPolicy,
    ) -> Result<PathBuf, MirrorError> {
        let credentials = access.and_then(|a| a.credentials.as_ref());
        let url = &key.url;
        let failed = |message: String| MirrorError {
            url: url.clone(),
            message,
        };
        let pinned = egress
            .pin_git_url(url)
            .map_err(|refused| failed(refused.to_string()))?;
        // libgit2 would resolve the host again: an SSH or git:// remote is fetched from the
        // address just checked; an HTTP(S) remote through the host's own HTTP client, which
        // checks and pins every request (`git_http`).
        let mut remote_url = url.clone();
        let mut http_remote = None;
        if git_route::is_http(url) {
            let basic = match credentials {
                Some(GitCredentials::Basic { username, password }) => Some(BasicAuth {
                    username: username.clone(),
                    password: password.clone(),
                }),
                _ => None,
            };
            let ca_bundle = access.and_then(|a| a.ca_bundle.as_deref());
            let remote = HttpRemote::new(
                url,
                basic,
                ca_bundle,
                Arc::new(egress.clone()),
                self.timeout,
            )
            .map_err(failed)?;
            let registered =
                git_http::register(remote).map_err(|e| failed(e.message().to_owned()))?;
            remote_url = registered.url();
            http_remote = Some(registered);
        } else if let Some(pinned) = pinned
            && let Some(first) = pinned.addresses.first()
        {
            remote_url = git_route::with_pinned_host(url, &pinned, *first)
                .ok_or_else(|| failed("cannot find the host in the URL".into()))?;
        }
        let path = self.path_of(key);
        let repository = match Repository::open_bare(&path) {
            Ok(repository) => repository,
            Err(_) => {
                std::fs::create_dir_all(&path)
                    .map_err(|e| failed(format!("cannot create the mirror folder: {e}")))?;
                Repository::init_bare(&path).map_err(|e| failed(e.message().to_owned()))?
            }
        };
        let deadline = Instant::now() + self.timeout;
        let timeout = self.timeout;
        let mut callbacks = RemoteCallbacks::new();
        let mut attempts = 0;
        callbacks.credentials(move |_url, username_from_url, allowed| {
            attempts += 1;
            if attempts > 1 {
                return Err(git2::Error::from_str(
                    "authentication failed (credentials rejected)",
                ));
            }
            match credentials {
                Some(GitCredentials::Basic { username, password })
                    if allowed.is_user_pass_plaintext() =>
                {
                    git2::Cred::userpass_plaintext(username, password)
                }
                Some(GitCredentials::SshKey {
                    username,
                    private_key,
                }) if allowed.is_ssh_key() => git2::Cred::ssh_key_from_memory(
                    username_from_url.unwrap_or(username),
                    None,
                    private_key,
                    None,
                ),
                Some(_) => Err(git2::Error::from_str(
                    "the credentials do not fit what the server asks for",
                )),
                None => Err(git2::Error::from_str(
                    "the server asks for credentials and none are configured",
                )),
            }
        });
        let limits = self.limits;
        // Why this host stopped the fetch (a limit, a refused certificate), to report instead
        // of the transport error libgit2 makes of it.
        let stopped_because = Arc::new(Mutex::new(None::<String>));
        let over = Arc::clone(&stopped_because);
        callbacks.transfer_progress(move |progress| {
            let why = if progress.received_bytes() > limits.max_received_bytes {
                Some(format!(
                    "the repository is larger than the {} MiB a mirror may receive",
                    limits.max_received_bytes >> 20
                ))
            } else if progress.total_objects() > limits.max_objects {
                Some(format!(
                    "the repository has {} objects, more than the {} a mirror may receive",
                    progress.total_objects(),
                    limits.max_objects
                ))
            } else {
                None
            };
            if let Some(why) = why {
                *over.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                return false;
            }
            Instant::now() < deadline
        });
        let known_hosts = access.and_then(|a| a.known_hosts.clone());
        // Host keys and certificates are matched against the name the user wrote, also
        // when the remote URL was rewritten to the checked address.
        let written = capstan_net::egress::git_host(url);
        let port = written.as_ref().map_or(22, |(_, port)| *port);
        let written_host = written.map(|(host, _)| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned()
        });
        // libgit2 replaces the callback's error with its own generic one: keep ours.
        let refused = Arc::clone(&stopped_because);
        callbacks.certificate_check(move |certificate, host| {
            check_remote_certificate(
                certificate,
                written_host.as_deref().unwrap_or(host),
                port,
                known_hosts.as_deref(),
            )
            .inspect_err(|e| {
                *refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.message().to_owned());
            })
        });
        let mut options = FetchOptions::new();
        options.remote_callbacks(callbacks);
        options.prune(git2::FetchPrune::On);
        options.follow_redirects(git2::RemoteRedirect::None);
        let mut remote = repository
            .remote_anonymous(&remote_url)
            .map_err(|e| failed(e.message().to_owned()))?;
        remote
            .fetch(
                &["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                Some(&mut options),
                None,
            )
            .map_err(|e| {
                let over = stopped_because
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                if let Some(why) = over {
                    failed(why)
                } else if let Some(why) = http_remote.as_ref().and_then(Registered::failure) {
                    failed(why)
                } else if Instant::now() >= deadline {
                    failed(format!("timed out after {} s", timeout.as_secs()))
                } else {
                    failed(e.message().to_owned())
                }
            })?;
        Ok(path)
    }

    /// [`MirrorStore::fetch_blocking`] on a blocking thread, abandoned after the timeout
    /// even when the server stops answering mid-way. While a fetch of one mirror is still
    /// running, another fetch of it fails at once instead of piling up.
    pub async fn fetch(
        self: &Arc<Self>,
        key: &MirrorKey,
        access: Option<GitAccess>,
        egress: Arc<EgressPolicy>,
    ) -> Result<PathBuf, MirrorError> {
        let failed = |message: String| MirrorError {
            url: key.url.clone(),
            message,
        };
        let path = self.path_of(key);
        if !self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.clone())
        {
            return Err(failed(
                "the previous fetch of this repository has not finished yet".into(),
            ));
        }
        let guard = InFlight {
            set: Arc::clone(&self.in_flight),
            path,
        };
        let store = Arc::clone(self);
        let owned = key.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _guard = guard;
            store.fetch_blocking(&owned, access.as_ref(), &egress)
        });
        match tokio::time::timeout(self.timeout, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(failed(format!("fetch task failed: {e}"))),
            Err(_) => Err(failed(format!(
                "timed out after {} s",
                self.timeout.as_secs()
            ))),
        }
    }

    /// Remove the mirror of `key` from disk.
    pub fn remove(&self, key: &MirrorKey) -> std::io::Result<()> {
        match std::fs::remove_dir_all(self.path_of(key)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn errors_never_show_credentials_embedded_in_the_url() {
        let error = MirrorError {
            url: "https://deploy:s3cret-token@git.example/org/repo.git".into(),
            message: "remote error for https://deploy:s3cret-token@git.example/org/repo.git".into(),
        };
        let shown = error.to_string();
        assert!(
            !shown.contains("s3cret-token") && !shown.contains("deploy:"),
            "{shown}"
        );
        assert!(
            shown.starts_with("fetching https://git.example/org/repo.git: "),
            "{shown}"
        );
    }
    use super::*;
    use crate::sources::SecretRef;

    #[test]
    fn folder_names_reveal_neither_url_nor_credentials() {
        let store = MirrorStore::new("/cache", Duration::from_secs(1));
        let plain = MirrorKey {
            url: "https://example.com/charts.git".into(),
            credentials: None,
        };
        let with_secret = MirrorKey {
            credentials: Some(SecretRef {
                namespace: "a".into(),
                name: "token".into(),
            }),
            ..plain.clone()
        };
        let (p1, p2) = (store.path_of(&plain), store.path_of(&with_secret));
        assert_ne!(p1, p2);
        for path in [p1, p2] {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(name.len(), 32);
            assert!(!name.contains("example") && !name.contains("token"));
        }
        let secret = GitCredentials::Basic {
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{secret:?}").contains("hunter2"));
    }

    #[test]
    fn remotes_the_egress_guard_refuses_are_never_fetched() {
        use super::*;
        let dir = tempfile::tempdir().unwrap();
        let store = MirrorStore::new(dir.path(), Duration::from_secs(5));
        let strict = EgressPolicy::public_only();
        for (url, expected) in [
            (
                "file:///srv/git/another-tenant",
                "sources.egress.allowLocalPaths",
            ),
            (
                "http://169.254.169.254/org/repo.git",
                "resolves to 169.254.169.254, a link-local address",
            ),
            (
                "https://127.0.0.2:8443/repo.git",
                "resolves to 127.0.0.2, a loopback address",
            ),
        ] {
            let key = MirrorKey {
                url: url.into(),
                credentials: None,
            };
            let error = store.fetch_blocking(&key, None, &strict).unwrap_err();
            assert!(error.to_string().contains(expected), "{url}: {error}");
            assert!(!store.path_of(&key).exists(), "{url}: no mirror created");
        }
    }

    #[test]
    fn ssh_host_keys_must_be_listed_for_the_host_and_port() {
        use super::known_host_matches;
        use base64::Engine;
        use hmac::Mac;
        let b64 = base64::engine::general_purpose::STANDARD;
        let key = b"\0\0\0\x0bssh-ed25519\0\0\0\x20host-key-bytes-of-the-git-server!";
        let other = b"\0\0\0\x0bssh-ed25519\0\0\0\x20a-different-key-of-another-host";
        let blob = b64.encode(key);
        // A hashed entry as `ssh-keygen -H` writes it, for `[hashed.example.com]:2200`.
        let salt = b"twenty-bytes-of-salt";
        let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(salt).unwrap();
        mac.update(b"[hashed.example.com]:2200");
        let hashed = format!(
            "|1|{}|{}",
            b64.encode(salt),
            b64.encode(mac.finalize().into_bytes())
        );
        let known = format!(
            "# comment\n@cert-authority * ssh-ed25519 {blob}\ngit.example.com,10.0.0.7 ssh-ed25519 {blob}\n[ssh.example.com]:2222 ssh-ed25519 {blob} comment\n{hashed} ssh-ed25519 {blob}\n"
        );
        assert!(known_host_matches(&known, "git.example.com", 22, key));
        assert!(known_host_matches(&known, "GIT.example.com", 22, key));
        assert!(known_host_matches(&known, "10.0.0.7", 22, key));
        assert!(known_host_matches(&known, "ssh.example.com", 2222, key));
        assert!(known_host_matches(&known, "hashed.example.com", 2200, key));
        // The port is part of the name, as OpenSSH reads the file.
        assert!(!known_host_matches(&known, "ssh.example.com", 22, key));
        assert!(!known_host_matches(&known, "git.example.com", 2222, key));
        assert!(!known_host_matches(&known, "hashed.example.com", 22, key));
        assert!(!known_host_matches(&known, "git.example.com", 22, other));
        assert!(!known_host_matches(&known, "unlisted.example.com", 22, key));
        assert!(!known_host_matches("", "git.example.com", 22, key));
    }

    #[test]
    fn a_fetch_stops_at_the_mirror_limits() {
        use super::*;
        let work = tempfile::tempdir().unwrap();
        let repo = work.path().join("repo");
        let run = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&repo)
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        std::fs::create_dir_all(&repo).unwrap();
        run(&["init", "-q", "-b", "main"]);
        for i in 0..40 {
            // Incompressible-ish content: each file differs.
            let text: String = (0..4096)
                .map(|j| char::from(b'a' + ((i * 7 + j * 13) % 26) as u8))
                .collect();
            std::fs::write(repo.join(format!("f{i}.txt")), text).unwrap();
        }
        run(&["add", "."]);
        run(&["commit", "-qm", "files"]);
        // A `file://` fetch reports its progress (objects) as a network fetch does.
        let key = MirrorKey {
            url: format!("file://{}", repo.display()),
            credentials: None,
        };
        let local = EgressPolicy::allowing(Vec::new(), true);
        let few_objects = MirrorStore::new(work.path().join("a"), Duration::from_secs(30))
            .with_limits(MirrorLimits {
                max_received_bytes: 1 << 30,
                max_objects: 10,
            });
        let error = few_objects.fetch_blocking(&key, None, &local).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("objects, more than the 10 a mirror may receive"),
            "{error}"
        );
        let roomy = MirrorStore::new(work.path().join("b"), Duration::from_secs(30));
        roomy.fetch_blocking(&key, None, &local).unwrap();
    }
}
