//! Host resources plugins hold handles to, kept in the call's resource table.

use std::path::PathBuf;

/// An open mirror (`git.repository`), as held in a call's resource table.
#[derive(Debug)]
pub struct OpenRepository {
    /// The mirror's folder.
    pub(crate) path: PathBuf,
}
