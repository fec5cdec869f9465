//! The `folder-files` host interface: the contents of the chart folder files the host left
//! unread when it passed a folder to a backend's `folder-template.template-folder`, read
//! when the render asks for them. Only the files that call listed can be read, and only
//! during it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::bindings::folder_files::Host;
use super::bindings::types::{Error, ErrorCode};
use super::errors::error;

/// Read access to the unread files of one chart folder.
#[derive(Clone, Debug)]
pub struct FolderFilesGrant {
    inner: Arc<Folder>,
}

#[derive(Debug)]
struct Folder {
    root: PathBuf,
    /// Relative path (`/`-separated) → size when listed.
    unread: BTreeMap<String, u64>,
    /// Largest file the backend may be given.
    max_bytes: u64,
}

impl FolderFilesGrant {
    /// Grant the files `unread` (relative paths and listed sizes) of the folder at `root`,
    /// each refused once larger than `max_bytes`.
    pub fn new(
        root: PathBuf,
        unread: impl IntoIterator<Item = (String, u64)>,
        max_bytes: u64,
    ) -> FolderFilesGrant {
        FolderFilesGrant {
            inner: Arc::new(Folder {
                root,
                unread: unread.into_iter().collect(),
                max_bytes,
            }),
        }
    }

    /// The contents of the granted file `path`.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, Error> {
        let folder = &self.inner;
        if !folder.unread.contains_key(path) {
            return Err(error(
                ErrorCode::Denied,
                format!("read-file: `{path}` is not an unread file of this call's chart folder"),
            ));
        }
        // The path was listed by the host's own walk of the folder (no `..`, no absolute
        // path): joining it stays inside the folder.
        let full = folder.root.join(path);
        let unreadable = |e: std::io::Error| {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorCode::NotFound
            } else {
                ErrorCode::Unavailable
            };
            error(code, format!("read-file: {}: {e}", full.display()))
        };
        let too_large = || {
            error(
                ErrorCode::InvalidInput,
                format!(
                    "read-file: {} is larger than {} MiB",
                    full.display(),
                    folder.max_bytes >> 20
                ),
            )
        };
        let file = std::fs::File::open(&full).map_err(unreadable)?;
        let size = file.metadata().map_err(unreadable)?.len();
        if size > folder.max_bytes {
            return Err(too_large());
        }
        // Bounded also while reading: the file may grow after its size was read.
        let mut contents = Vec::with_capacity(size as usize);
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, folder.max_bytes + 1),
            &mut contents,
        )
        .map_err(unreadable)?;
        if contents.len() as u64 > folder.max_bytes {
            return Err(too_large());
        }
        Ok(contents)
    }
}

/// What the `folder-files` import sees of a call: the plugin's name and its grant.
pub struct FolderFilesView<'a> {
    /// The plugin's name.
    pub(crate) plugin: &'a str,
    /// The grant, if any.
    pub(crate) grant: Option<&'a FolderFilesGrant>,
}

impl Host for FolderFilesView<'_> {
    async fn read_file(&mut self, path: String) -> Result<Vec<u8>, Error> {
        let Some(grant) = self.grant else {
            return Err(error(
                ErrorCode::Denied,
                "read-file: this call renders no chart folder".to_owned(),
            ));
        };
        let started = std::time::Instant::now();
        let read = grant.read(&path);
        tracing::debug!(
            target: "capstan::plugin",
            plugin = self.plugin,
            path,
            bytes = read.as_ref().map_or(0, Vec::len),
            elapsed_us = started.elapsed().as_micros() as u64,
            "read an unread chart folder file"
        );
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_files_are_read_and_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README.md"), b"hello").unwrap();
        std::fs::write(dir.path().join("big.txt"), vec![b'x'; 64]).unwrap();
        std::fs::write(dir.path().join("secret"), b"no").unwrap();
        let grant = FolderFilesGrant::new(
            dir.path().to_path_buf(),
            [
                ("README.md".to_owned(), 5),
                ("big.txt".to_owned(), 64),
                ("gone.txt".to_owned(), 3),
            ],
            32,
        );
        assert_eq!(grant.read("README.md").unwrap(), b"hello");
        let denied = grant.read("secret").unwrap_err();
        assert!(matches!(denied.code, ErrorCode::Denied), "{denied:?}");
        assert!(denied.message.contains("`secret`"), "{}", denied.message);
        let too_big = grant.read("big.txt").unwrap_err();
        assert!(
            matches!(too_big.code, ErrorCode::InvalidInput),
            "{too_big:?}"
        );
        assert!(too_big.message.contains("big.txt"), "{}", too_big.message);
        let gone = grant.read("gone.txt").unwrap_err();
        assert!(matches!(gone.code, ErrorCode::NotFound), "{gone:?}");
        assert!(gone.message.contains("gone.txt"), "{}", gone.message);
    }
}
