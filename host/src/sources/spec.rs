//! Reading a release's chart source from a HelmRelease document (for `capstan source`),
//! and the credentials a source's Secret holds. The chart fields are mapped to a source
//! kind and spec by [`crate::api::ChartSource::kind_and_spec`], the one place that knows
//! the Flux Helm Operator's field names (`chart.git`/`ref`/`path`,
//! `chart.repository`/`name`/`version`, `chart.secretRef`/`chartPullSecret`) next to the
//! generic `chart.source`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Secret;

use super::mirrors::{GitAccess, GitCredentials};
use super::{ReleaseKey, SecretRef, SourceSpec};
use crate::api::HelmRelease;

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

/// The release key and chart source of a HelmRelease document read from `file`.
pub fn source_of_document(
    document: &str,
    file: &Path,
) -> Result<(ReleaseKey, SourceSpec), SpecError> {
    let error = |field: &str, message: String| SpecError {
        file: file.to_owned(),
        field: field.into(),
        message,
    };
    let value: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(document).map_err(|e| error("document", e.to_string()))?;
    let kind = value
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or_default();
    if kind != "HelmRelease" {
        return Err(error(
            "kind",
            format!("expected HelmRelease, found `{kind}`"),
        ));
    }
    let hr: HelmRelease =
        serde_yaml_ng::from_value(value).map_err(|e| error("document", e.to_string()))?;
    let release = ReleaseKey {
        namespace: hr
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name: hr
            .metadata
            .name
            .clone()
            .ok_or_else(|| error("metadata.name", "missing".into()))?,
    };
    let source =
        source_of(&hr.spec.chart, &release.namespace).map_err(|e| error(e.field, e.message))?;
    Ok((release, source))
}

/// The source a HelmRelease's chart fields name, with its credentials Secret resolved
/// against the release's `namespace`.
pub fn source_of(
    chart: &crate::api::ChartSource,
    namespace: &str,
) -> Result<SourceSpec, crate::api::ChartSpecError> {
    let (kind, spec, secret) = chart.kind_and_spec()?;
    let credentials = secret.map(|r| SecretRef {
        namespace: r.namespace.clone().unwrap_or_else(|| namespace.to_owned()),
        name: r.name.clone(),
    });
    Ok(SourceSpec::new(kind, &spec, credentials))
}

/// How to reach a git remote, from a Secret's data (Flux's keys): `username` + `password`
/// for HTTPS or `identity` (a private key) for SSH; `known_hosts` for SSH host keys; a CA
/// bundle (`ca.crt` or `caFile`) for HTTPS.
pub fn git_access(data: &BTreeMap<String, Vec<u8>>) -> Result<GitAccess, String> {
    let field = |key: &str| {
        data.get(key)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    let credentials = match (field("identity"), field("username"), field("password")) {
        (Some(private_key), username, _) => Some(GitCredentials::SshKey {
            username: username.unwrap_or_else(|| "git".into()),
            private_key,
        }),
        (None, Some(username), Some(password)) => {
            Some(GitCredentials::Basic { username, password })
        }
        _ => None,
    };
    let access = GitAccess {
        credentials,
        ca_bundle: ca_bundle(data),
        known_hosts: field("known_hosts"),
    };
    if access.credentials.is_none() && access.ca_bundle.is_none() && access.known_hosts.is_none() {
        return Err(
            "needs keys `username` and `password` (HTTPS) or `identity` (SSH), or `known_hosts` or `ca.crt`"
                .into(),
        );
    }
    Ok(access)
}

/// A PEM CA bundle held in a Secret's data (`ca.crt`, or `caFile` as Helm's repository
/// files name it), to trust for HTTPS to the source.
pub fn ca_bundle(data: &BTreeMap<String, Vec<u8>>) -> Option<Vec<u8>> {
    ["ca.crt", "caFile"]
        .into_iter()
        .find_map(|key| data.get(key))
        .cloned()
}

/// Credentials Secrets read beforehand (e.g. from the cluster), by reference; a Secret
/// that could not be read is kept with the reason.
#[derive(Debug, Default)]
pub struct KnownCredentials(pub BTreeMap<SecretRef, Result<BTreeMap<String, Vec<u8>>, String>>);

impl KnownCredentials {
    /// Remember `secret` as read.
    pub fn insert_secret(&mut self, reference: SecretRef, secret: &Secret) {
        let data = secret
            .data
            .as_ref()
            .map(|data| data.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect())
            .unwrap_or_default();
        self.0.insert(reference, Ok(data));
    }

    /// Remember that `secret` could not be read, and why.
    pub fn insert_error(&mut self, reference: SecretRef, message: String) {
        self.0.insert(reference, Err(message));
    }
}

impl CredentialsLookup for KnownCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        self.0
            .get(secret)
            .cloned()
            .unwrap_or_else(|| Err("not read".into()))
    }
}

/// Reads the data of a source's credentials Secret.
pub trait CredentialsLookup: Send + Sync {
    /// The Secret's data, or why it cannot be had.
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String>;

    /// How to reach a git remote with `secret` (credentials, known hosts, CA), or why it
    /// cannot be had.
    fn git(&self, secret: &SecretRef) -> Result<GitAccess, String> {
        git_access(&self.data(secret)?)
    }

    /// A PEM CA bundle in `secret` to trust for HTTPS, if any.
    fn ca_bundle(&self, secret: &SecretRef) -> Option<Vec<u8>> {
        self.data(secret).ok().and_then(|d| ca_bundle(&d))
    }
}

/// No credentials available anywhere (every lookup fails).
pub struct NoCredentials;

impl CredentialsLookup for NoCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
        Err(format!(
            "secret {}/{} is not available",
            secret.namespace, secret.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(document: &str) -> Result<(ReleaseKey, SourceSpec), SpecError> {
        source_of_document(document, Path::new("hr.yaml"))
    }

    #[test]
    fn reads_flux_helm_operator_git_fields_with_their_defaults() {
        let (release, source) = read(
            "apiVersion: helm.fluxcd.io/v1\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: demo}\n\
             spec:\n  chart:\n    git: https://example.com/charts.git\n    path: /charts/podinfo/\n    secretRef: {name: git-auth}\n",
        )
        .unwrap();
        assert_eq!(release.to_string(), "demo/podinfo");
        assert_eq!(source.kind, "git");
        assert_eq!(
            source.spec_value(),
            serde_json::json!({"url": "https://example.com/charts.git", "ref": "master", "path": "charts/podinfo"})
        );
        assert_eq!(
            source.credentials,
            Some(SecretRef {
                namespace: "demo".into(),
                name: "git-auth".into()
            })
        );
    }

    #[test]
    fn reads_helm_repository_and_generic_sources() {
        let (release, source) = read(
            "kind: HelmRelease\nmetadata: {name: web, namespace: apps}\n\
             spec:\n  chart:\n    repository: https://charts.example.com/stable/\n    name: nginx\n    version: \">=1.2 <2\"\n    chartPullSecret: {name: repo-auth}\n",
        )
        .unwrap();
        assert_eq!(release.to_string(), "apps/web");
        assert_eq!(source.kind, "helm-repository");
        assert_eq!(
            source.spec_value(),
            serde_json::json!({"url": "https://charts.example.com/stable/", "chart": "nginx", "version": ">=1.2 <2"})
        );
        assert_eq!(source.credentials.unwrap().name, "repo-auth");
        let (_, oci) = read(
            "kind: HelmRelease\nmetadata: {name: a}\nspec:\n  chart:\n    source:\n      kind: oci\n      spec: {url: \"oci://r.example/c/podinfo\", version: \"1.x\"}\n      secretRef: {name: reg, namespace: shared}\n",
        )
        .unwrap();
        assert_eq!(oci.kind, "oci");
        assert_eq!(
            oci.spec,
            r#"{"url":"oci://r.example/c/podinfo","version":"1.x"}"#
        );
        assert_eq!(oci.credentials.unwrap().namespace, "shared");
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let nameless = read(
            "kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {repository: https://h/}}\n",
        )
        .unwrap_err();
        assert!(
            nameless
                .to_string()
                .starts_with("hr.yaml: spec.chart.name: missing"),
            "{nameless}"
        );
        let missing =
            read("kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {path: x}}\n").unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("hr.yaml: spec.chart: names no chart source"),
            "{missing}"
        );
        let both = read(
            "kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {git: g, source: {kind: oci}}}\n",
        )
        .unwrap_err();
        assert_eq!(both.field, "spec.chart.source");
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
