//! A loaded plugin ([`LoadedPlugin`]): its configuration, what it imports and exports, and
//! what instantiates it, by contract (current, 0.1, Helm 4).

use std::sync::Arc;
use std::time::Duration;

use capstan_capabilities::state::CallState;
use capstan_wasm_runtime::cache::CacheOutcome;

use crate::bindings::backend::BackendPluginPre;
use crate::bindings::source::SourcePluginPre;
use crate::config::{PluginConfig, PluginWorld};
use crate::error::LoadError;
use crate::inspect::ComponentDescription;
use crate::{compat, compat_backend, helm4};

/// What instantiates a plugin, by contract.
pub(crate) enum Pre {
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
    pub(crate) name: Arc<str>,
    pub(crate) config: PluginConfig,
    pub(crate) description: ComponentDescription,
    pub(crate) wit_version: String,
    pub(crate) cache: CacheOutcome,
    /// Compiled by this load from a copy pre-initialised by its `prepare` export.
    pub(crate) prepared: bool,
    pub(crate) load_time: Duration,
    pub(crate) pre: Pre,
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
