//! Reading a release's chart source from a HelmRelease document. Field names and defaults
//! follow the Flux Helm Operator's `helm.fluxcd.io/v1`, which Capstan keeps: git charts
//! (`chart.git`, `chart.ref` defaulting to `master`, `chart.path`, `chart.secretRef`) and
//! Helm repository charts (`chart.repository`, `chart.name`, `chart.version`; credentials
//! from `chart.secretRef`, or `chart.chartPullSecret` as the Flux Helm Operator named it,
//! holding `username` and `password`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Secret;
use serde_yaml::Value;

use super::mirrors::GitCredentials;
use super::sync::CredentialsLookup;
use super::{
    ChartSource, GitChartSource, GitReference, HelmRepositorySource, ReleaseKey, SecretRef,
};

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

/// The release key and git chart source of a HelmRelease document read from `file`
/// (an error for a Helm repository source; see [`chart_source_of`]).
pub fn git_source_of(
    document: &str,
    file: &Path,
) -> Result<(ReleaseKey, GitChartSource), SpecError> {
    match chart_source_of(document, file)? {
        (release, ChartSource::Git(source)) => Ok((release, source)),
        (_, ChartSource::HelmRepository(_)) => Err(SpecError {
            file: file.to_owned(),
            field: "spec.chart.repository".into(),
            message: "this is a Helm repository source, not a git source".into(),
        }),
    }
}

/// The release key and chart source (git or Helm repository) of a HelmRelease document
/// read from `file`.
pub fn chart_source_of(
    document: &str,
    file: &Path,
) -> Result<(ReleaseKey, ChartSource), SpecError> {
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
    let secret_field = ["secretRef", "chartPullSecret"]
        .into_iter()
        .find(|field| !matches!(chart.get(*field), None | Some(Value::Null)));
    let credentials = match secret_field {
        None => None,
        Some(field) => {
            let secret = chart.get(field).unwrap_or(&Value::Null);
            let name = text(secret, &["name"])
                .ok_or_else(|| error(&format!("spec.chart.{field}.name"), "missing"))?;
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
    let git = text(chart, &["git"]).filter(|u| !u.is_empty());
    let repository = text(chart, &["repository"]).filter(|u| !u.is_empty());
    let url = match (git, repository) {
        (Some(_), Some(_)) => {
            return Err(error(
                "spec.chart",
                "sets both `git` and `repository`; a release has one chart source",
            ));
        }
        (None, Some(repository)) => {
            let chart_name = text(chart, &["name"])
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    error(
                        "spec.chart.name",
                        "missing (the chart's name in the repository index)",
                    )
                })?;
            let version = match chart.get("version") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(v)) => v.trim().to_owned(),
                Some(Value::Number(n)) => n.to_string(),
                Some(_) => return Err(error("spec.chart.version", "must be a string")),
            };
            return Ok((
                release,
                ChartSource::HelmRepository(HelmRepositorySource {
                    url: repository.trim().to_owned(),
                    chart: chart_name.to_owned(),
                    version,
                    credentials,
                }),
            ));
        }
        (Some(url), None) => url,
        (None, None) => {
            return Err(error(
                "spec.chart.git",
                "missing (a chart needs `git` or `repository`)",
            ));
        }
    };
    let reference = GitReference::from_ref_field(text(chart, &["ref"]));
    let path = text(chart, &["path"])
        .unwrap_or_default()
        .trim_matches('/')
        .to_owned();
    Ok((
        release,
        ChartSource::Git(GitChartSource {
            url: url.to_owned(),
            reference,
            path,
            credentials,
        }),
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

/// A PEM CA bundle held in a Secret (`ca.crt`, or `caFile` as Helm's repository files
/// name it), to trust for a Helm repository over HTTPS.
pub fn ca_from_secret(secret: &Secret) -> Option<Vec<u8>> {
    let data = secret.data.as_ref()?;
    ["ca.crt", "caFile"]
        .into_iter()
        .find_map(|key| data.get(key))
        .map(|bytes| bytes.0.clone())
}

/// Credentials read beforehand (e.g. from the cluster), by Secret: git / basic-auth
/// credentials, and CA bundles (see [`ca_from_secret`]).
#[derive(Debug, Default)]
pub struct KnownCredentials(
    pub BTreeMap<SecretRef, Result<GitCredentials, String>>,
    pub BTreeMap<SecretRef, Vec<u8>>,
);

impl CredentialsLookup for KnownCredentials {
    fn git(&self, secret: &SecretRef) -> Result<GitCredentials, String> {
        self.0
            .get(secret)
            .cloned()
            .unwrap_or_else(|| Err("not read".into()))
    }

    fn ca_bundle(&self, secret: &SecretRef) -> Option<Vec<u8>> {
        self.1.get(secret).cloned()
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
    fn reads_helm_repository_sources() {
        let (release, source) = chart_source_of(
            "kind: HelmRelease\nmetadata: {name: web, namespace: apps}\n\
             spec:\n  chart:\n    repository: https://charts.example.com/stable/\n    name: nginx\n    version: \">=1.2 <2\"\n    chartPullSecret: {name: repo-auth}\n",
            Path::new("hr.yaml"),
        )
        .unwrap();
        assert_eq!(release.to_string(), "apps/web");
        let ChartSource::HelmRepository(repo) = source else {
            panic!("not a repository source: {source:?}");
        };
        assert_eq!(repo.chart, "nginx");
        assert_eq!(repo.version, ">=1.2 <2");
        assert_eq!(repo.credentials.unwrap().name, "repo-auth");
        assert_eq!(repo.url, "https://charts.example.com/stable/");
        let nameless = chart_source_of(
            "kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {repository: https://h/}}\n",
            Path::new("hr.yaml"),
        )
        .unwrap_err();
        assert!(
            nameless
                .to_string()
                .starts_with("hr.yaml: spec.chart.name: missing"),
            "{nameless}"
        );
        let not_git = read(
            "kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {repository: https://h/, name: x}}\n",
        )
        .unwrap_err();
        assert_eq!(not_git.field, "spec.chart.repository");
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let missing =
            read("kind: HelmRelease\nmetadata: {name: a}\nspec: {chart: {path: x}}\n").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "hr.yaml: spec.chart.git: missing (a chart needs `git` or `repository`)"
        );
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
