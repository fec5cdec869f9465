//! Capstan installed as users install it: real `helm install` of `deploy/chart`, then the
//! `capstan` binary run out of cluster with the chart's Deployment arguments, the chart's
//! configuration and a TokenRequest token of the chart's ServiceAccount (no admin
//! credentials, no impersonation), bringing the example HelmReleases of `deploy/examples`
//! to Ready and uninstalling them. The API server's audit log then shows every call that
//! account made: each must be covered by a rule the chart grants (least privilege is
//! checked from what was used, not from what was expected), and the grants never used
//! are listed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use capstan::api::HelmRelease;
use kube::Api;
use kube::api::DeleteParams;
use serde_json::Value;

use crate::deploy::{Operator, output, wait_hr};
use crate::git_support::git;
use crate::harness::{Cluster, repo_root};
use crate::repo_server::RepoServer;

/// One rule of a Role or ClusterRole the chart binds to its ServiceAccount, with where it
/// applies (`None`: every namespace and cluster-scoped objects).
#[derive(Debug, Clone)]
struct Grant {
    namespace: Option<String>,
    role: String,
    api_groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    verbs: Vec<String>,
}

/// One audited call of the ServiceAccount.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    verb: String,
    api_group: String,
    /// `resource` or `resource/subresource`.
    resource: String,
    namespace: Option<String>,
    name: Option<String>,
    code: i64,
}

fn strings(value: &serde_yaml_ng::Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn matches(list: &[String], wanted: &str) -> bool {
    list.iter().any(|item| item == "*" || item == wanted)
}

impl Grant {
    fn covers(&self, call: &Call) -> bool {
        let in_scope = match &self.namespace {
            None => true,
            Some(namespace) => call.namespace.as_deref() == Some(namespace),
        };
        let base = call.resource.split('/').next().unwrap_or_default();
        in_scope
            && matches(&self.verbs, &call.verb)
            && matches(&self.api_groups, &call.api_group)
            && (matches(&self.resources, &call.resource)
                || (call.resource == base && matches(&self.resources, base))
                || self.resources.iter().any(|r| r == "*/*"))
            && (self.resource_names.is_empty()
                || call
                    .name
                    .as_ref()
                    .is_some_and(|name| self.resource_names.contains(name)))
    }
}

/// The rules bound to `system:serviceaccount:{namespace}:{account}` by the objects of the
/// installed chart (`helm get manifest`).
fn granted_rules(manifest: &str, namespace: &str, account: &str) -> Vec<Grant> {
    let documents: Vec<serde_yaml_ng::Value> = manifest
        .split("\n---")
        .filter_map(|doc| serde_yaml_ng::from_str(doc).ok())
        .filter(|doc: &serde_yaml_ng::Value| doc.get("kind").is_some())
        .collect();
    let text = |doc: &serde_yaml_ng::Value, path: &[&str]| -> String {
        let mut current = doc;
        for key in path {
            match current.get(*key) {
                Some(next) => current = next,
                None => return String::new(),
            }
        }
        current.as_str().unwrap_or_default().to_owned()
    };
    let roles: BTreeMap<(String, String), &serde_yaml_ng::Value> = documents
        .iter()
        .filter(|doc| matches!(text(doc, &["kind"]).as_str(), "Role" | "ClusterRole"))
        .map(|doc| {
            (
                (text(doc, &["kind"]), text(doc, &["metadata", "name"])),
                doc,
            )
        })
        .collect();
    let mut grants = Vec::new();
    for binding in documents.iter().filter(|doc| {
        matches!(
            text(doc, &["kind"]).as_str(),
            "RoleBinding" | "ClusterRoleBinding"
        )
    }) {
        let ours = binding
            .get("subjects")
            .and_then(|s| s.as_sequence())
            .is_some_and(|subjects| {
                subjects.iter().any(|s| {
                    text(s, &["kind"]) == "ServiceAccount"
                        && text(s, &["name"]) == account
                        && text(s, &["namespace"]) == namespace
                })
            });
        if !ours {
            continue;
        }
        let role_key = (
            text(binding, &["roleRef", "kind"]),
            text(binding, &["roleRef", "name"]),
        );
        let role = roles
            .get(&role_key)
            .unwrap_or_else(|| panic!("the chart binds {role_key:?}, which it does not contain"));
        let scope = (text(binding, &["kind"]) == "RoleBinding")
            .then(|| text(binding, &["metadata", "namespace"]));
        for rule in role
            .get("rules")
            .and_then(|r| r.as_sequence())
            .into_iter()
            .flatten()
        {
            let field = |name: &str| rule.get(name).map(strings).unwrap_or_default();
            grants.push(Grant {
                namespace: scope.clone(),
                role: format!("{}/{}", role_key.0, role_key.1),
                api_groups: field("apiGroups"),
                resources: field("resources"),
                resource_names: field("resourceNames"),
                verbs: field("verbs"),
            });
        }
    }
    grants
}

/// What `user` did, from the API server's audit log: resource calls, and the URLs of the
/// non-resource calls (discovery).
fn audited_calls(audit_log: &Path, user: &str) -> (Vec<Call>, BTreeSet<String>) {
    let mut calls = Vec::new();
    let mut urls = BTreeSet::new();
    let text = std::fs::read_to_string(audit_log)
        .unwrap_or_else(|e| panic!("{}: {e}", audit_log.display()));
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        // The test's own `kubectl auth whoami` with the token is not the operator's call.
        let by_kubectl = event["userAgent"]
            .as_str()
            .is_some_and(|agent| agent.starts_with("kubectl/"));
        if event["user"]["username"] != user || by_kubectl {
            continue;
        }
        let code = event["responseStatus"]["code"].as_i64().unwrap_or_default();
        // A watch that starts is logged again when it ends (count it once); one refused
        // never starts.
        let counted = match event["stage"].as_str() {
            Some("ResponseStarted") => event["verb"] == "watch",
            Some("ResponseComplete") => event["verb"] != "watch" || code >= 400,
            _ => false,
        };
        if !counted {
            continue;
        }
        let Some(object) = event.get("objectRef") else {
            let uri = event["requestURI"].as_str().unwrap_or_default();
            urls.insert(uri.split('?').next().unwrap_or_default().to_owned());
            continue;
        };
        let text = |key: &str| object[key].as_str().map(str::to_owned);
        let resource = match text("subresource") {
            Some(sub) => format!("{}/{sub}", text("resource").unwrap_or_default()),
            None => text("resource").unwrap_or_default(),
        };
        calls.push(Call {
            verb: event["verb"].as_str().unwrap_or_default().to_owned(),
            api_group: text("apiGroup").unwrap_or_default(),
            resource,
            namespace: text("namespace"),
            name: text("name"),
            code,
        });
    }
    (calls, urls)
}

/// Non-resource URLs every authenticated user may read (the `system:discovery` and
/// `system:public-info-viewer` ClusterRoles).
fn discovery_url(url: &str) -> bool {
    [
        "/api", "/apis", "/version", "/openapi", "/healthz", "/livez", "/readyz",
    ]
    .iter()
    .any(|prefix| url == *prefix || url.starts_with(&format!("{prefix}/")))
}

/// A kubeconfig for the API server of `cluster` that authenticates with `token` only.
fn token_kubeconfig(cluster: &Cluster, token: &str, path: &Path) {
    let admin: Value = serde_json::from_str(&cluster.run(
        "kubectl",
        &["config", "view", "--raw", "--minify", "-o", "json"],
    ))
    .unwrap();
    let server = admin["clusters"][0]["cluster"]["server"].as_str().unwrap();
    let ca = admin["clusters"][0]["cluster"]["certificate-authority"]
        .as_str()
        .unwrap();
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "target", "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": "capstan", "user": {"token": token}}],
        "contexts": [{"name": "capstan", "context": {"cluster": "target", "user": "capstan"}}],
        "current-context": "capstan",
    });
    std::fs::write(path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// Deletes the chart's release, the example namespaces and the operator, also on failure.
struct Teardown<'a> {
    cluster: &'a Cluster,
    release: String,
    namespaces: Vec<String>,
}

impl Drop for Teardown<'_> {
    fn drop(&mut self) {
        let system = &self.namespaces[0];
        let _ = self
            .cluster
            .command("helm")
            .args(["uninstall", &self.release, "--namespace", system])
            .output();
        for namespace in &self.namespaces {
            // Finalizers of HelmReleases left by a failed run would hold the namespace.
            let _ = self
                .cluster
                .command("kubectl")
                .args([
                    "patch",
                    "helmreleases.helm.capstan.dev",
                    "--all",
                    "-n",
                    namespace,
                    "--type=merge",
                    "-p",
                    r#"{"metadata":{"finalizers":null}}"#,
                ])
                .output();
            let _ = self
                .cluster
                .command("kubectl")
                .args(["delete", "pods", "--all", "--force", "--grace-period=0"])
                .args(["-n", namespace])
                .output();
            let _ = self
                .cluster
                .command("kubectl")
                .args(["delete", "namespace", namespace, "--wait=false"])
                .output();
        }
    }
}

pub async fn the_chart_installed_by_helm_runs_the_operator_as_its_service_account(
    cluster: Arc<Cluster>,
) {
    let root = repo_root();
    let chart = root.join("deploy/chart/capstan");
    let system = cluster.namespace("capstan-installed");
    let examples = cluster.namespace("examples");
    let apps = cluster.namespace("examples-apps");
    let release = "capstan-installed";
    let _teardown = Teardown {
        cluster: &cluster,
        release: release.to_owned(),
        namespaces: vec![system.clone(), examples.clone(), apps.clone()],
    };
    for namespace in [&examples, &apps] {
        cluster.run("kubectl", &["create", "namespace", namespace]);
    }

    // As a platform team installs it: the chart's defaults, plus an egress rule letting the
    // sources reach this machine (the examples' git repository and chart repository).
    output(
        cluster
            .command("helm")
            .args(["install", release])
            .arg(&chart)
            .args(["--namespace", &system, "--create-namespace", "--wait=false"])
            .args(["--set", "config.sources.egress.allowLocalPaths=true"])
            .args([
                "--set",
                "config.sources.egress.allowNetworks={127.0.0.1/32}",
            ]),
    );
    let account = release;
    let user = format!("system:serviceaccount:{system}:{account}");

    // What the Deployment would run, run here: its arguments and its configuration, with
    // the paths that are inside the image pointed at this checkout.
    let deployment: Value = serde_json::from_str(&cluster.run(
        "kubectl",
        &["get", "deployment", release, "-n", &system, "-o", "json"],
    ))
    .unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"], account,
        "the Deployment runs as another account"
    );
    let work = tempfile::tempdir().unwrap();
    let config_map: Value = serde_json::from_str(&cluster.run(
        "kubectl",
        &[
            "get",
            "configmap",
            &format!("{release}-config"),
            "-n",
            &system,
            "-o",
            "json",
        ],
    ))
    .unwrap();
    let config = config_map["data"]["capstan.yaml"]
        .as_str()
        .unwrap()
        .replace(
            "/usr/lib/capstan/plugins",
            &root.join("target/plugins").display().to_string(),
        )
        .replace(
            "/var/cache/capstan",
            &root.join("target/capstan-cache").display().to_string(),
        );
    let config_path = work.path().join("capstan.yaml");
    std::fs::write(&config_path, config).unwrap();
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| {
            let arg = arg.as_str().unwrap();
            if arg.starts_with("--config=") {
                format!("--config={}", config_path.display())
            } else if arg.starts_with("--metrics-address=") {
                format!("--metrics-address=127.0.0.1:{metrics_port}")
            } else {
                arg.to_owned()
            }
        })
        .collect();

    let token = cluster.run(
        "kubectl",
        &[
            "create",
            "token",
            account,
            "-n",
            &system,
            "--duration=3600s",
        ],
    );
    let kubeconfig = work.path().join("kubeconfig");
    token_kubeconfig(&cluster, token.trim(), &kubeconfig);
    let whoami = output(
        Command::new(cluster.tool("kubectl"))
            .env("KUBECONFIG", &kubeconfig)
            .args([
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ]),
    );
    assert_eq!(whoami, user, "the token authenticates as another user");

    // The examples' sources: a git repository with the example charts and a Helm chart
    // repository with the packaged chart.
    let repo = work.path().join("git");
    std::fs::create_dir_all(repo.join("charts")).unwrap();
    output(
        Command::new("cp")
            .arg("-r")
            .arg(root.join("deploy/examples/charts/hello"))
            .arg(repo.join("charts/hello")),
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "example charts"]);
    let charts = work.path().join("repository");
    std::fs::create_dir_all(&charts).unwrap();
    output(
        cluster
            .command("helm")
            .arg("package")
            .arg(root.join("deploy/examples/charts/hello"))
            .arg("-d")
            .arg(&charts),
    );
    output(cluster.command("helm").args(["repo", "index"]).arg(&charts));
    let server = RepoServer::start(&charts, work.path().join("repository.log"), None);

    let log = work.path().join("operator.log");
    let child = Command::new(crate::harness::capstan_binary())
        .args(&args)
        .env("KUBECONFIG", &kubeconfig)
        .env("POD_NAME", format!("installed-{}", std::process::id()))
        .env("POD_NAMESPACE", &system)
        .env("RUST_LOG", "info")
        .env("XDG_CACHE_HOME", work.path().join("xdg"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let operator = Operator::new(child, log);

    // The example HelmReleases, as the demo applies them, in this test's namespaces.
    let mut names = Vec::new();
    let examples_dir = root.join("deploy/examples/helmreleases");
    let mut files: Vec<_> = std::fs::read_dir(&examples_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("${GIT_URL}", &format!("file://{}", repo.display()))
            .replace("${HELM_REPO_URL}", &server.url(""))
            .replace("namespace: demo-apps", &format!("namespace: {apps}"))
            .replace(
                "targetNamespace: demo-apps",
                &format!("targetNamespace: {apps}"),
            )
            .replace("namespace: demo\n", &format!("namespace: {examples}\n"));
        let applied = work.path().join(file.file_name().unwrap());
        std::fs::write(&applied, &text).unwrap();
        output(
            cluster
                .command("kubectl")
                .args(["apply", "-f"])
                .arg(&applied),
        );
        if text.contains("kind: HelmRelease") {
            let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
            names.push(doc["metadata"]["name"].as_str().unwrap().to_owned());
        }
    }
    assert!(names.len() >= 3, "examples: {names:?}");

    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client.clone(), &examples);
    for name in &names {
        wait_hr(&api, name, &operator, "Ready", |hr| {
            hr.and_then(|hr| hr.status.as_ref())
                .and_then(|s| s.condition("Ready"))
                .is_some_and(|c| c.status == "True")
        })
        .await;
    }
    for name in &names {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in &names {
        wait_hr(&api, name, &operator, "uninstall", |hr| hr.is_none()).await;
    }
    let operator_log = operator.log();
    drop(operator);
    assert!(
        !operator_log.contains("forbidden"),
        "the operator was refused something:\n{operator_log}"
    );

    // Least privilege, from what was used.
    let manifest = cluster.run("helm", &["get", "manifest", release, "-n", &system]);
    let grants = granted_rules(&manifest, &system, account);
    assert!(!grants.is_empty(), "the chart binds nothing to {user}");
    let (calls, urls) = audited_calls(&cluster.audit_log(), &user);
    assert!(
        calls.len() > 20,
        "only {} audited calls of {user}: is the audit log on?",
        calls.len()
    );
    let mut used: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for call in &calls {
        let group = if call.api_group.is_empty() {
            "core".to_owned()
        } else {
            call.api_group.clone()
        };
        *used
            .entry((call.verb.clone(), group, call.resource.clone()))
            .or_default() += 1;
    }
    println!("calls of {user} (audit log): {}", calls.len());
    for ((verb, group, resource), count) in &used {
        println!("  {count:>5}  {verb} {group}/{resource}");
    }
    println!("non-resource URLs: {urls:?}");
    let refused: Vec<&Call> = calls.iter().filter(|c| c.code == 403).collect();
    let outside: Vec<&Call> = calls
        .iter()
        .filter(|call| !grants.iter().any(|grant| grant.covers(call)))
        .collect();
    let odd_urls: Vec<&String> = urls.iter().filter(|url| !discovery_url(url)).collect();
    let mut unused = Vec::new();
    for grant in &grants {
        for verb in &grant.verbs {
            for group in &grant.api_groups {
                for resource in &grant.resources {
                    let exercised = calls.iter().any(|call| {
                        &call.verb == verb
                            && &call.api_group == group
                            && &call.resource == resource
                            && grant.covers(call)
                    });
                    if !exercised {
                        let group = if group.is_empty() { "core" } else { group };
                        unused.push(format!("{verb} {group}/{resource} ({})", grant.role));
                    }
                }
            }
        }
    }
    println!(
        "used outside the grant: {}; refused: {}; grants never used ({}):",
        outside.len(),
        refused.len(),
        unused.len()
    );
    for grant in &unused {
        println!("  {grant}");
    }
    assert!(
        outside.is_empty() && refused.is_empty() && odd_urls.is_empty(),
        "calls outside the chart's grant: {outside:#?}\nrefused: {refused:#?}\nURLs: {odd_urls:?}"
    );
    drop(server);
}
