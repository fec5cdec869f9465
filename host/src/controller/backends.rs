//! The backends in force: the loaded backend plugins by name, which serves which Helm
//! version, and the post-renderer plugins releases may name; replaced as a whole when the
//! configuration is reloaded. A reconcile takes the
//! set once and keeps it, so a call in flight finishes on the component it started with.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::config::BackendSelection;
use crate::plugins::{BackendPlugin, PostRendererPlugin};

/// One configuration's backends.
pub struct BackendSet {
    /// Backend plugins by configured name.
    pub plugins: BTreeMap<String, Arc<BackendPlugin>>,
    /// Which backend serves which Helm version.
    pub selection: BackendSelection,
    /// Helm 4 `postrenderer/v1` plugins by configured name.
    pub post_renderers: BTreeMap<String, Arc<PostRendererPlugin>>,
}

/// The current [`BackendSet`], swappable.
pub struct Backends {
    current: RwLock<Arc<BackendSet>>,
}

impl Backends {
    /// Backends starting with `set`.
    pub fn new(set: BackendSet) -> Backends {
        Backends {
            current: RwLock::new(Arc::new(set)),
        }
    }

    /// The set in force now.
    pub fn current(&self) -> Arc<BackendSet> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Put `set` in force; calls holding the previous set keep it.
    pub fn replace(&self, set: BackendSet) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(set);
    }
}
