//! `capstan release` with the `backend-helm2` component (no Tiller of ours) against the
//! real control plane, checked with real Helm 2.17: Tiller (`--storage=configmap`, out of
//! cluster, on 127.0.0.1) and `helm --host` read the records we write and change the
//! releases we made, and we change theirs; Tiller's own codec (`helm2-records`) decodes our
//! records. Helm 2's rules: names unique in the cluster, uninstall purges unless asked,
//! atomic installs leave nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::ListParams;

use crate::harness::{Cluster, repo_root};
use crate::release_helm3::{succeeded, write};
use crate::release_helm3_lifecycle::{crd, deployment, empty_config_map, hook_job};

const TILLER_NAMESPACE: &str = "kube-system";

/// Real Helm 2 binaries (`helm`, `tiller`, `helm2-records`), built once by
/// `tests/cluster/build-helm2`.
fn helm2_tools() -> PathBuf {
    let out = Command::new(repo_root().join("tests/cluster/build-helm2"))
        .output()
        .expect("tests/cluster/build-helm2");
    assert!(
        out.status.success(),
        "build-helm2: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A real Tiller on 127.0.0.1 keeping ConfigMaps in kube-system, stopped (by its pid) on
/// drop; and the Helm 2 client pointed at it.
struct Tiller {
    child: Child,
    port: u16,
    tools: PathBuf,
    home: tempfile::TempDir,
}

impl Tiller {
    fn start(cluster: &Cluster) -> Tiller {
        let tools = helm2_tools();
        let home = tempfile::tempdir().unwrap();
        let (port, probe) = (crate::operator::free_port(), crate::operator::free_port());
        let log = std::fs::File::create(home.path().join("tiller.log")).unwrap();
        let child = Command::new(tools.join("tiller"))
            .args(["--storage=configmap", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--probe-listen")
            .arg(format!("127.0.0.1:{probe}"))
            .env("KUBECONFIG", cluster.kubeconfig())
            .env("TILLER_NAMESPACE", TILLER_NAMESPACE)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let tiller = Tiller {
            child,
            port,
            tools,
            home,
        };
        let init = tiller.helm(&["init", "--client-only", "--skip-refresh"]);
        assert!(init.status.success(), "helm init: {init:?}");
        // Tiller answers once it is listening.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let version = tiller.helm(&["version", "--server"]);
            if version.status.success() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "tiller did not come up: {}",
                String::from_utf8_lossy(&version.stderr)
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        tiller
    }

    /// Run the Helm 2 client against this Tiller.
    fn helm(&self, args: &[&str]) -> Output {
        Command::new(self.tools.join("helm"))
            .arg("--host")
            .arg(format!("127.0.0.1:{}", self.port))
            .args(args)
            .env("HELM_HOME", self.home.path().join("helm"))
            .output()
            .unwrap()
    }

    /// Run the Helm 2 client; it must succeed. Returns stdout.
    fn helm_ok(&self, args: &[&str]) -> String {
        let out = self.helm(args);
        assert!(
            out.status.success(),
            "helm2 {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Encode a release (JSON of Tiller's types) as `data.release` with Tiller's own codec.
    fn encode(&self, release: &serde_json::Value) -> String {
        String::from_utf8(self.records("encode", release.to_string().as_bytes()))
            .unwrap()
            .trim()
            .to_owned()
    }

    /// Run `helm2-records MODE` on `input`.
    fn records(&self, mode: &str, input: &[u8]) -> Vec<u8> {
        let mut child = Command::new(self.tools.join("helm2-records"))
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "helm2-records {mode} failed");
        out.stdout
    }

    /// Decode a record's `data.release` with Tiller's own codec, as JSON.
    fn decode(&self, data: &str) -> serde_json::Value {
        let mut child = Command::new(self.tools.join("helm2-records"))
            .arg("decode")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(data.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "helm2-records decode failed");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Tiller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A config with the `backend-helm2` component as the default backend, and `helm3`.
fn write_config(dir: &Path) -> PathBuf {
    let config = format!(
        "cacheDir: {cache}\nplugins:\n- {{name: helm2, world: backend, path: {p}/backend-helm2.wasm, storageNamespaces: [{TILLER_NAMESPACE}]}}\n- {{name: helm3, world: backend, path: {p}/backend-helm3.wasm}}\nbackends: {{default: helm2, v2: helm2, v3: helm3}}\n",
        cache = repo_root().join("target/capstan-cache").display(),
        p = repo_root().join("target/plugins").display()
    );
    let path = dir.join("capstan-helm2.yaml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Run `capstan` with the helm2 backend.
fn capstan(cluster: &Cluster, dir: &Path, args: &[&str]) -> Output {
    Command::new(repo_root().join("target/debug/capstan"))
        .env("KUBECONFIG", cluster.kubeconfig())
        .env("CAPSTAN_CONFIG", write_config(dir))
        .args(["--log-format", "text"])
        .args(args)
        .output()
        .unwrap()
}

fn capstan_ok(cluster: &Cluster, dir: &Path, args: &[&str]) -> String {
    succeeded(args, capstan(cluster, dir, args))
}

/// An `apiVersion: v1` chart (Helm 2's format) with a ConfigMap that shows what Helm 2
/// charts see.
fn v1_chart(dir: &Path, name: &str) -> PathBuf {
    let chart = dir.join(name);
    write(
        &chart.join("Chart.yaml"),
        &format!(
            "apiVersion: v1\nname: {name}\nversion: 0.1.0\nappVersion: \"2.0\"\ndescription: a Helm 2 chart\n"
        ),
    );
    write(
        &chart.join("values.yaml"),
        "# shown on the page\ngreeting: hello\n",
    );
    write(
        &chart.join("templates/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  service: {{ .Release.Service | quote }}\n  tiller: {{ .Capabilities.TillerVersion.SemVer | quote }}\n",
    );
    write(
        &chart.join("templates/NOTES.txt"),
        "{{ .Release.Name }} says {{ .Values.greeting }}.\n",
    );
    chart
}

/// The Tiller records of release `name`: (object name, STATUS label, data.release).
async fn tiller_records(cluster: &Cluster, name: &str) -> Vec<(String, String, String)> {
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, TILLER_NAMESPACE);
    let listed = maps
        .list(&ListParams::default().labels(&format!("NAME={name},OWNER=TILLER")))
        .await
        .unwrap();
    let mut records: Vec<_> = listed
        .items
        .into_iter()
        .map(|m| {
            let labels = m.metadata.labels.clone().unwrap_or_default();
            (
                m.metadata.name.clone().unwrap_or_default(),
                labels.get("STATUS").cloned().unwrap_or_default(),
                m.data
                    .as_ref()
                    .and_then(|d| d.get("release").cloned())
                    .unwrap_or_default(),
            )
        })
        .collect();
    records.sort();
    records
}

async fn uid_of(cluster: &Cluster, namespace: &str, name: &str) -> Option<String> {
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, namespace);
    maps.get_opt(name)
        .await
        .unwrap()
        .and_then(|m| m.metadata.uid)
}

pub async fn capstan_helm2_records_are_read_and_changed_by_real_helm2(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel2").await;
    let name = namespace.clone();
    let tiller = Tiller::start(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "shop");
    let chart_arg = chart.to_str().unwrap();
    let target = ["--name", name.as_str(), "--namespace", namespace.as_str()];
    let sync = |set: &'static str| -> Vec<&str> {
        [
            &["release", "sync"][..],
            &target,
            &["--chart", chart_arg, "--set", set],
        ]
        .concat()
    };

    let started = std::time::Instant::now();
    let out = capstan_ok(&cluster, dir.path(), &sync("greeting=hi"));
    println!("capstan helm2 install took {:?}", started.elapsed());
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    // The same input again changes nothing: our record compares equal to the request.
    let out = capstan_ok(&cluster, dir.path(), &sync("greeting=hi"));
    assert!(out.contains("unchanged: revision 1 deployed"), "{out}");

    // Real Helm 2 sees the release as Tiller would have recorded it.
    let list = tiller.helm_ok(&["list", "--output", "json"]);
    let listed: serde_json::Value = serde_json::from_str(&list).unwrap();
    let entry = listed["Releases"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["Name"] == name.as_str()))
        .unwrap_or_else(|| panic!("{name} not in helm2 list: {list}"));
    assert_eq!(entry["Status"], "DEPLOYED", "{entry}");
    assert_eq!(entry["Revision"], 1, "{entry}");
    assert_eq!(entry["Chart"], "shop-0.1.0", "{entry}");
    assert_eq!(entry["AppVersion"], "2.0", "{entry}");
    assert_eq!(entry["Namespace"], namespace.as_str(), "{entry}");
    assert_eq!(
        tiller.helm_ok(&["get", "values", &name]).trim(),
        "greeting: hi"
    );
    let manifest = tiller.helm_ok(&["get", "manifest", &name]);
    assert!(manifest.contains("service: \"Tiller\""), "{manifest}");
    assert!(manifest.contains("tiller: \"v2.17.0\""), "{manifest}");
    let status = tiller.helm_ok(&["status", &name]);
    assert!(status.contains("STATUS: DEPLOYED"), "{status}");
    assert!(status.contains(&format!("{name}-settings")), "{status}");
    assert!(
        status.contains(&format!("{name} says hi.")),
        "notes: {status}"
    );

    // The record, decoded by Tiller's own code.
    let records = tiller_records(&cluster, &name).await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].0, format!("{name}.v1"));
    assert_eq!(records[0].1, "DEPLOYED");
    let decoded = tiller.decode(&records[0].2);
    assert_eq!(decoded["name"], name.as_str());
    assert_eq!(decoded["namespace"], namespace.as_str());
    assert_eq!(decoded["version"], 1);
    assert_eq!(decoded["info"]["status"]["code"], 1, "DEPLOYED");
    assert_eq!(decoded["info"]["Description"], "Install complete");
    assert_eq!(decoded["chart"]["metadata"]["name"], "shop");
    assert_eq!(decoded["chart"]["metadata"]["apiVersion"], "v1");
    assert_eq!(decoded["chart"]["metadata"]["engine"], "gotpl");
    assert_eq!(
        decoded["chart"]["values"]["raw"], "# shown on the page\ngreeting: hello\n",
        "values.yaml kept as written"
    );
    assert_eq!(decoded["config"]["raw"], "greeting: hi\n");
    // Objects carry no Helm 3 ownership metadata.
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, &namespace);
    let settings = maps.get(&format!("{name}-settings")).await.unwrap();
    assert!(
        settings
            .metadata
            .annotations
            .unwrap_or_default()
            .keys()
            .all(|k| !k.starts_with("meta.helm.sh/")),
        "no Helm 3 annotations"
    );
    let uid = settings.metadata.uid.clone();

    // Helm 2 upgrades and rolls back our release; our next sync continues its history.
    tiller.helm_ok(&["upgrade", &name, chart_arg, "--set", "greeting=from-helm2"]);
    tiller.helm_ok(&["rollback", &name, "1"]);
    let out = capstan_ok(&cluster, dir.path(), &sync("greeting=capstan"));
    assert!(out.contains("upgraded: revision 4 deployed"), "{out}");
    let history = tiller.helm_ok(&["history", &name]);
    let rows: Vec<&str> = history.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{history}");
    assert!(
        rows[2].contains("SUPERSEDED") && rows[2].contains("Rollback to 1"),
        "{history}"
    );
    assert!(
        rows[3].contains("DEPLOYED") && rows[3].contains("Upgrade complete"),
        "{history}"
    );
    assert_eq!(
        uid_of(&cluster, &namespace, &format!("{name}-settings")).await,
        uid,
        "the object was changed in place"
    );
    assert_eq!(
        tiller.helm_ok(&["get", "values", &name]).trim(),
        "greeting: capstan"
    );

    // Uninstall purges, as `helm delete --purge`.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "uninstall"][..], &target].concat(),
    );
    assert!(out.contains("uninstalled"), "{out}");
    assert!(tiller_records(&cluster, &name).await.is_empty());
    assert!(
        uid_of(&cluster, &namespace, &format!("{name}-settings"))
            .await
            .is_none()
    );
    assert!(!tiller.helm_ok(&["list", "--all"]).contains(&name));
}

pub async fn helm2_releases_are_upgraded_in_place_and_names_are_unique_in_the_cluster(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel2-own").await;
    let elsewhere = cluster.create_namespace("rel2-else").await;
    let name = namespace.clone();
    let tiller = Tiller::start(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "web");
    let chart_arg = chart.to_str().unwrap();

    // Installed by real Helm 2 through Tiller; upgraded by us without recreating objects.
    tiller.helm_ok(&[
        "install",
        chart_arg,
        "--name",
        &name,
        "--namespace",
        &namespace,
        "--set",
        "greeting=helm2-made",
    ]);
    let settings = format!("{name}-settings");
    let before = uid_of(&cluster, &namespace, &settings).await;
    assert!(before.is_some());
    // The chart and values Helm 2 recorded are what we would record: nothing to do.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--chart",
            chart_arg,
            "--set",
            "greeting=helm2-made",
        ],
    );
    assert!(out.contains("unchanged: revision 1 deployed"), "{out}");
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--chart",
            chart_arg,
            "--set",
            "greeting=ours",
        ],
    );
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    assert_eq!(uid_of(&cluster, &namespace, &settings).await, before);
    assert_eq!(
        tiller.helm_ok(&["get", "values", &name]).trim(),
        "greeting: ours"
    );

    // The name in another namespace: refused, nothing written.
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &elsewhere,
            "--chart",
            chart_arg,
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "release name `{name}` is in use by a Helm 2 release in namespace `{namespace}`"
        )),
        "{stderr}"
    );
    assert!(uid_of(&cluster, &elsewhere, &settings).await.is_none());
    assert_eq!(tiller_records(&cluster, &name).await.len(), 2);

    // Uninstall keeping history: DELETED, listed by `helm list --deleted`, name reserved.
    capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--keep-history",
        ],
    );
    let records = tiller_records(&cluster, &name).await;
    assert_eq!(
        records.last().map(|r| r.1.as_str()),
        Some("DELETED"),
        "{records:?}"
    );
    let deleted = tiller.helm_ok(&["list", "--deleted"]);
    assert!(deleted.contains(&name), "{deleted}");
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &elsewhere,
            "--chart",
            chart_arg,
        ],
    );
    assert!(
        !out.status.success(),
        "the deleted release still reserves its name"
    );
    tiller.helm_ok(&["delete", "--purge", &name]);
    assert!(tiller_records(&cluster, &name).await.is_empty());
}

pub async fn capstan_helm2_atomic_install_with_a_failing_hook_leaves_nothing(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel2-atomic").await;
    let name = namespace.clone();
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "doomed");
    write(
        &chart.join("templates/deployment.yaml"),
        &deployment("doomed-web", true),
    );
    write(
        &chart.join("templates/config.yaml"),
        &empty_config_map("doomed-config"),
    );
    write(
        &chart.join("templates/prepare.yaml"),
        &hook_job("prepare", "pre-install", 0, "", false),
    );
    let out = capstan(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--wait",
            "--atomic",
            "--timeout",
            "30",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the install succeeded");
    assert!(stderr.contains("prepare"), "{stderr}");
    let deployments: Api<Deployment> = Api::namespaced(cluster.client().await, &namespace);
    assert!(deployments.get_opt("doomed-web").await.unwrap().is_none());
    assert!(
        uid_of(&cluster, &namespace, "doomed-config")
            .await
            .is_none()
    );
    assert!(
        uid_of(&cluster, &namespace, &format!("{name}-settings"))
            .await
            .is_none()
    );
    assert!(
        tiller_records(&cluster, &name).await.is_empty(),
        "no Helm 2 record left"
    );
}

pub async fn helm2_releases_move_to_helm3_in_place(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel2-move").await;
    let name = namespace.clone();
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "moving");
    // A chart both Helm majors render (no `.Capabilities.TillerVersion`).
    write(
        &chart.join("templates/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
    );
    write(
        &chart.join("templates/deployment.yaml"),
        &deployment(&format!("{name}-web"), true),
    );
    let chart_arg = chart.to_str().unwrap();
    let target = ["--name", name.as_str(), "--namespace", namespace.as_str()];
    for greeting in ["greeting=one", "greeting=two"] {
        capstan_ok(
            &cluster,
            dir.path(),
            &[
                &["release", "sync"][..],
                &target,
                &["--chart", chart_arg, "--set", greeting],
            ]
            .concat(),
        );
    }
    let settings = format!("{name}-settings");
    let uid = uid_of(&cluster, &namespace, &settings).await;
    let deployments: Api<Deployment> = Api::namespaced(cluster.client().await, &namespace);
    let web = deployments.get(&format!("{name}-web")).await.unwrap();
    let (web_uid, web_generation) = (web.metadata.uid.clone(), web.metadata.generation);
    let helm3_history = |cluster: &Cluster| {
        cluster
            .command("helm")
            .args(["history", &name, "-n", &namespace, "-o", "json"])
            .output()
            .unwrap()
    };

    // Only Helm 2 releases can be moved; anything else is refused by name.
    let refused = capstan(
        &cluster,
        dir.path(),
        &[
            &["release", "migrate"][..],
            &target,
            &["--from", "helm3", "--to", "helm2"],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("--from helm3: only Helm 2 releases (`helm2`) can be moved"),
        "{stderr}"
    );

    // Dry run: the history it would write, nothing written.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "migrate"][..],
            &target,
            &["--to", "helm3", "--dry-run"],
        ]
        .concat(),
    );
    assert!(
        out.contains("would have Helm 3 history of 2 revisions"),
        "{out}"
    );
    assert_eq!(tiller_records(&cluster, &name).await.len(), 2);
    assert!(
        !helm3_history(&cluster).status.success(),
        "no Helm 3 record yet"
    );

    // The move: same revisions, objects kept (same UIDs, no new generation), Tiller's
    // records gone, and real Helm 3 takes it from there.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[&["release", "migrate"][..], &target, &["--to", "helm3"]].concat(),
    );
    assert!(out.contains("has Helm 3 history of 2 revisions"), "{out}");
    assert!(tiller_records(&cluster, &name).await.is_empty());
    let history = helm3_history(&cluster);
    assert!(history.status.success());
    let history: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap();
    let rows = history.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{history}");
    assert_eq!(rows[0]["status"], "superseded", "{history}");
    assert_eq!(rows[1]["status"], "deployed", "{history}");
    assert_eq!(rows[1]["revision"], 2, "{history}");
    assert_eq!(uid_of(&cluster, &namespace, &settings).await, uid);
    let web = deployments.get(&format!("{name}-web")).await.unwrap();
    assert_eq!(web.metadata.uid, web_uid);
    assert_eq!(web.metadata.generation, web_generation, "no rollout");
    // Adopted: the ConfigMap carries Helm 3's ownership metadata; the Deployment its label
    // (annotations would be a new generation; they come with its next change).
    let labels = web.metadata.labels.unwrap_or_default();
    assert_eq!(labels["app.kubernetes.io/managed-by"], "Helm");
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, &namespace);
    let adopted = maps.get(&settings).await.unwrap();
    let annotations = adopted.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations["meta.helm.sh/release-name"], name.as_str());
    assert_eq!(
        annotations["meta.helm.sh/release-namespace"],
        namespace.as_str()
    );
    let values = cluster.run("helm", &["get", "values", &name, "-n", &namespace]);
    assert!(values.contains("greeting: two"), "{values}");

    // The Helm 3 backend sees nothing to do for the same input.
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            &["release", "--backend", "helm3", "sync"][..],
            &target,
            &["--chart", chart_arg, "--set", "greeting=two"],
        ]
        .concat(),
    );
    assert!(out.contains("unchanged: revision 2 deployed"), "{out}");
    // Helm 3 rolls back to a revision made by Helm 2.
    cluster.run("helm", &["rollback", &name, "1", "-n", &namespace]);
    let rolled = maps.get(&settings).await.unwrap();
    assert_eq!(rolled.data.unwrap()["greeting"], "one");
    assert_eq!(rolled.metadata.uid, uid);
    // And the way back is refused.
    let out = capstan(
        &cluster,
        dir.path(),
        &[&["release", "sync"][..], &target, &["--chart", chart_arg]].concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("moving a release from Helm 3 back to Helm 2 is not supported"),
        "{stderr}"
    );
}

pub async fn capstan_helm2_creates_crd_install_hooks_before_the_release(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel2-crd").await;
    let name = namespace.clone();
    let group = format!("{namespace}.capstan.test");
    let tiller = Tiller::start(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "widgets");
    // The CRD as a Helm 2 crd-install hook, and a Widget of it in the same release: the
    // Widget can only be applied once the CRD is established.
    let hook = crd(&group, "").replacen(
        "metadata:\n",
        "metadata:\n  annotations:\n    helm.sh/hook: crd-install\n",
        1,
    );
    write(&chart.join("templates/crd.yaml"), &hook);
    write(
        &chart.join("templates/widget.yaml"),
        &format!(
            "apiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: first\nspec:\n  size: 3\n"
        ),
    );
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--chart",
            chart.to_str().unwrap(),
            "--allow-cluster-kind",
            "CustomResourceDefinition.apiextensions.k8s.io",
        ],
    );
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    let widgets = cluster.run(
        "kubectl",
        &[
            "get",
            &format!("widgets.{group}"),
            "-n",
            &namespace,
            "-o",
            "name",
        ],
    );
    assert!(widgets.contains("first"), "{widgets}");
    // Recorded as Helm 2 records a crd-install hook, not as part of the manifest.
    let hooks = tiller.helm_ok(&["get", "hooks", &name]);
    assert!(hooks.contains("helm.sh/hook: crd-install"), "{hooks}");
    let manifest = tiller.helm_ok(&["get", "manifest", &name]);
    assert!(!manifest.contains("CustomResourceDefinition"), "{manifest}");
    let records = tiller_records(&cluster, &name).await;
    let decoded = tiller.decode(&records[0].2);
    assert_eq!(
        decoded["hooks"][0]["events"],
        serde_json::json!([11]),
        "CRD_INSTALL"
    );
    // Uninstall leaves the CRD, as Helm 2 does.
    capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            &name,
            "--namespace",
            &namespace,
        ],
    );
    let crds = cluster.run(
        "kubectl",
        &["get", "crd", &format!("widgets.{group}"), "-o", "name"],
    );
    assert!(crds.contains(&group), "{crds}");
    cluster.run("kubectl", &["delete", "crd", &format!("widgets.{group}")]);
}

pub async fn capstan_helm2_prunes_history_and_unlocks_what_a_killed_tiller_left(
    cluster: Arc<Cluster>,
) {
    let namespace = cluster.create_namespace("rel2-hist").await;
    let name = namespace.clone();
    let tiller = Tiller::start(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let chart = v1_chart(dir.path(), "kept");
    let chart_arg = chart.to_str().unwrap();
    for greeting in ["greeting=1", "greeting=2", "greeting=3", "greeting=4"] {
        capstan_ok(
            &cluster,
            dir.path(),
            &[
                "release",
                "sync",
                "--name",
                &name,
                "--namespace",
                &namespace,
                "--chart",
                chart_arg,
                "--set",
                greeting,
                "--max-history",
                "2",
            ],
        );
    }
    // Helm's rule: at most max-history records once the new one is written.
    let kept: Vec<String> = tiller_records(&cluster, &name)
        .await
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(kept, [format!("{name}.v3"), format!("{name}.v4")]);

    // A Tiller killed mid-upgrade leaves revision 5 PENDING_UPGRADE (made here with
    // Tiller's own codec); our next sync unlocks it and goes on.
    let records = tiller_records(&cluster, &name).await;
    let mut pending = tiller.decode(&records[1].2);
    pending["version"] = 5.into();
    pending["info"]["status"]["code"] = 7.into();
    pending["info"]["Description"] = "Preparing upgrade".into();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, TILLER_NAMESPACE);
    let record: ConfigMap = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("{name}.v5"), "labels": {
            "NAME": name, "OWNER": "TILLER", "STATUS": "PENDING_UPGRADE", "VERSION": "5"}},
        "data": {"release": tiller.encode(&pending)},
    }))
    .unwrap();
    maps.create(&Default::default(), &record).await.unwrap();
    let stuck = tiller.helm(&["upgrade", &name, chart_arg]);
    assert!(
        !stuck.status.success(),
        "real Helm 2 refuses while it is pending"
    );
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "sync",
            "--name",
            &name,
            "--namespace",
            &namespace,
            "--chart",
            chart_arg,
            "--set",
            "greeting=5",
            "--max-history",
            "3",
        ],
    );
    assert!(out.contains("upgraded: revision 6 deployed"), "{out}");
    let history = tiller.helm_ok(&["history", &name]);
    assert!(
        history.lines().any(|l| l.starts_with("5 ")
            && l.contains("FAILED")
            && l.contains("unlocked by capstan")),
        "{history}"
    );
    assert!(
        history
            .lines()
            .any(|l| l.starts_with("6 ") && l.contains("DEPLOYED")),
        "{history}"
    );
}
