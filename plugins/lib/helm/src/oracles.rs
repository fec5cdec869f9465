//! Rendering oracles kept in the repository (`plugins/lib/helm/tests/oracles/*.yaml`): small
//! charts with what real `helm template rel CHART --namespace ns` printed for them, written
//! from the real Helm by the tool-stage test. This module reads them, writes a case as a
//! chart folder, and renders a case as `helm template` would, for the tests that compare
//! the two; no product code uses it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::{ReleaseInfo, RenderOptions};

/// Chart.yaml of the chart a `template` case is rendered in.
pub const SNIPPET_CHART_YAML: &str = "apiVersion: v2\nname: snip\nversion: 0.1.0\n";
/// The release name the oracles were rendered with.
pub const RELEASE: &str = "rel";
/// The release namespace the oracles were rendered with.
pub const NAMESPACE: &str = "ns";

/// One case and what real Helm did with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the case shows.
    pub name: String,
    /// Text of `templates/t.yaml` in chart `snip` 0.1.0 (or use `files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A whole chart: path → content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<std::collections::BTreeMap<String, String>>,
    /// Helm's standard output, when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Helm's error message (after `Error: `), when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why the oracle files could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    /// A file could not be read, written or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The folder of the oracle files in this checkout.
pub fn oracles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracles")
}

/// Every oracle file, in name order.
pub fn oracle_files() -> Result<Vec<PathBuf>, OracleError> {
    let dir = oracles_dir();
    let entries = std::fs::read_dir(&dir).map_err(|e| OracleError::File {
        path: dir.clone(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The cases of one file, and the comment lines heading it (kept when it is rewritten).
pub fn read_cases(path: &Path) -> Result<(String, Vec<Case>), OracleError> {
    let fail = |message: String| OracleError::File {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let header: String = text
        .lines()
        .take_while(|line| line.starts_with('#'))
        .map(|line| format!("{line}\n"))
        .collect();
    let cases = serde_yaml_ng::from_str(&text).map_err(|e| fail(e.to_string()))?;
    Ok((header, cases))
}

/// Rewrites a file with `cases` under `header`.
pub fn write_cases(path: &Path, header: &str, cases: &[Case]) -> Result<(), OracleError> {
    let fail = |message: String| OracleError::File {
        path: path.to_owned(),
        message,
    };
    let body = serde_yaml_ng::to_string(cases).map_err(|e| fail(e.to_string()))?;
    std::fs::write(path, format!("{header}{body}")).map_err(|e| fail(e.to_string()))
}

impl Case {
    /// What real Helm did, as recorded: its output, or its error message; `None` when the
    /// case has no recording yet.
    pub fn recorded(&self) -> Option<Result<String, String>> {
        match (&self.output, &self.error) {
            (Some(output), _) => Some(Ok(output.clone())),
            (None, Some(error)) => Some(Err(error.clone())),
            (None, None) => None,
        }
    }

    /// The chart's files, path → content.
    pub fn chart_files(&self) -> Vec<(String, String)> {
        match (&self.files, &self.template) {
            (Some(files), _) => files
                .iter()
                .map(|(path, content)| (path.clone(), content.clone()))
                .collect(),
            (None, template) => vec![
                ("Chart.yaml".into(), SNIPPET_CHART_YAML.into()),
                (
                    "templates/t.yaml".into(),
                    template.clone().unwrap_or_default(),
                ),
            ],
        }
    }

    /// Writes the chart into `dir` (created) as a chart folder.
    pub fn write_chart(&self, dir: &Path) -> std::io::Result<()> {
        for (path, content) in self.chart_files() {
            let file = dir.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(file, content)?;
        }
        Ok(())
    }

    /// What capstan-helm prints for the chart folder `dir` as `helm template rel DIR
    /// --namespace ns` does: the output, or the error message.
    pub fn render_folder(dir: &Path) -> Result<String, String> {
        let chart = crate::load::load_dir(dir).map_err(|e| e.to_string())?;
        let options = RenderOptions {
            release: ReleaseInfo {
                name: RELEASE.into(),
                namespace: NAMESPACE.into(),
                ..ReleaseInfo::default()
            },
            ..RenderOptions::default()
        };
        let assembled =
            crate::pipeline::render_chart(chart, &crate::load::empty_values(), &options, false)
                .map_err(|e| e.to_string())?;
        Ok(crate::output::template_text(&assembled, true))
    }
}
