//! End-to-end: the open plugin platform. A source kind neither the host nor the CRD has
//! heard of (`https-url`, served by a Python component built with componentize-py) is
//! added through configuration alone and installs a release that real `helm` lists; a
//! spec that breaks the kind's schema is refused with a condition naming the JSON path,
//! and the plugin is never called for it (counted on the operator's /metrics).

use std::sync::Arc;
use std::time::Duration;

use capstan::api::HelmRelease;
use kube::Api;
use kube::api::PostParams;

use crate::harness::{Cluster, repo_root};
use crate::helmrelease::{
    Operator, condition, helm_release, install_crd, publish, ready, wait_for,
};

/// Calls of `function` on plugin `plugin` counted by the operator (histogram count, all
/// outcomes).
fn plugin_calls(operator: &Operator, plugin: &str, function: &str) -> f64 {
    let Some((_, body)) = crate::operator::http_get(operator.port(), "/metrics") else {
        return 0.0;
    };
    body.lines()
        .filter(|line| line.starts_with("capstan_plugin_call_duration_seconds_count{"))
        .filter(|line| {
            line.contains(&format!("plugin=\"{plugin}\""))
                && line.contains(&format!("function=\"{function}\""))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

pub(crate) fn sha256_of(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

pub async fn a_source_kind_added_by_configuration_alone_is_ready_and_listed(cluster: Arc<Cluster>) {
    let component = repo_root().join("target/plugins/python-url-source.wasm");
    assert!(
        component.is_file(),
        "{} is missing: run `make python-plugins`",
        component.display()
    );
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    publish(&cluster, dir.path(), &served, "0.3.0");
    let archive = served.join("hello-0.3.0.tgz");
    let digest = sha256_of(&archive);
    let server =
        crate::repo_server::RepoServer::start(&served, dir.path().join("access.log"), None);
    let ns = cluster.create_namespace("hr-kind").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let good = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"source": {"kind": "https-url", "spec": {
                "url": server.url("hello-0.3.0.tgz"),
                "sha256": digest,
            }}},
            "values": {"message": "from a Python plugin"},
        }),
    );
    let bad = helm_release(
        "broken",
        &ns,
        serde_json::json!({
            "chart": {"source": {"kind": "https-url", "spec": {
                "url": server.url("hello-0.3.0.tgz"),
                "sha256": "not-a-digest",
            }}},
        }),
    );
    let unknown = helm_release(
        "unknown",
        &ns,
        serde_json::json!({"chart": {"source": {"kind": "s3", "spec": {"bucket": "b"}}}}),
    );
    // First only the specs that must never reach the plugin.
    for hr in [&bad, &unknown] {
        api.create(&PostParams::default(), hr).await.unwrap();
    }
    let python = format!(
        "- {{name: url-py, world: source, path: {}, limits: {{memoryMib: 256, timeoutMs: 60000}}}}\n",
        component.display()
    );
    let operator = Operator::start_with(&cluster, dir.path(), &python, &[]);
    let long = Duration::from_secs(180);
    let refused = wait_for(&api, "broken", &operator, "InvalidSourceSpec", long, |hr| {
        condition(hr, "Stalled").is_some_and(|c| c.reason == "InvalidSourceSpec")
    })
    .await;
    let message = condition(&refused, "Ready").unwrap().message.clone();
    assert!(message.contains("at /sha256:"), "{message}");
    assert!(message.contains("/properties/sha256/pattern"), "{message}");
    let unserved = wait_for(
        &api,
        "unknown",
        &operator,
        "InvalidSourceSpec",
        long,
        |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "InvalidSourceSpec"),
    )
    .await;
    let message = condition(&unserved, "Ready").unwrap().message.clone();
    assert!(
        message.contains("no source plugin serves kind `s3`") && message.contains("https-url"),
        "{message}"
    );
    // A few more source passes (every 2 s) with only refused specs: still no call.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(plugin_calls(&operator, "url-py", "describe"), 1.0);
    assert_eq!(plugin_calls(&operator, "url-py", "resolve"), 0.0);
    assert_eq!(plugin_calls(&operator, "url-py", "fetch"), 0.0);

    // The valid release of the new kind installs, and real helm lists it.
    api.create(&PostParams::default(), &good).await.unwrap();
    let installed = wait_for(&api, "hello", &operator, "Ready", long, ready).await;
    let status = installed.status.unwrap();
    assert_eq!(status.revision, Some(1));
    assert_eq!(
        status.applied_source_revision.as_deref(),
        Some(format!("sha256:{digest}").as_str())
    );
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains("\"chart\":\"hello-0.3.0\""), "{list}");
    assert!(list.contains(&format!("\"name\":\"{ns}-hello\"")), "{list}");
    assert_eq!(
        plugin_calls(&operator, "url-py", "fetch"),
        1.0,
        "one fetch for one content"
    );
}
