//! `capstan plugin`: compile, inspect, scaffold and run plugins.

use std::path::PathBuf;

use anyhow::{Context, bail};
use capstan::config::Config;
use capstan::plugins::cache::{CacheOutcome, CompiledCache};
use capstan::plugins::{self, PluginRuntime, inspect};

/// `capstan plugin compile`: load every configured plugin through the compiled cache, one
/// line per plugin; fails when any plugin does not load.
pub(crate) fn compile_plugins(config_path: &std::path::Path) -> anyhow::Result<()> {
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

pub(crate) async fn inspect_plugin(file: &std::path::Path) -> anyhow::Result<()> {
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
pub(crate) async fn print_declared_kinds(file: &std::path::Path) -> anyhow::Result<()> {
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

pub(crate) fn new_plugin(
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
        None => SdkSource::released(),
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
pub(crate) async fn run_plugin(
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
pub(crate) fn tempfile_dir() -> anyhow::Result<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("capstan-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
