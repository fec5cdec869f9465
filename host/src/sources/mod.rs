//! Source sync: decides which chart artifact each release should run (DESIGN.md, "Two
//! loops, one store"). Level-triggered: every pass starts from the current set of release
//! specs, so a mirror (git) or index cache (Helm repository) nothing references any more
//! is collected whatever the reason.

pub mod artifacts;
pub mod mirrors;
pub mod registry;
pub mod spec;
pub mod sync;

use std::fmt;

/// Identifies one release (its HelmRelease's namespace and name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseKey {
    /// Namespace of the HelmRelease.
    pub namespace: String,
    /// Name of the HelmRelease.
    pub name: String,
}

impl fmt::Display for ReleaseKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A Secret holding source credentials.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretRef {
    /// Namespace of the Secret.
    pub namespace: String,
    /// Name of the Secret.
    pub name: String,
}

/// Which git reference a release follows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GitReference {
    /// Tip of a branch.
    Branch(String),
    /// A tag.
    Tag(String),
    /// A fixed commit.
    Commit(String),
    /// Highest tag in a SemVer range.
    Semver(String),
}

/// A chart in a git repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GitChartSource {
    /// Repository URL.
    pub url: String,
    /// Reference to follow.
    pub reference: GitReference,
    /// Chart folder inside the repository.
    pub path: String,
    /// Secret with credentials, if the repository needs them.
    pub credentials: Option<SecretRef>,
}

impl GitReference {
    /// The reference a HelmRelease's `chart.ref` names: a full 40-hex commit id is a
    /// commit; anything else (branch names, tags, short commits) resolves through the
    /// branch lookup. Empty or missing means [`spec::DEFAULT_GIT_REF`].
    pub fn from_ref_field(text: Option<&str>) -> GitReference {
        let text = text
            .filter(|r| !r.is_empty())
            .unwrap_or(spec::DEFAULT_GIT_REF);
        if text.len() == 40 && text.chars().all(|c| c.is_ascii_hexdigit()) {
            GitReference::Commit(text.to_owned())
        } else {
            GitReference::Branch(text.to_owned())
        }
    }
}

impl GitChartSource {
    /// The mirror this source reads: one per (URL, credentials).
    pub fn mirror_key(&self) -> MirrorKey {
        MirrorKey {
            url: self.url.clone(),
            credentials: self.credentials.clone(),
        }
    }
}

/// What one mirror is shared by: releases with the same URL and the same credentials.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MirrorKey {
    /// Repository URL.
    pub url: String,
    /// Credentials Secret, if any.
    pub credentials: Option<SecretRef>,
}

impl fmt::Display for MirrorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.credentials {
            Some(secret) => write!(
                f,
                "{} (credentials {}/{})",
                self.url, secret.namespace, secret.name
            ),
            None => f.write_str(&self.url),
        }
    }
}

/// A chart published in a Helm HTTP repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HelmRepositorySource {
    /// Repository URL (where `index.yaml` lives).
    pub url: String,
    /// Chart name in the index.
    pub chart: String,
    /// Exact version or SemVer constraint; empty means the latest stable version.
    pub version: String,
    /// Secret with basic-auth credentials (`username`, `password`), if the repository needs them.
    pub credentials: Option<SecretRef>,
}

impl HelmRepositorySource {
    /// The index cache this source reads: one per (repository URL, credentials). A
    /// trailing `/` does not make another repository.
    pub fn repository_key(&self) -> MirrorKey {
        MirrorKey {
            url: self.url.trim().trim_end_matches('/').to_owned(),
            credentials: self.credentials.clone(),
        }
    }
}

/// Where a release's chart comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChartSource {
    /// A chart folder in a git repository (`spec.chart.git`).
    Git(GitChartSource),
    /// A chart in a Helm HTTP repository (`spec.chart.repository`).
    HelmRepository(HelmRepositorySource),
}

impl ChartSource {
    /// The Secret holding the source's credentials, if any.
    pub fn credentials(&self) -> Option<&SecretRef> {
        match self {
            ChartSource::Git(git) => git.credentials.as_ref(),
            ChartSource::HelmRepository(repo) => repo.credentials.as_ref(),
        }
    }
}

impl From<GitChartSource> for ChartSource {
    fn from(source: GitChartSource) -> Self {
        ChartSource::Git(source)
    }
}

impl From<HelmRepositorySource> for ChartSource {
    fn from(source: HelmRepositorySource) -> Self {
        ChartSource::HelmRepository(source)
    }
}
