//! The `git` host interface: read access to the host's mirrors (see
//! [`crate::sources::mirrors`]). A plugin call may open only the mirror of the source it
//! is handling, and only reads.

use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use wasmtime::component::Resource;

use wasmtime::component::ResourceTable;

use super::bindings::git::{File, Host, HostRepository, Tag};
use super::bindings::types::{Error, ErrorCode};
use super::errors::error;
use super::resources::OpenRepository;

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

/// Every file under `path` at `commit` (symlinks skipped: a chart cannot point outside its
/// tree), failing once their total size would pass `cap`. Sizes come from object headers,
/// so an oversized blob is refused before it is inflated: a 2 GiB blob costs a header
/// read, not 2 GiB of memory.
fn read_files(
    repository: &Repository,
    commit: &str,
    path: &str,
    cap: usize,
) -> Result<Vec<File>, Error> {
    let tree = subtree(repository, commit, path)?;
    let odb = repository
        .odb()
        .map_err(|e| git_error("open object database", e))?;
    let mut files = Vec::new();
    let mut total = 0usize;
    let mut failure = None;
    let walked = tree.walk(TreeWalkMode::PreOrder, |folder, entry| {
        if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
            return TreeWalkResult::Ok;
        }
        let name = format!("{folder}{}", entry.name().unwrap_or_default());
        let read = odb.read_header(entry.id()).and_then(|(size, _)| {
            total = total.saturating_add(size);
            if total > cap {
                return Ok(None);
            }
            repository.find_blob(entry.id()).map(Some)
        });
        match read {
            Ok(Some(blob)) => {
                files.push(File {
                    path: name,
                    executable: entry.filemode() == 0o100755,
                    contents: blob.content().to_vec(),
                });
                TreeWalkResult::Ok
            }
            Ok(None) => {
                failure = Some(error(
                    ErrorCode::InvalidInput,
                    format!(
                        "`{path}` at {commit} holds more than {} MiB (at {name})",
                        cap >> 20
                    ),
                ));
                TreeWalkResult::Abort
            }
            Err(e) => {
                failure = Some(git_error(&format!("read {name}"), e));
                TreeWalkResult::Abort
            }
        }
    });
    match (walked, failure) {
        (_, Some(failure)) => Err(failure),
        (Err(e), None) => Err(git_error("walk tree", e)),
        (Ok(()), None) => Ok(files),
    }
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

/// The bytes of the file at `path` in `commit` (none when no file is there), sized from
/// its object header against `cap` before it is inflated.
fn read_file(
    repository: &Repository,
    commit: &str,
    path: &str,
    cap: usize,
) -> Result<Option<Vec<u8>>, Error> {
    let oid = Oid::from_str(commit).map_err(|e| git_error(&format!("commit id `{commit}`"), e))?;
    let tree = repository
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(|e| git_error(&format!("commit {commit}"), e))?;
    let Ok(entry) = tree.get_path(Path::new(path.trim_matches('/'))) else {
        return Ok(None);
    };
    if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
        return Ok(None);
    }
    let (size, _) = repository
        .odb()
        .and_then(|odb| odb.read_header(entry.id()))
        .map_err(|e| git_error(&format!("read `{path}` at {commit}"), e))?;
    if size > cap {
        return Err(error(
            ErrorCode::InvalidInput,
            format!("`{path}` at {commit} holds more than {} MiB", cap >> 20),
        ));
    }
    let blob = repository
        .find_blob(entry.id())
        .map_err(|e| git_error(&format!("read `{path}` at {commit}"), e))?;
    Ok(Some(blob.content().to_vec()))
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

/// What the `git` import sees of a call: its git grant and the call's resource table (for
/// the open repositories).
pub struct GitView<'a> {
    /// The grant, if any.
    pub(crate) grant: Option<&'a GitGrant>,
    /// The call's resources.
    pub(crate) table: &'a mut ResourceTable,
}

impl GitView<'_> {
    fn repository_path(&self, handle: &Resource<OpenRepository>) -> Result<PathBuf, Error> {
        self.table
            .get(handle)
            .map(|open| open.path.clone())
            .map_err(|e| error(ErrorCode::Internal, format!("repository handle: {e}")))
    }
}

impl Host for GitView<'_> {
    async fn open(&mut self, url: String) -> Result<Resource<OpenRepository>, Error> {
        let grant = self
            .grant
            .ok_or_else(|| error(ErrorCode::Denied, "git access is not granted to this call"))?;
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

impl HostRepository for GitView<'_> {
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
            read_files(repository, &commit, &path, MAX_TREE_BYTES)
        })
        .await
    }

    async fn read_file(
        &mut self,
        handle: Resource<OpenRepository>,
        commit: String,
        path: String,
    ) -> Result<Option<Vec<u8>>, Error> {
        let repository_path = self.repository_path(&handle)?;
        blocking(&repository_path, move |repository| {
            read_file(repository, &commit, &path, MAX_TREE_BYTES)
        })
        .await
    }

    async fn drop(&mut self, handle: Resource<OpenRepository>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Peak resident memory of this process since the last reset, in MiB (Linux).
    fn peak_rss_mib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib >> 10)
    }

    #[test]
    fn an_oversized_blob_is_refused_from_its_header_without_being_inflated() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path();
        git(work, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(work.join("chart/templates")).unwrap();
        std::fs::write(work.join("chart/Chart.yaml"), "name: big\nversion: 1.0.0\n").unwrap();
        // 512 MiB of zeros in a sparse file: git stores it in well under a MiB.
        let big = std::fs::File::create(work.join("chart/templates/big.yaml")).unwrap();
        big.set_len(512 << 20).unwrap();
        drop(big);
        git(work, &["add", "."]);
        git(work, &["commit", "-qm", "big"]);
        let commit = git(work, &["rev-parse", "HEAD"]);
        let repository = Repository::open(work).unwrap();

        // Reset the peak (writing 5 to clear_refs), so the reading below is what the read
        // costs; where the kernel does not allow it the check is skipped, the rest holds.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = peak_rss_mib();
        let error = read_files(&repository, &commit, "chart", MAX_TREE_BYTES).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(
            error.message.contains("`chart` at ")
                && error
                    .message
                    .contains("holds more than 64 MiB (at templates/big.yaml)"),
            "{}",
            error.message
        );
        if let (true, Some(before), Some(after)) = (reset, before, peak_rss_mib()) {
            assert!(
                after.saturating_sub(before) < 64,
                "reading the header of a 512 MiB blob raised the peak RSS from {before} to {after} MiB"
            );
        }
        // Within the cap the files are read.
        std::fs::remove_file(work.join("chart/templates/big.yaml")).unwrap();
        git(work, &["commit", "-qam", "small"]);
        let commit = git(work, &["rev-parse", "HEAD"]);
        let files = read_files(&repository, &commit, "chart", MAX_TREE_BYTES).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "Chart.yaml");
    }
}
