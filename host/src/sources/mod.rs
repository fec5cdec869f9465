//! Source sync: decides which chart artifact each release should run (DESIGN.md, "Two
//! loops, one store"). Level-triggered: every pass starts from the current set of release
//! specs, so a mirror or shared document cache nothing references any more is collected
//! whatever the reason. Source kinds are open (see [`catalog`]): the host only knows the
//! capabilities a kind declared (git mirrors, HTTP origins, credentials keys).

pub mod artifacts;
pub mod catalog;
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

/// Where a release's chart comes from: a source kind (served by whichever plugin declared
/// it) and the kind's spec, plus the Secret with credentials if the release names one.
/// The host does not interpret the spec beyond the fields the kind's capabilities point
/// at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceSpec {
    /// Source kind, e.g. `git`, `helm-repository`, `oci`.
    pub kind: String,
    /// The spec as canonical JSON (object keys sorted), so equal specs compare equal.
    pub spec: String,
    /// Secret with credentials, if the source needs them.
    pub credentials: Option<SecretRef>,
}

impl SourceSpec {
    /// A source of `kind` with `spec` (any JSON value; kept canonical).
    pub fn new(
        kind: impl Into<String>,
        spec: &serde_json::Value,
        credentials: Option<SecretRef>,
    ) -> Self {
        SourceSpec {
            kind: kind.into(),
            spec: canonical_json(spec),
            credentials,
        }
    }

    /// The spec as a JSON value.
    pub fn spec_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.spec).unwrap_or(serde_json::Value::Null)
    }

    /// The Secret holding the source's credentials, if any.
    pub fn credentials(&self) -> Option<&SecretRef> {
        self.credentials.as_ref()
    }
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} source {}", self.kind, redact_userinfo(&self.spec))
    }
}

/// JSON text with object keys sorted at every level.
pub fn canonical_json(value: &serde_json::Value) -> String {
    fn sorted(value: &serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(map) => {
                let ordered: std::collections::BTreeMap<&String, serde_json::Value> =
                    map.iter().map(|(k, v)| (k, sorted(v))).collect();
                serde_json::Value::Object(
                    ordered.into_iter().map(|(k, v)| (k.clone(), v)).collect(),
                )
            }
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(sorted).collect())
            }
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// `text` with the user information of every `scheme://user:pass@host` URL in it removed,
/// for messages.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c == '"' || c.is_whitespace())
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(userinfo_end) => out.push_str(&tail[userinfo_end + 1..end]),
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_specs_compare_equal_whatever_the_key_order() {
        let a = SourceSpec::new(
            "oci",
            &serde_json::json!({"url": "oci://r/c", "version": "1"}),
            None,
        );
        let b = SourceSpec::new(
            "oci",
            &serde_json::json!({"version": "1", "url": "oci://r/c"}),
            None,
        );
        assert_eq!(a, b);
        assert_eq!(a.spec, r#"{"url":"oci://r/c","version":"1"}"#);
    }

    #[test]
    fn userinfo_is_removed_from_messages() {
        assert_eq!(
            redact_userinfo(r#"{"url":"https://u:secret@h.example/x","b":"ssh://git@h/y"}"#),
            r#"{"url":"https://h.example/x","b":"ssh://h/y"}"#
        );
    }
}
