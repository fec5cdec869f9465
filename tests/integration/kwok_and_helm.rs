//! The control plane is real: kwok brings workload pods to Ready, and the real `helm` CLI
//! installs into it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::{ListParams, PostParams};
use kube::runtime::wait::await_condition;
use serde_json::json;

use crate::harness::Cluster;

pub async fn kwok_brings_deployment_pods_to_ready(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("kwok").await;
    let client = cluster.client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.invalid/web:1"}]}
            }
        }
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();

    let ready = |d: Option<&Deployment>| {
        d.and_then(|d| d.status.as_ref())
            .and_then(|s| s.ready_replicas)
            == Some(2)
    };
    tokio::time::timeout(
        Duration::from_secs(120),
        await_condition(deployments.clone(), "web", ready),
    )
    .await
    .expect("deployment web did not get 2 ready replicas within 120 s")
    .unwrap();

    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let listed = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 2);
    for pod in &listed.items {
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert_eq!(
            pod.spec.as_ref().unwrap().node_name.as_deref(),
            Some("kwok-node-0")
        );
        let ready = status
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        assert!(ready, "pod {:?} not Ready", pod.metadata.name);
    }
}

pub async fn real_helm_installs_and_lists_a_local_chart(cluster: Arc<Cluster>) {
    let namespace = cluster.namespace("helm");
    let chart = tempfile::tempdir().unwrap();
    std::fs::create_dir(chart.path().join("templates")).unwrap();
    std::fs::write(
        chart.path().join("Chart.yaml"),
        "apiVersion: v2\nname: tiny\nversion: 0.1.0\nappVersion: \"1.0\"\n",
    )
    .unwrap();
    std::fs::write(chart.path().join("values.yaml"), "greeting: hello\n").unwrap();
    std::fs::write(
        chart.path().join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
    )
    .unwrap();
    let chart_dir = chart.path().to_str().unwrap();

    cluster.run(
        "helm",
        &[
            "install",
            "tiny",
            chart_dir,
            "-n",
            &namespace,
            "--create-namespace",
            "--set",
            "greeting=hi",
            "--wait",
            "--timeout",
            "60s",
        ],
    );
    let listed: serde_json::Value =
        serde_json::from_str(&cluster.run("helm", &["list", "-n", &namespace, "-o", "json"]))
            .unwrap();
    assert_eq!(listed[0]["name"], "tiny", "{listed}");
    assert_eq!(listed[0]["status"], "deployed", "{listed}");
    assert_eq!(listed[0]["chart"], "tiny-0.1.0", "{listed}");

    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, &namespace);
    let settings = config_maps.get("tiny-settings").await.unwrap();
    assert_eq!(
        settings.data,
        Some(BTreeMap::from([("greeting".to_owned(), "hi".to_owned())]))
    );

    cluster.run("helm", &["uninstall", "tiny", "-n", &namespace, "--wait"]);
    assert!(
        config_maps
            .get_opt("tiny-settings")
            .await
            .unwrap()
            .is_none()
    );
}
