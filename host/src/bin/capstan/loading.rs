//! Loading one configured plugin for a command (a backend by name, or any entry), with
//! its compiled form cached.

use std::path::PathBuf;

use anyhow::Context;
use capstan::config::Config;
use capstan::plugins::cache::CompiledCache;
use capstan::plugins::{self, PluginRuntime};

/// Load the configured backend component named by `--backend` (or the default one).
pub(crate) fn load_backend(
    config: &std::path::Path,
    backend: Option<String>,
    cache_dir: Option<PathBuf>,
    preemption: plugins::Preemption,
) -> anyhow::Result<(PluginRuntime, String)> {
    load_backend_with(config, backend, cache_dir, preemption, |_| {})
}

/// [`load_backend`], with `adjust` applied to the backend's configuration entry first.
pub(crate) fn load_backend_with(
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
pub(crate) fn load_plugin(
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
    runtime.set_release_lock(std::sync::Arc::new(capstan::release_lock::LeaseLock));
    runtime.load(entry)?;
    Ok(runtime)
}
