//! The chaos campaign (`scripts/chaos`): against a real control plane of its own, N
//! HelmReleases (charts from a git server and a Helm repository, some of them failing, some
//! waiting for their pods) are installed, upgraded, given new values and deleted while a
//! driver SIGKILLs the operator at random points and restarts it, restarts kube-apiserver
//! and etcd, and makes the git server and the chart repository drop or stall connections.
//! Then the operator runs undisturbed and the driver measures how long everything takes
//! to converge and counts what must be zero: releases not matching their spec, records
//! left `pending-*`, objects without a release (and releases without a HelmRelease),
//! revisions written twice, leaked mirrors and partial files, lost values changes.
//!
//!   chaos --releases 50 --kills 100 [--minutes M] [--seed S]
//!
//! Exits non-zero when a count is not zero, a read of those counts failed (`helm list`,
//! `helm history`, `kubectl get`, `helm get values`), nothing converged in time, or the
//! controllers and kwok had to be restarted to converge (180 s after the last kill).
//!
//!   chaos --overload 500 [--releases 20]
//!
//! measures backpressure instead: how long healthy releases take to follow new values and
//! new chart versions (and new releases to become Ready) alone, then beside 500 releases
//! whose chart repository stalls every connection, and prints both with their ratio.

#[path = "../../support/git.rs"]
mod git_support;
// Shared with the integration tests, which use more of them.
#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "../../support/repo_server.rs"]
mod repo_server;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use capstan::api::HelmRelease;
use git_support::{GitHttpServer, git};
use harness::{Cluster, copy_dir, repo_root};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use repo_server::RepoServer;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

/// What the campaign does, from the command line.
#[derive(Debug, Clone)]
struct Settings {
    releases: usize,
    kills: usize,
    minutes: Option<u64>,
    seed: u64,
    overload: Option<usize>,
}

fn settings() -> Result<Settings, String> {
    let mut settings = Settings {
        releases: 50,
        kills: 100,
        minutes: None,
        seed: std::process::id() as u64,
        overload: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(format!("{name} wants a number"))
        };
        match arg.as_str() {
            "--releases" => settings.releases = value("--releases")? as usize,
            "--kills" => settings.kills = value("--kills")? as usize,
            "--minutes" => settings.minutes = Some(value("--minutes")?),
            "--seed" => settings.seed = value("--seed")?,
            "--overload" => settings.overload = Some(value("--overload")? as usize),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(settings)
}

/// A small deterministic generator (xorshift64*), seeded from the command line, so that a
/// campaign's choices can be replayed.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from))
    }
}

// ---------------------------------------------------------------------------------------
// A TCP proxy in front of a source server that can pass, drop or stall connections.

const PASS: u8 = 0;
const DROP: u8 = 1;
const STALL: u8 = 2;

/// A loopback proxy; `mode` says what happens to new connections.
struct FaultyProxy {
    port: u16,
    mode: Arc<AtomicU8>,
    dropped: Arc<AtomicU64>,
    stalled: Arc<AtomicU64>,
}

impl FaultyProxy {
    async fn start(upstream: u16) -> FaultyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(PASS));
        let dropped = Arc::new(AtomicU64::new(0));
        let stalled = Arc::new(AtomicU64::new(0));
        let (m, d, s) = (mode.clone(), dropped.clone(), stalled.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let (m, d, s) = (m.clone(), d.clone(), s.clone());
                tokio::spawn(async move {
                    match m.load(Ordering::Relaxed) {
                        DROP => {
                            d.fetch_add(1, Ordering::Relaxed);
                            let _ = inbound.shutdown().await;
                        }
                        STALL => {
                            // Accept and say nothing until the fault ends (at most 90 s).
                            s.fetch_add(1, Ordering::Relaxed);
                            let until = Instant::now() + Duration::from_secs(90);
                            while m.load(Ordering::Relaxed) == STALL && Instant::now() < until {
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                        }
                        _ => {
                            if let Ok(mut outbound) =
                                TcpStream::connect(("127.0.0.1", upstream)).await
                            {
                                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound)
                                    .await;
                            }
                        }
                    }
                });
            }
        });
        FaultyProxy {
            port,
            mode,
            dropped,
            stalled,
        }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------
// The operator under test and the control-plane processes the driver restarts.

/// `capstan run`, killed with SIGKILL (or stopped with SIGTERM at the end).
struct OperatorProcess {
    child: Child,
    log: PathBuf,
}

impl OperatorProcess {
    fn start(config: &Path, log: PathBuf, cluster: &Cluster) -> OperatorProcess {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let child = Command::new(harness::capstan_binary())
            .args(["run", "--config"])
            .arg(config)
            .args(["--metrics-address", "127.0.0.1:0"])
            .args(["--source-interval", "3", "--source-grace", "10"])
            .args(["--resync-interval", "20", "--shutdown-grace", "10"])
            .env("KUBECONFIG", cluster.kubeconfig())
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap();
        OperatorProcess { child, log }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline && self.child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill();
    }

    fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for OperatorProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Restart one process of the control plane (`kube-apiserver`, `etcd`) recorded in the
/// cluster's `pids` file: SIGKILL it, start the same command line again, record the new
/// pid there (so `tests/cluster/down` stops it), and wait until the API answers again.
/// `owned` keeps the processes this driver started, so that a second restart reaps the
/// first one completely (all its threads, so its ports are free) before starting anew.
fn restart_control_plane_process(
    cluster_dir: &Path,
    name: &str,
    cluster: &Cluster,
    owned: &mut BTreeMap<String, Child>,
) {
    let pids_path = cluster_dir.join("pids");
    let pids = std::fs::read_to_string(&pids_path).unwrap();
    let Some(pid) = pids.lines().find_map(|line| {
        let (n, pid) = line.split_once(' ')?;
        (n == name).then(|| pid.trim().to_owned())
    }) else {
        panic!("{name} is not in {}", pids_path.display());
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect();
    match owned.remove(name) {
        Some(mut child) => {
            let _ = child.kill();
            let _ = child.wait();
        }
        None => {
            // Started by tests/cluster/up, whose shell is gone: init reaps it.
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            while Path::new(&format!("/proc/{pid}")).exists() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut child = spawn_logged(&argv, &cluster_dir.join(format!("logs/{name}.log")));
    loop {
        if harness::run(cluster.command("kubectl").args(["get", "--raw", "/readyz"])).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "{name} did not come back");
        if child.try_wait().ok().flatten().is_some() {
            // Exited (a port still held for a moment): start it again.
            std::thread::sleep(Duration::from_millis(500));
            child = spawn_logged(&argv, &cluster_dir.join(format!("logs/{name}.log")));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let new_pid = child.id();
    owned.insert(name.to_owned(), child);
    let rewritten: String = pids
        .lines()
        .map(|line| {
            if line.split_once(' ').map(|(n, _)| n) == Some(name) {
                format!("{name} {new_pid}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    std::fs::write(&pids_path, rewritten).unwrap();
}

/// What the control plane looked like when the campaign did not converge: which of its
/// processes still run, the nodes with their taints, the workloads and pods of the campaign
/// namespace, recent warning events, and the last non-informational lines of the
/// controllers' logs. A rollout that never finishes is then told apart from an operator
/// that never tried (a dead scheduler or kwok, a tainted node, a pod stuck terminating).
fn control_plane_report(cluster: &Cluster, cluster_dir: &Path, namespace: &str) -> String {
    let mut report = String::from("chaos: control plane report\n");
    let pids = std::fs::read_to_string(cluster_dir.join("pids")).unwrap_or_default();
    for line in pids.lines() {
        if let Some((name, pid)) = line.split_once(' ') {
            let alive = Path::new(&format!("/proc/{}", pid.trim())).exists();
            report += &format!(
                "  {name} (pid {}): {}\n",
                pid.trim(),
                if alive { "running" } else { "GONE" }
            );
        }
    }
    let kubectl = |args: &[&str]| {
        cluster.command("kubectl").args(args).output().map_or_else(
            |error| format!("kubectl {args:?}: {error}\n"),
            |out| {
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )
            },
        )
    };
    report += &kubectl(&["get", "nodes", "-o", "wide"]);
    report += &kubectl(&[
        "get",
        "nodes",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} taints={.spec.taints}{\"\\n\"}{end}",
    ]);
    report += &kubectl(&[
        "-n",
        namespace,
        "get",
        "deployments,replicasets,pods",
        "-o",
        "wide",
    ]);
    report += &kubectl(&[
        "-n",
        namespace,
        "get",
        "events",
        "--field-selector",
        "type=Warning",
        "--sort-by=.lastTimestamp",
    ]);
    for name in ["kwok", "kube-scheduler", "kube-controller-manager"] {
        let log = std::fs::read_to_string(cluster_dir.join(format!("logs/{name}.log")))
            .unwrap_or_default();
        let notable: Vec<&str> = log
            .lines()
            .filter(|line| !line.starts_with('I') && !line.contains("\"level\":\"INFO\""))
            .collect();
        report += &format!("--- last notable lines of {name}.log\n");
        for line in &notable[notable.len().saturating_sub(15)..] {
            report += &format!("  {}\n", line.chars().take(400).collect::<String>());
        }
    }
    report
}

/// Start `argv` with its output appended to `log`.
fn spawn_logged(argv: &[String], log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// Sources: a git repository and a Helm chart repository, both changed during the campaign.

struct Sources {
    work: PathBuf,
    git_repo: PathBuf,
    charts: PathBuf,
    /// Chart version at git HEAD, and HEAD itself.
    git_version: u32,
    git_head: String,
    /// Newest chart version in the Helm repository.
    repo_version: u32,
}

fn write_chart(dir: &Path, version: u32, broken: bool) {
    let _ = std::fs::remove_dir_all(dir);
    copy_dir(&repo_root().join("deploy/examples/charts/hello"), dir);
    let manifest = dir.join("Chart.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("version: 0.1.0", &format!("version: 0.1.{version}")),
    )
    .unwrap();
    if broken {
        std::fs::write(
            dir.join("templates/broken.yaml"),
            "{{ fail \"broken on purpose\" }}\n",
        )
        .unwrap();
    }
}

impl Sources {
    fn create(work: &Path, cluster: &Cluster) -> Sources {
        let git_root = work.join("git");
        let git_repo = git_root.join("charts");
        std::fs::create_dir_all(&git_repo).unwrap();
        git(&git_repo, &["init", "-q"]);
        write_chart(&git_repo.join("charts/hello"), 0, false);
        write_chart(&git_repo.join("charts/broken"), 0, true);
        git(&git_repo, &["add", "-A"]);
        git(&git_repo, &["commit", "-qm", "charts 0.1.0"]);
        let git_head = git(&git_repo, &["rev-parse", "HEAD"]);
        let charts = work.join("repository");
        std::fs::create_dir_all(&charts).unwrap();
        let mut sources = Sources {
            work: work.to_owned(),
            git_repo,
            charts,
            git_version: 0,
            git_head,
            repo_version: 0,
        };
        sources.publish(cluster);
        sources
    }

    /// Commit a new version of the chart in git.
    fn commit(&mut self) {
        self.git_version += 1;
        write_chart(&self.git_repo.join("charts/hello"), self.git_version, false);
        git(&self.git_repo, &["add", "-A"]);
        git(
            &self.git_repo,
            &["commit", "-qm", &format!("hello 0.1.{}", self.git_version)],
        );
        self.git_head = git(&self.git_repo, &["rev-parse", "HEAD"]);
    }

    /// Publish the next chart version in the Helm repository (and re-index it).
    fn publish(&mut self, cluster: &Cluster) {
        let chart = self.work.join(format!("hello-{}", self.repo_version));
        write_chart(&chart, self.repo_version, false);
        cluster.run(
            "helm",
            &[
                "package",
                chart.to_str().unwrap(),
                "-d",
                self.charts.to_str().unwrap(),
            ],
        );
        cluster.run("helm", &["repo", "index", self.charts.to_str().unwrap()]);
        self.repo_version += 1;
    }
}

// ---------------------------------------------------------------------------------------
// Releases and what converged means for each.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Git,
    Repository,
    Failing,
}

#[derive(Debug, Clone)]
struct Release {
    name: String,
    kind: Kind,
    /// Bumped on each values change; the spec carries `message: chaos-<values>`.
    values: u64,
    deleted: bool,
}

impl Release {
    fn values_json(&self) -> serde_json::Value {
        serde_json::json!({"message": format!("chaos-{}", self.values), "replicaCount": 1})
    }
}

fn spec(release: &Release, git_url: &str, repo_url: &str, index: usize) -> serde_json::Value {
    let chart = match release.kind {
        Kind::Git => serde_json::json!({"git": git_url, "ref": "main", "path": "charts/hello"}),
        Kind::Failing => {
            serde_json::json!({"git": git_url, "ref": "main", "path": "charts/broken"})
        }
        Kind::Repository => {
            serde_json::json!({"repository": repo_url, "name": "hello", "version": ">=0.1.0"})
        }
    };
    serde_json::json!({
        "chart": chart,
        // A quarter wait for their pods: kills land during waits too.
        "wait": index % 4 == 1,
        "timeout": 60,
        "values": release.values_json(),
    })
}

fn ready_status(hr: &HelmRelease) -> Option<(bool, String)> {
    let status = hr.status.as_ref()?;
    if status.observed_generation != hr.metadata.generation {
        return None;
    }
    let ready = status.condition("Ready")?;
    Some((ready.status == "True", ready.message.clone()))
}

/// Whether `hr` shows it runs what its spec and the sources say (fast check from status).
fn converged(hr: &HelmRelease, release: &Release, sources: &Sources) -> bool {
    let Some((ready, message)) = ready_status(hr) else {
        return false;
    };
    let applied = hr
        .status
        .as_ref()
        .and_then(|s| s.applied_source_revision.clone());
    match release.kind {
        Kind::Failing => !ready && message.contains("broken on purpose"),
        Kind::Git => ready && applied.as_deref() == Some(sources.git_head.as_str()),
        Kind::Repository => {
            ready
                && applied.as_deref() == Some(format!("0.1.{}", sources.repo_version - 1).as_str())
        }
    }
}

// ---------------------------------------------------------------------------------------

#[derive(Default, Debug)]
struct Counts {
    not_converged: Vec<String>,
    pending: Vec<String>,
    orphans: Vec<String>,
    duplicate_revisions: Vec<String>,
    leaked: Vec<String>,
    lost_values: Vec<String>,
    /// Reads of the cluster that failed (`helm list`, `helm history`, `kubectl get`, `helm
    /// get values`): what they would have counted is unknown, so a failed read is not a zero.
    failed_reads: Vec<String>,
}

impl Counts {
    fn all_zero(&self) -> bool {
        self.not_converged.is_empty()
            && self.pending.is_empty()
            && self.orphans.is_empty()
            && self.duplicate_revisions.is_empty()
            && self.leaked.is_empty()
            && self.lost_values.is_empty()
            && self.failed_reads.is_empty()
    }

    fn print(&self) {
        let rows: [(&str, &Vec<String>); 7] = [
            ("releases not converged to their spec", &self.not_converged),
            ("records left pending-*", &self.pending),
            ("objects or releases without an owner", &self.orphans),
            ("revisions written twice", &self.duplicate_revisions),
            ("leaked mirrors or partial files", &self.leaked),
            ("lost values changes", &self.lost_values),
            ("failed reads (counts above unknown)", &self.failed_reads),
        ];
        for (what, items) in rows {
            println!("  {:>4}  {what}", items.len());
            for item in items.iter().take(10) {
                println!("          {item}");
            }
        }
    }
}

/// What `tool args` printed, as JSON, or why the read failed (the command failed or did not
/// print JSON), in one line.
fn json(cluster: &Cluster, tool: &str, args: &[&str]) -> Result<serde_json::Value, String> {
    let what = format!("{tool} {}", args.join(" "));
    let out = harness::run(cluster.command(tool).args(args)).map_err(|e| {
        let last = e.trim().lines().last().unwrap_or_default().to_owned();
        format!("{what}: {last}")
    })?;
    serde_json::from_str(&out).map_err(|e| format!("{what}: not JSON: {e}"))
}

fn count(
    cluster: &Cluster,
    namespace: &str,
    releases: &[Release],
    hrs: &BTreeMap<String, HelmRelease>,
    sources: &Sources,
    cache: &Path,
) -> Counts {
    let mut counts = Counts::default();
    let release_name = |name: &str| format!("{namespace}-{name}");
    for release in releases {
        match (release.deleted, hrs.get(&release.name)) {
            (true, Some(_)) => counts
                .not_converged
                .push(format!("{}: deleted but still there", release.name)),
            (false, None) => counts
                .not_converged
                .push(format!("{}: missing", release.name)),
            (false, Some(hr)) if !converged(hr, release, sources) => {
                counts.not_converged.push(format!(
                    "{}: {:?} applied {:?}",
                    release.name,
                    ready_status(hr),
                    hr.status
                        .as_ref()
                        .and_then(|s| s.applied_source_revision.clone())
                ))
            }
            _ => {}
        }
    }
    let listed = json(
        cluster,
        "helm",
        &["list", "-n", namespace, "--all", "-o", "json"],
    )
    .unwrap_or_else(|e| {
        counts.failed_reads.push(e);
        serde_json::Value::Null
    });
    let helm_releases: BTreeMap<String, String> = listed
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default().to_owned(),
                r["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for (name, status) in &helm_releases {
        if status.starts_with("pending") {
            counts.pending.push(format!("{name}: {status}"));
        }
        let owner = releases
            .iter()
            .find(|r| &release_name(&r.name) == name && !r.deleted);
        if owner.is_none() {
            counts
                .orphans
                .push(format!("release {name} ({status}) has no HelmRelease"));
        }
    }
    // Objects Helm owns in the namespace, each naming a release that must exist.
    let objects = json(
        cluster,
        "kubectl",
        &[
            "get",
            "deployments,services,configmaps,pods",
            "-n",
            namespace,
            "-o",
            "json",
        ],
    )
    .unwrap_or_else(|e| {
        counts.failed_reads.push(e);
        serde_json::Value::Null
    });
    for object in objects["items"].as_array().into_iter().flatten() {
        let kind = object["kind"].as_str().unwrap_or_default();
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let owner = object["metadata"]["annotations"]["meta.helm.sh/release-name"].as_str();
        let owned_by_set = object["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|o| !o.is_empty());
        match owner {
            Some(owner) if !helm_releases.contains_key(owner) => counts.orphans.push(format!(
                "{kind}/{name} of release {owner}, which does not exist"
            )),
            None if kind != "ConfigMap" && !owned_by_set => counts
                .orphans
                .push(format!("{kind}/{name} belongs to no release")),
            _ => {}
        }
    }
    for release in releases.iter().filter(|r| !r.deleted) {
        let name = release_name(&release.name);
        // A release `helm list` did not show has no record (a failing install that was
        // removed), so no history to read; one it showed must have its history read.
        let history = if helm_releases.contains_key(&name) {
            json(
                cluster,
                "helm",
                &[
                    "history", &name, "-n", namespace, "-o", "json", "--max", "1000",
                ],
            )
            .unwrap_or_else(|e| {
                counts.failed_reads.push(e);
                serde_json::Value::Null
            })
        } else {
            serde_json::Value::Null
        };
        let revisions: Vec<i64> = history
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["revision"].as_i64())
            .collect();
        let unique: BTreeSet<i64> = revisions.iter().copied().collect();
        let deployed = history
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["status"] == "deployed")
            .count();
        if unique.len() != revisions.len() || deployed > 1 {
            counts.duplicate_revisions.push(format!(
                "{name}: revisions {revisions:?}, {deployed} deployed"
            ));
        }
        if release.kind != Kind::Failing {
            if !helm_releases.contains_key(&name) {
                counts.lost_values.push(format!(
                    "{name}: no release record, spec {}",
                    release.values_json()
                ));
                continue;
            }
            match json(
                cluster,
                "helm",
                &["get", "values", &name, "-n", namespace, "-o", "json"],
            ) {
                Err(e) => counts.failed_reads.push(e),
                Ok(values) if values != release.values_json() => counts.lost_values.push(format!(
                    "{name}: released {values}, spec {}",
                    release.values_json()
                )),
                Ok(_) => {}
            }
        }
    }
    // One git repository is referenced: one mirror; and no partial file anywhere.
    let mirrors = cache.join("data/mirrors");
    let mirror_count = std::fs::read_dir(&mirrors)
        .map(|entries| entries.filter_map(Result::ok).count())
        .unwrap_or(0);
    if mirror_count > 1 {
        counts.leaked.push(format!(
            "{mirror_count} entries in {} for one repository",
            mirrors.display()
        ));
    }
    let mut stack = vec![cache.join("data")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains("partial") || name.ends_with(".tmp") || name.starts_with(".tmp") {
                counts.leaked.push(path.display().to_string());
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) && !path.starts_with(&mirrors) {
                stack.push(path);
            }
        }
    }
    counts
}

async fn list(api: &Api<HelmRelease>) -> Option<BTreeMap<String, HelmRelease>> {
    let list = api.list(&ListParams::default()).await.ok()?;
    Some(
        list.items
            .into_iter()
            .map(|hr| (hr.metadata.name.clone().unwrap_or_default(), hr))
            .collect(),
    )
}

async fn campaign(cluster: &Cluster, cluster_dir: &Path, settings: &Settings) -> bool {
    let mut dice = Dice(settings.seed.max(1));
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let mut sources = Sources::create(work.path(), cluster);
    let git_server = GitHttpServer::start(
        &work.path().join("git"),
        work.path().join("git-server.log"),
        None,
    );
    let repo_server = RepoServer::start(&sources.charts, work.path().join("repo-server.log"), None);
    let git_proxy = FaultyProxy::start(git_server.port).await;
    let repo_proxy = FaultyProxy::start(repo_server.port).await;
    let git_url = format!("http://127.0.0.1:{}/charts", git_proxy.port);
    let repo_url = format!("http://127.0.0.1:{}/", repo_proxy.port);

    let plugins = repo_root().join("target/plugins");
    let config = work.path().join("capstan.yaml");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {cache}\nplugins:\n\
             - {{name: git, world: source, path: {p}/source-git.wasm, limits: {{timeoutMs: 20000}}}}\n\
             - {{name: helm-repo, world: source, path: {p}/source-helm-repo.wasm, limits: {{timeoutMs: 20000}}}}\n\
             - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm, limits: {{memoryMib: 512, timeoutMs: 120000}}}}\n\
             backends: {{default: helm3}}\n\
             sources: {{egress: {{allowNetworks: [127.0.0.1], allowLocalPaths: true}}}}\n",
            cache = cache.display(),
            p = plugins.display()
        ),
    )
    .unwrap();

    let namespace = format!("chaos-{}", std::process::id());
    cluster.run("kubectl", &["create", "namespace", &namespace]);
    let client = cluster.client().await;
    let api: Api<HelmRelease> = Api::namespaced(client, &namespace);
    let mut releases: Vec<Release> = (0..settings.releases)
        .map(|i| Release {
            name: format!("r{i:03}"),
            kind: match i % 8 {
                7 => Kind::Failing,
                2 | 5 => Kind::Repository,
                _ => Kind::Git,
            },
            values: 0,
            deleted: false,
        })
        .collect();
    for (i, release) in releases.iter().enumerate() {
        let hr: HelmRelease = serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.capstan.dev/v1alpha1",
            "kind": "HelmRelease",
            "metadata": {"name": release.name, "namespace": namespace},
            "spec": spec(release, &git_url, &repo_url, i),
        }))
        .unwrap();
        api.create(&PostParams::default(), &hr).await.unwrap();
    }

    // The first start compiles the plugins (cached on disk after): let it get as far as a
    // first status before the kills begin.
    let operator_log = work.path().join("operator.log");
    let mut operator = OperatorProcess::start(&config, operator_log.clone(), cluster);
    let warm = Instant::now() + Duration::from_secs(300);
    while Instant::now() < warm
        && !list(&api)
            .await
            .is_some_and(|hrs| hrs.values().any(|hr| hr.status.is_some()))
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    let started = Instant::now();
    let limit = settings.minutes.map(|m| Duration::from_secs(m * 60));
    let mut stats: BTreeMap<&str, u64> = BTreeMap::new();
    let infra_at: Vec<usize> = [
        settings.kills / 4,
        settings.kills / 2,
        settings.kills * 3 / 4,
    ]
    .into_iter()
    .filter(|k| *k > 0)
    .collect();
    let max_deletions = (settings.releases / 10).max(1);
    // Control-plane processes this driver restarted (stopped by tests/cluster/down).
    let mut control_plane: BTreeMap<String, Child> = BTreeMap::new();
    for kill in 0..settings.kills {
        if limit.is_some_and(|l| started.elapsed() >= l) {
            println!("chaos: time limit reached after {kill} kills");
            break;
        }
        // Let the operator run for a random while, changing things meanwhile.
        let run_for = dice.millis(800, 7000);
        let until = Instant::now() + run_for;
        while Instant::now() < until {
            match dice.below(12) {
                0..=4 => {
                    let index = dice.below(releases.len() as u64) as usize;
                    let release = &mut releases[index];
                    if !release.deleted {
                        release.values += 1;
                        let patch = serde_json::json!({"spec": {"values": release.values_json()}});
                        if api
                            .patch(
                                &release.name,
                                &PatchParams::default(),
                                &Patch::Merge(&patch),
                            )
                            .await
                            .is_ok()
                        {
                            *stats.entry("values changes").or_default() += 1;
                        } else {
                            release.values -= 1;
                        }
                    }
                }
                5 => {
                    sources.commit();
                    *stats.entry("git commits").or_default() += 1;
                }
                6 => {
                    sources.publish(cluster);
                    *stats.entry("chart versions published").or_default() += 1;
                }
                7 if stats.get("deletions").copied().unwrap_or(0) < max_deletions as u64 => {
                    let index = dice.below(releases.len() as u64) as usize;
                    if !releases[index].deleted
                        && api
                            .delete(&releases[index].name, &DeleteParams::default())
                            .await
                            .is_ok()
                    {
                        releases[index].deleted = true;
                        *stats.entry("deletions").or_default() += 1;
                    }
                }
                8 => {
                    let proxy = if dice.below(2) == 0 {
                        &git_proxy
                    } else {
                        &repo_proxy
                    };
                    let mode = if dice.below(2) == 0 { DROP } else { STALL };
                    proxy.set(mode);
                    tokio::time::sleep(dice.millis(1000, 5000)).await;
                    proxy.set(PASS);
                    *stats
                        .entry(if mode == DROP {
                            "source outages (drop)"
                        } else {
                            "source outages (stall)"
                        })
                        .or_default() += 1;
                }
                _ => {}
            }
            tokio::time::sleep(dice.millis(100, 700)).await;
        }
        operator.kill();
        *stats.entry("operator kills").or_default() += 1;
        if infra_at.contains(&kill) {
            let name = if kill == settings.kills / 2 {
                "etcd"
            } else {
                "kube-apiserver"
            };
            println!("chaos: restarting {name} (after kill {kill})");
            restart_control_plane_process(cluster_dir, name, cluster, &mut control_plane);
            *stats
                .entry(if name == "etcd" {
                    "etcd restarts"
                } else {
                    "kube-apiserver restarts"
                })
                .or_default() += 1;
        }
        operator = OperatorProcess::start(&config, operator_log.clone(), cluster);
    }
    git_proxy.set(PASS);
    repo_proxy.set(PASS);
    let campaign_time = started.elapsed();
    stats.insert(
        "connections dropped",
        git_proxy.dropped.load(Ordering::Relaxed) + repo_proxy.dropped.load(Ordering::Relaxed),
    );
    stats.insert(
        "connections stalled",
        git_proxy.stalled.load(Ordering::Relaxed) + repo_proxy.stalled.load(Ordering::Relaxed),
    );
    println!(
        "chaos: campaign of {:.0}s over {} releases (seed {}):",
        campaign_time.as_secs_f64(),
        settings.releases,
        settings.seed
    );
    for (what, n) in &stats {
        println!("  {n:>5}  {what}");
    }

    // Settle: the operator runs undisturbed until everything converged (or 10 minutes).
    let settle = Instant::now();
    let deadline = settle + Duration::from_secs(600);
    let mut converged_after = None;
    let mut restarted_controllers = false;
    loop {
        // Not converged well after the last fault: the report says why, and the
        // controllers and the simulated kubelet are restarted once (the same command lines),
        // in case an informer of theirs never recovered from the apiserver and etcd
        // restarts; seen once in CI as Deployments whose rollout never finished. The
        // campaign goes on (whether the operator converges afterwards, within the same
        // 600 s, is still worth knowing) but the verdict records the restart and fails:
        // a campaign that needed it did not converge on its own.
        if !restarted_controllers && settle.elapsed() > Duration::from_secs(180) {
            restarted_controllers = true;
            println!(
                "chaos: not converged 180 s after the last kill; restarting the controllers and kwok\n{}",
                control_plane_report(cluster, cluster_dir, &namespace)
            );
            for name in ["kube-controller-manager", "kube-scheduler", "kwok"] {
                restart_control_plane_process(cluster_dir, name, cluster, &mut control_plane);
            }
        }
        if let Some(hrs) = list(&api).await {
            let done =
                releases
                    .iter()
                    .all(|release| match (release.deleted, hrs.get(&release.name)) {
                        (true, found) => found.is_none(),
                        (false, Some(hr)) => converged(hr, release, &sources),
                        (false, None) => false,
                    });
            if done {
                converged_after = Some(settle.elapsed());
                break;
            }
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Let the mirror grace period pass before counting leaks.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let hrs = list(&api).await.unwrap_or_default();
    let counts = count(cluster, &namespace, &releases, &hrs, &sources, &cache);
    match converged_after {
        Some(after) => println!(
            "chaos: converged {:.1}s after the last kill",
            after.as_secs_f64()
        ),
        None => println!("chaos: NOT converged within 600s of the last kill"),
    }
    if restarted_controllers {
        println!(
            "chaos: FAILED: not converged 180 s after the last kill; kube-controller-manager, kube-scheduler and kwok had to be restarted"
        );
    }
    println!("chaos: counts (all must be 0):");
    counts.print();
    let ok = converged_after.is_some() && counts.all_zero() && !restarted_controllers;
    if !ok {
        println!("chaos: operator log tail:\n{}", operator.log_tail(60));
        println!("{}", control_plane_report(cluster, cluster_dir, &namespace));
    }

    // Clean up: uninstall everything while the operator still runs.
    for release in releases.iter().filter(|r| !r.deleted) {
        let _ = api.delete(&release.name, &DeleteParams::default()).await;
    }
    let gone = Instant::now() + Duration::from_secs(180);
    while list(&api).await.is_some_and(|hrs| !hrs.is_empty()) && Instant::now() < gone {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    operator.stop();
    let _ = cluster
        .command("kubectl")
        .args(["delete", "namespace", &namespace, "--wait=false"])
        .output();
    ok
}

/// Seconds until every release in `names` satisfies `check`, or `None` after 10 minutes.
async fn time_until(
    api: &Api<HelmRelease>,
    names: &[String],
    check: impl Fn(&HelmRelease) -> bool,
) -> Option<f64> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(600) {
        if let Some(hrs) = list(api).await
            && names.iter().all(|name| hrs.get(name).is_some_and(&check))
        {
            return Some(started.elapsed().as_secs_f64());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// Peak resident memory of `pid` so far (VmHWM), in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// One round of healthy work: new values for every healthy release, a new chart version,
/// and `fresh` new releases; the seconds each took to be applied.
async fn healthy_round(
    api: &Api<HelmRelease>,
    cluster: &Cluster,
    sources: &mut Sources,
    healthy: &[Release],
    repo_url: &str,
    round: u64,
    fresh: &[String],
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let names: Vec<String> = healthy.iter().map(|r| r.name.clone()).collect();
    let message = format!("round-{round}");
    for name in &names {
        let patch =
            serde_json::json!({"spec": {"values": {"message": message, "replicaCount": 1}}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    let values = time_until(api, &names, |hr| {
        ready_status(hr).is_some_and(|(ready, _)| ready)
    })
    .await;
    sources.publish(cluster);
    let wanted = format!("0.1.{}", sources.repo_version - 1);
    let version = time_until(api, &names, |hr| {
        hr.status
            .as_ref()
            .and_then(|s| s.applied_source_revision.as_deref())
            == Some(wanted.as_str())
            && ready_status(hr).is_some_and(|(ready, _)| ready)
    })
    .await;
    for name in fresh {
        let release = Release {
            name: name.clone(),
            kind: Kind::Repository,
            values: 0,
            deleted: false,
        };
        let hr: HelmRelease = serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.capstan.dev/v1alpha1",
            "kind": "HelmRelease",
            "metadata": {"name": name},
            "spec": spec(&release, "", repo_url, 0),
        }))
        .unwrap();
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let created = time_until(api, fresh, |hr| {
        ready_status(hr).is_some_and(|(ready, _)| ready)
    })
    .await;
    (values, version, created)
}

/// Backpressure: healthy releases' latencies alone, then beside `stalled` releases whose
/// repository stalls every connection.
async fn overload(cluster: &Cluster, stalled: usize, healthy_count: usize) -> bool {
    let work = tempfile::tempdir().unwrap();
    let mut sources = Sources::create(work.path(), cluster);
    let repo_server = RepoServer::start(&sources.charts, work.path().join("repo.log"), None);
    let repo_url = repo_server.url("");
    let dead = FaultyProxy::start(repo_server.port).await;
    dead.set(STALL);
    let plugins = repo_root().join("target/plugins");
    let config = work.path().join("capstan.yaml");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {cache}\nplugins:\n\
             - {{name: helm-repo, world: source, path: {p}/source-helm-repo.wasm}}\n\
             - {{name: helm3, world: backend, path: {p}/backend-helm3.wasm, limits: {{memoryMib: 512}}}}\n\
             backends: {{default: helm3}}\n\
             sources: {{http: {{timeoutMs: 30000}}, egress: {{allowNetworks: [127.0.0.1]}}}}\n",
            cache = work.path().join("cache").display(),
            p = plugins.display()
        ),
    )
    .unwrap();
    let namespace = format!("overload-{}", std::process::id());
    cluster.run("kubectl", &["create", "namespace", &namespace]);
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &namespace);
    let healthy: Vec<Release> = (0..healthy_count)
        .map(|i| Release {
            name: format!("healthy-{i:03}"),
            kind: Kind::Repository,
            values: 0,
            deleted: false,
        })
        .collect();
    for release in &healthy {
        let hr: HelmRelease = serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.capstan.dev/v1alpha1",
            "kind": "HelmRelease",
            "metadata": {"name": release.name},
            "spec": spec(release, "", &repo_url, 0),
        }))
        .unwrap();
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let log = work.path().join("operator.log");
    let mut operator = OperatorProcess::start(&config, log, cluster);
    let names: Vec<String> = healthy.iter().map(|r| r.name.clone()).collect();
    let installed = time_until(&api, &names, |hr| {
        ready_status(hr).is_some_and(|(ready, _)| ready)
    })
    .await;
    println!(
        "overload: {healthy_count} healthy releases Ready in {:.1}s",
        installed.unwrap_or(f64::NAN)
    );
    let fresh_alone: Vec<String> = (0..5).map(|i| format!("fresh-a{i}")).collect();
    let alone = healthy_round(
        &api,
        cluster,
        &mut sources,
        &healthy,
        &repo_url,
        1,
        &fresh_alone,
    )
    .await;

    // Now the stalled ones: 50 repositories on a server that never answers, each named by
    // a tenth of them with its own version constraint (distinct sources).
    let stalled_url = format!("http://127.0.0.1:{}", dead.port);
    for i in 0..stalled {
        let hr: HelmRelease = serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.capstan.dev/v1alpha1",
            "kind": "HelmRelease",
            "metadata": {"name": format!("stalled-{i:04}")},
            "spec": {
                "chart": {
                    "repository": format!("{stalled_url}/repo-{}/", i % 50),
                    "name": "hello",
                    "version": format!(">=0.{}.0", i / 50),
                },
                "values": {"message": "never"},
            },
        }))
        .unwrap();
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    // Let every stalled release be seen and its first resolves start.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let fresh_loaded: Vec<String> = (0..5).map(|i| format!("fresh-b{i}")).collect();
    let loaded = healthy_round(
        &api,
        cluster,
        &mut sources,
        &healthy,
        &repo_url,
        2,
        &fresh_loaded,
    )
    .await;
    let peak = operator.child.id();
    let rss = peak_rss_mib(peak);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}x", b / a),
        _ => "n/a".into(),
    };
    let show = |v: Option<f64>| v.map_or("timed out".to_owned(), |v| format!("{v:.1}s"));
    println!(
        "overload: {healthy_count} healthy releases, then beside {stalled} releases on a stalled repository"
    );
    println!(
        "  {:<44} {:>10} {:>12} {:>7}",
        "", "alone", "overloaded", "ratio"
    );
    for (what, a, b) in [
        (
            "new values applied to every healthy release",
            alone.0,
            loaded.0,
        ),
        ("new chart version applied to every one", alone.1, loaded.1),
        ("5 new releases Ready", alone.2, loaded.2),
    ] {
        println!(
            "  {what:<44} {:>10} {:>12} {:>7}",
            show(a),
            show(b),
            ratio(a, b)
        );
    }
    println!(
        "  stalled connections held: {}; operator peak RSS {rss:.0} MiB",
        dead.stalled.load(Ordering::Relaxed)
    );
    let ok = loaded.0.is_some() && loaded.1.is_some() && loaded.2.is_some();
    operator.stop();
    let _ = cluster
        .command("kubectl")
        .args(["delete", "namespace", &namespace, "--wait=false"])
        .output();
    // The finalizers of the stalled releases would hold the namespace: the test cluster is
    // stopped with it, so leave them.
    ok
}

fn main() -> std::process::ExitCode {
    let settings = match settings() {
        Ok(s) => s,
        Err(error) => {
            eprintln!(
                "chaos: {error}\nusage: chaos --releases N --kills K [--minutes M] [--seed S]"
            );
            return std::process::ExitCode::from(2);
        }
    };
    let cluster_dir = std::env::var_os("CAPSTAN_CLUSTER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/chaos-cluster"));
    let cluster = match Cluster::start_or_reuse_in(cluster_dir.clone()) {
        Ok(cluster) => cluster,
        Err(error) => {
            eprintln!("chaos: cannot start the control plane: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    cluster.run(
        "kubectl",
        &[
            "apply",
            "-f",
            repo_root()
                .join("deploy/crds/helmreleases.yaml")
                .to_str()
                .unwrap(),
        ],
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ok = match settings.overload {
        Some(stalled) => runtime.block_on(overload(&cluster, stalled, settings.releases)),
        None => runtime.block_on(campaign(&cluster, &cluster_dir, &settings)),
    };
    drop(runtime);
    drop(cluster);
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
