//! `capstan plugin new`: a working source plugin to start from, in Rust (a crate depending
//! on `capstan-plugin-sdk`) or Python (componentize-py). The Rust template serves charts
//! kept as folders in a git repository; the Python one a chart archive at an HTTPS URL
//! pinned by sha256 (the example in `plugins/examples/python-url-source`, with the kind
//! renamed). Both build outside this repository as written.

use std::path::{Path, PathBuf};

/// Which language to scaffold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// A Rust crate built with `cargo build --target wasm32-wasip2`.
    Rust,
    /// A Python module built with componentize-py.
    Python,
}

/// Why a plugin could not be scaffolded.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot be a kind or crate name.
    #[error(
        "`{0}` is not a usable plugin name: use lowercase letters, digits and `-`, starting with a letter"
    )]
    BadName(String),
    /// The target folder exists and is not empty.
    #[error("{0} exists and is not empty")]
    NotEmpty(PathBuf),
    /// Writing failed.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
}

/// Where a scaffolded Rust crate takes the SDK from.
#[derive(Debug, Clone)]
pub enum SdkSource {
    /// A local checkout's `plugins/lib/sdk`.
    Path(PathBuf),
    /// The released `capstan-plugin-sdk` of this version, from crates.io.
    Released(String),
}

/// The version of `capstan-plugin-sdk` this host's contract is served by (a test keeps it
/// equal to `plugins/lib/sdk/Cargo.toml`).
pub const SDK_VERSION: &str = "0.2.0";

impl SdkSource {
    /// The SDK this host was built with, as released.
    pub fn released() -> SdkSource {
        SdkSource::Released(SDK_VERSION.to_owned())
    }

    fn dependency(&self) -> String {
        match self {
            SdkSource::Path(path) => format!("{{ path = {:?} }}", path.display().to_string()),
            SdkSource::Released(version) => format!("{version:?}"),
        }
    }
}

/// The contract's WIT, as this host serves it (for Python plugins, which bind to it).
const CONTRACT_WIT: [(&str, &str); 5] = [
    ("types.wit", include_str!("../../wit/types.wit")),
    ("source.wit", include_str!("../../wit/source.wit")),
    ("backend.wit", include_str!("../../wit/backend.wit")),
    ("host.wit", include_str!("../../wit/host.wit")),
    ("worlds.wit", include_str!("../../wit/worlds.wit")),
];

fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_owned(), |text, (key, value)| {
            text.replace(&format!("{{{{{key}}}}}"), value)
        })
}

fn write(path: &Path, contents: &str) -> Result<(), ScaffoldError> {
    let failed = |cause| ScaffoldError::Write {
        path: path.to_owned(),
        cause,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    std::fs::write(path, contents).map_err(failed)
}

/// Write a new source plugin serving kind `name` into `dir` (created; must be empty if it
/// exists). Returns the files written.
pub fn new_plugin(
    language: Language,
    name: &str,
    dir: &Path,
    sdk: &SdkSource,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !valid_name(name) {
        return Err(ScaffoldError::BadName(name.to_owned()));
    }
    if dir.exists()
        && std::fs::read_dir(dir)
            .map(|mut entries| entries.next().is_some())
            .unwrap_or(true)
    {
        return Err(ScaffoldError::NotEmpty(dir.to_owned()));
    }
    let files: Vec<(String, String)> = match language {
        Language::Rust => {
            let lib = name.replace('-', "_");
            let values = [
                ("crate", name),
                ("kind", name),
                ("lib", lib.as_str()),
                ("sdk", &sdk.dependency()),
            ];
            vec![
                (
                    "Cargo.toml".into(),
                    fill(include_str!("../scaffold/rust/Cargo.toml.tmpl"), &values),
                ),
                (
                    "src/lib.rs".into(),
                    fill(include_str!("../scaffold/rust/src/lib.rs.tmpl"), &values),
                ),
                (".gitignore".into(), "/target\n".into()),
            ]
        }
        Language::Python => {
            let spec = include_str!("../../plugins/examples/python-url-source/spec.py")
                .replace("KIND = \"https-url\"", &format!("KIND = \"{name}\""));
            let mut files = vec![
                (
                    "app.py".into(),
                    include_str!("../../plugins/examples/python-url-source/app.py").into(),
                ),
                ("spec.py".into(), spec),
                (
                    "chartmeta.py".into(),
                    include_str!("../../plugins/examples/python-url-source/chartmeta.py").into(),
                ),
                (
                    "wit/world.wit".into(),
                    include_str!("../../plugins/examples/python-url-source/wit/world.wit").into(),
                ),
                (
                    "build.sh".into(),
                    include_str!("../scaffold/python/build.sh").into(),
                ),
            ];
            for (file, text) in CONTRACT_WIT {
                files.push((format!("wit/deps/capstan/{file}"), text.to_owned()));
            }
            for (file, text) in crate::scaffold_wasi::WASI_WIT {
                files.push((format!("wit/deps/{file}"), (*text).to_owned()));
            }
            files
        }
    };
    let mut written = Vec::new();
    for (relative, contents) in files {
        let path = dir.join(&relative);
        write(&path, &contents)?;
        written.push(path);
    }
    #[cfg(unix)]
    if language == Language::Python {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("build.sh");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(
            |cause| ScaffoldError::Write {
                path: script.clone(),
                cause,
            },
        )?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_templates_are_filled_and_names_checked() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("in-house");
        let files = new_plugin(
            Language::Rust,
            "in-house",
            &target,
            &SdkSource::Path("/sdk".into()),
        )
        .unwrap();
        assert_eq!(files.len(), 3);
        let manifest = std::fs::read_to_string(target.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"in-house\""), "{manifest}");
        assert!(
            manifest.contains("capstan-plugin-sdk = { path = \"/sdk\" }"),
            "{manifest}"
        );
        let lib = std::fs::read_to_string(target.join("src/lib.rs")).unwrap();
        assert!(lib.contains("const KIND: &str = \"in-house\";"));
        assert!(!lib.contains("{{"), "unfilled placeholder");
        assert!(matches!(
            new_plugin(
                Language::Rust,
                "in-house",
                &target,
                &SdkSource::Path("/sdk".into())
            ),
            Err(ScaffoldError::NotEmpty(_))
        ));
        assert!(matches!(
            new_plugin(
                Language::Rust,
                "Bad_Name",
                &dir.path().join("x"),
                &SdkSource::Path("/sdk".into())
            ),
            Err(ScaffoldError::BadName(_))
        ));
        assert_eq!(SdkSource::released().dependency(), "\"0.2.0\"");
    }

    #[test]
    fn the_released_sdk_version_is_the_sdk_crates() {
        let manifest = include_str!("../../plugins/lib/sdk/Cargo.toml");
        let version = manifest
            .lines()
            .find_map(|line| line.strip_prefix("version = "))
            .unwrap();
        assert_eq!(version, format!("{SDK_VERSION:?}"));
    }
}
