//! End-to-end: charts from a real OCI registry (go-containerregistry's registry, built by
//! `tests/cluster/build-registry`) pushed with the real `helm push`, through the
//! first-party `source-oci` plugin: a SemVer constraint installs the newest matching
//! version and follows a newer tag within an interval, a digest pin holds, wrong
//! credentials and a stopped registry are reported on the release while other releases
//! keep reconciling.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use capstan::api::HelmRelease;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};

use crate::git_support::git;
use crate::harness::{Cluster, copy_dir, repo_root};
use crate::helmrelease::{Operator, condition, helm_release, install_crd, ready, wait_for};

/// A registry process owned by the test: killed on drop.
struct Registry {
    child: Option<Child>,
    address: String,
}

impl Registry {
    /// Start the test registry with `args` (e.g. `--basic u:p`) on a free loopback port.
    fn start(args: &[&str], log: &Path) -> Registry {
        let built = Command::new(repo_root().join("tests/cluster/build-registry"))
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let binary = PathBuf::from(String::from_utf8(built.stdout).unwrap().trim());
        let mut child = Command::new(binary)
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("registry said {line:?}"))
            .to_owned();
        Registry {
            child: Some(child),
            address,
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Package the example chart at `version` and `helm push` it to `registry`; the manifest
/// digest helm reports.
fn push(cluster: &Cluster, work: &Path, registry: &str, version: &str, auth: &[&str]) -> String {
    let chart = work.join(format!("src-{version}/hello"));
    copy_dir(&repo_root().join("deploy/examples/charts/hello"), &chart);
    let manifest = chart.join("Chart.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("version: 0.1.0", &format!("version: {version}")),
    )
    .unwrap();
    let out_dir = work.join(format!("pkg-{version}"));
    cluster.run(
        "helm",
        &[
            "package",
            chart.to_str().unwrap(),
            "-d",
            out_dir.to_str().unwrap(),
        ],
    );
    let archive = out_dir.join(format!("hello-{version}.tgz"));
    let target = format!("oci://{registry}/charts");
    let mut args = vec!["push", archive.to_str().unwrap(), &target, "--plain-http"];
    args.extend_from_slice(auth);
    let output = cluster.command("helm").args(&args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "helm push: {text}");
    text.lines()
        .find_map(|l| l.strip_prefix("Digest: "))
        .unwrap_or_else(|| panic!("no digest in: {text}"))
        .trim()
        .to_owned()
}

fn applied(hr: &HelmRelease) -> Option<String> {
    hr.status
        .as_ref()
        .and_then(|s| s.applied_source_revision.clone())
}

pub async fn oci_charts_follow_constraints_pins_and_report_registry_failures(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let mut open = Registry::start(&[], &dir.path().join("open.log"));
    let guarded = Registry::start(
        &["--basic", "alice:s3cret"],
        &dir.path().join("guarded.log"),
    );
    let v100 = push(&cluster, dir.path(), &open.address, "1.0.0", &[]);
    push(&cluster, dir.path(), &open.address, "1.1.0", &[]);
    push(&cluster, dir.path(), &open.address, "2.0.0", &[]);
    let with_auth = ["--username", "alice", "--password", "s3cret"];
    push(&cluster, dir.path(), &guarded.address, "1.0.0", &with_auth);

    let ns = cluster.create_namespace("hr-oci").await;
    let client = cluster.client().await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret = |password: &str| -> Secret {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "registry-auth"},
            "stringData": {"username": "alice", "password": password},
        }))
        .unwrap()
    };
    secrets
        .create(&PostParams::default(), &secret("wrong-password"))
        .await
        .unwrap();
    let api: Api<HelmRelease> = Api::namespaced(client, &ns);
    let url = |registry: &str| format!("oci://{registry}/charts/hello");
    let releases = [
        helm_release(
            "ranged",
            &ns,
            serde_json::json!({"chart": {"source": {"kind": "oci", "spec": {
                "url": url(&open.address), "version": ">=1.0.0 <2", "insecure": true}}}}),
        ),
        helm_release(
            "pinned",
            &ns,
            serde_json::json!({"chart": {"source": {"kind": "oci", "spec": {
                "url": url(&open.address), "digest": v100, "insecure": true}}}}),
        ),
        helm_release(
            "guarded",
            &ns,
            serde_json::json!({"chart": {"source": {"kind": "oci", "spec": {
                "url": url(&guarded.address), "version": "1.0.0", "insecure": true},
                "secretRef": {"name": "registry-auth"}}}}),
        ),
    ];
    for hr in &releases {
        api.create(&PostParams::default(), hr).await.unwrap();
    }
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let long = Duration::from_secs(180);

    // The newest version inside the constraint (not 2.0.0), and the pinned digest.
    let ranged = wait_for(&api, "ranged", &operator, "Ready", long, ready).await;
    assert!(
        applied(&ranged).is_some_and(|r| r.starts_with("1.1.0@sha256:")),
        "{:?}",
        applied(&ranged)
    );
    let pinned = wait_for(&api, "pinned", &operator, "Ready", long, ready).await;
    assert_eq!(applied(&pinned), Some(format!("1.0.0@{v100}")));
    let list = cluster.run("helm", &["list", "-n", &ns, "-o", "json"]);
    assert!(list.contains("\"chart\":\"hello-1.1.0\""), "{list}");
    assert!(list.contains("\"chart\":\"hello-1.0.0\""), "{list}");

    // Wrong credentials: the condition says the registry refused them.
    let refused = wait_for(
        &api,
        "guarded",
        &operator,
        "refused credentials",
        long,
        |hr| condition(hr, "ChartFetched").is_some_and(|c| c.status == "False"),
    )
    .await;
    let message = condition(&refused, "ChartFetched").unwrap().message.clone();
    assert!(message.contains("refused the credentials"), "{message}");
    assert!(!message.contains("wrong-password"), "{message}");

    // A newer matching tag is followed within an interval (the operator polls every 2 s);
    // the pin holds.
    push(&cluster, dir.path(), &open.address, "1.2.0", &[]);
    let followed = wait_for(&api, "ranged", &operator, "1.2.0", long, |hr| {
        ready(hr) && applied(hr).is_some_and(|r| r.starts_with("1.2.0@"))
    })
    .await;
    assert_eq!(followed.status.unwrap().revision, Some(2));
    let still = api.get("pinned").await.unwrap();
    assert_eq!(applied(&still), Some(format!("1.0.0@{v100}")));

    // Right credentials: installed.
    secrets
        .patch(
            "registry-auth",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"stringData": {"password": "s3cret"}})),
        )
        .await
        .unwrap();
    wait_for(&api, "guarded", &operator, "Ready", long, ready).await;

    // The open registry stops: its releases say so; the guarded one keeps reconciling.
    open.stop();
    let unreachable = wait_for(&api, "ranged", &operator, "registry down", long, |hr| {
        condition(hr, "ChartFetched").is_some_and(|c| c.status == "False")
    })
    .await;
    let message = condition(&unreachable, "ChartFetched")
        .unwrap()
        .message
        .clone();
    assert!(
        message.contains(&open.address) && message.to_lowercase().contains("reach"),
        "{message}"
    );
    api.patch(
        "guarded",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"values": {"message": "still served"}}})),
    )
    .await
    .unwrap();
    let upgraded = wait_for(&api, "guarded", &operator, "revision 2", long, |hr| {
        ready(hr) && hr.status.as_ref().and_then(|s| s.revision) == Some(2)
    })
    .await;
    assert_eq!(upgraded.status.unwrap().revision, Some(2));
}

/// A chart in git whose dependency lives in an OCI registry (`repository: oci://…`, as
/// Bitnami's charts name `common`): the git source pulls the version real
/// `helm dependency build --plain-http` pulls (the highest within the constraint), only
/// from a registry the release lists, and the release installs with it.
pub async fn a_git_chart_pulls_its_oci_dependencies_as_helm_dependency_build_does(
    cluster: Arc<Cluster>,
) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::start(&[], &dir.path().join("registry.log"));
    for version in ["1.0.0", "1.1.0", "2.0.0"] {
        push(&cluster, dir.path(), &registry.address, version, &[]);
    }
    let charts = format!("oci://{}/charts", registry.address);
    let repo = dir.path().join("umbrella-repo");
    let chart = repo.join("umbrella");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n- name: hello\n  version: ^1.0.0\n  repository: {charts}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n",
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "umbrella"]);

    // What real Helm pulls for this chart.
    let copy = dir.path().join("helm-build/umbrella");
    copy_dir(&chart, &copy);
    cluster.run(
        "helm",
        &[
            "dependency",
            "build",
            copy.to_str().unwrap(),
            "--plain-http",
        ],
    );
    let helm_pulled: Vec<String> = std::fs::read_dir(copy.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(helm_pulled, ["hello-1.1.0.tgz"]);

    let ns = cluster.create_namespace("hr-oci-deps").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &ns);
    let operator = Operator::start(&cluster, dir.path(), &[]);
    let url = format!("file://{}", repo.display());
    // Not listed: refused, naming the field, before any request to the registry.
    api.create(
        &PostParams::default(),
        &helm_release(
            "umbrella",
            &ns,
            serde_json::json!({
                "chart": {"git": url, "ref": "main", "path": "umbrella", "insecure": true},
                "releaseName": "umbrella",
            }),
        ),
    )
    .await
    .unwrap();
    let refused = wait_for(
        &api,
        "umbrella",
        &operator,
        "ChartFetchFailed",
        Duration::from_secs(120),
        |hr| condition(hr, "ChartFetched").is_some_and(|c| c.reason == "ChartFetchFailed"),
    )
    .await;
    let message = condition(&refused, "ChartFetched").unwrap().message.clone();
    assert!(
        message.contains(&format!(
            "dependency `hello` ({charts}) is not in charts/: the source does not list {charts} in `dependencyRepositories`"
        )),
        "{message}"
    );

    api.patch(
        "umbrella",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"chart": {"dependencyRepositories": [charts]}}})),
    )
    .await
    .unwrap();
    wait_for(
        &api,
        "umbrella",
        &operator,
        "Ready",
        Duration::from_secs(180),
        ready,
    )
    .await;
    let manifest = cluster.run("helm", &["get", "manifest", "umbrella", "-n", &ns]);
    assert!(
        manifest.contains("# Source: umbrella/charts/hello/templates/deployment.yaml")
            && manifest.contains("helm.sh/chart: hello-1.1.0")
            && manifest.contains("name: umbrella-umbrella"),
        "{manifest}"
    );
}
