//! The `capstan` binary: the operator and its command-line tools.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use capstan::config::Config;
use capstan::plugins::bindings::types::ErrorCode;
use capstan::plugins::cache::{CacheOutcome, CompiledCache};
use capstan::plugins::call::CallFailure;
use capstan::plugins::{self, PluginRuntime, inspect};
use capstan::telemetry::{self, Health, LogFormat, PluginMetrics};
use clap::{Parser, Subcommand};

/// How long git may wait to connect to a server, or for any single read from it.
const GIT_NETWORK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Parser)]
#[command(
    name = "capstan",
    version,
    about = "Keeps Helm releases in line with HelmRelease resources"
)]
struct Cli {
    /// Log format.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "CAPSTAN_LOG_FORMAT"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
struct OperatorArgs {
    /// How often each git mirror and Helm repository index is refreshed, in seconds.
    #[arg(long, default_value_t = 60, env = "CAPSTAN_SOURCE_INTERVAL")]
    source_interval: u64,
    /// How long a mirror or index nothing references is kept, in seconds.
    #[arg(long, default_value_t = 600, env = "CAPSTAN_SOURCE_GRACE")]
    source_grace: u64,
    /// Period of the full check of a release that is in line, in seconds.
    #[arg(long, default_value_t = 180, env = "CAPSTAN_RESYNC_INTERVAL")]
    resync_interval: u64,
    /// Releases reconciled at once.
    #[arg(long, default_value_t = 4, env = "CAPSTAN_WORKERS")]
    workers: u16,
    /// How long a stopping operator waits for in-flight reconciles, in seconds, before it
    /// exits anyway (keep it below the Pod's terminationGracePeriodSeconds).
    #[arg(long, default_value_t = 300, env = "CAPSTAN_SHUTDOWN_GRACE")]
    shutdown_grace: u64,
    /// How long after a HelmRelease's deletion its uninstall may keep failing, in seconds,
    /// before the finalizer is removed anyway with a Warning event (0: keep trying forever).
    #[arg(long, default_value_t = 900, env = "CAPSTAN_UNINSTALL_DEADLINE")]
    uninstall_deadline: u64,
    /// How often the configuration file is checked for changes, in seconds; a change of
    /// backends is applied without a restart (0: never).
    #[arg(long, default_value_t = 5, env = "CAPSTAN_CONFIG_POLL_INTERVAL")]
    config_poll_interval: u64,
    /// Cluster-scoped kinds release backends may touch (`Kind` or `Kind.group`); repeatable.
    #[arg(
        long = "allow-cluster-kind",
        env = "CAPSTAN_ALLOW_CLUSTER_KINDS",
        value_delimiter = ','
    )]
    cluster_kinds: Vec<String>,
    /// Act only while holding a Lease (for more than one replica).
    #[arg(long, env = "CAPSTAN_LEADER_ELECTION")]
    leader_election: bool,
    /// Namespace of the leader Lease.
    #[arg(long, default_value = "capstan-system", env = "POD_NAMESPACE")]
    lease_namespace: String,
    /// Name of the leader Lease (give each shard its own).
    #[arg(long, default_value = "capstan-leader")]
    lease_name: String,
    /// Handle only the HelmReleases matching this label selector (horizontal sharding, as
    /// Flux's `--watch-label-selector`): e.g. `capstan.dev/shard=a` on one replica set and
    /// `capstan.dev/shard=b` on another, and `!capstan.dev/shard` for the unlabelled rest.
    #[arg(long, env = "CAPSTAN_WATCH_LABEL_SELECTOR")]
    watch_label_selector: Option<String>,
}

#[derive(clap::Args)]
struct BackendArgs {
    /// Configuration file naming the backend plugins.
    #[arg(long, global = true, env = "CAPSTAN_CONFIG")]
    config: Option<PathBuf>,
    /// Backend plugin (default: the configuration's default backend).
    #[arg(long, global = true)]
    backend: Option<String>,
    /// Folder for compiled components (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum ReleaseCommand {
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
struct TemplateArgs {
    /// Chart folder or chart archive (`.tgz`).
    chart: PathBuf,
    /// Values file (YAML); repeat to merge several, later ones win.
    #[arg(short = 'f', long = "values")]
    values: Vec<PathBuf>,
    /// Set values on the command line (`a.b=c,d[0]=e`); repeatable.
    #[arg(long)]
    set: Vec<String>,
    /// Like `--set`, but every value is a string.
    #[arg(long)]
    set_string: Vec<String>,
    /// Set JSON values on the command line (`a={"b":[1,2]}`); repeatable.
    #[arg(long)]
    set_json: Vec<String>,
    /// Set a literal string (everything after the first `=`); repeatable.
    #[arg(long)]
    set_literal: Vec<String>,
    /// Release name.
    #[arg(long, default_value = "release-name")]
    name: String,
    /// Release namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// Kubernetes version for `.Capabilities.KubeVersion` (default v1.36.0).
    #[arg(long)]
    kube_version: Option<String>,
    /// Extra API versions for `.Capabilities.APIVersions`; repeatable.
    #[arg(short = 'a', long = "api-versions")]
    api_versions: Vec<String>,
    /// Render as an upgrade instead of an install.
    #[arg(long)]
    is_upgrade: bool,
    /// Leave hooks out of the output.
    #[arg(long)]
    no_hooks: bool,
    /// Configuration file naming the backend plugins. Without one, the backend is the
    /// component installed beside the binary (`$CAPSTAN_PLUGINS_DIR`,
    /// `<prefix>/lib/capstan/plugins`, `/usr/lib/capstan/plugins`, or a checkout's
    /// `target/plugins`).
    #[arg(long, env = "CAPSTAN_CONFIG")]
    config: Option<PathBuf>,
    /// Backend plugin (default: the configuration's default backend, else `helm3`).
    #[arg(long)]
    backend: Option<String>,
    /// Folder for compiled components (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
struct SourceArgs {
    /// HelmRelease YAML file (`spec.chart.git`/`ref`/`path`, `spec.chart.repository`/
    /// `name`/`version`, or `spec.chart.source` with a `kind` and `spec`).
    file: PathBuf,
    /// Configuration file naming the source plugin.
    #[arg(long, env = "CAPSTAN_CONFIG")]
    config: PathBuf,
    /// Folder for git mirrors and artifacts (default: `$XDG_CACHE_HOME/capstan`).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum SourceCommand {
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
enum PluginCommand {
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
        /// Rust: take the SDK from this local `plugins/lib/sdk` instead of git.
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

/// A refusal of the user's chart or values by `capstan template`, printed as Helm prints it
/// (`Error: library charts are not installable`), so scripts that read `helm template`'s
/// errors read ours.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct HelmStyleError(String);

fn main() -> std::process::ExitCode {
    // Fault-injection points of the crash tests, from `FAILPOINTS` (inert without the
    // `failpoints` feature).
    let _failpoints = fail::FailScenario::setup();
    match run_cli() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            match error.downcast_ref::<HelmStyleError>() {
                Some(helm_style) => eprintln!("Error: {helm_style}"),
                None => eprintln!("error: {error:#}"),
            }
            std::process::ExitCode::FAILURE
        }
    }
}

impl Command {
    /// Whether this command may fetch from a git server (the operator, and source
    /// resolution through any plugin, which can ask the host for a git mirror).
    fn may_fetch_git(&self) -> bool {
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

fn run_cli() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Only the commands that can fetch git repositories touch libgit2: its initialisation
    // loads the system's CA certificates through OpenSSL, which was ~70 ms (a sixth) of a
    // `capstan template` run that never uses git.
    if cli.command.may_fetch_git() {
        // SAFETY: no other thread exists yet (the async runtime is built below).
        unsafe { capstan::sources::mirrors::set_network_timeouts(GIT_NETWORK_TIMEOUT) };
    }
    // `capstan template` prints what `helm template` prints: the manifests, or the error.
    // Plugin-call warnings would only repeat that error; RUST_LOG still shows them.
    let default_level = match cli.command {
        Command::Template(_) => "error",
        _ => "info",
    };
    telemetry::init_logging(cli.log_format, default_level);
    // `template` makes one plugin call at a time and waits on nothing else: one thread
    // serves it (worker threads it would never use cost their start-up).
    let runtime = match cli.command {
        Command::Template(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .context("cannot start the async runtime")?;
    match cli.command {
        Command::Run {
            config,
            metrics_address,
            operator,
        } => {
            let outcome = runtime.block_on(run(config, metrics_address, operator));
            // A git fetch stuck in libgit2 runs on a blocking thread that cannot be
            // cancelled; do not wait for it once the operator has stopped.
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
            outcome
        }
        Command::Convert { file } => convert(&file),
        Command::Crd => {
            print!(
                "{}",
                capstan::api::crd_yaml().context("cannot encode the CRD")?
            );
            Ok(())
        }
        Command::Plugin {
            command: PluginCommand::Inspect { file },
        } => runtime.block_on(inspect_plugin(&file)),
        Command::Plugin {
            command:
                PluginCommand::New {
                    lang,
                    name,
                    dir,
                    sdk_path,
                },
        } => new_plugin(lang, &name, dir, sdk_path),
        Command::Plugin {
            command:
                PluginCommand::Run {
                    file,
                    kind,
                    spec,
                    secrets,
                    legacy_kinds,
                    output,
                },
        } => runtime.block_on(run_plugin(
            &file,
            &kind,
            &spec,
            &secrets,
            legacy_kinds,
            output,
        )),
        Command::Plugin {
            command: PluginCommand::Compile { config },
        } => compile_plugins(&config),
        Command::Source {
            command: SourceCommand::Resolve(args),
        } => runtime.block_on(source(args, None)),
        Command::Source {
            command:
                SourceCommand::Fetch {
                    source: args,
                    output,
                },
        } => runtime.block_on(source(args, Some(output))),
        Command::Template(args) => {
            let outcome = runtime.block_on(template(args));
            // Nothing runs on the workers after the render: do not wait for them to stop.
            runtime.shutdown_background();
            outcome
        }
        Command::Release { backend, command } => runtime.block_on(release(backend, command)),
    }
}

/// Load the configured backend component named by `--backend` (or the default one).
fn load_backend(
    config: &std::path::Path,
    backend: Option<String>,
    cache_dir: Option<PathBuf>,
    preemption: plugins::Preemption,
) -> anyhow::Result<(PluginRuntime, String)> {
    load_backend_with(config, backend, cache_dir, preemption, |_| {})
}

/// [`load_backend`], with `adjust` applied to the backend's configuration entry first.
fn load_backend_with(
    config: &std::path::Path,
    backend: Option<String>,
    cache_dir: Option<PathBuf>,
    preemption: plugins::Preemption,
    adjust: impl FnOnce(&mut capstan::config::PluginConfig),
) -> anyhow::Result<(PluginRuntime, String)> {
    let config_file = Config::load(config)?;
    let backend_name = backend
        .or_else(|| config_file.backends.default.clone())
        .unwrap_or_else(|| "helm3".to_owned());
    let entry = config_file
        .plugins
        .iter()
        .find(|p| p.name == backend_name)
        .with_context(|| {
            format!(
                "{} configures no plugin named `{backend_name}`",
                config.display()
            )
        })?;
    let mut entry = entry.clone();
    adjust(&mut entry);
    let runtime = load_plugin(&entry, cache_dir, preemption)?;
    Ok((runtime, backend_name))
}

/// A runtime with the one plugin `entry`, its compiled form cached under `cache_dir`
/// (default: `$XDG_CACHE_HOME/capstan`). Commands that change a cluster keep epoch
/// preemption (a call past its deadline fails as a call, not by ending the process);
/// `template` takes the watchdog (see [`plugins::Preemption`]).
fn load_plugin(
    entry: &capstan::config::PluginConfig,
    cache_dir: Option<PathBuf>,
    preemption: plugins::Preemption,
) -> anyhow::Result<PluginRuntime> {
    let cache = cache_dir
        .or_else(|| {
            CompiledCache::default_dir()
                .parent()
                .map(std::path::Path::to_path_buf)
        })
        .context("no cache folder: pass --cache-dir")?;
    let mut runtime = match preemption {
        plugins::Preemption::Epoch => PluginRuntime::with_call_slots(
            cache.join("components"),
            None,
            plugins::COMMAND_CALL_SLOTS,
        )?,
        plugins::Preemption::Watchdog => PluginRuntime::one_shot(cache.join("components"))?,
    };
    runtime.load(entry)?;
    Ok(runtime)
}

async fn release(args: BackendArgs, command: ReleaseCommand) -> anyhow::Result<()> {
    let config = args
        .config
        .context("no configuration: pass --config or set CAPSTAN_CONFIG")?;
    let (runtime, name) = match &command {
        // The Helm 3 backend moves Tiller's records on its first read of the release when
        // told to, and needs Tiller's namespace for it.
        ReleaseCommand::Migrate(a) => load_backend_with(
            &config,
            a.to.clone().or(args.backend),
            args.cache_dir,
            plugins::Preemption::Epoch,
            |entry| {
                let env = &mut entry.wasi.env;
                env.insert("CAPSTAN_IMPORT_HELM2".into(), a.import_mode().into());
                env.insert("TILLER_NAMESPACE".into(), a.tiller_namespace.clone());
                if !entry.storage_namespaces.contains(&a.tiller_namespace) {
                    entry.storage_namespaces.push(a.tiller_namespace.clone());
                }
            },
        )?,
        _ => load_backend(
            &config,
            args.backend,
            args.cache_dir,
            plugins::Preemption::Epoch,
        )?,
    };
    let backend = runtime.backend(&name)?;
    match command {
        ReleaseCommand::Sync(a) => capstan::release::sync(&backend, &a).await,
        ReleaseCommand::Plan(a) => capstan::release::plan(&backend, &a).await,
        ReleaseCommand::Rollback(a) => capstan::release::rollback(&backend, &a).await,
        ReleaseCommand::Uninstall(a) => capstan::release::uninstall(&backend, &a).await,
        ReleaseCommand::Status(t) => capstan::release::status(&backend, &t).await,
        ReleaseCommand::History(a) => capstan::release::history(&backend, &a).await,
        ReleaseCommand::Migrate(a) => capstan::release::migrate(&backend, &a).await,
    }
}

async fn template(args: TemplateArgs) -> anyhow::Result<()> {
    use capstan::template::{
        ChartReading, ValueFlags, render_chart, request, template_output, value_layers,
    };
    use std::io::Write;

    let values = value_layers(&ValueFlags {
        files: args.values.clone(),
        set_json: args.set_json.clone(),
        set: args.set.clone(),
        set_string: args.set_string.clone(),
        set_literal: args.set_literal.clone(),
    })?;
    let reading = ChartReading::start(&args.chart)?;
    let (runtime, backend_name) = match &args.config {
        Some(config) => load_backend(
            config,
            args.backend.clone(),
            args.cache_dir.clone(),
            plugins::Preemption::Watchdog,
        )?,
        None => {
            let name = args.backend.clone().unwrap_or_else(|| "helm3".to_owned());
            let entry = plugins::installed::backend_beside_binary(&name)?;
            (
                load_plugin(
                    &entry,
                    args.cache_dir.clone(),
                    plugins::Preemption::Watchdog,
                )?,
                name,
            )
        }
    };
    let backend = runtime.backend(&backend_name)?;
    let (release, options) = request(
        &args.name,
        &args.namespace,
        args.kube_version,
        args.api_versions,
        args.is_upgrade,
    );
    let rendered = render_chart(&backend, reading, &release, &values, &options)
        .await?
        .map_err(|error| match error.cause {
            // The chart or values are wrong: say it as `helm template` does, nothing more.
            CallFailure::Returned {
                code: ErrorCode::InvalidInput,
                message,
                ..
            } => anyhow::Error::new(HelmStyleError(message)),
            _ => anyhow::Error::new(error),
        })?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(template_output(&rendered, !args.no_hooks).as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to stdout")?;
    // The process ends next and its memory goes with it: tearing the plugin runtime down
    // first (unmapping the compiled code, the instance pool and its reservations) was
    // 0.6 ms of a 27 ms run (bitnami/wordpress), so it is left to the kernel.
    std::mem::forget((backend, runtime, rendered));
    Ok(())
}

fn convert(file: &std::path::Path) -> anyhow::Result<()> {
    use std::io::Read;
    let mut text = String::new();
    if file == std::path::Path::new("-") {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
    } else {
        text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
    }
    let converted =
        capstan::convert::convert(&text).with_context(|| format!("{}", file.display()))?;
    for (i, document) in converted.iter().enumerate() {
        for note in &document.notes {
            eprintln!("note: {note}");
        }
        if i > 0 {
            println!("---");
        }
        print!("{}", serde_yaml_ng::to_string(&document.release)?);
    }
    Ok(())
}

/// `capstan plugin compile`: load every configured plugin through the compiled cache, one
/// line per plugin; fails when any plugin does not load.
fn compile_plugins(config_path: &std::path::Path) -> anyhow::Result<()> {
    let config = Config::load(config_path)?;
    let cache_dir = config
        .cache_dir
        .clone()
        .unwrap_or_else(CompiledCache::default_dir);
    let mut runtime =
        PluginRuntime::with_call_slots(&cache_dir, None, plugins::COMMAND_CALL_SLOTS)?;
    let report = runtime.load_all(&config.plugins);
    let mut uncached = 0;
    for plugin in &report.loaded {
        let outcome = match plugin.cache_outcome() {
            CacheOutcome::Hit => "already compiled",
            CacheOutcome::Compiled => "compiled",
            CacheOutcome::CompiledUncached => {
                uncached += 1;
                "compiled, NOT written to the cache"
            }
        };
        println!(
            "{}\t{}\t{outcome} in {:.1} ms\t{}",
            plugin.name(),
            plugin.world(),
            plugin.load_time().as_secs_f64() * 1e3,
            plugin.config().path.display()
        );
    }
    for failure in &report.failed {
        eprintln!("error: {failure}");
    }
    if !report.failed.is_empty() {
        bail!(
            "{} of {} plugins did not compile",
            report.failed.len(),
            config.plugins.len()
        );
    }
    if uncached > 0 {
        bail!(
            "{uncached} compiled plugins could not be written to the cache {}",
            cache_dir.display()
        );
    }
    println!("cache: {}", cache_dir.display());
    Ok(())
}

async fn inspect_plugin(file: &std::path::Path) -> anyhow::Result<()> {
    if let Some(metadata_file) = plugins::helm4::metadata_file(file) {
        let metadata = plugins::helm4::metadata::read(&metadata_file)?;
        let runtime = &metadata.runtime;
        println!(
            "helm 4:  {} {} ({} on {}), served as chart source kinds",
            metadata.name,
            metadata.version,
            plugins::helm4::metadata::GETTER_V1,
            plugins::helm4::metadata::EXTISM_V1
        );
        println!(
            "http:    {}",
            if runtime.allowed_hosts.is_empty() {
                "none (allowedHosts is empty)".to_owned()
            } else {
                format!(
                    "{} (responses up to {} bytes)",
                    runtime.allowed_hosts.join(", "),
                    runtime.memory.max_http_response_bytes
                )
            }
        );
        println!(
            "limits:  maxPages {}, timeout {} ms (0: Capstan's limits alone)",
            runtime.memory.max_pages, runtime.timeout
        );
        return print_declared_kinds(file).await;
    }
    let engine = plugins::engine_for(plugins::COMMAND_CALL_SLOTS, plugins::Preemption::Epoch)?;
    let description = plugins::describe_file(&engine, file)?;
    let worlds = description.capstan_worlds();
    if worlds.is_empty() {
        println!("world:   none (exports no capstan:plugin interface)");
    }
    for (world, version) in &worlds {
        let support = if inspect::version_supported(version) {
            "supported"
        } else {
            "not supported by this host"
        };
        println!(
            "world:   {} (capstan:plugin@{version}, {support})",
            world.world_name()
        );
    }
    println!("imports:");
    for name in &description.imports {
        println!("  {name}");
    }
    println!("exports:");
    for name in &description.exports {
        println!("  {name}");
    }
    let serves_sources = worlds.iter().any(|(world, version)| {
        *world == capstan::config::PluginWorld::Source && inspect::version_supported(version)
    });
    if serves_sources {
        print_declared_kinds(file).await?;
    }
    Ok(())
}

/// Load a source component in a scratch runtime and print what its `describe` declares.
async fn print_declared_kinds(file: &std::path::Path) -> anyhow::Result<()> {
    let scratch = tempfile_dir()?;
    let mut runtime = PluginRuntime::with_call_slots(
        scratch.join("components"),
        None,
        plugins::COMMAND_CALL_SLOTS,
    )?;
    let entry = capstan::config::PluginConfig {
        name: file
            .file_stem()
            .map_or_else(|| "plugin".into(), |s| s.to_string_lossy().into_owned()),
        world: capstan::config::PluginWorld::Source,
        path: file.to_path_buf(),
        limits: capstan::config::PluginLimits::default(),
        wasi: capstan::config::WasiGrants::default(),
        kinds: Vec::new(),
        allowed_hosts: None,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    };
    let loaded = runtime.load(&entry)?;
    if plugins::helm4::metadata_file(file).is_some() {
        println!("imports:");
        for name in &loaded.description().imports {
            println!("  {name}");
        }
    }
    let kinds = runtime
        .source(&entry.name)?
        .declared_kinds()
        .await
        .map_err(anyhow::Error::msg)?;
    println!("source kinds:");
    for kind in kinds {
        println!("  {}: {}", kind.name, kind.summary);
        let capabilities = &kind.capabilities;
        if let Some(field) = &capabilities.git_url_field {
            println!("    git mirror of: spec{field}");
        }
        for access in &capabilities.http {
            let mut line = format!("    http to the origin of: spec{}", access.url_field);
            if let Some(insecure) = &access.insecure_field {
                line.push_str(&format!(" (plain http when spec{insecure} is true)"));
            }
            if access.send_credentials {
                line.push_str(", with the Secret's username/password");
            }
            if let Some(document) = &access.shared_document {
                line.push_str(&format!(", shared document `{document}`"));
            }
            println!("{line}");
        }
        if !capabilities.secret_keys.is_empty() {
            println!("    secret keys: {}", capabilities.secret_keys.join(", "));
        }
        let schema = serde_json::to_string_pretty(&kind.schema)?;
        println!("    spec schema:");
        for line in schema.lines() {
            println!("      {line}");
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    Ok(())
}

fn new_plugin(
    lang: capstan::scaffold::Language,
    name: &str,
    dir: Option<PathBuf>,
    sdk_path: Option<PathBuf>,
) -> anyhow::Result<()> {
    use capstan::scaffold::{SdkSource, new_plugin};
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let sdk = match sdk_path {
        Some(path) => SdkSource::Path(
            std::fs::canonicalize(&path)
                .with_context(|| format!("--sdk-path {}", path.display()))?,
        ),
        None => SdkSource::Git {
            url: env!("CARGO_PKG_REPOSITORY").to_owned(),
            tag: Some(format!("v{}", env!("CARGO_PKG_VERSION"))),
        },
    };
    let files = new_plugin(lang, name, &dir, &sdk)?;
    for file in &files {
        println!("wrote {}", file.display());
    }
    match lang {
        capstan::scaffold::Language::Rust => println!(
            "build: (cd {} && cargo build --target wasm32-wasip2 --release)",
            dir.display()
        ),
        capstan::scaffold::Language::Python => println!(
            "build: {}/build.sh {name}.wasm (needs python3; installs componentize-py in a venv)",
            dir.display()
        ),
    }
    Ok(())
}

/// `capstan plugin run`: one source spec through a component with the host's real
/// capabilities, without a cluster.
async fn run_plugin(
    file: &std::path::Path,
    kind: &str,
    spec: &str,
    secrets: &[String],
    legacy_kinds: Vec<String>,
    output: Option<PathBuf>,
) -> anyhow::Result<()> {
    use capstan::sources::artifacts::ArtifactStore;
    use capstan::sources::mirrors::MirrorStore;
    use capstan::sources::spec::KnownCredentials;
    use capstan::sources::sync::{HttpOptions, SourceSync, SourceSyncOptions};
    use capstan::sources::{ReleaseKey, SecretRef, SourceSpec};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    let spec: serde_json::Value = serde_json::from_str(spec).context("--spec is not JSON")?;
    let scratch = tempfile_dir()?;
    let mut runtime = PluginRuntime::with_call_slots(
        scratch.join("components"),
        None,
        plugins::COMMAND_CALL_SLOTS,
    )?;
    // A command the user runs on their own machine, with their own network rights.
    runtime.set_egress(Arc::new(
        capstan::capabilities::egress::EgressPolicy::unrestricted(),
    ));
    let entry = capstan::config::PluginConfig {
        name: "plugin".into(),
        world: capstan::config::PluginWorld::Source,
        path: file.to_path_buf(),
        limits: capstan::config::PluginLimits::default(),
        wasi: capstan::config::WasiGrants::default(),
        kinds: legacy_kinds,
        allowed_hosts: None,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    };
    runtime.load(&entry)?;
    let (catalog, failures) =
        capstan::sources::catalog::describe_all(vec![runtime.source("plugin")?], &BTreeMap::new())
            .await;
    if let Some(failure) = failures.first() {
        bail!("{failure}");
    }
    let mut credentials = KnownCredentials::default();
    let secret = (!secrets.is_empty()).then(|| SecretRef {
        namespace: "local".into(),
        name: "credentials".into(),
    });
    if let Some(secret) = &secret {
        let mut data = BTreeMap::new();
        for pair in secrets {
            let (key, value) = pair
                .split_once('=')
                .with_context(|| format!("--secret {pair:?}: expected key=value"))?;
            data.insert(key.to_owned(), value.as_bytes().to_vec());
        }
        credentials.0.insert(secret.clone(), Ok(data));
    }
    let artifacts = Arc::new(ArtifactStore::open(scratch.join("artifacts"), 1 << 30)?);
    let sync = SourceSync::new(
        SourceSyncOptions {
            interval: Duration::from_secs(60),
            grace: Duration::from_secs(60),
            parallelism: 1,
        },
        Arc::new(MirrorStore::new(
            scratch.join("mirrors"),
            Duration::from_secs(120),
        )),
        Arc::clone(&artifacts),
        Arc::new(catalog?),
        None,
    )
    // A command the user runs on their own machine, with their own network rights.
    .with_http(HttpOptions {
        egress: Arc::new(capstan::capabilities::egress::EgressPolicy::unrestricted()),
        ..HttpOptions::default()
    });
    let release = ReleaseKey {
        namespace: "local".into(),
        name: "run".into(),
    };
    let specs = BTreeMap::from([(release.clone(), SourceSpec::new(kind, &spec, secret))]);
    let mut report = sync.pass_until_decided(&specs, &credentials).await;
    let result = report
        .releases
        .remove(&release)
        .context("the source was not resolved")?;
    let outcome = match result {
        Ok(artifact) => {
            println!("revision: {}", artifact.revision);
            println!("chart:    {} {}", artifact.chart, artifact.version);
            println!("digest:   {}", artifact.digest);
            println!("calls:    {}", report.plugin_calls);
            if let Some(output) = &output {
                std::fs::write(output, artifacts.get(&artifact.digest)?)
                    .with_context(|| format!("cannot write {}", output.display()))?;
                println!("written:  {}", output.display());
            }
            Ok(())
        }
        Err(error) => Err(anyhow::Error::new(error)),
    };
    std::fs::remove_dir_all(&scratch).ok();
    outcome
}

/// A fresh scratch folder under the system's temporary folder.
fn tempfile_dir() -> anyhow::Result<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("capstan-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Every loaded source plugin of the configuration, asked what it serves.
async fn source_catalog(
    config: &Config,
    runtime: &PluginRuntime,
) -> anyhow::Result<capstan::sources::catalog::SourceCatalog> {
    let sources: Vec<_> = config
        .plugins
        .iter()
        .filter(|p| p.world == capstan::config::PluginWorld::Source)
        .collect();
    let handles = sources
        .iter()
        .filter_map(|entry| runtime.source(&entry.name).ok())
        .collect();
    let (catalog, failures) =
        capstan::sources::catalog::describe_all(handles, &config.sources.kinds).await;
    for failure in failures {
        tracing::error!(error = %failure, "source plugin left out");
    }
    let catalog = catalog?;
    for kind in catalog.kinds() {
        tracing::info!(kind = %kind.declared.name, plugin = %kind.plugin.name(), "source kind served");
    }
    Ok(catalog)
}

async fn source(args: SourceArgs, output: Option<PathBuf>) -> anyhow::Result<()> {
    use capstan::sources::artifacts::ArtifactStore;
    use capstan::sources::mirrors::MirrorStore;
    use capstan::sources::spec::{KnownCredentials, source_of_document};
    use capstan::sources::sync::{HttpOptions, SourceSync, SourceSyncOptions};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    let document = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let (release, chart_source) = source_of_document(&document, &args.file)?;
    let config = Config::load(&args.config)?;
    let cache = args
        .cache_dir
        .or_else(|| {
            CompiledCache::default_dir()
                .parent()
                .map(std::path::Path::to_path_buf)
        })
        .context("no cache folder: pass --cache-dir")?;
    let mut runtime = PluginRuntime::with_call_slots(
        cache.join("components"),
        None,
        plugins::COMMAND_CALL_SLOTS,
    )?;
    runtime.set_egress(Arc::new(
        config.sources.egress.policy().map_err(anyhow::Error::msg)?,
    ));
    runtime.set_memory_budget_mib(config.plugin_memory_budget_mib);
    let sources: Vec<_> = config
        .plugins
        .iter()
        .filter(|p| p.world == capstan::config::PluginWorld::Source)
        .cloned()
        .collect();
    for failure in runtime.load_all(&sources).failed {
        tracing::error!(error = %failure, "source plugin not loaded");
    }
    let catalog = source_catalog(&config, &runtime).await?;

    let mut credentials = KnownCredentials::default();
    if let Some(secret_ref) = chart_source.credentials() {
        let client = kube::Client::try_default()
            .await
            .context("the source needs a Secret: cannot connect to the cluster")?;
        let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(client, &secret_ref.namespace);
        match secrets.get_opt(&secret_ref.name).await {
            Ok(Some(secret)) => credentials.insert_secret(secret_ref.clone(), &secret),
            Ok(None) => credentials.insert_error(secret_ref.clone(), "not found".to_owned()),
            Err(error) => credentials.insert_error(secret_ref.clone(), error.to_string()),
        }
    }

    let mirrors = Arc::new(MirrorStore::new(
        cache.join("mirrors"),
        Duration::from_secs(120),
    ));
    let artifacts = Arc::new(ArtifactStore::open(cache.join("artifacts"), 1 << 30)?);
    let options = SourceSyncOptions {
        interval: Duration::from_secs(60),
        grace: Duration::from_secs(3600),
        parallelism: 1,
    };
    let sync = SourceSync::new(
        options,
        mirrors,
        Arc::clone(&artifacts),
        Arc::new(catalog),
        None,
    )
    .with_http(HttpOptions::from_config(&config.sources));
    let specs = BTreeMap::from([(release.clone(), chart_source)]);
    let mut report = sync.pass_until_decided(&specs, &credentials).await;
    let artifact = report
        .releases
        .remove(&release)
        .context("the release was not resolved")??;
    println!("release:  {release}");
    println!("revision: {}", artifact.revision);
    println!("chart:    {} {}", artifact.chart, artifact.version);
    println!("digest:   {}", artifact.digest);
    if let Some(output) = output {
        let bytes = artifacts.get(&artifact.digest)?;
        std::fs::write(&output, bytes)
            .with_context(|| format!("cannot write {}", output.display()))?;
        println!("written:  {}", output.display());
    }
    Ok(())
}

async fn run(
    config_path: PathBuf,
    metrics_address: SocketAddr,
    operator: OperatorArgs,
) -> anyhow::Result<()> {
    let config = Config::load(&config_path)?;
    // The operator keeps running: it keeps what it observed of a locked release's Lease
    // between attempts instead of watching it within one.
    capstan::release_lock::judge_expiry_by_observation();
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = PluginMetrics::register(&mut registry);
    let cache_dir = config
        .cache_dir
        .clone()
        .unwrap_or_else(CompiledCache::default_dir);
    let mut runtime = PluginRuntime::new(&cache_dir, Some(metrics.clone()))?;
    runtime.set_egress(std::sync::Arc::new(
        config.sources.egress.policy().map_err(anyhow::Error::msg)?,
    ));
    runtime.set_memory_budget_mib(config.plugin_memory_budget_mib);
    let report = runtime.load_all(&config.plugins);
    for plugin in &report.loaded {
        tracing::info!(
            plugin = plugin.name(),
            world = %plugin.world(),
            wit = plugin.wit_version(),
            cached = plugin.cache_outcome() == CacheOutcome::Hit,
            load_ms = plugin.load_time().as_secs_f64() * 1e3,
            path = %plugin.config().path.display(),
            "plugin loaded"
        );
    }
    for failure in &report.failed {
        tracing::error!("{failure}");
    }
    let from_cache = report
        .loaded
        .iter()
        .filter(|p| p.cache_outcome() == CacheOutcome::Hit)
        .count();
    metrics.set_loaded(report.loaded.len(), report.failed.len());
    tracing::info!(
        loaded = report.loaded.len(),
        failed = report.failed.len(),
        from_cache,
        elapsed_ms = report.elapsed.as_secs_f64() * 1e3,
        cache = %cache_dir.display(),
        "loaded {} of {} plugins in {:.1} ms ({from_cache} from the compiled cache)",
        report.loaded.len(),
        config.plugins.len(),
        report.elapsed.as_secs_f64() * 1e3,
    );
    if report.loaded.is_empty() && !config.plugins.is_empty() {
        bail!(
            "none of the {} configured plugins could be loaded",
            config.plugins.len()
        );
    }

    let kube_config = kube::Config::infer()
        .await
        .context("cannot connect to the cluster (KUBECONFIG or in-cluster config)")?;
    let client = kube::Client::try_from(kube_config.clone())
        .context("cannot connect to the cluster (KUBECONFIG or in-cluster config)")?;
    let version = client
        .apiserver_version()
        .await
        .context("cannot reach the API server")?;
    tracing::info!(server = %version.git_version, "connected to the cluster");

    let catalog = source_catalog(&config, &runtime).await?;
    let operator_parts = operator_parts(
        &config,
        &runtime,
        catalog,
        &cache_dir,
        &operator,
        &mut registry,
    )?;
    let identities = capstan::controller::identity::Identities::new(
        kube_config,
        config.default_service_account.clone(),
    );
    let health = Health::new(registry);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let server = {
        let health = health.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            health
                .serve(metrics_address, async move {
                    let _ = stop.wait_for(|stop| *stop).await;
                })
                .await
        })
    };
    health.set_ready(true);
    let (reload_tx, reload_rx) = tokio::sync::mpsc::unbounded_channel();
    if operator.config_poll_interval > 0 {
        let mut reloader = capstan::controller::reload::Reloader::new(
            config_path.clone(),
            config.clone(),
            std::sync::Arc::new(std::sync::Mutex::new(runtime)),
            std::sync::Arc::clone(&operator_parts.backends),
            reload_tx,
        )
        .with_metrics(std::sync::Arc::clone(&operator_parts.reload_metrics))
        .with_sources(std::sync::Arc::clone(&operator_parts.source_sync));
        if let (Ok(pod), Ok(namespace)) =
            (std::env::var("POD_NAME"), std::env::var("POD_NAMESPACE"))
        {
            let recorder = kube::runtime::events::Recorder::new(
                client.clone(),
                capstan::controller::run::reporter(),
            );
            reloader = reloader.with_events(
                recorder,
                k8s_openapi::api::core::v1::ObjectReference {
                    api_version: Some("v1".into()),
                    kind: Some("Pod".into()),
                    name: Some(pod),
                    namespace: Some(namespace),
                    ..Default::default()
                },
            );
        }
        let interval = std::time::Duration::from_secs(operator.config_poll_interval);
        tokio::spawn(reloader.run(interval, stop_rx.clone()));
    }
    let in_flight = operator_parts.metrics.in_flight.clone();
    let operate = operate(
        client,
        identities,
        operator_parts,
        &operator,
        reload_rx,
        stop_rx.clone(),
    );
    tokio::pin!(operate);
    let outcome = tokio::select! {
        outcome = &mut operate => outcome,
        _ = shutdown_signal() => {
            let grace = std::time::Duration::from_secs(operator.shutdown_grace);
            tracing::info!(
                grace_s = grace.as_secs(),
                "shutting down: in-flight reconciles finish first"
            );
            let _ = stop_tx.send(true);
            // Bounded: a reconcile stuck on the cluster must not keep the process alive
            // past its grace (the kubelet would SIGKILL it anyway, without these logs).
            match tokio::time::timeout(grace, operate).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    tracing::warn!(
                        in_flight = in_flight.get(),
                        "in-flight work did not finish within {} s; exiting",
                        grace.as_secs()
                    );
                    Ok(())
                }
            }
        }
    };
    health.set_ready(false);
    let _ = stop_tx.send(true);
    match tokio::time::timeout(std::time::Duration::from_secs(5), server).await {
        Ok(served) => served
            .context("metrics server task failed")?
            .context("metrics server failed")?,
        Err(_) => tracing::warn!("the metrics server did not stop within 5 s; exiting"),
    }
    outcome
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops capstan");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// What the operator loops need, prepared before the cluster connection is used.
struct OperatorParts {
    backends: std::sync::Arc<capstan::controller::backends::Backends>,
    reload_metrics: std::sync::Arc<capstan::controller::reload::ReloadMetrics>,
    source_sync: std::sync::Arc<capstan::sources::sync::SourceSync>,
    artifact_store: std::sync::Arc<capstan::sources::artifacts::ArtifactStore>,
    metrics: std::sync::Arc<capstan::controller::metrics::ReleaseMetrics>,
    /// The configuration's `allowCrossNamespaceRefs`.
    allow_cross_namespace_refs: bool,
    /// The configuration's `sources.egress`, for values URLs too.
    egress: std::sync::Arc<capstan::capabilities::egress::EgressPolicy>,
}

fn operator_parts(
    config: &Config,
    runtime: &PluginRuntime,
    catalog: capstan::sources::catalog::SourceCatalog,
    cache_dir: &std::path::Path,
    operator: &OperatorArgs,
    registry: &mut prometheus_client::registry::Registry,
) -> anyhow::Result<OperatorParts> {
    use capstan::sources::artifacts::ArtifactStore;
    use capstan::sources::mirrors::MirrorStore;
    use capstan::sources::sync::{HttpOptions, SourceSync, SourceSyncOptions};
    use std::sync::Arc;
    use std::time::Duration;

    // The backends and post-renderers releases may name, by configured name.
    let mut plugins = std::collections::BTreeMap::new();
    let mut post_renderers = std::collections::BTreeMap::new();
    for entry in &config.plugins {
        match entry.world {
            capstan::config::PluginWorld::Backend => {
                if let Ok(backend) = runtime.backend(&entry.name) {
                    plugins.insert(entry.name.clone(), Arc::new(backend));
                }
            }
            capstan::config::PluginWorld::PostRenderer => {
                if let Ok(renderer) = runtime.post_renderer(&entry.name) {
                    post_renderers.insert(entry.name.clone(), Arc::new(renderer));
                }
            }
            capstan::config::PluginWorld::Source => {}
        }
    }
    let backends = Arc::new(capstan::controller::backends::Backends::new(
        capstan::controller::backends::BackendSet {
            plugins,
            selection: config.backends.clone(),
            post_renderers,
        },
    ));
    let data_dir = cache_dir.join("data");
    let mirrors = Arc::new(MirrorStore::new(
        data_dir.join("mirrors"),
        Duration::from_secs(120),
    ));
    let artifact_store = Arc::new(ArtifactStore::open(data_dir.join("artifacts"), 4 << 30)?);
    let source_metrics = capstan::telemetry::SourceMetrics::register(registry);
    let source_sync = SourceSync::new(
        SourceSyncOptions {
            interval: Duration::from_secs(operator.source_interval.max(1)),
            grace: Duration::from_secs(operator.source_grace),
            parallelism: 4,
        },
        mirrors,
        Arc::clone(&artifact_store),
        Arc::new(catalog),
        Some(source_metrics),
    )
    .with_http(HttpOptions::from_config(&config.sources));
    Ok(OperatorParts {
        backends,
        reload_metrics: capstan::controller::reload::ReloadMetrics::register(registry),
        source_sync: Arc::new(source_sync),
        artifact_store,
        metrics: capstan::controller::metrics::ReleaseMetrics::register(registry),
        allow_cross_namespace_refs: config.allow_cross_namespace_refs,
        egress: Arc::new(config.sources.egress.policy().map_err(anyhow::Error::msg)?),
    })
}

/// Run the HelmRelease loops (after winning the leader Lease when asked) until `stop`.
async fn operate(
    client: kube::Client,
    identities: capstan::controller::identity::Identities,
    parts: OperatorParts,
    operator: &OperatorArgs,
    reloads: tokio::sync::mpsc::UnboundedReceiver<()>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    use capstan::controller::context::{Context, ControllerOptions};
    use capstan::controller::leader::{LeaderElection, LeaseOptions};
    use capstan::controller::run as controller;
    use std::sync::Arc;
    use std::time::Duration;

    let election = operator.leader_election.then(|| {
        let identity =
            std::env::var("POD_NAME").unwrap_or_else(|_| format!("capstan-{}", std::process::id()));
        LeaderElection::observing(
            client.clone(),
            LeaseOptions {
                namespace: operator.lease_namespace.clone(),
                name: operator.lease_name.clone(),
                identity,
                duration: Duration::from_secs(15),
            },
        )
    });
    if let Some(election) = &election {
        tracing::info!(lease = %operator.lease_name, "waiting to become the leader");
        if !election.acquire(&mut stop).await {
            return Ok(());
        }
        tracing::info!(lease = %operator.lease_name, "became the leader");
    }
    let ctx = Context {
        recorder: kube::runtime::events::Recorder::new(client.clone(), controller::reporter()),
        client,
        backends: Arc::clone(&parts.backends),
        artifacts: Arc::new(capstan::controller::sourcing::Artifacts::default()),
        artifact_store: parts.artifact_store,
        metrics: parts.metrics,
        discovery: Arc::new(capstan::capabilities::kube::DiscoveryCache::default()),
        cluster_kinds: operator.cluster_kinds.clone(),
        claims: Default::default(),
        identities,
        dependencies: Default::default(),
        remotes: Default::default(),
        values_egress: parts.egress.clone(),
        drift_schedule: Default::default(),
        options: ControllerOptions {
            resync: Duration::from_secs(operator.resync_interval.max(1)),
            source_tick: Duration::from_secs(operator.source_interval.clamp(1, 10)),
            concurrency: operator.workers.max(1),
            allow_cross_namespace_refs: parts.allow_cross_namespace_refs,
            uninstall_deadline: (operator.uninstall_deadline > 0)
                .then(|| Duration::from_secs(operator.uninstall_deadline)),
            watch_label_selector: operator
                .watch_label_selector
                .clone()
                .filter(|s| !s.trim().is_empty()),
        },
    };
    tracing::info!(
        backends = ctx.backends.current().plugins.len(),
        "reconciling HelmReleases"
    );
    let loops = controller::run(ctx, parts.source_sync, reloads, stop.clone());
    tokio::pin!(loops);
    let Some(election) = &election else {
        return Ok(loops.await?);
    };
    let mut held = stop.clone();
    tokio::select! {
        result = &mut loops => result?,
        lost = election.hold(&mut held) => {
            if lost {
                anyhow::bail!("lost the leader Lease; exiting so that only one replica acts");
            }
            loops.await?;
        }
    }
    Ok(())
}
