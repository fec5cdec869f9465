//! Tenancy against the real control plane: a HelmRelease may only read Secrets and
//! ConfigMaps of its own namespace unless the operator's configuration opts in
//! (`allowCrossNamespaceRefs: true`).

use std::sync::Arc;
use std::time::Duration;

use capstan::api::HelmRelease;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::PostParams;

use crate::harness::Cluster;
use crate::helmrelease::{
    Operator, chart_repository, condition, helm_release, install_crd, ready, wait_for,
};

/// `valuesFrom` naming a Secret of another namespace: the release is stalled with the
/// field and the object named, nothing is installed and the Secret is not used; an
/// operator configured with `allowCrossNamespaceRefs: true` installs it with those values.
pub async fn values_from_another_namespace_are_refused_unless_allowed(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let tenant = cluster.create_namespace("tenant-a").await;
    let other = cluster.create_namespace("tenant-b").await;
    let client = cluster.client().await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &other);
    let shared: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "shared-values"},
        "stringData": {"values.yaml": "replicaCount: 3\n"},
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &shared)
        .await
        .unwrap();
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &tenant);
    let hr = helm_release(
        "web",
        &tenant,
        serde_json::json!({
            "chart": {"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"},
            "valuesFrom": [{"secretKeyRef": {"name": "shared-values", "namespace": other}}],
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();

    let mut operator = Operator::start(&cluster, dir.path(), &[]);
    let stalled = wait_for(
        &api,
        "web",
        &operator,
        "a refusal",
        Duration::from_secs(60),
        |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "CrossNamespaceRef"),
    )
    .await;
    let message = &condition(&stalled, "Ready").unwrap().message;
    assert!(
        message.starts_with(&format!(
            "spec.valuesFrom[0].secretKeyRef: Secret {other}/shared-values is in another namespace than the HelmRelease ({tenant})"
        )),
        "{message}"
    );
    assert_eq!(condition(&stalled, "Ready").unwrap().status, "False");
    let listed = cluster.run("helm", &["list", "-n", &tenant, "-q"]);
    assert!(listed.trim().is_empty(), "nothing installed: {listed}");
    operator.stop();

    // The same release with an operator that allows cross-namespace references.
    let config = format!(
        "{}allowCrossNamespaceRefs: true\n",
        Operator::config_with("")
    );
    let operator = Operator::start_with_config(&cluster, dir.path(), &config, &[]);
    wait_for(
        &api,
        "web",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let values = cluster.run(
        "helm",
        &[
            "get",
            "values",
            &format!("{tenant}-web"),
            "-n",
            &tenant,
            "-o",
            "json",
        ],
    );
    let values: serde_json::Value = serde_json::from_str(&values).unwrap();
    assert_eq!(values["replicaCount"], 3, "{values}");
}
