//! A `capstan:plugin@0.1.1` backend (the `backend-helm3` of the last 0.1.1 commit, kept as
//! `tests/fixtures/backend-helm3-0.1.1.wasm.gz`) served through the host's adapter and the
//! `compat-helm` component against the real control plane: its records are Helm's, and a
//! release moves between it and the current backend by configuration alone.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::harness::{Cluster, repo_root};
use crate::release_helm3::{capstan_command, helm_json, shop_chart, succeeded, write};

/// The 0.1.1 backend fixture, unpacked into `dir`.
fn previous_backend(dir: &Path) -> PathBuf {
    let packed = repo_root().join("tests/fixtures/backend-helm3-0.1.1.wasm.gz");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&packed).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let path = dir.join("old/backend-helm3.wasm");
    write(&path, "");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `capstan release --backend <backend> <args>` with a configuration holding both the
/// 0.1.1 backend (`old`) and the current one (`helm3`).
fn capstan_release(cluster: &Cluster, dir: &Path, backend: &str, args: &[&str]) -> String {
    let plugins = repo_root().join("target/plugins");
    let config = dir.join("both-contracts.yaml");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {cache}\nplugins:\n- {{name: old, world: backend, path: {old}, compatHelm: {p}/compat-helm.wasm}}\n- {{name: helm3, world: backend, path: {p}/backend-helm3.wasm}}\nbackends: {{default: old}}\n",
            cache = dir.join("cache").display(),
            old = previous_backend(dir).display(),
            p = plugins.display(),
        ),
    )
    .unwrap();
    let all: Vec<&str> = [&["release", "--backend", backend][..], args].concat();
    let mut command = capstan_command(cluster, dir, None, &all);
    command.env("CAPSTAN_CONFIG", &config);
    succeeded(&all, command.output().unwrap())
}

pub async fn a_previous_contract_backend_installs_and_hands_over_to_the_current_one(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("old-backend").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    let values = dir.path().join("values.yaml");
    write(&values, "greeting: hi\nextra: true\n");
    let target = [
        "--name",
        "shop",
        "--namespace",
        namespace.as_str(),
        "--chart",
        chart.to_str().unwrap(),
    ];

    let install = [
        &["sync"][..],
        &target,
        &["-f", values.to_str().unwrap(), "--set", "port=8080"],
    ]
    .concat();

    // Installed by the 0.1.1 backend: values layered by compat-helm, records Helm's.
    let out = capstan_release(&cluster, dir.path(), "old", &install);
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    let listed = helm_json(&cluster, &["list", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed[0]["name"], "shop", "{listed}");
    assert_eq!(listed[0]["status"], "deployed", "{listed}");
    assert_eq!(listed[0]["chart"], "shop-0.1.0", "{listed}");
    let got = helm_json(
        &cluster,
        &["get", "values", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(
        got,
        serde_json::json!({"greeting": "hi", "extra": true, "port": 8080})
    );
    let manifest = cluster.run("helm", &["get", "manifest", "shop", "-n", &namespace]);
    assert!(manifest.contains("port: 8080"), "{manifest}");
    assert!(manifest.contains("name: shop-extra"), "{manifest}");

    // The same request through the 0.1.1 backend again changes nothing.
    let out = capstan_release(&cluster, dir.path(), "old", &install);
    assert!(out.contains("unchanged: revision 1"), "{out}");

    // Swapped to the current backend by configuration: it upgrades the 0.1.1 records.
    let out = capstan_release(
        &cluster,
        dir.path(),
        "helm3",
        &[&["sync"][..], &target, &["--set", "greeting=bye"]].concat(),
    );
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let history = helm_json(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");
    assert_eq!(history[0]["status"], "superseded", "{history}");

    // And the 0.1.1 backend reads what the current one wrote, and uninstalls it.
    let status = capstan_release(
        &cluster,
        dir.path(),
        "old",
        &["status", "--name", "shop", "--namespace", &namespace],
    );
    assert!(status.contains("REVISION: 2"), "{status}");
    let out = capstan_release(
        &cluster,
        dir.path(),
        "old",
        &["uninstall", "--name", "shop", "--namespace", &namespace],
    );
    assert!(out.contains("uninstalled"), "{out}");
    let listed = helm_json(&cluster, &["list", "-a", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed, serde_json::json!([]), "{listed}");
}
