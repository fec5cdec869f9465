//! A Helm chart repository served over HTTP on 127.0.0.1 by
//! `tests/support/helm_repo_server.py`, stopped (by its pid) on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The server process and where it logs requests.
pub struct RepoServer {
    child: Child,
    /// Port it listens on.
    pub port: u16,
    log: PathBuf,
}

impl RepoServer {
    /// Serve `root`, logging requests to `log`, behind basic auth when `credentials` are given.
    pub fn start(root: &Path, log: PathBuf, credentials: Option<(&str, &str)>) -> RepoServer {
        Self::start_with(root, log, credentials, None)
    }

    #[allow(dead_code)]
    /// Like [`RepoServer::start`]; with `tls` (certificate and key files), over HTTPS.
    pub fn start_with(
        root: &Path,
        log: PathBuf,
        credentials: Option<(&str, &str)>,
        tls: Option<(&Path, &Path)>,
    ) -> RepoServer {
        use std::io::BufRead;
        // Used from the host's tests and from tests/integration: find the script beside
        // this file either way.
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let script = ["../tests/support", "../support"]
            .iter()
            .map(|dir| manifest.join(dir).join("helm_repo_server.py"))
            .find(|path| path.is_file())
            .expect("tests/support/helm_repo_server.py");
        let mut command = Command::new("python3");
        command.arg(script).arg(root);
        if let Some((cert, key)) = tls {
            command.env("TLS_CERT", cert).env("TLS_KEY", key);
        }
        if let Some((user, password)) = credentials {
            command.args([user, password]);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        RepoServer {
            child,
            port: line.trim().parse().expect("port"),
            log,
        }
    }

    /// URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Logged requests (`METHOD PATH STATUS auth|noauth`) whose path starts with `prefix`.
    #[allow(dead_code)]
    pub fn requests(&self, prefix: &str) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .filter(|l| l.split(' ').nth(1).is_some_and(|p| p.starts_with(prefix)))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for RepoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
