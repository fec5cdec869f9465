//! Source sync against real git repositories (file:// and a real `git daemon` on
//! 127.0.0.1) with the real `source-git` component: sharing, path-aware change detection,
//! refs, errors that name the source, and no leaked mirrors under churn.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::sources::artifacts::ArtifactStore;
use capstan::sources::mirrors::MirrorStore;
use capstan::sources::sync::{
    CredentialsLookup, HttpOptions, NoCredentials, SourceSync, SourceSyncOptions,
};
use capstan::sources::{MirrorKey, ReleaseKey, SecretRef, SourceSpec};
use capstan::telemetry::SourceMetrics;

#[path = "../../tests/support/git.rs"]
mod git_support;
use git_support::git;
#[path = "../../tests/support/egress.rs"]
mod egress_support;
#[path = "../../tests/support/sources.rs"]
mod sources_support;
#[path = "../../tests/support/tls.rs"]
mod tls_support;
use sources_support::{GitReference, git_source, with_secret};

const INTERVAL: Duration = Duration::from_secs(60);
const GRACE: Duration = Duration::from_secs(300);

fn write(dir: &Path, path: &str, contents: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// A repository with a chart in `chart/` and unrelated files beside it; tagged v1.0.0.
fn chart_repository(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    write(dir, "README.md", "docs\n");
    write(
        dir,
        "chart/Chart.yaml",
        &format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n"),
    );
    write(dir, "chart/templates/cm.yaml", "kind: ConfigMap\n");
    write(
        dir,
        "other/Chart.yaml",
        "apiVersion: v2\nname: other\nversion: 2.0.0\n",
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "chart"]);
    git(dir, &["tag", "v1.0.0"]);
}

fn commit(dir: &Path, path: &str, contents: &str) -> String {
    write(dir, path, contents);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", path]);
    git(dir, &["rev-parse", "HEAD"])
}

struct Fixture {
    _work: tempfile::TempDir,
    sync: SourceSync,
    artifacts: Arc<ArtifactStore>,
    metrics: Arc<SourceMetrics>,
    mirrors_dir: PathBuf,
    _runtime: PluginRuntime,
}

async fn fixture() -> Fixture {
    fixture_with_timeout(Duration::from_secs(30)).await
}

async fn fixture_with_timeout(fetch_timeout: Duration) -> Fixture {
    let work = tempfile::tempdir().unwrap();
    let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins/source-git.wasm");
    assert!(
        path.is_file(),
        "{} is missing: run `make plugins`",
        path.display()
    );
    runtime
        .load(&PluginConfig {
            name: "git".into(),
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
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = SourceMetrics::register(&mut registry);
    let mirrors_dir = work.path().join("mirrors");
    let mirrors = Arc::new(MirrorStore::new(&mirrors_dir, fetch_timeout));
    let artifacts = Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap());
    let options = SourceSyncOptions {
        interval: INTERVAL,
        grace: GRACE,
        parallelism: 4,
    };
    let catalog = sources_support::catalog(&runtime, &["git"]).await;
    let sync = SourceSync::new(
        options,
        mirrors,
        Arc::clone(&artifacts),
        catalog,
        Some(metrics.clone()),
    )
    .with_http(HttpOptions {
        egress: egress_support::loopback_and_local_paths(),
        ..HttpOptions::default()
    });
    Fixture {
        _work: work,
        sync,
        artifacts,
        metrics,
        mirrors_dir,
        _runtime: runtime,
    }
}

fn release(n: usize) -> ReleaseKey {
    ReleaseKey {
        namespace: "apps".into(),
        name: format!("r{n}"),
    }
}

fn source(url: &str, reference: GitReference, path: &str) -> SourceSpec {
    git_source(url, reference, path)
}

fn main_branch() -> GitReference {
    GitReference::Branch("main".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_pushes_that_touch_the_chart_path_yield_a_new_artifact() {
    let f = fixture().await;
    let repo = tempfile::tempdir().unwrap();
    chart_repository(repo.path(), "demo");
    let url = format!("file://{}", repo.path().display());
    let specs = BTreeMap::from([(release(1), source(&url, main_branch(), "chart"))]);
    let t0 = Instant::now();

    let first = f.sync.pass(&specs, &NoCredentials, t0).await;
    assert_eq!(first.changed, [release(1)]);
    let artifact = first.releases[&release(1)].clone().unwrap();
    assert_eq!(
        (artifact.chart.as_str(), artifact.version.as_str()),
        ("demo", "1.0.0")
    );

    // A push outside the chart path: fetched at the next interval, same artifact.
    commit(repo.path(), "README.md", "more docs\n");
    commit(repo.path(), "other/values.yaml", "x: 1\n");
    let quiet = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL).await;
    assert_eq!(quiet.fetched.len(), 1);
    assert!(quiet.changed.is_empty(), "{quiet:?}");
    assert_eq!(
        quiet.releases[&release(1)].as_ref().unwrap().digest,
        artifact.digest
    );

    // A push into the chart path: a new artifact within one interval.
    let head = commit(repo.path(), "chart/values.yaml", "replicas: 2\n");
    let moved = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL * 2).await;
    assert_eq!(moved.changed, [release(1)]);
    let new = moved.releases[&release(1)].clone().unwrap();
    assert_ne!(new.digest, artifact.digest);
    assert_eq!(new.revision, head);
}

/// The paths inside a chart archive.
fn archive_paths(archive: &[u8]) -> Vec<String> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    tar.entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_dependencies_are_built_from_the_same_commit() {
    let f = fixture().await;
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    write(
        dir,
        "charts/app/Chart.yaml",
        "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: common\n  version: ^0.1.0\n  repository: file://../common\n",
    );
    write(dir, "charts/app/templates/cm.yaml", "kind: ConfigMap\n");
    write(
        dir,
        "charts/common/Chart.yaml",
        "apiVersion: v2\nname: common\nversion: 0.1.0\ndependencies:\n- name: base\n  repository: file://./base\n",
    );
    write(
        dir,
        "charts/common/templates/_helpers.tpl",
        "{{- define \"x\" }}x{{ end }}\n",
    );
    write(
        dir,
        "charts/common/base/Chart.yaml",
        "apiVersion: v2\nname: base\nversion: 2.0.0\n",
    );
    // Vendored already: left as it is.
    write(
        dir,
        "charts/vendored/Chart.yaml",
        "apiVersion: v2\nname: vendored\nversion: 1.0.0\ndependencies:\n- name: common\n  version: ^0.1.0\n  repository: https://charts.example.com\n",
    );
    write(
        dir,
        "charts/vendored/charts/common/Chart.yaml",
        "apiVersion: v2\nname: common\nversion: 0.1.0\n",
    );
    write(
        dir,
        "charts/remote/Chart.yaml",
        "apiVersion: v2\nname: remote\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 19.x\n  repository: https://charts.example.com\n",
    );
    write(
        dir,
        "charts/mismatch/Chart.yaml",
        "apiVersion: v2\nname: mismatch\nversion: 1.0.0\ndependencies:\n- name: common\n  version: ^1.0.0\n  repository: file://../common\n",
    );
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "charts"]);
    let url = format!("file://{}", dir.display());
    let specs = BTreeMap::from([
        (release(1), source(&url, main_branch(), "charts/app")),
        (release(2), source(&url, main_branch(), "charts/vendored")),
        (release(3), source(&url, main_branch(), "charts/remote")),
        (release(4), source(&url, main_branch(), "charts/mismatch")),
    ]);
    let t0 = Instant::now();
    let first = f.sync.pass(&specs, &NoCredentials, t0).await;
    let app = first.releases[&release(1)].clone().unwrap();
    let paths = archive_paths(&f.artifacts.get(&app.digest).unwrap());
    assert!(
        paths.contains(&"app/charts/common-0.1.0.tgz".to_owned()),
        "{paths:?}"
    );
    // The dependency carries its own file:// dependency.
    let archive = f.artifacts.get(&app.digest).unwrap();
    let tgz = {
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&archive[..]));
        let mut entry = tar
            .entries()
            .unwrap()
            .map(Result::unwrap)
            .find(|e| e.path().unwrap().ends_with("common-0.1.0.tgz"))
            .unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
        bytes
    };
    assert!(archive_paths(&tgz).contains(&"common/charts/base-2.0.0.tgz".to_owned()));
    let vendored = first.releases[&release(2)].clone().unwrap();
    let paths = archive_paths(&f.artifacts.get(&vendored.digest).unwrap());
    assert!(
        paths.contains(&"vendored/charts/common/Chart.yaml".to_owned()),
        "{paths:?}"
    );
    let remote = first.releases[&release(3)].clone().unwrap_err().to_string();
    assert!(
        remote.contains("dependency `redis` (https://charts.example.com) is not in charts/"),
        "{remote}"
    );
    let mismatch = first.releases[&release(4)].clone().unwrap_err().to_string();
    assert!(
        mismatch.contains("dependency `common`: file://../common holds version 0.1.0, which does not satisfy `^1.0.0`"),
        "{mismatch}"
    );

    // A commit that changes only the dependency gives the chart a new artifact.
    commit(
        dir,
        "charts/common/templates/_more.tpl",
        "{{- define \"y\" }}y{{ end }}\n",
    );
    let next = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL).await;
    assert!(next.changed.contains(&release(1)), "{next:?}");
    assert_ne!(
        next.releases[&release(1)].as_ref().unwrap().digest,
        app.digest
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_resolve_and_bad_refs_or_paths_fail_alone_naming_the_source() {
    let f = fixture().await;
    let repo = tempfile::tempdir().unwrap();
    chart_repository(repo.path(), "demo");
    let tagged = git(repo.path(), &["rev-parse", "HEAD"]);
    commit(repo.path(), "chart/values.yaml", "a: 1\n");
    git(repo.path(), &["tag", "v1.4.0"]);
    git(repo.path(), &["tag", "v2.0.0-rc.1"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let url = format!("file://{}", repo.path().display());
    let specs = BTreeMap::from([
        (release(1), source(&url, main_branch(), "chart")),
        (
            release(2),
            source(&url, GitReference::Tag("v1.0.0".into()), "chart"),
        ),
        (
            release(3),
            source(&url, GitReference::Commit(tagged[..12].into()), "chart"),
        ),
        (
            release(4),
            source(&url, GitReference::Semver(">=1.0.0 <2.0.0".into()), "chart"),
        ),
        (
            release(5),
            source(&url, GitReference::Branch("nope".into()), "chart"),
        ),
        (release(6), source(&url, main_branch(), "charts/missing")),
        (release(7), source(&url, main_branch(), "")),
        (release(8), source(&url, main_branch(), "other")),
    ]);
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    let ok = |n| report.releases[&release(n)].clone().unwrap();
    let err = |n| {
        report.releases[&release(n)]
            .clone()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(ok(1).revision, head);
    assert_eq!(ok(2).revision, tagged);
    assert_eq!(ok(3).revision, tagged);
    assert_eq!(ok(4).revision, head);
    assert_eq!(ok(8).chart, "other");
    assert_eq!(
        err(5),
        format!("git source {url} (path: chart, ref: nope): no branch, tag or commit named `nope`")
    );
    assert!(
        err(6).contains("path `charts/missing` does not exist at commit"),
        "{}",
        err(6)
    );
    assert!(
        err(7).contains("no Chart.yaml in the chart folder"),
        "{}",
        err(7)
    );
    assert_eq!(
        f.sync.live_mirrors().await,
        1,
        "eight releases on one repository share one mirror"
    );
}

/// A `git daemon` on 127.0.0.1 serving `base`, logging every request.
struct GitDaemon {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl GitDaemon {
    fn start(base: &Path, log: PathBuf) -> GitDaemon {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Run git-daemon itself (not the `git daemon` wrapper, which would leave the real
        // daemon behind when killed), so that dropping this stops exactly what we started.
        let exec_path = Command::new("git").arg("--exec-path").output().unwrap();
        let daemon =
            Path::new(String::from_utf8_lossy(&exec_path.stdout).trim()).join("git-daemon");
        let child = Command::new(daemon)
            .args([
                "--export-all",
                "--reuseaddr",
                "--verbose",
                "--listen=127.0.0.1",
                "--log-destination=stderr",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base.display()))
            .arg(base)
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "git daemon did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        GitDaemon { child, port, log }
    }

    fn upload_packs(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .matches("Request upload-pack")
            .count()
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_releases_on_one_repository_share_one_mirror_and_one_fetch_per_interval() {
    let f = fixture().await;
    let base = tempfile::tempdir().unwrap();
    chart_repository(&base.path().join("charts"), "shared");
    let daemon = GitDaemon::start(base.path(), base.path().join("daemon.log"));
    let url = format!("git://127.0.0.1:{}/charts", daemon.port);
    let dead = {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        format!("git://127.0.0.1:{port}/gone")
    };
    let mut specs: BTreeMap<ReleaseKey, SourceSpec> = (0..200)
        .map(|n| (release(n), source(&url, main_branch(), "chart")))
        .collect();
    specs.insert(release(999), source(&dead, main_branch(), "chart"));
    let t0 = Instant::now();

    let first = f.sync.pass(&specs, &NoCredentials, t0).await;
    assert_eq!(daemon.upload_packs(), 1, "one fetch for 200 releases");
    assert_eq!(first.changed.len(), 200);
    let digests: BTreeSet<_> = (0..200)
        .map(|n| first.releases[&release(n)].clone().unwrap().digest)
        .collect();
    assert_eq!(digests.len(), 1);
    let unreachable = first.releases[&release(999)]
        .clone()
        .unwrap_err()
        .to_string();
    assert!(
        unreachable.starts_with(&format!("git source {dead} (path: chart, ref: main): ")),
        "{unreachable}"
    );

    f.sync
        .pass(&specs, &NoCredentials, t0 + Duration::from_secs(1))
        .await;
    assert_eq!(daemon.upload_packs(), 1, "not due yet: no fetch");
    let later = f.sync.pass(&specs, &NoCredentials, t0 + INTERVAL).await;
    assert_eq!(daemon.upload_packs(), 2, "one fetch per interval");
    assert!(later.changed.is_empty());
    assert_eq!(f.metrics.fetches("ok"), 2);
    assert_eq!(
        std::fs::read_dir(&f.mirrors_dir).unwrap().count(),
        2,
        "one mirror each for the live and the dead server"
    );
}

/// Credentials from a Secret: any Secret named `cred-*` holds a username and password.
struct TestCredentials;

impl CredentialsLookup for TestCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        Ok(BTreeMap::from([
            ("username".to_owned(), secret.name.clone().into_bytes()),
            ("password".to_owned(), b"secret".to_vec()),
        ]))
    }
}

/// A release spec the churn test changes field by field.
struct Churned {
    url: String,
    reference: GitReference,
    path: String,
    credentials: Option<SecretRef>,
}

fn specs_of(specs: &BTreeMap<ReleaseKey, Churned>) -> BTreeMap<ReleaseKey, SourceSpec> {
    specs
        .iter()
        .map(|(release, s)| {
            let mut spec = git_source(&s.url, s.reference.clone(), &s.path);
            spec.credentials = s.credentials.clone();
            (release.clone(), spec)
        })
        .collect()
}

/// A small deterministic generator (xorshift) so the churn is random but reproducible.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn randomized_churn_leaves_exactly_the_referenced_mirrors() {
    let f = fixture().await;
    let repos = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..40)
        .map(|n| {
            let dir = repos.path().join(format!("repo{n}"));
            chart_repository(&dir, &format!("chart{n}"));
            format!("file://{}", dir.display())
        })
        .collect();
    let seed = std::env::var("CHURN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe_u64);
    println!("churn seed {seed}");
    let mut random = Random(seed);
    let refs = [
        main_branch(),
        GitReference::Tag("v1.0.0".into()),
        GitReference::Semver("^1".into()),
    ];
    let mut specs: BTreeMap<ReleaseKey, Churned> = BTreeMap::new();
    let mut now = Instant::now();
    let mut next_release = 0;
    for _round in 0..15 {
        for _ in 0..50 {
            let existing: Vec<ReleaseKey> = specs.keys().cloned().collect();
            let pick = |random: &mut Random| existing[random.below(existing.len())].clone();
            match (random.below(10), existing.is_empty()) {
                (0..=3, _) | (_, true) => {
                    if next_release < 300 {
                        let url = &urls[random.below(urls.len())];
                        specs.insert(
                            release(next_release),
                            Churned {
                                url: url.clone(),
                                reference: main_branch(),
                                path: "chart".into(),
                                credentials: None,
                            },
                        );
                        next_release += 1;
                    }
                }
                (4, false) => {
                    specs.get_mut(&pick(&mut random)).unwrap().url =
                        urls[random.below(urls.len())].clone()
                }
                (5, false) => {
                    specs.get_mut(&pick(&mut random)).unwrap().reference =
                        refs[random.below(refs.len())].clone()
                }
                (6, false) => {
                    specs.get_mut(&pick(&mut random)).unwrap().path =
                        ["chart", "other"][random.below(2)].into()
                }
                (7, false) => {
                    let credentials = [
                        None,
                        Some(SecretRef {
                            namespace: "apps".into(),
                            name: format!("cred-{}", random.below(3)),
                        }),
                    ];
                    specs.get_mut(&pick(&mut random)).unwrap().credentials =
                        credentials[random.below(2)].clone();
                }
                _ => {
                    specs.remove(&pick(&mut random));
                }
            }
        }
        now += Duration::from_secs(20);
        let report = f.sync.pass(&specs_of(&specs), &TestCredentials, now).await;
        for (release, result) in &report.releases {
            assert!(result.is_ok(), "{release}: {:?}", result);
        }
    }
    assert_eq!(next_release, 300, "the churn creates 300 release specs");

    // Quiescence: once the grace period has passed, exactly the referenced keys remain.
    now += GRACE;
    f.sync.pass(&specs_of(&specs), &TestCredentials, now).await;
    let referenced: BTreeSet<MirrorKey> = specs
        .values()
        .map(|s| MirrorKey {
            url: s.url.clone(),
            credentials: s.credentials.clone(),
        })
        .collect();
    let expected_dirs: BTreeSet<PathBuf> = referenced
        .iter()
        .map(|k| f.sync.mirrors().path_of(k))
        .collect();
    let on_disk: BTreeSet<PathBuf> = f.sync.mirrors().on_disk().unwrap().into_iter().collect();
    assert_eq!(on_disk, expected_dirs, "mirrors on disk");
    assert_eq!(f.sync.live_mirrors().await, referenced.len());
    assert_eq!(
        f.metrics.live_mirrors.get(),
        referenced.len() as i64,
        "gauge"
    );
    assert!(
        f.metrics.mirrors_collected.get() > 0,
        "churn must have collected mirrors"
    );
    println!(
        "{} releases over {} mirrors remain; {} mirrors collected",
        specs.len(),
        referenced.len(),
        f.metrics.mirrors_collected.get()
    );
}

/// Secrets `good` and `bad` hold right and wrong passwords; any other Secret is missing.
struct HttpCredentials;

impl CredentialsLookup for HttpCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let basic = |password: &str| {
            BTreeMap::from([
                ("username".to_owned(), b"alice".to_vec()),
                ("password".to_owned(), password.as_bytes().to_vec()),
            ])
        };
        match secret.name.as_str() {
            "good" => Ok(basic("s3cret")),
            "bad" => Ok(basic("guess-1234")),
            other => Err(format!("secret apps/{other} not found")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smart_http_with_basic_auth_and_every_credential_failure_named() {
    let f = fixture().await;
    let root = tempfile::tempdir().unwrap();
    chart_repository(&root.path().join("charts.git"), "private");
    let server = git_support::GitHttpServer::start(
        root.path(),
        root.path().join("http.log"),
        Some(("alice", "s3cret")),
    );
    let url = format!("http://127.0.0.1:{}/charts.git", server.port);
    // The test server speaks plain HTTP: the credentials go there only when the spec says
    // `insecure: true`.
    let insecure = |mut spec: SourceSpec| {
        let mut value: serde_json::Value = serde_json::from_str(&spec.spec).unwrap();
        value["insecure"] = serde_json::Value::Bool(true);
        spec.spec = value.to_string();
        spec
    };
    let with = |name: &str| insecure(with_secret(source(&url, main_branch(), "chart"), name));
    let specs = BTreeMap::from([
        (
            release(0),
            with_secret(source(&url, main_branch(), "chart"), "good"),
        ),
        (release(1), with("good")),
        (release(2), with("bad")),
        (release(3), with("missing")),
        (release(4), source(&url, main_branch(), "chart")),
    ]);
    let report = f.sync.pass(&specs, &HttpCredentials, Instant::now()).await;
    let artifact = report.releases[&release(1)].clone().unwrap();
    assert_eq!(artifact.chart, "private");
    let err = |n| {
        report.releases[&release(n)]
            .clone()
            .unwrap_err()
            .to_string()
    };
    let prefix = format!("git source {url} (path: chart, ref: main): ");
    assert!(
        err(0).starts_with(&prefix)
            && err(0).contains(&format!(
                "credentials secret apps/good would be sent over plain HTTP to {url}: use an https:// URL, or set `insecure: true` in the source spec"
            )),
        "{}",
        err(0)
    );
    let prefix = format!("git source {url} (insecure: true, path: chart, ref: main): ");
    assert!(
        err(2).starts_with(&prefix) && err(2).contains("credentials rejected"),
        "{}",
        err(2)
    );
    assert!(
        !err(2).contains("guess-1234"),
        "the password must never appear: {}",
        err(2)
    );
    assert!(
        err(3).starts_with(&prefix)
            && err(3).contains("credentials secret apps/missing: secret apps/missing not found"),
        "{}",
        err(3)
    );
    let prefix = format!("git source {url} (path: chart, ref: main): ");
    assert!(
        err(4).starts_with(&prefix)
            && err(4).contains("asks for credentials and none are configured"),
        "{}",
        err(4)
    );
    assert!(
        server.requests().contains("git-upload-pack"),
        "{}",
        server.requests()
    );
    // Same URL, four different credentials (good, bad, missing, none): four mirror keys.
    assert_eq!(f.sync.live_mirrors().await, 4);
}

/// Secrets of the HTTPS test: `with-ca` holds the credentials and the CA that issued the
/// server's certificate, `other-ca` the credentials and a CA that did not, `no-ca` only
/// the credentials, `chain-root` the credentials and the root CA of a server whose
/// certificate an intermediate CA issued.
struct TlsCredentials {
    ca: Vec<u8>,
    other_ca: Vec<u8>,
    chain_root: Vec<u8>,
}

impl CredentialsLookup for TlsCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let mut data = BTreeMap::from([
            ("username".to_owned(), b"alice".to_vec()),
            ("password".to_owned(), b"s3cret".to_vec()),
        ]);
        match secret.name.as_str() {
            "with-ca" => data.insert("ca.crt".into(), self.ca.clone()),
            "other-ca" => data.insert("ca.crt".into(), self.other_ca.clone()),
            "chain-root" => data.insert("ca.crt".into(), self.chain_root.clone()),
            "no-ca" => None,
            other => return Err(format!("secret apps/{other} not found")),
        };
        Ok(data)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_basic_auth_and_a_custom_ca_from_the_secret() {
    let f = fixture().await;
    let root = tempfile::tempdir().unwrap();
    chart_repository(&root.path().join("charts.git"), "private");
    let certs = tempfile::tempdir().unwrap();
    tls_support::certificates(certs.path());
    let other = tempfile::tempdir().unwrap();
    tls_support::certificates(other.path());
    let server = git_support::GitHttpServer::start_with(
        root.path(),
        root.path().join("https.log"),
        Some(("alice", "s3cret")),
        Some((
            &certs.path().join("server.crt"),
            &certs.path().join("server.key"),
        )),
    );
    let url = server.url("charts.git");
    assert!(url.starts_with("https://"), "{url}");
    // A server whose certificate an intermediate CA issued, sending the chain; the Secret
    // holds only the root.
    let chained = tempfile::tempdir().unwrap();
    tls_support::certificates_with_intermediate(chained.path());
    let chain_server = git_support::GitHttpServer::start_with(
        root.path(),
        root.path().join("https-chain.log"),
        Some(("alice", "s3cret")),
        Some((
            &chained.path().join("chain.crt"),
            &chained.path().join("server.key"),
        )),
    );
    let chain_url = chain_server.url("charts.git");
    let lookup = TlsCredentials {
        ca: std::fs::read(certs.path().join("ca.crt")).unwrap(),
        other_ca: std::fs::read(other.path().join("ca.crt")).unwrap(),
        chain_root: std::fs::read(chained.path().join("ca.crt")).unwrap(),
    };
    let with = |name: &str| with_secret(source(&url, main_branch(), "chart"), name);
    let specs = BTreeMap::from([
        (release(1), with("with-ca")),
        (release(2), with("other-ca")),
        (release(3), with("no-ca")),
        (
            release(4),
            with_secret(source(&chain_url, main_branch(), "chart"), "chain-root"),
        ),
        (
            release(5),
            with_secret(source(&chain_url, main_branch(), "chart"), "with-ca"),
        ),
    ]);
    let report = f.sync.pass(&specs, &lookup, Instant::now()).await;
    let artifact = report.releases[&release(1)].clone().unwrap();
    assert_eq!(artifact.chart, "private");
    let err = |n| {
        report.releases[&release(n)]
            .clone()
            .unwrap_err()
            .to_string()
    };
    assert!(
        // Same subject as the real CA, another key: the signature does not verify.
        err(2).contains("failed: invalid peer certificate: BadSignature"),
        "{}",
        err(2)
    );
    // Without a CA in the Secret, the system's CA certificates are trusted, which do not
    // hold the test CA.
    assert!(
        err(3).contains("invalid peer certificate: UnknownIssuer"),
        "{}",
        err(3)
    );
    // The whole chain is verified: the root alone in the Secret is enough...
    assert_eq!(
        report.releases[&release(4)].clone().unwrap().chart,
        "private"
    );
    // ...and the bundle is the only trust: another CA's bundle is refused (both roots are
    // named "capstan test CA": the intermediate's signature does not verify).
    assert!(
        err(5).contains("invalid peer certificate: BadSignature"),
        "{}",
        err(5)
    );
    for n in [2, 3, 5] {
        assert!(!err(n).contains("s3cret"), "{}", err(n));
    }
}

/// Secrets of the SSH test: `known` holds the client key and the server's `known_hosts`,
/// `hashed` the key and that `known_hosts` hashed by `ssh-keygen -H`, `unknown` the key and
/// a `known_hosts` naming another key, `blind` only the key, `named` the key and the
/// server's key listed for `localhost` instead of its address.
struct SshCredentials {
    key: String,
    known_hosts: String,
    known_hosts_hashed: String,
}

impl CredentialsLookup for SshCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let mut data = BTreeMap::from([("identity".to_owned(), self.key.as_bytes().to_vec())]);
        let other = "[127.0.0.1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNvbWUtb3RoZXItaG9zdC1rZXktdGhhdC1kb2VzLW5v\n";
        match secret.name.as_str() {
            "known" => data.insert("known_hosts".into(), self.known_hosts.as_bytes().to_vec()),
            "hashed" => data.insert(
                "known_hosts".into(),
                self.known_hosts_hashed.as_bytes().to_vec(),
            ),
            "unknown" => data.insert("known_hosts".into(), other.as_bytes().to_vec()),
            "blind" => None,
            "named" => data.insert(
                "known_hosts".into(),
                self.known_hosts
                    .replace("[127.0.0.1]", "[localhost]")
                    .into_bytes(),
            ),
            other => return Err(format!("secret apps/{other} not found")),
        };
        Ok(data)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_with_a_key_and_known_hosts_from_the_secret() {
    let f = fixture().await;
    let root = tempfile::tempdir().unwrap();
    chart_repository(&root.path().join("charts.git"), "private");
    let work = tempfile::tempdir().unwrap();
    let server = git_support::GitSshServer::start(root.path(), work.path());
    let url = server.url("charts.git");
    let lookup = SshCredentials {
        key: server.client_key.clone(),
        known_hosts: server.known_hosts.clone(),
        known_hosts_hashed: server.known_hosts_hashed.clone(),
    };
    let with = |name: &str| with_secret(source(&url, main_branch(), "chart"), name);
    let specs = BTreeMap::from([
        (release(1), with("known")),
        (release(2), with("unknown")),
        (release(3), with("blind")),
        (release(4), with("hashed")),
        // By name: fetched from the address the egress guard checked (the URL is rewritten
        // to it), the host key matched against the name as written.
        (
            release(5),
            with_secret(
                source(
                    &url.replace("127.0.0.1", "localhost"),
                    main_branch(),
                    "chart",
                ),
                "named",
            ),
        ),
    ]);
    let report = f.sync.pass(&specs, &lookup, Instant::now()).await;
    let named = report.releases[&release(5)]
        .clone()
        .unwrap_or_else(|e| panic!("{e}\n{}", server.requests()));
    assert_eq!(named.chart, "private");
    let artifact = report.releases[&release(1)]
        .clone()
        .unwrap_or_else(|e| panic!("{e}\n{}", server.requests()));
    assert_eq!(artifact.chart, "private");
    // `known_hosts` as `ssh-keygen -H` hashes it serves the same.
    let hashed = report.releases[&release(4)]
        .clone()
        .unwrap_or_else(|e| panic!("{e}\n{}", server.requests()));
    assert_eq!(hashed.chart, "private");
    assert!(
        server
            .requests()
            .contains("exec git-upload-pack '/charts.git'"),
        "{}",
        server.requests()
    );
    let err = |n| {
        report.releases[&release(n)]
            .clone()
            .unwrap_err()
            .to_string()
    };
    assert!(
        err(2).contains(
            "the host key of 127.0.0.1 is not in the `known_hosts` of the credentials Secret"
        ),
        "{}",
        err(2)
    );
    assert!(
        err(3).contains("the host key of 127.0.0.1 cannot be checked: the credentials Secret has no `known_hosts`"),
        "{}",
        err(3)
    );
    assert!(!err(2).contains("PRIVATE KEY") && !err(3).contains("PRIVATE KEY"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_without_holding_up_other_releases() {
    let f = fixture_with_timeout(Duration::from_secs(2)).await;
    // Accepts one connection and says nothing for 6 s (then hangs up, so that the stuck
    // libgit2 thread ends and the test runtime can shut down).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let connection = silent.accept();
        std::thread::sleep(Duration::from_secs(6));
        drop(connection);
    });
    let repo = tempfile::tempdir().unwrap();
    chart_repository(repo.path(), "healthy");
    let healthy = format!("file://{}", repo.path().display());
    let dead = format!("git://127.0.0.1:{port}/charts");
    let specs = BTreeMap::from([
        (release(1), source(&healthy, main_branch(), "chart")),
        (release(2), source(&dead, main_branch(), "chart")),
    ]);
    let t0 = Instant::now();
    let report = f.sync.pass(&specs, &NoCredentials, t0).await;
    assert_eq!(
        report.releases[&release(1)].clone().unwrap().chart,
        "healthy"
    );
    let error = report.releases[&release(2)]
        .clone()
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        format!("git source {dead} (path: chart, ref: main): timed out after 2 s")
    );

    // The stuck fetch is still running: the next attempt fails at once instead of piling up.
    let retry = f
        .sync
        .pass(&specs, &NoCredentials, t0 + Duration::from_secs(2))
        .await;
    let error = retry.releases[&release(2)].clone().unwrap_err().to_string();
    assert!(
        error.contains("timed out") || error.contains("has not finished yet"),
        "{error}"
    );
    assert!(retry.releases[&release(1)].is_ok());
    held.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn specs_breaking_the_kind_schema_or_naming_no_kind_reach_no_plugin() {
    let f = fixture().await;
    let repo = tempfile::tempdir().unwrap();
    chart_repository(repo.path(), "demo");
    let url = format!("file://{}", repo.path().display());
    let bad_field = SourceSpec::new(
        "git",
        &serde_json::json!({"url": url, "ref": "main", "path": "chart", "depth": 1}),
        None,
    );
    let wrong_type = SourceSpec::new("git", &serde_json::json!({"url": 42}), None);
    let unknown_kind = SourceSpec::new("s3", &serde_json::json!({"bucket": "b"}), None);
    let specs = BTreeMap::from([
        (release(1), bad_field),
        (release(2), wrong_type),
        (release(3), unknown_kind),
    ]);
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    assert_eq!(report.plugin_calls, 0, "no plugin call for refused specs");
    assert!(
        report.fetched.is_empty(),
        "no mirror fetched for refused specs"
    );
    let err = |n| report.releases[&release(n)].clone().unwrap_err();
    let extra = err(1);
    assert!(extra.invalid_spec);
    assert!(
        extra.to_string().contains("at /: ")
            && extra.to_string().contains("depth")
            && extra.to_string().contains("rule /additionalProperties"),
        "{extra}"
    );
    let typed = err(2).to_string();
    assert!(
        typed.contains("at /url: 42 is not of type \"string\"")
            && typed.contains("rule /properties/url/type"),
        "{typed}"
    );
    let unknown = err(3);
    assert!(unknown.invalid_spec);
    assert!(
        unknown
            .to_string()
            .contains("no source plugin serves kind `s3` (kinds served: git)"),
        "{unknown}"
    );

    // The same repository with a valid spec is resolved (one resolve, one fetch).
    let specs = BTreeMap::from([(release(4), source(&url, main_branch(), "chart"))]);
    let report = f.sync.pass(&specs, &NoCredentials, Instant::now()).await;
    assert!(report.releases[&release(4)].is_ok());
    assert_eq!(report.plugin_calls, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_contract_component_serves_git_sources_through_the_adapter() {
    let work = tempfile::tempdir().unwrap();
    let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/source-git-0.1.1.wasm");
    let loaded = runtime
        .load(&PluginConfig {
            name: "old-git".into(),
            world: PluginWorld::Source,
            path: fixture,
            limits: PluginLimits::default(),
            wasi: WasiGrants::default(),
            kinds: vec!["git".into()],
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        })
        .unwrap();
    assert_eq!(loaded.wit_version(), "0.1.1");
    let catalog = sources_support::catalog(&runtime, &["old-git"]).await;
    let sync = SourceSync::new(
        SourceSyncOptions {
            interval: INTERVAL,
            grace: GRACE,
            parallelism: 2,
        },
        Arc::new(MirrorStore::new(
            work.path().join("mirrors"),
            Duration::from_secs(30),
        )),
        Arc::new(ArtifactStore::open(work.path().join("artifacts"), 64 << 20).unwrap()),
        catalog,
        None,
    )
    .with_http(HttpOptions {
        egress: egress_support::loopback_and_local_paths(),
        ..HttpOptions::default()
    });
    let repo = tempfile::tempdir().unwrap();
    chart_repository(repo.path(), "legacy");
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let url = format!("file://{}", repo.path().display());
    let specs = BTreeMap::from([
        (release(1), source(&url, main_branch(), "chart")),
        (
            release(2),
            source(&url, GitReference::Semver("^1".into()), "chart"),
        ),
        (
            release(3),
            source(&url, GitReference::Branch("nope".into()), "chart"),
        ),
    ]);
    let report = sync.pass(&specs, &NoCredentials, Instant::now()).await;
    let artifact = report.releases[&release(1)].clone().unwrap();
    assert_eq!(artifact.chart, "legacy");
    assert_eq!(artifact.revision, head);
    assert_eq!(report.releases[&release(2)].clone().unwrap().revision, head);
    let error = report.releases[&release(3)]
        .clone()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no branch, tag or commit named `nope`"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_plugins_declaring_one_kind_are_refused_unless_the_configuration_picks_one() {
    let work = tempfile::tempdir().unwrap();
    let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins/source-git.wasm");
    for name in ["git", "git-copy"] {
        runtime
            .load(&PluginConfig {
                name: name.into(),
                world: PluginWorld::Source,
                path: path.clone(),
                limits: PluginLimits::default(),
                wasi: WasiGrants::default(),
                kinds: Vec::new(),
                allowed_hosts: None,
                storage_namespaces: Vec::new(),
                compat_helm: None,
            })
            .unwrap();
    }
    let plugins = || {
        vec![
            runtime.source("git").unwrap(),
            runtime.source("git-copy").unwrap(),
        ]
    };
    let (conflict, _) = capstan::sources::catalog::describe_all(plugins(), &BTreeMap::new()).await;
    let error = conflict.err().expect("a conflict").to_string();
    assert!(
        error.contains("source kind `git` is declared by plugins `git` and `git-copy`"),
        "{error}"
    );
    let routes = BTreeMap::from([("git".to_owned(), "git-copy".to_owned())]);
    let (chosen, failures) = capstan::sources::catalog::describe_all(plugins(), &routes).await;
    assert!(failures.is_empty());
    let catalog = chosen.expect("routed");
    assert_eq!(catalog.kind("git").unwrap().plugin.name(), "git-copy");
}
