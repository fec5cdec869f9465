//! End-to-end: one Helm 4 Wasm plugin file serves both real Helm 4 and Capstan — a getter
//! (below) and a post-renderer ([`one_helm4_postrenderer_file_serves_helm4_and_a_helmrelease`]).
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
use crate::helmrelease::{
    Operator, condition, helm_release, install_crd, publish, ready, wait_for,
};

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

/// Real Helm 4, with helm/helm's pending fix for Wasm post-renderers (built by
/// `tests/cluster/build-helm4-postrender-fix`).
fn helm4_with_postrender_fix() -> PathBuf {
    let out = Command::new(repo_root().join("tests/cluster/build-helm4-postrender-fix"))
        .output()
        .expect("tests/cluster/build-helm4-postrender-fix");
    assert!(
        out.status.success(),
        "build-helm4-postrender-fix: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The objects of a YAML stream, sorted by kind and name.
fn objects_of(stream: &str) -> Vec<serde_json::Value> {
    use serde::Deserialize as _;
    let mut objects: Vec<serde_json::Value> = serde_yaml_ng::Deserializer::from_str(stream)
        .map(|d| serde_json::Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect();
    objects.sort_by_key(|o| format!("{}/{}", o["kind"], o["metadata"]["name"]));
    objects
}

/// One Helm 4 `postrenderer/v1` plugin folder (built from `plugins/examples/
/// helm4-label-postrenderer`, Extism PDK) post-renders for real Helm 4 and for a
/// HelmRelease, with the same objects as the result. Released Helm 4.3.2 cannot run any
/// Wasm post-renderer (its message writes the manifests as `{}`); the test shows that too,
/// and compares with Helm 4.3.2 built with the upstream fix.
pub async fn one_helm4_postrenderer_file_serves_helm4_and_a_helmrelease(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let plugin = repo_root().join("target/plugins/helm4/label-postrenderer");
    assert!(
        plugin.join("plugin.wasm").is_file(),
        "{} is missing: run `make helm4-plugins`",
        plugin.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let chart = repo_root().join("deploy/examples/charts/hello");
    let ns = cluster.create_namespace("hr-postrender-plugin").await;
    let args = [
        "template",
        "hello",
        chart.to_str().unwrap(),
        "-n",
        &ns,
        "--post-renderer",
        "label-postrenderer",
        "--post-renderer-args",
        "team=web",
        "--post-renderer-args",
        "tier=front",
    ];
    // Released Helm 4.3.2: the plugin is handed `{}` instead of the manifests.
    let released = helm4();
    let home = dir.path().join("helm-released");
    run_helm4(
        &released,
        &home,
        &["plugin", "install", plugin.to_str().unwrap()],
    )
    .unwrap();
    let refused = run_helm4(&released, &home, &args).unwrap_err();
    assert!(
        refused.contains("`manifests` must be the YAML stream as a string; the host sent {}"),
        "{refused}"
    );
    // Helm 4.3.2 with the fix runs it.
    let fixed = helm4_with_postrender_fix();
    let home = dir.path().join("helm-fixed");
    run_helm4(
        &fixed,
        &home,
        &["plugin", "install", plugin.to_str().unwrap()],
    )
    .unwrap();
    let helm_output = run_helm4(&fixed, &home, &args).unwrap();
    let helm_objects = objects_of(&helm_output);
    assert_eq!(helm_objects.len(), 3, "{helm_output}");
    assert!(
        helm_objects
            .iter()
            .all(|o| o["metadata"]["labels"]["team"] == "web")
    );

    // Capstan: the same folder, configured as a post-renderer a release names.
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let repo = crate::helmrelease::chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    api.create(
        &PostParams::default(),
        &helm_release(
            "hello",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "charts/hello"},
                "releaseName": "hello",
                "postRenderers": [{"plugin": {"name": "label-postrenderer", "args": ["team=web", "tier=front"]}}],
            }),
        ),
    )
    .await
    .unwrap();
    let extra = format!(
        "- {{name: label-postrenderer, world: postrenderer, path: {}}}\n",
        plugin.display()
    );
    let operator = Operator::start_with(&cluster, dir.path(), &extra, &[]);
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let manifest = cluster.run("helm", &["get", "manifest", "hello", "-n", &ns]);
    assert_eq!(
        objects_of(&manifest),
        helm_objects,
        "Capstan's record:\n{manifest}\nHelm:\n{helm_output}"
    );
    let labels = cluster.run(
        "kubectl",
        &[
            "get",
            "deployment",
            "hello-hello",
            "-n",
            &ns,
            "-o",
            "jsonpath={.metadata.labels.tier}",
        ],
    );
    assert_eq!(labels, "front");

    // A release naming a post-renderer nobody configured is refused by name.
    api.create(
        &PostParams::default(),
        &helm_release(
            "unknown",
            &ns,
            serde_json::json!({
                "chart": {"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"},
                "postRenderers": [{"plugin": {"name": "nope"}}],
            }),
        ),
    )
    .await
    .unwrap();
    let stalled = wait_for(
        &api,
        "unknown",
        &operator,
        "Stalled",
        Duration::from_secs(60),
        |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "PostRenderError"),
    )
    .await;
    assert_eq!(
        condition(&stalled, "Stalled").unwrap().message,
        "postRenderers[0].plugin: no postrenderer plugin \"nope\" is configured (configured: label-postrenderer)"
    );
}
