//! `capstan source`: resolve or fetch a chart source through its plugin, as the operator
//! would.

use std::path::PathBuf;

use anyhow::Context;
use capstan::config::Config;
use capstan::plugins::cache::CompiledCache;
use capstan::plugins::{self, PluginRuntime};

use crate::cli::SourceArgs;

/// Every loaded source plugin of the configuration, asked what it serves.
pub(crate) async fn source_catalog(
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

pub(crate) async fn source(args: SourceArgs, output: Option<PathBuf>) -> anyhow::Result<()> {
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
