//! End-to-end: `capstan run` against the real control plane keeps HelmReleases in line —
//! git sources (real repositories on disk), values from ConfigMaps, upgrades only when
//! something changed, a broken chart reported without disturbing others, uninstall on
//! delete — checked with the real `helm` CLI.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::api::{HelmRelease, ReleaseAction, RemediationStrategy};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};

use crate::git_support::git;
use crate::harness::{Cluster, copy_dir, namespaced_crd, repo_root};

/// A `capstan run` process owned by a test: SIGTERM (then SIGKILL) on drop.
pub struct Operator {
    child: Option<Child>,
    log: PathBuf,
    port: u16,
}

impl Operator {
    /// Start the operator with every product plugin, caches in `dir`, and `extra` flags.
    pub fn start(cluster: &Cluster, dir: &Path, extra: &[&str]) -> Operator {
        Operator::start_with(cluster, dir, "", extra)
    }

    /// [`Operator::start`] with more plugin entries (YAML list items, one per line, each
    /// starting with `- `) after the product plugins.
    pub fn start_with(
        cluster: &Cluster,
        dir: &Path,
        extra_plugins: &str,
        extra: &[&str],
    ) -> Operator {
        let config = Operator::config_with(extra_plugins);
        Operator::start_with_config(cluster, dir, &config, extra)
    }

    /// The configuration [`Operator::start_with`] runs with: every product plugin, then
    /// `extra_plugins`; append top-level settings to it.
    pub fn config_with(extra_plugins: &str) -> String {
        format!(
            "cacheDir: {cache}\nplugins:\n{sources}\
             - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm, limits: {{memoryMib: 512, timeoutMs: 120000}}}}\n\
             {extra_plugins}\
             backends: {{default: helm3, v3: helm3}}\n\
             # The test servers and repositories are on 127.0.0.1 and in local folders.\n\
             sources: {{egress: {{allowNetworks: [127.0.0.1], allowLocalPaths: true}}}}\n",
            // One compiled-component cache for every test run: compiling is not what is tested.
            cache = Operator::cache_dir().display(),
            sources = Operator::product_plugins(),
            p = repo_root().join("target/plugins").display()
        )
    }

    /// The product source plugin entries (YAML list items).
    pub fn product_plugins() -> String {
        let p = repo_root().join("target/plugins");
        format!(
            "- {{name: git, world: source, path: {p}/source-git.wasm}}\n\
             - {{name: helm-repo, world: source, path: {p}/source-helm-repo.wasm}}\n\
             - {{name: oci, world: source, path: {p}/source-oci.wasm}}\n",
            p = p.display()
        )
    }

    /// The test-wide compiled-component cache.
    pub fn cache_dir() -> PathBuf {
        repo_root().join("target/capstan-cache")
    }

    /// Start the operator with the configuration text `config`, written to
    /// [`Operator::config_path`] in `dir` (rewrite it to reload).
    pub fn start_with_config(
        cluster: &Cluster,
        dir: &Path,
        config: &str,
        extra: &[&str],
    ) -> Operator {
        Operator::spawn(cluster, dir, config, extra, &[])
    }

    /// [`Operator::start`] with environment variables `env` (e.g. `FAILPOINTS`).
    pub fn start_with_env(cluster: &Cluster, dir: &Path, env: &[(&str, &str)]) -> Operator {
        Operator::spawn(cluster, dir, &Operator::config_with(""), &[], env)
    }

    fn spawn(
        cluster: &Cluster,
        dir: &Path,
        config: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Operator {
        let config_path = Operator::config_path(dir);
        std::fs::write(&config_path, config).unwrap();
        let log = dir.join(format!(
            "operator-{}.log",
            Instant::now().elapsed().as_nanos()
        ));
        let log_file = std::fs::File::create(&log).unwrap();
        let port = crate::operator::free_port();
        let child = Command::new(repo_root().join("target/debug/capstan"))
            .args(["run", "--config"])
            .arg(&config_path)
            .args(["--metrics-address", &format!("127.0.0.1:{port}")])
            .args(["--source-interval", "2", "--resync-interval", "30"])
            .args(["--shutdown-grace", "20"])
            .args(extra)
            .env("KUBECONFIG", cluster.kubeconfig())
            .env("RUST_LOG", "info")
            .env("XDG_CACHE_HOME", dir.join("xdg"))
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .unwrap();
        Operator {
            child: Some(child),
            log,
            port,
        }
    }

    /// The value of an unlabelled metric on /metrics, when served.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let (_, body) = crate::operator::http_get(self.port, "/metrics")?;
        body.lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Where [`Operator::start_with_config`] writes the configuration in `dir`.
    pub fn config_path(dir: &Path) -> PathBuf {
        dir.join("capstan.yaml")
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The port of its /metrics endpoint.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Everything the operator logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stop it: SIGTERM, then SIGKILL after 30 s. Returns its log.
    pub fn stop(&mut self) -> String {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.log()
    }

    /// Kill it without warning (SIGKILL), as a node failure would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Apply the committed CRD (what `deploy/` installs).
pub fn install_crd(cluster: &Cluster) {
    let crd = repo_root().join("deploy/crds/helmreleases.yaml");
    cluster.run("kubectl", &["apply", "-f", crd.to_str().unwrap()]);
    cluster.run(
        "kubectl",
        &[
            "wait",
            "--for=condition=Established",
            "crd/helmreleases.helm.capstan.dev",
            "--timeout=30s",
        ],
    );
}

pub fn condition<'a>(hr: &'a HelmRelease, type_: &str) -> Option<&'a capstan::api::Condition> {
    hr.status.as_ref().and_then(|s| s.condition(type_))
}

/// Poll `name` until `check` holds; panic with its status and the operator's log otherwise.
pub async fn wait_for(
    api: &Api<HelmRelease>,
    name: &str,
    operator: &Operator,
    what: &str,
    timeout: Duration,
    check: impl Fn(&HelmRelease) -> bool,
) -> HelmRelease {
    let deadline = Instant::now() + timeout;
    loop {
        let current = api.get_opt(name).await.unwrap();
        if let Some(hr) = &current
            && check(hr)
        {
            return hr.clone();
        }
        if Instant::now() > deadline {
            let log = operator.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "{name}: timed out waiting for {what}; generation {:?}, status: {:#?}\noperator log (last lines):\n{}",
                current.as_ref().and_then(|h| h.metadata.generation),
                current.and_then(|h| h.status),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub fn ready(hr: &HelmRelease) -> bool {
    condition(hr, "Ready").is_some_and(|c| c.status == "True")
        && hr.status.as_ref().and_then(|s| s.observed_generation) == hr.metadata.generation
}

fn revision(hr: &HelmRelease) -> Option<i64> {
    hr.status.as_ref().and_then(|s| s.revision)
}

pub fn helm_revisions(cluster: &Cluster, release: &str, namespace: &str) -> usize {
    let out = cluster
        .command("helm")
        .args(["history", release, "-n", namespace, "-o", "json"])
        .output()
        .unwrap();
    if !out.status.success() {
        return 0;
    }
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout)
        .map(|h| h.len())
        .unwrap_or(0)
}

/// A git repository holding the example chart under `charts/hello`, a broken chart under
/// `charts/broken`, and a README outside both.
pub fn chart_repository(dir: &Path) -> PathBuf {
    let repo = dir.join("charts-repo");
    std::fs::create_dir_all(repo.join("charts")).unwrap();
    git(&repo, &["init", "-q"]);
    copy_dir(
        &repo_root().join("deploy/examples/charts/hello"),
        &repo.join("charts/hello"),
    );
    let broken = repo.join("charts/broken");
    std::fs::create_dir_all(broken.join("templates")).unwrap();
    std::fs::write(
        broken.join("Chart.yaml"),
        "apiVersion: v2\nname: broken\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        broken.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: {{ required \"value `a` is required\" .Values.a }}\n",
    )
    .unwrap();
    std::fs::write(repo.join("README.md"), "charts\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "charts"]);
    repo
}

pub fn helm_release(name: &str, namespace: &str, spec: serde_json::Value) -> HelmRelease {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "helm.capstan.dev/v1alpha1",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }))
    .unwrap()
}

pub async fn patch_spec(api: &Api<HelmRelease>, name: &str, spec: serde_json::Value) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({ "spec": spec })),
    )
    .await
    .unwrap();
}

pub async fn helmrelease_from_git_follows_values_commits_and_configmaps(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-git").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), &ns);
    let values_cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "hello-values"}, "data": {"values.yaml": "replicaCount: 2\nmessage: from the configmap\n"}}),
    )
    .unwrap();
    config_maps
        .create(&PostParams::default(), &values_cm)
        .await
        .unwrap();
    let hello = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "valuesFrom": [{"configMapKeyRef": {"name": "hello-values"}}],
            "values": {"message": "one"},
        }),
    );
    let broken = helm_release(
        "broken",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/broken"},
            "install": {"remediation": {"retries": 1}},
        }),
    );
    api.create(&PostParams::default(), &hello).await.unwrap();
    api.create(&PostParams::default(), &broken).await.unwrap();
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let release = format!("{ns}-hello");
    let long = Duration::from_secs(120);

    // Installed: Ready, and real helm sees the release with our values.
    let hr = wait_for(&api, "hello", &operator, "Ready", long, ready).await;
    assert_eq!(revision(&hr), Some(1));
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains(&format!("\"name\":\"{release}\"")), "{list}");
    assert!(list.contains("\"status\":\"deployed\""), "{list}");
    let values = cluster.run(
        "helm",
        &["get", "values", &release, "-n", &ns, "-o", "json"],
    );
    let values: serde_json::Value = serde_json::from_str(&values).unwrap();
    assert_eq!(values["message"], "one");
    assert_eq!(values["replicaCount"], 2);
    let deployment = cluster.run(
        "kubectl",
        &[
            "get",
            "deployment",
            &format!("{release}-hello"),
            "-n",
            &ns,
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    );
    assert_eq!(deployment, "2");

    // The broken chart is reported with the template and line; the other release is fine.
    let broken = wait_for(&api, "broken", &operator, "a failed install", long, |hr| {
        condition(hr, "Released")
            .is_some_and(|c| c.status == "False" && c.reason == "InstallFailed")
    })
    .await;
    let message = &condition(&broken, "Ready").unwrap().message;
    assert_eq!(condition(&broken, "Ready").unwrap().status, "False");
    assert!(
        message.contains("broken/templates/cm.yaml:6") && message.contains("value `a` is required"),
        "{message}"
    );
    assert_eq!(helm_revisions(&cluster, &format!("{ns}-broken"), &ns), 0);

    // A second HelmRelease naming the same release is refused; the release is untouched.
    let twin = helm_release(
        "twin",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "releaseName": release,
            "values": {"message": "twin"},
        }),
    );
    api.create(&PostParams::default(), &twin).await.unwrap();
    let refused = wait_for(&api, "twin", &operator, "a release conflict", long, |hr| {
        condition(hr, "Stalled").is_some_and(|c| c.reason == "ReleaseConflict")
    })
    .await;
    let message = &condition(&refused, "Stalled").unwrap().message;
    assert!(
        message.contains(&format!("managed by HelmRelease {ns}/hello")),
        "{message}"
    );
    api.delete("twin", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "twin", &operator).await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 1);

    // New values → revision 2.
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"values": {"message": "two"}}),
    )
    .await;
    wait_for(&api, "hello", &operator, "revision 2", long, |hr| {
        ready(hr) && revision(hr) == Some(2)
    })
    .await;

    // A commit outside the chart path: no new revision after several source intervals.
    std::fs::write(repo.join("README.md"), "charts, updated\n").unwrap();
    git(&repo, &["commit", "-qam", "docs"]);
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 2);

    // A commit to the chart → revision 3.
    let chart_values = repo.join("charts/hello/values.yaml");
    let text = std::fs::read_to_string(&chart_values).unwrap();
    std::fs::write(
        &chart_values,
        text.replace("tag: \"1.27\"", "tag: \"1.28\""),
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "hello: nginx 1.28"]);
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 3 (chart commit)",
        long,
        |hr| ready(hr) && revision(hr) == Some(3),
    )
    .await;

    // The referenced ConfigMap changes → revision 4.
    config_maps
        .patch(
            "hello-values",
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"data": {"values.yaml": "replicaCount: 3\n"}})),
        )
        .await
        .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 4 (configmap)",
        long,
        |hr| ready(hr) && revision(hr) == Some(4),
    )
    .await;

    // 100 requested reconciles of an unchanged release: no new revision.
    for i in 0..100 {
        api.patch(
            "hello",
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"metadata": {"annotations": {"capstan.dev/reconcile-at": format!("{i}")}}})),
        )
        .await
        .unwrap();
    }
    wait_for(
        &api,
        "hello",
        &operator,
        "the last reconcile request handled",
        long,
        |hr| {
            hr.status
                .as_ref()
                .and_then(|s| s.last_handled_reconcile_at.as_deref())
                == Some("99")
        },
    )
    .await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 4);
    // Every request was taken by a worker: the queue drains (the metric is exported and
    // does not keep handled triggers).
    let mut depth = None;
    for _ in 0..60 {
        depth = operator.metric("capstan_reconcile_queue_depth");
        if depth == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(depth, Some(0.0), "queue depth after the burst");

    // The broken release retried once (install.remediation.retries: 1), then stalled,
    // leaving nothing behind.
    let stalled = wait_for(&api, "broken", &operator, "Stalled", long, |hr| {
        condition(hr, "Stalled").is_some_and(|c| c.status == "True")
    })
    .await;
    let status = stalled.status.unwrap();
    assert_eq!(status.install_failures, 2, "{status:?}");
    assert_eq!(helm_revisions(&cluster, &format!("{ns}-broken"), &ns), 0);
    let left = cluster.run(
        "kubectl",
        &[
            "get",
            "configmap",
            &format!("{ns}-broken"),
            "-n",
            &ns,
            "--ignore-not-found",
            "-o",
            "name",
        ],
    );
    assert_eq!(left, "");

    // Deleting the HelmRelease uninstalls the release and removes the finalizer.
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    let deadline = Instant::now() + long;
    while api.get_opt("hello").await.unwrap().is_some() {
        assert!(
            Instant::now() < deadline,
            "hello was never deleted:\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(helm_revisions(&cluster, &release, &ns), 0);
    let left = cluster.run(
        "kubectl",
        &[
            "get",
            "deployment,configmap,service",
            "-n",
            &ns,
            "-o",
            "name",
        ],
    );
    assert!(!left.contains(&format!("{release}-hello")), "{left}");
    api.delete("broken", &DeleteParams::default())
        .await
        .unwrap();
}

fn release_statuses(cluster: &Cluster, release: &str, namespace: &str) -> Vec<String> {
    let out = cluster
        .command("helm")
        .args(["history", release, "-n", namespace, "-o", "json"])
        .output()
        .unwrap();
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout)
        .unwrap_or_default()
        .iter()
        .map(|r| r["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub async fn helmrelease_converges_after_the_operator_is_killed_mid_install(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-crash").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    // Waits for a Deployment no node can run: the install stays in flight.
    let hello = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "wait": true,
            "timeout": 120,
            "values": {"nodeSelector": {"capstan.dev/no-such-node": "true"}},
        }),
    );
    api.create(&PostParams::default(), &hello).await.unwrap();
    let release = format!("{ns}-hello");
    let mut operator = Operator::start(&cluster, dir.path(), &[]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !release_statuses(&cluster, &release, &ns).contains(&"pending-install".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "the install never started:\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    operator.kill();
    assert_eq!(
        release_statuses(&cluster, &release, &ns),
        ["pending-install"]
    );

    // The spec is fixed while the operator is down; a new operator unlocks and converges.
    api.patch(
        "hello",
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({"spec": {"values": {"nodeSelector": null}}})),
    )
    .await
    .unwrap();
    let operator = Operator::start(&cluster, dir.path(), &[]);
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready after the restart",
        Duration::from_secs(180),
        ready,
    )
    .await;
    let statuses = release_statuses(&cluster, &release, &ns);
    assert!(
        statuses.iter().all(|s| !s.starts_with("pending")),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("deployed"),
        "{statuses:?}"
    );
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

pub async fn wait_gone(api: &Api<HelmRelease>, name: &str, operator: &Operator) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while api.get_opt(name).await.unwrap().is_some() {
        assert!(
            Instant::now() < deadline,
            "{name} was never deleted:\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub async fn only_the_leader_replica_acts(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-leader").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let lease_flags = [
        "--leader-election",
        "--lease-namespace",
        ns.as_str(),
        "--lease-name",
        "capstan",
    ];
    let first_dir = dir.path().join("a");
    let second_dir = dir.path().join("b");
    std::fs::create_dir_all(&first_dir).unwrap();
    std::fs::create_dir_all(&second_dir).unwrap();
    let mut first = Operator::start(&cluster, &first_dir, &lease_flags);
    let second = Operator::start(&cluster, &second_dir, &lease_flags);
    for name in ["one", "two", "three"] {
        let hr = helm_release(
            name,
            &ns,
            serde_json::json!({"chart": {"git": url, "ref": "main", "path": "charts/hello"}}),
        );
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    for name in ["one", "two", "three"] {
        wait_for(&api, name, &first, "Ready", Duration::from_secs(120), ready).await;
    }
    let actions = |op: &Operator| op.metric("capstan_release_actions_total").unwrap_or(0.0);
    let (a, b) = (actions(&first), actions(&second));
    assert!(
        (a >= 3.0 && b == 0.0) || (a == 0.0 && b >= 3.0),
        "actions: first {a}, second {b}\nfirst:\n{}\nsecond:\n{}",
        first.log(),
        second.log()
    );
    // The leader goes away without releasing the Lease; the other replica takes over once
    // it expires and serves a new release.
    let (leader, standby) = if a >= 3.0 {
        (&mut first, &second)
    } else {
        (&mut { second }, &first)
    };
    leader.kill();
    let hr = helm_release(
        "four",
        &ns,
        serde_json::json!({"chart": {"git": url, "ref": "main", "path": "charts/hello"}}),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    wait_for(
        &api,
        "four",
        standby,
        "Ready (served by the new leader)",
        Duration::from_secs(120),
        ready,
    )
    .await;
    assert!(actions(standby) >= 1.0);
    for name in ["one", "two", "three", "four"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in ["one", "two", "three", "four"] {
        wait_gone(&api, name, standby).await;
    }
}

/// Package `chart` at `version` into `repository` and re-index it with the real helm CLI.
pub fn publish(cluster: &Cluster, work: &Path, repository: &Path, version: &str) {
    let chart = work.join(format!("hello-{version}"));
    copy_dir(&repo_root().join("deploy/examples/charts/hello"), &chart);
    let manifest = chart.join("Chart.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("version: 0.1.0", &format!("version: {version}")),
    )
    .unwrap();
    cluster.run(
        "helm",
        &[
            "package",
            chart.to_str().unwrap(),
            "-d",
            repository.to_str().unwrap(),
        ],
    );
    cluster.run("helm", &["repo", "index", repository.to_str().unwrap()]);
}

pub async fn helmrelease_from_a_helm_repository_follows_new_versions(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repository = dir.path().join("repository");
    std::fs::create_dir_all(&repository).unwrap();
    publish(&cluster, dir.path(), &repository, "0.1.0");
    let server =
        crate::repo_server::RepoServer::start(&repository, dir.path().join("access.log"), None);
    let ns = cluster.create_namespace("hr-repo").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let hr = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"repository": server.url(""), "name": "hello", "version": ">=0.1.0 <1.0.0"},
            "values": {"message": "from a Helm repository"},
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let long = Duration::from_secs(120);
    let installed = wait_for(&api, "hello", &operator, "Ready", long, ready).await;
    let status = installed.status.unwrap();
    assert_eq!(status.revision, Some(1));
    assert_eq!(status.applied_source_revision.as_deref(), Some("0.1.0"));
    let release = format!("{ns}-hello");
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains("\"chart\":\"hello-0.1.0\""), "{list}");

    // A new version inside the constraint is picked up; one outside it is not.
    publish(&cluster, dir.path(), &repository, "1.0.0");
    publish(&cluster, dir.path(), &repository, "0.2.0");
    let upgraded = wait_for(
        &api,
        "hello",
        &operator,
        "the upgrade to 0.2.0",
        long,
        |hr| {
            ready(hr)
                && hr
                    .status
                    .as_ref()
                    .and_then(|s| s.applied_source_revision.as_deref())
                    == Some("0.2.0")
        },
    )
    .await;
    assert_eq!(upgraded.status.unwrap().revision, Some(2));
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains("\"chart\":\"hello-0.2.0\""), "{list}");
    assert_eq!(helm_revisions(&cluster, &release, &ns), 2);

    // Suspended: a values change waits; resumed: it is applied.
    patch_spec(&api, "hello", serde_json::json!({"suspend": true})).await;
    wait_for(&api, "hello", &operator, "Suspended", long, |hr| {
        condition(hr, "Ready").is_some_and(|c| c.reason == "Suspended")
    })
    .await;
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"values": {"message": "while suspended"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 2);
    patch_spec(&api, "hello", serde_json::json!({"suspend": false})).await;
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 3 after resuming",
        long,
        |hr| ready(hr) && revision(hr) == Some(3),
    )
    .await;

    // capstan.dev/force-at upgrades an unchanged release once per new value.
    api.patch(
        "hello",
        &PatchParams::default(),
        &Patch::Merge(
            &serde_json::json!({"metadata": {"annotations": {"capstan.dev/force-at": "1"}}}),
        ),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 4 (forced)",
        long,
        |hr| ready(hr) && revision(hr) == Some(4),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 4);

    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 0);
}

pub async fn a_failed_upgrade_is_rolled_back_when_asked(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    // A pre-rollback hook that leaves a ConfigMap behind: rollback.disableHooks is seen.
    std::fs::write(
        repo.join("charts/hello/templates/pre-rollback.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-pre-rollback\n  annotations:\n    helm.sh/hook: pre-rollback\ndata:\n  revision: \"{{ .Release.Revision }}\"\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a pre-rollback hook"]);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-rollback").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let hello = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "timeout": 5,
            "rollback": {"enable": true},
        }),
    );
    api.create(&PostParams::default(), &hello).await.unwrap();
    // The same, rolled back without hooks (rollback.* are the rollback's own options).
    let quiet = helm_release(
        "quiet",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "timeout": 5,
            "rollback": {"enable": true, "disableHooks": true, "timeout": 30},
        }),
    );
    api.create(&PostParams::default(), &quiet).await.unwrap();
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let long = Duration::from_secs(120);
    wait_for(&api, "hello", &operator, "Ready", long, ready).await;
    wait_for(&api, "quiet", &operator, "Ready", long, ready).await;

    // An upgrade whose pods can never run: it fails its wait, is rolled back, and (without
    // rollback.retry) is not retried until the spec changes.
    for name in ["hello", "quiet"] {
        patch_spec(
            &api,
            name,
            serde_json::json!({"values": {"nodeSelector": {"capstan.dev/no-such-node": "true"}}}),
        )
        .await;
    }
    let rolled_back = wait_for(
        &api,
        "hello",
        &operator,
        "RolledBack and Stalled",
        long,
        |hr| {
            condition(hr, "RolledBack").is_some_and(|c| c.status == "True")
                && condition(hr, "Stalled").is_some_and(|c| c.status == "True")
        },
    )
    .await;
    let quiet_rolled_back = wait_for(&api, "quiet", &operator, "RolledBack", long, |hr| {
        condition(hr, "RolledBack").is_some_and(|c| c.status == "True")
    })
    .await;
    assert_eq!(quiet_rolled_back.status.unwrap().revision, Some(3));
    let hook_revision = |release: &str| {
        cluster
            .command("kubectl")
            .args([
                "get",
                "configmap",
                "-n",
                &ns,
                &format!("{ns}-{release}-pre-rollback"),
            ])
            .args(["-o", "jsonpath={.data.revision}"])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // (A rollback runs the hooks of the revision it returns to, as rendered then.)
    assert_eq!(hook_revision("hello").as_deref(), Some("1"));
    assert_eq!(
        hook_revision("quiet"),
        None,
        "rollback.disableHooks: the hook ran"
    );
    let status = rolled_back.status.unwrap();
    assert_eq!(status.rollback_count, 1);
    assert_eq!(status.revision, Some(3));
    let release = format!("{ns}-hello");
    assert_eq!(
        release_statuses(&cluster, &release, &ns),
        ["superseded", "failed", "deployed"]
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        helm_revisions(&cluster, &release, &ns),
        3,
        "{}",
        operator.log()
    );

    // Back to the spec of the rolled-back revision: Ready again with nothing to upgrade
    // (revision 3 already runs that chart with those values).
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"values": {"nodeSelector": null}}),
    )
    .await;
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready after the fix",
        long,
        |hr| ready(hr) && revision(hr) == Some(3),
    )
    .await;
    assert_eq!(helm_revisions(&cluster, &release, &ns), 3);
    for name in ["hello", "quiet"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name, &operator).await;
    }
}

/// The reconcile records a failed upgrade, with the remediation it is owed, before the
/// remediation runs: an operator killed (SIGKILL) between the two rolls back after its
/// restart, counts the failure once, and does not upgrade again.
pub async fn a_failed_upgrade_is_rolled_back_after_a_crash_before_the_rollback(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-crash-rollback").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let hello = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "timeout": 5,
            "rollback": {"enable": true},
        }),
    );
    api.create(&PostParams::default(), &hello).await.unwrap();
    // This operator stops dead before any remediation (the `fail` crate's `pause`).
    let mut operator = Operator::start_with_env(
        &cluster,
        dir.path(),
        &[("FAILPOINTS", "before-remediation=pause")],
    );
    let long = Duration::from_secs(120);
    wait_for(&api, "hello", &operator, "Ready", long, ready).await;
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"values": {"nodeSelector": {"capstan.dev/no-such-node": "true"}}}),
    )
    .await;
    let failed = wait_for(
        &api,
        "hello",
        &operator,
        "the failed upgrade recorded with its rollback owed",
        long,
        |hr| {
            hr.status.as_ref().is_some_and(|s| {
                s.upgrade_failures == 1
                    && s.pending_remediation == Some(RemediationStrategy::Rollback)
            })
        },
    )
    .await;
    let deadline = Instant::now() + long;
    while !operator
        .log()
        .contains("failpoint before-remediation reached")
    {
        assert!(
            Instant::now() < deadline,
            "the operator never reached the remediation:\n{}",
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    operator.kill();
    let status = failed.status.unwrap();
    assert_eq!(status.last_failed_action, Some(ReleaseAction::Upgrade));
    assert_eq!(status.last_failed_revision, Some(2));
    assert_eq!(status.rollback_count, 0);
    let release = format!("{ns}-hello");
    assert_eq!(
        release_statuses(&cluster, &release, &ns),
        ["deployed", "failed"],
        "killed before the rollback (a failed upgrade leaves the last good revision deployed)"
    );

    // Restarted: the rollback it was owed runs first; the upgrade is not tried again
    // (rollback.retry is false), and the failure is counted once.
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let rolled_back = wait_for(
        &api,
        "hello",
        &operator,
        "RolledBack and Stalled after the restart",
        long,
        |hr| {
            condition(hr, "RolledBack").is_some_and(|c| c.status == "True")
                && condition(hr, "Stalled").is_some_and(|c| c.status == "True")
        },
    )
    .await;
    assert_eq!(
        condition(&rolled_back, "Stalled").unwrap().reason,
        "RolledBack"
    );
    let status = rolled_back.status.unwrap();
    assert_eq!(status.upgrade_failures, 1, "{status:?}");
    assert_eq!(status.failures, 1, "{status:?}");
    assert_eq!(status.rollback_count, 1, "{status:?}");
    assert_eq!(status.revision, Some(3), "{status:?}");
    assert_eq!(status.pending_remediation, None, "{status:?}");
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        release_statuses(&cluster, &release, &ns),
        ["superseded", "failed", "deployed"],
        "{}",
        operator.log()
    );
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

/// Removes a label from the fake node, also when the test fails.
struct NodeLabel<'a> {
    cluster: &'a Cluster,
    key: String,
}

impl Drop for NodeLabel<'_> {
    fn drop(&mut self) {
        let _ = self
            .cluster
            .command("kubectl")
            .args(["label", "node", "kwok-node-0", &format!("{}-", self.key)])
            .output();
    }
}

/// The holder of the Lease `name` in `namespace`, and how many times it changed hands.
async fn lease_holder(cluster: &Cluster, namespace: &str, name: &str) -> (Option<String>, i32) {
    let lease = Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(
        cluster.client().await,
        namespace,
    )
    .get_opt(name)
    .await
    .unwrap();
    let spec = lease.and_then(|l| l.spec).unwrap_or_default();
    (spec.holder_identity, spec.lease_transitions.unwrap_or(0))
}

pub async fn a_follower_finishes_the_install_its_killed_leader_began(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-handover").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let lease_flags = [
        "--leader-election",
        "--lease-namespace",
        ns.as_str(),
        "--lease-name",
        "capstan",
    ];
    let dirs = [dir.path().join("a"), dir.path().join("b")];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut replicas = [
        Operator::start(&cluster, &dirs[0], &lease_flags),
        Operator::start(&cluster, &dirs[1], &lease_flags),
    ];
    // The chart's pods need a node label nobody has yet: the install waits for them, and
    // stays in flight until the label appears.
    let label = format!("capstan.dev/handover-{}", std::process::id());
    let hr = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "wait": true,
            "timeout": 240,
            "values": {"nodeSelector": {label.as_str(): "true"}},
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let release = format!("{ns}-hello");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !release_statuses(&cluster, &release, &ns).contains(&"pending-install".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "the install never started:\n{}\n{}",
            replicas[0].log(),
            replicas[1].log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let actions = |op: &Operator| op.metric("capstan_release_actions_total").unwrap_or(0.0);
    let (leader_lease, transitions_before) = lease_holder(&cluster, &ns, "capstan").await;
    let lock = format!("capstan.release.{release}");
    // Without POD_NAME a replica's identity is capstan-<pid>.
    let leader = replicas
        .iter()
        .position(|op| leader_lease == op.pid().map(|pid| format!("capstan-{pid}")))
        .unwrap_or_else(|| panic!("the Lease is held by {leader_lease:?}, no replica"));
    let follower = 1 - leader;
    // A release lock names the process holding it: `<host>/<pid> <operation> #<nonce>`.
    let holder_pid = |holder: Option<String>| {
        holder.and_then(|h| {
            h.split_once('/')
                .and_then(|(_, rest)| rest.split(' ').next().map(str::to_owned))
        })
    };
    let (lock_holder, _) = lease_holder(&cluster, &ns, &lock).await;
    assert_eq!(
        holder_pid(lock_holder.clone()),
        replicas[leader].pid().map(|p| p.to_string()),
        "the release lock is held by {lock_holder:?}, not by the leader"
    );
    replicas[leader].kill();
    let killed = Instant::now();
    let _label = NodeLabel {
        cluster: &cluster,
        key: label.clone(),
    };
    cluster.run(
        "kubectl",
        &["label", "node", "kwok-node-0", &format!("{label}=true")],
    );

    let done = wait_for(
        &api,
        "hello",
        &replicas[follower],
        "Ready, finished by the follower",
        Duration::from_secs(240),
        ready,
    )
    .await;
    let handover = killed.elapsed();
    let (new_leader, transitions_after) = lease_holder(&cluster, &ns, "capstan").await;
    let (new_lock_holder, lock_transitions) = lease_holder(&cluster, &ns, &lock).await;
    println!(
        "handover: killed leader {leader_lease:?} mid-install; follower {new_leader:?} had the \
         release Ready {:.1}s later (leader Lease 15 s, release lock {} s); leader Lease \
         transitions {transitions_before} -> {transitions_after}, release lock transitions \
         {lock_transitions}",
        handover.as_secs_f64(),
        capstan::release_lock::LOCK_DURATION.as_secs()
    );
    assert_ne!(new_leader, leader_lease, "the Lease never changed hands");
    // Released when the install ended, or still held by the new leader's operation.
    assert!(
        new_lock_holder.is_none()
            || holder_pid(new_lock_holder.clone())
                == replicas[follower].pid().map(|p| p.to_string()),
        "the release lock is held by {new_lock_holder:?}, not by the new leader"
    );
    assert!(actions(&replicas[follower]) >= 1.0);
    // One writer at a time: the records are a clean history (no revision twice, nothing
    // left pending, the last one deployed), and the status names the final revision.
    let history: Vec<serde_json::Value> =
        serde_json::from_str(&cluster.run("helm", &["history", &release, "-n", &ns, "-o", "json"]))
            .unwrap();
    let revisions: Vec<i64> = history
        .iter()
        .map(|r| r["revision"].as_i64().unwrap())
        .collect();
    let mut unique = revisions.clone();
    unique.dedup();
    assert_eq!(unique, revisions, "a revision written twice: {history:?}");
    let statuses = release_statuses(&cluster, &release, &ns);
    assert!(
        statuses.iter().all(|s| !s.starts_with("pending")),
        "{statuses:?}"
    );
    assert_eq!(statuses.last().map(String::as_str), Some("deployed"));
    assert_eq!(
        done.status.and_then(|s| s.revision),
        revisions.last().copied()
    );
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &replicas[follower]).await;
}

pub async fn a_release_locked_by_another_process_waits_then_installs(cluster: Arc<Cluster>) {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-locked").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let leases: Api<Lease> = Api::namespaced(client.clone(), &ns);
    let release = format!("{ns}-hello");
    let lock = format!("capstan.release.{release}");

    // Another process (a `capstan release sync` on someone's laptop) holds the release's
    // lock and keeps renewing it.
    let holder = "laptop/4242 sync #00000001";
    let now = || MicroTime(k8s_openapi::jiff::Timestamp::now());
    let lease = Lease {
        metadata: kube::api::ObjectMeta {
            name: Some(lock.clone()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(30),
            acquire_time: Some(now()),
            renew_time: Some(now()),
            ..Default::default()
        }),
    };
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let renewing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let renewer = {
        let (leases, lock, renewing) = (leases.clone(), lock.clone(), renewing.clone());
        tokio::spawn(async move {
            while renewing.load(std::sync::atomic::Ordering::SeqCst) {
                let patch = serde_json::json!({"spec": {"renewTime": now()}});
                let _ = leases
                    .patch(&lock, &PatchParams::default(), &Patch::Merge(&patch))
                    .await;
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
        })
    };

    let operator = Operator::start(&cluster, dir.path(), &[]);
    let hr = helm_release(
        "hello",
        &ns,
        serde_json::json!({"chart": {"git": url, "ref": "main", "path": "charts/hello"}}),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let locked = wait_for(
        &api,
        "hello",
        &operator,
        "Reconciling with reason ReleaseLocked",
        Duration::from_secs(120),
        |hr| condition(hr, "Reconciling").is_some_and(|c| c.reason == "ReleaseLocked"),
    )
    .await;
    let message = condition(&locked, "Reconciling").unwrap().message.clone();
    assert!(message.contains(holder), "{message}");
    assert!(
        release_statuses(&cluster, &release, &ns).is_empty(),
        "something was written while the lock was held"
    );
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("ReleaseLocked")
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("hello")),
        "no ReleaseLocked event"
    );
    // Still locked a retry later: nothing written, the lock still the other process's.
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert!(release_statuses(&cluster, &release, &ns).is_empty());
    let still = leases.get(&lock).await.unwrap();
    assert_eq!(
        still.spec.and_then(|s| s.holder_identity).as_deref(),
        Some(holder)
    );

    // The other process finishes and releases the lock: the operator installs.
    renewing.store(false, std::sync::atomic::Ordering::SeqCst);
    renewer.await.unwrap();
    leases
        .delete(&lock, &DeleteParams::default())
        .await
        .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready once the lock is released",
        Duration::from_secs(120),
        ready,
    )
    .await;
    assert_eq!(release_statuses(&cluster, &release, &ns), ["deployed"]);
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

pub async fn a_failed_hook_reports_its_last_log_lines(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    // A pre-install hook Pod that runs and fails (the test cluster's kwok stage for pods
    // annotated capstan.dev/test-exit-code, and its logs for containers named
    // capstan-failing).
    let hook = repo.join("charts/hello/templates/migrate.yaml");
    std::fs::write(
        &hook,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-migrate\n  annotations:\n    helm.sh/hook: pre-install\n    capstan.dev/test-exit-code: \"1\"\nspec:\n  restartPolicy: Never\n  containers:\n    - name: capstan-failing\n      image: example.invalid/migrate:1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a migration hook"]);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-hooklogs").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let hr = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "timeout": 60,
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    let failed = wait_for(
        &api,
        "hello",
        &operator,
        "the install failed by its hook",
        Duration::from_secs(120),
        |hr| {
            condition(hr, "Ready")
                .is_some_and(|c| c.status == "False" && c.message.contains("hook"))
        },
    )
    .await;
    let message = condition(&failed, "Ready").unwrap().message.clone();
    let expected_tail = "error: connection refused: the database is not reachable";
    assert!(
        message.contains("last log lines of pod")
            && message.contains("container capstan-failing")
            && message.contains(expected_tail),
        "Ready condition: {message}"
    );
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        events.items.iter().any(|e| e
            .note
            .as_deref()
            .is_some_and(|note| note.contains(expected_tail))),
        "no Event carries the hook's log lines: {:?}",
        events
            .items
            .iter()
            .map(|e| e.note.clone())
            .collect::<Vec<_>>()
    );
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

/// When the first revision of `release` was written (from `helm history`).
fn first_deployed(
    cluster: &Cluster,
    release: &str,
    namespace: &str,
) -> k8s_openapi::jiff::Timestamp {
    let history: Vec<serde_json::Value> = serde_json::from_str(
        &cluster.run("helm", &["history", release, "-n", namespace, "-o", "json"]),
    )
    .unwrap();
    history[0]["updated"].as_str().unwrap().parse().unwrap()
}

pub async fn depends_on_installs_in_order_and_reports_cycles(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-depends").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});

    // a waits for pods that need a node label nobody has yet; b depends on a, c on b.
    let label = format!("capstan.dev/depends-{}", std::process::id());
    let _label = NodeLabel {
        cluster: &cluster,
        key: label.clone(),
    };
    let specs = [
        (
            "a",
            serde_json::json!({"chart": chart, "wait": true, "timeout": 240,
                "values": {"nodeSelector": {label.as_str(): "true"}}}),
        ),
        (
            "b",
            serde_json::json!({"chart": chart, "dependsOn": [{"name": "a"}]}),
        ),
        (
            "c",
            serde_json::json!({"chart": chart, "dependsOn": [{"name": "b", "namespace": ns}]}),
        ),
    ];
    for (name, spec) in &specs {
        api.create(
            &PostParams::default(),
            &helm_release(name, &ns, spec.clone()),
        )
        .await
        .unwrap();
    }
    for (name, waiting_for) in [("b", "a"), ("c", "b")] {
        let waiting = wait_for(
            &api,
            name,
            &operator,
            "DependencyNotReady",
            Duration::from_secs(120),
            |hr| condition(hr, "Ready").is_some_and(|c| c.reason == "DependencyNotReady"),
        )
        .await;
        let message = condition(&waiting, "Ready").unwrap().message.clone();
        assert_eq!(
            message,
            format!("dependency {ns}/{waiting_for} is not ready")
        );
        assert!(release_statuses(&cluster, &format!("{ns}-{name}"), &ns).is_empty());
    }

    // a's pods can run: a, then b, then c become Ready, each woken by the one before.
    cluster.run(
        "kubectl",
        &["label", "node", "kwok-node-0", &format!("{label}=true")],
    );
    let started = Instant::now();
    let mut ready_after = Vec::new();
    for name in ["a", "b", "c"] {
        wait_for(
            &api,
            name,
            &operator,
            "Ready",
            Duration::from_secs(120),
            ready,
        )
        .await;
        ready_after.push(started.elapsed().as_secs_f64());
    }
    println!(
        "dependsOn chain: a Ready {:.1}s after its pods could run, b {:.1}s, c {:.1}s",
        ready_after[0], ready_after[1], ready_after[2]
    );
    let installed: Vec<k8s_openapi::jiff::Timestamp> = ["a", "b", "c"]
        .iter()
        .map(|name| first_deployed(&cluster, &format!("{ns}-{name}"), &ns))
        .collect();
    assert!(
        installed[0] < installed[1] && installed[1] < installed[2],
        "installed out of order: {installed:?}"
    );

    // A cycle is reported on every member, naming it; nothing is installed.
    for (name, next) in [("x", "y"), ("y", "z"), ("z", "x")] {
        let spec = serde_json::json!({"chart": chart, "dependsOn": [{"name": next}]});
        api.create(&PostParams::default(), &helm_release(name, &ns, spec))
            .await
            .unwrap();
    }
    for name in ["x", "y", "z"] {
        let stalled = wait_for(
            &api,
            name,
            &operator,
            "Stalled with DependencyCycle",
            Duration::from_secs(120),
            |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "DependencyCycle"),
        )
        .await;
        let message = condition(&stalled, "Stalled").unwrap().message.clone();
        assert!(
            ["x", "y", "z"]
                .iter()
                .all(|member| message.contains(&format!("{ns}/{member}"))),
            "{name}: {message}"
        );
        assert!(release_statuses(&cluster, &format!("{ns}-{name}"), &ns).is_empty());
    }
    for name in ["a", "b", "c", "x", "y", "z"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in ["a", "b", "c", "x", "y", "z"] {
        wait_gone(&api, name, &operator).await;
    }
}

pub async fn uninstall_options_keep_history_and_skip_hooks(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    // A pre-delete hook Job (kwok completes its pod): left in place after it ran, so the
    // test sees whether it ran.
    std::fs::write(
        repo.join("charts/hello/templates/cleanup.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-cleanup\n  annotations:\n    helm.sh/hook: pre-delete\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: cleanup\n          image: example.invalid/cleanup:1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a pre-delete hook"]);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-uninstall").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    let releases = [
        ("plain", serde_json::json!({"chart": chart})),
        (
            "kept",
            serde_json::json!({"chart": chart,
                "uninstall": {"keepHistory": true, "disableHooks": true, "timeout": 60}}),
        ),
        (
            "orphaning",
            serde_json::json!({"chart": chart, "uninstall": {"deletionPropagation": "orphan"}}),
        ),
    ];
    for (name, spec) in &releases {
        api.create(
            &PostParams::default(),
            &helm_release(name, &ns, spec.clone()),
        )
        .await
        .unwrap();
    }
    for (name, _) in &releases {
        wait_for(
            &api,
            name,
            &operator,
            "Ready",
            Duration::from_secs(120),
            ready,
        )
        .await;
    }
    // The Deployments' ReplicaSets, made by the controller manager, are dependents.
    let replica_sets = |name: &str| -> Vec<serde_json::Value> {
        let out = cluster.run(
            "kubectl",
            &[
                "get",
                "replicasets",
                "-n",
                &ns,
                "-l",
                &format!("app.kubernetes.io/instance={ns}-{name}"),
                "-o",
                "json",
            ],
        );
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    for name in ["plain", "orphaning"] {
        let deadline = Instant::now() + Duration::from_secs(60);
        while replica_sets(name).is_empty() {
            assert!(Instant::now() < deadline, "no ReplicaSet of {name}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    for (name, _) in &releases {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name, &operator).await;
    }
    // The default (background) lets the garbage collector take the ReplicaSet; by then it
    // would have taken the orphaning release's too, had that not been orphaned.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !replica_sets("plain").is_empty() {
        assert!(
            Instant::now() < deadline,
            "the ReplicaSet of plain was not collected"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // uninstall.deletionPropagation: orphan leaves it, its owner reference removed.
    let owned = |rs: &serde_json::Value| {
        rs["metadata"]
            .get("ownerReferences")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|o| !o.is_empty())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let orphaned = replica_sets("orphaning");
        assert_eq!(orphaned.len(), 1, "{orphaned:?}");
        if !owned(&orphaned[0]) {
            break;
        }
        assert!(Instant::now() < deadline, "still owned: {orphaned:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let hook_ran = |name: &str| {
        cluster
            .command("kubectl")
            .args(["get", "job", &format!("{ns}-{name}-cleanup"), "-n", &ns])
            .output()
            .unwrap()
            .status
            .success()
    };
    // Defaults: the pre-delete hook ran and the records are gone.
    assert!(
        hook_ran("plain"),
        "the pre-delete hook of plain did not run"
    );
    assert!(release_statuses(&cluster, &format!("{ns}-plain"), &ns).is_empty());
    // keepHistory and disableHooks: no hook, the record kept as `uninstalled`.
    assert!(!hook_ran("kept"), "the pre-delete hook of kept ran");
    assert_eq!(
        release_statuses(&cluster, &format!("{ns}-kept"), &ns),
        ["uninstalled"]
    );
    let listed = cluster.run("helm", &["list", "-n", &ns, "--uninstalled", "-q"]);
    assert!(
        listed.contains(&format!("{ns}-kept")),
        "helm list --uninstalled: {listed}"
    );
}

pub async fn a_failed_upgrade_is_remediated_by_uninstall_when_asked(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-remediate").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let hr = helm_release(
        "hello",
        &ns,
        serde_json::json!({
            "chart": {"git": url, "ref": "main", "path": "charts/hello"},
            "wait": true,
            "timeout": 5,
            "upgrade": {"remediation": {"strategy": "uninstall", "retries": 0}},
        }),
    );
    api.create(&PostParams::default(), &hr).await.unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let release = format!("{ns}-hello");
    assert_eq!(release_statuses(&cluster, &release, &ns), ["deployed"]);

    // An upgrade whose pods can never be scheduled fails its wait; the release is
    // uninstalled instead of left failed, and with no retries left the HelmRelease stalls.
    api.patch(
        "hello",
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({"spec": {"values": {
            "nodeSelector": {"capstan.dev/no-such-node": "true"}}}})),
    )
    .await
    .unwrap();
    let stalled = wait_for(
        &api,
        "hello",
        &operator,
        "Stalled after the uninstall remediation",
        Duration::from_secs(120),
        |hr| condition(hr, "Stalled").is_some_and(|c| c.status == "True"),
    )
    .await;
    let remediated = condition(&stalled, "Remediated").map(|c| c.message.clone());
    assert!(
        remediated
            .as_deref()
            .is_some_and(|m| m.contains("upgrade.remediation.strategy: uninstall")),
        "Remediated: {remediated:?}"
    );
    assert!(
        release_statuses(&cluster, &release, &ns).is_empty(),
        "the release is still there: {:?}",
        release_statuses(&cluster, &release, &ns)
    );
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("UninstallRemediation"))
    );
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

pub async fn install_and_upgrade_options_create_the_namespace_and_follow_crd_policies(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let ns = cluster.create_namespace("hr-options").await;
    let group = format!("{ns}.capstan.test");
    let crd_path = repo.join("charts/hello/crds/widgets.yaml");
    std::fs::create_dir_all(crd_path.parent().unwrap()).unwrap();
    std::fs::write(
        &crd_path,
        namespaced_crd(&group, "widgets", "Widget", "one"),
    )
    .unwrap();
    // A post-install hook ConfigMap: there after an install that ran hooks.
    std::fs::write(
        repo.join("charts/hello/templates/hook.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: post-install,post-upgrade\ndata:\n  revision: \"{{ .Release.Revision }}\"\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a CRD and a hook"]);
    let url = format!("file://{}", repo.display());
    let target = format!("{ns}-target");
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(
        &cluster,
        dir.path(),
        &[
            "--allow-cluster-kind",
            "CustomResourceDefinition.apiextensions.k8s.io",
        ],
    );
    let kubectl = |args: &[&str]| -> Option<String> {
        let out = cluster.command("kubectl").args(args).output().unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let crd_generation = || {
        kubectl(&[
            "get",
            "crd",
            &format!("widgets.{group}"),
            "-o",
            "jsonpath={.metadata.labels.capstan\\.test/generation}",
        ])
    };
    let hook_revision = || {
        kubectl(&[
            "get",
            "configmap",
            "-n",
            &target,
            "hello-hook",
            "-o",
            "jsonpath={.data.revision}",
        ])
    };
    assert!(kubectl(&["get", "namespace", &target]).is_none());

    // Install into a namespace that does not exist yet, without hooks.
    api.create(
        &PostParams::default(),
        &helm_release(
            "hello",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "charts/hello"},
                "targetNamespace": target,
                "releaseName": "hello",
                "install": {"createNamespace": true, "disableHooks": true},
            }),
        ),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    assert!(
        kubectl(&["get", "namespace", &target]).is_some(),
        "install.createNamespace did not create {target}"
    );
    assert_eq!(crd_generation().as_deref(), Some("one"));
    assert_eq!(hook_revision(), None, "install.disableHooks: the hook ran");

    // A new CRD definition: upgrade.crds defaults to Skip, so the CRD stays; hooks run.
    std::fs::write(
        &crd_path,
        namespaced_crd(&group, "widgets", "Widget", "two"),
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "CRD generation two"]);
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 2",
        Duration::from_secs(120),
        |hr| ready(hr) && revision(hr) == Some(2),
    )
    .await;
    assert_eq!(crd_generation().as_deref(), Some("one"));
    assert_eq!(hook_revision().as_deref(), Some("2"));

    // Only an option changes (upgrade.crds: CreateReplace): that is an upgrade too, and it
    // replaces the CRD.
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"upgrade": {"crds": "CreateReplace"}}),
    )
    .await;
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 3",
        Duration::from_secs(120),
        |hr| ready(hr) && revision(hr) == Some(3),
    )
    .await;
    assert_eq!(crd_generation().as_deref(), Some("two"));
    assert_eq!(helm_revisions(&cluster, "hello", &target), 3);

    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
    // The namespace is not part of the release; CRDs are never deleted.
    assert!(kubectl(&["get", "namespace", &target]).is_some());
    assert_eq!(crd_generation().as_deref(), Some("two"));
    let _ = kubectl(&["delete", "crd", &format!("widgets.{group}"), "--wait=false"]);
}

pub async fn a_release_with_a_kube_config_goes_to_the_remote_cluster(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    // A second control plane of its own, stopped when `remote` is dropped.
    let remote_dir = repo_root().join(format!("target/test-cluster-remote-{}", std::process::id()));
    let start_in = remote_dir.clone();
    let remote = tokio::task::spawn_blocking(move || Cluster::start_or_reuse_in(start_in))
        .await
        .unwrap()
        .unwrap();
    let ns = cluster.create_namespace("hr-remote").await;
    // The remote admin kubeconfig with its credentials embedded, as a user stores it.
    let embedded = remote.run(
        "kubectl",
        &["config", "view", "--raw", "--flatten", "--minify"],
    );
    cluster.run(
        "kubectl",
        &[
            "create",
            "secret",
            "generic",
            "far-kubeconfig",
            "-n",
            &ns,
            &format!("--from-literal=value={embedded}"),
        ],
    );
    // A kubeconfig pointing at a file of the operator's machine: refused by field.
    let file_token = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}\n";
    cluster.run(
        "kubectl",
        &[
            "create",
            "secret",
            "generic",
            "sneaky-kubeconfig",
            "-n",
            &ns,
            &format!("--from-literal=value.yaml={file_token}"),
        ],
    );
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    let releases = [
        (
            "far",
            serde_json::json!({"chart": chart, "releaseName": "hello",
                "kubeConfig": {"secretRef": {"name": "far-kubeconfig"}},
                "install": {"createNamespace": true},
                "values": {"message": "far away"}}),
        ),
        // The same release name and namespace in the operator's own cluster: another
        // release, not a conflict.
        (
            "near",
            serde_json::json!({"chart": chart, "releaseName": "hello",
                "values": {"message": "close by"}}),
        ),
        (
            "sneaky",
            serde_json::json!({"chart": chart, "releaseName": "sneaky",
                "kubeConfig": {"secretRef": {"name": "sneaky-kubeconfig"}}}),
        ),
    ];
    for (name, spec) in &releases {
        api.create(
            &PostParams::default(),
            &helm_release(name, &ns, spec.clone()),
        )
        .await
        .unwrap();
    }
    for name in ["far", "near"] {
        wait_for(
            &api,
            name,
            &operator,
            "Ready",
            Duration::from_secs(120),
            ready,
        )
        .await;
    }
    let sneaky = wait_for(
        &api,
        "sneaky",
        &operator,
        "KubeConfigError",
        Duration::from_secs(60),
        |hr| condition(hr, "Ready").is_some_and(|c| c.reason == "KubeConfigError"),
    )
    .await;
    let message = &condition(&sneaky, "Ready").unwrap().message;
    assert!(
        message.contains("sneaky-kubeconfig key value.yaml")
            && message.contains("users[u].user.tokenFile names a file"),
        "{message}"
    );
    // Each cluster holds its own release, with its own values, readable by real helm.
    let values =
        |on: &Cluster| on.run("helm", &["get", "values", "hello", "-n", &ns, "-o", "json"]);
    assert!(values(&remote).contains("far away"), "{}", values(&remote));
    assert!(
        values(&cluster).contains("close by"),
        "{}",
        values(&cluster)
    );
    let listed = remote.run("helm", &["list", "-n", &ns, "-q"]);
    assert_eq!(listed.trim(), "hello");
    assert!(
        remote
            .run("kubectl", &["get", "deployment", "-n", &ns, "-o", "name"])
            .contains("hello"),
    );

    // Deleting the HelmRelease uninstalls from the remote cluster; the local one stays.
    for name in ["far", "sneaky"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    wait_gone(&api, "far", &operator).await;
    assert_eq!(remote.run("helm", &["list", "-n", &ns, "-q"]).trim(), "");
    assert_eq!(
        cluster.run("helm", &["list", "-n", &ns, "-q"]).trim(),
        "hello"
    );
    api.delete("near", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "near", &operator).await;
    drop(operator);
    drop(remote);
    let _ = std::fs::remove_dir_all(&remote_dir);
}

pub async fn two_shards_each_handle_only_their_releases(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-shards").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let shard = |dir: &Path, selector: &str, lease: &str| {
        Operator::start(
            &cluster,
            dir,
            &[
                "--watch-label-selector",
                selector,
                "--leader-election",
                "--lease-namespace",
                &ns,
                "--lease-name",
                lease,
            ],
        )
    };
    let mut shard_a = shard(dir_a.path(), "capstan.dev/shard=a", "shard-a");
    let mut shard_b = shard(dir_b.path(), "capstan.dev/shard=b", "shard-b");
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    for (name, label) in [("ra", Some("a")), ("rb", Some("b")), ("rn", None)] {
        let mut hr = helm_release(name, &ns, serde_json::json!({"chart": chart}));
        if let Some(label) = label {
            hr.metadata.labels = Some([("capstan.dev/shard".to_owned(), label.to_owned())].into());
        }
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    wait_for(
        &api,
        "ra",
        &shard_a,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    wait_for(
        &api,
        "rb",
        &shard_b,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    // No shard selects the unlabelled release: nobody touched it.
    let unlabelled = api.get("rn").await.unwrap();
    assert!(
        unlabelled.status.is_none() && unlabelled.metadata.finalizers.is_none(),
        "{unlabelled:?}"
    );
    assert_eq!(helm_revisions(&cluster, &format!("{ns}-rn"), &ns), 0);
    // Relabelled into shard b, it is b's.
    api.patch(
        "rn",
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({"metadata": {"labels": {"capstan.dev/shard": "b"}}})),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "rn",
        &shard_b,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    for name in ["ra", "rb", "rn"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    wait_gone(&api, "ra", &shard_a).await;
    wait_gone(&api, "rb", &shard_b).await;
    wait_gone(&api, "rn", &shard_b).await;
    // Each shard leads with its own Lease.
    for lease in ["shard-a", "shard-b"] {
        let (holder, _) = lease_holder(&cluster, &ns, lease).await;
        assert!(
            holder.is_some_and(|h| !h.is_empty()),
            "Lease {lease} not held"
        );
    }
    // Each release was reconciled by its shard alone (the logs name every reconcile).
    let (log_a, log_b) = (shard_a.stop(), shard_b.stop());
    let reconciled = |log: &str, name: &str| log.contains(&format!("helmrelease={ns}/{name}"));
    assert!(reconciled(&log_a, "ra") && reconciled(&log_b, "rb") && reconciled(&log_b, "rn"));
    for (log, others) in [(&log_a, ["rb", "rn"]), (&log_b, ["ra", "ra"])] {
        for other in others {
            assert!(
                !reconciled(log, other),
                "{other} reconciled by the wrong shard"
            );
        }
    }
}

pub async fn values_come_from_a_url_and_a_file_in_the_chart(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    std::fs::write(
        repo.join("charts/hello/values-prod.yaml"),
        "message: from the chart file\nextra: kept\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "production values"]);
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::write(served.join("values.yaml"), "message: from the URL\n").unwrap();
    let server =
        crate::repo_server::RepoServer::start(&served, dir.path().join("access.log"), None);
    let base = format!("http://127.0.0.1:{}", server.port);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-values-files").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    let releases = [
        (
            "files",
            serde_json::json!({"chart": chart, "valuesFrom": [
                {"chartFileRef": {"path": "values-prod.yaml"}},
                {"externalSourceRef": {"url": format!("{base}/values.yaml")}},
                {"externalSourceRef": {"url": format!("{base}/missing.yaml"), "optional": true}},
                {"chartFileRef": {"path": "values-missing.yaml", "optional": true}},
            ]}),
        ),
        (
            "broken",
            serde_json::json!({"chart": chart, "valuesFrom": [
                {"externalSourceRef": {"url": format!("{base}/missing.yaml?token=s3cret")}},
            ]}),
        ),
    ];
    for (name, spec) in &releases {
        api.create(
            &PostParams::default(),
            &helm_release(name, &ns, spec.clone()),
        )
        .await
        .unwrap();
    }
    wait_for(
        &api,
        "files",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    // Later entries win: the URL's message over the chart file's; the rest kept.
    let values: serde_json::Value = serde_json::from_str(&cluster.run(
        "helm",
        &[
            "get",
            "values",
            &format!("{ns}-files"),
            "-n",
            &ns,
            "-o",
            "json",
        ],
    ))
    .unwrap();
    assert_eq!(
        values,
        serde_json::json!({"message": "from the URL", "extra": "kept"})
    );
    let broken = wait_for(
        &api,
        "broken",
        &operator,
        "ValuesError",
        Duration::from_secs(60),
        |hr| condition(hr, "Ready").is_some_and(|c| c.reason == "ValuesError"),
    )
    .await;
    let message = &condition(&broken, "Ready").unwrap().message;
    assert_eq!(
        message,
        &format!("valuesFrom[0]: URL {base}/missing.yaml: the server answered 404 Not Found"),
        "the query (a token) must not be shown"
    );
    for name in ["files", "broken"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name, &operator).await;
    }
}

/// Post-renderers and common metadata (Flux v2's `postRenderers` and `commonMetadata`):
/// what the cluster gets and what the release record keeps are the post-rendered objects;
/// the strategy decides whether hooks are post-rendered; a change of them alone upgrades;
/// a patch that cannot apply stalls the release naming the patch, changing nothing.
pub async fn post_renderers_and_common_metadata_shape_what_is_applied(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    std::fs::write(
        repo.join("charts/hello/templates/hook.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\n    helm.sh/hook-delete-policy: before-hook-creation\ndata:\n  revision: \"{{ .Release.Revision }}\"\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a hook"]);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-postrender").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let kubectl_json = |kind: &str, name: &str| -> serde_json::Value {
        let out = cluster.run("kubectl", &["get", kind, name, "-n", &ns, "-o", "json"]);
        serde_json::from_str(&out).unwrap()
    };
    api.create(
        &PostParams::default(),
        &helm_release(
            "hello",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "charts/hello"},
                "releaseName": "hello",
                // A string that YAML 1.1 would read as a boolean must stay a string.
                "values": {"message": "yes"},
                "postRenderers": [{"kustomize": {
                    "patches": [
                        // Strategic merge, no target: names its object; containers merge by name.
                        {"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello-hello\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n        env:\n        - name: MODE\n          value: patched\n"},
                        // JSON 6902 on every Service.
                        {"patch": "- op: add\n  path: /metadata/annotations\n  value: {patched-by: json6902}\n",
                         "target": {"kind": "Service"}},
                    ],
                    "images": [{"name": "nginx", "newName": "mirror.example/nginx", "newTag": "1.27.1"}],
                }}],
                "commonMetadata": {"labels": {"team": "platform"}, "annotations": {"owner": "ops"}},
            }),
        ),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let deployment = kubectl_json("deployment", "hello-hello");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "mirror.example/nginx:1.27.1");
    assert_eq!(
        container["env"],
        serde_json::json!([{"name": "MODE", "value": "patched"}])
    );
    assert_eq!(
        container["ports"][0]["containerPort"], 80,
        "merge by name kept the ports"
    );
    assert_eq!(deployment["metadata"]["labels"]["team"], "platform");
    assert_eq!(
        deployment["metadata"]["labels"]["app.kubernetes.io/name"], "hello",
        "the chart's labels stay"
    );
    assert_eq!(deployment["metadata"]["annotations"]["owner"], "ops");
    let service = kubectl_json("service", "hello-hello");
    assert_eq!(service["metadata"]["annotations"]["patched-by"], "json6902");
    assert_eq!(service["metadata"]["labels"]["team"], "platform");
    let config = kubectl_json("configmap", "hello-hello");
    assert_eq!(config["data"]["message"], "yes");
    assert_eq!(config["metadata"]["labels"]["team"], "platform");
    // `combined` (the default): the hook was post-rendered too.
    let hook = kubectl_json("configmap", "hello-hook");
    assert_eq!(hook["metadata"]["labels"]["team"], "platform");
    // The record holds the post-rendered manifest, as real helm reads it.
    let manifest = cluster.run("helm", &["get", "manifest", "hello", "-n", &ns]);
    assert!(
        manifest.contains("image: mirror.example/nginx:1.27.1")
            && manifest.contains("team: platform"),
        "{manifest}"
    );

    // Only the strategy changes: a new revision, and now the hook is left alone.
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"postRenderStrategy": "nohooks"}),
    )
    .await;
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 2",
        Duration::from_secs(120),
        |hr| ready(hr) && revision(hr) == Some(2),
    )
    .await;
    let hook = kubectl_json("configmap", "hello-hook");
    assert_eq!(hook["data"]["revision"], "2");
    assert!(hook["metadata"]["labels"].get("team").is_none(), "{hook}");
    assert_eq!(
        kubectl_json("deployment", "hello-hello")["metadata"]["labels"]["team"],
        "platform"
    );

    // A JSON 6902 patch without a target: stalled, named, nothing changes.
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"postRenderers": [{"kustomize": {"patches": [
            {"patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello-hello\nspec:\n  replicas: 3\n"},
            {"patch": "- op: remove\n  path: /spec/replicas\n"},
        ]}}]}),
    )
    .await;
    let stalled = wait_for(
        &api,
        "hello",
        &operator,
        "Stalled",
        Duration::from_secs(60),
        |hr| condition(hr, "Stalled").is_some_and(|c| c.reason == "PostRenderError"),
    )
    .await;
    let message = &condition(&stalled, "Stalled").unwrap().message;
    assert_eq!(
        message,
        "postRenderers[0].kustomize.patches[1]: a JSON 6902 patch (a list of operations) needs a target"
    );
    assert_eq!(
        kubectl_json("deployment", "hello-hello")["spec"]["replicas"],
        2
    );
    assert_eq!(helm_revisions(&cluster, "hello", &ns), 2);

    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
}

/// `storageNamespace` (Flux v2): the release's records live there, where real `helm` finds
/// them, while its objects stay in the release namespace; deletion removes them there.
pub async fn records_live_in_the_storage_namespace(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-storage").await;
    let storage = cluster.create_namespace("hr-records").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    api.create(
        &PostParams::default(),
        &helm_release(
            "hello",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "charts/hello"},
                "releaseName": "hello",
                "storageNamespace": storage,
                "values": {"message": "records elsewhere"},
            }),
        ),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "hello",
        &operator,
        "Ready",
        Duration::from_secs(120),
        ready,
    )
    .await;
    let records = |namespace: &str| {
        cluster.run(
            "kubectl",
            &[
                "get",
                "secrets",
                "-n",
                namespace,
                "-l",
                "owner=helm,name=hello",
                "-o",
                "name",
            ],
        )
    };
    assert_eq!(
        records(&storage).trim(),
        "secret/sh.helm.release.v1.hello.v1"
    );
    assert_eq!(
        records(&ns).trim(),
        "",
        "no record in the release namespace"
    );
    let listed = cluster.run("helm", &["list", "-n", &storage, "-o", "json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["name"], "hello");
    assert_eq!(
        listed[0]["namespace"],
        ns.as_str(),
        "the release's own namespace"
    );
    let values = cluster.run(
        "helm",
        &["get", "values", "hello", "-n", &storage, "-o", "json"],
    );
    assert!(values.contains("records elsewhere"), "{values}");
    cluster.run("kubectl", &["get", "deployment", "hello-hello", "-n", &ns]);
    // An upgrade finds revision 1 there and writes revision 2 beside it.
    patch_spec(
        &api,
        "hello",
        serde_json::json!({"values": {"message": "records elsewhere 2"}}),
    )
    .await;
    wait_for(
        &api,
        "hello",
        &operator,
        "revision 2",
        Duration::from_secs(120),
        |hr| ready(hr) && revision(hr) == Some(2),
    )
    .await;
    assert_eq!(helm_revisions(&cluster, "hello", &storage), 2);
    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_gone(&api, "hello", &operator).await;
    assert_eq!(records(&storage).trim(), "");
}

/// `test` (Helm Operator, Flux v2): the chart's test hooks run after each install and
/// upgrade as `helm test` runs them, their results are in the release record (`helm
/// status` shows them) and in `TestSuccess`; a failing test fails the upgrade, which is
/// rolled back when asked, unless `ignoreFailures`.
pub async fn helm_tests_run_after_install_and_upgrade(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let tests = repo.join("charts/hello/templates/tests");
    std::fs::create_dir_all(&tests).unwrap();
    // A passing test: a Job (the test cluster's kwok completes Jobs' pods).
    std::fs::write(
        tests.join("ok.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-ok\n  annotations:\n    helm.sh/hook: test\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: check\n          image: example.invalid/check:1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a test"]);
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-tests").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    for (name, test) in [
        ("strict", serde_json::json!({"enable": true, "timeout": 60})),
        (
            "lenient",
            serde_json::json!({"enable": true, "ignoreFailures": true}),
        ),
    ] {
        api.create(
            &PostParams::default(),
            &helm_release(
                name,
                &ns,
                serde_json::json!({"chart": chart, "releaseName": name, "test": test,
                    "rollback": {"enable": true}}),
            ),
        )
        .await
        .unwrap();
    }
    let long = Duration::from_secs(120);
    for name in ["strict", "lenient"] {
        let done = wait_for(&api, name, &operator, "Ready with tests", long, |hr| {
            ready(hr) && condition(hr, "TestSuccess").is_some_and(|c| c.status == "True")
        })
        .await;
        assert_eq!(
            condition(&done, "TestSuccess").unwrap().message,
            format!("1 test(s) passed: {name}-ok")
        );
        let status = cluster.run("helm", &["status", name, "-n", &ns]);
        assert!(
            status.contains(&format!("TEST SUITE:     {name}-ok")) && status.contains("Succeeded"),
            "helm status:\n{status}"
        );
    }

    // A failing test (a Pod the test cluster fails, with log lines).
    std::fs::write(
        tests.join("failing.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-failing\n  annotations:\n    helm.sh/hook: test\n    helm.sh/hook-weight: \"1\"\n    capstan.dev/test-exit-code: \"1\"\nspec:\n  restartPolicy: Never\n  containers:\n    - name: capstan-failing\n      image: example.invalid/check:1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a failing test"]);
    // strict: the upgrade fails on its test and is rolled back to revision 1.
    let failed = wait_for(&api, "strict", &operator, "RolledBack", long, |hr| {
        condition(hr, "RolledBack").is_some_and(|c| c.status == "True")
            && condition(hr, "TestSuccess").is_some_and(|c| c.status == "False")
    })
    .await;
    let test_message = &condition(&failed, "TestSuccess").unwrap().message;
    assert!(
        test_message.starts_with("test Pod strict-failing failed")
            && test_message.contains("error: connection refused: the database is not reachable"),
        "{test_message}"
    );
    assert!(!ready(&failed));
    let statuses = release_statuses(&cluster, "strict", &ns);
    assert_eq!(
        statuses[..3],
        ["superseded", "superseded", "deployed"],
        "{statuses:?}"
    );
    // lenient: the same failure is only reported; revision 2 stays, Ready.
    let lenient = wait_for(
        &api,
        "lenient",
        &operator,
        "revision 2, test failed",
        long,
        |hr| {
            ready(hr)
                && revision(hr) == Some(2)
                && condition(hr, "TestSuccess").is_some_and(|c| c.status == "False")
        },
    )
    .await;
    assert!(
        condition(&lenient, "TestSuccess")
            .unwrap()
            .message
            .starts_with("test Pod lenient-failing failed")
    );
    for name in ["strict", "lenient"] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name, &operator).await;
    }
}

/// `driftDetection` (Flux v2): a resync of an unchanged release compares its objects with
/// the cluster; `enabled` puts changed and deleted objects back without a new revision,
/// `warn` only reports, ignored fields are neither compared nor corrected.
pub async fn drift_is_detected_and_corrected_without_a_new_revision(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let repo = chart_repository(dir.path());
    let url = format!("file://{}", repo.display());
    let ns = cluster.create_namespace("hr-drift").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let chart = serde_json::json!({"git": url, "ref": "main", "path": "charts/hello"});
    // `watched` ignores its ConfigMap's message; `fixed` ignores nothing.
    for (name, drift) in [
        ("fixed", serde_json::json!({"mode": "enabled"})),
        (
            "watched",
            serde_json::json!({"mode": "warn", "ignore": [
            {"paths": ["/data/message"], "target": {"kind": "ConfigMap"}}]}),
        ),
    ] {
        api.create(
            &PostParams::default(),
            &helm_release(
                name,
                &ns,
                serde_json::json!({"chart": chart, "releaseName": name, "driftDetection": drift}),
            ),
        )
        .await
        .unwrap();
    }
    let long = Duration::from_secs(120);
    let mut round = 0;
    // Reconcile now (a new reconcile-at) and wait for the drift check it runs.
    let mut check = async |name: &str, reason: &str| -> HelmRelease {
        round += 1;
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"metadata": {"annotations": {
                "capstan.dev/reconcile-at": format!("{round}")}}})),
        )
        .await
        .unwrap();
        let handled = |hr: &HelmRelease| {
            hr.status
                .as_ref()
                .and_then(|s| s.last_handled_reconcile_at.as_deref())
                == Some(round.to_string().as_str())
        };
        wait_for(&api, name, &operator, reason, long, |hr| {
            handled(hr) && condition(hr, "Drifted").is_some_and(|c| c.reason == reason)
        })
        .await
    };
    for name in ["fixed", "watched"] {
        wait_for(&api, name, &operator, "Ready", long, ready).await;
        check(name, "NoDrift").await;
    }
    let data = |name: &str| {
        cluster.run(
            "kubectl",
            &[
                "get",
                "configmap",
                &format!("{name}-hello"),
                "-n",
                &ns,
                "-o",
                "jsonpath={.data.message}",
            ],
        )
    };
    let original = data("fixed");
    for name in ["fixed", "watched"] {
        cluster.run(
            "kubectl",
            &[
                "patch",
                "configmap",
                &format!("{name}-hello"),
                "-n",
                &ns,
                "--type=merge",
                "-p",
                r#"{"data":{"message":"tampered"}}"#,
            ],
        );
        cluster.run(
            "kubectl",
            &[
                "scale",
                "deployment",
                &format!("{name}-hello"),
                "-n",
                &ns,
                "--replicas=3",
            ],
        );
    }
    cluster.run("kubectl", &["delete", "service", "fixed-hello", "-n", &ns]);

    let replicas = |name: &str| {
        cluster.run(
            "kubectl",
            &[
                "get",
                "deployment",
                &format!("{name}-hello"),
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.replicas}",
            ],
        )
    };
    let fixed = check("fixed", "DriftCorrected").await;
    let message = &condition(&fixed, "Drifted").unwrap().message;
    assert!(
        message.contains(&format!("ConfigMap {ns}/fixed-hello (/data/message)"))
            && message.contains(&format!("Service {ns}/fixed-hello (missing)"))
            && message.contains(&format!("Deployment {ns}/fixed-hello (/spec/replicas)")),
        "{message}"
    );
    assert_eq!(data("fixed"), original, "the ConfigMap is put back");
    assert_eq!(replicas("fixed"), "1", "kubectl scale is undone");
    cluster.run("kubectl", &["get", "service", "fixed-hello", "-n", &ns]);

    let watched = check("watched", "DriftDetected").await;
    let message = &condition(&watched, "Drifted").unwrap().message;
    assert_eq!(condition(&watched, "Drifted").unwrap().status, "True");
    assert!(
        message.contains(&format!("Deployment {ns}/watched-hello (/spec/replicas)"))
            && !message.contains("ConfigMap"),
        "an ignored field is not drift: {message}"
    );
    assert_eq!(data("watched"), "tampered", "warn only reports");
    assert_eq!(replicas("watched"), "3", "warn only reports");
    for name in ["fixed", "watched"] {
        assert_eq!(
            helm_revisions(&cluster, name, &ns),
            1,
            "{name}: no new revision"
        );
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name, &operator).await;
    }
}
