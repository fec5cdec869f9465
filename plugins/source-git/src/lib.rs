//! `source-git`: the chart source component for git repositories (world `source-plugin`).
//!
//! It never fetches git: the host owns the mirrors and fetches them; this component reads
//! the mirror of the source it is asked about through the `git` import. Its only network
//! access is to the chart repositories the spec lists for the chart's dependencies
//! (`dependencyRepositories`, through `wasi:http` as the host grants it).
//!
//! It serves the source kind `git` (spec: `url`, `ref` or `semver`, `path`; see
//! [`GIT_SCHEMA`]) and asks the host for a mirror of the spec's `url`.
//!
//! - `resolve` turns the reference (branch, tag, commit, or a SemVer range over tags) into a
//!   commit, and reports as `content-id` the id of the chart folder's tree at that commit, so
//!   a commit that does not touch the chart keeps the same content id (the host then reuses
//!   the artifact it has).
//! - `fetch` packages the chart folder at that commit into a chart archive, like
//!   `helm package`, deterministically (same tree, same bytes, same digest), after building
//!   its dependencies as `helm dependency build` does ([`dependencies`]): `file://` ones
//!   from the same commit (their folders count in the content id), others from the listed
//!   chart repositories.

mod dependencies;
mod package;
mod refs;

use capstan_plugin_sdk::source::capstan::plugin::git;
use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, HttpAccess, PluginInfo, Revision, SourceKind, SourceRequest,
};

/// The JSON Schema of a `git` spec: the repository, what to follow, and the chart folder.
const GIT_SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "minLength": 1, "description": "Repository URL: https://, http://, ssh://, git://, file:// or git@host:org/repo"},
    "ref": {"type": "string", "minLength": 1, "description": "Branch, tag or commit to follow (default master)"},
    "semver": {"type": "string", "minLength": 1, "description": "Follow the highest tag in this SemVer range instead of ref"},
    "path": {"type": "string", "description": "Chart folder inside the repository (default: the root)"},
    "insecure": {"type": "boolean", "description": "Let the host send the credentials Secret to a plain http:// URL (refused otherwise), and reach oci:// dependency registries over plain HTTP"},
    "dependencyRepositories": {"type": "array", "items": {"type": "string", "pattern": "^([Hh][Tt][Tt][Pp][Ss]?|oci)://"}, "description": "Helm chart repositories (https://, http:// or oci:// URLs, as in Chart.yaml) the chart's dependencies that are not in charts/ may be downloaded from, as after `helm repo add`; anonymous; an oci:// registry is reached over plain HTTP only with insecure: true"}
  },
  "not": {"required": ["ref", "semver"]},
  "additionalProperties": false
}"#;

/// A `git` spec.
#[derive(serde::Deserialize)]
struct GitSpec {
    url: String,
    #[serde(rename = "ref")]
    reference: Option<String>,
    semver: Option<String>,
    #[serde(default)]
    path: String,
    #[serde(default, rename = "dependencyRepositories")]
    dependency_repositories: Vec<String>,
    #[serde(default)]
    insecure: bool,
}

impl GitSpec {
    fn path(&self) -> &str {
        self.path.trim_matches('/')
    }
}

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

struct GitChartSource;

fn resolve_commit(repository: &git::Repository, spec: &GitSpec) -> Result<String, Error> {
    match &spec.semver {
        None => repository.resolve(spec.reference.as_deref().unwrap_or("master")),
        Some(range) => {
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
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![
            SourceKind::new(
                "git",
                "a chart folder in a git repository, at a branch, tag, commit or SemVer tag range",
                GIT_SCHEMA,
            )
            .with_git_mirror("/url")
            // Anonymous: the credentials Secret is the git remote's.
            .with_http(HttpAccess {
                shared_document: Some("index.yaml".into()),
                insecure_field: Some("/insecure".into()),
                ..HttpAccess::to("/dependencyRepositories")
            }),
        ])
    }

    // Errors name what failed; the host adds which source (URL, ref, path) it was.
    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        let spec: GitSpec = request.spec_as()?;
        let repository = git::open(&spec.url)?;
        let commit = resolve_commit(&repository, &spec)?;
        let content_id = dependencies::content_id(&repository, &commit, spec.path())?;
        Ok(Revision {
            id: commit,
            content_id,
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let spec: GitSpec = request.spec_as()?;
        let repository = git::open(&spec.url)?;
        let files = repository.read_tree(&at.id, spec.path())?;
        let mut files: Vec<package::SourceFile> = files
            .into_iter()
            .map(|f| package::SourceFile {
                path: f.path,
                executable: f.executable,
                contents: f.contents,
            })
            .collect();
        let place = dependencies::Place {
            repository: &repository,
            commit: &at.id,
            chart_repositories: &spec.dependency_repositories,
            plain_http_registries: spec.insecure,
        };
        dependencies::build(&place, spec.path(), &mut files, 0).map_err(|e| Error {
            message: format!("chart at commit {}: {}", at.id, e.message),
            ..e
        })?;
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
