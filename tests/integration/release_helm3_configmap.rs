//! `backend-helm3` with Helm's ConfigMap storage driver (`HELM_DRIVER=configmap` in the
//! plugin's WASI env grant), checked with the real `helm` CLI using the same driver: our
//! records are the ConfigMaps Helm writes, Helm's upgrades and ours continue one history,
//! pruning, rollback and uninstall act on ConfigMaps, and no release Secret is ever written.

use std::path::Path;
use std::sync::Arc;

use capstan_helm::release;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use crate::harness::{Cluster, run};
use crate::release_helm3::{capstan_with_driver, shop_chart, succeeded, write};

const DRIVER: &str = "configmap";

/// `capstan` with the ConfigMap driver; its stdout, which must have succeeded.
fn capstan_cm(cluster: &Cluster, dir: &Path, args: &[&str]) -> String {
    succeeded(args, capstan_with_driver(cluster, dir, Some(DRIVER), args))
}

/// Real `helm` with `HELM_DRIVER=configmap`, JSON output.
fn helm_cm(cluster: &Cluster, args: &[&str]) -> Value {
    let text = run(cluster
        .command("helm")
        .env("HELM_DRIVER", DRIVER)
        .args(args))
    .unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("helm {args:?}: {e}\n{text}"))
}

/// `(revision, status, description)` of each entry of `helm history -o json`.
fn summary(history: &Value) -> Vec<(i64, String, String)> {
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["revision"].as_i64().unwrap(),
                h["status"].as_str().unwrap().to_owned(),
                h["description"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn entry(revision: i64, status: &str, description: &str) -> (i64, String, String) {
    (revision, status.to_owned(), description.to_owned())
}

/// Release records (`owner=helm`) that are ConfigMaps, by name.
async fn record_config_maps(config_maps: &Api<ConfigMap>) -> Vec<ConfigMap> {
    let mut items = config_maps
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap()
        .items;
    items.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    items
}

async fn assert_no_release_secret(secrets: &Api<Secret>, when: &str) {
    let records = secrets
        .list(&ListParams::default().labels("owner=helm"))
        .await
        .unwrap();
    assert!(
        records.items.is_empty(),
        "{when}: a release Secret exists: {:?}",
        records
            .items
            .iter()
            .map(|s| s.metadata.name.clone())
            .collect::<Vec<_>>()
    );
}

pub async fn capstan_release_configmap_driver_shares_history_with_helm(cluster: Arc<Cluster>) {
    let namespace = cluster.create_namespace("rel3-cm").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    let chart_arg = chart.to_str().unwrap();
    let v1 = dir.path().join("v1.yaml");
    write(&v1, "greeting: hi\nextra: true\n");
    let v2 = dir.path().join("v2.yaml");
    write(&v2, "greeting: bye\n");
    let (v1_arg, v2_arg) = (v1.to_str().unwrap(), v2.to_str().unwrap());
    let base = ["--name", "shop", "--namespace", namespace.as_str()];
    let sync = |values: &str, extra: &[&str]| -> String {
        capstan_cm(
            &cluster,
            dir.path(),
            &[
                &["release", "sync"][..],
                &base,
                &["--chart", chart_arg, "-f", values],
                extra,
            ]
            .concat(),
        )
    };
    let client = cluster.client().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let secrets: Api<Secret> = Api::namespaced(client, &namespace);

    // Capstan installs and upgrades.
    let out = sync(v1_arg, &[]);
    assert!(out.contains("installed: revision 1 deployed"), "{out}");
    assert!(config_maps.get_opt("shop-extra").await.unwrap().is_some());
    let out = sync(v2_arg, &[]);
    assert!(out.contains("upgraded: revision 2 deployed"), "{out}");
    assert!(config_maps.get_opt("shop-extra").await.unwrap().is_none());
    assert_no_release_secret(&secrets, "after install and upgrade").await;

    // The records are Helm's ConfigMaps: name, labels, `data.release`, no type.
    let records = record_config_maps(&config_maps).await;
    let names: Vec<_> = records
        .iter()
        .map(|r| r.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        ["sh.helm.release.v1.shop.v1", "sh.helm.release.v1.shop.v2"]
    );
    for (record, (version, status, stamp)) in records.iter().zip([
        ("1", "superseded", "modifiedAt"),
        ("2", "deployed", "createdAt"),
    ]) {
        let labels = record.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels["name"], "shop", "{labels:?}");
        assert_eq!(labels["owner"], "helm", "{labels:?}");
        assert_eq!(labels["status"], status, "{labels:?}");
        assert_eq!(labels["version"], version, "{labels:?}");
        assert!(
            labels[stamp]
                .parse::<u64>()
                .is_ok_and(|t| t > 1_700_000_000),
            "{labels:?}"
        );
        let data = record.data.clone().unwrap_or_default();
        assert_eq!(data.keys().collect::<Vec<_>>(), ["release"]);
        assert!(record.binary_data.is_none());
        let decoded = release::decode(&data["release"]).unwrap();
        assert_eq!(decoded.version.to_string(), version);
        assert_eq!(decoded.status().as_str(), status);
        assert_eq!(decoded.namespace, namespace);
    }

    // Real helm with the same driver sees the release; with its default driver it does not.
    let listed = helm_cm(&cluster, &["list", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed[0]["name"], "shop", "{listed}");
    assert_eq!(listed[0]["status"], "deployed", "{listed}");
    assert_eq!(listed[0]["revision"], "2", "{listed}");
    assert_eq!(listed[0]["chart"], "shop-0.1.0", "{listed}");
    let history = helm_cm(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(
        summary(&history),
        [
            entry(1, "superseded", "Install complete"),
            entry(2, "deployed", "Upgrade complete")
        ],
        "{history}"
    );
    let values = helm_cm(
        &cluster,
        &["get", "values", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(values, serde_json::json!({"greeting": "bye"}));
    let by_secrets = cluster.run("helm", &["list", "-a", "-n", &namespace, "-o", "json"]);
    assert_eq!(
        by_secrets.trim(),
        "[]",
        "helm's Secret driver found records"
    );

    // Real helm upgrades (revision 3); Capstan continues the history (revision 4), pruning
    // to 3 revisions as it writes.
    run(cluster.command("helm").env("HELM_DRIVER", DRIVER).args([
        "upgrade",
        "shop",
        chart_arg,
        "-n",
        &namespace,
        "--set",
        "greeting=helm",
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
    let settings = config_maps.get("shop-settings").await.unwrap();
    let uid = settings.metadata.uid.clone();
    assert_eq!(settings.data.unwrap_or_default()["greeting"], "helm");
    let status = capstan_cm(
        &cluster,
        dir.path(),
        &[&["release", "status"][..], &base].concat(),
    );
    assert!(status.contains("REVISION: 3"), "{status}");
    assert!(status.contains("STATUS: deployed"), "{status}");
    let out = sync(v2_arg, &["--max-history", "3"]);
    assert!(out.contains("upgraded: revision 4 deployed"), "{out}");
    let settings = config_maps.get("shop-settings").await.unwrap();
    assert_eq!(settings.metadata.uid, uid, "the ConfigMap was recreated");
    let data = settings.data.unwrap_or_default();
    assert_eq!(data["greeting"], "bye");
    assert_eq!(data["revision"], "4");
    let history = helm_cm(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(
        summary(&history),
        [
            entry(2, "superseded", "Upgrade complete"),
            entry(3, "superseded", "Upgrade complete"),
            entry(4, "deployed", "Upgrade complete")
        ],
        "{history}"
    );

    // Capstan rolls back to Helm's revision 3; helm sees revision 5.
    let out = capstan_cm(
        &cluster,
        dir.path(),
        &[&["release", "rollback"][..], &base, &["--revision", "3"]].concat(),
    );
    assert!(out.contains("rolled back: revision 5 deployed"), "{out}");
    let history = helm_cm(
        &cluster,
        &["history", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(
        summary(&history).last(),
        Some(&entry(5, "deployed", "Rollback to 3")),
        "{history}"
    );
    let values = helm_cm(
        &cluster,
        &["get", "values", "shop", "-n", &namespace, "-o", "json"],
    );
    assert_eq!(values, serde_json::json!({"greeting": "helm"}));
    assert_no_release_secret(&secrets, "after helm's upgrade and capstan's").await;

    // A driver the backend does not keep records with is refused, naming what is accepted.
    let out = capstan_with_driver(
        &cluster,
        dir.path(),
        Some("sql"),
        &[&["release", "status"][..], &base].concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "HELM_DRIVER=sql was accepted");
    assert!(
        stderr.contains("HELM_DRIVER \"sql\" is not supported"),
        "{stderr}"
    );
    assert!(stderr.contains("\"configmap\""), "{stderr}");

    // Uninstall removes every record ConfigMap; helm lists nothing.
    let out = capstan_cm(
        &cluster,
        dir.path(),
        &[&["release", "uninstall"][..], &base].concat(),
    );
    assert!(out.contains("uninstalled"), "{out}");
    let listed = helm_cm(&cluster, &["list", "-a", "-n", &namespace, "-o", "json"]);
    assert_eq!(listed, serde_json::json!([]), "{listed}");
    let left: Vec<_> = record_config_maps(&config_maps)
        .await
        .into_iter()
        .map(|r| r.metadata.name)
        .collect();
    assert!(left.is_empty(), "release records left behind: {left:?}");
    assert!(
        config_maps
            .get_opt("shop-settings")
            .await
            .unwrap()
            .is_none()
    );
    assert_no_release_secret(&secrets, "after uninstall").await;
}
