//! `capstan template`: render a chart the way `helm template` does, through the configured
//! backend component (the same sandboxed path the operator uses). The host merges the
//! user's values (`-f` files in order, then `--set`, then `--set-string`, as Helm does),
//! packages a chart folder into an archive, and prints what the component rendered.

use std::path::{Path, PathBuf};

use capstan_gotmpl::value::Value;

use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    Rendered, TemplateOptions,
};
use crate::plugins::bindings::types::{ChartArtifact, ChartMetadata, ReleaseId};

/// Why the inputs of a render could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum TemplateInputError {
    /// A values file could not be read or parsed.
    #[error("values file {path}: {message}")]
    ValuesFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A `--set` expression is malformed.
    #[error("{flag} {expression:?}: {message}")]
    Set {
        /// The flag (`--set`, `--set-string`, ...).
        flag: &'static str,
        /// The expression.
        expression: String,
        /// What is wrong.
        message: String,
    },
    /// The chart could not be read or packaged.
    #[error("chart {path}: {message}")]
    Chart {
        /// The chart path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The value flags of a command, as `helm template` takes them.
#[derive(Debug, Clone, Default)]
pub struct ValueFlags {
    /// `-f`: YAML files, merged in order.
    pub files: Vec<PathBuf>,
    /// `--set-json a={"b":1}`.
    pub set_json: Vec<String>,
    /// `--set a.b=c` (typed: bools, null, int64).
    pub set: Vec<String>,
    /// `--set-string a=b` (always strings).
    pub set_string: Vec<String>,
    /// `--set-literal a=b` (everything after `=` taken verbatim).
    pub set_literal: Vec<String>,
}

/// [`merge_user_values`] for `-f`, `--set` and `--set-string` only.
pub fn user_values(
    files: &[PathBuf],
    set: &[String],
    set_string: &[String],
) -> Result<Value, TemplateInputError> {
    merge_user_values(&ValueFlags {
        files: files.to_vec(),
        set: set.to_vec(),
        set_string: set_string.to_vec(),
        ..ValueFlags::default()
    })
}

/// Merge values the way `helm template` does: each `-f` file in order (maps merged, later
/// wins), then `--set-json`, `--set`, `--set-string` and `--set-literal`.
pub fn merge_user_values(flags: &ValueFlags) -> Result<Value, TemplateInputError> {
    let mut values = Value::new_map();
    for path in &flags.files {
        let data = std::fs::read(path).map_err(|e| TemplateInputError::ValuesFile {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let parsed = capstan_helm::load::load_values(&data).map_err(|message| {
            TemplateInputError::ValuesFile {
                path: path.clone(),
                message,
            }
        })?;
        values = capstan_helm::values::merge_maps(&values, &parsed);
    }
    type Parser = fn(&str, &Value) -> Result<(), capstan_helm::strvals::StrvalsError>;
    let stages: [(&'static str, &[String], Parser); 4] = [
        (
            "--set-json",
            &flags.set_json,
            capstan_helm::strvals::parse_json_into,
        ),
        ("--set", &flags.set, capstan_helm::strvals::parse_into),
        (
            "--set-string",
            &flags.set_string,
            capstan_helm::strvals::parse_into_string,
        ),
        (
            "--set-literal",
            &flags.set_literal,
            capstan_helm::strvals::parse_literal_into,
        ),
    ];
    for (flag, expressions, parse) in stages {
        for expression in expressions {
            parse(expression, &values).map_err(|e| TemplateInputError::Set {
                flag,
                expression: expression.clone(),
                message: e.to_string(),
            })?;
        }
    }
    Ok(values)
}

/// The chart as an artifact: a `.tgz` read as is, a folder packaged like `helm package`.
pub fn chart_artifact(path: &Path) -> Result<ChartArtifact, TemplateInputError> {
    let fail = |message: String| TemplateInputError::Chart {
        path: path.to_path_buf(),
        message,
    };
    if path.is_dir() {
        let packaged = capstan_helm::package::package_dir(path).map_err(fail)?;
        let digest = packaged.digest();
        return Ok(ChartArtifact {
            archive: packaged.archive,
            digest,
            metadata: ChartMetadata {
                name: packaged.name,
                version: packaged.version,
                app_version: packaged.app_version,
            },
        });
    }
    let archive = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let chart = capstan_helm::load::load_archive(&archive).map_err(|e| fail(e.to_string()))?;
    let packaged = capstan_helm::package::Packaged {
        archive,
        name: chart.metadata.name.clone(),
        version: chart.metadata.version.clone(),
        app_version: Some(chart.metadata.app_version.clone()).filter(|v| !v.is_empty()),
    };
    let digest = packaged.digest();
    Ok(ChartArtifact {
        archive: packaged.archive,
        digest,
        metadata: ChartMetadata {
            name: packaged.name,
            version: packaged.version,
            app_version: packaged.app_version,
        },
    })
}

/// The release id and options of a render.
pub fn request(
    name: &str,
    namespace: &str,
    kube_version: Option<String>,
    api_versions: Vec<String>,
    is_upgrade: bool,
) -> (ReleaseId, TemplateOptions) {
    (
        ReleaseId {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
        },
        TemplateOptions {
            kube_version,
            api_versions,
            is_upgrade,
        },
    )
}

/// What `helm template` prints: the trimmed manifest and a newline, then each hook.
pub fn template_output(rendered: &Rendered, with_hooks: bool) -> String {
    let mut out = rendered.manifest.trim().to_owned();
    out.push('\n');
    if with_hooks {
        out.push_str(&rendered.hooks);
    }
    out
}
