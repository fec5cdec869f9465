//! Every host import, called by a real component (`test-host-probe`) against the real API
//! server and a real git repository, with the grants of the call enforced.

use std::path::Path;
use std::sync::Arc;

use capstan::capabilities::Grants;
use capstan::capabilities::folder_files::FolderFilesGrant;
use capstan::capabilities::git::GitGrant;
use capstan::capabilities::kube::{DiscoveryCache, KubeGrant};
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::MirrorKey;
use capstan::sources::mirrors::MirrorStore;
use serde_json::json;

use crate::git_support::git;
use crate::harness::{Cluster, repo_root};
use crate::probe_support::probe;

fn chart_repository(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("chart/templates")).unwrap();
    std::fs::write(dir.join("README.md"), "not part of the chart\n").unwrap();
    std::fs::write(
        dir.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: probe\nversion: 1.0.0\n",
    )
    .unwrap();
    std::fs::write(dir.join("chart/templates/config.yaml"), "kind: ConfigMap\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "chart"]);
    git(dir, &["tag", "v1.0.0"]);
    git(dir, &["rev-parse", "HEAD"])
}

pub async fn host_probe_exercises_every_host_import(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("probe").await;
    cluster.run(
        "kubectl",
        &[
            "create",
            "deployment",
            "web",
            "--image=registry.invalid/web:1",
            "--replicas=1",
            "-n",
            &namespace,
        ],
    );

    let repository = tempfile::tempdir().unwrap();
    let head = chart_repository(repository.path());
    let url = format!("file://{}", repository.path().display());
    let mirrors_dir = tempfile::tempdir().unwrap();
    let mirrors = Arc::new(MirrorStore::new(
        mirrors_dir.path(),
        std::time::Duration::from_secs(60),
    ));
    let key = MirrorKey {
        url: url.clone(),
        credentials: None,
    };
    let mirror = mirrors
        .fetch(
            &key,
            None,
            std::sync::Arc::new(capstan::capabilities::egress::EgressPolicy::allowing(
                Vec::new(),
                true,
            )),
        )
        .await
        .unwrap();

    let cache = tempfile::tempdir().unwrap();
    let mut runtime = PluginRuntime::new(cache.path(), None).unwrap();
    runtime
        .load(&PluginConfig {
            name: "probe".into(),
            world: PluginWorld::Backend,
            path: repo_root().join("target/plugins/test-host-probe.wasm"),
            limits: PluginLimits {
                memory_mib: 64,
                timeout_ms: 90_000,
            },
            wasi: WasiGrants::default(),
            kinds: Vec::new(),
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        })
        .unwrap();

    let client = cluster.client().await;
    let grants = Grants {
        kube: Some(KubeGrant::new(
            client,
            Arc::new(DiscoveryCache::default()),
            [namespace.clone()],
            [],
        )),
        git: Some(GitGrant::new(url.clone(), mirror)),
        http: None,
        credentials: None,
        post_render: None,
        release_context: None,
        folder_files: Some(FolderFilesGrant::new(
            repository.path().to_path_buf(),
            [("README.md".to_owned(), 22)],
            1 << 20,
        )),
    };
    let instructions = json!({
        "namespace": namespace,
        "deniedNamespace": "kube-system",
        "waitDeployment": "web",
        "gitUrl": url,
        "gitRef": "main",
        "gitPath": "chart",
        "deniedGitUrl": "file:///etc",
        "folderFile": {"granted": "README.md", "denied": "chart/Chart.yaml"},
    });
    let report = probe(&runtime, instructions.clone(), grants).await;
    println!("probe report: {report:#}");

    assert_eq!(report["log"], "sent");
    assert!(report["create"]["ok"].is_string(), "{report:#}");
    assert_eq!(report["create-again"]["error"], "Conflict", "{report:#}");
    assert!(report["apply"]["ok"].is_string(), "{report:#}");
    assert_eq!(report["get-data"], "applied");
    assert_eq!(report["list-count"], 1);
    assert_eq!(report["delete"]["ok"], "true");
    assert_eq!(report["delete-again"]["ok"], "false");
    assert_eq!(report["get-after-delete"]["ok"], "false");
    assert_eq!(report["get-denied"]["error"], "Denied", "{report:#}");
    assert!(
        report["get-denied"]["message"]
            .as_str()
            .unwrap()
            .contains("namespace `kube-system` is not granted"),
        "{report:#}"
    );
    assert_eq!(
        report["list-all-namespaces"]["error"], "Denied",
        "{report:#}"
    );
    assert_eq!(report["wait-ready"][0]["ready"], true, "{report:#}");
    assert_eq!(
        report["wait-ready"][0]["message"], "1 of 1 replicas ready",
        "{report:#}"
    );

    assert_eq!(report["git-resolve"]["ok"], head.as_str(), "{report:#}");
    assert_eq!(report["git-tags"]["ok"], json!(["v1.0.0"]), "{report:#}");
    assert_eq!(
        report["git-tree-id"]["ok"],
        git(repository.path(), &["rev-parse", "HEAD:chart"]).as_str()
    );
    let files: Vec<&str> = report["git-files"]["ok"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["Chart.yaml", "templates/config.yaml"], "{report:#}");
    assert_eq!(report["git-bad-ref"]["error"], "NotFound", "{report:#}");
    assert_eq!(report["git-open-denied"]["error"], "Denied", "{report:#}");
    assert_eq!(
        report["folder-file"]["ok"], "not part of the chart\n",
        "{report:#}"
    );
    assert_eq!(
        report["folder-file-denied"]["error"], "Denied",
        "{report:#}"
    );

    // The same component with no grants: every capability is refused, nothing is touched.
    let report = probe(&runtime, instructions, Grants::default()).await;
    assert_eq!(report["create"]["error"], "Denied", "{report:#}");
    assert!(
        report["create"]["message"]
            .as_str()
            .unwrap()
            .contains("Kubernetes access is not granted")
    );
    assert_eq!(report["git-open"]["error"], "Denied", "{report:#}");
    assert_eq!(report["folder-file"]["error"], "Denied", "{report:#}");
}
