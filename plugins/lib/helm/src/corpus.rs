//! Where the rendering-parity corpus is: `CAPSTAN_PARITY_DIR` when set, otherwise the first
//! `shared/helm-parity/cases` found beside the checkout or one of its parent folders (the
//! layout of the development machines and CI). Used by the parity tests and benchmarks.

use std::path::{Path, PathBuf};

/// The corpus `cases` folder, if there is one.
pub fn cases_dir(start: &Path) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CAPSTAN_PARITY_DIR") {
        return Some(PathBuf::from(dir));
    }
    start
        .ancestors()
        .map(|a| a.join("shared/helm-parity/cases"))
        .find(|candidate| candidate.is_dir())
}
