//! Source sync: decides which chart artifact each release should run (DESIGN.md, "Two
//! loops, one store"). Level-triggered: every pass starts from the current set of release
//! specs, so a mirror nothing references any more is collected whatever the reason.

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
