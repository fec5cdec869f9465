//! `capstan plugin compile --config FILE` fills the configuration's compiled cache: the first
//! run compiles and writes one entry per plugin, the second finds them all, and a plugin
//! that cannot be read fails the command by name. Needs `make plugins` (the product
//! components under `target/plugins/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compile(config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["plugin", "compile", "--config"])
        .arg(config)
        .output()
        .expect("capstan runs")
}

fn cwasm_entries(cache: &Path) -> usize {
    std::fs::read_dir(cache)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn plugin_compile_fills_the_cache_and_names_what_fails() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let plugins = repo_root().join("target/plugins");
    let config = dir.path().join("capstan.yaml");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {}\nplugins:\n\
             - {{name: git, world: source, path: {p}/source-git.wasm}}\n\
             - {{name: helm-repo, world: source, path: {p}/source-helm-repo.wasm}}\n",
            cache.display(),
            p = plugins.display()
        ),
    )
    .unwrap();

    let first = compile(&config);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let compiled: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("\tcompiled in "))
        .collect();
    assert_eq!(compiled.len(), 2, "{stdout}");
    assert_eq!(cwasm_entries(&cache), 2);

    let second = compile(&config);
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(second.status.success(), "{stdout}");
    let cached = stdout
        .lines()
        .filter(|l| l.contains("\talready compiled in "))
        .count();
    assert_eq!(cached, 2, "{stdout}");

    let missing = dir.path().join("missing.wasm");
    std::fs::write(
        &config,
        format!(
            "cacheDir: {}\nplugins:\n\
             - {{name: git, world: source, path: {p}/source-git.wasm}}\n\
             - {{name: gone, world: source, path: {}}}\n",
            cache.display(),
            missing.display(),
            p = plugins.display()
        ),
    )
    .unwrap();
    let failed = compile(&config);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(
        stderr.contains("gone") && stderr.contains(&missing.display().to_string()),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 of 2 plugins did not compile"),
        "{stderr}"
    );
}
