//! Backends built against earlier contracts, against the real control plane:
//!
//! - a `capstan:plugin@0.1.1` backend (the `backend-helm3` of the last 0.1.1 commit, kept as
//!   `tests/fixtures/backend-helm3-0.1.1.wasm.gz`) served through the host's adapter and
//!   the `compat-helm` component: its records are Helm's, and a release moves between it
//!   and the current backend by configuration alone;
//! - a `capstan:plugin@0.2.0` backend built before the `post-render` and `release-context`
//!   imports were added within 0.2 (`tests/fixtures/backend-helm3-0.2.0-e1a6294.wasm.gz`):
//!   the operator still installs plain releases with it, and refuses by name, without
//!   touching the release, what it cannot do (post-renderers, a storage namespace, tests,
//!   drift detection).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kube::Api;
use kube::api::{DeleteParams, PostParams};

use crate::harness::{Cluster, repo_root};
use crate::helmrelease::{
    Operator, chart_repository, condition, helm_release, helm_revisions, install_crd, patch_spec,
    ready, wait_for, wait_gone,
};
use crate::release_helm3::{capstan_command, helm_json, shop_chart, succeeded, write};
use capstan::api::HelmRelease;

/// The gzipped component `tests/fixtures/<fixture>`, unpacked into `dir/old/<name>`.
fn unpacked_fixture(dir: &Path, fixture: &str, name: &str) -> PathBuf {
    let packed = repo_root().join("tests/fixtures").join(fixture);
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&packed).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let path = dir.join("old").join(name);
    write(&path, "");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The 0.1.1 backend fixture, unpacked into `dir`.
fn previous_backend(dir: &Path) -> PathBuf {
    unpacked_fixture(dir, "backend-helm3-0.1.1.wasm.gz", "backend-helm3.wasm")
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

/// The 0.2.0 backend built before `post-render` and `release-context` existed: plain
/// releases install with it; every option needing those imports is refused by name, stalls
/// the release and leaves it as it was.
pub async fn a_backend_built_before_an_import_existed_is_refused_only_what_needs_it(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let early = unpacked_fixture(
        dir.path(),
        "backend-helm3-0.2.0-e1a6294.wasm.gz",
        "backend-helm3-early.wasm",
    );
    let ns = cluster.create_namespace("hr-early-backend").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start_with(
        &cluster,
        dir.path(),
        &format!(
            "- {{name: early, world: backend, path: {}, limits: {{memoryMib: 512, timeoutMs: 120000}}}}\n",
            early.display()
        ),
        &[],
    );
    let stalled_with = |reason: &'static str| {
        move |hr: &HelmRelease| {
            condition(hr, "Stalled").is_some_and(|c| c.status == "True" && c.reason == reason)
                && hr.status.as_ref().and_then(|s| s.observed_generation) == hr.metadata.generation
        }
    };
    let message_of = |hr: &HelmRelease| condition(hr, "Stalled").unwrap().message.clone();

    // Post-renderers: refused before anything is rendered or applied.
    api.create(
        &PostParams::default(),
        &helm_release(
            "hello",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "charts/hello"},
                "releaseName": "hello",
                "backend": "early",
                "commonMetadata": {"labels": {"team": "platform"}},
            }),
        ),
    )
    .await
    .unwrap();
    let hr = wait_for(
        &api,
        "hello",
        &operator,
        "PostRenderError",
        Duration::from_secs(120),
        stalled_with("PostRenderError"),
    )
    .await;
    assert_eq!(
        message_of(&hr),
        "backend `early` does not import capstan:plugin/post-render (built before post-rendering was added to the 0.2 contract), so it cannot apply postRenderers or commonMetadata; rebuild it with the current SDK or pick another backend"
    );
    assert_eq!(
        helm_revisions(&cluster, "hello", &ns),
        0,
        "nothing installed"
    );

    // Without them it installs, and real helm reads the record.
    patch_spec(&api, "hello", serde_json::json!({"commonMetadata": null})).await;
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let listed = helm_json(&cluster, &["list", "-n", &ns, "-o", "json"]);
    assert_eq!(listed[0]["name"], "hello", "{listed}");
    assert_eq!(listed[0]["status"], "deployed", "{listed}");

    // Options carried by release-context: each refused by name, the release untouched.
    let storage = cluster.create_namespace("hr-early-records").await;
    for (option, named) in [
        (
            serde_json::json!({"storageNamespace": storage}),
            format!("storageNamespace {storage} (the records would stay in {ns})"),
        ),
        (
            serde_json::json!({"test": {"enable": true}}),
            "test.enable (the tests would not run)".to_owned(),
        ),
        (
            serde_json::json!({"driftDetection": {"mode": "warn"}}),
            "driftDetection (the release would not be compared with the cluster)".to_owned(),
        ),
    ] {
        let revisions = helm_revisions(&cluster, "hello", &ns);
        patch_spec(&api, "hello", option.clone()).await;
        let hr = wait_for(
            &api,
            "hello",
            &operator,
            "BackendUnsupported",
            Duration::from_secs(120),
            stalled_with("BackendUnsupported"),
        )
        .await;
        assert_eq!(
            message_of(&hr),
            format!(
                "{named}: backend `early` does not import capstan:plugin/release-context (built before it was added to the 0.2 contract); rebuild it with the current SDK or pick another backend"
            ),
            "{option}"
        );
        assert_eq!(
            helm_revisions(&cluster, "hello", &ns),
            revisions,
            "{option}: refused without a new revision"
        );
        // Take the option back out before the next one.
        let cleared: serde_json::Map<String, serde_json::Value> = option
            .as_object()
            .unwrap()
            .keys()
            .map(|key| (key.clone(), serde_json::Value::Null))
            .collect();
        patch_spec(&api, "hello", serde_json::Value::Object(cleared)).await;
        wait_for(
            &api,
            "hello",
            &operator,
            "Ready again",
            Duration::from_secs(120),
            ready,
        )
        .await;
    }

    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}
