//! `source-git`: the chart source component for git repositories (world `source-plugin`).
//!
//! It never touches the network: the host owns the mirrors and fetches them; this
//! component reads the mirror of the source it is asked about through the `git` import.
//!
//! - `resolve` turns the reference (branch, tag, commit, or a SemVer range over tags) into a
//!   commit, and reports as `content-id` the id of the chart folder's tree at that commit, so
//!   a commit that does not touch the chart keeps the same content id (the host then reuses
//!   the artifact it has).
//! - `fetch` packages the chart folder at that commit into a chart archive, like
//!   `helm package`, deterministically (same tree, same bytes, same digest).

mod package;
mod refs;

use capstan_plugin_sdk::source::capstan::plugin::git;
use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    GitRef, GitSource, Guest, Revision, SourceRequest, SourceSpec,
};

struct GitChartSource;

fn git_source(request: &SourceRequest) -> Result<&GitSource, Error> {
    match &request.spec {
        SourceSpec::Git(git) => Ok(git),
        SourceSpec::HelmRepository(repo) => Err(Error::new(
            ErrorCode::InvalidInput,
            format!("source-git cannot serve Helm repository {}", repo.url),
        )),
    }
}

fn resolve_commit(repository: &git::Repository, reference: &GitRef) -> Result<String, Error> {
    match reference {
        GitRef::Branch(name) | GitRef::Tag(name) | GitRef::Commit(name) => repository.resolve(name),
        GitRef::Semver(range) => {
            let tags = repository.tags()?;
            let chosen = refs::highest_matching(range, tags.iter().map(|t| t.name.as_str()))
                .map_err(|message| Error::new(ErrorCode::InvalidInput, message))?;
            let tag = tags
                .iter()
                .find(|t| t.name == chosen)
                .map(|t| t.commit.clone());
            tag.ok_or_else(|| Error::new(ErrorCode::Internal, format!("tag {chosen} vanished")))
        }
    }
}

impl Guest for GitChartSource {
    // Errors name what failed; the host adds which source (URL, ref, path) it was.
    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        let source = git_source(&request)?;
        let repository = git::open(&source.url)?;
        let commit = resolve_commit(&repository, &source.reference)?;
        let tree = repository.tree_id(&commit, &source.path)?;
        Ok(Revision {
            id: commit,
            content_id: tree,
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let source = git_source(&request)?;
        let repository = git::open(&source.url)?;
        let files = repository.read_tree(&at.id, &source.path)?;
        let files: Vec<package::SourceFile> = files
            .into_iter()
            .map(|f| package::SourceFile {
                path: f.path,
                executable: f.executable,
                contents: f.contents,
            })
            .collect();
        let packaged = package::package(&files).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("chart at commit {}: {e}", at.id),
            )
        })?;
        Ok(package::into_artifact(packaged))
    }
}

capstan_plugin_sdk::source::export_source_plugin!(GitChartSource);
