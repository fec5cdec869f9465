//! Reading what a component is before trusting it: the binary header, its imports and
//! exports, and which Capstan world and WIT package version it implements.

use std::fmt;

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::config::PluginWorld;

/// The `capstan:plugin` package versions this host supports: every `0.2.x` (current) and,
/// through an adapter, `0.1.x` components (N−1; `compat`, `compat_backend`).
pub const SUPPORTED_PACKAGE: &str = "capstan:plugin@0.2.x (and 0.1.x through an adapter)";

/// The versions of the current contract, as named in messages.
pub const CURRENT_VERSIONS: &str = "0.2.x";

/// What kind of WebAssembly binary a file holds, from its 8-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    /// A component (component-model layer 1).
    Component,
    /// A core module: not loadable as a plugin.
    CoreModule,
    /// Not WebAssembly at all.
    NotWasm,
}

impl BinaryKind {
    /// What the file is instead of a component, or `None` when it is one.
    pub fn not_a_component(self) -> Option<&'static str> {
        match self {
            BinaryKind::Component => None,
            BinaryKind::CoreModule => Some("a core WebAssembly module"),
            BinaryKind::NotWasm => Some("no WebAssembly header"),
        }
    }
}

/// Classify bytes by their WebAssembly header.
pub fn binary_kind(bytes: &[u8]) -> BinaryKind {
    const MAGIC: &[u8] = b"\0asm";
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        return BinaryKind::NotWasm;
    }
    // Core modules carry version 1 and layer 0; components carry layer 1.
    match (&bytes[4..6], &bytes[6..8]) {
        (_, [1, 0]) => BinaryKind::Component,
        ([1, 0], [0, 0]) => BinaryKind::CoreModule,
        _ => BinaryKind::NotWasm,
    }
}

/// Imports and exports of a component, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentDescription {
    /// Imported instance and function names, e.g. `capstan:plugin/kube@0.2.0`.
    pub imports: Vec<String>,
    /// Exported names, e.g. `capstan:plugin/backend@0.2.0`.
    pub exports: Vec<String>,
}

impl ComponentDescription {
    /// Read the names from a compiled component.
    pub fn of(engine: &Engine, component: &Component) -> Self {
        let ty = component.component_type();
        ComponentDescription {
            imports: ty
                .imports(engine)
                .map(|(name, _)| name.to_owned())
                .collect(),
            exports: ty
                .exports(engine)
                .map(|(name, _)| name.to_owned())
                .collect(),
        }
    }

    /// The Capstan worlds this component's exports implement, with the package version
    /// found in each export name.
    pub fn capstan_worlds(&self) -> Vec<(PluginWorld, String)> {
        let mut found = Vec::new();
        for export in &self.exports {
            for world in [PluginWorld::Source, PluginWorld::Backend] {
                if let Some(version) = export
                    .strip_prefix(world.export_interface())
                    .and_then(|rest| rest.strip_prefix('@'))
                {
                    found.push((world, version.to_owned()));
                }
            }
        }
        found
    }
}

/// Why a component does not implement the world it was configured for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldMismatch {
    /// No export of the expected interface at all.
    Missing {
        /// What the component does export.
        exports: Vec<String>,
    },
    /// The interface is exported at a version this host does not support.
    Version {
        /// The version found.
        found: String,
    },
}

impl fmt::Display for WorldMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorldMismatch::Missing { exports } if exports.is_empty() => {
                f.write_str("it exports nothing")
            }
            WorldMismatch::Missing { exports } => {
                write!(f, "it exports {}", exports.join(", "))
            }
            WorldMismatch::Version { found } => write!(
                f,
                "it implements capstan:plugin@{found}; this host supports {SUPPORTED_PACKAGE}"
            ),
        }
    }
}

/// Which contract a `capstan:plugin` version is, for this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// The current contract, `0.2.x`.
    Current,
    /// The previous one, `0.1.x` (N−1), served through [`crate::compat`].
    Previous,
}

/// The contract `version` belongs to, if this host serves it (while 0.x, a minor version
/// is a contract; patch versions are compatible).
pub fn contract_of(version: &str) -> Option<Contract> {
    let mut parts = version.split(['.', '-', '+']);
    match (parts.next(), parts.next()) {
        (Some("0"), Some("2")) => Some(Contract::Current),
        (Some("0"), Some("1")) => Some(Contract::Previous),
        _ => None,
    }
}

/// Whether `version` is served by this host (the current contract or the previous one).
pub fn version_supported(version: &str) -> bool {
    contract_of(version).is_some()
}

/// Check that a component exports `world` at a supported version.
pub fn check_world(
    description: &ComponentDescription,
    world: PluginWorld,
) -> Result<String, WorldMismatch> {
    let versions: Vec<String> = description
        .capstan_worlds()
        .into_iter()
        .filter(|(w, _)| *w == world)
        .map(|(_, v)| v)
        .collect();
    match versions.iter().find(|v| version_supported(v)) {
        Some(version) => Ok(version.clone()),
        None => match versions.into_iter().next() {
            Some(found) => Err(WorldMismatch::Version { found }),
            None => Err(WorldMismatch::Missing {
                exports: description.exports.clone(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(exports: &[&str]) -> ComponentDescription {
        ComponentDescription {
            imports: vec![],
            exports: exports.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn headers_are_told_apart() {
        assert_eq!(binary_kind(b"\0asm\x0d\0\x01\0rest"), BinaryKind::Component);
        assert_eq!(binary_kind(b"\0asm\x01\0\0\0"), BinaryKind::CoreModule);
        assert_eq!(binary_kind(b"#!/bin/sh\nexit 0\n"), BinaryKind::NotWasm);
        assert_eq!(binary_kind(b"\0as"), BinaryKind::NotWasm);
    }

    #[test]
    fn world_and_version_are_read_from_export_names() {
        let ok = described(&["capstan:plugin/backend@0.2.0"]);
        assert_eq!(check_world(&ok, PluginWorld::Backend), Ok("0.2.0".into()));
        let patch = described(&["capstan:plugin/source@0.2.7"]);
        assert_eq!(check_world(&patch, PluginWorld::Source), Ok("0.2.7".into()));
        assert_eq!(
            check_world(&ok, PluginWorld::Source),
            Err(WorldMismatch::Missing {
                exports: vec!["capstan:plugin/backend@0.2.0".into()]
            })
        );
        let future = described(&["capstan:plugin/backend@1.0.0"]);
        let error = check_world(&future, PluginWorld::Backend).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it implements capstan:plugin@1.0.0; this host supports capstan:plugin@0.2.x (and 0.1.x through an adapter)"
        );
        assert!(!version_supported("1.1.0"));
        assert!(!version_supported("0.3.0"));
        assert!(version_supported("0.2.0-rc.1"));
        assert_eq!(contract_of("0.1.1"), Some(Contract::Previous));
        assert_eq!(contract_of("0.2.4"), Some(Contract::Current));
    }
}
