//! `helm dependency build` for charts in git. A dependency declared in `Chart.yaml`
//! (`apiVersion: v2`) or `requirements.yaml` (v1) that `charts/` does not hold yet is added
//! there as `charts/<name>-<version>.tgz`:
//!
//! - repository `file://PATH` (a chart folder of the same repository, relative to the
//!   declaring chart): packaged from the same commit, its own dependencies first; its
//!   version must satisfy the declared constraint, as Helm checks it;
//! - repository `https://…` or `http://…` (a Helm chart repository): downloaded from it, as
//!   `helm dependency build` does after `helm repo add` — only from repositories the spec
//!   lists in `dependencyRepositories` (the host lets the call reach exactly those, through
//!   the egress rules, and caches each `index.yaml` once per interval for every release).
//!   The version is the one `Chart.lock` (`requirements.lock`) pins for the dependency, or
//!   else the highest the index lists within the declared constraint; the archive is
//!   checked against the index's digest and must hold the declared chart.
//!
//! - repository `oci://REGISTRY/PATH` (a Helm chart in an OCI registry, at `PATH/<name>`):
//!   pulled as `helm dependency build` does (the locked version, or the highest tag within
//!   the constraint), anonymously, from registries the spec lists likewise; plain HTTP
//!   only with the spec's `insecure`.
//!
//! Repository names (`@stable`, `alias:stable`) are refused with the reason: a git source
//! has no `helm repo add` list to look them up in.
//!
//! The content id of a chart with `file://` dependencies covers their folders too, so a
//! commit that changes only a dependency still yields a new artifact. Remote dependencies do
//! not count in it: as with Flux's charts from git, a new version published in the
//! repository is taken when a commit changes the chart (pin it with `Chart.lock` to make the
//! artifact depend on the commit alone).

use capstan_helm::package::SourceFile;
use capstan_helm::semver::{Constraints, highest_matching};
use capstan_plugin_sdk::source::capstan::plugin::git::Repository;
use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};

/// How deep `file://` dependencies may nest.
const MAX_DEPTH: usize = 8;

#[derive(serde::Deserialize, Default)]
struct Declared {
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

#[derive(serde::Deserialize, Clone)]
struct Dependency {
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    repository: String,
}

/// The dependencies `chart` (a folder of the repository) declares.
fn declared(repository: &Repository, commit: &str, chart: &str) -> Result<Vec<Dependency>, String> {
    let mut all = Vec::new();
    for file in ["Chart.yaml", "requirements.yaml"] {
        let path = join(chart, file);
        let Some(bytes) = repository.read_file(commit, &path).map_err(|e| e.message)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let parsed: Declared =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        all.extend(parsed.dependencies);
    }
    Ok(all)
}

/// A chart's lock file: where it is and the versions it pins.
#[derive(Default)]
struct Lock {
    /// `chart/Chart.lock` or `chart/requirements.lock`.
    path: String,
    pinned: Vec<Dependency>,
}

/// The lock file of `chart` (`Chart.lock`, or `requirements.lock` for v1 charts), empty
/// when it has none.
fn locked(repository: &Repository, commit: &str, chart: &str) -> Result<Lock, String> {
    for file in ["Chart.lock", "requirements.lock"] {
        let path = join(chart, file);
        let Some(bytes) = repository.read_file(commit, &path).map_err(|e| e.message)? else {
            continue;
        };
        let parsed: Declared =
            serde_yaml_ng::from_slice(&bytes).map_err(|e| format!("{path}: {e}"))?;
        return Ok(Lock {
            path,
            pinned: parsed.dependencies,
        });
    }
    Ok(Lock::default())
}

fn join(folder: &str, path: &str) -> String {
    if folder.is_empty() {
        path.to_owned()
    } else {
        format!("{folder}/{path}")
    }
}

/// The repository folder a `file://` dependency of `chart` names.
fn local_folder(chart: &str, dependency: &Dependency) -> Option<Result<String, String>> {
    let relative = dependency.repository.strip_prefix("file://")?;
    let mut parts: Vec<&str> = chart.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Some(Err(format!(
                        "dependency `{}`: {} leaves the repository",
                        dependency.name, dependency.repository
                    )));
                }
            }
            other => parts.push(other),
        }
    }
    Some(Ok(parts.join("/")))
}

/// Whether `files` (a chart folder) already hold dependency `name` in `charts/`.
fn vendored(files: &[SourceFile], name: &str) -> bool {
    files.iter().any(|f| {
        f.path.starts_with(&format!("charts/{name}/"))
            || f.path
                .strip_prefix(&format!("charts/{name}-"))
                .is_some_and(|rest| rest.ends_with(".tgz") && !rest.contains('/'))
    })
}

/// The content id of `chart` at `commit`: its tree id, followed by those of its `file://`
/// dependencies (recursively) when it has any.
pub fn content_id(repository: &Repository, commit: &str, chart: &str) -> Result<String, Error> {
    let mut id = repository.tree_id(commit, chart)?;
    let mut folders = Vec::new();
    local_folders(repository, commit, chart, 0, &mut folders).map_err(invalid)?;
    for folder in folders {
        id.push('+');
        id.push_str(&repository.tree_id(commit, &folder)?);
    }
    Ok(id)
}

fn local_folders(
    repository: &Repository,
    commit: &str,
    chart: &str,
    depth: usize,
    out: &mut Vec<String>,
) -> Result<(), String> {
    if depth >= MAX_DEPTH {
        return Err(format!(
            "file:// dependencies nest deeper than {MAX_DEPTH} charts at {chart}"
        ));
    }
    // A Chart.yaml that cannot be read has no dependencies here; `fetch` reports it.
    for dependency in declared(repository, commit, chart).unwrap_or_default() {
        if let Some(Ok(folder)) = local_folder(chart, &dependency)
            && !out.contains(&folder)
        {
            out.push(folder.clone());
            local_folders(repository, commit, &folder, depth + 1, out)?;
        }
    }
    Ok(())
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// Where a chart folder is and what it may fetch its dependencies from.
pub struct Place<'a> {
    /// The repository mirror.
    pub repository: &'a Repository,
    /// The commit being packaged.
    pub commit: &'a str,
    /// Chart repositories the spec lists in `dependencyRepositories`.
    pub chart_repositories: &'a [String],
    /// Talk plain HTTP to `oci://` registries (the spec's `insecure`).
    pub plain_http_registries: bool,
}

/// Add to `files` (the folder `chart` at `place.commit`) the dependencies it lacks.
pub fn build(
    place: &Place<'_>,
    chart: &str,
    files: &mut Vec<SourceFile>,
    depth: usize,
) -> Result<(), Error> {
    if depth >= MAX_DEPTH {
        return Err(invalid(format!(
            "dependencies nest deeper than {MAX_DEPTH} charts at {chart}"
        )));
    }
    let declared = declared(place.repository, place.commit, chart).map_err(invalid)?;
    let mut lock = None;
    for dependency in declared {
        if vendored(files, &dependency.name) {
            continue;
        }
        let (name, version, archive) = match local_folder(chart, &dependency) {
            Some(folder) => {
                let folder = folder.map_err(invalid)?;
                let packaged = package_folder(place, &dependency, &folder, depth)?;
                (packaged.name, packaged.version, packaged.archive)
            }
            None => {
                let lock = match &lock {
                    Some(lock) => lock,
                    None => {
                        lock.insert(locked(place.repository, place.commit, chart).map_err(invalid)?)
                    }
                };
                download(place, &dependency, lock)?
            }
        };
        files.push(SourceFile {
            path: format!("charts/{name}-{version}.tgz"),
            executable: false,
            contents: archive,
        });
    }
    Ok(())
}

/// Package the `file://` dependency at `folder` (its own dependencies first) and check it is
/// the chart and version declared.
fn package_folder(
    place: &Place<'_>,
    dependency: &Dependency,
    folder: &str,
    depth: usize,
) -> Result<capstan_helm::package::Packaged, Error> {
    let mut dependency_files: Vec<SourceFile> = place
        .repository
        .read_tree(place.commit, folder)
        .map_err(|e| {
            invalid(format!(
                "dependency `{}` ({}): {}",
                dependency.name, dependency.repository, e.message
            ))
        })?
        .into_iter()
        .map(|f| SourceFile {
            path: f.path,
            executable: f.executable,
            contents: f.contents,
        })
        .collect();
    build(place, folder, &mut dependency_files, depth + 1)?;
    let packaged = capstan_helm::package::package(&dependency_files)
        .map_err(|e| invalid(format!("dependency `{}` at {folder}: {e}", dependency.name)))?;
    if packaged.name != dependency.name {
        return Err(invalid(format!(
            "dependency `{}`: {} holds chart `{}`",
            dependency.name, dependency.repository, packaged.name
        )));
    }
    if !satisfies(dependency, &packaged.version)? {
        return Err(invalid(format!(
            "dependency `{}`: {} holds version {}, which does not satisfy `{}`",
            dependency.name, dependency.repository, packaged.version, dependency.version
        )));
    }
    Ok(packaged)
}

/// Whether `version` satisfies the dependency's declared constraint (none: any).
fn satisfies(dependency: &Dependency, version: &str) -> Result<bool, Error> {
    if dependency.version.trim().is_empty() {
        return Ok(true);
    }
    let constraint = Constraints::parse(dependency.version.trim()).map_err(|e| {
        invalid(format!(
            "dependency `{}`: version `{}`: {e}",
            dependency.name, dependency.version
        ))
    })?;
    Ok(highest_matching(&constraint, std::iter::once(version)).is_some())
}

/// A repository URL as compared with the spec's list: trimmed, without trailing `/`.
fn repository_key(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}

/// Where and what to download for a dependency that `charts/` lacks.
#[derive(Debug, PartialEq, Eq)]
struct Planned<'a> {
    /// The repository URL as `Chart.yaml` writes it, trimmed.
    repository: &'a str,
    /// An `oci://` registry rather than a chart repository with an `index.yaml`.
    oci: bool,
    /// The locked version (taken exactly) or the declared constraint.
    wanted: &'a str,
    /// `wanted` comes from the lock file.
    locked: bool,
}

/// Check a dependency's repository against what a git source can reach — a URL (not a
/// `helm repo add` name) of a supported scheme that the spec lists — and choose its version
/// from the lock file or the constraint; the errors name the dependency and what to change.
fn plan<'a>(
    dependency: &'a Dependency,
    listed: &[String],
    lock: &'a Lock,
) -> Result<Planned<'a>, Error> {
    let named = |what: String| {
        invalid(format!(
            "dependency `{}` ({}) is not in charts/: {what}",
            dependency.name, dependency.repository
        ))
    };
    let repository = dependency.repository.trim();
    let lower = repository.to_ascii_lowercase();
    if repository.is_empty() {
        return Err(invalid(format!(
            "dependency `{}` names no repository and is not in charts/",
            dependency.name
        )));
    }
    if repository.starts_with('@') || lower.starts_with("alias:") {
        return Err(named(
            "a git source has no `helm repo add` list to look repository names up in; write the repository's URL in Chart.yaml, or vendor the chart".to_owned(),
        ));
    }
    let oci = lower.starts_with("oci://");
    if !(oci || lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(named(
            "only file://, https://, http:// and oci:// repositories are supported".to_owned(),
        ));
    }
    if !listed
        .iter()
        .any(|listed| repository_key(listed) == repository_key(repository))
    {
        return Err(named(format!(
            "the source does not list {} in `dependencyRepositories`; add it there (as `helm repo add` would) or vendor the chart (`helm dependency build`)",
            repository_key(repository)
        )));
    }
    let pinned = lock.pinned.iter().find(|entry| {
        entry.name == dependency.name
            && repository_key(&entry.repository) == repository_key(repository)
    });
    let wanted = match pinned {
        Some(entry) => {
            if !satisfies(dependency, &entry.version)? {
                return Err(invalid(format!(
                    "{}: pins `{}` at {}, which does not satisfy `{}` in Chart.yaml: the lock file is out of date (`helm dependency update`)",
                    lock.path, dependency.name, entry.version, dependency.version
                )));
            }
            entry.version.trim()
        }
        None => dependency.version.trim(),
    };
    Ok(Planned {
        repository,
        oci,
        wanted,
        locked: pinned.is_some(),
    })
}

/// Download the dependency from its chart repository (see the module documentation):
/// its name, version and archive.
fn download(
    place: &Place<'_>,
    dependency: &Dependency,
    lock: &Lock,
) -> Result<(String, String, Vec<u8>), Error> {
    let named = |what: String| {
        invalid(format!(
            "dependency `{}` ({}) is not in charts/: {what}",
            dependency.name, dependency.repository
        ))
    };
    let Planned {
        repository,
        oci,
        wanted,
        locked,
    } = plan(dependency, place.chart_repositories, lock)?;
    if oci {
        return pull(place, dependency, repository, wanted, locked);
    }
    let in_repository = |error: Error| Error {
        message: format!(
            "dependency `{}` from {}: {}",
            dependency.name,
            repository_key(repository),
            error.message
        ),
        ..error
    };
    let (url, versions) =
        capstan_chart_repo::read_index(repository, &dependency.name).map_err(in_repository)?;
    // A pinned version is taken exactly, as `helm dependency build` does.
    let entry = if locked {
        versions.iter().find(|v| v.version == wanted).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "dependency `{}`: the lock file pins version {wanted}, which {} no longer lists",
                    dependency.name,
                    repository_key(repository)
                ),
            )
        })?
    } else {
        capstan_chart_repo::index::select(&dependency.name, &versions, wanted)
            .map_err(|e| in_repository(capstan_chart_repo::index_error(e)))?
    };
    let downloaded = capstan_chart_repo::download(&url, entry).map_err(in_repository)?;
    if downloaded.metadata.name != dependency.name {
        return Err(named(format!(
            "the archive the index lists as `{}` {} holds chart `{}`",
            dependency.name, entry.version, downloaded.metadata.name
        )));
    }
    Ok((
        downloaded.metadata.name,
        downloaded.metadata.version,
        downloaded.archive,
    ))
}

/// Pull the dependency from the OCI registry `repository` (`oci://REGISTRY/PATH`, the chart
/// at `PATH/<name>`) as `helm dependency build` does: `wanted` is the locked version (taken
/// exactly) or the declared constraint; anonymous.
fn pull(
    place: &Place<'_>,
    dependency: &Dependency,
    repository: &str,
    wanted: &str,
    locked: bool,
) -> Result<(String, String, Vec<u8>), Error> {
    use capstan_oci_chart::{http::WasiHttp, pull, reference, registry::Client};
    let url = format!("{}/{}", repository_key(repository), dependency.name);
    let subject = reference::parse(&url).map_err(|message| {
        invalid(format!(
            "dependency `{}` ({repository}): {message}",
            dependency.name
        ))
    })?;
    let mut client = Client::new(
        WasiHttp,
        pull::Anonymous,
        subject.clone(),
        place.plain_http_registries,
    )?;
    let (version, digest) = pull::resolve_version(&mut client, &subject, wanted)?;
    if locked && version != wanted {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!(
                "dependency `{}`: the lock file pins version {wanted}, which {subject} no longer has",
                dependency.name
            ),
        ));
    }
    let pulled = pull::pull_chart(&mut client, &subject, &digest, &version)?;
    if pulled.config.name != dependency.name {
        return Err(invalid(format!(
            "dependency `{}`: {subject}@{digest} holds chart `{}`",
            dependency.name, pulled.config.name
        )));
    }
    capstan_helm::load::load_archive(&pulled.archive).map_err(|e| {
        invalid(format!(
            "dependency `{}`: {subject}@{digest} is not a valid chart archive: {e}",
            dependency.name
        ))
    })?;
    Ok((pulled.config.name, pulled.config.version, pulled.archive))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dependency(repository: &str) -> Dependency {
        Dependency {
            name: "common".into(),
            version: String::new(),
            repository: repository.into(),
        }
    }

    #[test]
    fn file_repositories_resolve_inside_the_repository_only() {
        let folder = |chart: &str, repo: &str| local_folder(chart, &dependency(repo));
        assert_eq!(
            folder("charts/app", "file://../common"),
            Some(Ok("charts/common".into()))
        );
        assert_eq!(
            folder("app", "file://./lib/common/"),
            Some(Ok("app/lib/common".into()))
        );
        assert_eq!(folder("", "file://common"), Some(Ok("common".into())));
        assert!(
            folder("app", "file://../../etc")
                .unwrap()
                .unwrap_err()
                .contains("leaves the repository")
        );
        assert_eq!(folder("app", "https://charts.example.com"), None);
    }

    fn remote(repository: &str, version: &str) -> Dependency {
        Dependency {
            name: "redis".into(),
            version: version.into(),
            repository: repository.into(),
        }
    }

    #[test]
    fn remote_repositories_are_refused_unless_a_listed_url_of_a_known_scheme() {
        let listed = vec![
            "https://charts.example.com/".to_owned(),
            "oci://registry.example.com/charts".to_owned(),
        ];
        let none = Lock::default();
        let refused = |repository: &str| {
            plan(&remote(repository, "^1"), &listed, &none)
                .unwrap_err()
                .message
        };
        assert_eq!(
            refused(" "),
            "dependency `redis` names no repository and is not in charts/"
        );
        for name in ["@stable", "alias:stable"] {
            assert!(
                refused(name).contains("no `helm repo add` list"),
                "{}",
                refused(name)
            );
        }
        assert!(refused("ftp://charts.example.com").contains("only file://, https://"));
        assert!(
            refused("https://other.example.com").contains(
                "the source does not list https://other.example.com in `dependencyRepositories`"
            ),
            "{}",
            refused("https://other.example.com")
        );
        // Trailing `/` and surrounding space do not matter; the scheme decides the client.
        let dependency = remote(" https://charts.example.com ", "^1");
        let planned = plan(&dependency, &listed, &none).unwrap();
        assert_eq!(
            planned,
            Planned {
                repository: "https://charts.example.com",
                oci: false,
                wanted: "^1",
                locked: false
            }
        );
        let dependency = remote("oci://registry.example.com/charts/", "");
        assert!(plan(&dependency, &listed, &none).unwrap().oci);
    }

    #[test]
    fn a_lock_pins_the_version_and_must_satisfy_the_constraint() {
        let listed = vec!["https://charts.example.com".to_owned()];
        let lock = Lock {
            path: "app/requirements.lock".into(),
            pinned: vec![remote("https://charts.example.com/", "1.4.2")],
        };
        let dependency = remote("https://charts.example.com", "^1.0.0");
        let planned = plan(&dependency, &listed, &lock).unwrap();
        assert_eq!((planned.wanted, planned.locked), ("1.4.2", true));
        // Another repository's pin does not apply.
        let elsewhere = Lock {
            pinned: vec![remote("https://mirror.example.com", "1.4.2")],
            ..Lock::default()
        };
        let planned = plan(&dependency, &listed, &elsewhere).unwrap();
        assert_eq!((planned.wanted, planned.locked), ("^1.0.0", false));
        let stale = remote("https://charts.example.com", "~2.0.0");
        assert_eq!(
            plan(&stale, &listed, &lock).unwrap_err().message,
            "app/requirements.lock: pins `redis` at 1.4.2, which does not satisfy `~2.0.0` in Chart.yaml: the lock file is out of date (`helm dependency update`)"
        );
    }

    #[test]
    fn vendored_dependencies_are_recognised_as_folders_or_archives() {
        let file = |path: &str| SourceFile {
            path: path.into(),
            executable: false,
            contents: Vec::new(),
        };
        assert!(vendored(&[file("charts/common/Chart.yaml")], "common"));
        assert!(vendored(&[file("charts/common-1.2.3.tgz")], "common"));
        assert!(!vendored(
            &[file("charts/common-extra/Chart.yaml")],
            "common"
        ));
        assert!(!vendored(&[file("templates/common.yaml")], "common"));
    }
}
