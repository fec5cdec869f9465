//! Starts (or reuses) the control plane of `tests/cluster/` and gives tests what they need:
//! a kube client, the kubeconfig, the tool binaries, and unique namespaces.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `capstan` binary the Makefile builds before these tests (`cargo build -p capstan`),
/// or `$CAPSTAN_BIN` (scripts/chaos runs a copy, so rebuilding meanwhile changes nothing).
pub fn capstan_binary() -> PathBuf {
    let binary = std::env::var_os("CAPSTAN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/debug/capstan"));
    assert!(
        binary.is_file(),
        "{} is missing: run `cargo build -p capstan` first",
        binary.display()
    );
    binary
}

/// A control plane used by the tests; stopped on drop if this process started it.
pub struct Cluster {
    dir: PathBuf,
    tools: PathBuf,
    started_here: bool,
    namespaces: AtomicUsize,
}

/// Run `command`; its stdout, or everything it printed when it failed.
pub fn run(command: &mut Command) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

impl Cluster {
    /// Reuse the cluster in `$CAPSTAN_CLUSTER_DIR` (default `target/test-cluster`) when it is
    /// running, otherwise start one there with `tests/cluster/up`.
    pub fn start_or_reuse() -> Result<Cluster, String> {
        let dir = std::env::var_os("CAPSTAN_CLUSTER_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target/test-cluster"));
        Cluster::start_or_reuse_in(dir)
    }

    /// Reuse the cluster in `dir` when it is running, otherwise start one there.
    pub fn start_or_reuse_in(dir: PathBuf) -> Result<Cluster, String> {
        let root = repo_root();
        let tools =
            PathBuf::from(run(&mut Command::new(root.join("tests/cluster/tools-dir")))?.trim());
        let kubeconfig = dir.join("kubeconfig");
        let running = kubeconfig.is_file()
            && dir.join("pids").is_file()
            && run(Command::new(tools.join("kubectl"))
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(["get", "--raw", "/readyz"]))
            .is_ok();
        if running {
            println!("reusing the control plane in {}", dir.display());
        } else {
            println!("starting a control plane in {}", dir.display());
            let up = run(Command::new(root.join("tests/cluster/up")).arg(&dir))?;
            print!("{up}");
        }
        Ok(Cluster {
            dir,
            tools,
            started_here: !running,
            namespaces: AtomicUsize::new(0),
        })
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// The API server's audit log (JSON lines; what ServiceAccounts do, metadata only).
    pub fn audit_log(&self) -> PathBuf {
        self.dir.join("logs/audit.log")
    }

    /// A tool binary (`helm`, `kubectl`, ...).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.tools.join(name)
    }

    /// A command for `tool` pointed at this cluster.
    pub fn command(&self, tool: &str) -> Command {
        let mut command = Command::new(self.tool(tool));
        command.env("KUBECONFIG", self.kubeconfig());
        if tool == "helm" {
            // Keep helm's caches and config out of the user's home.
            let home = self.dir.join("helm-home");
            command.env("HELM_CACHE_HOME", home.join("cache"));
            command.env("HELM_CONFIG_HOME", home.join("config"));
            command.env("HELM_DATA_HOME", home.join("data"));
        }
        command
    }

    /// Run `tool` with `args`; its stdout, or a panic with everything it printed.
    pub fn run(&self, tool: &str, args: &[&str]) -> String {
        run(self.command(tool).args(args)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A kube client for the admin user.
    pub async fn client(&self) -> Client {
        let kubeconfig = Kubeconfig::read_from(self.kubeconfig()).expect("kubeconfig");
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("config");
        Client::try_from(config).expect("client")
    }

    /// A fresh namespace name, unique within this run.
    pub fn namespace(&self, prefix: &str) -> String {
        let n = self.namespaces.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}-{}-{n}", std::process::id())
    }

    /// Create `namespace` and return its name.
    pub async fn create_namespace(&self, prefix: &str) -> String {
        let name = self.namespace(prefix);
        self.run("kubectl", &["create", "namespace", &name]);
        name
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started_here {
            match run(Command::new(repo_root().join("tests/cluster/down")).arg(&self.dir)) {
                Ok(out) => print!("{out}"),
                Err(e) => eprintln!("{e}"),
            }
        }
    }
}

/// Copy the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A namespaced CustomResourceDefinition `<plural>.<group>` (version `v1`, any fields),
/// labelled `capstan.test/generation: <generation>` when that is not empty.
pub fn namespaced_crd(group: &str, plural: &str, kind: &str, generation: &str) -> String {
    let labels = if generation.is_empty() {
        String::new()
    } else {
        format!("  labels:\n    capstan.test/generation: {generation}\n")
    };
    let singular = kind.to_lowercase();
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\n{labels}spec:\n  group: {group}\n  scope: Namespaced\n  names: {{plural: {plural}, singular: {singular}, kind: {kind}}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
    )
}
