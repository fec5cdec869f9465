//! `capstan release`: install, upgrade, roll back or uninstall one release through a
//! backend plugin, without the operator.

use anyhow::Context;
use capstan::plugins::{self};

use crate::cli::{BackendArgs, ReleaseCommand};
use crate::loading::{load_backend, load_backend_with};

pub(crate) async fn release(args: BackendArgs, command: ReleaseCommand) -> anyhow::Result<()> {
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
