//! Source sync of Helm HTTP repositories with the real `source-helm-repo` component,
//! against a real HTTP server on 127.0.0.1 (`tests/support/helm_repo_server.py`) serving a
//! folder whose `index.yaml` and archives the real `helm` CLI made (`helm package`,
//! `helm repo index`). The expected versions come from `helm show chart --repo`, the
//! expected digests from the archives `helm package` wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../../tests/support/egress.rs"]
mod egress_support;
#[path = "../../tests/support/git.rs"]
mod git_support;
#[path = "../../tests/support/repo_server.rs"]
mod repo_server;
#[path = "../../tests/support/sources.rs"]
mod sources_support;
#[path = "../../tests/support/tls.rs"]
mod tls_support;
use sources_support::{helm_source, with_secret};

use capstan::capabilities::http::HostPattern;
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::artifacts::{ArtifactStore, digest_of};
use capstan::sources::mirrors::MirrorStore;
use capstan::sources::sync::{
    ArtifactRef, CredentialsLookup, HttpOptions, NoCredentials, SourceError, SourceSync,
    SourceSyncOptions,
};
use capstan::sources::{ReleaseKey, SecretRef, SourceSpec};
use repo_server::RepoServer;

const INTERVAL: Duration = Duration::from_secs(60);
const GRACE: Duration = Duration::from_secs(300);
/// Versions of chart `demo` published in the test repository (two stable, one pre-release
/// above them).
const VERSIONS: &[&str] = &["1.0.0", "1.2.0", "1.3.0-rc.1"];

fn tools_helm() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(root.join("tests/cluster/tools-dir"))
        .output()
        .expect("tests/cluster/tools-dir");
    let helm = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("helm");
    assert!(
        helm.is_file(),
        "{} is missing: run `make tools`",
        helm.display()
    );
    helm
}

/// The real `helm` CLI with its folders inside `home`.
fn helm(home: &Path, args: &[&str]) -> String {
    let out = Command::new(tools_helm())
        .args(args)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("helm");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// Package `name` at each version into `out` with `helm package`.
fn publish(work: &Path, out: &Path, name: &str, versions: &[&str]) {
    for version in versions {
        let dir = work
            .join("src")
            .join(format!("{name}-{version}"))
            .join(name);
        write(
            &dir.join("Chart.yaml"),
            &format!(
                "apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"{version}\"\n"
            ),
        );
        write(
            &dir.join("templates/cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
        );
        helm(
            work,
            &[
                "package",
                dir.to_str().unwrap(),
                "-d",
                out.to_str().unwrap(),
            ],
        );
    }
}

struct Fixture {
    work: tempfile::TempDir,
    /// Served folder; `charts/` is the repository with relative chart URLs.
    root: PathBuf,
    server: RepoServer,
    sync: SourceSync,
    artifacts: Arc<ArtifactStore>,
    _runtime: PluginRuntime,
}

fn runtime(work: &Path) -> PluginRuntime {
    let mut runtime = PluginRuntime::new(work.join("compiled"), None).unwrap();
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins");
    for (name, file) in [
        ("git", "source-git.wasm"),
        ("helm-repo", "source-helm-repo.wasm"),
    ] {
        let path = plugins.join(file);
        assert!(
            path.is_file(),
            "{} is missing: run `make plugins`",
            path.display()
        );
        runtime
            .load(&PluginConfig {
                name: name.into(),
                world: PluginWorld::Source,
                path,
                limits: PluginLimits::default(),
                wasi: WasiGrants::default(),
                kinds: Vec::new(),
                allowed_hosts: None,
                storage_namespaces: Vec::new(),
                compat_helm: None,
            })
            .unwrap();
    }
    runtime
}

/// Source sync over git and Helm repository sources with the loaded components.
async fn new_sync(
    work: &std::path::Path,
    runtime: &PluginRuntime,
    artifacts: Arc<ArtifactStore>,
    options: HttpOptions,
) -> SourceSync {
    SourceSync::new(
        SourceSyncOptions {
            interval: INTERVAL,
            grace: GRACE,
            parallelism: 4,
        },
        Arc::new(MirrorStore::new(
            work.join("mirrors"),
            Duration::from_secs(30),
        )),
        artifacts,
        sources_support::catalog(runtime, &["git", "helm-repo"]).await,
        None,
    )
    .with_http(options)
}

/// A repository `charts/` (relative URLs) with chart `demo` at [`VERSIONS`], served on
/// loopback, and source sync with `options`.
async fn fixture_with(options: HttpOptions, credentials: Option<(&str, &str)>) -> Fixture {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("served");
    let charts = root.join("charts");
    publish(work.path(), &charts, "demo", VERSIONS);
    helm(work.path(), &["repo", "index", charts.to_str().unwrap()]);
    let server = RepoServer::start(&root, work.path().join("access.log"), credentials);
    let runtime = runtime(work.path());
    let artifacts = Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap());
    let sync = new_sync(work.path(), &runtime, Arc::clone(&artifacts), options).await;
    Fixture {
        work,
        root,
        server,
        sync,
        artifacts,
        _runtime: runtime,
    }
}

/// HTTP options for the test servers on 127.0.0.1, which the default egress guard refuses.
fn test_http() -> HttpOptions {
    HttpOptions {
        egress: egress_support::loopback_and_local_paths(),
        ..HttpOptions::default()
    }
}

async fn fixture() -> Fixture {
    fixture_with(test_http(), None).await
}

fn release(n: usize) -> ReleaseKey {
    ReleaseKey {
        namespace: "apps".into(),
        name: format!("r{n}"),
    }
}

fn source(url: &str, chart: &str, version: &str) -> SourceSpec {
    helm_source(url, chart, version)
}

/// One release on `source`, one pass; its result.
async fn one(f: &Fixture, source: SourceSpec) -> Result<ArtifactRef, SourceError> {
    one_with(f, source, &NoCredentials).await
}

async fn one_with(
    f: &Fixture,
    source: SourceSpec,
    credentials: &dyn CredentialsLookup,
) -> Result<ArtifactRef, SourceError> {
    let specs = BTreeMap::from([(release(0), source)]);
    let mut report = f.sync.pass(&specs, credentials, Instant::now()).await;
    report.releases.remove(&release(0)).expect("reported")
}

/// The version real Helm picks for `version` (`helm show chart --repo`).
fn helm_picks(f: &Fixture, repository: &str, chart: &str, version: &str) -> String {
    let mut args = vec!["show", "chart", "--repo", repository, chart];
    if !version.is_empty() {
        args.extend(["--version", version]);
    }
    let chart_yaml = helm(f.work.path(), &args);
    chart_yaml
        .lines()
        .find_map(|l| l.strip_prefix("version: "))
        .expect("version in Chart.yaml")
        .trim()
        .to_owned()
}

fn assert_names_source(error: &SourceError, url: &str, chart: &str, cause: &str) {
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("helm-repository source {url} (chart: {chart}")),
        "{text}"
    );
    assert!(text.contains(cause), "expected `{cause}` in: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn picks_versions_as_helm_does_and_verifies_digests() {
    let f = fixture().await;
    let repository = f.server.url("charts");
    for wanted in [
        "",
        "~1.0",
        ">=1.0.0 <1.3.0",
        ">=1.3.0-0",
        "1.3.0-rc.1",
        "1.2.0",
        "^1",
    ] {
        let artifact = one(&f, source(&repository, "demo", wanted))
            .await
            .unwrap_or_else(|e| panic!("{wanted}: {e}"));
        let expected = helm_picks(&f, &repository, "demo", wanted);
        assert_eq!(artifact.version, expected, "version for `{wanted}`");
        assert_eq!(artifact.revision, expected, "revision is the chart version");
        assert_eq!(artifact.chart, "demo");
        let packaged = std::fs::read(f.root.join(format!("charts/demo-{expected}.tgz"))).unwrap();
        assert_eq!(
            artifact.digest,
            digest_of(&packaged),
            "the archive helm packaged"
        );
        assert_eq!(f.artifacts.get(&artifact.digest).unwrap(), packaged);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absolute_chart_urls_and_the_host_allowlist() {
    // The same files indexed with absolute URLs on another origin (`localhost` instead of
    // `127.0.0.1`): refused unless the configuration grants that host.
    let f = fixture().await;
    let other = f.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    for version in VERSIONS {
        let name = format!("demo-{version}.tgz");
        std::fs::copy(f.root.join("charts").join(&name), other.join(&name)).unwrap();
    }
    let absolute = format!("http://localhost:{}/other", f.server.port);
    helm(
        f.work.path(),
        &["repo", "index", other.to_str().unwrap(), "--url", &absolute],
    );
    let repository = f.server.url("other");
    let refused = one(&f, source(&repository, "demo", "1.0.0"))
        .await
        .unwrap_err();
    assert_names_source(
        &refused,
        &repository,
        "demo",
        &format!("host `localhost:{}` is not allowed", f.server.port),
    );
    assert!(
        f.server.requests("/other/demo").is_empty(),
        "nothing reached the refused host"
    );

    let granted = fixture_with(
        HttpOptions {
            extra_hosts: vec![HostPattern::parse("localhost").unwrap()],
            ..test_http()
        },
        None,
    )
    .await;
    let other = granted.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(
        granted.root.join("charts/demo-1.0.0.tgz"),
        other.join("demo-1.0.0.tgz"),
    )
    .unwrap();
    let absolute = format!("http://localhost:{}/other", granted.server.port);
    helm(
        granted.work.path(),
        &["repo", "index", other.to_str().unwrap(), "--url", &absolute],
    );
    let artifact = one(&granted, source(&granted.server.url("other"), "demo", ""))
        .await
        .unwrap();
    assert_eq!(
        artifact.digest,
        digest_of(&std::fs::read(other.join("demo-1.0.0.tgz")).unwrap())
    );
    assert_eq!(granted.server.requests("/other/demo-1.0.0.tgz").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gives_errors_naming_source_and_cause() {
    let f = fixture().await;
    let repository = f.server.url("charts");

    let missing = one(&f, source(&repository, "nope", "")).await.unwrap_err();
    assert_names_source(
        &missing,
        &repository,
        "nope",
        "chart `nope` is not in the repository index",
    );

    let no_match = one(&f, source(&repository, "demo", ">=5"))
        .await
        .unwrap_err();
    assert_names_source(
        &no_match,
        &repository,
        "demo",
        "no version of chart `demo` matches `>=5`",
    );

    // Tampered archive: the bytes no longer match the index's digest.
    let chart = f.root.join("charts/demo-1.0.0.tgz");
    let original = std::fs::read(&chart).unwrap();
    std::fs::copy(f.root.join("charts/demo-1.2.0.tgz"), &chart).unwrap();
    let tampered = one(&f, source(&repository, "demo", "1.0.0"))
        .await
        .unwrap_err();
    assert_names_source(&tampered, &repository, "demo", "digest mismatch");
    assert!(
        tampered.cause.contains(&hex_sha256(&original)),
        "names the expected digest: {tampered}"
    );

    // Corrupt archive whose digest the index records: refused as not a chart.
    let garbage = b"this is not a gzipped tar archive".to_vec();
    std::fs::write(&chart, &garbage).unwrap();
    let index_path = f.root.join("charts/index.yaml");
    let index = std::fs::read_to_string(&index_path).unwrap();
    std::fs::write(
        &index_path,
        index.replace(&hex_sha256(&original), &hex_sha256(&garbage)),
    )
    .unwrap();
    let corrupt_repo = fixture_reusing(&f).await;
    let corrupt = one(&corrupt_repo, source(&repository, "demo", "1.0.0"))
        .await
        .unwrap_err();
    assert_names_source(
        &corrupt,
        &repository,
        "demo",
        "is not a valid chart archive",
    );

    // Unreachable: a port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dead = format!("http://127.0.0.1:{closed}/charts");
    let unreachable = one(&f, source(&dead, "demo", "")).await.unwrap_err();
    assert_names_source(&unreachable, &dead, "demo", "cannot reach http://127.0.0.1");

    // In one pass, the failing sources do not hold up a good one.
    let specs = BTreeMap::from([
        (release(1), source(&dead, "demo", "")),
        (release(2), source(&repository, "nope", "")),
        (
            release(3),
            source(&corrupt_repo.server.url("charts"), "demo", "1.2.0"),
        ),
    ]);
    let mixed = corrupt_repo
        .sync
        .pass(&specs, &NoCredentials, Instant::now())
        .await;
    assert!(mixed.releases[&release(1)].is_err());
    assert!(mixed.releases[&release(2)].is_err());
    let good = mixed.releases[&release(3)].as_ref().unwrap();
    assert_eq!(
        good.digest,
        digest_of(&std::fs::read(f.root.join("charts/demo-1.2.0.tgz")).unwrap())
    );

    // Not a repository at all.
    let not_found = one(&f, source(&f.server.url("nothing-here"), "demo", ""))
        .await
        .unwrap_err();
    assert_names_source(
        &not_found,
        &f.server.url("nothing-here"),
        "demo",
        "HTTP 404",
    );
}

/// Another sync over the same served folder (so nothing is cached from earlier passes).
async fn fixture_reusing(f: &Fixture) -> Fixture {
    let work = tempfile::tempdir().unwrap();
    let runtime = runtime(work.path());
    let artifacts = Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap());
    let sync = new_sync(work.path(), &runtime, Arc::clone(&artifacts), test_http()).await;
    Fixture {
        root: f.root.clone(),
        server: RepoServer::start(&f.root, work.path().join("access.log"), None),
        work,
        sync,
        artifacts,
        _runtime: runtime,
    }
}

fn hex_sha256(bytes: &[u8]) -> String {
    digest_of(bytes).strip_prefix("sha256:").unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_over_the_size_cap_is_refused() {
    let probe = fixture().await;
    let index_len = std::fs::metadata(probe.root.join("charts/index.yaml"))
        .unwrap()
        .len();
    drop(probe);
    let f = fixture_with(
        HttpOptions {
            // Half the size: the index timestamps vary in length from one `helm repo
            // index` to the next, never by that much.
            max_document_bytes: index_len / 2,
            ..test_http()
        },
        None,
    )
    .await;
    let repository = f.server.url("charts");
    let error = one(&f, source(&repository, "demo", "")).await.unwrap_err();
    assert_names_source(
        &error,
        &repository,
        "demo",
        &format!("larger than the size cap of {} bytes", index_len / 2),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_releases_share_one_index_request_per_interval() {
    let f = fixture().await;
    let repository = f.server.url("charts");
    let constraints = ["", "~1.0", "1.2.0", ">=1.3.0-0"];
    let specs: BTreeMap<ReleaseKey, SourceSpec> = (0..200)
        .map(|n| {
            (
                release(n),
                source(&repository, "demo", constraints[n % constraints.len()]),
            )
        })
        .collect();
    let t0 = Instant::now();
    let first = f.sync.pass(&specs, &NoCredentials, t0).await;
    assert!(
        first.releases.values().all(Result::is_ok),
        "{:?}",
        first.releases
    );
    assert_eq!(first.changed.len(), 200);
    assert_eq!(
        f.server.requests("/charts/index.yaml").len(),
        1,
        "one index request"
    );
    let downloads = f.server.requests("/charts/demo-");
    let distinct_versions: std::collections::BTreeSet<&str> = first
        .releases
        .values()
        .filter_map(|r| r.as_ref().ok())
        .map(|a| a.version.as_str())
        .collect();
    assert_eq!(
        downloads.len(),
        distinct_versions.len(),
        "each archive once: {downloads:?}"
    );

    // Within the interval: served from the cache, nothing downloaded again.
    let quiet = f
        .sync
        .pass(&specs, &NoCredentials, t0 + Duration::from_secs(1))
        .await;
    assert!(quiet.changed.is_empty());
    assert_eq!(f.server.requests("/charts/index.yaml").len(), 1);

    // Next interval: one conditional request, answered 304 (the file did not change).
    let later = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL).await;
    assert!(later.changed.is_empty());
    let index_requests = f.server.requests("/charts/index.yaml");
    assert_eq!(index_requests.len(), 2, "{index_requests:?}");
    assert!(index_requests[1].contains(" 304 "), "{index_requests:?}");
    assert_eq!(f.server.requests("/charts/demo-").len(), downloads.len());

    // A new version published: picked up at the next interval by the releases that follow
    // the latest stable version, and only those change.
    let charts = f.root.join("charts");
    publish(f.work.path(), &charts, "demo", &["1.4.0"]);
    // Make sure the index's mtime moves past the Last-Modified second the server sent.
    std::thread::sleep(Duration::from_millis(1100));
    helm(f.work.path(), &["repo", "index", charts.to_str().unwrap()]);
    let newer = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL * 2).await;
    // Helm's choice per constraint before and after; exactly the releases whose choice
    // moved are reported as changed.
    let picks: BTreeMap<&str, String> = constraints
        .iter()
        .map(|c| (*c, helm_picks(&f, &repository, "demo", c)))
        .collect();
    let mut expected_changed = Vec::new();
    for (release, spec) in &specs {
        let version = spec.spec_value()["version"].as_str().unwrap().to_owned();
        let now = &picks[version.as_str()];
        assert_eq!(&newer.releases[release].as_ref().unwrap().version, now);
        if &first.releases[release].as_ref().unwrap().version != now {
            expected_changed.push(release.clone());
        }
    }
    assert!(!expected_changed.is_empty());
    assert_eq!(newer.changed, expected_changed);

    // Nothing references the repository any more: its cache is collected after the grace.
    let empty: BTreeMap<ReleaseKey, SourceSpec> = BTreeMap::new();
    f.sync.pass(&empty, &NoCredentials, t0 + INTERVAL * 3).await;
    assert_eq!(
        f.sync.live_documents().await,
        1,
        "kept during the grace period"
    );
    let collected = f
        .sync
        .pass(&empty, &NoCredentials, t0 + INTERVAL * 3 + GRACE)
        .await;
    assert_eq!(collected.collected_documents.len(), 1);
    assert_eq!(f.sync.live_documents().await, 0);
}

/// Secret `good` holds the right password, `bad` a wrong one.
struct RepoCredentials;

impl CredentialsLookup for RepoCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let basic = |password: &str| {
            BTreeMap::from([
                ("username".to_owned(), b"alice".to_vec()),
                ("password".to_owned(), password.as_bytes().to_vec()),
            ])
        };
        match secret.name.as_str() {
            "good" => Ok(basic("s3cret-pw")),
            "bad" => Ok(basic("wrong-pw")),
            _ => Err("not found".into()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_from_a_secret_is_added_by_the_host() {
    let f = fixture_with(test_http(), Some(("alice", "s3cret-pw"))).await;
    let repository = f.server.url("charts");
    // The test server speaks plain HTTP: credentials go there only when the spec says so.
    let insecure = |name: &str| {
        let mut spec = source(&repository, "demo", "");
        spec.spec = serde_json::json!({"url": repository, "chart": "demo", "version": "", "insecure": true}).to_string();
        with_secret(spec, name)
    };
    let refused = one_with(
        &f,
        with_secret(source(&repository, "demo", ""), "good"),
        &RepoCredentials,
    )
    .await
    .unwrap_err();
    assert!(
        refused.to_string().contains(&format!(
            "credentials secret apps/good would be sent over plain HTTP to {repository}: use an https:// URL, or set `insecure: true` in the source spec"
        )),
        "{refused}"
    );
    assert!(
        f.server.requests("/charts/").is_empty(),
        "nothing was sent: {:?}",
        f.server.requests("/charts/")
    );
    let with = insecure;
    let artifact = one_with(&f, with("good"), &RepoCredentials).await.unwrap();
    let packaged = f.root.join(format!("charts/demo-{}.tgz", artifact.version));
    assert_eq!(
        artifact.digest,
        digest_of(&std::fs::read(packaged).unwrap())
    );
    assert!(
        f.server
            .requests("/charts/")
            .iter()
            .all(|l| l.ends_with(" 200 auth")),
        "{:?}",
        f.server.requests("/charts/")
    );

    let rejected = one_with(&f, with("bad"), &RepoCredentials)
        .await
        .unwrap_err();
    assert_names_source(
        &rejected,
        &repository,
        "demo",
        "HTTP 401 (credentials missing or rejected)",
    );
    assert!(!rejected.to_string().contains("wrong-pw"));
    let missing = one_with(&f, with("absent"), &RepoCredentials)
        .await
        .unwrap_err();
    assert_names_source(
        &missing,
        &repository,
        "demo",
        "credentials secret apps/absent: not found",
    );
    let anonymous = one(&f, source(&repository, "demo", "")).await.unwrap_err();
    assert_names_source(&anonymous, &repository, "demo", "HTTP 401");
}

/// Credentials go to the repository's own origin only: chart archives the index places on
/// another (granted) host are fetched without them, as the server's log shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_are_not_sent_to_another_host() {
    let f = fixture_with(
        HttpOptions {
            extra_hosts: vec![HostPattern::parse("localhost").unwrap()],
            ..test_http()
        },
        Some(("alice", "s3cret-pw")),
    )
    .await;
    let other = f.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(
        f.root.join("charts/demo-1.0.0.tgz"),
        other.join("demo-1.0.0.tgz"),
    )
    .unwrap();
    let absolute = format!("http://localhost:{}/other", f.server.port);
    helm(
        f.work.path(),
        &["repo", "index", other.to_str().unwrap(), "--url", &absolute],
    );
    let repository = f.server.url("other");
    let mut spec = source(&repository, "demo", "1.0.0");
    spec.spec = serde_json::json!({"url": repository, "chart": "demo", "version": "1.0.0", "insecure": true})
        .to_string();
    let failed = one_with(&f, with_secret(spec, "good"), &RepoCredentials)
        .await
        .unwrap_err();
    assert!(failed.to_string().contains("HTTP 401"), "{failed}");
    let requests = f.server.requests("/other/");
    assert!(
        requests
            .iter()
            .any(|l| l.starts_with("GET /other/index.yaml 200 auth")),
        "the index on the repository's origin got the credentials: {requests:?}"
    );
    assert!(
        requests
            .iter()
            .any(|l| l.starts_with("GET /other/demo-1.0.0.tgz 401 noauth")),
        "the archive on another host did not: {requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_custom_ca_from_a_secret() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("served");
    let charts = root.join("charts");
    publish(work.path(), &charts, "demo", VERSIONS);
    helm(work.path(), &["repo", "index", charts.to_str().unwrap()]);
    tls_support::certificates(work.path());
    let server = RepoServer::start_with(
        &root,
        work.path().join("access.log"),
        None,
        Some((
            &work.path().join("server.crt"),
            &work.path().join("server.key"),
        )),
    );
    let runtime = runtime(work.path());
    let sync = new_sync(
        work.path(),
        &runtime,
        Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap()),
        test_http(),
    )
    .await;
    let repository = format!("https://127.0.0.1:{}/charts", server.port);
    let secret = SecretRef {
        namespace: "apps".into(),
        name: "repo-ca".into(),
    };
    // The Secret holds only `ca.crt` (no username/password), as read by `ca_from_secret`.
    let mut known = capstan::sources::spec::KnownCredentials::default();
    known.0.insert(
        secret.clone(),
        Ok(BTreeMap::from([(
            "ca.crt".to_owned(),
            std::fs::read(work.path().join("ca.crt")).unwrap(),
        )])),
    );
    let with_ca = with_secret(source(&repository, "demo", ""), &secret.name);
    let specs = BTreeMap::from([(release(0), with_ca)]);
    let mut report = sync.pass(&specs, &known, Instant::now()).await;
    let artifact = report.releases.remove(&release(0)).unwrap().unwrap();
    let packaged = charts.join(format!("demo-{}.tgz", artifact.version));
    assert_eq!(
        artifact.digest,
        digest_of(&std::fs::read(packaged).unwrap())
    );

    // Without the CA the server is not trusted.
    let specs = BTreeMap::from([(release(1), source(&repository, "demo", ""))]);
    let mut report = sync.pass(&specs, &NoCredentials, Instant::now()).await;
    let untrusted = report.releases.remove(&release(1)).unwrap().unwrap_err();
    assert_names_source(
        &untrusted,
        &repository,
        "demo",
        "invalid peer certificate: UnknownIssuer",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_egress_guard_refuses_loopback_link_local_and_private_addresses() {
    // Default options: public addresses only.
    let f = fixture_with(HttpOptions::default(), None).await;
    let port = f
        .server
        .url("")
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_owned();
    for (url, address) in [
        (f.server.url("charts"), "127.0.0.1"),
        (format!("http://localhost:{port}/charts"), "127.0.0.1"),
        (
            "http://169.254.169.254/latest".to_owned(),
            "169.254.169.254",
        ),
        ("http://10.0.0.1/charts".to_owned(), "10.0.0.1"),
    ] {
        let started = std::time::Instant::now();
        let error = one(&f, source(&url, "demo", "")).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!("resolves to {address}"))
                && text.contains("sources.egress.allowNetworks"),
            "{url}: {text}"
        );
        // Refused before any connection: no timeout was waited for.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{url}: {:?}",
            started.elapsed()
        );
    }
    assert!(
        f.server.requests("/charts/").is_empty(),
        "nothing reached the server: {:?}",
        f.server.requests("/charts/")
    );

    // Allowed by configuration: the same repository works.
    let allowed = fixture_with(test_http(), None).await;
    let artifact = one(&allowed, source(&allowed.server.url("charts"), "demo", ""))
        .await
        .unwrap();
    assert_eq!(artifact.chart, "demo");
}

/// A server on 127.0.0.1 that accepts connections and never answers while `hold` is set;
/// once it is cleared, held and new connections are closed at once.
struct StalledServer {
    port: u16,
    hold: Arc<std::sync::atomic::AtomicBool>,
    accepted: Arc<std::sync::atomic::AtomicUsize>,
    held: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl StalledServer {
    fn start() -> StalledServer {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let held = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (h, a, k) = (hold.clone(), accepted.clone(), held.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                a.fetch_add(1, Ordering::SeqCst);
                if h.load(Ordering::SeqCst) {
                    k.lock().unwrap().push(stream);
                }
            }
        });
        StalledServer {
            port,
            hold,
            accepted,
            held,
        }
    }

    fn give_up(&self) {
        self.hold.store(false, std::sync::atomic::Ordering::SeqCst);
        self.held.lock().unwrap().clear();
    }

    fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_repository_does_not_hold_back_the_others() {
    let f = fixture_with(
        HttpOptions {
            timeout: Duration::from_secs(20),
            ..test_http()
        },
        None,
    )
    .await;
    let stalled = StalledServer::start();
    let mut specs = BTreeMap::new();
    for i in 0..20 {
        let url = format!("http://127.0.0.1:{}/r{i}", stalled.port);
        specs.insert(release(i), source(&url, "demo", ""));
    }
    let healthy = release(100);
    specs.insert(healthy.clone(), source(&f.server.url("charts"), "demo", ""));

    // The healthy release gets its artifact in the first pass; the stalled sources keep
    // resolving in the background and their releases are not reported (they keep what
    // they had), instead of holding the pass for the HTTP timeout.
    let started = Instant::now();
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    let first_pass = started.elapsed();
    let artifact = report.releases.get(&healthy);
    assert!(
        artifact.is_some_and(Result::is_ok),
        "healthy release: {artifact:?}"
    );
    let reported: Vec<_> = (0..20)
        .filter(|i| report.releases.contains_key(&release(*i)))
        .collect();
    assert!(
        reported.is_empty(),
        "stalled sources reported: {reported:?}"
    );
    assert_eq!(f.sync.resolves_in_flight().await, 20);
    // At most half the resolve slots (2 of 4) go to the stalled server.
    assert!(
        stalled.accepted() <= 2,
        "{} connections",
        stalled.accepted()
    );
    println!("first pass with 20 stalled sources took {first_pass:?}");

    // When the server gives up, the resolves end; the next pass reports each failure
    // naming its source.
    stalled.give_up();
    let deadline = Instant::now() + Duration::from_secs(60);
    while f.sync.resolves_in_flight().await > 0 {
        // Passes take the results of the resolves that ended.
        f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
        assert!(
            Instant::now() < deadline,
            "the stalled resolves never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    for i in 0..20 {
        let url = format!("http://127.0.0.1:{}/r{i}", stalled.port);
        match report.releases.get(&release(i)) {
            Some(Err(error)) => assert_names_source(error, &url, "demo", ""),
            other => panic!("release {i}: {other:?}"),
        }
    }
    // Failing sources wait for their backoff: an immediate pass makes no new connection.
    let connections = stalled.accepted();
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    assert!(report.releases.get(&release(0)).is_some_and(Result::is_err));
    assert_eq!(stalled.accepted(), connections);
    assert!(report.releases.get(&healthy).is_some_and(Result::is_ok));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_pass_waits_for_slow_resolves() {
    let f = fixture_with(
        HttpOptions {
            timeout: Duration::from_secs(20),
            ..test_http()
        },
        None,
    )
    .await;
    let stalled = Arc::new(StalledServer::start());
    let url = format!("http://127.0.0.1:{}/slow", stalled.port);
    let specs = BTreeMap::from([
        (release(0), source(&url, "demo", "")),
        (release(1), source(&f.server.url("charts"), "demo", "")),
    ]);
    // The server answers nothing for 3 s, then closes: longer than a pass waits.
    let giver = Arc::clone(&stalled);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(3));
        giver.give_up();
    });
    let started = Instant::now();
    let report = f.sync.pass_until_decided(&specs, &NoCredentials).await;
    assert!(started.elapsed() >= Duration::from_secs(3));
    match report.releases.get(&release(0)) {
        Some(Err(error)) => assert_names_source(error, &url, "demo", ""),
        other => panic!("the slow source: {other:?}"),
    }
    assert!(report.releases.get(&release(1)).is_some_and(Result::is_ok));
}

/// The files of `archive` (a chart `.tgz`) by path.
fn archive_files(archive: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    tar.entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            (path, bytes)
        })
        .collect()
}

/// What real `helm dependency build` puts into `charts/` of a copy of `chart` (a folder),
/// with the repository added first (`helm repo add`), as it requires.
fn helm_dependency_build(f: &Fixture, chart: &Path, repository: &str) -> BTreeMap<String, Vec<u8>> {
    let copy = f.work.path().join(format!(
        "helm-build-{}",
        chart.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(chart).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(copy.join("templates")).unwrap();
    helm(
        f.work.path(),
        &["repo", "add", "--force-update", "deps", repository],
    );
    helm(
        f.work.path(),
        &["dependency", "build", copy.to_str().unwrap()],
    );
    std::fs::read_dir(copy.join("charts"))
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                format!("charts/{}", entry.file_name().to_string_lossy()),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}

/// The `charts/` entries of the chart `name` in `archive`.
fn vendored_charts(archive: &[u8], name: &str) -> BTreeMap<String, Vec<u8>> {
    archive_files(archive)
        .into_iter()
        .filter_map(|(path, bytes)| {
            let inside = path.strip_prefix(&format!("{name}/"))?.to_owned();
            inside.starts_with("charts/").then_some((inside, bytes))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_chart_dependencies_come_from_the_listed_chart_repositories_as_helm_builds_them() {
    let f = fixture().await;
    let repository = f.server.url("charts");
    let git_dir = f.work.path().join("git");
    let chart_yaml = |name: &str, constraint: &str| {
        format!(
            "apiVersion: v2\nname: {name}\nversion: 0.1.0\ndependencies:\n- name: demo\n  version: \"{constraint}\"\n  repository: {repository}/\n"
        )
    };
    write(
        &git_dir.join("app/Chart.yaml"),
        &chart_yaml("app", "^1.0.0"),
    );
    write(&git_dir.join("app/templates/cm.yaml"), "kind: ConfigMap\n");
    write(
        &git_dir.join("pinned/Chart.yaml"),
        &chart_yaml("pinned", "^1.0.0"),
    );
    write(
        &git_dir.join("pinned/templates/cm.yaml"),
        "kind: ConfigMap\n",
    );
    // The lock file real Helm writes while the repository lists only 1.0.0.
    let charts = f.root.join("charts");
    let aside = f.work.path().join("aside");
    std::fs::create_dir_all(&aside).unwrap();
    for version in &VERSIONS[1..] {
        let name = format!("demo-{version}.tgz");
        std::fs::rename(charts.join(&name), aside.join(&name)).unwrap();
    }
    helm(f.work.path(), &["repo", "index", charts.to_str().unwrap()]);
    helm(
        f.work.path(),
        &["repo", "add", "--force-update", "deps", &repository],
    );
    helm(
        f.work.path(),
        &[
            "dependency",
            "update",
            git_dir.join("pinned").to_str().unwrap(),
        ],
    );
    std::fs::remove_dir_all(git_dir.join("pinned/charts")).unwrap();
    for version in &VERSIONS[1..] {
        let name = format!("demo-{version}.tgz");
        std::fs::rename(aside.join(&name), charts.join(&name)).unwrap();
    }
    helm(f.work.path(), &["repo", "index", charts.to_str().unwrap()]);
    // A lock that no longer satisfies Chart.yaml.
    write(
        &git_dir.join("stale/Chart.yaml"),
        &chart_yaml("stale", "~1.2.0"),
    );
    std::fs::copy(
        git_dir.join("pinned/Chart.lock"),
        git_dir.join("stale/Chart.lock"),
    )
    .unwrap();
    git_support::git(&git_dir, &["init", "-q", "-b", "main"]);
    git_support::git(&git_dir, &["add", "."]);
    git_support::git(&git_dir, &["commit", "-qm", "charts"]);
    let url = format!("file://{}", git_dir.display());
    let git = |path: &str, listed: &[&str]| {
        SourceSpec::new(
            "git",
            &serde_json::json!({
                "url": url, "ref": "main", "path": path, "dependencyRepositories": listed
            }),
            None,
        )
    };
    let index_requests = || f.server.requests("/charts/index.yaml").len();

    // Not listed: refused before any request, naming the field to add it to.
    let before = index_requests();
    let refused = one(&f, git("app", &[])).await.unwrap_err().to_string();
    assert!(
        refused.contains(&format!(
            "dependency `demo` ({repository}/) is not in charts/: the source does not list {repository} in `dependencyRepositories`"
        )),
        "{refused}"
    );
    assert_eq!(index_requests(), before, "nothing was requested");

    // Listed (without the trailing `/`): the highest version within the constraint, the
    // very archive `helm dependency build` downloads. Two charts on the repository, one
    // pass: one index request, the other answered from the shared cache.
    let before = index_requests();
    let specs = BTreeMap::from([
        (release(1), git("app", &[repository.as_str()])),
        (release(2), git("pinned", &[repository.as_str()])),
    ]);
    let mut report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    assert_eq!(index_requests(), before + 1, "one index request for both");
    let built = report.releases.remove(&release(1)).unwrap().unwrap();
    let pinned = report.releases.remove(&release(2)).unwrap().unwrap();
    let ours = vendored_charts(&f.artifacts.get(&built.digest).unwrap(), "app");
    let helms = helm_dependency_build(&f, &git_dir.join("app"), &repository);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        helms.keys().collect::<Vec<_>>()
    );
    assert_eq!(ours, helms, "same bytes as helm's download");
    assert!(
        ours.contains_key("charts/demo-1.2.0.tgz"),
        "{:?}",
        ours.keys()
    );

    // Chart.lock pins the version, as for `helm dependency build`.
    let ours = vendored_charts(&f.artifacts.get(&pinned.digest).unwrap(), "pinned");
    let helms = helm_dependency_build(&f, &git_dir.join("pinned"), &repository);
    assert_eq!(ours, helms, "same bytes as helm's download");
    assert!(
        ours.contains_key("charts/demo-1.0.0.tgz"),
        "{:?}",
        ours.keys()
    );

    // A lock out of step with Chart.yaml is refused, naming both.
    let stale = one(&f, git("stale", &[repository.as_str()]))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        stale.contains("stale/Chart.lock: pins `demo` at 1.0.0, which does not satisfy `~1.2.0`"),
        "{stale}"
    );
}
