//! Helm 4's own Wasm plugins (HIP-0026) on the `extism/v1` runtime, loaded as Helm
//! distributes them (a folder with `plugin.yaml` and `plugin.wasm`): a `getter/v1` plugin
//! is served as a chart source for the protocols it declares, a `postrenderer/v1` plugin as
//! a post-renderer releases name ([`postrenderer`]).
//!
//! It runs in Capstan's engine, not in a second runtime: the Extism kernel ABI is
//! implemented natively ([`kernel`]) rather than through the `extism` host crate, because
//! that crate brings its own wasmtime major (49; Capstan is on 48), its own `Engine` per
//! plugin (so none of Capstan's epoch deadlines, pooling or compiled-module cache) and its
//! own HTTP client (bypassing [`capstan_capabilities::http`]). Each call is a fresh instance
//! under the same memory limit, deadline and call slots as a component; the plugin's
//! `runtimeConfig` can only tighten them (`maxPages`, `timeout`), and its HTTP reaches only
//! its `allowedHosts` (or the list the operator's configuration puts in their place).

pub mod getter;
pub mod kernel;
pub mod metadata;
pub mod postrenderer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::{Engine, InstancePre, Linker, Val, ValType};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use self::getter::{GetterCredentials, getter_error};
use self::kernel::{ExtismState, HostEnv, Kernel};
use self::metadata::Metadata;
use crate::call::{self, CallError};
use crate::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use crate::error::LoadError;
use crate::inspect::ComponentDescription;
use capstan_capabilities::http::{DEFAULT_RESPONSE_CAP, DEFAULT_TIMEOUT, HostPattern, HttpGrant};
use capstan_wasm_runtime::cache::{CacheOutcome, CompiledCache};
use capstan_wasm_runtime::call::CallRuntime;
use capstan_wasm_runtime::failure::HostFailure;

/// The file Helm requires next to `plugin.yaml`.
pub const WASM_FILE: &str = "plugin.wasm";
/// The metadata file.
pub const METADATA_FILE: &str = "plugin.yaml";

/// The `plugin.yaml` of a configured path, if it names a Helm 4 plugin: a folder holding
/// `plugin.yaml`, or the `plugin.yaml` file itself.
pub fn metadata_file(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        let file = path.join(METADATA_FILE);
        return file.is_file().then_some(file);
    }
    (path.file_name().is_some_and(|n| n == METADATA_FILE)).then(|| path.to_owned())
}

/// The linker of Extism modules: the kernel and host functions, and WASI preview 1 for
/// modules that import it (as Helm enables it for every plugin).
pub fn linker(engine: &Engine) -> wasmtime::Result<Linker<ExtismState>> {
    let mut linker = Linker::new(engine);
    kernel::add_to_linker(&mut linker)?;
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, |state: &mut ExtismState| &mut state.wasi)?;
    Ok(linker)
}

/// A loaded Helm 4 getter plugin.
pub struct Helm4Plugin {
    /// Its `plugin.yaml`.
    pub metadata: Metadata,
    /// The folder it was loaded from.
    pub dir: PathBuf,
    pre: InstancePre<ExtismState>,
    limits: PluginLimits,
    wasi: WasiGrants,
    http: Option<Arc<HttpGrant>>,
    config: Arc<BTreeMap<String, String>>,
    /// Downloads kept from `resolve` for `fetch`.
    pub(crate) downloads: getter::Downloads,
}

/// Capstan's limits tightened by the plugin's own `runtimeConfig` (never loosened).
fn effective_limits(limits: &PluginLimits, metadata: &Metadata) -> PluginLimits {
    let mut effective = *limits;
    let pages = metadata.runtime.memory.max_pages;
    if pages > 0 {
        // 16 pages of 64 KiB per MiB, rounded up to whole MiB.
        let mib = u32::try_from(pages.div_ceil(16)).unwrap_or(u32::MAX);
        effective.memory_mib = effective.memory_mib.min(mib.max(1));
    }
    if metadata.runtime.timeout > 0 {
        effective.timeout_ms = effective.timeout_ms.min(metadata.runtime.timeout);
    }
    effective
}

/// Load the Helm 4 plugin whose `plugin.yaml` is `metadata_path`.
pub(crate) fn load(
    engine: &Engine,
    linker: &Linker<ExtismState>,
    cache: &CompiledCache,
    config: &PluginConfig,
    metadata_path: &Path,
    egress: &Arc<capstan_capabilities::egress::EgressPolicy>,
) -> Result<(Helm4Plugin, ComponentDescription, CacheOutcome), LoadError> {
    let name = config.name.clone();
    let dir = metadata_path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let refuse = |path: &Path, message: String| LoadError::Helm4 {
        name: name.clone(),
        path: path.to_owned(),
        message,
    };
    let metadata = metadata::read(metadata_path).map_err(|e| refuse(metadata_path, e.message))?;
    let world = match metadata.plugin_type {
        metadata::POSTRENDERER_V1 => PluginWorld::PostRenderer,
        _ => PluginWorld::Source,
    };
    if config.world != world {
        let key = |world: PluginWorld| match world {
            PluginWorld::Source => "source",
            PluginWorld::Backend => "backend",
            PluginWorld::PostRenderer => "postrenderer",
        };
        return Err(refuse(
            metadata_path,
            format!(
                "a Helm 4 `{}` plugin must be configured with `world: {}`, not `world: {}`",
                metadata.plugin_type,
                key(world),
                key(config.world)
            ),
        ));
    }
    let allowed = config
        .allowed_hosts
        .as_ref()
        .unwrap_or(&metadata.runtime.allowed_hosts);
    let patterns = allowed
        .iter()
        .map(|host| HostPattern::parse(host))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            let field = if config.allowed_hosts.is_some() {
                "allowedHosts (configuration)"
            } else {
                "runtimeConfig.allowedHosts"
            };
            refuse(metadata_path, format!("{field}: {e}"))
        })?;
    let wasm_path = dir.join(WASM_FILE);
    let bytes = std::fs::read(&wasm_path).map_err(|cause| LoadError::Read {
        name: name.clone(),
        path: wasm_path.clone(),
        cause,
    })?;
    if crate::inspect::binary_kind(&bytes) != crate::inspect::BinaryKind::CoreModule {
        return Err(refuse(
            &wasm_path,
            "is not a core WebAssembly module (extism/v1 plugins are core modules, e.g. built for wasm32-unknown-unknown or wasm32-wasip1)".into(),
        ));
    }
    let (module, outcome) = cache
        .load_module(engine, &bytes)
        .map_err(|e| LoadError::Compile {
            name: name.clone(),
            path: wasm_path.clone(),
            message: e.to_string(),
        })?;
    let entry = metadata.runtime.entry();
    let entry_ok = module
        .get_export(entry)
        .and_then(|e| e.func().cloned())
        .is_some_and(|f| {
            f.params().len() == 0
                && matches!(
                    f.results().collect::<Vec<_>>().as_slice(),
                    [] | [ValType::I32]
                )
        });
    if !entry_ok {
        return Err(refuse(
            &wasm_path,
            format!("exports no function `{entry}` of type () -> i32 (the entry Helm calls)"),
        ));
    }
    let pre = linker
        .instantiate_pre(&module)
        .map_err(|e| LoadError::Link {
            name: name.clone(),
            path: wasm_path.clone(),
            message: format!("{e:#}"),
        })?;
    let description = ComponentDescription {
        imports: module
            .imports()
            .map(|i| format!("{}::{}", i.module(), i.name()))
            .collect(),
        exports: module.exports().map(|e| e.name().to_owned()).collect(),
    };
    let http = (!patterns.is_empty()).then(|| {
        let limits = &config.limits;
        let cap = metadata
            .runtime
            .memory
            .max_http_response_bytes
            .min(DEFAULT_RESPONSE_CAP);
        Arc::new(
            HttpGrant::empty()
                .with_egress(Arc::clone(egress))
                .with_hosts(patterns)
                .with_max_response_bytes(cap)
                .with_timeout(
                    DEFAULT_TIMEOUT.min(std::time::Duration::from_millis(limits.timeout_ms)),
                ),
        )
    });
    let plugin = Helm4Plugin {
        limits: effective_limits(&config.limits, &metadata),
        wasi: config.wasi.clone(),
        config: Arc::new(metadata.runtime.config.clone()),
        metadata,
        dir,
        pre,
        http,
        downloads: getter::Downloads::default(),
    };
    Ok((plugin, description, outcome))
}

/// A per-call temporary folder (`fileSystem.createTempDir`), removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(plugin: &str) -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "capstan-helm4-{plugin}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path)?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Helm4Plugin {
    /// The effective limits of each call.
    pub fn limits(&self) -> &PluginLimits {
        &self.limits
    }

    /// The HTTP grant of each call, if the plugin may reach any host.
    pub fn http_grant(&self) -> Option<&HttpGrant> {
        self.http.as_deref()
    }

    /// Run the getter for `href`: a fresh instance, Helm's input, the file's bytes out.
    pub(crate) async fn get(
        &self,
        runtime: &CallRuntime,
        plugin: &Arc<str>,
        href: &str,
        credentials: &GetterCredentials,
    ) -> Result<Vec<u8>, CallError> {
        let input = getter::input_json(href, credentials)
            .map_err(|message| returned_error(plugin, "get", message))?;
        self.invoke(runtime, plugin, "get", input, |output| {
            getter::output_bytes(output).map_err(getter_error)
        })
        .await
    }

    /// One call of the plugin's entry: a fresh instance under the plugin's limits, `input`
    /// as the Extism input, its output decoded by `decode`.
    pub(crate) async fn invoke<R: Send + 'static>(
        &self,
        runtime: &CallRuntime,
        plugin: &Arc<str>,
        function: &'static str,
        input: Vec<u8>,
        decode: fn(&[u8]) -> Result<R, crate::bindings::types::Error>,
    ) -> Result<R, CallError> {
        let failed = |message: String| returned_error(plugin, function, message);
        let mut wasi = WasiCtxBuilder::new();
        for (key, value) in &self.wasi.env {
            wasi.env(key, value);
        }
        if self.wasi.stderr {
            wasi.inherit_stderr();
        }
        let temp = if self.metadata.runtime.file_system.create_temp_dir {
            let temp = TempDir::new(plugin)
                .map_err(|e| failed(format!("cannot create the call's /tmp: {e}")))?;
            wasi.preopened_dir(&temp.0, "/tmp", FsPerms::ReadWrite)
                .map_err(|e| failed(format!("cannot mount the call's /tmp: {e:#}")))?;
            Some(temp)
        } else {
            None
        };
        let env = HostEnv {
            plugin: Arc::clone(plugin),
            config: Arc::clone(&self.config),
            vars: BTreeMap::new(),
            max_var_bytes: self.metadata.runtime.memory.max_var_bytes,
            http: self.http.clone(),
            last_status: 0,
            last_headers: None,
        };
        let state = |limiter| ExtismState {
            wasi: wasi.build_p1(),
            limiter,
            kernel: Kernel::default(),
            env,
        };
        let (mut store, guard) = runtime.start_with(
            plugin,
            function,
            call::call_limits(&self.limits),
            state,
            |s| &mut s.limiter,
        );
        let pre = self.pre.clone();
        let entry = self.metadata.runtime.entry().to_owned();
        let result = call::run(guard, async move {
            let instance = pre.instantiate_async(&mut store).await?;
            // Reactor initialisation, as the Extism runtimes do before the first call.
            for init in ["_initialize", "__wasm_call_ctors"] {
                if let Ok(function) = instance.get_typed_func::<(), ()>(&mut store, init) {
                    function.call_async(&mut store, ()).await?;
                    break;
                }
            }
            let state = store.data_mut();
            let limit = state.limiter.limit();
            let Some(handle) = state.kernel.alloc_bytes(&input, limit) else {
                state.limiter.refuse();
                return Err(wasmtime::Error::new(HostFailure(
                    "the input does not fit the memory limit".into(),
                )));
            };
            state.kernel.set_input(handle, input.len() as u64);
            let function = instance.get_func(&mut store, &entry).ok_or_else(|| {
                wasmtime::Error::new(HostFailure(format!("no function `{entry}`")))
            })?;
            let mut results = vec![Val::I32(0); function.ty(&store).results().len()];
            match function.call_async(&mut store, &[], &mut results).await {
                Ok(()) => {}
                // WASI `proc_exit(0)` ends the call normally.
                Err(error) if error.downcast_ref::<I32Exit>().is_some_and(|e| e.0 == 0) => {}
                Err(error) => return Err(error),
            }
            let code = results.first().and_then(Val::i32).unwrap_or(0);
            let kernel = &store.data().kernel;
            if let Some(message) = kernel.error_message() {
                return Ok(Err(getter_error(message)));
            }
            if code != 0 {
                return Ok(Err(getter_error(format!(
                    "`{entry}` returned {code} without an error message"
                ))));
            }
            let output = kernel.output().map_err(wasmtime::Error::new)?;
            Ok(decode(output))
        })
        .await;
        drop(temp);
        result
    }
}

/// A failure the host met before or around a call, reported as the plugin's.
fn returned_error(plugin: &Arc<str>, function: &'static str, message: String) -> CallError {
    CallError {
        plugin: plugin.to_string(),
        function,
        cause: call::CallFailure::Returned {
            code: crate::bindings::types::ErrorCode::InvalidInput,
            message,
            retryable: false,
        },
    }
}
