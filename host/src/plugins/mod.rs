//! The plugin runtime: one wasmtime `Engine`, components compiled once and cached on disk,
//! one `InstancePre` per plugin, and a fresh `Store` per call with a memory limit, a
//! deadline and the capabilities granted to that call.

pub mod bindings;
pub mod call;
pub mod compat;
pub mod compat_backend;
pub mod helm4;
pub mod inspect;
pub mod installed;

pub use capstan_wasm_runtime::cache;
pub use capstan_wasm_runtime::engine::{EPOCH_TICK, Preemption, RuntimeError, engine_for};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_wasm_runtime::call::CallRuntime;
use capstan_wasm_runtime::memory::MemoryBudget;
use capstan_wasm_runtime::preinit::{Preparation, PrepareExport};
use wasmtime::Engine;
use wasmtime::component::Linker;

use self::bindings::backend::BackendPluginPre;
use self::bindings::backend::exports::capstan::plugin::backend::{
    ChartFile, ChartInput, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest,
    TemplateOptions, UninstallOptions, ValueLayer,
};
use self::bindings::source::SourcePluginPre;
use self::bindings::source::exports::capstan::plugin::source::{
    PluginInfo, Revision, SourceRequest,
};
use self::bindings::types::{ChartArtifact, ReleaseId, ReleaseInfo};
use self::cache::{CacheOutcome, CompiledCache};
use self::call::{CallError, CallFailure};
use self::inspect::{ComponentDescription, WorldMismatch};
use crate::capabilities::Grants;
use crate::capabilities::state::{CallData, CallState};
use crate::config::{PluginConfig, PluginWorld};
use crate::telemetry::PluginMetrics;

/// `folder-template`'s `unread-file` record (the host's bindings are generated for the
/// `backend-plugin` world, which does not name the optional exports' types).
#[derive(wasmtime::component::ComponentType, wasmtime::component::Lower, Clone, Debug)]
#[component(record)]
pub struct UnreadFile {
    /// Path relative to the chart folder, `/`-separated.
    pub path: String,
    /// Size in bytes when listed.
    pub size: u64,
}

/// Most plugin calls in flight at once; further calls wait for a slot. Sized with the
/// pooling allocator below, which preallocates this many instance slots.
pub const MAX_CONCURRENT_CALLS: u32 = 256;

/// Calls in flight a one-shot command (`template`, `release`, `source fetch`, ...) allows:
/// a call and the few nested ones it may start (post-renderers, `compat-helm`).
pub const COMMAND_CALL_SLOTS: u32 = 8;

/// Default of the memory all plugin calls in flight may hold together, in MiB.
pub const DEFAULT_MEMORY_BUDGET_MIB: usize = 2048;

/// The export a component pre-initialises itself with (see
/// [`capstan_wasm_runtime::preinit`]).
const PREPARE_EXPORT: PrepareExport<'static> = PrepareExport {
    interface: "capstan:plugin/prepare@0.2.0",
    function: "prepare",
};

/// Why one plugin could not be loaded. Each names the plugin and its file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("plugin `{name}`: cannot read {path}: {cause}")]
    Read {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// I/O error.
        cause: std::io::Error,
    },
    /// The file is not a WebAssembly component.
    #[error(
        "plugin `{name}`: {path} is not a WebAssembly component ({found}); expected a component exporting {expected}"
    )]
    NotComponent {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// What the file is instead.
        found: &'static str,
        /// The export that was expected.
        expected: String,
    },
    /// Cranelift could not compile the component.
    #[error("plugin `{name}`: cannot compile {path}: {message}")]
    Compile {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Compiler error.
        message: String,
    },
    /// The component does not implement the configured world.
    #[error(
        "plugin `{name}`: {path} is not a `{world}` component: expected an export of {expected}, but {mismatch}"
    )]
    WrongWorld {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Configured world.
        world: PluginWorld,
        /// The export that was expected.
        expected: String,
        /// What was found instead.
        mismatch: WorldMismatch,
    },
    /// A component of the previous contract (0.1) that cannot be adapted as configured.
    #[error("plugin `{name}`: {path} implements capstan:plugin@{version}: {message}")]
    Previous {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Its contract version.
        version: String,
        /// Why it cannot be served, and what to do.
        message: String,
    },
    /// A Helm 4 plugin (`plugin.yaml` + `plugin.wasm`) that cannot be served.
    #[error("plugin `{name}`: {path}: {message}")]
    Helm4 {
        /// Plugin name.
        name: String,
        /// `plugin.yaml` or `plugin.wasm`.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The component imports something this host does not provide, or its exports have
    /// the wrong types.
    #[error("plugin `{name}`: {path} cannot be linked: {message}")]
    Link {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Linker error.
        message: String,
    },
}

enum Pre {
    Source(SourcePluginPre<CallState>),
    /// A `capstan:plugin@0.1` source component, with the kinds its configuration names.
    SourceV0_1(compat::v0_1::SourcePluginPre<CallState>, Vec<String>),
    Backend(BackendPluginPre<CallState>),
    /// A `capstan:plugin@0.1` backend component, with the component doing its Helm work.
    BackendV0_1(compat_backend::V0_1Backend),
    /// A Helm 4 `getter/v1` plugin on the `extism/v1` runtime.
    Helm4(Arc<helm4::Helm4Plugin>),
}

/// A loaded plugin, ready to be called.
pub struct LoadedPlugin {
    name: Arc<str>,
    config: PluginConfig,
    description: ComponentDescription,
    wit_version: String,
    cache: CacheOutcome,
    /// Compiled by this load from a copy pre-initialised by its `prepare` export.
    prepared: bool,
    load_time: Duration,
    pre: Pre,
}

impl LoadedPlugin {
    /// Configured name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// World it implements.
    pub fn world(&self) -> PluginWorld {
        self.config.world
    }
    /// Its configuration entry.
    pub fn config(&self) -> &PluginConfig {
        &self.config
    }
    /// Imports and exports.
    pub fn description(&self) -> &ComponentDescription {
        &self.description
    }
    /// `capstan:plugin` version it was built against.
    pub fn wit_version(&self) -> &str {
        &self.wit_version
    }
    /// Whether it came from the compiled cache.
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache
    }
    /// Whether this load compiled the component from a copy pre-initialised by its
    /// `prepare` export (`preinit.rs`); false when it came from the cache or has none.
    pub fn prepared(&self) -> bool {
        self.prepared
    }
    /// How long loading took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }
}

/// The outcome of loading a whole configuration: what loaded, what did not, how long.
pub struct LoadReport {
    /// Plugins now available.
    pub loaded: Vec<Arc<LoadedPlugin>>,
    /// Plugins that failed, each with its reason.
    pub failed: Vec<LoadError>,
    /// Wall time of the whole load.
    pub elapsed: Duration,
}

/// Looking up a plugin by name and world.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// No plugin of that name is loaded.
    #[error("no plugin named `{0}` is loaded")]
    Unknown(String),
    /// The plugin implements another world.
    #[error("plugin `{name}` is a `{actual}` plugin, not `{wanted}`")]
    WrongWorld {
        /// Plugin name.
        name: String,
        /// Its world.
        actual: PluginWorld,
        /// The world asked for.
        wanted: PluginWorld,
    },
}

/// The engine and every loaded plugin.
pub struct PluginRuntime {
    calls: CallRuntime,
    linker: Linker<CallState>,
    extism_linker: wasmtime::Linker<helm4::kernel::ExtismState>,
    cache: CompiledCache,
    plugins: BTreeMap<String, Arc<LoadedPlugin>>,
    egress: Arc<crate::capabilities::egress::EgressPolicy>,
}

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

/// Build the engine used for plugins by the operator: Cranelift, component model, epoch
/// interruption, [`MAX_CONCURRENT_CALLS`] pooled instance slots.
pub fn engine() -> Result<Engine, RuntimeError> {
    engine_for(MAX_CONCURRENT_CALLS, Preemption::Epoch)
}

fn linker(engine: &Engine) -> Result<Linker<CallState>, RuntimeError> {
    let mut linker = Linker::new(engine);
    crate::capabilities::linker::add_to_linker(&mut linker)
        .map_err(|e| RuntimeError::new(format!("{e:#}")))?;
    Ok(linker)
}

impl PluginRuntime {
    /// A runtime with no plugins, caching compiled components in `cache_dir`, for up to
    /// [`MAX_CONCURRENT_CALLS`] calls at once.
    pub fn new(
        cache_dir: impl Into<PathBuf>,
        metrics: Option<Arc<PluginMetrics>>,
    ) -> Result<Self, RuntimeError> {
        Self::with_call_slots(cache_dir, metrics, MAX_CONCURRENT_CALLS)
    }

    /// [`PluginRuntime::new`] for up to `call_slots` calls at once (further calls wait).
    pub fn with_call_slots(
        cache_dir: impl Into<PathBuf>,
        metrics: Option<Arc<PluginMetrics>>,
        call_slots: u32,
    ) -> Result<Self, RuntimeError> {
        Self::build(cache_dir, metrics, call_slots, Preemption::Epoch)
    }

    /// A runtime for a one-shot command that makes one call at a time and has nothing
    /// else to keep alive (`capstan template`): [`COMMAND_CALL_SLOTS`], and compiled code
    /// without epoch checks; a call still running at its deadline ends the process
    /// ([`Preemption::Watchdog`]).
    pub fn one_shot(cache_dir: impl Into<PathBuf>) -> Result<Self, RuntimeError> {
        Self::build(cache_dir, None, COMMAND_CALL_SLOTS, Preemption::Watchdog)
    }

    fn build(
        cache_dir: impl Into<PathBuf>,
        metrics: Option<Arc<PluginMetrics>>,
        call_slots: u32,
        preemption: Preemption,
    ) -> Result<Self, RuntimeError> {
        let observer = metrics.map(|m| m as Arc<dyn capstan_wasm_runtime::call::CallObserver>);
        let calls = CallRuntime::new(
            call_slots,
            preemption,
            DEFAULT_MEMORY_BUDGET_MIB << 20,
            observer,
        )?;
        let linker = linker(calls.engine())?;
        let extism_linker =
            helm4::linker(calls.engine()).map_err(|e| RuntimeError::new(format!("{e:#}")))?;
        Ok(PluginRuntime {
            calls,
            linker,
            extism_linker,
            cache: CompiledCache::new(cache_dir),
            plugins: BTreeMap::new(),
            egress: Arc::new(crate::capabilities::egress::EgressPolicy::public_only()),
        })
    }

    /// The linear memory all calls in flight may hold together, in MiB (see
    /// [`MemoryBudget`]); applies to calls started afterwards.
    pub fn set_memory_budget_mib(&mut self, mib: usize) {
        self.calls.set_memory_budget(mib << 20);
    }

    /// The shared memory budget.
    pub fn memory_budget(&self) -> &Arc<MemoryBudget> {
        self.calls.memory_budget()
    }

    /// Which addresses plugins that hold their own HTTP grant (Helm 4 getters) may reach;
    /// applies to plugins loaded afterwards. Default: public addresses only.
    pub fn set_egress(&mut self, egress: Arc<crate::capabilities::egress::EgressPolicy>) {
        self.egress = egress;
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        self.calls.engine()
    }

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

    /// Make a prepared plugin available under its name, replacing the plugin of that name;
    /// handles to the replaced one keep working until dropped.
    pub fn install(&mut self, plugin: Arc<LoadedPlugin>) {
        self.plugins.insert(plugin.name().to_owned(), plugin);
    }

    /// The loaded plugin named `name`.
    pub fn plugin(&self, name: &str) -> Option<&Arc<LoadedPlugin>> {
        self.plugins.get(name)
    }

    /// A handle to call backend `plugin` (loaded or only prepared).
    pub fn backend_of(&self, plugin: &Arc<LoadedPlugin>) -> Result<BackendPlugin, LookupError> {
        let handle = self.handle_for(plugin);
        match &plugin.pre {
            Pre::Backend(pre) => Ok(BackendPlugin {
                pre: BackendPre::Current(pre.clone()),
                handle,
            }),
            Pre::BackendV0_1(pre) => Ok(BackendPlugin {
                pre: BackendPre::V0_1(pre.clone()),
                handle,
            }),
            _ => Err(LookupError::WrongWorld {
                name: plugin.name().to_owned(),
                actual: plugin.world(),
                wanted: PluginWorld::Backend,
            }),
        }
    }

    /// The post-renderer `name`.
    pub fn post_renderer(&self, name: &str) -> Result<PostRendererPlugin, LookupError> {
        self.post_renderer_of(self.by_name(name)?)
    }

    /// A handle to run the post-renderer `plugin` (loaded or only prepared).
    pub fn post_renderer_of(
        &self,
        plugin: &Arc<LoadedPlugin>,
    ) -> Result<PostRendererPlugin, LookupError> {
        match &plugin.pre {
            Pre::Helm4(helm4) if plugin.world() == PluginWorld::PostRenderer => {
                Ok(PostRendererPlugin {
                    plugin: Arc::clone(helm4),
                    handle: self.handle_for(plugin),
                })
            }
            _ => Err(LookupError::WrongWorld {
                name: plugin.name().to_owned(),
                actual: plugin.world(),
                wanted: PluginWorld::PostRenderer,
            }),
        }
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

    /// Plugin calls currently holding an instance slot.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.calls_in_flight()
    }

    /// Every loaded plugin, by name.
    pub fn plugins(&self) -> impl Iterator<Item = &Arc<LoadedPlugin>> {
        self.plugins.values()
    }

    /// The loaded plugin named `name`, or why there is none.
    fn by_name(&self, name: &str) -> Result<&Arc<LoadedPlugin>, LookupError> {
        self.plugins
            .get(name)
            .ok_or_else(|| LookupError::Unknown(name.to_owned()))
    }

    /// What every call into `plugin` shares: the engine, its metrics and the call slots.
    fn handle_for(&self, plugin: &Arc<LoadedPlugin>) -> Handle {
        Handle {
            calls: self.calls.clone(),
            plugin: Arc::clone(plugin),
        }
    }

    /// A handle to call the source plugin `name`.
    pub fn source(&self, name: &str) -> Result<SourcePlugin, LookupError> {
        self.source_of(self.by_name(name)?)
    }

    /// A handle to call source `plugin` (loaded or only prepared).
    pub fn source_of(&self, plugin: &Arc<LoadedPlugin>) -> Result<SourcePlugin, LookupError> {
        let handle = self.handle_for(plugin);
        let pre = match &plugin.pre {
            Pre::Source(pre) => SourcePre::Current(pre.clone()),
            Pre::SourceV0_1(pre, kinds) => SourcePre::V0_1(pre.clone(), kinds.clone()),
            Pre::Helm4(helm4) if plugin.world() == PluginWorld::Source => {
                SourcePre::Helm4(Arc::clone(helm4))
            }
            Pre::Helm4(_) | Pre::Backend(_) | Pre::BackendV0_1(_) => {
                return Err(LookupError::WrongWorld {
                    name: plugin.name().to_owned(),
                    actual: plugin.world(),
                    wanted: PluginWorld::Source,
                });
            }
        };
        Ok(SourcePlugin { pre, handle })
    }

    /// A handle to call the backend plugin `name`.
    pub fn backend(&self, name: &str) -> Result<BackendPlugin, LookupError> {
        self.backend_of(self.by_name(name)?)
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

struct Handle {
    calls: CallRuntime,
    plugin: Arc<LoadedPlugin>,
}

impl Handle {
    fn start(
        &self,
        function: &'static str,
        grants: Grants,
    ) -> (
        wasmtime::Store<CallState>,
        capstan_wasm_runtime::call::CallGuard,
    ) {
        let config = &self.plugin.config;
        call::start(
            &self.calls,
            &self.plugin.name,
            function,
            &config.limits,
            &config.wasi,
            grants,
        )
    }
}

/// Calls into one source plugin. Each call runs in a fresh instance.
pub struct SourcePlugin {
    pre: SourcePre,
    handle: Handle,
}

/// A source component of the current contract, or of the previous one with its kinds.
enum SourcePre {
    Current(SourcePluginPre<CallState>),
    V0_1(compat::v0_1::SourcePluginPre<CallState>, Vec<String>),
    Helm4(Arc<helm4::Helm4Plugin>),
}

/// Calls into one backend plugin. Each call runs in a fresh instance.
pub struct BackendPlugin {
    pre: BackendPre,
    handle: Handle,
}

/// A backend component of the current contract, or of the previous one with its adapter.
enum BackendPre {
    Current(BackendPluginPre<CallState>),
    V0_1(compat_backend::V0_1Backend),
}

/// One call: a fresh store, a fresh instance from the plugin's `InstancePre`, the export
/// invoked, all under the call's guard (deadline, memory limit, error reporting).
macro_rules! plugin_call {
    ($self:ident, $function:expr, $grants:ident, |$bindings:ident, $store:ident| $invoke:expr) => {
        plugin_call!(
            $self.handle,
            $self.pre,
            $function,
            $grants,
            |$bindings, $store| $invoke
        )
    };
    ($handle:expr, $pre:expr, $function:expr, $grants:ident, |$bindings:ident, $store:ident| $invoke:expr) => {{
        let pre = $pre.clone();
        let (mut $store, guard) = $handle.start($function, $grants);
        call::run(guard, async move {
            let $bindings = pre.instantiate_async(&mut $store).await?;
            $invoke.await
        })
        .await
    }};
}

impl SourcePlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// `source.describe`, with no capability granted (current components only; see
    /// [`SourcePlugin::declared_kinds`]).
    async fn describe_current(
        &self,
        pre: &SourcePluginPre<CallState>,
    ) -> Result<PluginInfo, CallError> {
        let grants = Grants::default();
        plugin_call!(self.handle, pre, "describe", grants, |b, store| async {
            b.capstan_plugin_source()
                .call_describe(&mut store)
                .await
                .map(Ok)
        })
    }

    /// The kinds this plugin declares, read through `describe` and checked for shape (each
    /// schema must be a JSON object). Errors name the plugin and the kind.
    pub async fn declared_kinds(
        &self,
    ) -> Result<Vec<crate::sources::catalog::DeclaredKind>, String> {
        use crate::sources::catalog::{DeclaredKind, HttpAccess, KindCapabilities};
        let pre = match &self.pre {
            SourcePre::Current(pre) => pre,
            SourcePre::V0_1(_, kinds) => {
                return Ok(kinds
                    .iter()
                    .filter_map(|kind| compat::declared_kind(kind))
                    .collect());
            }
            SourcePre::Helm4(plugin) => {
                return Ok(helm4::getter::declared_kinds(self.name(), &plugin.metadata));
            }
        };
        let info = self
            .describe_current(pre)
            .await
            .map_err(|e| format!("plugin `{}`: describe failed: {e}", self.name()))?;
        if info.kinds.is_empty() {
            return Err(format!("plugin `{}` declares no source kind", self.name()));
        }
        info.kinds
            .into_iter()
            .map(|kind| {
                let schema: serde_json::Value =
                    serde_json::from_str(&kind.spec_schema).map_err(|e| {
                        format!(
                            "plugin `{}`: the spec schema of kind `{}` is not JSON: {e}",
                            self.name(),
                            kind.name
                        )
                    })?;
                if !schema.is_object() {
                    return Err(format!(
                        "plugin `{}`: the spec schema of kind `{}` is not a JSON object",
                        self.name(),
                        kind.name
                    ));
                }
                Ok(DeclaredKind {
                    name: kind.name,
                    summary: kind.summary,
                    schema,
                    capabilities: KindCapabilities {
                        git_url_field: kind.capabilities.git_url_field,
                        http: kind
                            .capabilities
                            .http
                            .into_iter()
                            .map(|h| HttpAccess {
                                url_field: h.url_field,
                                insecure_field: h.insecure_field,
                                send_credentials: h.send_credentials,
                                shared_document: h.shared_document,
                            })
                            .collect(),
                        secret_keys: kind.capabilities.secret_keys,
                    },
                })
            })
            .collect()
    }

    /// `source.describe` of a current component (a 0.1 component has none).
    pub async fn describe(&self) -> Result<PluginInfo, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => self.describe_current(pre).await,
            SourcePre::V0_1(..) | SourcePre::Helm4(_) => Err(CallError {
                plugin: self.name().to_owned(),
                function: "describe",
                cause: CallFailure::Returned {
                    code: bindings::types::ErrorCode::Unsupported,
                    message: "only capstan:plugin@0.2 components have describe".into(),
                    retryable: false,
                },
            }),
        }
    }

    /// The error of a request the 0.1 adapter cannot translate.
    fn untranslatable(&self, function: &'static str, error: bindings::types::Error) -> CallError {
        CallError {
            plugin: self.name().to_owned(),
            function,
            cause: CallFailure::Returned {
                code: error.code,
                message: error.message,
                retryable: error.retryable,
            },
        }
    }

    /// `source.resolve`.
    pub async fn resolve(
        &self,
        request: &SourceRequest,
        grants: Grants,
    ) -> Result<Revision, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => {
                plugin_call!(self.handle, pre, "resolve", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_resolve(&mut store, request))
            }
            SourcePre::V0_1(pre, _) => {
                let old = compat::request(&request.kind, &request.spec)
                    .map_err(|e| self.untranslatable("resolve", e))?;
                plugin_call!(self.handle, pre, "resolve", grants, |b, store| async {
                    b.capstan_plugin_source()
                        .call_resolve(&mut store, &old)
                        .await
                        .map(|r| r.map(compat::revision_from))
                })
            }
            SourcePre::Helm4(plugin) => {
                let artifact = self.download(plugin, "resolve", request, &grants).await?;
                let revision = Revision {
                    id: format!("{}@{}", artifact.metadata.version, artifact.digest),
                    content_id: artifact.digest.clone(),
                };
                plugin
                    .downloads
                    .keep(&helm4_url(request).unwrap_or_default(), artifact);
                Ok(revision)
            }
        }
    }

    /// Download through a Helm 4 getter and read the chart's metadata.
    async fn download(
        &self,
        plugin: &helm4::Helm4Plugin,
        function: &'static str,
        request: &SourceRequest,
        grants: &Grants,
    ) -> Result<Arc<ChartArtifact>, CallError> {
        let refused = |message: String| {
            self.untranslatable(
                function,
                bindings::types::Error {
                    code: bindings::types::ErrorCode::InvalidInput,
                    message,
                    retryable: false,
                },
            )
        };
        let url = helm4_url(request).ok_or_else(|| refused("the spec has no `url`".into()))?;
        let credential = |key: &str| {
            grants
                .credentials
                .as_ref()
                .and_then(|c| c.value(key))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default()
        };
        let credentials = helm4::getter::GetterCredentials {
            username: credential("username"),
            password: credential("password"),
        };
        let archive = plugin
            .get(
                &self.handle.calls,
                &self.handle.plugin.name,
                &url,
                &credentials,
            )
            .await?;
        if archive.is_empty() {
            return Err(refused(format!("the getter returned no bytes for {url}")));
        }
        let metadata =
            helm4::getter::chart_metadata(&archive).map_err(|e| refused(format!("{url}: {e}")))?;
        Ok(Arc::new(ChartArtifact {
            digest: helm4::getter::digest_of(&archive),
            archive,
            metadata,
        }))
    }

    /// `source.fetch`.
    pub async fn fetch(
        &self,
        request: &SourceRequest,
        at: &Revision,
        grants: Grants,
    ) -> Result<ChartArtifact, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => {
                plugin_call!(self.handle, pre, "fetch", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_fetch(&mut store, request, at))
            }
            SourcePre::V0_1(pre, _) => {
                let old = compat::request(&request.kind, &request.spec)
                    .map_err(|e| self.untranslatable("fetch", e))?;
                let at = compat::revision(at);
                plugin_call!(self.handle, pre, "fetch", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_fetch(&mut store, &old, &at))
            }
            SourcePre::Helm4(plugin) => {
                let url = helm4_url(request).unwrap_or_default();
                let artifact = match plugin.downloads.take(&url, &at.content_id) {
                    Some(kept) => kept,
                    None => self.download(plugin, "fetch", request, &grants).await?,
                };
                if artifact.digest != at.content_id {
                    return Err(self.untranslatable(
                        "fetch",
                        bindings::types::Error {
                            code: bindings::types::ErrorCode::Conflict,
                            message: format!(
                                "{url} changed since it was resolved ({} now, {} then); the next pass picks it up",
                                artifact.digest, at.content_id
                            ),
                            retryable: true,
                        },
                    ));
                }
                Ok(Arc::unwrap_or_clone(artifact))
            }
        }
    }
}

fn not_a_helm4_folder(config: &PluginConfig) -> LoadError {
    LoadError::Helm4 {
        name: config.name.clone(),
        path: config.path.clone(),
        message: "a `postrenderer` plugin is a Helm 4 plugin folder (`plugin.yaml` of type postrenderer/v1 beside `plugin.wasm`), and there is no plugin.yaml here".into(),
    }
}

/// A Helm 4 `postrenderer/v1` plugin, ready to post-render releases.
pub struct PostRendererPlugin {
    plugin: Arc<helm4::Helm4Plugin>,
    handle: Handle,
}

impl PostRendererPlugin {
    /// The configured name (what `postRenderers[].plugin.name` gives).
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// Post-render `documents` with `args` (Helm's `--post-renderer-args`): one call of a
    /// fresh instance under the plugin's limits.
    pub async fn run(
        &self,
        documents: &[crate::postrender::Document],
        args: &[String],
    ) -> Result<Vec<crate::postrender::Document>, String> {
        let input = helm4::postrenderer::input_json(documents, args)?;
        self.plugin
            .invoke(
                &self.handle.calls,
                &self.handle.plugin.name,
                "post-render",
                input,
                |output| {
                    helm4::postrenderer::output_documents(output).map_err(|message| {
                        crate::plugins::bindings::types::Error {
                            code: crate::plugins::bindings::types::ErrorCode::InvalidInput,
                            message,
                            retryable: false,
                        }
                    })
                },
            )
            .await
            .map_err(|e| e.to_string())
    }
}

impl crate::postrender::PluginStep for PostRendererPlugin {
    fn name(&self) -> &str {
        PostRendererPlugin::name(self)
    }

    fn run<'a>(
        &'a self,
        documents: &'a [crate::postrender::Document],
        args: &'a [String],
    ) -> std::pin::Pin<
        Box<dyn Future<Output = Result<Vec<crate::postrender::Document>, String>> + Send + 'a>,
    > {
        Box::pin(PostRendererPlugin::run(self, documents, args))
    }
}

/// The `url` of a Helm 4 getter kind's spec.
fn helm4_url(request: &SourceRequest) -> Option<String> {
    let spec: serde_json::Value = serde_json::from_str(&request.spec).ok()?;
    spec.get("url")?.as_str().map(str::to_owned)
}

impl BackendPlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// Whether the component imports `interface` (e.g. `capstan:plugin/post-render`) of
    /// any version: features added to 0.2 as imports reach only backends built with them.
    pub fn imports(&self, interface: &str) -> bool {
        self.handle
            .plugin
            .description()
            .imports
            .iter()
            .any(|name| name.split('@').next() == Some(interface))
    }

    /// `grants` with the backend's configured `storageNamespaces` added to its kube access.
    fn with_storage(&self, mut grants: Grants) -> Grants {
        let extra = &self.handle.plugin.config.storage_namespaces;
        if !extra.is_empty()
            && let Some(kube) = &grants.kube
        {
            grants.kube = Some(kube.with_namespaces(extra));
        }
        grants
    }

    /// Run a call that changes `release` while holding the release's lock
    /// ([`crate::release_lock`]); without a `kube` grant the plugin cannot change anything,
    /// so there is nothing to lock.
    async fn exclusive<T>(
        &self,
        function: &'static str,
        release: &ReleaseId,
        grants: &Grants,
        call: impl std::future::Future<Output = Result<T, CallError>>,
    ) -> Result<T, CallError> {
        let Some(client) = grants.kube.as_ref().map(|k| k.operator_client().clone()) else {
            return call.await;
        };
        match crate::release_lock::with_release_lock(client, release, function, call).await {
            Ok(result) => result,
            Err(error) => Err(CallError {
                plugin: self.name().to_owned(),
                function,
                cause: CallFailure::Locked(error.to_string()),
            }),
        }
    }

    /// The user's values merged into 0.1's single JSON object by the `compat-helm`
    /// component, run under this backend's limits with no capability.
    async fn merged_values(
        &self,
        adapter: &compat_backend::V0_1Backend,
        function: &'static str,
        values: &[ValueLayer],
    ) -> Result<String, CallError> {
        let layers: Vec<_> = values.iter().map(compat_backend::layer).collect();
        let grants = Grants::default();
        plugin_call!(
            self.handle,
            adapter.services,
            function,
            grants,
            |b, store| async {
                b.capstan_compat_helm_services()
                    .call_merge_values(&mut store, &layers)
                    .await
                    .map(|r| r.map_err(compat_backend::services_error))
            }
        )
    }

    /// `backend.sync`, holding the release's lock.
    pub async fn sync(
        &self,
        request: &SyncRequest,
        grants: Grants,
    ) -> Result<SyncOutcome, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "sync", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_sync(&mut store, request))
                }
                BackendPre::V0_1(adapter) => {
                    let values = self.merged_values(adapter, "sync", &request.values).await?;
                    let old = compat_backend::sync_request(request, values);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "sync",
                        grants,
                        |b, store| async {
                            b.capstan_plugin_backend()
                                .call_sync(&mut store, &old)
                                .await
                                .map(|r| r.map(compat_backend::sync_outcome))
                        }
                    )
                }
            }
        };
        self.exclusive("sync", &request.release, &lock_grants, call)
            .await
    }

    /// `backend.uninstall`, holding the release's lock.
    pub async fn uninstall(
        &self,
        release: &ReleaseId,
        options: UninstallOptions,
        grants: Grants,
    ) -> Result<Option<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "uninstall", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_uninstall(&mut store, release, options))
                }
                BackendPre::V0_1(adapter) => {
                    let old = compat_backend::uninstall_options(&options);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "uninstall",
                        grants,
                        |b, store| b
                            .capstan_plugin_backend()
                            .call_uninstall(&mut store, release, old)
                    )
                }
            }
        };
        self.exclusive("uninstall", release, &lock_grants, call)
            .await
    }

    /// `backend.status`.
    pub async fn status(
        &self,
        release: &ReleaseId,
        grants: Grants,
    ) -> Result<Option<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "status", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_status(&mut store, release))
            }
            BackendPre::V0_1(adapter) => {
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "status",
                    grants,
                    |b, store| b.capstan_plugin_backend().call_status(&mut store, release)
                )
            }
        }
    }

    /// `backend.history`.
    pub async fn history(
        &self,
        release: &ReleaseId,
        max: u32,
        grants: Grants,
    ) -> Result<Vec<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "history", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_history(&mut store, release, max))
            }
            BackendPre::V0_1(adapter) => {
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "history",
                    grants,
                    |b, store| b
                        .capstan_plugin_backend()
                        .call_history(&mut store, release, max)
                )
            }
        }
    }

    /// `backend.rollback`, holding the release's lock.
    pub async fn rollback(
        &self,
        release: &ReleaseId,
        revision: Option<u32>,
        options: &SyncOptions,
        grants: Grants,
    ) -> Result<ReleaseInfo, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "rollback", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_rollback(&mut store, release, revision, options))
                }
                BackendPre::V0_1(adapter) => {
                    let old = compat_backend::sync_options(options);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "rollback",
                        grants,
                        |b, store| b
                            .capstan_plugin_backend()
                            .call_rollback(&mut store, release, revision, &old)
                    )
                }
            }
        };
        self.exclusive("rollback", release, &lock_grants, call)
            .await
    }

    /// `backend.plan`.
    pub async fn plan(&self, request: &SyncRequest, grants: Grants) -> Result<SyncPlan, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "plan", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_plan(&mut store, request))
            }
            BackendPre::V0_1(adapter) => {
                let values = self.merged_values(adapter, "plan", &request.values).await?;
                let old = compat_backend::sync_request(request, values);
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "plan",
                    grants,
                    |b, store| async {
                        b.capstan_plugin_backend()
                            .call_plan(&mut store, &old)
                            .await
                            .map(|r| r.map(compat_backend::sync_plan))
                    }
                )
            }
        }
    }

    /// `backend.package`: turn a chart folder or archive into an artifact, by the backend's
    /// engine's rules (for a 0.1 backend, which has no `package`, by `compat-helm`).
    pub async fn package(&self, chart: &ChartInput) -> Result<ChartArtifact, CallError> {
        let grants = Grants::default();
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "package", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_package(&mut store, chart))
            }
            BackendPre::V0_1(adapter) => {
                let input = compat_backend::chart_input(chart);
                plugin_call!(
                    self.handle,
                    adapter.services,
                    "package",
                    grants,
                    |b, store| async {
                        b.capstan_compat_helm_services()
                            .call_package(&mut store, &input)
                            .await
                            .map(|r| {
                                r.map(compat_backend::artifact)
                                    .map_err(compat_backend::services_error)
                            })
                    }
                )
            }
        }
    }

    /// The component's instance-pre and the index of its optional export `interface`
    /// (`capstan:plugin/<interface>` at the component's contract version); `None` for a
    /// component of the previous contract or without the export.
    fn optional_export(
        &self,
        interface: &str,
    ) -> Option<(
        &wasmtime::component::InstancePre<CallState>,
        wasmtime::component::ComponentExportIndex,
    )> {
        let BackendPre::Current(pre) = &self.pre else {
            return None;
        };
        let instance_pre = pre.instance_pre();
        let index = instance_pre.component().get_export_index(
            None,
            format!(
                "capstan:plugin/{interface}@{}",
                self.handle.plugin.wit_version
            ),
        )?;
        Some((instance_pre, index))
    }

    /// `chart-template.template-chart`, the optional export that renders a chart folder or
    /// archive without packaging it first; `None` when the component does not export it
    /// (then `package` and `template` do the same work).
    pub async fn template_chart(
        &self,
        release: &ReleaseId,
        chart: &ChartInput,
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Option<Result<Rendered, CallError>> {
        let (instance_pre, interface) = self.optional_export("chart-template")?;
        let component = instance_pre.component();
        let function = component.get_export_index(Some(&interface), "template-chart")?;
        type Params<'a> = (
            &'a ReleaseId,
            &'a ChartInput,
            &'a [ValueLayer],
            &'a TemplateOptions,
        );
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "template-chart",
            grants,
            |instance, store| async {
                let template_chart = instance
                        .get_typed_func::<Params<'_>, (Result<Rendered, self::bindings::types::Error>,)>(
                            &mut store, &function,
                        )?;
                let (rendered,) = template_chart
                    .call_async(&mut store, (release, chart, values, options))
                    .await?;
                Ok(rendered)
            }
        ))
    }

    /// Whether the component exports `folder-template` (see [`BackendPlugin::template_folder`]).
    pub fn has_folder_template(&self) -> bool {
        self.optional_export("folder-template").is_some()
    }

    /// `folder-template.template-folder`, the optional export that renders a chart folder
    /// passed in part: `files` read, `unread` listed only, their contents read through the
    /// `folder-files` grant `grants` carries. `None` when the component does not export it.
    pub async fn template_folder(
        &self,
        release: &ReleaseId,
        files: &[ChartFile],
        unread: &[UnreadFile],
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Option<Result<Rendered, CallError>> {
        let (instance_pre, interface) = self.optional_export("folder-template")?;
        let component = instance_pre.component();
        let function = component.get_export_index(Some(&interface), "template-folder")?;
        type Params<'a> = (
            &'a ReleaseId,
            &'a [ChartFile],
            &'a [UnreadFile],
            &'a [ValueLayer],
            &'a TemplateOptions,
        );
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "template-folder",
            grants,
            |instance, store| async {
                let template_folder = instance
                    .get_typed_func::<Params<'_>, (Result<Rendered, self::bindings::types::Error>,)>(
                        &mut store, &function,
                    )?;
                let (rendered,) = template_folder
                    .call_async(&mut store, (release, files, unread, values, options))
                    .await?;
                Ok(rendered)
            }
        ))
    }

    /// `chart-folder`, the optional export that says which files of a chart folder make up
    /// the chart: `rules-file`, then `chart-files` of `paths` with that file's contents as
    /// `rules` reads them (`None` when the folder has no such file), both on one instance.
    /// `None` when the component does not export it. The indexes are the component's
    /// answer, unchecked.
    pub async fn chart_files(
        &self,
        paths: &[String],
        rules: impl FnOnce(&str) -> Option<Vec<u8>> + Send,
        grants: Grants,
    ) -> Option<Result<Vec<u32>, CallError>> {
        let (instance_pre, interface) = self.optional_export("chart-folder")?;
        let component = instance_pre.component();
        let rules_file = component.get_export_index(Some(&interface), "rules-file")?;
        let chart_files = component.get_export_index(Some(&interface), "chart-files")?;
        type Files = Result<Vec<u32>, self::bindings::types::Error>;
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "chart-files",
            grants,
            |instance, store| async {
                let (name,) = instance
                    .get_typed_func::<(), (Option<String>,)>(&mut store, &rules_file)?
                    .call_async(&mut store, ())
                    .await?;
                let contents = name.as_deref().and_then(rules);
                let (kept,) = instance
                    .get_typed_func::<(&[String], Option<&[u8]>), (Files,)>(
                        &mut store,
                        &chart_files,
                    )?
                    .call_async(&mut store, (paths, contents.as_deref()))
                    .await?;
                Ok(kept)
            }
        ))
    }

    /// `backend.template`.
    pub async fn template(
        &self,
        release: &ReleaseId,
        chart: &ChartArtifact,
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Result<Rendered, CallError> {
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "template", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_template(&mut store, release, chart, values, options))
            }
            BackendPre::V0_1(adapter) => {
                let values = self.merged_values(adapter, "template", values).await?;
                let old = compat_backend::template_options(options);
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "template",
                    grants,
                    |b, store| async {
                        b.capstan_plugin_backend()
                            .call_template(&mut store, release, chart, &values, &old)
                            .await
                            .map(|r| r.map(compat_backend::rendered))
                    }
                )
            }
        }
    }
}
