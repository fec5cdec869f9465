//! The plugin runtime ([`PluginRuntime`]): one engine, components compiled once and cached
//! on disk, one `InstancePre` per plugin, and handles that call a plugin in a fresh store
//! per call with its memory limit, deadline and the capabilities granted to that call.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use capstan_capabilities::state::CallState;
use capstan_net::egress::EgressPolicy;
use capstan_wasm_runtime::cache::CompiledCache;
use capstan_wasm_runtime::call::{CallObserver, CallRuntime};
use capstan_wasm_runtime::engine::{Preemption, RuntimeError, engine_for};
use capstan_wasm_runtime::memory::MemoryBudget;
use capstan_wasm_runtime::preinit::PrepareExport;
use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::backend::{BackendPlugin, BackendPre};
use crate::config::PluginWorld;
use crate::error::LookupError;
use crate::handle::Handle;
use crate::helm4::kernel::ExtismState;
use crate::loaded::{LoadedPlugin, Pre};
use crate::lock::ReleaseLock;
use crate::metrics::PluginMetrics;
use crate::post_renderer::PostRendererPlugin;
use crate::source::{SourcePlugin, SourcePre};

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
pub(crate) const PREPARE_EXPORT: PrepareExport<'static> = PrepareExport {
    interface: "capstan:plugin/prepare@0.2.0",
    function: "prepare",
};

/// The engine and every loaded plugin.
pub struct PluginRuntime {
    pub(crate) calls: CallRuntime,
    pub(crate) linker: Linker<CallState>,
    pub(crate) extism_linker: wasmtime::Linker<ExtismState>,
    pub(crate) cache: CompiledCache,
    pub(crate) plugins: BTreeMap<String, Arc<LoadedPlugin>>,
    pub(crate) egress: Arc<EgressPolicy>,
    /// Held by backend calls that change a release (see [`ReleaseLock`]); none: unlocked.
    pub(crate) release_lock: Option<Arc<dyn ReleaseLock>>,
}

/// Build the engine used for plugins by the operator: Cranelift, component model, epoch
/// interruption, [`MAX_CONCURRENT_CALLS`] pooled instance slots.
pub fn engine() -> Result<Engine, RuntimeError> {
    engine_for(MAX_CONCURRENT_CALLS, Preemption::Epoch)
}

fn linker(engine: &Engine) -> Result<Linker<CallState>, RuntimeError> {
    let mut linker = Linker::new(engine);
    capstan_capabilities::linker::add_to_linker(&mut linker)
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
        let observer = metrics.map(|m| m as Arc<dyn CallObserver>);
        let calls = CallRuntime::new(
            call_slots,
            preemption,
            DEFAULT_MEMORY_BUDGET_MIB << 20,
            observer,
        )?;
        let linker = linker(calls.engine())?;
        let extism_linker = crate::helm4::linker(calls.engine())
            .map_err(|e| RuntimeError::new(format!("{e:#}")))?;
        Ok(PluginRuntime {
            calls,
            linker,
            extism_linker,
            cache: CompiledCache::new(cache_dir),
            plugins: BTreeMap::new(),
            egress: Arc::new(EgressPolicy::public_only()),
            release_lock: None,
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
    pub fn set_egress(&mut self, egress: Arc<EgressPolicy>) {
        self.egress = egress;
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        self.calls.engine()
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

    /// Plugin calls currently holding an instance slot.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.calls_in_flight()
    }

    /// Every loaded plugin, by name.
    pub fn plugins(&self) -> impl Iterator<Item = &Arc<LoadedPlugin>> {
        self.plugins.values()
    }

    /// The loaded plugin named `name`, or why there is none.
    pub(crate) fn by_name(&self, name: &str) -> Result<&Arc<LoadedPlugin>, LookupError> {
        self.plugins
            .get(name)
            .ok_or_else(|| LookupError::Unknown(name.to_owned()))
    }

    /// What every call into `plugin` shares: the engine, its metrics and the call slots.
    pub(crate) fn handle_for(&self, plugin: &Arc<LoadedPlugin>) -> Handle {
        Handle {
            calls: self.calls.clone(),
            plugin: Arc::clone(plugin),
            release_lock: self.release_lock.clone(),
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

    /// Hold each release a backend call changes with `lock` (see [`ReleaseLock`]); applies
    /// to handles made afterwards. Without one, such calls run unlocked.
    pub fn set_release_lock(&mut self, lock: Arc<dyn ReleaseLock>) {
        self.release_lock = Some(lock);
    }
}
