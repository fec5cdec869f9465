//! `capstan run`: loads every configured plugin (from the compiled cache on a second
//! start), connects to the cluster, serves /healthz, /readyz and /metrics, and stops on
//! SIGTERM.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::harness::{Cluster, repo_root};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.0 GET; returns (status, body).
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Some((status, body))
}

fn write_config(dir: &std::path::Path) -> std::path::PathBuf {
    let plugins = repo_root().join("target/plugins");
    let config = format!(
        "cacheDir: {cache}\nplugins:\n\
         - {{name: git, world: source, path: {p}/source-git.wasm}}\n\
         - {{name: helm-repo, world: source, path: {p}/source-helm-repo.wasm}}\n\
         - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm}}\n\
         - {{name: helm2, world: backend, path: {p}/backend-helm2.wasm}}\n\
         backends: {{default: helm3, v2: helm2, v3: helm3}}\n\
         sources: {{egress: {{allowNetworks: [127.0.0.1], allowLocalPaths: true}}}}\n",
        cache = dir.join("cache").display(),
        p = plugins.display()
    );
    let path = dir.join("capstan.yaml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Start `capstan run`, wait for /readyz, check /metrics, stop it with SIGTERM; returns
/// everything it logged.
fn run_once(cluster: &Cluster, config: &std::path::Path) -> String {
    let port = free_port();
    let binary = repo_root().join("target/debug/capstan");
    assert!(
        binary.is_file(),
        "{} is missing: build with `cargo build -p capstan`",
        binary.display()
    );
    let mut child = Command::new(binary)
        .args(["run", "--config"])
        .arg(config)
        .arg("--metrics-address")
        .arg(format!("127.0.0.1:{port}"))
        // Reconciles of other tests' HelmReleases may be in flight; the test waits this
        // long for them, not the product's default of 300 s.
        .args(["--shutdown-grace", "20"])
        .env("KUBECONFIG", cluster.kubeconfig())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ready = false;
    while Instant::now() < deadline {
        if let Some((200, body)) = http_get(port, "/readyz") {
            assert_eq!(body, "ok");
            ready = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let metrics = ready.then(|| http_get(port, "/metrics")).flatten();
    let health = ready.then(|| http_get(port, "/healthz")).flatten();
    // Stop exactly the process we started.
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(ready, "capstan run never became ready:\n{log}");
    assert_eq!(health, Some((200, "ok".to_owned())));
    let (status, metrics) = metrics.unwrap();
    assert_eq!(status, 200);
    assert!(metrics.contains("capstan_plugins_loaded 4"), "{metrics}");
    assert!(
        output.status.success(),
        "capstan run exited with {}:\n{log}",
        output.status
    );
    assert!(log.contains("shutting down"), "{log}");
    log
}

pub async fn capstan_run_loads_plugins_and_serves_health(cluster: Arc<Cluster>) {
    tokio::task::spawn_blocking(move || {
        crate::helmrelease::install_crd(&cluster);
        let dir = tempfile::tempdir().unwrap();
        let config = write_config(dir.path());
        let first = run_once(&cluster, &config);
        println!("{first}");
        assert!(first.contains("loaded 4 of 4 plugins"), "{first}");
        assert!(first.contains("(0 from the compiled cache)"), "{first}");
        assert!(first.contains("connected to the cluster"), "{first}");
        let second = run_once(&cluster, &config);
        println!("{second}");
        assert!(second.contains("(4 from the compiled cache)"), "{second}");
    })
    .await
    .unwrap();
}
