//! Source sync fan-in: one pass for 200 releases on one git repository (one mirror, one
//! resolve of the shared source) against a pass for a single release, in the same run, and
//! the disk used by the mirror against the repository's own `.git`. Needs `make plugins`.

#[path = "../../tests/support/egress.rs"]
mod egress_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::artifacts::ArtifactStore;
use capstan::sources::mirrors::MirrorStore;
use capstan::sources::sync::{NoCredentials, SourceSync, SourceSyncOptions};
use capstan::sources::{ReleaseKey, SourceSpec};
use criterion::{Criterion, criterion_group, criterion_main};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@capstan.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(status.success());
}

fn disk_usage(path: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(path).expect("read_dir").flatten() {
        let meta = entry.metadata().expect("metadata");
        total += if meta.is_dir() {
            disk_usage(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn specs(url: &str, releases: usize) -> BTreeMap<ReleaseKey, SourceSpec> {
    (0..releases)
        .map(|n| {
            let release = ReleaseKey {
                namespace: "bench".into(),
                name: format!("r{n}"),
            };
            let source = SourceSpec::new(
                "git",
                &serde_json::json!({"url": url, "ref": "main", "path": "chart"}),
                None,
            );
            (release, source)
        })
        .collect()
}

fn source_sync(c: &mut Criterion) {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join("chart/templates")).expect("mkdir");
    std::fs::write(
        repo.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: bench\nversion: 1.0.0\n",
    )
    .expect("write");
    for n in 0..20 {
        std::fs::write(
            repo.join(format!("chart/templates/cm{n}.yaml")),
            format!("kind: ConfigMap\nmetadata: {{name: cm{n}}}\n"),
        )
        .expect("write");
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "chart"]);
    let url = format!("file://{}", repo.display());

    let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).expect("runtime");
    let plugin_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins/source-git.wasm");
    runtime
        .load(&PluginConfig {
            name: "git".into(),
            world: PluginWorld::Source,
            path: plugin_path,
            limits: PluginLimits::default(),
            wasi: WasiGrants::default(),
            kinds: Vec::new(),
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        })
        .expect("load source-git");
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
        vec![runtime.source("git").expect("plugin")],
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

    let mut group = c.benchmark_group("source_sync_pass");
    group.sample_size(20);
    for releases in [1usize, 200] {
        let all = specs(&url, releases);
        let sync = new_sync(&format!("warm{releases}"));
        let t0 = Instant::now();
        tokio.block_on(sync.pass(&all, &NoCredentials, t0));
        // Warm: the mirror is not due, the shared source is resolved once per pass.
        group.bench_function(format!("warm_{releases}_releases"), |b| {
            b.to_async(&tokio)
                .iter(|| sync.pass(&all, &NoCredentials, t0 + Duration::from_secs(1)))
        });
        // Cold: fresh mirror and artifact store — fetch, resolve, package.
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

    let mirror_bytes = disk_usage(&work.path().join("warm200/mirrors"));
    let repo_bytes = disk_usage(&repo.join(".git"));
    println!(
        "mirror disk use for 200 releases on one repository: {mirror_bytes} bytes in one mirror ({:.2}x the repository's .git, {repo_bytes} bytes)",
        mirror_bytes as f64 / repo_bytes as f64
    );
}

criterion_group!(benches, source_sync);
criterion_main!(benches);
