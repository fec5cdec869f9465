//! The `capstan` binary: the operator (`capstan run`) and its command-line tools, one
//! module per command.

mod cli;
mod convert;
mod loading;
mod operator;
mod plugin;
mod release;
mod source;
mod template;

use anyhow::Context;
use clap::Parser;

use crate::cli::{Cli, Command, PluginCommand, SourceCommand};
use crate::convert::convert;
use crate::operator::run;
use crate::plugin::{compile_plugins, inspect_plugin, new_plugin, run_plugin};
use crate::release::release;
use crate::source::source;
use crate::template::{HelmStyleError, template};
use capstan::telemetry;

/// How long git may wait to connect to a server, or for any single read from it.
const GIT_NETWORK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

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
