//! `capstan release` with `backend-helm3`: hooks, `--wait` and atomic installs against the
//! real control plane (kwok nodes: pods of Jobs complete, pods that fit no node stay
//! pending), checked with the real `helm` CLI.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use kube::Api;
use kube::api::ListParams;

use crate::harness::Cluster;
use crate::release_helm3::{capstan, capstan_ok, helm_json, write};

/// A pod template no kwok node accepts: its pods stay pending forever.
const UNSCHEDULABLE: &str = "      nodeSelector:\n        capstan.test/no-such-node: \"true\"\n";

fn chart(dir: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let chart = dir.join(name);
    write(
        &chart.join("Chart.yaml"),
        &format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
    );
    write(&chart.join("values.yaml"), "schedulable: true\nrun: 1\n");
    for (path, text) in files {
        write(&chart.join(path), text);
    }
    chart
}

fn deployment(name: &str, schedulable: bool) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n{}      containers:\n        - name: app\n          image: example.invalid/app:1\n",
        if schedulable { "" } else { UNSCHEDULABLE }
    )
}

/// A hook Job; an unschedulable one fails deterministically once its one-second active
/// deadline passes (the Job controller marks it Failed, DeadlineExceeded).
fn hook_job(name: &str, events: &str, weight: i32, policy: &str, schedulable: bool) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {events}\n    helm.sh/hook-weight: \"{weight}\"\n{}spec:\n  backoffLimit: 0\n{}  template:\n    spec:\n      restartPolicy: Never\n{}      containers:\n        - name: run\n          image: example.invalid/job:1\n",
        if policy.is_empty() {
            String::new()
        } else {
            format!("    helm.sh/hook-delete-policy: {policy}\n")
        },
        if schedulable {
            ""
        } else {
            "  activeDeadlineSeconds: 1\n"
        },
        if schedulable { "" } else { UNSCHEDULABLE },
    )
}

fn hook_config_map(name: &str, events: &str, weight: i32) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {events}\n    helm.sh/hook-weight: \"{weight}\"\ndata:\n  revision: {{{{ .Release.Revision | quote }}}}\n"
    )
}

async fn release_records(cluster: &Cluster, namespace: &str) -> Vec<Secret> {
    let secrets: Api<Secret> = Api::namespaced(cluster.client().await, namespace);
    secrets
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap()
        .items
}

pub async fn capstan_release_waits_and_runs_hooks_of_every_event(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-hooks").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = chart(
        dir.path(),
        "hooked",
        &[
            ("templates/deployment.yaml", &deployment("web", true)),
            (
                "templates/migrate.yaml",
                &hook_job(
                    "migrate",
                    "pre-install,pre-upgrade",
                    -5,
                    "hook-succeeded",
                    true,
                ),
            ),
            (
                "templates/seed.yaml",
                &hook_job("seed", "post-install,post-upgrade", 0, "", true),
            ),
            (
                "templates/marker.yaml",
                &hook_config_map("marker", "pre-install,pre-upgrade", 3),
            ),
            (
                "templates/goodbye.yaml",
                &hook_config_map("goodbye", "pre-delete,post-delete", 0),
            ),
        ],
    );
    let base = [
        "--name",
        "hooked",
        "--namespace",
        namespace.as_str(),
        "--chart",
        chart.to_str().unwrap(),
        "--wait",
        "--timeout",
        "120",
    ];
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "sync"][..], &base].concat(),
    );
    assert!(out.contains("installed: revision 1 deployed"), "{out}");

    let client = cluster.client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let web = deployments.get("web").await.unwrap();
    let status = web.status.unwrap_or_default();
    assert_eq!(
        status.ready_replicas,
        Some(1),
        "--wait returned before web was ready"
    );
    let jobs: Api<Job> = Api::namespaced(client.clone(), &namespace);
    assert!(
        jobs.get_opt("migrate").await.unwrap().is_none(),
        "hook-succeeded did not delete the migrate Job"
    );
    let seed = jobs.get("seed").await.unwrap();
    assert!(
        seed.status.unwrap_or_default().succeeded.unwrap_or(0) >= 1,
        "the post-install Job was not awaited"
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let marker = config_maps.get("marker").await.unwrap();
    assert_eq!(marker.data.unwrap()["revision"], "1");
    assert!(config_maps.get_opt("goodbye").await.unwrap().is_none());

    // The record carries the hooks as Helm's does.
    let hooks = cluster.run("helm", &["get", "hooks", "hooked", "-n", &namespace]);
    for name in ["migrate", "seed", "marker", "goodbye"] {
        assert!(hooks.contains(&format!("name: {name}")), "{hooks}");
    }
    let status = helm_json(
        &cluster,
        &["status", "hooked", "-n", &namespace, "-o", "json"],
    );
    let recorded = status["hooks"].as_array().unwrap();
    for hook in recorded {
        let name = hook["name"].as_str().unwrap();
        let ran = hook["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().ends_with("install"));
        let phase = hook["last_run"]["phase"].as_str().unwrap_or("");
        if ran {
            assert_eq!(phase, "Succeeded", "{name}: {hook}");
        } else {
            assert_eq!(phase, "", "{name} ran on install: {hook}");
        }
        if name == "seed" {
            assert_eq!(hook["delete_policies"][0], "before-hook-creation", "{hook}");
        }
    }

    // Upgrade: the default policy deletes the old seed Job before creating the new one.
    let seed_uid = jobs.get("seed").await.unwrap().metadata.uid;
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "sync"][..], &base].concat(),
    );
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let new_seed = jobs.get("seed").await.unwrap();
    assert_ne!(new_seed.metadata.uid, seed_uid, "seed was not recreated");
    let marker = config_maps.get("marker").await.unwrap();
    assert_eq!(marker.data.unwrap()["revision"], "2");

    // Uninstall runs the delete hooks; hooks are not release resources, so they stay.
    capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            "hooked",
            "--namespace",
            &namespace,
        ],
    );
    let goodbye = config_maps.get("goodbye").await.unwrap();
    assert_eq!(goodbye.data.unwrap()["revision"], "2");
    assert!(deployments.get_opt("web").await.unwrap().is_none());
    assert!(release_records(&cluster, &namespace).await.is_empty());
}

pub async fn capstan_release_atomic_install_that_never_gets_ready_leaves_nothing(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel3-atomic").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = chart(
        dir.path(),
        "stuck",
        &[
            ("templates/deployment.yaml", &deployment("stuck-web", false)),
            (
                "templates/service.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: stuck-web\nspec:\n  ports:\n    - port: 80\n  selector:\n    app: stuck-web\n",
            ),
            (
                "templates/config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stuck-config\ndata: {}\n",
            ),
        ],
    );
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            "stuck",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--wait",
            "--atomic",
            "--timeout",
            "3",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the install succeeded");
    assert!(
        stderr.contains(&format!("Deployment {namespace}/stuck-web is not ready")),
        "{stderr}"
    );
    assert!(stderr.contains("timed out"), "{stderr}");
    assert_nothing_left(&cluster, &namespace, &["stuck-web"], &["stuck-config"]).await;
}

pub async fn capstan_release_atomic_install_with_a_failing_hook_leaves_nothing(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel3-hookfail").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = chart(
        dir.path(),
        "doomed",
        &[
            ("templates/deployment.yaml", &deployment("doomed-web", true)),
            (
                "templates/config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: doomed-config\ndata: {}\n",
            ),
            (
                "templates/prepare.yaml",
                &hook_job("prepare", "pre-install", 0, "", false),
            ),
        ],
    );
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            "doomed",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--atomic",
            "--timeout",
            "120",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the install succeeded");
    assert!(
        stderr.contains(&format!("pre-install hook Job {namespace}/prepare")),
        "{stderr}"
    );
    assert!(stderr.contains("job failed"), "{stderr}");
    assert_nothing_left(&cluster, &namespace, &["doomed-web"], &["doomed-config"]).await;
    let jobs: Api<Job> = Api::namespaced(cluster.client().await, &namespace);
    assert!(
        jobs.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

async fn assert_nothing_left(
    cluster: &Cluster,
    namespace: &str,
    workloads: &[&str],
    config_maps: &[&str],
) {
    let client = cluster.client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let maps: Api<ConfigMap> = Api::namespaced(client, namespace);
    for name in workloads {
        assert!(
            deployments.get_opt(name).await.unwrap().is_none(),
            "{name} left"
        );
        assert!(
            services.get_opt(name).await.unwrap().is_none(),
            "{name} left"
        );
    }
    for name in config_maps {
        assert!(maps.get_opt(name).await.unwrap().is_none(), "{name} left");
    }
    assert!(
        release_records(cluster, namespace).await.is_empty(),
        "a release record was left behind"
    );
}
