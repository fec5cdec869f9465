//! End-to-end: swapping backends by configuration while the operator runs. Ten
//! HelmReleases (half `helmVersion: v2`, half on the default backend) are Ready on the
//! helm2 backend (Tiller-compatible records); `backends.default` and `backends.v2` become
//! helm3 (which moves Helm 2 releases in place)
//! and the same operator process reloads it: every release appears in real `helm` (v3)
//! with its full history, no Tiller record remains, every object keeps its UID and every
//! Deployment its generation, and `helm rollback` to a pre-swap revision works. A broken
//! configuration is then refused by name while the running one keeps reconciling, and a new
//! source plugin added to the configuration serves a release without a restart.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::api::HelmRelease;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};

use crate::harness::{Cluster, repo_root};
use crate::helmrelease::{Operator, helm_release, install_crd, publish, ready, wait_for};

const RELEASES: usize = 10;

fn config(backend: &str, extra: &str) -> String {
    format!(
        "cacheDir: {cache}\nplugins:\n{sources}\
         - {{name: helm2, world: backend, path: {p}/backend-helm2.wasm, storageNamespaces: [kube-system], limits: {{memoryMib: 512, timeoutMs: 120000}}}}\n\
         - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm, storageNamespaces: [kube-system], wasi: {{env: {{CAPSTAN_IMPORT_HELM2: move}}}}, limits: {{memoryMib: 512, timeoutMs: 120000}}}}\n\
         {extra}\
         backends: {{default: {backend}, v2: {backend}, v3: helm3}}\n\
         sources: {{egress: {{allowNetworks: [127.0.0.1], allowLocalPaths: true}}}}\n",
        cache = Operator::cache_dir().display(),
        sources = Operator::product_plugins(),
        p = repo_root().join("target/plugins").display()
    )
}

fn rewrite_config(dir: &Path, text: &str) {
    // Written aside and renamed, as a ConfigMap volume update is seen: never half a file.
    let path = Operator::config_path(dir);
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, &path).unwrap();
}

async fn tiller_records(cluster: &Cluster, names: &[String]) -> usize {
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client().await, "kube-system");
    let all = maps
        .list(&ListParams::default().labels("OWNER=TILLER"))
        .await
        .unwrap();
    all.items
        .iter()
        .filter(|m| {
            m.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("NAME"))
                .is_some_and(|n| names.contains(n))
        })
        .count()
}

fn helm3_revisions(cluster: &Cluster, release: &str, namespace: &str) -> Vec<serde_json::Value> {
    let out = cluster
        .command("helm")
        .args(["history", release, "-n", namespace, "-o", "json"])
        .output()
        .unwrap();
    if !out.status.success() {
        return Vec::new();
    }
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

pub async fn ten_helm2_releases_move_to_helm3_when_the_configuration_changes(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repository = dir.path().join("repository");
    std::fs::create_dir_all(&repository).unwrap();
    publish(&cluster, dir.path(), &repository, "0.1.0");
    let server =
        crate::repo_server::RepoServer::start(&repository, dir.path().join("access.log"), None);
    let ns = cluster.create_namespace("hr-swap").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let names: Vec<String> = (0..RELEASES).map(|i| format!("app{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        // Half say `helmVersion: v2` (backends.v2), half use the default backend.
        let mut spec = serde_json::json!({
            "chart": {"repository": server.url(""), "name": "hello", "version": "0.1.0"},
            "values": {"message": "first"},
        });
        if i % 2 == 0 {
            spec["helmVersion"] = "v2".into();
        }
        let hr = helm_release(name, &ns, spec);
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let mut operator = Operator::start_with_config(
        &cluster,
        dir.path(),
        &config("helm2", ""),
        &["--config-poll-interval", "1"],
    );
    let pid = operator.pid();
    let long = Duration::from_secs(240);
    for name in &names {
        wait_for(&api, name, &operator, "Ready on helm2", long, ready).await;
    }
    // A second revision for each, so the history has something to keep.
    for name in &names {
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"values": {"message": "second"}}})),
        )
        .await
        .unwrap();
    }
    for name in &names {
        wait_for(&api, name, &operator, "revision 2 on helm2", long, |hr| {
            ready(hr) && hr.status.as_ref().and_then(|s| s.revision) == Some(2)
        })
        .await;
    }
    let releases: Vec<String> = names.iter().map(|n| format!("{ns}-{n}")).collect();
    assert_eq!(tiller_records(&cluster, &releases).await, 2 * RELEASES);
    assert!(helm3_revisions(&cluster, &releases[0], &ns).is_empty());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let snapshot = |deployments: Vec<Deployment>, maps: Vec<ConfigMap>| {
        let mut seen = BTreeMap::new();
        for d in deployments {
            seen.insert(
                format!("Deployment/{}", d.metadata.name.unwrap_or_default()),
                (d.metadata.uid.unwrap_or_default(), d.metadata.generation),
            );
        }
        for m in maps {
            seen.insert(
                format!("ConfigMap/{}", m.metadata.name.unwrap_or_default()),
                (m.metadata.uid.unwrap_or_default(), None),
            );
        }
        seen
    };
    let before = snapshot(
        deployments
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
        maps.list(&ListParams::default()).await.unwrap().items,
    );

    // The swap: one line of configuration, the same process.
    let started = Instant::now();
    rewrite_config(dir.path(), &config("helm3", ""));
    let deadline = Instant::now() + long;
    loop {
        let moved = releases
            .iter()
            .filter(|r| helm3_revisions(&cluster, r, &ns).len() == 2)
            .count();
        if moved == RELEASES && tiller_records(&cluster, &releases).await == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{moved} of {RELEASES} moved\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "{RELEASES} releases moved to helm3 in {:?} after the configuration changed",
        started.elapsed()
    );
    assert_eq!(operator.pid(), pid, "the same process");
    assert!(operator.log().contains("configuration reloaded"));
    let history = helm3_revisions(&cluster, &releases[3], &ns);
    assert_eq!(history[0]["status"], "superseded", "{history:?}");
    assert_eq!(history[1]["status"], "deployed", "{history:?}");
    let after = snapshot(
        deployments
            .list(&ListParams::default())
            .await
            .unwrap()
            .items,
        maps.list(&ListParams::default()).await.unwrap().items,
    );
    assert_eq!(
        before, after,
        "every object keeps its UID, every Deployment its generation"
    );
    for name in &names {
        let hr = api.get(name).await.unwrap();
        assert!(ready(&hr), "{name} is still Ready");
    }
    // Helm 3 rolls back to a revision Helm 2 made.
    cluster.run("helm", &["rollback", &releases[0], "1", "-n", &ns]);
    assert_eq!(helm3_revisions(&cluster, &releases[0], &ns).len(), 3);

    // A broken configuration: refused by name, the running one keeps reconciling.
    rewrite_config(
        dir.path(),
        &config(
            "helm3",
            "- {name: helm5, world: backend, path: /nonexistent/backend-helm5.wasm}\n",
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !operator.log().contains("configuration refused") {
        assert!(
            Instant::now() < deadline,
            "not refused:\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = operator.log();
    let refusal = log
        .lines()
        .find(|l| l.contains("configuration refused"))
        .unwrap_or_default();
    assert!(
        refusal.contains("helm5") && refusal.contains("/nonexistent/backend-helm5.wasm"),
        "{refusal}"
    );
    api.patch(
        &names[5],
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"values": {"message": "third"}}})),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        &names[5],
        &operator,
        "revision 3 on helm3",
        long,
        |hr| ready(hr) && hr.status.as_ref().and_then(|s| s.revision) == Some(3),
    )
    .await;
    assert_eq!(helm3_revisions(&cluster, &releases[5], &ns).len(), 3);

    // A new source plugin by configuration alone, in the same process: the Python
    // component's kind serves a release at once.
    let python = repo_root().join("target/plugins/python-url-source.wasm");
    assert!(python.is_file(), "run `make python-plugins`");
    rewrite_config(
        dir.path(),
        &config(
            "helm3",
            &format!(
                "- {{name: url-py, world: source, path: {}, limits: {{memoryMib: 256, timeoutMs: 60000}}}}\n",
                python.display()
            ),
        ),
    );
    let archive = repository.join("hello-0.1.0.tgz");
    let digest = crate::plugin_platform::sha256_of(&archive);
    let by_url = helm_release(
        "by-url",
        &ns,
        serde_json::json!({
            "chart": {"source": {"kind": "https-url", "spec": {
                "url": server.url("hello-0.1.0.tgz"), "sha256": digest}}},
        }),
    );
    api.create(&PostParams::default(), &by_url).await.unwrap();
    wait_for(
        &api,
        "by-url",
        &operator,
        "Ready from a reloaded source plugin",
        long,
        ready,
    )
    .await;
    assert!(
        operator.log().contains("source kinds"),
        "{}",
        operator.log()
    );
    assert_eq!(operator.pid(), pid);
    operator.stop();
}
