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
use crate::release_helm3::{capstan, capstan_ok, helm_json, succeeded, write};

/// A pod template no kwok node accepts: its pods stay pending forever.
const UNSCHEDULABLE: &str = "      nodeSelector:\n        capstan.test/no-such-node: \"true\"\n";

pub(crate) fn chart(dir: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
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

pub(crate) fn deployment(name: &str, schedulable: bool) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n{}      containers:\n        - name: app\n          image: example.invalid/app:1\n",
        if schedulable { "" } else { UNSCHEDULABLE }
    )
}

/// A hook Job; an unschedulable one fails deterministically once its one-second active
/// deadline passes (the Job controller marks it Failed, DeadlineExceeded).
pub(crate) fn hook_job(
    name: &str,
    events: &str,
    weight: i32,
    policy: &str,
    schedulable: bool,
) -> String {
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

/// A ConfigMap with no data, named `name`.
pub(crate) fn empty_config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata: {{}}\n")
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
            (
                "templates/rolled.yaml",
                &hook_config_map("rolled", "pre-rollback,post-rollback", 0),
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
    for name in ["migrate", "seed", "marker", "goodbye", "rolled"] {
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

    // Upgrade (new values: the same input would be a no-op): the default policy deletes
    // the old seed Job before creating the new one.
    let seed_uid = jobs.get("seed").await.unwrap().metadata.uid;
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "sync"][..], &base, &["--set", "run=2"]].concat(),
    );
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let new_seed = jobs.get("seed").await.unwrap();
    assert_ne!(new_seed.metadata.uid, seed_uid, "seed was not recreated");
    let marker = config_maps.get("marker").await.unwrap();
    assert_eq!(marker.data.unwrap()["revision"], "2");

    // Rollback runs the rollback hooks of the target revision (rendered for revision 1).
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "rollback",
            "--name",
            "hooked",
            "--namespace",
            &namespace,
            "--wait",
        ],
    );
    assert!(out.contains("revision 3 deployed (Rollback to 1)"), "{out}");
    let rolled = config_maps.get("rolled").await.unwrap();
    assert_eq!(rolled.data.unwrap()["revision"], "1");
    let marker = config_maps.get("marker").await.unwrap();
    assert_eq!(
        marker.data.unwrap()["revision"],
        "2",
        "upgrade hooks ran on rollback"
    );

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
            "--wait",
        ],
    );
    let goodbye = config_maps.get("goodbye").await.unwrap();
    assert_eq!(goodbye.data.unwrap()["revision"], "1");
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
            ("templates/config.yaml", &empty_config_map("stuck-config")),
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
            ("templates/config.yaml", &empty_config_map("doomed-config")),
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

async fn record_versions(cluster: &Cluster, namespace: &str) -> Vec<(String, String)> {
    let mut versions: Vec<(String, String)> = release_records(cluster, namespace)
        .await
        .into_iter()
        .map(|s| {
            (
                s.metadata.name.unwrap_or_default(),
                s.metadata.resource_version.unwrap_or_default(),
            )
        })
        .collect();
    versions.sort();
    versions
}

fn history(cluster: &Cluster, namespace: &str) -> Vec<(u64, String, String)> {
    let listed = helm_json(cluster, &["history", "app", "-n", namespace, "-o", "json"]);
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["revision"].as_u64().unwrap(),
                r["status"].as_str().unwrap().to_owned(),
                r["description"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub async fn capstan_release_plans_without_writing_and_rolls_back(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-plan").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = chart(
        dir.path(),
        "app",
        &[
            (
                "templates/config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  run: {{ .Values.run | quote }}\n",
            ),
            (
                "templates/deployment.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: app-web}\n  template:\n    metadata:\n      labels: {app: app-web}\n    spec:\n{{- if not .Values.schedulable }}\n      nodeSelector:\n        capstan.test/no-such-node: \"true\"\n{{- end }}\n      containers:\n        - name: app\n          image: example.invalid/app:1\n",
            ),
        ],
    );
    let values = |name: &str, text: &str| {
        let path = dir.path().join(name);
        write(&path, text);
        path.to_str().unwrap().to_owned()
    };
    let (first, second, broken) = (
        values("first.yaml", "run: 1\n"),
        values("second.yaml", "run: 2\n"),
        values("broken.yaml", "run: 3\nschedulable: false\n"),
    );
    let args = |verb: &str, values: &str| -> Vec<String> {
        [
            "release",
            verb,
            "--name",
            "app",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "-f",
            values,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        capstan_ok(&cluster, dir.path(), &args)
    };

    let out = run(args("plan", &first));
    assert!(
        out.contains(": changes:") && out.contains("not installed"),
        "{out}"
    );
    let out = run(args("sync", &first));
    assert!(out.contains("installed: revision 1 deployed"), "{out}");

    // Plan writes nothing, whatever it answers.
    let before = record_versions(&cluster, &namespace).await;
    let out = run(args("plan", &first));
    assert!(out.contains("no changes"), "{out}");
    let out = run(args("plan", &second));
    assert!(
        out.contains(": changes:") && out.contains("differs from revision 1"),
        "{out}"
    );
    assert_eq!(record_versions(&cluster, &namespace).await, before);

    // A sync that would change nothing writes nothing.
    let out = run(args("sync", &first));
    assert!(out.contains("unchanged: revision 1 deployed"), "{out}");
    assert_eq!(record_versions(&cluster, &namespace).await, before);

    let out = run(args("sync", &second));
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, &namespace);
    let run_value = |map: ConfigMap| map.data.unwrap()["run"].clone();
    assert_eq!(run_value(config_maps.get("app-config").await.unwrap()), "2");

    // Rollback to revision 1 records revision 3, as Helm does.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "rollback",
            "--name",
            "app",
            "--namespace",
            &namespace,
            "--revision",
            "1",
        ],
    );
    assert!(out.contains("revision 3 deployed"), "{out}");
    assert_eq!(run_value(config_maps.get("app-config").await.unwrap()), "1");
    let revisions = history(&cluster, &namespace);
    assert_eq!(revisions[0].1, "superseded", "{revisions:?}");
    assert_eq!(revisions[1].1, "superseded", "{revisions:?}");
    assert_eq!(
        revisions[2],
        (3, "deployed".to_owned(), "Rollback to 1".to_owned())
    );
    // Revision 3 has the input of revision 1: nothing to do for it.
    let out = run(args("plan", &first));
    assert!(out.contains("no changes"), "{out}");

    // A failed upgrade that asks for it is rolled back.
    let mut failing = args("sync", &broken);
    failing.extend(["--rollback-on-failure", "--timeout", "3"].map(String::from));
    let failing: Vec<&str> = failing.iter().map(String::as_str).collect();
    let out = capstan(&cluster, dir.path(), &failing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the broken upgrade succeeded");
    assert!(
        stderr.contains(&format!("Deployment {namespace}/app-web is not ready")),
        "{stderr}"
    );
    assert!(stderr.contains("rolled back"), "{stderr}");
    let revisions = history(&cluster, &namespace);
    assert_eq!(revisions[3].0, 4, "{revisions:?}");
    assert_eq!(revisions[3].1, "failed", "{revisions:?}");
    assert_eq!(
        revisions[4],
        (5, "deployed".to_owned(), "Rollback to 3".to_owned())
    );
    assert_eq!(run_value(config_maps.get("app-config").await.unwrap()), "1");
}

pub(crate) fn crd(group: &str, short_names: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.{group}\nspec:\n  group: {group}\n  scope: Namespaced\n  names:\n    plural: widgets\n    singular: widget\n    kind: Widget\n{short_names}  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          x-kubernetes-preserve-unknown-fields: true\n"
    )
}

pub async fn capstan_release_creates_crds_by_policy(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-crds").await;
    let group = format!("{namespace}.capstan.test");
    let dir = tempfile::tempdir().unwrap();
    let chart = chart(
        dir.path(),
        "widgets",
        &[
            ("crds/widget.yaml", &crd(&group, "")),
            (
                "templates/widget.yaml",
                &format!(
                    "apiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: first\nspec:\n  run: {{{{ .Values.run }}}}\n"
                ),
            ),
        ],
    );
    let sync = |run: &str, extra: &[&str]| {
        let mut args = vec![
            "release",
            "sync",
            "--name",
            "widgets",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--allow-cluster-kind",
            "CustomResourceDefinition.apiextensions.k8s.io",
            "--set",
            run,
        ];
        args.extend_from_slice(extra);
        capstan_ok(&cluster, dir.path(), &args)
    };
    let get_crd = || -> serde_json::Value {
        let text = cluster.run(
            "kubectl",
            &["get", "crd", &format!("widgets.{group}"), "-o", "json"],
        );
        serde_json::from_str(&text).unwrap()
    };

    // Install creates the CRD (and waits until it is established) before the Widget.
    let out = sync("run=1", &[]);
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    let installed = get_crd();
    let established = installed["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established, "{installed}");
    let widget = cluster.run(
        "kubectl",
        &[
            "get",
            &format!("widgets.{group}"),
            "first",
            "-n",
            &namespace,
            "-o",
            "jsonpath={.spec.run}",
        ],
    );
    assert_eq!(widget, "1");
    let manifest = cluster.run("helm", &["get", "manifest", "widgets", "-n", &namespace]);
    assert!(!manifest.contains("CustomResourceDefinition"), "{manifest}");

    // Upgrades skip CRDs by default...
    write(
        &chart.join("crds/widget.yaml"),
        &crd(&group, "    shortNames: [wdg]\n"),
    );
    let out = sync("run=2", &[]);
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    assert!(get_crd()["spec"]["names"]["shortNames"].is_null());
    // ...and replace them when asked.
    let out = sync("run=3", &["--upgrade-crds", "create-replace"]);
    assert!(out.contains("upgraded: revision 3 deployed"), "{out}");
    assert_eq!(get_crd()["spec"]["names"]["shortNames"][0], "wdg");

    // CRDs outlive the release (Helm never deletes them); this test removes its own.
    capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            "widgets",
            "--namespace",
            &namespace,
        ],
    );
    assert!(get_crd()["metadata"]["name"].is_string());
    cluster.run("kubectl", &["delete", "crd", &format!("widgets.{group}")]);
}

pub async fn capstan_release_force_replaces_what_cannot_change_in_place(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-force").await;
    let dir = tempfile::tempdir().unwrap();
    // A Job's pod template is immutable: a new image cannot be applied in place.
    let chart = chart(
        dir.path(),
        "batch",
        &[(
            "templates/job.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: run\n          image: example.invalid/job:{{ .Values.run }}\n",
        )],
    );
    let sync = |run: &str, extra: &[&str]| {
        let mut args = vec![
            "release",
            "sync",
            "--name",
            "batch",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--set",
            run,
        ];
        args.extend_from_slice(extra);
        capstan(&cluster, dir.path(), &args)
    };
    let out = sync("run=1", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jobs: Api<Job> = Api::namespaced(cluster.client().await, &namespace);
    let first = jobs.get("once").await.unwrap().metadata.uid;

    let out = sync("run=2", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an immutable field was changed");
    assert!(
        stderr.contains(&format!("Job {namespace}/once")),
        "{stderr}"
    );
    assert!(stderr.contains("immutable"), "{stderr}");

    let out = sync("run=3", &["--force"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("upgraded: revision 3 deployed"), "{stdout}");
    let replaced = jobs.get("once").await.unwrap();
    assert_ne!(replaced.metadata.uid, first, "the Job was not replaced");
    let image = replaced.spec.unwrap().template.spec.unwrap().containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some("example.invalid/job:3"));
}

/// `capstan release sync` of `chart` as release `name` in `namespace`, with `flags`.
pub(crate) fn release_sync(
    cluster: &Cluster,
    dir: &Path,
    name: &str,
    namespace: &str,
    chart: &Path,
    flags: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "release",
        "sync",
        "--name",
        name,
        "--namespace",
        namespace,
        "--chart",
        chart.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    capstan(cluster, dir, &args)
}

/// `capstan release sync --wait --atomic` of `chart` as release `locked` in `namespace`,
/// waiting at most `timeout` seconds.
fn locked_release_sync(
    cluster: &Cluster,
    dir: &Path,
    namespace: &str,
    chart: &Path,
    timeout: &str,
) -> std::process::Output {
    let flags = ["--wait", "--atomic", "--timeout", timeout];
    release_sync(cluster, dir, "locked", namespace, chart, &flags)
}

pub async fn capstan_release_operations_on_one_release_exclude_each_other(cluster: Arc<Cluster>) {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::{SignedDuration, Timestamp};

    let namespace = cluster.create_namespace("rel3-lock").await;
    let dir = tempfile::tempdir().unwrap();
    let slow = chart(
        dir.path(),
        "slow",
        &[("templates/deployment.yaml", &deployment("slow-web", false))],
    );
    let quick = chart(
        dir.path(),
        "quick",
        &[("templates/config.yaml", &empty_config_map("quick-config"))],
    );
    let client = cluster.client().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);

    // A first operation waits (its Deployment never gets ready) while holding the release;
    // a second process asking for the same release is refused without writing anything.
    let first = {
        let (cluster, dir, namespace, slow) = (
            Arc::clone(&cluster),
            dir.path().to_owned(),
            namespace.clone(),
            slow.clone(),
        );
        std::thread::spawn(move || locked_release_sync(&cluster, &dir, &namespace, &slow, "20"))
    };
    let started = std::time::Instant::now();
    while leases
        .get_opt("capstan.release.locked")
        .await
        .unwrap()
        .is_none()
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the first sync never took the release lock"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let second = locked_release_sync(&cluster, dir.path(), &namespace, &quick, "5");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        !second.status.success(),
        "the second sync ran alongside the first"
    );
    assert!(
        stderr.contains(&format!("release {namespace}/locked is locked by"))
            && stderr.contains("sync #"),
        "{stderr}"
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    assert!(
        config_maps.get_opt("quick-config").await.unwrap().is_none(),
        "the refused sync applied its chart"
    );
    let first = first.join().unwrap();
    assert!(!first.status.success(), "the never-ready install succeeded");
    // Done (failed, here): the lock is gone and the next operation proceeds.
    assert!(
        leases
            .get_opt("capstan.release.locked")
            .await
            .unwrap()
            .is_none(),
        "the first sync left its lock behind"
    );
    succeeded(
        &["release", "sync"],
        locked_release_sync(&cluster, dir.path(), &namespace, &quick, "30"),
    );
    assert!(config_maps.get_opt("quick-config").await.unwrap().is_some());

    // Whether another holder is alive is judged by watching its Lease, never by the clock:
    // a holder on a host whose clock runs two minutes behind keeps the lock while it renews;
    // a dead holder on a host whose clock runs an hour ahead loses it once its Lease stood
    // still for the lease duration.
    let lease = |renewed: Timestamp| Lease {
        metadata: kube::api::ObjectMeta {
            name: Some("capstan.release.locked".into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("skewed-host/4242 sync #0".into()),
            lease_duration_seconds: Some(30),
            acquire_time: Some(MicroTime(renewed)),
            renew_time: Some(MicroTime(renewed)),
            ..LeaseSpec::default()
        }),
    };
    let behind = || Timestamp::now() - SignedDuration::from_secs(120);
    leases
        .create(&Default::default(), &lease(behind()))
        .await
        .unwrap();
    let renewing = {
        let leases = leases.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                let mut current = leases.get("capstan.release.locked").await.unwrap();
                current.spec = lease(behind()).spec;
                leases
                    .replace("capstan.release.locked", &Default::default(), &current)
                    .await
                    .unwrap();
            }
        })
    };
    let refused = {
        let (cluster, dir, namespace, quick) = (
            Arc::clone(&cluster),
            dir.path().to_owned(),
            namespace.clone(),
            quick.clone(),
        );
        tokio::task::spawn_blocking(move || {
            locked_release_sync(&cluster, &dir, &namespace, &quick, "30")
        })
        .await
        .unwrap()
    };
    renewing.abort();
    let _ = renewing.await;
    assert!(!refused.status.success(), "a renewed lock was taken over");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("locked by skewed-host/4242 sync #0"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    // The holder dies after a last renewal stamped an hour ahead (retried should a renewal
    // sent just before the abort land in between).
    for attempt in 0.. {
        let mut dead = leases.get("capstan.release.locked").await.unwrap();
        dead.spec = lease(Timestamp::now() + SignedDuration::from_secs(3600)).spec;
        match leases
            .replace("capstan.release.locked", &Default::default(), &dead)
            .await
        {
            Ok(_) => break,
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < 5 => {}
            Err(e) => panic!("cannot write the dead holder's Lease: {e}"),
        }
    }
    let watching = std::time::Instant::now();
    let out = succeeded(
        &["release", "sync"],
        locked_release_sync(&cluster, dir.path(), &namespace, &quick, "30"),
    );
    assert!(out.contains("unchanged: revision 1"), "{out}");
    assert!(
        watching.elapsed() >= std::time::Duration::from_secs(30),
        "the dead holder's lock was taken over before it stood still for its duration ({:?})",
        watching.elapsed()
    );
    assert!(
        leases
            .get_opt("capstan.release.locked")
            .await
            .unwrap()
            .is_none(),
        "the taken-over lock was not removed"
    );
    let history = helm_json(
        &cluster,
        &["history", "locked", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(history[0]["status"], "deployed", "{history}");
}

pub async fn capstan_release_waits_for_a_hook_pod_to_complete_not_just_to_be_ready(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel3-podhook").await;
    let dir = tempfile::tempdir().unwrap();
    // kwok makes this Pod Running and Ready, and never completes it (only Job pods
    // complete there): like a hook container that never exits. Helm waits for the Pod to
    // succeed, so the install must time out.
    let chart = chart(
        dir.path(),
        "podhook",
        &[
            (
                "templates/hook-pod.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: podhook-migrate\n  annotations:\n    helm.sh/hook: pre-install\n    helm.sh/hook-delete-policy: hook-failed\nspec:\n  restartPolicy: Never\n  containers:\n    - name: migrate\n      image: example.invalid/migrate:1\n",
            ),
            ("templates/config.yaml", &empty_config_map("podhook-config")),
        ],
    );
    let started = std::time::Instant::now();
    let flags = ["--atomic", "--timeout", "6"];
    let out = release_sync(&cluster, dir.path(), "podhook", &namespace, &chart, &flags);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the install did not wait for the hook Pod"
    );
    assert!(
        stderr.contains(&format!(
            "waiting for hook Pod {namespace}/podhook-migrate to complete (phase Running)"
        )),
        "{stderr}"
    );
    assert!(started.elapsed() >= std::time::Duration::from_secs(6));
    assert_nothing_left(&cluster, &namespace, &[], &["podhook-config"]).await;
}
