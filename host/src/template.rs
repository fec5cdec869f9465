//! `capstan template`: render a chart the way `helm template` does, through the configured
//! backend component (the same sandboxed path the operator uses). The host reads the
//! user's value files and flags into ordered value layers (`-f` files in order, then
//! `--set-json`, `--set`, `--set-string`, `--set-literal`, as Helm applies them), reads the
//! chart folder or archive, and leaves parsing, merging and packaging to the backend: the
//! host knows no chart or values format.

use std::path::{Path, PathBuf};

use crate::capabilities::Grants;
use crate::capabilities::folder_files::FolderFilesGrant;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    ChartFile, ChartInput, Rendered, TemplateOptions, ValueLayer, ValuesDocument,
};
use crate::plugins::bindings::types::ErrorCode;
use crate::plugins::bindings::types::{ChartArtifact, ReleaseId};
use crate::plugins::call::{CallError, CallFailure};
use crate::plugins::{BackendPlugin, UnreadFile};

/// Largest chart folder or archive read (all files together).
const MAX_CHART_BYTES: u64 = 100 << 20;

/// Why the inputs of a render could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum TemplateInputError {
    /// A values file could not be read.
    #[error("values file {path}: {message}")]
    ValuesFile {
        /// The file.
        path: PathBuf,
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
    /// `-f`: values files, applied in order.
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

/// The value layers of `flags`, in the order Helm applies them: each `-f` file, then
/// `--set-json`, `--set`, `--set-string` and `--set-literal` expressions.
pub fn value_layers(flags: &ValueFlags) -> Result<Vec<ValueLayer>, TemplateInputError> {
    let mut layers = Vec::new();
    for path in &flags.files {
        let content =
            std::fs::read_to_string(path).map_err(|e| TemplateInputError::ValuesFile {
                path: path.clone(),
                message: e.to_string(),
            })?;
        layers.push(ValueLayer::Document(ValuesDocument {
            origin: path.display().to_string(),
            content,
            optional: false,
        }));
    }
    layers.extend(flags.set_json.iter().cloned().map(ValueLayer::SetJson));
    layers.extend(flags.set.iter().cloned().map(ValueLayer::Set));
    layers.extend(flags.set_string.iter().cloned().map(ValueLayer::SetString));
    layers.extend(
        flags
            .set_literal
            .iter()
            .cloned()
            .map(ValueLayer::SetLiteral),
    );
    Ok(layers)
}

/// Files of a folder larger than this are left unread until the backend has said that the
/// chart is made of them ([`select_files`]), as Helm reads only the files `.helmignore`
/// keeps: argo-helm's argo-workflows carries 11 MB of full CRDs its `.helmignore` drops,
/// and reading and handing them to the component was 12 of a 25.5 ms run. Asking costs a
/// call (0.6 ms on bitnami/grafana-loki) and reading the big files after the component is
/// loaded rather than beside it; files of 256 KiB to 1 MiB, mostly READMEs, schemas and
/// CRDs that charts keep, did not repay it.
const DEFERRED_FILE_BYTES: u64 = 1 << 20;

/// Files of a folder larger than this are not read ahead, beside loading the component:
/// a backend that exports `folder-template` reads them through the `folder-files` grant
/// when its render needs them, and most are never needed (READMEs, changelogs, CRDs: 1.9
/// of the 3.5 MB bitnami/argo-cd's folder passes; reading and handing them over was 5.7 ms
/// of a 110 ms run, measured by leaving them out). Needed ones (values files, schemas) are
/// then read one by one inside the call. For a backend without the export they are read
/// before the call ([`select_files`]).
const READ_AHEAD_FILE_BYTES: u64 = 64 << 10;

/// A chart as read from disk: an archive's bytes, or a folder's files.
pub enum ChartRead {
    /// An archive.
    Archive(Vec<u8>),
    /// A folder.
    Folder(FolderRead),
}

/// A chart folder's files, in path order, those larger than [`READ_AHEAD_FILE_BYTES`] not
/// read yet.
pub struct FolderRead {
    root: PathBuf,
    entries: Vec<FolderEntry>,
}

/// One file of a chart folder.
struct FolderEntry {
    /// Relative to the folder, `/` between names.
    path: String,
    /// The contents; `None` while not read.
    contents: Option<Vec<u8>>,
    /// Size when listed.
    size: u64,
}

/// The chart at `path` as the backend takes it: the files of a folder (recursively, as
/// they are; the backend applies its ignore rules), or an archive's bytes.
pub fn chart_input(path: &Path) -> Result<ChartInput, TemplateInputError> {
    match read_chart(path, u64::MAX)? {
        ChartRead::Archive(archive) => Ok(ChartInput::Archive(archive)),
        ChartRead::Folder(folder) => folder.into_input(None),
    }
}

/// The chart at `path`: an archive's bytes, or the files of a folder (recursively, as they
/// are: symbolic links and special files are no part of a chart), files larger than
/// `defer_bytes` listed but not read.
fn read_chart(path: &Path, defer_bytes: u64) -> Result<ChartRead, TemplateInputError> {
    use std::io::Read;
    let fail = |message: String| TemplateInputError::Chart {
        path: path.to_path_buf(),
        message,
    };
    if !path.is_dir() {
        let archive = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        return Ok(ChartRead::Archive(archive));
    }
    let mut entries = Vec::new();
    let mut total = 0u64;
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let listing =
            std::fs::read_dir(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
        for entry in listing {
            let entry = entry.map_err(|e| fail(e.to_string()))?;
            let file_type = entry.file_type().map_err(|e| fail(e.to_string()))?;
            let full = entry.path();
            if file_type.is_dir() {
                pending.push(full);
                continue;
            }
            if !file_type.is_file() {
                continue;
            }
            let unreadable = |e: std::io::Error| fail(format!("{}: {e}", full.display()));
            let mut file = std::fs::File::open(&full).map_err(unreadable)?;
            let size = file.metadata().map_err(unreadable)?.len();
            let contents = if size > defer_bytes {
                None
            } else {
                let mut contents = Vec::with_capacity(size as usize);
                file.read_to_end(&mut contents).map_err(unreadable)?;
                total += contents.len() as u64;
                if total > MAX_CHART_BYTES {
                    return Err(fail(format!("larger than {} MiB", MAX_CHART_BYTES >> 20)));
                }
                Some(contents)
            };
            let relative = full
                .strip_prefix(path)
                .map_err(|e| fail(e.to_string()))?
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            entries.push(FolderEntry {
                path: relative,
                contents,
                size,
            });
        }
    }
    // Named here, with the folder, as `helm template` names it (the backend, which sees
    // only the files, could only say that the folder has none).
    if !entries.iter().any(|entry| entry.path == "Chart.yaml") {
        return Err(fail("Chart.yaml file is missing".to_owned()));
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ChartRead::Folder(FolderRead {
        root: path.to_path_buf(),
        entries,
    }))
}

impl FolderRead {
    /// The files `kept` names (ascending indexes; every file when `None`), the ones not
    /// read yet read now.
    fn into_input(self, kept: Option<&[u32]>) -> Result<ChartInput, TemplateInputError> {
        let FolderRead { root, entries } = self;
        let fail = |message: String| TemplateInputError::Chart {
            path: root.clone(),
            message,
        };
        let mut keep = kept.map(|kept| kept.iter().map(|&i| i as usize).peekable());
        let mut files = Vec::with_capacity(entries.len());
        let mut total = 0u64;
        for (index, entry) in entries.into_iter().enumerate() {
            if let Some(keep) = keep.as_mut()
                && keep.next_if_eq(&index).is_none()
            {
                continue;
            }
            let contents = match entry.contents {
                Some(contents) => contents,
                None => {
                    let full = root.join(&entry.path);
                    std::fs::read(&full).map_err(|e| fail(format!("{}: {e}", full.display())))?
                }
            };
            total += contents.len() as u64;
            if total > MAX_CHART_BYTES {
                return Err(fail(format!("larger than {} MiB", MAX_CHART_BYTES >> 20)));
            }
            files.push(ChartFile {
                path: entry.path,
                contents,
            });
        }
        Ok(ChartInput::Folder(files))
    }

    /// Whether every file has been read or is at most `bytes` long.
    fn all_read_or_smaller(&self, bytes: u64) -> bool {
        self.entries
            .iter()
            .all(|entry| entry.contents.is_some() || entry.size <= bytes)
    }

    /// The files read and the others listed, as `folder-template` takes them, with the
    /// grant to read the others.
    fn into_parts(self) -> (Vec<ChartFile>, Vec<UnreadFile>, FolderFilesGrant) {
        let mut files = Vec::new();
        let mut unread = Vec::new();
        for entry in self.entries {
            match entry.contents {
                Some(contents) => files.push(ChartFile {
                    path: entry.path,
                    contents,
                }),
                None => unread.push(UnreadFile {
                    path: entry.path,
                    size: entry.size,
                }),
            }
        }
        let grant = FolderFilesGrant::new(
            self.root.clone(),
            unread.iter().map(|file| (file.path.clone(), file.size)),
            MAX_CHART_BYTES,
        );
        (files, unread, grant)
    }

    /// [`FolderRead::into_parts`] undone.
    fn from_parts(root: PathBuf, files: Vec<ChartFile>, unread: Vec<UnreadFile>) -> FolderRead {
        let mut entries: Vec<FolderEntry> = files
            .into_iter()
            .map(|file| FolderEntry {
                size: file.contents.len() as u64,
                path: file.path,
                contents: Some(file.contents),
            })
            .chain(unread.into_iter().map(|file| FolderEntry {
                path: file.path,
                contents: None,
                size: file.size,
            }))
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        FolderRead { root, entries }
    }
}

/// The chart `read` as `backend` takes it. A folder with files not read yet is narrowed to
/// the files the chart is made of first, by the backend's optional `chart-folder` export;
/// without the export, or when its answer is an error or not ascending indexes of the
/// files, every file is passed (the backend applies its rules to what it gets, so the
/// render is the same, and a broken rules file is reported by the render).
pub async fn select_files(
    backend: &BackendPlugin,
    read: ChartRead,
) -> Result<ChartInput, TemplateInputError> {
    let folder = match read {
        ChartRead::Archive(archive) => return Ok(ChartInput::Archive(archive)),
        // Only files over DEFERRED_FILE_BYTES are worth asking about.
        ChartRead::Folder(folder) if folder.all_read_or_smaller(DEFERRED_FILE_BYTES) => {
            return folder.into_input(None);
        }
        ChartRead::Folder(folder) => folder,
    };
    let paths: Vec<String> = folder.entries.iter().map(|e| e.path.clone()).collect();
    let rules = |name: &str| {
        let entry = folder.entries.iter().find(|entry| entry.path == name)?;
        match &entry.contents {
            Some(contents) => Some(contents.clone()),
            None => std::fs::read(folder.root.join(name)).ok(),
        }
    };
    let answer = backend.chart_files(&paths, rules, Grants::default()).await;
    let kept = match answer {
        Some(Ok(kept))
            if kept.windows(2).all(|pair| pair[0] < pair[1])
                && kept
                    .last()
                    .is_none_or(|&last| (last as usize) < paths.len()) =>
        {
            Some(kept)
        }
        Some(Ok(_)) => {
            tracing::warn!(
                plugin = backend.name(),
                "chart-files answered indexes that are not ascending indexes of the folder's files; passing every file"
            );
            None
        }
        Some(Err(error)) => {
            tracing::debug!(%error, "chart-files refused the folder; passing every file");
            None
        }
        None => None,
    };
    folder.into_input(kept.as_deref())
}

/// The chart at `path` read on a thread of its own ([`read_chart`]; files larger than
/// [`READ_AHEAD_FILE_BYTES`] are left for later), so that reading a folder
/// overlaps loading the backend component: measured on bitnami/wordpress (158 files,
/// 2.1 MB), reading took 1.9 ms and setting up the runtime and loading the compiled
/// component 2.1 ms, one after the other, of a 27 ms `capstan template` run.
pub struct ChartReading {
    path: PathBuf,
    reader: std::thread::JoinHandle<Result<ChartRead, TemplateInputError>>,
}

impl ChartReading {
    /// Start reading the chart at `path`.
    pub fn start(path: &Path) -> Result<Self, TemplateInputError> {
        let owned = path.to_path_buf();
        let reader = std::thread::Builder::new()
            .name("capstan-chart-read".into())
            .spawn(move || read_chart(&owned, READ_AHEAD_FILE_BYTES))
            .map_err(|e| TemplateInputError::Chart {
                path: path.to_path_buf(),
                message: format!("cannot start reading: {e}"),
            })?;
        Ok(ChartReading {
            path: path.to_path_buf(),
            reader,
        })
    }

    /// The chart path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wait for the chart.
    pub fn finish(self) -> Result<ChartRead, TemplateInputError> {
        self.reader.join().unwrap_or_else(|_| {
            Err(TemplateInputError::Chart {
                path: self.path,
                message: "reading failed unexpectedly (the reading thread panicked)".to_owned(),
            })
        })
    }
}

/// The chart at `path` packaged by `backend` into an artifact.
pub async fn chart_artifact(backend: &BackendPlugin, path: &Path) -> anyhow::Result<ChartArtifact> {
    let input = chart_input(path)?;
    backend
        .package(&input)
        .await
        .map_err(|e| anyhow::anyhow!("chart {}: {e}", path.display()))
}

/// Render the chart `reading` reads for `release`: a folder in one call to the backend's
/// optional `folder-template` export, which reads the files not read ahead only if it
/// needs them; else (or when it answers `unsupported`) in one call to its optional
/// `chart-template` export when it has one (and does not answer `unsupported`), else by
/// `package` and then `template`. The outer error is about reading or packaging the chart,
/// the inner one is the render's.
pub async fn render_chart(
    backend: &BackendPlugin,
    reading: ChartReading,
    release: &ReleaseId,
    values: &[ValueLayer],
    options: &TemplateOptions,
) -> anyhow::Result<Result<Rendered, CallError>> {
    let path = reading.path().to_path_buf();
    let read = match reading.finish()? {
        ChartRead::Folder(folder) if backend.has_folder_template() => {
            let root = folder.root.clone();
            let (files, unread, grant) = folder.into_parts();
            let grants = Grants {
                folder_files: Some(grant),
                ..Grants::default()
            };
            match backend
                .template_folder(release, &files, &unread, values, options, grants)
                .await
            {
                Some(Err(CallError {
                    cause:
                        CallFailure::Returned {
                            code: ErrorCode::Unsupported,
                            ..
                        },
                    ..
                }))
                | None => ChartRead::Folder(FolderRead::from_parts(root, files, unread)),
                Some(rendered) => return Ok(rendered),
            }
        }
        read => read,
    };
    let input = select_files(backend, read).await?;
    match backend
        .template_chart(release, &input, values, options, Grants::default())
        .await
    {
        Some(Err(CallError {
            cause:
                CallFailure::Returned {
                    code: ErrorCode::Unsupported,
                    ..
                },
            ..
        }))
        | None => {}
        Some(rendered) => return Ok(rendered),
    }
    let artifact = match backend.package(&input).await {
        Ok(artifact) => artifact,
        // The backend refused the folder (no version, a broken Chart.yaml, …): the same
        // refusal `template-chart` would have answered, so it is reported the same way.
        Err(
            refusal @ CallError {
                cause:
                    CallFailure::Returned {
                        code: ErrorCode::InvalidInput,
                        ..
                    },
                ..
            },
        ) => return Ok(Err(refusal)),
        Err(e) => return Err(anyhow::anyhow!("chart {}: {e}", path.display())),
    };
    Ok(backend
        .template(release, &artifact, values, options, Grants::default())
        .await)
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

#[cfg(test)]
mod tests {
    use super::*;

    const CHART_YAML: &[u8] = b"apiVersion: v2\nname: c\nversion: 1.0.0\n";

    fn write(root: &Path, path: &str, contents: &[u8]) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, contents).unwrap();
    }

    fn folder(input: ChartInput) -> Vec<(String, usize)> {
        match input {
            ChartInput::Folder(files) => files
                .into_iter()
                .map(|f| (f.path, f.contents.len()))
                .collect(),
            ChartInput::Archive(_) => panic!("an archive"),
        }
    }

    /// Files over the deferral size are listed unread; the selected ones are read when the
    /// input is made, the others never.
    #[test]
    fn large_files_are_read_only_when_selected() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "Chart.yaml", CHART_YAML);
        write(root, "templates/cm.yaml", b"kind: ConfigMap\n");
        write(root, "files/big-kept.txt", &[b'k'; 3000]);
        write(root, "files/big-ignored.txt", &[b'i'; 3000]);
        let ChartRead::Folder(read) = read_chart(root, 1024).unwrap() else {
            panic!("not a folder")
        };
        let unread: Vec<&str> = read
            .entries
            .iter()
            .filter(|e| e.contents.is_none())
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(unread, ["files/big-ignored.txt", "files/big-kept.txt"]);
        assert!(!read.all_read_or_smaller(2999));
        assert!(read.all_read_or_smaller(3000));
        // Indexes in path order: Chart.yaml, files/big-ignored.txt, files/big-kept.txt,
        // templates/cm.yaml. The ignored file is removed first: reading it would fail.
        std::fs::remove_file(root.join("files/big-ignored.txt")).unwrap();
        assert_eq!(
            folder(read.into_input(Some(&[0, 2, 3])).unwrap()),
            [
                ("Chart.yaml".to_owned(), 38),
                ("files/big-kept.txt".to_owned(), 3000),
                ("templates/cm.yaml".to_owned(), 16),
            ]
        );
    }

    /// Split for `folder-template` and put back (after `unsupported`), the folder is as read;
    /// the grant reads the unread files only.
    #[test]
    fn a_folder_split_for_folder_template_is_whole_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "Chart.yaml", CHART_YAML);
        write(root, "README.md", &[b'r'; 3000]);
        write(root, "templates/cm.yaml", b"kind: ConfigMap\n");
        let ChartRead::Folder(read) = read_chart(root, 1024).unwrap() else {
            panic!("not a folder")
        };
        let (files, unread, grant) = read.into_parts();
        let read_paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(read_paths, ["Chart.yaml", "templates/cm.yaml"]);
        assert_eq!(unread.len(), 1);
        assert_eq!(
            (unread[0].path.as_str(), unread[0].size),
            ("README.md", 3000)
        );
        assert_eq!(grant.read("README.md").unwrap().len(), 3000);
        assert!(grant.read("Chart.yaml").is_err());
        let whole = FolderRead::from_parts(root.to_path_buf(), files, unread);
        assert_eq!(
            folder(whole.into_input(None).unwrap()),
            [
                ("Chart.yaml".to_owned(), 38),
                ("README.md".to_owned(), 3000),
                ("templates/cm.yaml".to_owned(), 16),
            ]
        );
    }

    /// Without a selection every file is passed, deferred ones read; a folder without
    /// Chart.yaml is refused with the folder named, before any backend sees it.
    #[test]
    fn without_a_selection_every_file_is_passed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "Chart.yaml", CHART_YAML);
        write(root, "big.bin", &[0; 5000]);
        let files = folder(chart_input(root).unwrap());
        assert_eq!(files.len(), 2);
        let ChartRead::Folder(read) = read_chart(root, 1024).unwrap() else {
            panic!("not a folder")
        };
        assert_eq!(folder(read.into_input(None).unwrap()), files);
        std::fs::remove_file(root.join("Chart.yaml")).unwrap();
        let error = read_chart(root, 1024).err().unwrap().to_string();
        assert!(error.ends_with("Chart.yaml file is missing"), "{error}");
    }
}
