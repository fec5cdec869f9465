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

    /// Cache key of the content with sha256 `content_digest` for `engine`.
    fn key(engine: &Engine, content_digest: &[u8]) -> String {
        let mut hasher = Sha256Hasher(Sha256::new());
        hasher.write(content_digest);
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hex::encode(hasher.0.finalize())
    }

    /// Load the compiled form of component `bytes`, compiling and caching it when absent.
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> Result<(Component, CacheOutcome), CompileError> {
        self.load_stamped(engine, bytes, None, |_| None)
    }

    /// [`CompiledCache::load`] for `bytes` read from a file that had `stamp` both before
    /// and after the read (`None`: unknown, or changed meanwhile): when the cache saw the
    /// file with that stamp before, the sha256 it computed then is used instead of hashing
    /// `bytes` again (hashing a 7 MB backend was 5 % of a `capstan template` run, which
    /// starts a process per chart). When the component must be compiled, `prepare` may
    /// give the bytes to compile instead (a pre-initialised copy, `preinit.rs`); the cache
    /// entry stays keyed by the plugin file's own bytes.
    pub fn load_stamped(
        &self,
        engine: &Engine,
        bytes: &[u8],
        stamp: Option<&FileStamp>,
        prepare: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<(Component, CacheOutcome), CompileError> {
        let digest = match stamp {
            Some(stamp) => self.stamped_digest(stamp, bytes),
            None => Sha256::digest(bytes).to_vec(),
        };
        self.load_compiled(
            engine,
            (bytes, &digest),
            "cwasm",
            // SAFETY: only called on files this cache wrote; see `load_compiled`.
            |engine: &Engine, path: &Path| unsafe { Component::deserialize_file(engine, path) },
            |engine: &Engine, bytes: &[u8]| match prepare(bytes) {
                Some(prepared) => Component::new(engine, prepared),
                None => Component::new(engine, bytes),
            },
            |component: &Component| component.serialize(),
        )
    }

    /// The compiled component of the file with `stamp`, without reading the file: when the
    /// cache remembers the file's sha256 for this stamp and holds its compiled form. `None`
    /// means read the file and call [`CompiledCache::load_stamped`] (which also deals with
    /// a compiled file that no longer loads). Reading a 7 MB backend into fresh memory was a
    /// quarter of a `capstan template` run of a one-template chart.
    pub fn load_remembered(&self, engine: &Engine, stamp: &FileStamp) -> Option<Component> {
        let digest = self.remembered_digest(stamp)?;
        let path = self
            .dir
            .join(format!("{}.cwasm", Self::key(engine, &digest)));
        if !path.is_file() {
            return None;
        }
        // SAFETY: a file this cache wrote; see `load_compiled`.
        unsafe { Component::deserialize_file(engine, &path) }.ok()
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
            (bytes, &Sha256::digest(bytes)),
            "module.cwasm",
            // SAFETY: only called on files this cache wrote; see `load_compiled`.
            |engine: &Engine, path: &Path| unsafe { Module::deserialize_file(engine, path) },
            |engine: &Engine, bytes: &[u8]| Module::new(engine, bytes),
            |module: &Module| module.serialize(),
        )
    }

    /// Load the compiled form of `bytes` (whose sha256 is `content_digest`).
    /// `deserialize` is only called on a file written by `serialize` of an engine with
    /// the same compatibility hash (it is in the file name), in a folder only the operator
    /// writes; wasmtime also checks the header and engine settings.
    fn load_compiled<T>(
        &self,
        engine: &Engine,
        (bytes, content_digest): (&[u8], &[u8]),
        suffix: &str,
        deserialize: impl Fn(&Engine, &Path) -> wasmtime::Result<T>,
        compile: impl FnOnce(&Engine, &[u8]) -> wasmtime::Result<T>,
        serialize: impl Fn(&T) -> wasmtime::Result<Vec<u8>>,
    ) -> Result<(T, CacheOutcome), CompileError> {
        let path = self
            .dir
            .join(format!("{}.{suffix}", Self::key(engine, content_digest)));
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

    /// Where the digest of the file with `stamp` is remembered.
    fn stamp_path(&self, stamp: &FileStamp) -> PathBuf {
        let name = hex::encode(Sha256::digest(stamp.path.as_os_str().as_encoded_bytes()));
        self.dir.join("stamps").join(name)
    }

    /// The sha256 of `bytes`, the content of the file with `stamp`: remembered from an
    /// earlier load when the file is unchanged, else computed now and remembered.
    fn stamped_digest(&self, stamp: &FileStamp, bytes: &[u8]) -> Vec<u8> {
        self.stamped_digest_at(stamp, bytes, std::time::SystemTime::now())
    }

    /// The sha256 remembered for the file with `stamp`, if it was seen with that stamp.
    fn remembered_digest(&self, stamp: &FileStamp) -> Option<Vec<u8>> {
        let text = std::fs::read_to_string(self.stamp_path(stamp)).ok()?;
        let (seen, digest) = text.split_once('\n')?;
        let digest = hex::decode(digest.trim_end()).ok()?;
        (seen == stamp.identity && digest.len() == 32).then_some(digest)
    }

    /// [`CompiledCache::stamped_digest`] at time `now`. A file changed less than
    /// [`RACY_STAMP`] before `now` is hashed but not remembered: file times advance in
    /// clock ticks, so a same-size rewrite within the tick could keep the stamp (git's
    /// "racily clean" entries).
    fn stamped_digest_at(
        &self,
        stamp: &FileStamp,
        bytes: &[u8],
        now: std::time::SystemTime,
    ) -> Vec<u8> {
        if let Some(digest) = self.remembered_digest(stamp) {
            return digest;
        }
        let path = self.stamp_path(stamp);
        let digest = Sha256::digest(bytes).to_vec();
        let settled = now
            .duration_since(stamp.changed)
            .is_ok_and(|age| age >= RACY_STAMP);
        if !settled {
            return digest;
        }
        let record = format!("{}\n{}\n", stamp.identity, hex::encode(&digest));
        if let Some(dir) = path.parent()
            && let Err(error) = write_atomically(dir, &path, record.as_bytes())
        {
            tracing::debug!(dir = %dir.display(), %error, "cannot remember a plugin file's digest");
        }
        digest
    }
}

/// What tells whether a file changed without reading it: device, inode, size, and the
/// modification and status-change times in nanoseconds. Any write moves the change time,
/// which no user can set back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    path: PathBuf,
    identity: String,
    changed: std::time::SystemTime,
}

/// How long after its last change a file's stamp is trusted to identify its content.
const RACY_STAMP: std::time::Duration = std::time::Duration::from_secs(2);

impl FileStamp {
    /// The stamp of `path` as it is now; `None` where it cannot be read (or off Unix).
    pub fn of(path: &Path) -> Option<FileStamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let meta = std::fs::metadata(path).ok()?;
            let path = std::path::absolute(path).ok()?;
            let changed = std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(
                u64::try_from(meta.ctime()).ok()?,
                u32::try_from(meta.ctime_nsec()).ok()?,
            ))?;
            Some(FileStamp {
                path,
                changed,
                identity: format!(
                    "dev={} ino={} size={} mtime={}.{:09} ctime={}.{:09}",
                    meta.dev(),
                    meta.ino(),
                    meta.size(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    meta.ctime(),
                    meta.ctime_nsec()
                ),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    /// A cache in a temporary folder and a plugin file holding `content` beside it.
    fn cache_and_plugin_file(content: &[u8]) -> (tempfile::TempDir, CompiledCache, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let cache = CompiledCache::new(dir.path().join("cache"));
        let file = dir.path().join("plugin.wasm");
        std::fs::write(&file, content).unwrap();
        (dir, cache, file)
    }

    #[test]
    fn an_unchanged_file_is_not_hashed_again() {
        let (_dir, cache, file) = cache_and_plugin_file(b"first content");
        let stamp = FileStamp::of(&file).unwrap();
        let digest = cache.stamped_digest_at(&stamp, b"first content", later());
        assert_eq!(digest, Sha256::digest(b"first content").to_vec());
        // Remembered: the same stamp gives the remembered digest whatever bytes are passed
        // (they are not hashed again).
        assert_eq!(
            cache.stamped_digest_at(&stamp, b"other bytes", later()),
            digest
        );
    }

    #[test]
    fn a_rewritten_file_is_hashed_again_even_with_its_size_and_mtime_kept() {
        let (_dir, cache, file) = cache_and_plugin_file(b"version 1");
        let first = FileStamp::of(&file).unwrap();
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        cache.stamped_digest_at(&first, b"version 1", later());
        // Rewrite in place with the same size and put the modification time back: only
        // the change time (and at worst nothing, within one clock tick) tells them apart.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&file, b"version 2").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let second = FileStamp::of(&file).unwrap();
        assert_ne!(first, second, "the change time must move");
        assert_eq!(
            cache.stamped_digest_at(&second, b"version 2", later()),
            Sha256::digest(b"version 2").to_vec()
        );
    }

    #[test]
    fn a_damaged_stamp_record_is_ignored_and_rewritten() {
        let (_dir, cache, file) = cache_and_plugin_file(b"content");
        let stamp = FileStamp::of(&file).unwrap();
        cache.stamped_digest_at(&stamp, b"content", later());
        let record = cache.stamp_path(&stamp);
        for damaged in [
            &b"garbage"[..],
            b"",
            format!("{}\nabcd\n", stamp.identity).as_bytes(),
        ] {
            std::fs::write(&record, damaged).unwrap();
            assert_eq!(
                cache.stamped_digest_at(&stamp, b"content", later()),
                Sha256::digest(b"content").to_vec()
            );
            assert!(
                std::fs::read_to_string(&record)
                    .unwrap()
                    .starts_with(&stamp.identity)
            );
        }
    }

    #[test]
    fn a_file_changed_just_now_is_not_remembered() {
        let (_dir, cache, file) = cache_and_plugin_file(b"fresh");
        let stamp = FileStamp::of(&file).unwrap();
        // Within the racy window: hashed each time, nothing written.
        let now = SystemTime::now();
        assert_eq!(
            cache.stamped_digest_at(&stamp, b"fresh", now),
            Sha256::digest(b"fresh").to_vec()
        );
        assert!(!cache.stamp_path(&stamp).exists());
        assert_eq!(
            cache.stamped_digest_at(&stamp, b"changed", now),
            Sha256::digest(b"changed").to_vec()
        );
    }
}
