//! `package`: a chart folder packaged as `helm package` does (`.helmignore` applied,
//! deterministic archive), or an archive checked to be a loadable chart, into an artifact.

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, ChartMetadata, Error, ErrorCode,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{ChartFile, ChartInput};
use sha2::{Digest, Sha256};

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// The files of a folder as the chart library takes them.
pub fn source_files(files: Vec<ChartFile>) -> Vec<capstan_helm::package::SourceFile> {
    files
        .into_iter()
        .map(|f| capstan_helm::package::SourceFile {
            path: f.path,
            executable: false,
            contents: f.contents,
        })
        .collect()
}

/// The artifact of `chart`.
pub fn package(chart: ChartInput) -> Result<ChartArtifact, Error> {
    match chart {
        ChartInput::Folder(files) => {
            let files = source_files(files);
            // A local folder is packed only to be handed to `template` or `sync` in the same
            // process: deflating it is wasted work (stored blocks cost a CRC and a copy; the
            // `fast` level was a tenth of a `capstan template` run, measured with perf).
            let packaged = capstan_helm::package::package_with(&files, flate2::Compression::none())
                .map_err(invalid)?;
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
        ChartInput::Archive(archive) => {
            let chart = capstan_helm::load::load_archive(&archive)
                .map_err(|e| invalid(format!("not a chart archive: {e}")))?;
            let digest = format!("sha256:{}", hex::encode(Sha256::digest(&archive)));
            let metadata = chart.metadata;
            Ok(ChartArtifact {
                archive,
                digest,
                metadata: ChartMetadata {
                    name: metadata.name,
                    version: metadata.version,
                    app_version: (!metadata.app_version.is_empty()).then_some(metadata.app_version),
                },
            })
        }
    }
}

/// `chart-folder.rules-file`: the folder's `.helmignore`.
pub fn rules_file() -> Option<String> {
    Some(capstan_helm::package::IGNORE_FILE.to_owned())
}

/// `chart-folder.chart-files`: the files of a folder that `package` and `template-chart`
/// read, by `.helmignore` (`rules`).
pub fn chart_files(paths: Vec<String>, rules: Option<Vec<u8>>) -> Result<Vec<u32>, Error> {
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let kept = capstan_helm::package::kept_files(&paths, rules.as_deref()).map_err(invalid)?;
    kept.into_iter()
        .map(|i| u32::try_from(i).map_err(|_| invalid(format!("more than {} files", u32::MAX))))
        .collect()
}
