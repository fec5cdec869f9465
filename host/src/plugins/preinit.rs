//! Pre-initialisation of components that export `capstan:plugin/prepare@0.2.0`.
//!
//! Every call runs in a fresh instance, so whatever a component builds before its real work
//! (the Helm backends: the JSON Schema meta-schema validators, 4.8 % of a `capstan template`
//! run of bitnami/wordpress) is built again by every call. A component that exports
//! `prepare` says that work can be done once: when the host compiles the component into its
//! cache, it instruments it with `wasmtime-wizer`, instantiates it under the plugin's own
//! deadline and memory limit, calls `prepare`, and compiles a copy whose memories and
//! globals start as `prepare` left them. A component without the export, or whose
//! `prepare` fails, is compiled as it is: preparing is an optimisation, never a condition
//! of loading.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{Component, Instance, Lift, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use super::call::{self, CallRuntime, CallState};
use crate::capabilities::Grants;
use crate::config::PluginConfig;

/// The interface a component exports to be prepared, and its one function.
pub(crate) const PREPARE_INTERFACE: &str = "capstan:plugin/prepare@0.2.0";
const PREPARE_FUNCTION: &str = "prepare";

/// Whether the component `bytes` may export [`PREPARE_INTERFACE`]: its name is in them.
/// A cheap test that spares instrumenting and compiling every other component twice; the
/// export itself is looked up once compiled.
fn may_export_prepare(bytes: &[u8]) -> bool {
    let name = PREPARE_INTERFACE.as_bytes();
    bytes.windows(name.len()).any(|window| window == name)
}

/// The component `bytes` pre-initialised by its `prepare` export, or `None` when it has no
/// such export or preparing it failed (logged). Runs the call on a thread of its own with
/// its own async runtime, so that it can be used from any context (loading is
/// synchronous, and may happen inside the operator's runtime).
pub(crate) fn prepared(
    runtime: CallRuntime<'_>,
    linker: &wasmtime::component::Linker<CallState>,
    config: &PluginConfig,
    bytes: &[u8],
) -> Option<Vec<u8>> {
    if !may_export_prepare(bytes) {
        return None;
    }
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let executor = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start a runtime to prepare it: {e}"))?;
                executor.block_on(prepare(runtime, linker, config, bytes))
            })
            .join()
            .unwrap_or_else(|_| Err("preparing it panicked".to_owned()))
    });
    match outcome {
        Ok(Some(snapshot)) => {
            tracing::info!(
                target: "capstan::plugin",
                plugin = %config.name,
                elapsed_ms = started.elapsed().as_millis() as u64,
                bytes = snapshot.len(),
                "pre-initialised the component with its `prepare` export"
            );
            Some(snapshot)
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(
                target: "capstan::plugin",
                plugin = %config.name,
                %error,
                "could not pre-initialise the component; compiling it as it is"
            );
            None
        }
    }
}

/// Instrument, instantiate, call `prepare`, snapshot.
async fn prepare(
    runtime: CallRuntime<'_>,
    linker: &wasmtime::component::Linker<CallState>,
    config: &PluginConfig,
    bytes: &[u8],
) -> Result<Option<Vec<u8>>, String> {
    let mut wizer = Wizer::new();
    wizer.init_func(format!("{PREPARE_INTERFACE}#{PREPARE_FUNCTION}"));
    // An export inside an interface stays (Wizer removes top-level functions only):
    // calling it again on a prepared instance builds nothing new.
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(bytes)
        .map_err(|e| format!("cannot instrument it: {e:#}"))?;
    let engine: &Engine = runtime.engine;
    let component = Component::new(engine, &instrumented)
        .map_err(|e| format!("cannot compile it instrumented: {e:#}"))?;
    let Some((_, interface)) = component.get_export(None, PREPARE_INTERFACE) else {
        return Ok(None);
    };
    let Some((_, function)) = component.get_export(Some(&interface), PREPARE_FUNCTION) else {
        return Ok(None);
    };
    let plugin: Arc<str> = Arc::from(config.name.as_str());
    let (mut store, guard) = call::start(
        runtime,
        &plugin,
        "prepare",
        &config.limits,
        &config.wasi,
        Grants::default(),
    );
    let snapshot = guard
        .run(async {
            let instance = linker.instantiate_async(&mut store, &component).await?;
            let prepare = instance.get_typed_func::<(), ()>(&mut store, function)?;
            prepare.call_async(&mut store, ()).await?;
            let mut state = Snapshotting {
                store: &mut store,
                instance,
                failure: None,
            };
            let snapshot = wizer.snapshot_component(&context, &mut state).await?;
            Ok(match state.failure {
                None => Ok(snapshot),
                Some(failure) => Err(super::bindings::types::Error {
                    code: super::bindings::types::ErrorCode::Internal,
                    message: failure,
                    retryable: false,
                }),
            })
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(snapshot))
}

/// Reads an instrumented instance's state for the snapshot through the accessor functions
/// Wizer adds. The trait's methods cannot fail, so the first failure is kept and the
/// snapshot refused afterwards.
struct Snapshotting<'a> {
    store: &'a mut Store<CallState>,
    instance: Instance,
    failure: Option<String>,
}

impl Snapshotting<'_> {
    /// Call the accessor `function` of the exported instance `interface`.
    async fn call<R: Lift + Send + Sync + 'static>(
        &mut self,
        interface: &str,
        function: &str,
    ) -> Option<R> {
        if self.failure.is_some() {
            return None;
        }
        let outcome: Result<R, String> = async {
            let (_, exported) = self
                .instance
                .get_export(&mut *self.store, None, interface)
                .ok_or_else(|| format!("no `{interface}` export"))?;
            let (_, index) = self
                .instance
                .get_export(&mut *self.store, Some(&exported), function)
                .ok_or_else(|| format!("no `{interface}#{function}` export"))?;
            let typed = self
                .instance
                .get_typed_func::<(), (R,)>(&mut *self.store, index)
                .map_err(|e| format!("{interface}#{function}: {e:#}"))?;
            let (value,) = typed
                .call_async(&mut *self.store, ())
                .await
                .map_err(|e| format!("{interface}#{function}: {e:#}"))?;
            Ok(value)
        }
        .await;
        match outcome {
            Ok(value) => Some(value),
            Err(failure) => {
                self.failure = Some(format!("reading the prepared state: {failure}"));
                None
            }
        }
    }
}

impl ComponentInstanceState for Snapshotting<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        match self.call::<WasmList<u8>>(instance, func).await {
            Some(list) => contents(list.as_le_slice(&*self.store)),
            None => contents(&[]),
        }
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func).await.unwrap_or_default()
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call::<f32>(instance, func)
            .await
            .map_or(0, f32::to_bits)
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call::<f64>(instance, func)
            .await
            .map_or(0, f64::to_bits)
    }
}
