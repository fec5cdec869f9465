//! The Extism kernel ABI (`extism:host/env`) over this host's wasmtime, for Helm 4's
//! `extism/v1` plugins.
//!
//! Extism guests keep their inputs, outputs and every value they exchange with the host in
//! a second memory addressed by 64-bit handles. The reference runtimes implement that
//! memory as a small Wasm module linked beside the guest; here it is a host-side arena in
//! the call's store, which keeps the per-plugin `InstancePre` (a kernel instance would tie
//! the linker to one store) and lets the arena count against the call's memory limit. A
//! handle is the arena offset of a block's first byte (0 is "none"), so a guest reading
//! `load_u64(handle + 8k)` walks the block as the PDKs do.
//!
//! Host functions implemented: the memory and I/O functions, `config_get`, `var_get` /
//! `var_set`, `http_request` / `http_status_code` / `http_headers` (through the call's
//! [`HttpGrant`], so the plugin's `allowedHosts` and every cap apply) and `log_*`.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use wasmtime::{Caller, Linker};
use wasmtime_wasi::p1::WasiP1Ctx;

use capstan_capabilities::http::{self, HttpGrant};
use capstan_wasm_runtime::failure::HostFailure;
use capstan_wasm_runtime::memory::MemoryLimiter;

/// The import module of the Extism kernel and host functions.
pub const ENV_MODULE: &str = "extism:host/env";

/// Everything the store of one Extism call holds.
pub struct ExtismState {
    pub(crate) wasi: WasiP1Ctx,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) kernel: Kernel,
    pub(crate) env: HostEnv,
}

/// The guest-visible host state besides memory: configuration, vars, HTTP.
pub struct HostEnv {
    /// Plugin name, for logs.
    pub(crate) plugin: Arc<str>,
    /// `runtimeConfig.config`.
    pub(crate) config: Arc<BTreeMap<String, String>>,
    /// Vars set during this call (each call is a fresh instance, so vars last one call).
    pub(crate) vars: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Cap on the total size of vars; 0 disables them.
    pub(crate) max_var_bytes: u64,
    /// What `http_request` may reach; `None`: nothing.
    pub(crate) http: Option<Arc<HttpGrant>>,
    /// Status of the last HTTP response.
    pub(crate) last_status: i32,
    /// Headers of the last HTTP response, as Extism's JSON object.
    pub(crate) last_headers: Option<Vec<u8>>,
}

/// The Extism memory: blocks in one growable byte arena.
#[derive(Default)]
pub struct Kernel {
    bytes: Vec<u8>,
    /// Live blocks: offset → (length, capacity).
    blocks: BTreeMap<u64, (u64, u64)>,
    /// Freed blocks: (capacity, offset), reused best-fit.
    free: Vec<(u64, u64)>,
    input: (u64, u64),
    output: (u64, u64),
    error: u64,
}

/// A guest handle that names no block, or an access past the arena.
#[derive(Debug, thiserror::Error)]
#[error("extism memory: {0}")]
pub struct KernelFault(String);

impl Kernel {
    /// Bytes the arena holds (live and freed blocks).
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// A new block of `len` bytes; 0 when `len` is 0 or the arena would pass `limit`.
    pub fn alloc(&mut self, len: u64, limit: usize) -> u64 {
        if len == 0 {
            return 0;
        }
        if let Some(index) = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, (capacity, _))| *capacity >= len)
            .min_by_key(|(_, (capacity, _))| *capacity)
            .map(|(index, _)| index)
        {
            let (capacity, offset) = self.free.swap_remove(index);
            self.blocks.insert(offset, (len, capacity));
            return offset;
        }
        // Offset 0 means "none": the arena starts with one unused byte.
        let start = self.bytes.len().max(1);
        let Some(end) = usize::try_from(len).ok().and_then(|l| start.checked_add(l)) else {
            return 0;
        };
        if end > limit {
            return 0;
        }
        self.bytes.resize(end, 0);
        self.blocks.insert(start as u64, (len, len));
        start as u64
    }

    /// Allocate a block holding `data`; 0 for empty data. `None` past the limit.
    pub fn alloc_bytes(&mut self, data: &[u8], limit: usize) -> Option<u64> {
        if data.is_empty() {
            return Some(0);
        }
        let handle = self.alloc(data.len() as u64, limit);
        if handle == 0 {
            return None;
        }
        let start = handle as usize;
        self.bytes[start..start + data.len()].copy_from_slice(data);
        Some(handle)
    }

    /// Free the block at `handle` (unknown handles are ignored, as in Extism).
    pub fn free(&mut self, handle: u64) {
        if let Some((_, capacity)) = self.blocks.remove(&handle) {
            self.free.push((capacity, handle));
            if self.input.0 == handle {
                self.input = (0, 0);
            }
        }
    }

    /// Length of the live block at `handle`, 0 for anything else.
    pub fn length(&self, handle: u64) -> u64 {
        self.blocks.get(&handle).map_or(0, |(len, _)| *len)
    }

    fn range(&self, offset: u64, len: u64) -> Result<std::ops::Range<usize>, KernelFault> {
        let start = usize::try_from(offset).ok();
        let end = start.and_then(|s| s.checked_add(len as usize));
        match (start, end) {
            (Some(start), Some(end)) if start > 0 && end <= self.bytes.len() => Ok(start..end),
            _ => Err(KernelFault(format!(
                "access of {len} bytes at offset {offset} is outside the {} bytes allocated",
                self.bytes.len()
            ))),
        }
    }

    /// The bytes of the block at `handle` (empty for 0).
    pub fn read_block(&self, handle: u64) -> Result<&[u8], KernelFault> {
        if handle == 0 {
            return Ok(&[]);
        }
        let len = self
            .blocks
            .get(&handle)
            .map(|(len, _)| *len)
            .ok_or_else(|| KernelFault(format!("handle {handle} is not an allocated block")))?;
        Ok(&self.bytes[self.range(handle, len)?])
    }

    fn load_u8(&self, offset: u64) -> Result<u8, KernelFault> {
        Ok(self.bytes[self.range(offset, 1)?][0])
    }

    fn load_u64(&self, offset: u64) -> Result<u64, KernelFault> {
        let range = self.range(offset, 8)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.bytes[range]);
        Ok(u64::from_le_bytes(word))
    }

    fn store(&mut self, offset: u64, data: &[u8]) -> Result<(), KernelFault> {
        let range = self.range(offset, data.len() as u64)?;
        self.bytes[range].copy_from_slice(data);
        Ok(())
    }

    /// Make `(offset, len)` the call's input.
    pub fn set_input(&mut self, offset: u64, len: u64) {
        self.input = (offset, len);
    }

    fn input_byte_offset(&self, at: u64, width: u64) -> Result<u64, KernelFault> {
        if at.checked_add(width).is_none_or(|end| end > self.input.1) {
            return Err(KernelFault(format!(
                "input read of {width} bytes at {at} is past the {}-byte input",
                self.input.1
            )));
        }
        Ok(self.input.0 + at)
    }

    /// The output the guest set, if any.
    pub fn output(&self) -> Result<&[u8], KernelFault> {
        let (offset, len) = self.output;
        if offset == 0 || len == 0 {
            return Ok(&[]);
        }
        Ok(&self.bytes[self.range(offset, len)?])
    }

    /// The error message the guest set, if any.
    pub fn error_message(&self) -> Option<String> {
        (self.error != 0).then(|| match self.read_block(self.error) {
            Ok(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Err(fault) => format!("(unreadable error message: {fault})"),
        })
    }

    fn reset(&mut self) {
        *self = Kernel::default();
    }
}

type Fault = wasmtime::Error;

fn fault(error: KernelFault) -> Fault {
    failure(error.to_string())
}

/// A failed host function: the call fails with `message` (see [`HostFailure`]).
fn failure(message: impl Into<String>) -> Fault {
    wasmtime::Error::new(HostFailure(message.into()))
}

/// Allocate `data` in the caller's arena, counting against its memory limit.
fn give(state: &mut ExtismState, data: &[u8]) -> wasmtime::Result<u64> {
    let limit = arena_limit(state);
    match state.kernel.alloc_bytes(data, limit) {
        Some(handle) => Ok(handle),
        None => {
            state.limiter.refuse();
            Err(failure(format!(
                "extism memory: cannot allocate {} bytes within the memory limit",
                data.len()
            )))
        }
    }
}

/// What the arena may grow to: the call's memory limit (the guest's linear memory is
/// limited separately by the same figure).
fn arena_limit(state: &ExtismState) -> usize {
    state.limiter.limit()
}

fn text_of(state: &ExtismState, handle: u64) -> wasmtime::Result<String> {
    let bytes = state.kernel.read_block(handle).map_err(fault)?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// Extism's level numbers: 0 trace … 4 error; `i32::MAX` turns guest logging off.
fn log_level() -> i32 {
    use tracing::Level;
    if tracing::enabled!(target: "capstan::plugin", Level::TRACE) {
        0
    } else if tracing::enabled!(target: "capstan::plugin", Level::DEBUG) {
        1
    } else if tracing::enabled!(target: "capstan::plugin", Level::INFO) {
        2
    } else if tracing::enabled!(target: "capstan::plugin", Level::WARN) {
        3
    } else if tracing::enabled!(target: "capstan::plugin", Level::ERROR) {
        4
    } else {
        i32::MAX
    }
}

/// The JSON request `http_request` receives.
#[derive(serde::Deserialize)]
struct HttpRequestJson {
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    method: Option<String>,
}

/// Perform the guest's HTTP request; the response body as a handle (0 when empty).
async fn http_request(
    caller: &mut Caller<'_, ExtismState>,
    request: u64,
    body: u64,
) -> wasmtime::Result<u64> {
    let state = caller.data_mut();
    let request_json = state.kernel.read_block(request).map_err(fault)?;
    let parsed: HttpRequestJson = serde_json::from_slice(request_json)
        .map_err(|e| failure(format!("http_request: request is not valid: {e}")))?;
    let body = Bytes::copy_from_slice(state.kernel.read_block(body).map_err(fault)?);
    let method = parsed
        .method
        .as_deref()
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let Some(grant) = state.env.http.clone() else {
        return Err(failure(format!(
            "http_request to {} refused: the plugin's allowedHosts is empty",
            http::redacted_url(&parsed.url)
        )));
    };
    let mut builder = ::http::Request::builder()
        .method(method.as_str())
        .uri(parsed.url.as_str());
    for (name, value) in &parsed.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let built = builder.body(body).map_err(|e| {
        failure(format!(
            "http_request: {method} {} is not a valid request: {e}",
            http::redacted_url(&parsed.url)
        ))
    })?;
    let response = http::request(&grant, built).await.map_err(|e| {
        failure(format!(
            "http_request {method} {} failed: {e}",
            http::redacted_url(&parsed.url)
        ))
    })?;
    let state = caller.data_mut();
    state.env.last_status = i32::from(response.status().as_u16());
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push(',');
                v.push_str(&value);
            })
            .or_insert(value);
    }
    state.env.last_headers = serde_json::to_vec(&headers).ok();
    give(state, response.body())
}

/// Define every `extism:host/env` function in `linker`.
pub fn add_to_linker(linker: &mut Linker<ExtismState>) -> wasmtime::Result<()> {
    let m = ENV_MODULE;
    linker.func_wrap(m, "alloc", |mut c: Caller<'_, ExtismState>, len: u64| {
        let state = c.data_mut();
        let limit = arena_limit(state);
        let handle = state.kernel.alloc(len, limit);
        if handle == 0 && len > 0 {
            state.limiter.refuse();
        }
        handle
    })?;
    linker.func_wrap(m, "free", |mut c: Caller<'_, ExtismState>, h: u64| {
        c.data_mut().kernel.free(h);
    })?;
    linker.func_wrap(m, "length", |c: Caller<'_, ExtismState>, h: u64| {
        c.data().kernel.length(h)
    })?;
    linker.func_wrap(m, "length_unsafe", |c: Caller<'_, ExtismState>, h: u64| {
        c.data().kernel.length(h)
    })?;
    linker.func_wrap(m, "load_u8", |c: Caller<'_, ExtismState>, at: u64| {
        c.data().kernel.load_u8(at).map(u32::from).map_err(fault)
    })?;
    linker.func_wrap(m, "load_u64", |c: Caller<'_, ExtismState>, at: u64| {
        c.data().kernel.load_u64(at).map_err(fault)
    })?;
    linker.func_wrap(
        m,
        "store_u8",
        |mut c: Caller<'_, ExtismState>, at: u64, v: u32| {
            c.data_mut().kernel.store(at, &[v as u8]).map_err(fault)
        },
    )?;
    linker.func_wrap(
        m,
        "store_u64",
        |mut c: Caller<'_, ExtismState>, at: u64, v: u64| {
            c.data_mut()
                .kernel
                .store(at, &v.to_le_bytes())
                .map_err(fault)
        },
    )?;
    linker.func_wrap(m, "input_length", |c: Caller<'_, ExtismState>| {
        c.data().kernel.input.1
    })?;
    linker.func_wrap(m, "input_offset", |c: Caller<'_, ExtismState>| {
        c.data().kernel.input.0
    })?;
    linker.func_wrap(m, "input_load_u8", |c: Caller<'_, ExtismState>, at: u64| {
        let kernel = &c.data().kernel;
        let offset = kernel.input_byte_offset(at, 1).map_err(fault)?;
        kernel.load_u8(offset).map(u32::from).map_err(fault)
    })?;
    linker.func_wrap(
        m,
        "input_load_u64",
        |c: Caller<'_, ExtismState>, at: u64| {
            let kernel = &c.data().kernel;
            let offset = kernel.input_byte_offset(at, 8).map_err(fault)?;
            kernel.load_u64(offset).map_err(fault)
        },
    )?;
    linker.func_wrap(
        m,
        "input_set",
        |mut c: Caller<'_, ExtismState>, at: u64, len: u64| {
            c.data_mut().kernel.input = (at, len);
        },
    )?;
    linker.func_wrap(
        m,
        "output_set",
        |mut c: Caller<'_, ExtismState>, at: u64, len: u64| {
            c.data_mut().kernel.output = (at, len);
        },
    )?;
    linker.func_wrap(m, "output_length", |c: Caller<'_, ExtismState>| {
        c.data().kernel.output.1
    })?;
    linker.func_wrap(m, "output_offset", |c: Caller<'_, ExtismState>| {
        c.data().kernel.output.0
    })?;
    linker.func_wrap(m, "error_set", |mut c: Caller<'_, ExtismState>, h: u64| {
        c.data_mut().kernel.error = h;
    })?;
    linker.func_wrap(m, "error_get", |c: Caller<'_, ExtismState>| {
        c.data().kernel.error
    })?;
    linker.func_wrap(m, "reset", |mut c: Caller<'_, ExtismState>| {
        c.data_mut().kernel.reset();
    })?;
    linker.func_wrap(m, "memory_bytes", |c: Caller<'_, ExtismState>| {
        c.data().kernel.size() as u64
    })?;
    linker.func_wrap(
        m,
        "config_get",
        |mut c: Caller<'_, ExtismState>, key: u64| {
            let key = text_of(c.data(), key)?;
            let value = c.data().env.config.get(&key).cloned();
            match value {
                Some(value) => give(c.data_mut(), value.as_bytes()),
                None => Ok(0),
            }
        },
    )?;
    linker.func_wrap(m, "var_get", |mut c: Caller<'_, ExtismState>, key: u64| {
        let state = c.data();
        let key = state.kernel.read_block(key).map_err(fault)?.to_vec();
        let value = state.env.vars.get(&key).cloned();
        match value {
            Some(value) => give(c.data_mut(), &value),
            None => Ok(0),
        }
    })?;
    linker.func_wrap(
        m,
        "var_set",
        |mut c: Caller<'_, ExtismState>, key: u64, value: u64| {
            let state = c.data_mut();
            if state.env.max_var_bytes == 0 {
                return Err(failure(
                    "var_set: vars are disabled (runtimeConfig.memory.maxVarBytes is 0)",
                ));
            }
            let key = state.kernel.read_block(key).map_err(fault)?.to_vec();
            if value == 0 {
                state.env.vars.remove(&key);
                return Ok(());
            }
            let value = state.kernel.read_block(value).map_err(fault)?.to_vec();
            let others: usize = state
                .env
                .vars
                .iter()
                .filter(|(k, _)| **k != key)
                .map(|(_, v)| v.len())
                .sum();
            if (others + value.len()) as u64 > state.env.max_var_bytes {
                return Err(failure(format!(
                    "var_set: vars would pass runtimeConfig.memory.maxVarBytes ({})",
                    state.env.max_var_bytes
                )));
            }
            state.env.vars.insert(key, value);
            Ok(())
        },
    )?;
    linker.func_wrap_async(
        m,
        "http_request",
        |mut c: Caller<'_, ExtismState>, (request, body): (u64, u64)| {
            Box::new(async move { http_request(&mut c, request, body).await })
        },
    )?;
    linker.func_wrap(m, "http_status_code", |c: Caller<'_, ExtismState>| {
        c.data().env.last_status
    })?;
    linker.func_wrap(m, "http_headers", |mut c: Caller<'_, ExtismState>| {
        let headers = c.data().env.last_headers.clone();
        match headers {
            Some(headers) => give(c.data_mut(), &headers),
            None => Ok(0),
        }
    })?;
    linker.func_wrap(m, "get_log_level", |_: Caller<'_, ExtismState>| log_level())?;
    macro_rules! log_function {
        ($name:literal, $level:ident) => {
            linker.func_wrap(m, $name, |mut c: Caller<'_, ExtismState>, h: u64| {
                let message = text_of(c.data(), h)?;
                let plugin = Arc::clone(&c.data().env.plugin);
                c.data_mut().kernel.free(h);
                tracing::$level!(target: "capstan::plugin", plugin = %plugin, "{message}");
                Ok(())
            })?;
        };
    }
    log_function!("log_trace", trace);
    log_function!("log_debug", debug);
    log_function!("log_info", info);
    log_function!("log_warn", warn);
    log_function!("log_error", error);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_addressed_by_offset_reused_and_bounded() {
        let mut kernel = Kernel::default();
        let a = kernel.alloc_bytes(b"hello world", 1 << 20).unwrap();
        assert_ne!(a, 0);
        assert_eq!(kernel.length(a), 11);
        assert_eq!(kernel.read_block(a).unwrap(), b"hello world");
        assert_eq!(
            kernel.load_u64(a).unwrap(),
            u64::from_le_bytes(*b"hello wo")
        );
        assert_eq!(kernel.load_u8(a + 10).unwrap(), b'd');
        assert!(kernel.load_u64(a + 8).is_err(), "past the arena");
        assert_eq!(kernel.alloc(0, 1 << 20), 0);
        kernel.free(a);
        assert_eq!(kernel.length(a), 0);
        let b = kernel.alloc(5, 1 << 20);
        assert_eq!(b, a, "a freed block is reused");
        assert_eq!(kernel.length(b), 5);
        assert_eq!(kernel.alloc(1 << 20, 1 << 20), 0, "past the limit");
        assert!(kernel.read_block(12345).is_err());
    }

    #[test]
    fn input_reads_stay_inside_the_input() {
        let mut kernel = Kernel::default();
        let input = kernel.alloc_bytes(b"{\"a\":1}", 1 << 20).unwrap();
        kernel.set_input(input, 7);
        assert_eq!(kernel.input_byte_offset(6, 1).unwrap(), input + 6);
        assert!(kernel.input_byte_offset(0, 8).is_err());
        kernel.free(input);
        assert_eq!(kernel.input, (0, 0));
    }

    #[test]
    fn urls_in_messages_lose_credentials_and_queries() {
        assert_eq!(
            http::redacted_url("https://user:pw@h.example:8443/a/b?token=x"),
            "https://h.example:8443/a/b"
        );
    }
}
