//! Why a plugin could not be loaded ([`LoadError`]) or found ([`LookupError`]).

use std::path::PathBuf;

use crate::config::PluginWorld;
use crate::inspect::WorldMismatch;

/// Why one plugin could not be loaded. Each names the plugin and its file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("plugin `{name}`: cannot read {path}: {cause}")]
    Read {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// I/O error.
        cause: std::io::Error,
    },
    /// The file is not a WebAssembly component.
    #[error(
        "plugin `{name}`: {path} is not a WebAssembly component ({found}); expected a component exporting {expected}"
    )]
    NotComponent {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// What the file is instead.
        found: &'static str,
        /// The export that was expected.
        expected: String,
    },
    /// Cranelift could not compile the component.
    #[error("plugin `{name}`: cannot compile {path}: {message}")]
    Compile {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Compiler error.
        message: String,
    },
    /// The component does not implement the configured world.
    #[error(
        "plugin `{name}`: {path} is not a `{world}` component: expected an export of {expected}, but {mismatch}"
    )]
    WrongWorld {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Configured world.
        world: PluginWorld,
        /// The export that was expected.
        expected: String,
        /// What was found instead.
        mismatch: WorldMismatch,
    },
    /// A component of the previous contract (0.1) that cannot be adapted as configured.
    #[error("plugin `{name}`: {path} implements capstan:plugin@{version}: {message}")]
    Previous {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Its contract version.
        version: String,
        /// Why it cannot be served, and what to do.
        message: String,
    },
    /// A Helm 4 plugin (`plugin.yaml` + `plugin.wasm`) that cannot be served.
    #[error("plugin `{name}`: {path}: {message}")]
    Helm4 {
        /// Plugin name.
        name: String,
        /// `plugin.yaml` or `plugin.wasm`.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The component imports something this host does not provide, or its exports have
    /// the wrong types.
    #[error("plugin `{name}`: {path} cannot be linked: {message}")]
    Link {
        /// Plugin name.
        name: String,
        /// Component file.
        path: PathBuf,
        /// Linker error.
        message: String,
    },
}

/// Looking up a plugin by name and world.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// No plugin of that name is loaded.
    #[error("no plugin named `{0}` is loaded")]
    Unknown(String),
    /// The plugin implements another world.
    #[error("plugin `{name}` is a `{actual}` plugin, not `{wanted}`")]
    WrongWorld {
        /// Plugin name.
        name: String,
        /// Its world.
        actual: PluginWorld,
        /// The world asked for.
        wanted: PluginWorld,
    },
}
