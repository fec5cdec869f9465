//! `helm dependency build` for charts in git. Dependencies declared in `Chart.yaml`
//! (`apiVersion: v2`) or `requirements.yaml` (v1) whose repository is `file://` — a chart
//! folder of the same repository, relative to the declaring chart — are packaged from the
//! same commit into `charts/<name>-<version>.tgz` (their own `file://` dependencies first)
//! unless `charts/` already holds them, and their version must satisfy the declared
//! constraint, as Helm checks it. A dependency from a chart repository that is not vendored
//! fails the fetch naming it: a git source reaches no network.
//!
//! The content id of a chart with `file://` dependencies covers their folders too, so a
//! commit that changes only a dependency still yields a new artifact.

use capstan_helm::package::SourceFile;
use capstan_helm::semver::{Constraints, highest_matching};
use capstan_plugin_sdk::source::capstan::plugin::git::Repository;
use capstan_plugin_sdk::source::capstan::plugin::types::Error;

/// How deep `file://` dependencies may nest.
const MAX_DEPTH: usize = 8;

#[derive(serde::Deserialize, Default)]
struct Declared {
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

#[derive(serde::Deserialize)]
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
    Error::new(
        capstan_plugin_sdk::source::capstan::plugin::types::ErrorCode::InvalidInput,
        message,
    )
}

/// Add to `files` (the folder `chart` at `commit`) the `file://` dependencies it lacks.
pub fn build(
    repository: &Repository,
    commit: &str,
    chart: &str,
    files: &mut Vec<SourceFile>,
    depth: usize,
) -> Result<(), String> {
    if depth >= MAX_DEPTH {
        return Err(format!(
            "file:// dependencies nest deeper than {MAX_DEPTH} charts at {chart}"
        ));
    }
    for dependency in declared(repository, commit, chart)? {
        if vendored(files, &dependency.name) {
            continue;
        }
        let Some(folder) = local_folder(chart, &dependency) else {
            return Err(if dependency.repository.is_empty() {
                format!(
                    "dependency `{}` names no repository and is not in charts/",
                    dependency.name
                )
            } else {
                format!(
                    "dependency `{}` ({}) is not in charts/: a git source fetches no chart repositories; vendor it (`helm dependency build`) or take the chart from a Helm repository source",
                    dependency.name, dependency.repository
                )
            });
        };
        let folder = folder?;
        let mut dependency_files: Vec<SourceFile> = repository
            .read_tree(commit, &folder)
            .map_err(|e| {
                format!(
                    "dependency `{}` ({}): {}",
                    dependency.name, dependency.repository, e.message
                )
            })?
            .into_iter()
            .map(|f| SourceFile {
                path: f.path,
                executable: f.executable,
                contents: f.contents,
            })
            .collect();
        build(
            repository,
            commit,
            &folder,
            &mut dependency_files,
            depth + 1,
        )?;
        let packaged = capstan_helm::package::package(&dependency_files)
            .map_err(|e| format!("dependency `{}` at {folder}: {e}", dependency.name))?;
        if packaged.name != dependency.name {
            return Err(format!(
                "dependency `{}`: {} holds chart `{}`",
                dependency.name, dependency.repository, packaged.name
            ));
        }
        if !dependency.version.is_empty() {
            let constraint = Constraints::parse(dependency.version.trim()).map_err(|e| {
                format!(
                    "dependency `{}`: version `{}`: {e}",
                    dependency.name, dependency.version
                )
            })?;
            if highest_matching(&constraint, std::iter::once(packaged.version.as_str())).is_none() {
                return Err(format!(
                    "dependency `{}`: {} holds version {}, which does not satisfy `{}`",
                    dependency.name, dependency.repository, packaged.version, dependency.version
                ));
            }
        }
        files.push(SourceFile {
            path: format!("charts/{}-{}.tgz", packaged.name, packaged.version),
            executable: false,
            contents: packaged.archive,
        });
    }
    Ok(())
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
