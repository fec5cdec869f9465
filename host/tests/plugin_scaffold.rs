//! `capstan plugin new` writes plugins that build outside this repository and serve: the
//! Rust scaffold is built as a crate in a temporary folder depending on the SDK by path
//! (as a third party would), loaded by the host, and asked for a chart from a real git
//! repository; the Python scaffold is built with componentize-py and describes its kind.
//! Needs `cargo` with the wasm32-wasip2 target (and python3 for the Python part).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::artifacts::ArtifactStore;
use capstan::sources::mirrors::MirrorStore;
use capstan::sources::sync::{HttpOptions, NoCredentials, SourceSync, SourceSyncOptions};
use capstan::sources::{ReleaseKey, SourceSpec};

#[path = "../../tests/support/git.rs"]
mod git_support;
use git_support::git;
#[path = "../../tests/support/egress.rs"]
mod egress_support;
#[path = "../../tests/support/sources.rs"]
mod sources_support;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("command runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

fn load(file: &Path) -> PluginRuntime {
    let mut runtime = PluginRuntime::new(file.with_extension("compiled"), None).unwrap();
    runtime
        .load(&PluginConfig {
            name: "scaffolded".into(),
            world: PluginWorld::Source,
            path: file.to_path_buf(),
            limits: PluginLimits::default(),
            wasi: WasiGrants::default(),
            kinds: Vec::new(),
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        })
        .unwrap();
    runtime
}

/// `cargo package` of plugins/lib/sdk (the crate as crates.io would get it), unpacked in
/// `work`; fails the test when Cargo refuses to package it.
fn packaged_sdk(work: &Path) -> PathBuf {
    let target = work.join("package-target");
    run(Command::new("cargo")
        .args(["package", "--no-verify", "--allow-dirty", "--quiet"])
        .arg("--manifest-path")
        .arg(repo_root().join("plugins/lib/sdk/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target));
    let file = format!(
        "capstan-plugin-sdk-{}.crate",
        capstan::scaffold::SDK_VERSION
    );
    run(Command::new("tar")
        .arg("xzf")
        .arg(target.join("package").join(&file))
        .arg("-C")
        .arg(work));
    let unpacked = work.join(file.trim_end_matches(".crate"));
    for wit in [
        "types.wit",
        "host.wit",
        "source.wit",
        "backend.wit",
        "worlds.wit",
    ] {
        assert!(
            unpacked.join("wit").join(wit).is_file(),
            "the packaged SDK lacks wit/{wit}"
        );
    }
    unpacked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_scaffold_builds_outside_the_repository_and_serves_charts() {
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("in-house-charts");
    run(Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "plugin",
            "new",
            "--lang",
            "rust",
            "in-house-charts",
            "--dir",
        ])
        .arg(&crate_dir));
    // It depends on the released SDK. Until that release is on crates.io, the crate file
    // `cargo package` makes of plugins/lib/sdk — exactly what would be published, WIT
    // included — stands in for it through a patch of crates.io.
    let manifest_path = crate_dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    assert!(
        manifest.contains(&format!(
            "capstan-plugin-sdk = \"{}\"",
            capstan::scaffold::SDK_VERSION
        )),
        "{manifest}"
    );
    let packaged = packaged_sdk(work.path());
    std::fs::write(
        &manifest_path,
        format!(
            "{manifest}\n[patch.crates-io]\ncapstan-plugin-sdk = {{ path = {:?} }}\n",
            packaged.display().to_string()
        ),
    )
    .unwrap();
    // Built where a third party would build it: its own folder, its own lock file, this
    // repository's target folder only as a cache.
    run(Command::new("cargo")
        .args(["build", "--target", "wasm32-wasip2", "--release", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", repo_root().join("target/scaffold"))
        .env_remove("RUSTFLAGS"));
    let built = repo_root().join("target/scaffold/wasm32-wasip2/release/in_house_charts.wasm");
    let component = work.path().join("in-house-charts.wasm");
    std::fs::copy(&built, &component).unwrap();

    let inspected = run(Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "inspect"])
        .arg(&component));
    assert!(
        inspected.contains("source-plugin (capstan:plugin@0.2.0, supported)"),
        "{inspected}"
    );
    assert!(
        inspected.contains("in-house-charts: charts kept as folders"),
        "{inspected}"
    );
    assert!(inspected.contains("git mirror of: spec/url"), "{inspected}");

    let runtime = load(&component);
    let catalog = sources_support::catalog(&runtime, &["scaffolded"]).await;
    let sync = SourceSync::new(
        SourceSyncOptions {
            interval: Duration::from_secs(60),
            grace: Duration::from_secs(60),
            parallelism: 2,
        },
        Arc::new(MirrorStore::new(
            work.path().join("mirrors"),
            Duration::from_secs(30),
        )),
        Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap()),
        catalog,
        None,
    )
    .with_http(HttpOptions {
        egress: egress_support::loopback_and_local_paths(),
        ..HttpOptions::default()
    });
    let repo = work.path().join("charts");
    std::fs::create_dir_all(repo.join("charts/web/templates")).unwrap();
    std::fs::write(
        repo.join("charts/web/Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 1.4.2\nappVersion: \"2.0\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("charts/web/templates/cm.yaml"),
        "kind: ConfigMap\n",
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "web"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let url = format!("file://{}", repo.display());
    let release = ReleaseKey {
        namespace: "apps".into(),
        name: "web".into(),
    };
    let good = SourceSpec::new(
        "in-house-charts",
        &serde_json::json!({"url": url, "path": "charts/web"}),
        None,
    );
    let bad = SourceSpec::new("in-house-charts", &serde_json::json!({"url": url}), None);
    let other = ReleaseKey {
        namespace: "apps".into(),
        name: "bad".into(),
    };
    let specs = BTreeMap::from([(release.clone(), good), (other.clone(), bad)]);
    let report = sync.pass(&specs, &NoCredentials, Instant::now()).await;
    let artifact = report.releases[&release].clone().unwrap();
    assert_eq!(artifact.chart, "web");
    assert_eq!(artifact.version, "1.4.2");
    assert_eq!(artifact.revision, head);
    let refused = report.releases[&other].clone().unwrap_err().to_string();
    assert!(
        refused.contains("at /: ") && refused.contains("path") && refused.contains("required"),
        "{refused}"
    );
}

#[test]
fn the_python_scaffold_builds_with_componentize_py_and_describes_its_kind() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("team-store");
    run(Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "new", "--lang", "python", "team-store", "--dir"])
        .arg(&dir));
    let component = work.path().join("team-store.wasm");
    // Reuse the componentize-py the repository's build installed, when there is one.
    let venv = repo_root().join("target/python-venv");
    let mut build = Command::new(dir.join("build.sh"));
    build.arg(&component);
    if venv.join("bin/componentize-py").is_file() {
        build.env("COMPONENTIZE_PY_VENV", &venv);
    }
    run(&mut build);
    let inspected = run(Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "inspect"])
        .arg(&component));
    assert!(
        inspected.contains("source-plugin (capstan:plugin@0.2.0, supported)"),
        "{inspected}"
    );
    assert!(inspected.contains("team-store: "), "{inspected}");
    assert!(
        inspected.contains("http to the origin of: spec/url"),
        "{inspected}"
    );
}
