//! `capstan template`: render a chart as `helm template` does, through the backend.

use anyhow::Context;
use capstan::plugins::bindings::types::ErrorCode;
use capstan::plugins::call::CallFailure;
use capstan::plugins::{self};

use crate::cli::TemplateArgs;
use crate::loading::{load_backend, load_plugin};

/// A refusal of the user's chart or values by `capstan template`, printed as Helm prints it
/// (`Error: library charts are not installable`), so scripts that read `helm template`'s
/// errors read ours.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HelmStyleError(String);

pub(crate) async fn template(args: TemplateArgs) -> anyhow::Result<()> {
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
