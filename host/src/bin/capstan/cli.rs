//! The command line: the commands and their arguments (clap).

use std::net::SocketAddr;
use std::path::PathBuf;

use capstan::telemetry::LogFormat;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "capstan",
    version,
    about = "Keeps Helm releases in line with HelmRelease resources"
)]
pub(crate) struct Cli {
    /// Log format.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "CAPSTAN_LOG_FORMAT"
    )]
    pub(crate) log_format: LogFormat,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the operator.
    Run {
        /// Configuration file (plugins, limits, backend selection).
        #[arg(long, env = "CAPSTAN_CONFIG")]
        config: PathBuf,
        /// Address of the /healthz, /readyz and /metrics endpoints.
        #[arg(
            long,
            default_value = "127.0.0.1:8080",
            env = "CAPSTAN_METRICS_ADDRESS"
        )]
        metrics_address: SocketAddr,
        #[command(flatten)]
        operator: OperatorArgs,
    },
    /// Print the HelmRelease CustomResourceDefinition (YAML).
    Crd,
    /// Convert Flux Helm Operator `helm.fluxcd.io/v1` HelmReleases (YAML file, `-` for
    /// stdin) into Capstan's; notes about dropped fields go to stderr.
    Convert {
        /// The YAML file.
        file: PathBuf,
    },
    /// Work with plugin components.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Resolve and fetch the chart source of a HelmRelease, without the operator.
    Source {
        #[command(subcommand)]
        command: SourceCommand,
    },
    /// Render a chart as `helm template` does, through the configured backend component.
    Template(TemplateArgs),
    /// Install, upgrade, inspect or uninstall a release through a backend, without the
    /// operator.
    Release {
        #[command(flatten)]
        backend: BackendArgs,
        #[command(subcommand)]
        command: ReleaseCommand,
    },
}

#[derive(clap::Args)]
pub(crate) struct OperatorArgs {
    /// How often each git mirror and Helm repository index is refreshed, in seconds.
    #[arg(long, default_value_t = 60, env = "CAPSTAN_SOURCE_INTERVAL")]
    pub(crate) source_interval: u64,
    /// How long a mirror or index nothing references is kept, in seconds.
    #[arg(long, default_value_t = 600, env = "CAPSTAN_SOURCE_GRACE")]
    pub(crate) source_grace: u64,
    /// Period of the full check of a release that is in line, in seconds.
    #[arg(long, default_value_t = 180, env = "CAPSTAN_RESYNC_INTERVAL")]
    pub(crate) resync_interval: u64,
    /// Releases reconciled at once.
    #[arg(long, default_value_t = 4, env = "CAPSTAN_WORKERS")]
    pub(crate) workers: u16,
    /// How long a stopping operator waits for in-flight reconciles, in seconds, before it
    /// exits anyway (keep it below the Pod's terminationGracePeriodSeconds).
    #[arg(long, default_value_t = 300, env = "CAPSTAN_SHUTDOWN_GRACE")]
    pub(crate) shutdown_grace: u64,
    /// How long after a HelmRelease's deletion its uninstall may keep failing, in seconds,
    /// before the finalizer is removed anyway with a Warning event (0: keep trying forever).
    #[arg(long, default_value_t = 900, env = "CAPSTAN_UNINSTALL_DEADLINE")]
    pub(crate) uninstall_deadline: u64,
    /// How often the configuration file is checked for changes, in seconds; a change of
    /// backends is applied without a restart (0: never).
    #[arg(long, default_value_t = 5, env = "CAPSTAN_CONFIG_POLL_INTERVAL")]
    pub(crate) config_poll_interval: u64,
    /// Cluster-scoped kinds release backends may touch (`Kind` or `Kind.group`); repeatable.
    #[arg(
        long = "allow-cluster-kind",
        env = "CAPSTAN_ALLOW_CLUSTER_KINDS",
        value_delimiter = ','
    )]
    pub(crate) cluster_kinds: Vec<String>,
    /// Act only while holding a Lease (for more than one replica).
    #[arg(long, env = "CAPSTAN_LEADER_ELECTION")]
    pub(crate) leader_election: bool,
    /// Namespace of the leader Lease.
    #[arg(long, default_value = "capstan-system", env = "POD_NAMESPACE")]
    pub(crate) lease_namespace: String,
    /// Name of the leader Lease (give each shard its own).
    #[arg(long, default_value = "capstan-leader")]
    pub(crate) lease_name: String,
    /// Handle only the HelmReleases matching this label selector (horizontal sharding, as
    /// Flux's `--watch-label-selector`): e.g. `capstan.dev/shard=a` on one replica set and
    /// `capstan.dev/shard=b` on another, and `!capstan.dev/shard` for the unlabelled rest.
    #[arg(long, env = "CAPSTAN_WATCH_LABEL_SELECTOR")]
    pub(crate) watch_label_selector: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct BackendArgs {
    /// Configuration file naming the backend plugins.
    #[arg(long, global = true, env = "CAPSTAN_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Backend plugin (default: the configuration's default backend).
    #[arg(long, global = true)]
    pub(crate) backend: Option<String>,
    /// Folder for compiled components (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long, global = true)]
    pub(crate) cache_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum ReleaseCommand {
    /// Install the release, or upgrade it when it exists.
    Sync(capstan::release::SyncArgs),
    /// Say whether `sync` with these arguments would change anything (nothing is written).
    Plan(capstan::release::SyncArgs),
    /// Roll back to a revision (default: the previous deployed one), as a new revision.
    Rollback(capstan::release::RollbackArgs),
    /// Remove the release and its objects.
    Uninstall(capstan::release::UninstallArgs),
    /// Show the current revision.
    Status(capstan::release::Target),
    /// Show the revisions.
    History(capstan::release::HistoryArgs),
    /// Move a Helm 2 release (Tiller's records) to a Helm 3 backend in place: same revisions,
    /// objects adopted, nothing recreated.
    Migrate(capstan::release::MigrateArgs),
}

#[derive(clap::Args)]
pub(crate) struct TemplateArgs {
    /// Chart folder or chart archive (`.tgz`).
    pub(crate) chart: PathBuf,
    /// Values file (YAML); repeat to merge several, later ones win.
    #[arg(short = 'f', long = "values")]
    pub(crate) values: Vec<PathBuf>,
    /// Set values on the command line (`a.b=c,d[0]=e`); repeatable.
    #[arg(long)]
    pub(crate) set: Vec<String>,
    /// Like `--set`, but every value is a string.
    #[arg(long)]
    pub(crate) set_string: Vec<String>,
    /// Set JSON values on the command line (`a={"b":[1,2]}`); repeatable.
    #[arg(long)]
    pub(crate) set_json: Vec<String>,
    /// Set a literal string (everything after the first `=`); repeatable.
    #[arg(long)]
    pub(crate) set_literal: Vec<String>,
    /// Release name.
    #[arg(long, default_value = "release-name")]
    pub(crate) name: String,
    /// Release namespace.
    #[arg(short = 'n', long, default_value = "default")]
    pub(crate) namespace: String,
    /// Kubernetes version for `.Capabilities.KubeVersion` (default v1.36.0).
    #[arg(long)]
    pub(crate) kube_version: Option<String>,
    /// Extra API versions for `.Capabilities.APIVersions`; repeatable.
    #[arg(short = 'a', long = "api-versions")]
    pub(crate) api_versions: Vec<String>,
    /// Render as an upgrade instead of an install.
    #[arg(long)]
    pub(crate) is_upgrade: bool,
    /// Leave hooks out of the output.
    #[arg(long)]
    pub(crate) no_hooks: bool,
    /// Configuration file naming the backend plugins. Without one, the backend is the
    /// component installed beside the binary (`$CAPSTAN_PLUGINS_DIR`,
    /// `<prefix>/lib/capstan/plugins`, `/usr/lib/capstan/plugins`, or a checkout's
    /// `target/plugins`).
    #[arg(long, env = "CAPSTAN_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Backend plugin (default: the configuration's default backend, else `helm3`).
    #[arg(long)]
    pub(crate) backend: Option<String>,
    /// Folder for compiled components (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long)]
    pub(crate) cache_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct SourceArgs {
    /// HelmRelease YAML file (`spec.chart.git`/`ref`/`path`, `spec.chart.repository`/
    /// `name`/`version`, or `spec.chart.source` with a `kind` and `spec`).
    pub(crate) file: PathBuf,
    /// Configuration file naming the source plugin.
    #[arg(long, env = "CAPSTAN_CONFIG")]
    pub(crate) config: PathBuf,
    /// Folder for git mirrors and artifacts (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long)]
    pub(crate) cache_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum SourceCommand {
    /// Print the revision, chart and artifact digest the source resolves to.
    Resolve(SourceArgs),
    /// Like `resolve`, and write the chart archive to `--output`.
    Fetch {
        #[command(flatten)]
        source: SourceArgs,
        /// Where to write the chart archive (`.tgz`).
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub(crate) enum PluginCommand {
    /// Print a component's world, `capstan:plugin` version, imports and exports, and for a
    /// source plugin the kinds it declares (schemas and capabilities).
    Inspect {
        /// The `.wasm` component.
        file: PathBuf,
    },
    /// Write a working source plugin to start from.
    New {
        /// Language of the plugin.
        #[arg(long, value_enum)]
        lang: capstan::scaffold::Language,
        /// Plugin name, also the source kind it serves (lowercase, digits, `-`).
        name: String,
        /// Folder to write (default: `./NAME`).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Rust: take the SDK from this local `plugins/lib/sdk` instead of its release on
        /// crates.io.
        #[arg(long)]
        sdk_path: Option<PathBuf>,
    },
    /// Run a source plugin's describe, resolve and fetch on one spec, with the host's real
    /// capabilities and no cluster: its HTTP origins, a git mirror, credentials given here.
    Run {
        /// The `.wasm` source component.
        file: PathBuf,
        /// Source kind to ask for.
        #[arg(long)]
        kind: String,
        /// The spec, as JSON.
        #[arg(long)]
        spec: String,
        /// A key of the credentials Secret (`key=value`); repeatable.
        #[arg(long = "secret")]
        secrets: Vec<String>,
        /// For a `capstan:plugin@0.1` component: the kind it serves.
        #[arg(long = "legacy-kind")]
        legacy_kinds: Vec<String>,
        /// Write the fetched chart archive here.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Compile every plugin of an operator configuration into its compiled-component cache
    /// (`cacheDir`), so the operator starts from the cache: Cranelift's memory and time are
    /// spent here (an image build, an init container), not in the running operator.
    Compile {
        /// The operator configuration file (as for `capstan run`).
        #[arg(long)]
        config: PathBuf,
    },
}

impl Command {
    /// Whether this command may fetch from a git server (the operator, and source
    /// resolution through any plugin, which can ask the host for a git mirror).
    pub(crate) fn may_fetch_git(&self) -> bool {
        matches!(
            self,
            Command::Run { .. }
                | Command::Source { .. }
                | Command::Plugin {
                    command: PluginCommand::Run { .. }
                }
        )
    }
}
