//! The artifact store: chart archives on disk, addressed by their sha256, with a size cap.
//! Artifacts no release references are evicted least-recently-used first once the store
//! is over its cap; referenced artifacts are never evicted.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// Errors of the artifact store, naming the artifact and the folder.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Disk I/O failed.
    #[error("artifact store {dir}: {message}")]
    Io {
        /// Store folder.
        dir: PathBuf,
        /// What failed.
        message: String,
    },
    /// No artifact with that digest is stored.
    #[error("artifact {0} is not in the store")]
    Missing(String),
    /// The digest a plugin claimed does not match the bytes.
    #[error("artifact digest mismatch: claimed {claimed}, content is {actual}")]
    DigestMismatch {
        /// What the plugin said.
        claimed: String,
        /// What the bytes hash to.
        actual: String,
    },
}

#[derive(Debug)]
struct Entry {
    size: u64,
    last_used: u64,
}

#[derive(Debug, Default)]
struct Index {
    entries: HashMap<String, Entry>,
    total: u64,
    clock: u64,
}

/// Content-addressed chart archives.
#[derive(Debug)]
pub struct ArtifactStore {
    dir: PathBuf,
    cap_bytes: u64,
    index: Mutex<Index>,
}

/// `sha256:<hex>` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

impl ArtifactStore {
    /// Open (or create) the store in `dir`, indexing what is already there.
    pub fn open(dir: impl Into<PathBuf>, cap_bytes: u64) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        let io = |e: std::io::Error| ArtifactError::Io {
            dir: dir.clone(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let mut index = Index::default();
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(hex) = name.strip_suffix(".tgz") else {
                continue;
            };
            let size = entry.metadata().map_err(io)?.len();
            index.total += size;
            index
                .entries
                .insert(format!("sha256:{hex}"), Entry { size, last_used: 0 });
        }
        Ok(ArtifactStore {
            dir,
            cap_bytes,
            index: Mutex::new(index),
        })
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir
            .join(format!("{}.tgz", digest.trim_start_matches("sha256:")))
    }

    fn io(&self, e: std::io::Error) -> ArtifactError {
        ArtifactError::Io {
            dir: self.dir.clone(),
            message: e.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        // A panic while holding the lock cannot leave the index inconsistent (every update
        // is a single insert/remove), so a poisoned lock is still usable.
        self.index
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Store `archive`, checking it hashes to `claimed` (the digest a plugin reported).
    pub fn put(&self, archive: &[u8], claimed: &str) -> Result<String, ArtifactError> {
        let digest = digest_of(archive);
        if digest != claimed {
            return Err(ArtifactError::DigestMismatch {
                claimed: claimed.to_owned(),
                actual: digest,
            });
        }
        let mut index = self.lock();
        index.clock += 1;
        let clock = index.clock;
        if let Some(entry) = index.entries.get_mut(&digest) {
            entry.last_used = clock;
            return Ok(digest);
        }
        let path = self.path(&digest);
        let partial = path.with_extension("partial");
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&partial)?;
            file.write_all(archive)?;
            file.sync_all()?;
            std::fs::rename(&partial, &path)
        };
        write().map_err(|e| self.io(e))?;
        index.total += archive.len() as u64;
        index.entries.insert(
            digest.clone(),
            Entry {
                size: archive.len() as u64,
                last_used: clock,
            },
        );
        Ok(digest)
    }

    /// Read an artifact.
    pub fn get(&self, digest: &str) -> Result<Vec<u8>, ArtifactError> {
        let mut index = self.lock();
        index.clock += 1;
        let clock = index.clock;
        let entry = index
            .entries
            .get_mut(digest)
            .ok_or_else(|| ArtifactError::Missing(digest.to_owned()))?;
        entry.last_used = clock;
        std::fs::read(self.path(digest)).map_err(|e| self.io(e))
    }

    /// Whether `digest` is stored.
    pub fn contains(&self, digest: &str) -> bool {
        self.lock().entries.contains_key(digest)
    }

    /// Bytes stored.
    pub fn total_bytes(&self) -> u64 {
        self.lock().total
    }

    /// Folder of the store.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// While over the cap, remove the least recently used artifacts not in `referenced`.
    /// Returns the digests removed.
    pub fn evict(&self, referenced: &BTreeSet<String>) -> Result<Vec<String>, ArtifactError> {
        let mut index = self.lock();
        let mut candidates: Vec<(u64, String)> = index
            .entries
            .iter()
            .filter(|(digest, _)| !referenced.contains(*digest))
            .map(|(digest, entry)| (entry.last_used, digest.clone()))
            .collect();
        candidates.sort();
        let mut removed = Vec::new();
        for (_, digest) in candidates {
            if index.total <= self.cap_bytes {
                break;
            }
            match std::fs::remove_file(self.path(&digest)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(self.io(e)),
            }
            if let Some(entry) = index.entries.remove(&digest) {
                index.total -= entry.size;
            }
            removed.push(digest);
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_by_content_checks_claims_and_evicts_only_unreferenced_lru() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path(), 25).unwrap();
        let (a, b, c) = (vec![1u8; 10], vec![2u8; 10], vec![3u8; 10]);
        let da = store.put(&a, &digest_of(&a)).unwrap();
        let db = store.put(&b, &digest_of(&b)).unwrap();
        assert!(matches!(
            store.put(&c, &da),
            Err(ArtifactError::DigestMismatch { .. })
        ));
        let dc = store.put(&c, &digest_of(&c)).unwrap();
        assert_eq!(
            store.put(&a, &da).unwrap(),
            da,
            "same content, same digest, stored once"
        );
        assert_eq!(store.total_bytes(), 30);
        store.get(&db).unwrap(); // b is now more recent than c, a is the most recent
        // Over the cap by 5: c is the least recently used unreferenced artifact.
        let referenced = BTreeSet::from([da.clone()]);
        assert_eq!(store.evict(&referenced).unwrap(), std::slice::from_ref(&dc));
        assert!(!store.contains(&dc) && store.contains(&db));
        // Reopening indexes what is on disk.
        let reopened = ArtifactStore::open(dir.path(), 25).unwrap();
        assert_eq!(reopened.total_bytes(), 20);
        assert_eq!(reopened.get(&da).unwrap(), a);
        assert!(matches!(reopened.get(&dc), Err(ArtifactError::Missing(_))));
    }
}
