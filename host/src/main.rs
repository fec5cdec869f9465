//! The `capstan` binary: the operator and its command-line tools.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use capstan::config::Config;
use capstan::plugins::cache::{CacheOutcome, CompiledCache};
use capstan::plugins::{self, PluginRuntime, inspect};
use capstan::telemetry::{self, Health, LogFormat, PluginMetrics};
use clap::{Parser, Subcommand};

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
    },
    /// Work with plugin components.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Print a component's world, `capstan:plugin` version, imports and exports.
    Inspect {
        /// The `.wasm` component.
        file: PathBuf,
    },
}

fn main() -> std::process::ExitCode {
    match run_cli() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run_cli() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init_logging(cli.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match cli.command {
        Command::Run {
            config,
            metrics_address,
        } => runtime.block_on(run(config, metrics_address)),
        Command::Plugin {
            command: PluginCommand::Inspect { file },
        } => inspect_plugin(&file),
    }
}

fn inspect_plugin(file: &std::path::Path) -> anyhow::Result<()> {
    let engine = plugins::engine()?;
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
    Ok(())
}

async fn run(config_path: PathBuf, metrics_address: SocketAddr) -> anyhow::Result<()> {
    let config = Config::load(&config_path)?;
    let mut registry = prometheus_client::registry::Registry::with_prefix("");
    let metrics = PluginMetrics::register(&mut registry);
    let cache_dir = config
        .cache_dir
        .clone()
        .unwrap_or_else(CompiledCache::default_dir);
    let mut runtime = PluginRuntime::new(&cache_dir, Some(metrics.clone()))?;
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

    let client = kube::Client::try_default()
        .await
        .context("cannot connect to the cluster (KUBECONFIG or in-cluster config)")?;
    let version = client
        .apiserver_version()
        .await
        .context("cannot reach the API server")?;
    tracing::info!(server = %version.git_version, "connected to the cluster");

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
    tracing::info!("capstan is running; reconcilers arrive in later releases");
    shutdown_signal().await;
    tracing::info!("shutting down");
    health.set_ready(false);
    let _ = stop_tx.send(true);
    server
        .await
        .context("metrics server task failed")?
        .context("metrics server failed")?;
    Ok(())
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
