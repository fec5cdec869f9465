//! End-to-end: one Helm 4 Wasm getter plugin file serves both real Helm 4 and Capstan.
//! The `mirror-getter` folder (plugin.yaml + plugin.wasm, built with the Extism Rust PDK)
//! is installed into real Helm 4 (`helm.sh/helm/v4` built by `tests/cluster/build-helm4`),
//! which pulls a chart through it from an HTTP server behind basic auth; the very same
//! folder, named in Capstan's configuration, serves a HelmRelease of kind `mirror` that
//! becomes Ready with credentials from its Secret and is listed by real `helm`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use capstan::api::HelmRelease;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::PostParams;

use crate::harness::{Cluster, repo_root};
use crate::helmrelease::{Operator, helm_release, install_crd, publish, ready, wait_for};

/// Real Helm 4, built (once, cached) by `tests/cluster/build-helm4`.
pub(crate) fn helm4() -> PathBuf {
    let out = Command::new(repo_root().join("tests/cluster/build-helm4"))
        .output()
        .expect("tests/cluster/build-helm4");
    assert!(
        out.status.success(),
        "build-helm4: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Run Helm 4 with all its folders in `home`.
pub(crate) fn run_helm4(helm: &Path, home: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(helm)
        .args(args)
        .env("HELM_DATA_HOME", home.join("data"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .output()
        .map_err(|e| e.to_string())?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

pub async fn one_helm4_getter_file_serves_helm4_and_a_ready_helmrelease(cluster: Arc<Cluster>) {
    let plugin = repo_root().join("target/plugins/helm4/mirror-getter");
    assert!(
        plugin.join("plugin.wasm").is_file(),
        "{} is missing: run `make helm4-plugins`",
        plugin.display()
    );
    let helm = helm4();
    let version = run_helm4(&helm, Path::new("/nonexistent"), &["version", "--short"]).unwrap();
    assert!(version.starts_with("v4.3.2"), "{version}");

    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    publish(&cluster, dir.path(), &served, "0.4.0");
    let archive = std::fs::read(served.join("hello-0.4.0.tgz")).unwrap();
    let server = crate::repo_server::RepoServer::start(
        &served,
        dir.path().join("access.log"),
        Some(("mirror-user", "mirror-pass")),
    );
    let url = format!("mirror://127.0.0.1:{}/hello-0.4.0.tgz", server.port);

    // Real Helm 4: install the folder as distributed, pull through it.
    let home = dir.path().join("helm4");
    let installed = run_helm4(
        &helm,
        &home,
        &["plugin", "install", plugin.to_str().unwrap()],
    );
    assert!(installed.is_ok(), "{installed:?}");
    let listed = run_helm4(&helm, &home, &["plugin", "list"]).unwrap();
    assert!(
        listed.contains("mirror-getter") && listed.contains("getter/v1"),
        "{listed}"
    );
    let pulled = dir.path().join("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let denied = run_helm4(
        &helm,
        &home,
        &["pull", &url, "-d", pulled.to_str().unwrap()],
    );
    assert!(
        denied
            .as_ref()
            .is_err_and(|e| e.contains("answered HTTP 401")),
        "{denied:?}"
    );
    let pull = [
        "pull",
        url.as_str(),
        "-d",
        pulled.to_str().unwrap(),
        "--username",
        "mirror-user",
        "--password",
        "mirror-pass",
    ];
    run_helm4(&helm, &home, &pull).unwrap();
    assert_eq!(
        std::fs::read(pulled.join("hello-0.4.0.tgz")).unwrap(),
        archive,
        "Helm 4 got the served archive through the plugin"
    );

    // Capstan: the same folder, configured as a source plugin.
    let ns = cluster.create_namespace("hr-helm4").await;
    let client = cluster.client().await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "mirror-auth"},
        "stringData": {"username": "mirror-user", "password": "mirror-pass"},
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let api: Api<HelmRelease> = Api::namespaced(client, &ns);
    let release = helm_release(
        "mirrored",
        &ns,
        serde_json::json!({
            "chart": {"source": {"kind": "mirror", "spec": {"url": url},
                                 "secretRef": {"name": "mirror-auth"}}},
            "values": {"message": "through a Helm 4 getter"},
        }),
    );
    api.create(&PostParams::default(), &release).await.unwrap();
    let extra = format!(
        "- {{name: mirror-getter, world: source, path: {}}}\n",
        plugin.display()
    );
    let operator = Operator::start_with(&cluster, dir.path(), &extra, &[]);
    let done = wait_for(
        &api,
        "mirrored",
        &operator,
        "Ready",
        Duration::from_secs(180),
        ready,
    )
    .await;
    let status = done.status.unwrap();
    assert_eq!(status.revision, Some(1));
    let digest = capstan::sources::artifacts::digest_of(&archive);
    assert_eq!(
        status.applied_source_revision.as_deref(),
        Some(format!("0.4.0@{digest}").as_str())
    );
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains("\"chart\":\"hello-0.4.0\""), "{list}");
    let capstan_requests: Vec<String> = server
        .requests("/hello-0.4.0.tgz")
        .into_iter()
        .filter(|r| r.contains(" 200 auth"))
        .collect();
    assert!(
        capstan_requests.len() >= 2,
        "Helm 4 and Capstan both fetched with credentials: {capstan_requests:?}"
    );
}
