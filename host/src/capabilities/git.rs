//! The `git` host interface: read access to the host's mirrors (see
//! [`crate::sources::mirrors`]). A plugin call may open only the mirror of the source it
//! is handling, and only reads.

use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use wasmtime::component::Resource;

use super::error;
use crate::plugins::bindings::git::{File, Host, HostRepository, Tag};
use crate::plugins::bindings::types::{Error, ErrorCode};
use crate::plugins::call::CallState;

/// Largest total size of the files one `read-tree` call returns.
pub const MAX_TREE_BYTES: usize = 64 << 20;

/// Read access to the mirror of one repository, for one plugin call.
#[derive(Debug, Clone)]
pub struct GitGrant {
    url: String,
    mirror: PathBuf,
}

impl GitGrant {
    /// Grant reading `mirror` (a bare repository kept by the host) as the repository `url`.
    pub fn new(url: impl Into<String>, mirror: impl Into<PathBuf>) -> Self {
        GitGrant {
            url: url.into(),
            mirror: mirror.into(),
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
        let path = grant.mirror.clone();
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
