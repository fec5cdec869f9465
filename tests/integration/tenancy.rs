//! Tenancy and safety against the real control plane. A HelmRelease may only read Secrets and
//! ConfigMaps of its own namespace unless the operator's configuration opts in
//! (`allowCrossNamespaceRefs: true`); uninstall deletes only what is still the release's; a
//! failing uninstall does not hold its HelmRelease forever.

use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Uninstall deletes only objects whose Helm ownership metadata still names the release:
/// a ConfigMap of the chart's name that someone else recreated (no Helm metadata) and a
/// Service another release took over survive; the release's own objects are deleted.
pub async fn uninstall_leaves_objects_that_are_not_the_releases(cluster: Arc<Cluster>) {
    use crate::release_helm3::{capstan_ok, shop_chart, succeeded};
    use crate::release_helm3_lifecycle::release_sync;
    let namespace = cluster.create_namespace("owned").await;
    let dir = tempfile::tempdir().unwrap();
    let chart = shop_chart(dir.path());
    let flags = ["--set", "extra=true"];
    let out = release_sync(&cluster, dir.path(), "shop", &namespace, &chart, &flags);
    succeeded(&["release", "sync"], out);
    // Someone replaces the settings ConfigMap with their own, and another release takes
    // the Service over.
    cluster.run(
        "kubectl",
        &["delete", "configmap", "shop-settings", "-n", &namespace],
    );
    cluster.run(
        "kubectl",
        &[
            "create",
            "configmap",
            "shop-settings",
            "-n",
            &namespace,
            "--from-literal=owner=someone-else",
        ],
    );
    cluster.run(
        "kubectl",
        &[
            "annotate",
            "--overwrite",
            "service",
            "shop",
            "-n",
            &namespace,
            "meta.helm.sh/release-name=other",
        ],
    );
    let out = capstan_ok(
        &cluster,
        dir.path(),
        &[
            "release",
            "uninstall",
            "--name",
            "shop",
            "--namespace",
            &namespace,
        ],
    );
    assert!(out.contains("uninstalled"), "{out}");
    let left = cluster.run(
        "kubectl",
        &["get", "configmaps,services", "-n", &namespace, "-o", "name"],
    );
    let mut left: Vec<&str> = left
        .lines()
        .filter(|l| !l.contains("kube-root-ca.crt"))
        .collect();
    left.sort();
    // The release's own `shop-extra` ConfigMap is gone; the other two are not its own.
    assert_eq!(left, ["configmap/shop-settings", "service/shop"]);
    let owner = cluster.run(
        "kubectl",
        &[
            "get",
            "configmap",
            "shop-settings",
            "-n",
            &namespace,
            "-o",
            "jsonpath={.data.owner}",
        ],
    );
    assert_eq!(owner, "someone-else");
}

/// A HelmRelease whose uninstall can never succeed (it names a backend the configuration
/// does not have) is not kept forever: after `--uninstall-deadline` the finalizer is
/// removed and an `UninstallAbandoned` Warning says what kept failing.
pub async fn a_failing_uninstall_releases_the_finalizer_after_the_deadline(cluster: Arc<Cluster>) {
    use k8s_openapi::api::core::v1::Event;
    use kube::api::{DeleteParams, ListParams};
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let namespace = cluster.create_namespace("stuck").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &namespace);
    let hr = helm_release(
        "stuck",
        &namespace,
        serde_json::json!({
            "chart": {"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"},
            "backend": "retired",
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let operator = Operator::start(&cluster, dir.path(), &["--uninstall-deadline", "3"]);
    let stalled = wait_for(
        &api,
        "stuck",
        &operator,
        "a stall",
        Duration::from_secs(60),
        |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "BackendNotConfigured"),
    )
    .await;
    assert!(
        stalled
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty()),
        "the operator holds a finalizer"
    );
    api.delete("stuck", &DeleteParams::default()).await.unwrap();
    crate::helmrelease::wait_gone(&api, "stuck", &operator).await;
    let events: Api<Event> = Api::namespaced(client, &namespace);
    let abandoned: Vec<Event> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("UninstallAbandoned"))
        .collect();
    assert_eq!(abandoned.len(), 1, "{abandoned:?}");
    let note = abandoned[0].message.clone().unwrap_or_default();
    assert!(
        note.contains("retired") && note.contains("--uninstall-deadline"),
        "{note}"
    );
}

/// Impersonation: a release naming `serviceAccountName` acts with that account's rights
/// only. Account `deployer` may manage ConfigMaps and Secrets in its namespace and nothing
/// else: a chart that also makes a ClusterRole fails with the API server's refusal naming
/// the call and the account, and creates nothing; the same chart without the ClusterRole is
/// Ready. With `defaultServiceAccount: deployer` (lock-down), a release naming no account
/// is held to the same rights.
pub async fn a_release_acts_only_with_its_service_accounts_rights(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let tenant = cluster.create_namespace("imp").await;
    let rbac = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: deployer, namespace: {tenant}}}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: deployer, namespace: {tenant}}}\n\
         rules:\n- apiGroups: [\"\"]\n  resources: [configmaps, secrets]\n  verbs: [get, list, watch, create, update, patch, delete]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: deployer, namespace: {tenant}}}\n\
         roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}}\n\
         subjects:\n- {{kind: ServiceAccount, name: deployer, namespace: {tenant}}}\n"
    );
    let rbac_file = dir.path().join("rbac.yaml");
    std::fs::write(&rbac_file, rbac).unwrap();
    cluster.run("kubectl", &["apply", "-f", rbac_file.to_str().unwrap()]);
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  a: b\n";
    let cluster_role = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {tenant}-escalate\nrules: []\n"
    );
    let url = crate::hostile::charts_repository(
        dir.path(),
        "charts-repo",
        &[
            (
                "greedy",
                &[("cm.yaml", config_map), ("clusterrole.yaml", &cluster_role)],
            ),
            ("modest", &[("cm.yaml", config_map)]),
        ],
    );
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &tenant);
    let release = |name: &str, chart: &str, account: Option<&str>| {
        let mut spec = serde_json::json!({"chart": {"git": url, "ref": "main", "path": chart}});
        if let Some(account) = account {
            spec["serviceAccountName"] = serde_json::json!(account);
        }
        helm_release(name, &tenant, spec)
    };
    api.create(
        &PostParams::default(),
        &release("greedy", "greedy", Some("deployer")),
    )
    .await
    .unwrap();
    api.create(
        &PostParams::default(),
        &release("modest", "modest", Some("deployer")),
    )
    .await
    .unwrap();
    // ClusterRoles are a kind the operator may touch; the account may not.
    let flags = [
        "--allow-cluster-kind",
        "ClusterRole.rbac.authorization.k8s.io",
    ];
    let mut operator = Operator::start(&cluster, dir.path(), &flags);
    let long = Duration::from_secs(120);
    wait_for(&api, "modest", &operator, "Ready", long, ready).await;
    let refused = |hr: &HelmRelease| {
        condition(hr, "Ready")
            .is_some_and(|c| c.status == "False" && c.message.contains("forbidden"))
    };
    let greedy_hr = wait_for(&api, "greedy", &operator, "a refusal", long, refused).await;
    let message = &condition(&greedy_hr, "Ready").unwrap().message;
    assert!(
        message.contains(&format!("system:serviceaccount:{tenant}:deployer"))
            && message.contains("clusterroles"),
        "{message}"
    );
    let settings = cluster.run(
        "kubectl",
        &["get", "configmaps", "-n", &tenant, "-o", "name"],
    );
    assert!(
        settings.contains(&format!("configmap/{tenant}-modest-settings")),
        "{settings}"
    );
    assert!(
        !settings.contains("greedy-settings"),
        "the refused release created nothing: {settings}"
    );
    let roles = cluster.run("kubectl", &["get", "clusterroles", "-o", "name"]);
    assert!(
        !roles.contains(&format!("{tenant}-escalate")),
        "no ClusterRole was made"
    );
    operator.stop();

    // Lock-down: the configuration's default account for a release naming none.
    let config = format!(
        "{}defaultServiceAccount: deployer\n",
        Operator::config_with("")
    );
    api.create(&PostParams::default(), &release("unnamed", "greedy", None))
        .await
        .unwrap();
    let operator = Operator::start_with_config(&cluster, dir.path(), &config, &flags);
    let unnamed = wait_for(&api, "unnamed", &operator, "a refusal", long, refused).await;
    let message = &condition(&unnamed, "Ready").unwrap().message;
    assert!(
        message.contains(&format!("system:serviceaccount:{tenant}:deployer")),
        "{message}"
    );
    let roles = cluster.run("kubectl", &["get", "clusterroles", "-o", "name"]);
    assert!(
        !roles.contains(&format!("{tenant}-escalate")),
        "no ClusterRole was made"
    );
}

/// Losing the release Lease stops the operation it guarded at once: a `capstan release
/// sync --wait` whose Lease another holder takes over fails within one renewal period
/// (10 s) naming the loss, instead of waiting out its 300 s timeout.
pub async fn an_operation_whose_release_lease_is_taken_over_stops(cluster: Arc<Cluster>) {
    use crate::release_helm3::capstan_command;
    use crate::release_helm3_lifecycle::{chart, deployment};
    let namespace = cluster.create_namespace("lease-lost").await;
    let dir = tempfile::tempdir().unwrap();
    // Never ready: the wait would last the whole timeout.
    let web = deployment("taken-web", false);
    let chart = chart(dir.path(), "taken", &[("templates/deployment.yaml", &web)]);
    let sync = [
        "release",
        "sync",
        "--name",
        "taken",
        "--namespace",
        &namespace,
        "--chart",
        chart.to_str().unwrap(),
        "--wait",
        "--timeout",
        "300",
    ];
    let child = capstan_command(&cluster, dir.path(), None, &sync)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(cluster.client().await, &namespace);
    let deadline = Instant::now() + Duration::from_secs(60);
    while leases
        .get_opt("capstan.release.taken")
        .await
        .unwrap()
        .is_none()
    {
        assert!(Instant::now() < deadline, "the sync never took its Lease");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    cluster.run(
        "kubectl",
        &[
            "patch",
            "lease",
            "capstan.release.taken",
            "-n",
            &namespace,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"holderIdentity":"another-operator"}}"#,
        ],
    );
    let taken_at = Instant::now();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stopped_after = taken_at.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the sync went on");
    assert!(
        stderr.contains(&format!(
            "the lock of release {namespace}/taken (Lease capstan.release.taken) was lost while the operation ran (taken over by another operation)"
        )),
        "{stderr}"
    );
    // Behaviour, not speed: stopped by the loss (one renewal period), not by the timeout.
    assert!(
        stopped_after < Duration::from_secs(120),
        "stopped after {stopped_after:?}"
    );
}

/// The egress guard with its default configuration (public addresses only, no local
/// paths): a git source in a local folder, a Helm repository at the cloud metadata address
/// and one at `localhost` are each refused with the address and the rule named, and
/// nothing is installed; the operator's configuration allowing local paths makes the git
/// release Ready.
pub async fn sources_reach_only_what_the_egress_guard_allows(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let namespace = cluster.create_namespace("egress").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &namespace);
    let releases = [
        (
            "local",
            serde_json::json!({"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"}),
            "is a path on the operator's own disk; allow local paths in the configuration's sources.egress.allowLocalPaths",
        ),
        (
            "metadata",
            serde_json::json!({"repository": "http://169.254.169.254/charts/", "name": "hello", "version": "0.1.0"}),
            "egress to 169.254.169.254 refused: it resolves to 169.254.169.254, a link-local address",
        ),
        (
            "loopback",
            serde_json::json!({"repository": "http://localhost:9/charts/", "name": "hello", "version": "0.1.0"}),
            "egress to localhost refused: it resolves to",
        ),
    ];
    for (name, chart, _) in &releases {
        let hr = helm_release(name, &namespace, serde_json::json!({ "chart": chart }));
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let strict = Operator::config_with("").replace(
        "allowNetworks: [127.0.0.1], allowLocalPaths: true",
        "allowNetworks: [], allowLocalPaths: false",
    );
    let mut operator = Operator::start_with_config(&cluster, dir.path(), &strict, &[]);
    for (name, _, expected) in &releases {
        let refused = wait_for(
            &api,
            name,
            &operator,
            "an egress refusal",
            Duration::from_secs(60),
            |hr| {
                condition(hr, "Ready")
                    .is_some_and(|c| c.status == "False" && c.message.contains(expected))
            },
        )
        .await;
        let message = &condition(&refused, "Ready").unwrap().message;
        assert!(message.contains("sources.egress"), "{name}: {message}");
    }
    let listed = cluster.run("helm", &["list", "-n", &namespace, "-q"]);
    assert!(listed.trim().is_empty(), "nothing installed: {listed}");
    operator.stop();

    // Allowed by configuration: the git release in a local folder installs.
    let operator = Operator::start(&cluster, dir.path(), &[]);
    wait_for(
        &api,
        "local",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
}

/// A release Lease held by another host whose clock runs an hour behind: its `renewTime`
/// looks long expired, but the holder keeps renewing it (its resourceVersion changes), so
/// the operator, judging by observation, never takes it over and installs nothing; once the
/// renewals stop, the operator takes the Lease after the lease duration and the release
/// becomes Ready.
pub async fn a_renewed_release_lease_is_respected_whatever_its_clock_says(cluster: Arc<Cluster>) {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::{SignedDuration, Timestamp};
    use kube::api::{Patch, PatchParams};
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let namespace = cluster.create_namespace("skew").await;
    let client = cluster.client().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
    let lease_name = format!("capstan.release.{namespace}-web");
    let an_hour_ago = MicroTime(Timestamp::now() - SignedDuration::from_hours(1));
    let lease: Lease = serde_json::from_value(serde_json::json!({
        "metadata": {"name": lease_name},
        "spec": {
            "holderIdentity": "skewed-host/1 sync #00000000",
            "leaseDurationSeconds": 30,
            "acquireTime": an_hour_ago,
            "renewTime": an_hour_ago,
        },
    }))
    .unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
    // The other host renews every 3 s, its renewTime still an hour behind.
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let renewer = {
        let leases = leases.clone();
        let lease_name = lease_name.clone();
        tokio::spawn(async move {
            let mut renewal = 0u32;
            loop {
                renewal += 1;
                let patch = serde_json::json!({"metadata": {"annotations": {"renewal": renewal.to_string()}}});
                leases
                    .patch(&lease_name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .unwrap();
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(3)) => {}
                    _ = stopped.changed() => return,
                }
            }
        })
    };
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &namespace);
    let hr = helm_release(
        "web",
        &namespace,
        serde_json::json!({"chart": {"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"}}),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let operator = Operator::start(&cluster, dir.path(), &[]);
    // Longer than the lease duration plus a reconcile: a clock-based judge would have taken
    // the Lease long ago.
    tokio::time::sleep(Duration::from_secs(45)).await;
    let listed = cluster.run("helm", &["list", "-n", &namespace, "-q"]);
    assert!(
        listed.trim().is_empty(),
        "the held release was not touched: {listed}"
    );
    let held = leases.get(&lease_name).await.unwrap();
    assert_eq!(
        held.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("skewed-host/1 sync #00000000")
    );
    let current = api.get("web").await.unwrap();
    assert!(
        !ready(&current),
        "not Ready while another host holds the release"
    );

    // The other host stops renewing: the Lease is taken over after the lease duration.
    stop.send(true).unwrap();
    renewer.await.unwrap();
    let stopped_at = Instant::now();
    wait_for(
        &api,
        "web",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    eprintln!(
        "release Lease taken over {:.1}s after its renewals stopped",
        stopped_at.elapsed().as_secs_f64()
    );
}
