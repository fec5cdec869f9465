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
