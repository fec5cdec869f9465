//! Running the real `git` CLI in tests, with a fixed identity and `main` as default branch,
//! and serving repositories over smart HTTP with the real `git http-backend` and over SSH
//! with the real `git-upload-pack`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Run `git ARGS` in `dir`; its trimmed stdout, or a panic with its stderr.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Capstan Test",
            "-c",
            "user.email=test@capstan.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// `tests/support/git_http_server.py`: the repositories under a folder served over smart
/// HTTP on 127.0.0.1 by the real `git http-backend`, optionally behind basic auth; stopped
/// (by its pid) on drop.
#[allow(dead_code)]
pub struct GitHttpServer {
    child: Child,
    /// Port it listens on.
    pub port: u16,
    log: PathBuf,
    scheme: &'static str,
}

#[allow(dead_code)]
impl GitHttpServer {
    /// Serve the repositories under `root`, logging requests to `log`.
    pub fn start(root: &Path, log: PathBuf, credentials: Option<(&str, &str)>) -> GitHttpServer {
        Self::start_with(root, log, credentials, None)
    }

    /// Like [`GitHttpServer::start`]; with `tls` (certificate and key files), over HTTPS.
    pub fn start_with(
        root: &Path,
        log: PathBuf,
        credentials: Option<(&str, &str)>,
        tls: Option<(&Path, &Path)>,
    ) -> GitHttpServer {
        use std::io::BufRead;
        // Used from the host's tests and from tests/integration: find the script beside
        // this file either way.
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let script = ["../tests/support", "../support"]
            .iter()
            .map(|dir| manifest.join(dir).join("git_http_server.py"))
            .find(|path| path.is_file())
            .expect("tests/support/git_http_server.py");
        let mut command = Command::new("python3");
        command.arg(script).arg(root);
        if let Some((user, password)) = credentials {
            command.args([user, password]);
        }
        if let Some((cert, key)) = tls {
            command.env("TLS_CERT", cert).env("TLS_KEY", key);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&log).expect("log")))
            .spawn()
            .expect("python3");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port line");
        GitHttpServer {
            child,
            port: line.trim().parse().expect("port"),
            log,
            scheme: if tls.is_some() { "https" } else { "http" },
        }
    }

    /// What the server logged (one line per request).
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The URL of repository `name` (a folder under the served root).
    pub fn url(&self, name: &str) -> String {
        format!("{}://127.0.0.1:{}/{name}", self.scheme, self.port)
    }
}

impl Drop for GitHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/support/git_ssh_server.py`: the repositories under a folder served over SSH on
/// 127.0.0.1 (asyncssh from `target/ssh-venv`, made by `make ssh-server`, in front of the
/// real `git-upload-pack`), with a fresh host key and one authorized client key; stopped
/// (by its pid) on drop.
#[allow(dead_code)]
pub struct GitSshServer {
    child: Child,
    /// Port it listens on.
    pub port: u16,
    /// `known_hosts` line for the server (`[127.0.0.1]:PORT ssh-ed25519 …`).
    pub known_hosts: String,
    /// The same line hashed by `ssh-keygen -H` (`|1|salt|hash ssh-ed25519 …`).
    pub known_hosts_hashed: String,
    /// The client's private key (PEM), authorized on the server.
    pub client_key: String,
    log: PathBuf,
}

#[allow(dead_code)]
impl GitSshServer {
    /// Serve the repositories under `root`; keys and the log go to `work`.
    pub fn start(root: &Path, work: &Path) -> GitSshServer {
        use std::io::BufRead;
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let script = ["../tests/support", "../support"]
            .iter()
            .map(|dir| manifest.join(dir).join("git_ssh_server.py"))
            .find(|path| path.is_file())
            .expect("tests/support/git_ssh_server.py");
        let python = [
            "../target/ssh-venv/bin/python",
            "../../target/ssh-venv/bin/python",
        ]
        .iter()
        .map(|p| manifest.join(p))
        .find(|path| path.is_file())
        .expect("target/ssh-venv with asyncssh: run `make ssh-server`");
        let keygen = |file: &str, kind: &[&str]| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-N", "", "-f"])
                .arg(work.join(file))
                .args(kind)
                .status()
                .expect("ssh-keygen");
            assert!(status.success(), "ssh-keygen {file}");
        };
        keygen("host_key", &["-t", "ed25519"]);
        // PEM: the format libssh2 reads from memory with any of its crypto back ends.
        keygen("client_key", &["-t", "rsa", "-b", "2048", "-m", "PEM"]);
        let log = work.join("ssh.log");
        let mut child = Command::new(python)
            .arg(script)
            .arg(root)
            .arg(work.join("host_key"))
            .arg(work.join("client_key.pub"))
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&log).expect("log")))
            .spawn()
            .expect("python");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port line");
        let port: u16 = line.trim().parse().expect("port");
        let host_key = std::fs::read_to_string(work.join("host_key.pub")).expect("host key");
        let mut fields = host_key.split_whitespace();
        let known_hosts = format!(
            "[127.0.0.1]:{port} {} {}\n",
            fields.next().expect("key type"),
            fields.next().expect("key")
        );
        let hashed_file = work.join("known_hosts");
        std::fs::write(&hashed_file, &known_hosts).expect("known_hosts");
        let status = Command::new("ssh-keygen")
            .args(["-q", "-H", "-f"])
            .arg(&hashed_file)
            .status()
            .expect("ssh-keygen -H");
        assert!(status.success(), "ssh-keygen -H");
        let known_hosts_hashed = std::fs::read_to_string(&hashed_file).expect("hashed");
        assert!(
            known_hosts_hashed.starts_with("|1|"),
            "{known_hosts_hashed}"
        );
        GitSshServer {
            child,
            port,
            known_hosts,
            known_hosts_hashed,
            client_key: std::fs::read_to_string(work.join("client_key")).expect("client key"),
            log,
        }
    }

    /// The URL of repository `name`.
    pub fn url(&self, name: &str) -> String {
        format!("ssh://git@127.0.0.1:{}/{name}", self.port)
    }

    /// What the server logged.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for GitSshServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
