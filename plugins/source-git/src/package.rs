//! Packaging for this component: the chart folder read from the mirror becomes a chart
//! archive through `capstan_helm::package`, then the WIT artifact record.

use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, ChartMetadata};

pub use capstan_helm::package::{SourceFile, package};

/// As the WIT record, with its sha256 digest.
pub fn into_artifact(packaged: capstan_helm::package::Packaged) -> ChartArtifact {
    let digest = packaged.digest();
    ChartArtifact {
        archive: packaged.archive,
        digest,
        metadata: ChartMetadata {
            name: packaged.name,
            version: packaged.version,
            app_version: packaged.app_version,
        },
    }
}
