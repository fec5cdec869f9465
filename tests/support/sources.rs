//! Building chart sources and a source catalog in tests: the first-party kinds' specs
//! (`git`, `helm-repository`) and the catalog of the loaded source components.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use capstan::plugins::PluginRuntime;
use capstan::sources::catalog::{SourceCatalog, describe_all};
use capstan::sources::{SecretRef, SourceSpec};

/// What a git source follows.
#[derive(Debug, Clone)]
pub enum GitReference {
    /// A branch (or any name the repository resolves).
    Branch(String),
    /// A tag.
    Tag(String),
    /// A commit id.
    Commit(String),
    /// The highest tag in a SemVer range.
    Semver(String),
}

/// A `git` source.
pub fn git_source(url: &str, reference: GitReference, path: &str) -> SourceSpec {
    let spec = match reference {
        GitReference::Branch(name) | GitReference::Tag(name) | GitReference::Commit(name) => {
            serde_json::json!({"url": url, "ref": name, "path": path})
        }
        GitReference::Semver(range) => {
            serde_json::json!({"url": url, "semver": range, "path": path})
        }
    };
    SourceSpec::new("git", &spec, None)
}

/// A `helm-repository` source.
pub fn helm_source(url: &str, chart: &str, version: &str) -> SourceSpec {
    SourceSpec::new(
        "helm-repository",
        &serde_json::json!({"url": url, "chart": chart, "version": version}),
        None,
    )
}

/// `source` with credentials from Secret `apps/<name>`.
pub fn with_secret(mut source: SourceSpec, name: &str) -> SourceSpec {
    source.credentials = Some(SecretRef {
        namespace: "apps".into(),
        name: name.into(),
    });
    source
}

/// The catalog of the loaded source plugins `names` (each must describe itself).
pub async fn catalog(runtime: &PluginRuntime, names: &[&str]) -> Arc<SourceCatalog> {
    let plugins = names
        .iter()
        .map(|name| runtime.source(name).expect("source plugin loaded"))
        .collect();
    let (catalog, failures) = describe_all(plugins, &BTreeMap::new()).await;
    assert!(failures.is_empty(), "{failures:?}");
    Arc::new(catalog.expect("catalog"))
}
