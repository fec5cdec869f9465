//! On-disk cache of compiled components (and core modules), keyed by the component's sha256 and the engine's
//! compatibility hash (wasmtime version and every code-generation setting), so a second
//! start skips Cranelift entirely.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Engine, Module};

/// Where a component came from on this load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Deserialized from the cache.
    Hit,
    /// Compiled now and written to the cache.
    Compiled,
    /// Compiled now; writing the cache failed (logged, not fatal).
    CompiledUncached,
}

/// Errors compiling a component.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CompileError(String);

/// A folder of precompiled components.
#[derive(Debug, Clone)]
pub struct CompiledCache {
    dir: PathBuf,
}

/// Feeds `Hash` output into sha256, so the key is stable across processes.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl CompiledCache {
    /// A cache in `dir` (created on first write). The folder must be writable only by the
    /// operator: its files are loaded as trusted native code.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompiledCache { dir: dir.into() }
    }

    /// The default folder: `$XDG_CACHE_HOME/capstan/components` or `~/.cache/...`.
    pub fn default_dir() -> PathBuf {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("capstan").join("components")
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Cache key of `bytes` for `engine`.
    pub fn key(engine: &Engine, bytes: &[u8]) -> String {
        let mut hasher = Sha256Hasher(Sha256::new());
        hasher.write(&Sha256::digest(bytes));
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hex::encode(hasher.0.finalize())
    }

    /// Load the compiled form of component `bytes`, compiling and caching it when absent.
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> Result<(Component, CacheOutcome), CompileError> {
        self.load_compiled(
            engine,
            bytes,
            "cwasm",
            // SAFETY: only called on files this cache wrote; see `load_compiled`.
            |engine: &Engine, path: &Path| unsafe { Component::deserialize_file(engine, path) },
            |engine: &Engine, bytes: &[u8]| Component::new(engine, bytes),
            |component: &Component| component.serialize(),
        )
    }

    /// Load the compiled form of core module `bytes` (Helm 4's Extism plugins), compiling
    /// and caching it when absent. Modules and components have distinct file suffixes.
    pub fn load_module(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> Result<(Module, CacheOutcome), CompileError> {
        self.load_compiled(
            engine,
            bytes,
            "module.cwasm",
            // SAFETY: only called on files this cache wrote; see `load_compiled`.
            |engine: &Engine, path: &Path| unsafe { Module::deserialize_file(engine, path) },
            |engine: &Engine, bytes: &[u8]| Module::new(engine, bytes),
            |module: &Module| module.serialize(),
        )
    }

    /// `deserialize` is only called on a file written by `serialize` of an engine with
    /// the same compatibility hash (it is in the file name), in a folder only the operator
    /// writes; wasmtime also checks the header and engine settings.
    fn load_compiled<T>(
        &self,
        engine: &Engine,
        bytes: &[u8],
        suffix: &str,
        deserialize: impl Fn(&Engine, &Path) -> wasmtime::Result<T>,
        compile: impl Fn(&Engine, &[u8]) -> wasmtime::Result<T>,
        serialize: impl Fn(&T) -> wasmtime::Result<Vec<u8>>,
    ) -> Result<(T, CacheOutcome), CompileError> {
        let path = self
            .dir
            .join(format!("{}.{suffix}", Self::key(engine, bytes)));
        if path.is_file() {
            match deserialize(engine, &path) {
                Ok(compiled) => return Ok((compiled, CacheOutcome::Hit)),
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "discarding unreadable compiled plugin");
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        let compiled = compile(engine, bytes).map_err(|e| CompileError(format!("{e:#}")))?;
        let outcome = match serialize(&compiled)
            .map_err(|e| e.to_string())
            .and_then(|data| write_atomically(&self.dir, &path, &data).map_err(|e| e.to_string()))
        {
            Ok(()) => CacheOutcome::Compiled,
            Err(error) => {
                tracing::warn!(dir = %self.dir.display(), %error, "cannot write the compiled-plugin cache");
                CacheOutcome::CompiledUncached
            }
        };
        Ok((compiled, outcome))
    }
}

fn write_atomically(dir: &Path, path: &Path, data: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile_in(dir)?;
    file.1.write_all(data)?;
    file.1.sync_all()?;
    std::fs::rename(&file.0, path)
}

fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let path = dir.join(format!(
        ".partial-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let file = std::fs::File::create(&path)?;
    Ok((path, file))
}
