//! Pre-initialisation of components that export an initialisation function.
//!
//! Every call runs in a fresh instance, so whatever a component builds before its real work
//! (the Helm backends: the JSON Schema meta-schema validators, 4.8 % of a `capstan template`
//! run of bitnami/wordpress) is built again by every call. A component that exports such a
//! function says that work can be done once: when the embedder compiles the component into
//! its cache, it instruments it with `wasmtime-wizer`, instantiates it under the plugin's
//! own deadline and memory limit, calls the function, and compiles a copy whose memories
//! and globals start as the function left them. A component without the export, or whose
//! function fails, is compiled as it is: preparing is an optimisation, never a condition of
//! loading.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{Component, Instance, Lift, Linker, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wasi::WasiCtx;
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use crate::call::{CallLimits, CallRuntime, CallState};

/// The exported function that prepares a component: `interface#function`.
#[derive(Debug, Clone, Copy)]
pub struct PrepareExport<'a> {
    /// The exported interface, with its version (`my:package/prepare@1.0.0`).
    pub interface: &'a str,
    /// Its function, which takes and returns nothing.
    pub function: &'a str,
}

/// Whether the component `bytes` may export `export`: the interface's name is in them. A
/// cheap test that spares instrumenting and compiling every other component twice; the
/// export itself is looked up once compiled.
fn may_export(bytes: &[u8], export: PrepareExport<'_>) -> bool {
    let name = export.interface.as_bytes();
    bytes.windows(name.len()).any(|window| window == name)
}

/// One call of a plugin to prepare: its name, limits, WASI context and the embedder's data
/// for the call's store (what the imports the preparing code calls may reach).
pub struct Preparation<T> {
    /// The plugin's name, for errors and logs.
    pub plugin: Arc<str>,
    /// The call's limits.
    pub limits: CallLimits,
    /// The call's WASI context.
    pub wasi: WasiCtx,
    /// The embedder's data of the call.
    pub data: T,
}

/// The component `bytes` pre-initialised by its `export`, or `None` when it has no such
/// export or preparing it failed (logged). Runs the call on a thread of its own with its
/// own async runtime, so that it can be used from any context (loading is synchronous, and
/// may happen inside the embedder's runtime).
pub fn prepared<T: Send + 'static>(
    runtime: &CallRuntime,
    linker: &Linker<CallState<T>>,
    export: PrepareExport<'_>,
    call: Preparation<T>,
    bytes: &[u8],
) -> Option<Vec<u8>> {
    if !may_export(bytes, export) {
        return None;
    }
    let started = Instant::now();
    let plugin = Arc::clone(&call.plugin);
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let executor = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start a runtime to prepare it: {e}"))?;
                executor.block_on(prepare(runtime, linker, export, call, bytes))
            })
            .join()
            .unwrap_or_else(|_| Err("preparing it panicked".to_owned()))
    });
    match outcome {
        Ok(Some(snapshot)) => {
            tracing::info!(
                plugin = %plugin,
                elapsed_ms = started.elapsed().as_millis() as u64,
                bytes = snapshot.len(),
                "pre-initialised the component with its `{}` export",
                export.function
            );
            Some(snapshot)
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(
                plugin = %plugin,
                %error,
                "could not pre-initialise the component; compiling it as it is"
            );
            None
        }
    }
}

/// Instrument, instantiate, call the export, snapshot.
async fn prepare<T: Send + 'static>(
    runtime: &CallRuntime,
    linker: &Linker<CallState<T>>,
    export: PrepareExport<'_>,
    call: Preparation<T>,
    bytes: &[u8],
) -> Result<Option<Vec<u8>>, String> {
    let mut wizer = Wizer::new();
    wizer.init_func(format!("{}#{}", export.interface, export.function));
    // An export inside an interface stays (Wizer removes top-level functions only):
    // calling it again on a prepared instance builds nothing new.
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(bytes)
        .map_err(|e| format!("cannot instrument it: {e:#}"))?;
    let engine: &Engine = runtime.engine();
    let component = Component::new(engine, &instrumented)
        .map_err(|e| format!("cannot compile it instrumented: {e:#}"))?;
    let Some((_, interface)) = component.get_export(None, export.interface) else {
        return Ok(None);
    };
    let Some((_, function)) = component.get_export(Some(&interface), export.function) else {
        return Ok(None);
    };
    let (mut store, guard) =
        runtime.start(&call.plugin, "prepare", call.limits, call.wasi, call.data);
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
                Some(failure) => Err(failure),
            })
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(snapshot))
}

/// Reads an instrumented instance's state for the snapshot through the accessor functions
/// Wizer adds. The trait's methods cannot fail, so the first failure is kept and the
/// snapshot refused afterwards.
struct Snapshotting<'a, T: 'static> {
    store: &'a mut Store<CallState<T>>,
    instance: Instance,
    failure: Option<String>,
}

impl<T: Send + 'static> Snapshotting<'_, T> {
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

impl<T: Send + 'static> ComponentInstanceState for Snapshotting<'_, T> {
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
