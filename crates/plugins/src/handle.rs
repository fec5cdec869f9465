//! What every call into one plugin shares ([`Handle`]), and one call through it
//! ([`plugin_call!`]).

use std::sync::Arc;

use capstan_capabilities::Grants;
use capstan_capabilities::state::CallState;
use capstan_wasm_runtime::call::{CallGuard, CallRuntime};

use crate::call;
use crate::loaded::LoadedPlugin;
use crate::lock::ReleaseLock;

/// What every call into one plugin shares: the runtime, the plugin, the release lock.
pub(crate) struct Handle {
    pub(crate) calls: CallRuntime,
    pub(crate) plugin: Arc<LoadedPlugin>,
    /// Held by calls that change a release.
    pub(crate) release_lock: Option<Arc<dyn ReleaseLock>>,
}

impl Handle {
    pub(crate) fn start(
        &self,
        function: &'static str,
        grants: Grants,
    ) -> (wasmtime::Store<CallState>, CallGuard) {
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
        $crate::call::run(guard, async move {
            let $bindings = pre.instantiate_async(&mut $store).await?;
            $invoke.await
        })
        .await
    }};
}

pub(crate) use plugin_call;
