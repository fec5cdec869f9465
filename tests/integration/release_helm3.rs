//! `capstan release` with the `backend-helm3` component against the real control plane,
//! checked with the real `helm` CLI: the records we write are Helm's (list, history, get
//! manifest/values), upgrades supersede, dropped objects are deleted, uninstall removes
//! everything, and a chart reaching outside the granted namespace writes nothing.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use crate::harness::{Cluster, repo_root};

pub fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A config with the `backend-helm3` plugin; `helm_driver` goes into its WASI env grant.
fn write_config(dir: &Path, helm_driver: Option<&str>) -> PathBuf {
    let wasi = helm_driver
        .map(|driver| format!(", wasi: {{env: {{HELM_DRIVER: {driver}}}}}"))
        .unwrap_or_default();
    let config = format!(
        "cacheDir: {cache}\nplugins:\n- {{name: helm3, world: backend, path: {p}/backend-helm3.wasm{wasi}}}\nbackends: {{default: helm3, v3: helm3}}\n",
        cache = dir.join("cache").display(),
        p = repo_root().join("target/plugins").display()
    );
    let path = dir.join("capstan.yaml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Run `capstan` with `args` against the cluster.
pub fn capstan(cluster: &Cluster, dir: &Path, args: &[&str]) -> Output {
    capstan_with_driver(cluster, dir, None, args)
}

/// Run `capstan` with `args`, the backend given `HELM_DRIVER=<helm_driver>` when set.
pub fn capstan_with_driver(
    cluster: &Cluster,
    dir: &Path,
    helm_driver: Option<&str>,
    args: &[&str],
) -> Output {
    capstan_command(cluster, dir, helm_driver, args)
        .output()
        .unwrap()
}

/// The `capstan` command with `args` against the cluster, not started yet.
pub fn capstan_command(
    cluster: &Cluster,
    dir: &Path,
    helm_driver: Option<&str>,
    args: &[&str],
) -> std::process::Command {
    let binary = repo_root().join("target/debug/capstan");
    assert!(
        binary.is_file(),
        "{} is missing: build with `cargo build -p capstan`",
        binary.display()
    );
    let mut command = std::process::Command::new(binary);
    command
        .env("KUBECONFIG", cluster.kubeconfig())
        .env("CAPSTAN_CONFIG", write_config(dir, helm_driver))
        .arg("--log-format")
        .arg("text")
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"));
    command
}

pub fn capstan_ok(cluster: &Cluster, dir: &Path, args: &[&str]) -> String {
    succeeded(args, capstan(cluster, dir, args))
}

/// The stdout of a `capstan` run that must have succeeded.
pub fn succeeded(args: &[&str], out: Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "capstan {args:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

pub fn shop_chart(dir: &Path) -> PathBuf {
    let chart = dir.join("shop");
    write(
        &chart.join("Chart.yaml"),
        "apiVersion: v2\nname: shop\nversion: 0.1.0\nappVersion: \"2.0\"\n",
    );
    write(
        &chart.join("values.yaml"),
        "greeting: hello\nextra: false\nport: 80\n",
    );
    write(
        &chart.join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  revision: {{ .Release.Revision | quote }}\n",
    );
    write(
        &chart.join("templates/service.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports:\n    - port: {{ .Values.port }}\n  selector:\n    app: shop\n",
    );
    write(
        &chart.join("templates/extra.yaml"),
        "{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  on: \"yes\"\n{{- end }}\n",
    );
    write(
        &chart.join("templates/NOTES.txt"),
        "Shop {{ .Release.Name }} is open.\n",
    );
    chart
}

pub fn helm_json(cluster: &Cluster, args: &[&str]) -> Value {
    let text = cluster.run("helm", args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("helm {args:?}: {e}\n{text}"))
}

pub async fn capstan_release_installs_upgrades_and_uninstalls_for_real_helm(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    let chart_arg = chart.to_str().unwrap();
    let v1 = dir.path().join("v1.yaml");
    write(&v1, "greeting: hi\nextra: true\n");
    let v2 = dir.path().join("v2.yaml");
    write(&v2, "greeting: bye\nport: 8080\n");
    let (v1_arg, v2_arg) = (v1.to_str().unwrap(), v2.to_str().unwrap());
    let base = ["--name", "shop", "--namespace", namespace.as_str()];

    // Install.
    let started = std::time::Instant::now();
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "sync"][..],
            &base,
            &["--chart", chart_arg, "-f", v1_arg],
        ]
        .concat(),
    );
    println!("capstan install took {:?}", started.elapsed());
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    assert!(out.contains("Shop shop is open."), "{out}");

    let listed = helm_json(&cluster, &["list", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed[0]["name"], "shop", "{listed}");
    assert_eq!(listed[0]["status"], "deployed", "{listed}");
    assert_eq!(listed[0]["revision"], "1", "{listed}");
    assert_eq!(listed[0]["chart"], "shop-0.1.0", "{listed}");
    assert_eq!(listed[0]["app_version"], "2.0", "{listed}");

    // `helm get manifest` is what we rendered (the same render as `capstan template`).
    let rendered = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "template", chart_arg, "--name", "shop", "-n", &namespace, "-f", v1_arg,
        ],
    );
    let manifest = cluster.run("helm", &["get", "manifest", "shop", "-n", &namespace]);
    assert_eq!(manifest.trim(), rendered.trim());
    assert!(manifest.contains("name: shop-extra"), "{manifest}");
    let values = helm_json(
        &cluster,
        &["get", "values", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(values, serde_json::json!({"greeting": "hi", "extra": true}));
    let notes = cluster.run("helm", &["get", "notes", "shop", "-n", &namespace]);
    assert!(notes.contains("Shop shop is open."), "{notes}");
    let status = helm_json(
        &cluster,
        &["status", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(
        status["info"]["description"], "Install complete",
        "{status}"
    );
    assert_eq!(status["config"]["greeting"], "hi", "{status}");

    // Objects carry Helm's ownership metadata.
    let client = cluster.client().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let settings = config_maps.get("shop-settings").await.unwrap();
    let uid = settings.metadata.uid.clone();
    let labels = settings.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "Helm");
    let annotations = settings.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations["meta.helm.sh/release-name"], "shop");
    assert_eq!(annotations["meta.helm.sh/release-namespace"], namespace);
    let managers: Vec<_> = settings
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(managers.contains(&"capstan".to_owned()), "{managers:?}");
    assert!(config_maps.get_opt("shop-extra").await.unwrap().is_some());

    // Upgrade: revision 1 superseded, 2 deployed; the dropped object is deleted, the kept
    // one is patched in place.
    let started = std::time::Instant::now();
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "sync"][..],
            &base,
            &["--chart", chart_arg, "-f", v2_arg],
        ]
        .concat(),
    );
    println!("capstan upgrade took {:?}", started.elapsed());
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let history = helm_json(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    let summary: Vec<(i64, String)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["revision"].as_i64().unwrap(),
                h["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [(1, "superseded".to_owned()), (2, "deployed".to_owned())],
        "{history}"
    );
    assert_eq!(history[1]["description"], "Upgrade complete", "{history}");
    let settings = config_maps.get("shop-settings").await.unwrap();
    assert_eq!(settings.metadata.uid, uid, "the ConfigMap was recreated");
    let data = settings.data.unwrap_or_default();
    assert_eq!(data["greeting"], "bye");
    assert_eq!(data["revision"], "2");
    assert!(config_maps.get_opt("shop-extra").await.unwrap().is_none());
    let values = helm_json(
        &cluster,
        &["get", "values", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(values, serde_json::json!({"greeting": "bye", "port": 8080}));

    let status = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "status"][..], &base].concat(),
    );
    assert!(status.contains("STATUS: deployed"), "{status}");
    assert!(status.contains("REVISION: 2"), "{status}");
    let ours = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "history"][..], &base].concat(),
    );
    assert!(ours.contains("1\tsuperseded\tshop-0.1.0"), "{ours}");
    assert!(ours.contains("2\tdeployed\tshop-0.1.0"), "{ours}");

    // Uninstall: objects and records gone, as helm sees it.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "uninstall"][..], &base].concat(),
    );
    assert!(out.contains("uninstalled"), "{out}");
    let listed = helm_json(&cluster, &["list", "-a", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed, serde_json::json!([]), "{listed}");
    assert!(
        config_maps
            .get_opt("shop-settings")
            .await
            .unwrap()
            .is_none()
    );
    let secrets: Api<Secret> = Api::namespaced(client, &namespace);
    let records = secrets
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap();
    assert!(records.items.is_empty(), "release records left behind");
    let out = capstan(
        &cluster,
        dir.path(),
        &[&["release", "status"][..], &base].concat(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}

pub async fn capstan_release_outside_the_grant_writes_nothing(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-grant").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("reach");
    write(
        &chart.join("Chart.yaml"),
        "apiVersion: v2\nname: reach\nversion: 1.0.0\n",
    );
    write(
        &chart.join("templates/a.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\ndata: {}\n",
    );
    write(
        &chart.join("templates/b.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: theirs\n  namespace: kube-system\nspec:\n  ports:\n    - port: 80\n",
    );
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            "reach",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--atomic",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "sync outside the grant succeeded");
    assert!(stderr.contains("denied"), "{stderr}");
    assert!(stderr.contains("kube-system"), "{stderr}");
    let client = cluster.client().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    assert!(config_maps.get_opt("mine").await.unwrap().is_none());
    let secrets: Api<Secret> = Api::namespaced(client, &namespace);
    let records = secrets
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap();
    assert!(records.items.is_empty(), "a release record was left behind");
}

pub async fn capstan_release_adopts_helm_installs_and_follows_helm_rollback(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-adopt").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    let chart_arg = chart.to_str().unwrap();
    let base = ["--name", "shop", "--namespace", namespace.as_str()];

    // Real helm installs revision 1.
    cluster.run(
        "helm",
        &[
            "install",
            "shop",
            chart_arg,
            "-n",
            &namespace,
            "--set",
            "greeting=helm",
        ],
    );
    let client = cluster.client().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let uid = config_maps.get("shop-settings").await.unwrap().metadata.uid;

    // Capstan upgrades it to revision 2 without recreating its objects.
    let v2 = dir.path().join("v2.yaml");
    write(&v2, "greeting: capstan\n");
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "sync"][..],
            &base,
            &["--chart", chart_arg, "-f", v2.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    let settings = config_maps.get("shop-settings").await.unwrap();
    assert_eq!(settings.metadata.uid, uid, "the ConfigMap was recreated");
    assert_eq!(settings.data.unwrap_or_default()["greeting"], "capstan");

    // Real helm rolls back to 1 (revision 3); Capstan's next sync is revision 4.
    cluster.run("helm", &["rollback", "shop", "1", "-n", &namespace]);
    let settings = config_maps.get("shop-settings").await.unwrap();
    assert_eq!(settings.data.unwrap_or_default()["greeting"], "helm");
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "sync"][..],
            &base,
            &["--chart", chart_arg, "-f", v2.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.contains("upgraded: revision 4 deployed"), "{out}");
    let history = helm_json(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    let statuses: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["superseded", "superseded", "superseded", "deployed"],
        "{history}"
    );
    assert_eq!(history[2]["description"], "Rollback to 1", "{history}");
    let settings = config_maps.get("shop-settings").await.unwrap();
    assert_eq!(settings.metadata.uid, uid);
    let data = settings.data.unwrap_or_default();
    assert_eq!(data["greeting"], "capstan");
    assert_eq!(data["revision"], "4");

    // And real helm uninstalls what Capstan last deployed.
    cluster.run("helm", &["uninstall", "shop", "-n", &namespace]);
    assert!(
        config_maps
            .get_opt("shop-settings")
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn capstan_release_unlocks_a_release_left_pending_install(cluster: Arc<Cluster>) {
    use capstan_helm::release::{self, ChartRecord, Driver, Info, Release, Stamp, Status};

    let namespace = cluster.create_namespace("rel3-pending").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    // An install that died after writing its record: revision 1, pending-install.
    let object = {
        let loaded = capstan_helm::load::load(&chart).unwrap();
        let record = Release {
            name: "shop".into(),
            info: Some(Info {
                first_deployed: "2026-01-01T00:00:00Z".into(),
                last_deployed: "2026-01-01T00:00:00Z".into(),
                description: "Initial install underway".into(),
                status: Status::PendingInstall,
                ..Info::default()
            }),
            chart: Some(ChartRecord::from_chart(&loaded)),
            version: 1,
            namespace: namespace.clone(),
            ..Release::default()
        };
        release::storage_object(Driver::Secrets, &record, Stamp::Created(1_767_225_600)).unwrap()
    };
    let client = cluster.client().await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    secrets
        .create(
            &Default::default(),
            &serde_json::from_value(object).unwrap(),
        )
        .await
        .unwrap();
    let listed = helm_json(&cluster, &["list", "-a", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed[0]["status"], "pending-install", "{listed}");

    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            "shop",
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
        ],
    );
    assert!(out.contains("revision 2 deployed"), "{out}");
    let history = helm_json(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(history[1]["status"], "deployed", "{history}");
    let first = history[0]["status"].as_str().unwrap();
    assert!(first == "superseded" || first == "failed", "{history}");
    let config_maps: Api<ConfigMap> = Api::namespaced(client, &namespace);
    assert!(
        config_maps
            .get_opt("shop-settings")
            .await
            .unwrap()
            .is_some()
    );
}

/// A sync renders against the live cluster as `helm install`/`upgrade` do: the cluster's
/// version and API versions (a CRD installed by the test among them) in `.Capabilities`,
/// and `lookup` of real objects. Checked against the real `helm upgrade --dry-run=server`
/// rendering the same chart for the same release in the same cluster.
pub async fn a_sync_renders_with_the_live_clusters_capabilities_and_lookups(cluster: Arc<Cluster>) {
    let dir = tempfile::tempdir().unwrap();
    let namespace = cluster.create_namespace("live").await;
    let group = format!("{namespace}.capstan.test");
    let crd = crate::harness::namespaced_crd(&group, "gadgets", "Gadget", "");
    let crd_file = dir.path().join("crd.yaml");
    write(&crd_file, &crd);
    cluster.run("kubectl", &["apply", "-f", crd_file.to_str().unwrap()]);
    cluster.run(
        "kubectl",
        &[
            "wait",
            "--for=condition=Established",
            &format!("crd/gadgets.{group}"),
        ],
    );
    let objects = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {namespace}}}\ndata: {{color: blue}}\n---\napiVersion: {group}/v1\nkind: Gadget\nmetadata: {{name: one, namespace: {namespace}}}\nsize: 3\n---\napiVersion: {group}/v1\nkind: Gadget\nmetadata: {{name: two, namespace: {namespace}}}\nsize: 4\n"
    );
    let objects_file = dir.path().join("objects.yaml");
    write(&objects_file, &objects);
    cluster.run("kubectl", &["apply", "-f", objects_file.to_str().unwrap()]);

    let chart = dir.path().join("live");
    write(
        &chart.join("Chart.yaml"),
        "apiVersion: v2\nname: live\nversion: 0.1.0\n",
    );
    write(
        &chart.join("templates/capabilities.yaml"),
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-capabilities\ndata:\n  kubeVersion: {{{{ .Capabilities.KubeVersion.Version | quote }}}}\n  kubeMinor: {{{{ .Capabilities.KubeVersion.Minor | quote }}}}\n  gadgetsServed: {{{{ .Capabilities.APIVersions.Has \"{group}/v1\" | quote }}}}\n  gadgetKind: {{{{ .Capabilities.APIVersions.Has \"{group}/v1/Gadget\" | quote }}}}\n  deployments: {{{{ .Capabilities.APIVersions.Has \"apps/v1/Deployment\" | quote }}}}\n  notServed: {{{{ .Capabilities.APIVersions.Has \"nothing.example.com/v9\" | quote }}}}\n"
        ),
    );
    write(
        &chart.join("templates/lookups.yaml"),
        &format!(
            "{{{{- $settings := lookup \"v1\" \"ConfigMap\" .Release.Namespace \"settings\" }}}}\n{{{{- $gadgets := lookup \"{group}/v1\" \"Gadget\" .Release.Namespace \"\" }}}}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-lookups\ndata:\n  color: {{{{ dig \"data\" \"color\" \"none\" $settings | quote }}}}\n  missing: {{{{ lookup \"v1\" \"Secret\" .Release.Namespace \"nope\" | toJson | quote }}}}\n  gadgets: {{{{ range $gadgets.items }}}}{{{{ .metadata.name }}}}={{{{ .size }}}} {{{{ end }}}}\n  sizeKind: {{{{ (index $gadgets.items 0).size | kindOf | quote }}}}\n"
        ),
    );
    let chart_arg = chart.to_str().unwrap();
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            "live",
            "--namespace",
            &namespace,
            "--chart",
            chart_arg,
        ],
    );
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    let ours = cluster.run("helm", &["get", "manifest", "live", "-n", &namespace]);
    for expected in [
        format!("kubeVersion: \"{}\"", server_version(&cluster)),
        "gadgetsServed: \"true\"".to_owned(),
        "gadgetKind: \"true\"".to_owned(),
        "deployments: \"true\"".to_owned(),
        "notServed: \"false\"".to_owned(),
        "color: \"blue\"".to_owned(),
        "missing: \"{}\"".to_owned(),
        "gadgets: one=3 two=4".to_owned(),
        "sizeKind: \"int64\"".to_owned(),
    ] {
        assert!(ours.contains(&expected), "{expected} not in\n{ours}");
    }
    // Real Helm 4 (whose manifest layout the records follow), rendering against the same
    // cluster, renders the same bytes.
    let kubeconfig = cluster.kubeconfig();
    let rendered = crate::helm4_getter::run_helm4(
        &crate::helm4_getter::helm4(),
        &dir.path().join("helm4"),
        &[
            "upgrade",
            "live",
            chart_arg,
            "-n",
            &namespace,
            "--dry-run=server",
            "-o",
            "json",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ],
    )
    .unwrap();
    let helms: Value = serde_json::from_str(&rendered).unwrap();
    assert_eq!(
        helms["manifest"].as_str().unwrap().trim(),
        ours.trim(),
        "helm upgrade --dry-run=server renders differently"
    );
    capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            "live",
            "--namespace",
            &namespace,
        ],
    );
    let _ = cluster
        .command("kubectl")
        .args(["delete", "crd", &format!("gadgets.{group}"), "--wait=false"])
        .output();
}

/// The API server's `gitVersion`.
fn server_version(cluster: &Cluster) -> String {
    let version: Value =
        serde_json::from_str(&cluster.run("kubectl", &["version", "-o", "json"])).unwrap();
    version["serverVersion"]["gitVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}
