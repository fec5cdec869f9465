//! Loading plugins into a [`PluginRuntime`]: components of the current and previous
//! contracts (compiled through the cache, pre-initialised where they allow it, checked
//! against their configured world) and Helm 4 plugin folders.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use capstan_capabilities::Grants;
use capstan_capabilities::state::{CallData, CallState};
use capstan_wasm_runtime::cache::{self, CacheOutcome};
use capstan_wasm_runtime::preinit::Preparation;
use wasmtime::Engine;

use crate::bindings::backend::BackendPluginPre;
use crate::bindings::source::SourcePluginPre;
use crate::call;
use crate::config::{PluginConfig, PluginWorld};
use crate::error::LoadError;
use crate::inspect::{self, ComponentDescription};
use crate::loaded::{LoadReport, LoadedPlugin, Pre};
use crate::runtime::{PREPARE_EXPORT, PluginRuntime};
use crate::{compat, compat_backend, helm4, installed};

/// The first 8 bytes of the file at `path` (fewer if it is shorter): enough to tell a
/// component from a core module or anything else.
fn file_header(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut header = Vec::with_capacity(8);
    std::fs::File::open(path)?
        .take(8)
        .read_to_end(&mut header)?;
    Ok(header)
}

impl PluginRuntime {
    /// Load every configured plugin. One plugin's failure does not stop the others.
    pub fn load_all(&mut self, configs: &[PluginConfig]) -> LoadReport {
        let started = Instant::now();
        let mut loaded = Vec::new();
        let mut failed = Vec::new();
        for config in configs {
            match self.load(config) {
                Ok(plugin) => loaded.push(plugin),
                Err(error) => failed.push(error),
            }
        }
        LoadReport {
            loaded,
            failed,
            elapsed: started.elapsed(),
        }
    }

    /// Load one plugin (replacing a loaded plugin of the same name).
    pub fn load(&mut self, config: &PluginConfig) -> Result<Arc<LoadedPlugin>, LoadError> {
        let plugin = self.prepare(config)?;
        self.install(Arc::clone(&plugin));
        Ok(plugin)
    }

    /// Load one plugin without making it available under its name yet (see
    /// [`PluginRuntime::install`]): a configuration reload checks every new plugin first.
    pub fn prepare(&self, config: &PluginConfig) -> Result<Arc<LoadedPlugin>, LoadError> {
        let started = Instant::now();
        if let Some(metadata) = helm4::metadata_file(&config.path) {
            return self.prepare_helm4(config, &metadata, started);
        }
        if config.world == PluginWorld::PostRenderer {
            return Err(not_a_helm4_folder(config));
        }
        let name = config.name.clone();
        let path = config.path.clone();
        let expected = format!(
            "{}@{}",
            config.world.export_interface(),
            inspect::CURRENT_VERSIONS
        );
        let read_failed = |cause| LoadError::Read {
            name: name.clone(),
            path: path.clone(),
            cause,
        };
        let stamp_before = cache::FileStamp::of(&path);
        let found =
            inspect::binary_kind(&file_header(&path).map_err(read_failed)?).not_a_component();
        if let Some(found) = found {
            return Err(LoadError::NotComponent {
                name,
                path,
                found,
                expected,
            });
        }
        let remembered = stamp_before
            .as_ref()
            .and_then(|stamp| self.cache.load_remembered(self.calls.engine(), stamp));
        let prepared = std::cell::Cell::new(false);
        let (component, cache) = match remembered {
            Some(component) => (component, CacheOutcome::Hit),
            None => {
                let bytes = std::fs::read(&path).map_err(read_failed)?;
                if let Some(found) = inspect::binary_kind(&bytes).not_a_component() {
                    // Replaced since the header was read.
                    return Err(LoadError::NotComponent {
                        name,
                        path,
                        found,
                        expected,
                    });
                }
                // The file is known unchanged over the read only if its stamp is the same
                // after it.
                let stamp = stamp_before
                    .filter(|before| cache::FileStamp::of(&path).as_ref() == Some(before));
                self.cache
                    .load_stamped(self.calls.engine(), &bytes, stamp.as_ref(), |bytes| {
                        let preparation = Preparation {
                            plugin: Arc::from(config.name.as_str()),
                            limits: call::call_limits(&config.limits),
                            wasi: call::wasi_ctx(&config.wasi),
                            data: CallData::new(Grants::default()),
                        };
                        let copy = capstan_wasm_runtime::preinit::prepared(
                            &self.calls,
                            &self.linker,
                            PREPARE_EXPORT,
                            preparation,
                            bytes,
                        );
                        prepared.set(copy.is_some());
                        copy
                    })
                    .map_err(|e| LoadError::Compile {
                        name: name.clone(),
                        path: path.clone(),
                        message: e.to_string(),
                    })?
            }
        };
        let description = ComponentDescription::of(self.calls.engine(), &component);
        let wit_version = inspect::check_world(&description, config.world).map_err(|mismatch| {
            LoadError::WrongWorld {
                name: name.clone(),
                path: path.clone(),
                world: config.world,
                expected,
                mismatch,
            }
        })?;
        let link_error = |e: wasmtime::Error| LoadError::Link {
            name: name.clone(),
            path: path.clone(),
            message: format!("{e:#}"),
        };
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(link_error)?;
        let contract = inspect::contract_of(&wit_version);
        let previous = |message: String| LoadError::Previous {
            name: name.clone(),
            path: path.clone(),
            version: wit_version.clone(),
            message,
        };
        let pre = match (config.world, contract) {
            (PluginWorld::PostRenderer, _) => return Err(not_a_helm4_folder(config)),
            (PluginWorld::Source, Some(inspect::Contract::Previous)) => {
                if config.kinds.is_empty() {
                    return Err(previous(format!(
                        "0.1 components cannot declare their source kinds: name them in the plugin's `kinds` ({})",
                        compat::V0_1_KINDS.join(" or ")
                    )));
                }
                if let Some(unknown) = config
                    .kinds
                    .iter()
                    .find(|k| !compat::V0_1_KINDS.contains(&k.as_str()))
                {
                    return Err(previous(format!(
                        "kind `{unknown}` cannot be served by a 0.1 component (0.1 knows only {})",
                        compat::V0_1_KINDS.join(" and ")
                    )));
                }
                Pre::SourceV0_1(
                    compat::v0_1::SourcePluginPre::new(instance_pre).map_err(link_error)?,
                    config.kinds.clone(),
                )
            }
            (PluginWorld::Backend, Some(inspect::Contract::Previous))
                if config.kinds.is_empty() =>
            {
                let services = self.prepare_helm_services(config).map_err(previous)?;
                Pre::BackendV0_1(compat_backend::V0_1Backend {
                    backend: compat_backend::v0_1::BackendPluginPre::new(instance_pre)
                        .map_err(link_error)?,
                    services,
                })
            }
            (_, _) if !config.kinds.is_empty() => {
                return Err(previous(
                    "`kinds` is only for 0.1 source components; this component declares its kinds through `describe`".into(),
                ));
            }
            (PluginWorld::Source, _) => {
                Pre::Source(SourcePluginPre::new(instance_pre).map_err(link_error)?)
            }
            (PluginWorld::Backend, _) => {
                Pre::Backend(BackendPluginPre::new(instance_pre).map_err(link_error)?)
            }
        };
        let plugin = Arc::new(LoadedPlugin {
            name: Arc::from(name.as_str()),
            config: config.clone(),
            description,
            wit_version,
            cache,
            prepared: prepared.get(),
            load_time: started.elapsed(),
            pre,
        });
        Ok(plugin)
    }

    /// The `compat-helm` component a 0.1 backend needs (see [`compat_backend`]), compiled
    /// through the cache; `Err` says what is missing or broken.
    fn prepare_helm_services(
        &self,
        config: &PluginConfig,
    ) -> Result<compat_backend::helm_services::HelmServicesProviderPre<CallState>, String> {
        let installed = installed::search_path(
            std::env::current_exe().ok().as_deref(),
            std::env::var(installed::PLUGINS_DIR_ENV).ok().as_deref(),
        );
        let path = compat_backend::helm_services_path(
            config.compat_helm.as_deref(),
            &config.path,
            &installed,
        )
        .map_err(|searched| {
            format!(
                "a 0.1 backend takes values merged and charts packaged by the `compat-helm` component, and none was found (searched {}); set the plugin's `compatHelm` or run `make plugins`",
                searched
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let broken = |e: String| format!("its `compat-helm` component {}: {e}", path.display());
        let bytes = std::fs::read(&path).map_err(|e| broken(e.to_string()))?;
        let (component, _) = self
            .cache
            .load(self.calls.engine(), &bytes)
            .map_err(|e| broken(e.to_string()))?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| broken(format!("{e:#}")))?;
        compat_backend::helm_services::HelmServicesProviderPre::new(pre)
            .map_err(|e| broken(format!("{e:#}")))
    }

    /// Prepare a Helm 4 plugin folder (its `plugin.yaml` is `metadata`).
    fn prepare_helm4(
        &self,
        config: &PluginConfig,
        metadata: &Path,
        started: Instant,
    ) -> Result<Arc<LoadedPlugin>, LoadError> {
        if !config.kinds.is_empty() {
            return Err(LoadError::Helm4 {
                name: config.name.clone(),
                path: metadata.to_owned(),
                message: "`kinds` is only for 0.1 source components; a Helm 4 getter serves the protocols of its plugin.yaml".into(),
            });
        }
        let (plugin, description, cache) = helm4::load(
            self.calls.engine(),
            &self.extism_linker,
            &self.cache,
            config,
            metadata,
            &self.egress,
        )?;
        let wit_version = format!(
            "{} {} ({} {})",
            plugin.metadata.plugin_type,
            helm4::metadata::EXTISM_V1,
            plugin.metadata.name,
            plugin.metadata.version
        );
        let loaded = Arc::new(LoadedPlugin {
            name: Arc::from(config.name.as_str()),
            config: config.clone(),
            description,
            wit_version,
            cache,
            prepared: false,
            load_time: started.elapsed(),
            pre: Pre::Helm4(Arc::new(plugin)),
        });
        Ok(loaded)
    }
}

fn not_a_helm4_folder(config: &PluginConfig) -> LoadError {
    LoadError::Helm4 {
        name: config.name.clone(),
        path: config.path.clone(),
        message: "a `postrenderer` plugin is a Helm 4 plugin folder (`plugin.yaml` of type postrenderer/v1 beside `plugin.wasm`), and there is no plugin.yaml here".into(),
    }
}

/// Describe any component file (for `capstan plugin inspect`), compiling it with `engine`.
pub fn describe_file(engine: &Engine, path: &Path) -> Result<ComponentDescription, LoadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|cause| LoadError::Read {
        name: name.clone(),
        path: path.to_owned(),
        cause,
    })?;
    let found = inspect::binary_kind(&bytes).not_a_component();
    if let Some(found) = found {
        return Err(LoadError::NotComponent {
            name,
            path: path.to_owned(),
            found,
            expected: "any Capstan plugin world".into(),
        });
    }
    let component =
        wasmtime::component::Component::new(engine, &bytes).map_err(|e| LoadError::Compile {
            name,
            path: path.to_owned(),
            message: format!("{e:#}"),
        })?;
    Ok(ComponentDescription::of(engine, &component))
}
