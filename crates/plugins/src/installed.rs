//! Components installed beside the `capstan` binary, for commands run without a
//! configuration file (`capstan template CHART`, as `helm template CHART` needs nothing but
//! the chart). A backend named `NAME` is the file `backend-NAME.wasm` in the first of these
//! folders that holds it:
//!
//! 1. `$CAPSTAN_PLUGINS_DIR`, when set;
//! 2. `<prefix>/lib/capstan/plugins/` for a binary installed as `<prefix>/bin/capstan`
//!    (the image's `/usr/lib/capstan/plugins/`);
//! 3. `/usr/lib/capstan/plugins/`;
//! 4. `target/plugins/` of a checkout, for a binary built in `target/<profile>/` (where
//!    `make plugins` puts every component).

use std::path::{Path, PathBuf};

use crate::config::{PluginConfig, PluginLimits, PluginWorld};

/// The environment variable naming a folder of installed components.
pub const PLUGINS_DIR_ENV: &str = "CAPSTAN_PLUGINS_DIR";

/// The system-wide folder of installed components (the image puts them there).
pub const SYSTEM_PLUGINS_DIR: &str = "/usr/lib/capstan/plugins";

/// No folder searched holds the component asked for.
#[derive(Debug, thiserror::Error)]
#[error(
    "no configuration given and no `{file}` installed; searched: {}. Run `make plugins` in a \
     checkout, set {PLUGINS_DIR_ENV}, or pass --config",
    searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct NotInstalled {
    /// The component file looked for.
    pub file: String,
    /// The folders searched, in order.
    pub searched: Vec<PathBuf>,
}

/// The folders searched for installed components, in order, for a binary at `exe` with
/// `plugins_dir_env` the value of `$CAPSTAN_PLUGINS_DIR`. Duplicates are dropped.
pub fn search_path(exe: Option<&Path>, plugins_dir_env: Option<&str>) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    if let Some(dir) = plugins_dir_env.filter(|d| !d.is_empty()) {
        folders.push(PathBuf::from(dir));
    }
    let exe_dir = exe.and_then(Path::parent);
    // <prefix>/bin/capstan → <prefix>/lib/capstan/plugins
    if let Some(prefix) = exe_dir
        .filter(|d| d.file_name().is_some_and(|n| n == "bin"))
        .and_then(Path::parent)
    {
        folders.push(prefix.join("lib/capstan/plugins"));
    }
    folders.push(PathBuf::from(SYSTEM_PLUGINS_DIR));
    // <checkout>/target/<profile>/capstan → <checkout>/target/plugins
    if let Some(target) = exe_dir.and_then(Path::parent) {
        folders.push(target.join("plugins"));
    }
    let mut unique: Vec<PathBuf> = Vec::with_capacity(folders.len());
    for folder in folders {
        if !unique.contains(&folder) {
            unique.push(folder);
        }
    }
    unique
}

/// The configuration of backend `name` from the first folder of `search` holding
/// `backend-<name>.wasm`, with the limits a one-shot command needs to render large charts.
pub fn backend(name: &str, search: &[PathBuf]) -> Result<PluginConfig, NotInstalled> {
    let file = format!("backend-{name}.wasm");
    search
        .iter()
        .map(|folder| folder.join(&file))
        .find(|path| path.is_file())
        .map(|path| PluginConfig {
            name: name.to_owned(),
            world: PluginWorld::Backend,
            path,
            limits: PluginLimits {
                memory_mib: 1024,
                ..PluginLimits::default()
            },
            wasi: Default::default(),
            kinds: Vec::new(),
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        })
        .ok_or_else(|| NotInstalled {
            file,
            searched: search.to_vec(),
        })
}

/// [`backend`] searched from the running binary's place and the environment.
pub fn backend_beside_binary(name: &str) -> Result<PluginConfig, NotInstalled> {
    let exe = std::env::current_exe().ok();
    let env = std::env::var(PLUGINS_DIR_ENV).ok();
    backend(name, &search_path(exe.as_deref(), env.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_comes_first_then_the_install_prefix_then_the_checkout() {
        let search = search_path(Some(Path::new("/opt/capstan/bin/capstan")), Some("/x"));
        assert_eq!(
            search,
            [
                PathBuf::from("/x"),
                PathBuf::from("/opt/capstan/lib/capstan/plugins"),
                PathBuf::from(SYSTEM_PLUGINS_DIR),
                PathBuf::from("/opt/capstan/plugins"),
            ]
        );
        let search = search_path(Some(Path::new("/src/capstan/target/debug/capstan")), None);
        assert_eq!(
            search,
            [
                PathBuf::from(SYSTEM_PLUGINS_DIR),
                PathBuf::from("/src/capstan/target/plugins"),
            ]
        );
    }

    #[test]
    fn an_installed_binary_in_usr_bin_searches_the_system_folder_once() {
        let search = search_path(Some(Path::new("/usr/bin/capstan")), Some(""));
        assert_eq!(
            search,
            [
                PathBuf::from(SYSTEM_PLUGINS_DIR),
                PathBuf::from("/usr/plugins"),
            ]
        );
    }

    #[test]
    fn the_first_folder_holding_the_component_wins() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        std::fs::write(second.path().join("backend-helm3.wasm"), b"").unwrap();
        std::fs::write(first.path().join("backend-helm2.wasm"), b"").unwrap();
        let search = [first.path().to_path_buf(), second.path().to_path_buf()];
        let found = backend("helm3", &search).unwrap();
        assert_eq!(found.path, second.path().join("backend-helm3.wasm"));
        assert_eq!(found.world, PluginWorld::Backend);
        assert_eq!(found.name, "helm3");
    }

    #[test]
    fn a_missing_component_names_every_folder_searched() {
        let empty = tempfile::tempdir().unwrap();
        let search = [empty.path().join("a"), empty.path().join("b")];
        let message = backend("helm3", &search).unwrap_err().to_string();
        assert!(message.contains("`backend-helm3.wasm`"), "{message}");
        for folder in &search {
            assert!(message.contains(&folder.display().to_string()), "{message}");
        }
        assert!(message.contains("--config"), "{message}");
    }
}
