//! `deploy/` is what people install: the API server must accept every object of the plain
//! manifests, of the CRD and of the chart (`kubectl apply --dry-run=server`), real `helm`
//! must lint and install the chart, every flag the Deployments pass must exist, and the
//! ServiceAccount must be able to do what the operator does, and no more.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::api::HelmRelease;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};

use crate::git_support::git;
use crate::harness::{Cluster, repo_root};

const SYSTEM_NAMESPACE: &str = "capstan-system";

/// Run `command`; its stdout, or a panic with everything it printed.
pub(crate) fn output(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Deletes what the test applied for real, also when it fails.
struct Cleanup<'a> {
    cluster: &'a Cluster,
    manifests: Option<PathBuf>,
    helm_release: Option<(String, String)>,
}

impl Cleanup<'_> {
    /// The Pods of the Deployment have a long grace period; the test is done with them.
    fn force_delete_pods(&self, namespace: &str) {
        let _ = self
            .cluster
            .command("kubectl")
            .args([
                "delete",
                "pods",
                "--all",
                "--force",
                "--grace-period=0",
                "-n",
                namespace,
            ])
            .output();
    }
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if let Some(manifests) = &self.manifests {
            let _ = self
                .cluster
                .command("kubectl")
                .args(["delete", "--ignore-not-found", "--wait=false", "-f"])
                .arg(manifests)
                .output();
            self.force_delete_pods(SYSTEM_NAMESPACE);
        }
        if let Some((name, namespace)) = &self.helm_release {
            let _ = self
                .cluster
                .command("helm")
                .args(["uninstall", name, "--namespace", namespace])
                .output();
            self.force_delete_pods(namespace);
            let _ = self
                .cluster
                .command("kubectl")
                .args(["delete", "namespace", namespace, "--wait=false"])
                .output();
        }
    }
}

/// The `--flag` names of the container args in rendered YAML (`- --flag[=value]`).
fn flags(yaml: &str) -> Vec<String> {
    yaml.lines()
        .filter_map(|line| line.trim().strip_prefix("- --"))
        .map(|flag| {
            let end = flag.find(['=', ' ']).unwrap_or(flag.len());
            format!("--{}", &flag[..end])
        })
        .collect()
}

fn assert_flags_exist(origin: &str, yaml: &str, help: &str) {
    let found = flags(yaml);
    assert!(
        found.iter().any(|f| f == "--config"),
        "{origin}: no container args found"
    );
    for flag in found {
        assert!(
            help.split_whitespace()
                .any(|word| word.trim_end_matches(',') == flag),
            "{origin} passes {flag}, which `capstan run` does not know:\n{help}"
        );
    }
}

/// Every object of a YAML stream, by `Kind/name`.
fn objects(yaml: &str) -> std::collections::BTreeMap<String, serde_yaml_ng::Value> {
    use serde::Deserialize;
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|doc| serde_yaml_ng::Value::deserialize(doc).unwrap())
        .filter(|doc| !doc.is_null())
        .map(|doc| {
            let key = format!(
                "{}/{}",
                doc["kind"].as_str().unwrap(),
                doc["metadata"]["name"].as_str().unwrap()
            );
            (key, doc)
        })
        .collect()
}

/// The chart with its defaults, as release `capstan`, renders what deploy/manifests holds:
/// the same RBAC rules and bindings, configuration, pod spec and Service ports.
fn assert_chart_matches_manifests(manifests: &Path, rendered: &str) {
    let mut files: Vec<_> = std::fs::read_dir(manifests)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let plain: String = files
        .iter()
        .map(|file| format!("{}\n---\n", std::fs::read_to_string(file).unwrap()))
        .collect();
    let plain = objects(&plain);
    let chart = objects(rendered);
    let config = |doc: &serde_yaml_ng::Value| -> serde_yaml_ng::Value {
        serde_yaml_ng::from_str(doc["data"]["capstan.yaml"].as_str().unwrap()).unwrap()
    };
    for (key, object) in &plain {
        let kind = object["kind"].as_str().unwrap();
        if kind == "Namespace" {
            continue;
        }
        let Some(rendered) = chart.get(key) else {
            panic!("the chart renders no {key}; it renders {:?}", chart.keys());
        };
        let same = |what: &str, a: &serde_yaml_ng::Value, b: &serde_yaml_ng::Value| {
            assert!(
                a == b,
                "{key}: {what} differs between deploy/manifests and the chart:\n{}\n---\n{}",
                serde_yaml_ng::to_string(a).unwrap(),
                serde_yaml_ng::to_string(b).unwrap()
            );
        };
        match kind {
            "ClusterRole" | "Role" => same("rules", &object["rules"], &rendered["rules"]),
            "ClusterRoleBinding" | "RoleBinding" => {
                same("roleRef", &object["roleRef"], &rendered["roleRef"]);
                same("subjects", &object["subjects"], &rendered["subjects"]);
            }
            "ConfigMap" => same("capstan.yaml", &config(object), &config(rendered)),
            "Deployment" => {
                same(
                    "replicas",
                    &object["spec"]["replicas"],
                    &rendered["spec"]["replicas"],
                );
                same(
                    "strategy",
                    &object["spec"]["strategy"],
                    &rendered["spec"]["strategy"],
                );
                same(
                    "pod spec",
                    &object["spec"]["template"]["spec"],
                    &rendered["spec"]["template"]["spec"],
                );
            }
            "Service" => same(
                "ports",
                &object["spec"]["ports"],
                &rendered["spec"]["ports"],
            ),
            "ServiceAccount" => {}
            other => panic!("{key}: no comparison for {other}"),
        }
    }
}

/// `kubectl auth can-i` as `subject`; true for "yes".
fn can_i(cluster: &Cluster, subject: &str, args: &[&str]) -> bool {
    let out = cluster
        .command("kubectl")
        .args(["auth", "can-i"])
        .args(args)
        .arg(format!("--as={subject}"))
        .output()
        .expect("kubectl auth can-i");
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        answer == "yes" || answer == "no",
        "kubectl auth can-i {args:?}: {answer}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    answer == "yes"
}

/// What the operator needs (true) and what it must not be able to do (false), for the
/// ServiceAccount `name` in `namespace` whose leader Lease is `capstan-leader` there.
fn check_rights(cluster: &Cluster, namespace: &str, name: &str) {
    let subject = format!("system:serviceaccount:{namespace}:{name}");
    let lease = "leases.coordination.k8s.io/capstan-leader";
    let expectations: &[(&[&str], bool)] = &[
        (&["list", "helmreleases.helm.capstan.dev", "-A"], true),
        (&["watch", "helmreleases.helm.capstan.dev", "-A"], true),
        (
            &["patch", "helmreleases.helm.capstan.dev", "-n", "default"],
            true,
        ),
        (
            &[
                "patch",
                "helmreleases.helm.capstan.dev",
                "--subresource=status",
                "-n",
                "default",
            ],
            true,
        ),
        (
            &[
                "update",
                "helmreleases.helm.capstan.dev",
                "--subresource=finalizers",
                "-n",
                "default",
            ],
            true,
        ),
        (&["watch", "configmaps", "-A"], true),
        (&["watch", "secrets", "-A"], true),
        (&["get", "secrets", "-n", "default"], true),
        (&["create", "events.events.k8s.io", "-n", "default"], true),
        (&["patch", "events.events.k8s.io", "-n", "default"], true),
        (
            &["create", "leases.coordination.k8s.io", "-n", namespace],
            true,
        ),
        (&["get", lease, "-n", namespace], true),
        (&["update", lease, "-n", namespace], true),
        // Release backends: objects and Helm release records in managed namespaces.
        (&["create", "secrets", "-n", "default"], true),
        (&["delete", "secrets", "-n", "default"], true),
        (&["patch", "deployments.apps", "-n", "default"], true),
        (&["watch", "pods", "-n", "default"], true),
        (&["delete", "jobs.batch", "-n", "default"], true),
        // Failed hooks are reported with their last log lines.
        (&["get", "pods", "--subresource=log", "-n", "default"], true),
        // The release lock (release_lock.rs): one Lease per release in its namespace.
        (
            &["create", "leases.coordination.k8s.io", "-n", "default"],
            true,
        ),
        (
            &["update", "leases.coordination.k8s.io", "-n", "default"],
            true,
        ),
        (
            &["delete", "leases.coordination.k8s.io", "-n", "default"],
            true,
        ),
        // Not for the operator.
        (
            &["delete", "helmreleases.helm.capstan.dev", "-n", "default"],
            false,
        ),
        (
            &["create", "helmreleases.helm.capstan.dev", "-n", "default"],
            false,
        ),
        // Release locks are Leases in managed namespaces: no need to list or watch them.
        (
            &["list", "leases.coordination.k8s.io", "-n", "default"],
            false,
        ),
        (&["watch", "leases.coordination.k8s.io", "-A"], false),
        (&["delete", "nodes"], false),
        (&["create", "namespaces"], false),
        (&["create", "clusterroles.rbac.authorization.k8s.io"], false),
        (
            &["create", "clusterrolebindings.rbac.authorization.k8s.io"],
            false,
        ),
        (
            &[
                "escalate",
                "roles.rbac.authorization.k8s.io",
                "-n",
                "default",
            ],
            false,
        ),
        (
            &[
                "bind",
                "clusterroles.rbac.authorization.k8s.io",
                "-n",
                "default",
            ],
            false,
        ),
        (
            &["create", "customresourcedefinitions.apiextensions.k8s.io"],
            false,
        ),
        (
            &["create", "pods", "--subresource=exec", "-n", "default"],
            false,
        ),
        (&["get", "nodes", "--subresource=proxy"], false),
    ];
    let wrong: Vec<String> = expectations
        .iter()
        .filter(|(args, expected)| can_i(cluster, &subject, args) != *expected)
        .map(|(args, expected)| {
            format!(
                "{} {}",
                if *expected { "cannot" } else { "can" },
                args.join(" ")
            )
        })
        .collect();
    assert!(wrong.is_empty(), "{subject}:\n  {}", wrong.join("\n  "));
}

fn dry_run_server(cluster: &Cluster, files: &[&Path]) -> String {
    let mut command = cluster.command("kubectl");
    command.args(["apply", "--dry-run=server"]);
    for file in files {
        command.arg("-f").arg(file);
    }
    output(&mut command)
}

pub async fn deploy_manifests_and_chart_are_accepted_and_grant_what_the_operator_needs(
    cluster: Arc<Cluster>,
) {
    let root = repo_root();
    let manifests = root.join("deploy/manifests");
    let crds = root.join("deploy/crds");
    let chart = root.join("deploy/chart/capstan");
    let help = output(Command::new(crate::harness::capstan_binary()).args(["run", "--help"]));

    output(
        cluster
            .command("helm")
            .arg("lint")
            .arg("--strict")
            .arg(&chart),
    );
    let deployment = std::fs::read_to_string(manifests.join("40-deployment.yaml")).unwrap();
    assert_flags_exist("deploy/manifests/40-deployment.yaml", &deployment, &help);

    let _cleanup = Cleanup {
        cluster: &cluster,
        manifests: Some(manifests.clone()),
        helm_release: None,
    };
    // A previous run's namespace may still be terminating.
    output(cluster.command("kubectl").args([
        "wait",
        "--for=delete",
        &format!("namespace/{SYSTEM_NAMESPACE}"),
        "--timeout=360s",
    ]));
    // Namespaced objects cannot be dry-run into a namespace that does not exist.
    output(
        cluster
            .command("kubectl")
            .args(["apply", "-f"])
            .arg(manifests.join("00-namespace.yaml")),
    );
    let applied = dry_run_server(&cluster, &[&manifests, &crds]);
    for object in [
        "serviceaccount/capstan",
        "clusterrole.rbac.authorization.k8s.io/capstan",
        "clusterrole.rbac.authorization.k8s.io/capstan-releases",
        "role.rbac.authorization.k8s.io/capstan-leader-election",
        "configmap/capstan-config",
        "deployment.apps/capstan",
        "service/capstan-metrics",
        "customresourcedefinition.apiextensions.k8s.io/helmreleases.helm.capstan.dev",
    ] {
        assert!(applied.contains(object), "{object} not applied:\n{applied}");
    }

    // The chart, with its defaults and with the other RBAC scope and cluster kinds.
    let scratch = tempfile::tempdir().unwrap();
    let variants: [&[&str]; 2] = [
        &[],
        &[
            "--set",
            "rbac.releases.scope=namespaces",
            "--set",
            "rbac.releases.namespaces={capstan-system}",
            "--set",
            "replicas=1",
            "--set",
            "leaderElection.enabled=false",
        ],
    ];
    for (index, extra) in variants.iter().enumerate() {
        let rendered = output(
            cluster
                .command("helm")
                .args(["template", "capstan"])
                .arg(&chart)
                .args(["--namespace", SYSTEM_NAMESPACE, "--include-crds"])
                .args(*extra),
        );
        assert_flags_exist(&format!("the chart with {extra:?}"), &rendered, &help);
        if extra.is_empty() {
            assert_chart_matches_manifests(&manifests, &rendered);
        }
        let file = scratch.path().join(format!("chart-{index}.yaml"));
        std::fs::write(&file, &rendered).unwrap();
        dry_run_server(&cluster, &[&file]);
    }
    let cluster_kinds = output(
        cluster
            .command("helm")
            .args(["template", "capstan"])
            .arg(&chart)
            .args([
                "--set",
                "clusterKinds[0].kind=CustomResourceDefinition",
                "--set",
                "clusterKinds[0].group=apiextensions.k8s.io",
                "--set",
                "clusterKinds[0].resource=customresourcedefinitions",
            ]),
    );
    assert!(
        cluster_kinds
            .contains("--allow-cluster-kind=CustomResourceDefinition.apiextensions.k8s.io"),
        "{cluster_kinds}"
    );

    // For real: what the ServiceAccount may do (the CRD too: `can-i` on a resource the
    // server does not serve says no, and the test must not rely on an earlier one having
    // installed it).
    output(
        cluster
            .command("kubectl")
            .args(["apply", "-f"])
            .arg(&crds)
            .arg("-f")
            .arg(&manifests),
    );
    check_rights(&cluster, SYSTEM_NAMESPACE, "capstan");
    operator_with_the_service_account_rights_installs_and_uninstalls(&cluster).await;

    // The chart installed by real helm in a namespace of its own.
    let namespace = cluster.namespace("capstan-chart");
    let release = "capstan-chart";
    let _chart_cleanup = Cleanup {
        cluster: &cluster,
        manifests: None,
        helm_release: Some((release.to_owned(), namespace.clone())),
    };
    output(
        cluster
            .command("helm")
            .args(["install", release])
            .arg(&chart)
            .args([
                "--namespace",
                &namespace,
                "--create-namespace",
                "--skip-crds",
            ]),
    );
    check_rights(&cluster, &namespace, release);
}

/// `capstan run` as a child process; SIGTERM, then SIGKILL, on drop.
pub(crate) struct Operator {
    child: Child,
    log: PathBuf,
}

impl Operator {
    /// Takes charge of `child`, which writes its log to `log`.
    pub(crate) fn new(child: Child, log: PathBuf) -> Operator {
        Operator { child, log }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && self.child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until `check` holds for the HelmRelease (`None`: it is gone).
pub(crate) async fn wait_hr(
    api: &Api<HelmRelease>,
    name: &str,
    operator: &Operator,
    what: &str,
    check: impl Fn(Option<&HelmRelease>) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let current = api.get_opt(name).await.unwrap();
        if check(current.as_ref()) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}: timed out waiting for {what}; status: {:#?}\noperator log:\n{}",
            current.and_then(|hr| hr.status),
            operator.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The operator, with exactly the rights of the ServiceAccount of deploy/manifests
/// (impersonated) and the Deployment's leader-election flags, takes the Lease, installs a
/// release from git, reports status and events, and uninstalls it through the finalizer.
async fn operator_with_the_service_account_rights_installs_and_uninstalls(cluster: &Cluster) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("charts-repo");
    std::fs::create_dir_all(repo.join("charts")).unwrap();
    git(&repo, &["init", "-q"]);
    output(
        Command::new("cp")
            .arg("-r")
            .arg(repo_root().join("deploy/examples/charts/hello"))
            .arg(repo.join("charts/hello")),
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "hello"]);

    let plugins = repo_root().join("target/plugins");
    let config = dir.path().join("capstan.yaml");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {cache}\nplugins:\n\
             - {{name: git, world: source, path: {p}/source-git.wasm}}\n\
             - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm}}\n\
             backends: {{default: helm3}}\n\
             sources: {{egress: {{allowNetworks: [127.0.0.1], allowLocalPaths: true}}}}\n",
            cache = repo_root().join("target/capstan-cache").display(),
            p = plugins.display()
        ),
    )
    .unwrap();
    let log = dir.path().join("operator.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let identity = format!("deploy-test-{}", std::process::id());
    let child = Command::new(crate::harness::capstan_binary())
        .args(["run", "--config"])
        .arg(&config)
        .args(["--metrics-address", &format!("127.0.0.1:{port}")])
        .args(["--source-interval", "2", "--leader-election"])
        .env("KUBECONFIG", cluster.kubeconfig())
        .env(
            "KUBE_RS_DEBUG_IMPERSONATE_USER",
            format!("system:serviceaccount:{SYSTEM_NAMESPACE}:capstan"),
        )
        .env(
            "KUBE_RS_DEBUG_IMPERSONATE_GROUP",
            format!(
                "system:serviceaccounts,system:serviceaccounts:{SYSTEM_NAMESPACE},system:authenticated"
            ),
        )
        .env("POD_NAME", &identity)
        .env("POD_NAMESPACE", SYSTEM_NAMESPACE)
        .env("RUST_LOG", "info")
        .env("XDG_CACHE_HOME", dir.path().join("xdg"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let operator = Operator { child, log };

    let ns = cluster.create_namespace("deploy-sa").await;
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
    let hr: HelmRelease = serde_json::from_value(serde_json::json!({
        "apiVersion": "helm.capstan.dev/v1alpha1",
        "kind": "HelmRelease",
        "metadata": {"name": "hello", "namespace": ns},
        "spec": {
            "chart": {"git": format!("file://{}", repo.display()), "ref": "main", "path": "charts/hello"},
            "values": {"message": "installed with the ServiceAccount's rights"},
        },
    }))
    .unwrap();
    api.create(&PostParams::default(), &hr).await.unwrap();
    wait_hr(&api, "hello", &operator, "Ready", |hr| {
        hr.and_then(|hr| hr.status.as_ref())
            .and_then(|s| s.condition("Ready"))
            .is_some_and(|c| c.status == "True")
    })
    .await;
    let releases = cluster.run("helm", &["list", "-n", &ns, "-q"]);
    assert!(releases.contains("hello"), "helm list: {releases}");

    let lease = Api::<Lease>::namespaced(client.clone(), SYSTEM_NAMESPACE)
        .get("capstan-leader")
        .await
        .unwrap();
    assert_eq!(
        lease.spec.and_then(|s| s.holder_identity).as_deref(),
        Some(identity.as_str())
    );
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("hello")),
        "no event about hello in {ns}; operator log:\n{}",
        operator.log()
    );

    api.delete("hello", &DeleteParams::default()).await.unwrap();
    wait_hr(
        &api,
        "hello",
        &operator,
        "uninstall and finalizer removal",
        |hr| hr.is_none(),
    )
    .await;
    let releases = cluster.run("helm", &["list", "-n", &ns, "-q"]);
    assert!(!releases.contains("hello"), "helm list: {releases}");
    let log = operator.log();
    assert!(
        !log.contains("forbidden"),
        "the operator was refused something:\n{log}"
    );
    drop(operator);
    cluster.run("kubectl", &["delete", "namespace", &ns, "--wait=false"]);
}
