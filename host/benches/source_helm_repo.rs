//! Helm repository fan-in: one pass for 200 releases on one repository (one index request,
//! one resolve of the shared source, one download) against a pass for a single release, in
//! the same run. The repository is made by the real `helm` CLI (`make tools`) and served by
//! `tests/support/helm_repo_server.py` on 127.0.0.1. Needs `make plugins`.

#[path = "../../tests/support/egress.rs"]
mod egress_support;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::artifacts::ArtifactStore;
use capstan::sources::mirrors::MirrorStore;
use capstan::sources::sync::{NoCredentials, SourceSync, SourceSyncOptions};
use capstan::sources::{ReleaseKey, SourceSpec};
use criterion::{Criterion, criterion_group, criterion_main};

fn helm(home: &Path, args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tools = Command::new(root.join("tests/cluster/tools-dir"))
        .output()
        .expect("tools-dir");
    let helm = PathBuf::from(String::from_utf8_lossy(&tools.stdout).trim()).join("helm");
    let status = Command::new(helm)
        .args(args)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .stdout(Stdio::null())
        .status()
        .expect("helm (run `make tools`)");
    assert!(status.success(), "helm {args:?}");
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn specs(url: &str, releases: usize) -> BTreeMap<ReleaseKey, SourceSpec> {
    (0..releases)
        .map(|n| {
            let release = ReleaseKey {
                namespace: "bench".into(),
                name: format!("r{n}"),
            };
            let source = SourceSpec::new(
                "helm-repository",
                &serde_json::json!({"url": url, "chart": "bench", "version": "^1"}),
                None,
            );
            (release, source)
        })
        .collect()
}

fn source_helm_repo(c: &mut Criterion) {
    let work = tempfile::tempdir().expect("tempdir");
    let served = work.path().join("served");
    let charts = served.join("charts");
    for version in ["1.0.0", "1.1.0", "1.2.0", "2.0.0-rc.1"] {
        let dir = work.path().join("src").join(version).join("bench");
        std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
        std::fs::write(
            dir.join("Chart.yaml"),
            format!("apiVersion: v2\nname: bench\nversion: {version}\n"),
        )
        .expect("write");
        for n in 0..20 {
            std::fs::write(
                dir.join(format!("templates/cm{n}.yaml")),
                format!("kind: ConfigMap\nmetadata: {{name: cm{n}}}\n"),
            )
            .expect("write");
        }
        helm(
            work.path(),
            &[
                "package",
                dir.to_str().expect("utf-8"),
                "-d",
                charts.to_str().expect("utf-8"),
            ],
        );
    }
    helm(
        work.path(),
        &["repo", "index", charts.to_str().expect("utf-8")],
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/helm_repo_server.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(&served)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let mut port = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut port)
        .expect("port");
    let _server = Server(child);
    let url = format!("http://127.0.0.1:{}/charts", port.trim());

    let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).expect("runtime");
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins");
    for (name, file) in [
        ("git", "source-git.wasm"),
        ("helm-repo", "source-helm-repo.wasm"),
    ] {
        runtime
            .load(&PluginConfig {
                name: name.into(),
                world: PluginWorld::Source,
                path: plugins.join(file),
                limits: PluginLimits::default(),
                wasi: WasiGrants::default(),
                kinds: Vec::new(),
                allowed_hosts: None,
                storage_namespaces: Vec::new(),
                compat_helm: None,
            })
            .expect("load plugin");
    }
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let options = SourceSyncOptions {
        interval: Duration::from_secs(60),
        grace: Duration::from_secs(300),
        parallelism: 4,
    };
    let (catalog, failures) = tokio.block_on(capstan::sources::catalog::describe_all(
        vec![
            runtime.source("git").expect("git"),
            runtime.source("helm-repo").expect("helm-repo"),
        ],
        &Default::default(),
    ));
    assert!(failures.is_empty(), "{failures:?}");
    let catalog = Arc::new(catalog.expect("catalog"));
    let new_sync = |name: &str| {
        let mirrors = Arc::new(MirrorStore::new(
            work.path().join(name).join("mirrors"),
            Duration::from_secs(60),
        ));
        let artifacts = Arc::new(
            ArtifactStore::open(work.path().join(name).join("artifacts"), 1 << 30).expect("store"),
        );
        SourceSync::new(options, mirrors, artifacts, Arc::clone(&catalog), None).with_http(
            capstan::sources::sync::HttpOptions {
                egress: egress_support::loopback_and_local_paths(),
                ..Default::default()
            },
        )
    };

    let mut group = c.benchmark_group("source_helm_repo_pass");
    group.sample_size(20);
    for releases in [1usize, 200] {
        let all = specs(&url, releases);
        let sync = new_sync(&format!("warm{releases}"));
        let t0 = Instant::now();
        let first = tokio.block_on(sync.pass(&all, &NoCredentials, t0));
        assert!(
            first.releases.values().all(Result::is_ok),
            "{:?}",
            first.releases
        );
        // Warm: the index is fresh in the cache; the shared source is resolved once.
        group.bench_function(format!("warm_{releases}_releases"), |b| {
            b.to_async(&tokio)
                .iter(|| sync.pass(&all, &NoCredentials, t0 + Duration::from_secs(1)))
        });
        // Revalidate: a new interval — one conditional index request (304), one resolve.
        let mut tick = 1;
        group.bench_function(format!("revalidate_{releases}_releases"), |b| {
            b.to_async(&tokio).iter(|| {
                tick += 1;
                sync.pass(&all, &NoCredentials, t0 + options.interval * tick)
            })
        });
        // Cold: fresh cache and artifact store — index download, resolve, chart download.
        let mut round = 0;
        group.bench_function(format!("cold_{releases}_releases"), |b| {
            b.to_async(&tokio).iter(|| {
                round += 1;
                let sync = new_sync(&format!("cold{releases}-{round}"));
                let all = all.clone();
                async move { sync.pass(&all, &NoCredentials, Instant::now()).await }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, source_helm_repo);
criterion_main!(benches);
