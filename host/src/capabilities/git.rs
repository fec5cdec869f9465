//! The `git` host interface and the mirrors behind it. The host owns bare mirrors (one per
//! repository URL, named by a hash so that URLs and credentials never appear on disk); a
//! plugin call may open only the mirror of the source it is handling, and only reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use sha2::{Digest, Sha256};
use wasmtime::component::Resource;

use super::error;
use crate::plugins::bindings::git::{File, Host, HostRepository, Tag};
use crate::plugins::bindings::types::{Error, ErrorCode};
use crate::plugins::call::CallState;

/// Largest total size of the files one `read-tree` call returns.
pub const MAX_TREE_BYTES: usize = 64 << 20;

/// Errors of mirror maintenance (host side).
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// A git operation failed.
    #[error("git mirror of {url}: {message}")]
    Git {
        /// Repository URL (never with credentials).
        url: String,
        /// What failed.
        message: String,
    },
}

/// A folder of bare git mirrors.
#[derive(Debug)]
pub struct MirrorStore {
    dir: PathBuf,
}

impl MirrorStore {
    /// Mirrors kept under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        MirrorStore { dir: dir.into() }
    }

    /// Folder of the mirror of `url`.
    pub fn path_of(&self, url: &str) -> PathBuf {
        let digest = hex::encode(Sha256::digest(url.as_bytes()));
        self.dir.join(&digest[..32])
    }

    /// Create the mirror of `url` if needed and fetch every branch and tag into it.
    /// Blocking: call from a blocking thread.
    pub fn sync_blocking(&self, url: &str) -> Result<PathBuf, MirrorError> {
        let failed = |e: git2::Error| MirrorError::Git {
            url: url.to_owned(),
            message: e.message().to_owned(),
        };
        let path = self.path_of(url);
        let repository = match Repository::open_bare(&path) {
            Ok(repository) => repository,
            Err(_) => {
                std::fs::create_dir_all(&path).map_err(|e| MirrorError::Git {
                    url: url.to_owned(),
                    message: e.to_string(),
                })?;
                Repository::init_bare(&path).map_err(failed)?
            }
        };
        let mut remote = repository.remote_anonymous(url).map_err(failed)?;
        remote
            .fetch(
                &["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                None,
                None,
            )
            .map_err(failed)?;
        Ok(path)
    }

    /// Async wrapper of [`MirrorStore::sync_blocking`].
    pub async fn sync(self: &Arc<Self>, url: &str) -> Result<PathBuf, MirrorError> {
        let store = Arc::clone(self);
        let url = url.to_owned();
        let owned_url = url.clone();
        tokio::task::spawn_blocking(move || store.sync_blocking(&url))
            .await
            .unwrap_or_else(|e| {
                Err(MirrorError::Git {
                    url: owned_url,
                    message: format!("mirror task failed: {e}"),
                })
            })
    }
}

/// Read access to the mirror of one repository, for one plugin call.
#[derive(Debug, Clone)]
pub struct GitGrant {
    store: Arc<MirrorStore>,
    url: String,
}

impl GitGrant {
    /// Grant reading the mirror of `url` from `store`.
    pub fn new(store: Arc<MirrorStore>, url: impl Into<String>) -> Self {
        GitGrant {
            store,
            url: url.into(),
        }
    }
}

/// An open mirror, as held in a call's resource table.
#[derive(Debug)]
pub struct OpenRepository {
    path: PathBuf,
}

fn git_error(what: &str, e: git2::Error) -> Error {
    let code = match e.code() {
        git2::ErrorCode::NotFound => ErrorCode::NotFound,
        git2::ErrorCode::InvalidSpec | git2::ErrorCode::Ambiguous => ErrorCode::InvalidInput,
        _ => ErrorCode::Internal,
    };
    error(code, format!("{what}: {}", e.message()))
}

async fn blocking<T: Send + 'static>(
    path: &Path,
    work: impl FnOnce(&Repository) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let repository = Repository::open_bare(&path).map_err(|e| git_error("open mirror", e))?;
        work(&repository)
    })
    .await
    .unwrap_or_else(|e| Err(error(ErrorCode::Internal, format!("git task failed: {e}"))))
}

fn resolve_commit(repository: &Repository, reference: &str) -> Result<Oid, Error> {
    let candidates = [
        format!("refs/heads/{reference}"),
        format!("refs/tags/{reference}"),
        reference.to_owned(),
    ];
    for candidate in &candidates {
        if let Ok(object) = repository.revparse_single(candidate) {
            return object
                .peel_to_commit()
                .map(|commit| commit.id())
                .map_err(|e| git_error(&format!("`{reference}` is not a commit"), e));
        }
    }
    Err(error(
        ErrorCode::NotFound,
        format!("no branch, tag or commit named `{reference}`"),
    ))
}

fn subtree<'r>(
    repository: &'r Repository,
    commit: &str,
    path: &str,
) -> Result<git2::Tree<'r>, Error> {
    let oid = Oid::from_str(commit).map_err(|e| git_error(&format!("commit id `{commit}`"), e))?;
    let tree = repository
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(|e| git_error(&format!("commit {commit}"), e))?;
    let path = path.trim_matches('/');
    if path.is_empty() {
        return Ok(tree);
    }
    let entry = tree.get_path(Path::new(path)).map_err(|_| {
        error(
            ErrorCode::NotFound,
            format!("path `{path}` does not exist at commit {commit}"),
        )
    })?;
    entry
        .to_object(repository)
        .and_then(|object| object.peel_to_tree())
        .map_err(|_| {
            error(
                ErrorCode::InvalidInput,
                format!("path `{path}` at commit {commit} is not a folder"),
            )
        })
}

impl CallState {
    fn repository_path(&self, handle: &Resource<OpenRepository>) -> Result<PathBuf, Error> {
        self.table
            .get(handle)
            .map(|open| open.path.clone())
            .map_err(|e| error(ErrorCode::Internal, format!("repository handle: {e}")))
    }
}

impl Host for CallState {
    async fn open(&mut self, url: String) -> Result<Resource<OpenRepository>, Error> {
        let grant =
            self.grants.git.as_ref().ok_or_else(|| {
                error(ErrorCode::Denied, "git access is not granted to this call")
            })?;
        if grant.url != url {
            return Err(error(
                ErrorCode::Denied,
                format!("repository `{url}` is not the source of this call"),
            ));
        }
        let path = grant.store.path_of(&url);
        if !path.is_dir() {
            return Err(error(
                ErrorCode::Unavailable,
                format!("the mirror of `{url}` has not been fetched yet"),
            ));
        }
        self.table.push(OpenRepository { path }).map_err(|e| {
            error(
                ErrorCode::Internal,
                format!("cannot open repository handle: {e}"),
            )
        })
    }
}

impl HostRepository for CallState {
    async fn resolve(
        &mut self,
        handle: Resource<OpenRepository>,
        reference: String,
    ) -> Result<String, Error> {
        let path = self.repository_path(&handle)?;
        blocking(&path, move |repository| {
            resolve_commit(repository, &reference).map(|oid| oid.to_string())
        })
        .await
    }

    async fn tags(&mut self, handle: Resource<OpenRepository>) -> Result<Vec<Tag>, Error> {
        let path = self.repository_path(&handle)?;
        blocking(&path, |repository| {
            let names = repository
                .tag_names(None)
                .map_err(|e| git_error("list tags", e))?;
            let mut tags = Vec::new();
            for index in 0..names.len() {
                let Ok(Some(name)) = names.get(index) else {
                    continue;
                };
                if let Ok(oid) = resolve_commit(repository, name) {
                    tags.push(Tag {
                        name: name.to_owned(),
                        commit: oid.to_string(),
                    });
                }
            }
            Ok(tags)
        })
        .await
    }

    async fn tree_id(
        &mut self,
        handle: Resource<OpenRepository>,
        commit: String,
        path: String,
    ) -> Result<String, Error> {
        let repository_path = self.repository_path(&handle)?;
        blocking(&repository_path, move |repository| {
            Ok(subtree(repository, &commit, &path)?.id().to_string())
        })
        .await
    }

    async fn read_tree(
        &mut self,
        handle: Resource<OpenRepository>,
        commit: String,
        path: String,
    ) -> Result<Vec<File>, Error> {
        let repository_path = self.repository_path(&handle)?;
        blocking(&repository_path, move |repository| {
            let tree = subtree(repository, &commit, &path)?;
            let mut files = Vec::new();
            let mut total = 0usize;
            let mut failure = None;
            tree.walk(TreeWalkMode::PreOrder, |folder, entry| {
                if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
                    return TreeWalkResult::Ok;
                }
                let name = format!("{folder}{}", entry.name().unwrap_or_default());
                match repository.find_blob(entry.id()) {
                    Ok(blob) => {
                        total += blob.size();
                        if total > MAX_TREE_BYTES {
                            failure = Some(error(
                                ErrorCode::InvalidInput,
                                format!(
                                    "`{path}` at {commit} holds more than {} MiB",
                                    MAX_TREE_BYTES >> 20
                                ),
                            ));
                            return TreeWalkResult::Abort;
                        }
                        files.push(File {
                            path: name,
                            executable: entry.filemode() == 0o100755,
                            contents: blob.content().to_vec(),
                        });
                        TreeWalkResult::Ok
                    }
                    Err(e) => {
                        failure = Some(git_error(&format!("read {name}"), e));
                        TreeWalkResult::Abort
                    }
                }
            })
            .or_else(|e| {
                if failure.is_some() {
                    Ok(())
                } else {
                    Err(git_error("walk tree", e))
                }
            })?;
            match failure {
                Some(failure) => Err(failure),
                None => Ok(files),
            }
        })
        .await
    }

    async fn drop(&mut self, handle: Resource<OpenRepository>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}
