//! Reading a release's chart source from a HelmRelease document. Field names and defaults
//! follow the Flux Helm Operator's `helm.fluxcd.io/v1` (`chart.git`, `chart.ref` defaulting
//! to `master`, `chart.path`, `chart.secretRef`), which Capstan keeps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Secret;
use serde_yaml::Value;

use super::mirrors::GitCredentials;
use super::sync::CredentialsLookup;
use super::{GitChartSource, GitReference, ReleaseKey, SecretRef};

/// The ref followed when `chart.ref` is empty, as the Flux Helm Operator did.
pub const DEFAULT_GIT_REF: &str = "master";

/// A HelmRelease that cannot be read, naming the file and the field.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct SpecError {
    /// The document's file.
    pub file: PathBuf,
    /// The field at fault, e.g. `spec.chart.git`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

fn text<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(value, |v, key| v.get(*key))?.as_str()
}

/// The release key and git chart source of a HelmRelease document read from `file`.
pub fn git_source_of(
    document: &str,
    file: &Path,
) -> Result<(ReleaseKey, GitChartSource), SpecError> {
    let error = |field: &str, message: &str| SpecError {
        file: file.to_owned(),
        field: field.into(),
        message: message.into(),
    };
    let value: Value =
        serde_yaml::from_str(document).map_err(|e| error("document", &e.to_string()))?;
    let kind = text(&value, &["kind"]).unwrap_or_default();
    if kind != "HelmRelease" {
        return Err(error(
            "kind",
            &format!("expected HelmRelease, found `{kind}`"),
        ));
    }
    let name =
        text(&value, &["metadata", "name"]).ok_or_else(|| error("metadata.name", "missing"))?;
    let namespace = text(&value, &["metadata", "namespace"]).unwrap_or("default");
    let chart = value
        .get("spec")
        .and_then(|s| s.get("chart"))
        .ok_or_else(|| error("spec.chart", "missing"))?;
    let url = text(chart, &["git"]).filter(|u| !u.is_empty());
    let Some(url) = url else {
        return Err(if text(chart, &["repository"]).is_some() {
            error(
                "spec.chart.repository",
                "Helm repository sources are not supported by this command yet; only spec.chart.git",
            )
        } else {
            error("spec.chart.git", "missing")
        });
    };
    let reference = text(chart, &["ref"])
        .filter(|r| !r.is_empty())
        .unwrap_or(DEFAULT_GIT_REF);
    let reference = if reference.len() == 40 && reference.chars().all(|c| c.is_ascii_hexdigit()) {
        GitReference::Commit(reference.to_owned())
    } else {
        // Branch names, tags and short commits all resolve through the same lookup.
        GitReference::Branch(reference.to_owned())
    };
    let path = text(chart, &["path"])
        .unwrap_or_default()
        .trim_matches('/')
        .to_owned();
    let credentials = match chart.get("secretRef") {
        None | Some(Value::Null) => None,
        Some(secret) => {
            let name = text(secret, &["name"])
                .ok_or_else(|| error("spec.chart.secretRef.name", "missing"))?;
            let secret_namespace = text(secret, &["namespace"]).unwrap_or(namespace);
            Some(SecretRef {
                namespace: secret_namespace.to_owned(),
                name: name.to_owned(),
            })
        }
    };
    let release = ReleaseKey {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    };
    Ok((
        release,
        GitChartSource {
            url: url.to_owned(),
            reference,
            path,
            credentials,
        },
    ))
}

/// Git credentials held in a Secret: `username` + `password` for HTTPS, or `identity` (a
/// private key) for SSH.
pub fn credentials_from_secret(secret: &Secret) -> Result<GitCredentials, String> {
    let data = secret.data.clone().unwrap_or_default();
    let field = |key: &str| {
        data.get(key)
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
    };
    if let Some(private_key) = field("identity") {
        return Ok(GitCredentials::SshKey {
            username: field("username").unwrap_or_else(|| "git".into()),
            private_key,
        });
    }
    match (field("username"), field("password")) {
        (Some(username), Some(password)) => Ok(GitCredentials::Basic { username, password }),
        _ => Err("needs keys `username` and `password` (HTTPS) or `identity` (SSH)".into()),
    }
}

/// Credentials read beforehand (e.g. from the cluster), by Secret.
#[derive(Debug, Default)]
pub struct KnownCredentials(pub BTreeMap<SecretRef, Result<GitCredentials, String>>);

impl CredentialsLookup for KnownCredentials {
    fn git(&self, secret: &SecretRef) -> Result<GitCredentials, String> {
        self.0
            .get(secret)
            .cloned()
            .unwrap_or_else(|| Err("not read".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(document: &str) -> Result<(ReleaseKey, GitChartSource), SpecError> {
        git_source_of(document, Path::new("hr.yaml"))
    }

    #[test]
    fn reads_flux_helm_operator_fields_with_their_defaults() {
        let (release, source) = read(
            "apiVersion: helm.fluxcd.io/v1\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: demo}\n\
             spec:\n  chart:\n    git: https://example.com/charts.git\n    path: /charts/podinfo/\n    secretRef: {name: git-auth}\n",
        )
        .unwrap();
        assert_eq!(release.to_string(), "demo/podinfo");
        assert_eq!(source.reference, GitReference::Branch("master".into()));
        assert_eq!(source.path, "charts/podinfo");
        assert_eq!(
            source.credentials,
            Some(SecretRef {
                namespace: "demo".into(),
                name: "git-auth".into()
            })
        );
        let (_, pinned) = read(&format!(
            "kind: HelmRelease\nmetadata: {{name: a}}\nspec: {{chart: {{git: g, ref: {}}}}}\n",
            "a".repeat(40)
        ))
        .unwrap();
        assert_eq!(pinned.reference, GitReference::Commit("a".repeat(40)));
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let missing =
            read("kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {path: x}}\n").unwrap_err();
        assert_eq!(missing.to_string(), "hr.yaml: spec.chart.git: missing");
        let wrong = read("kind: ConfigMap\n").unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "hr.yaml: kind: expected HelmRelease, found `ConfigMap`"
        );
        let broken = read("kind: [\n").unwrap_err();
        assert!(
            broken.to_string().starts_with("hr.yaml: document: "),
            "{broken}"
        );
    }
}
