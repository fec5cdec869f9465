//! Where the Helm parity corpus is, for every test, benchmark and script that reads it: the
//! folder `CAPSTAN_PARITY_DIR` names when it is set, otherwise `shared/helm-parity` beside
//! the checkout (`<checkout>/../shared/helm-parity`, the layout of the development machines
//! and CI). The folder holds `cases/` (one folder per chart) and `snippets.yaml`.
//!
//! This file is the one definition: capstan-helm's tests and benchmarks and the integration
//! tests use it as `capstan_helm::corpus`; the crates capstan-helm depends on (capstan-goyaml,
//! capstan-sprig) include it in their tests with `#[path]`. It finds the checkout from
//! `CARGO_MANIFEST_DIR`, which for every crate that compiles it is `<checkout>/plugins/lib/*`.
//! `scripts/bench-render` follows the same rule.
//!
//! A missing corpus is an error naming the folder looked in, never a skipped check; the
//! `MIN_*` counts are what the corpus held when the checks were written, so a corpus that
//! lost cases fails them too.

use std::path::{Path, PathBuf};

/// The environment variable naming the corpus folder (the one holding `cases/`).
pub const ENV: &str = "CAPSTAN_PARITY_DIR";

/// Chart cases in `cases/` (each rendered by real Helm).
pub const MIN_CASES: usize = 124;

/// Values variants over all cases (what the parity test renders and compares).
pub const MIN_VARIANTS: usize = 170;

/// Entries of `snippets.yaml`.
pub const MIN_SNIPPETS: usize = 272;

/// The corpus folder: `$CAPSTAN_PARITY_DIR`, else `shared/helm-parity` beside the checkout.
/// Whether it exists is not checked (see [`dir`]).
pub fn location() -> PathBuf {
    match std::env::var_os(ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
            // The checkout exists (this was compiled from it); resolve it for messages.
            let checkout = checkout.canonicalize().unwrap_or(checkout);
            checkout
                .parent()
                .map_or_else(|| checkout.join(".."), Path::to_path_buf)
                .join("shared/helm-parity")
        }
    }
}

/// How the folder was chosen, for messages.
fn origin() -> &'static str {
    if std::env::var_os(ENV).is_some_and(|dir| !dir.is_empty()) {
        "from CAPSTAN_PARITY_DIR"
    } else {
        "the default, beside the checkout; set CAPSTAN_PARITY_DIR to use another"
    }
}

/// The corpus folder, or an error naming the folder looked in.
pub fn dir() -> Result<PathBuf, String> {
    let dir = location();
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "Helm parity corpus not found: {} is not a folder ({})",
            dir.display(),
            origin()
        ))
    }
}

/// The corpus `cases` folder, or an error naming it.
pub fn cases_dir() -> Result<PathBuf, String> {
    let cases = dir()?.join("cases");
    if cases.is_dir() {
        Ok(cases)
    } else {
        Err(format!(
            "Helm parity corpus has no cases: {} is not a folder ({})",
            cases.display(),
            origin()
        ))
    }
}

/// The corpus `snippets.yaml`, or an error naming it.
pub fn snippets_file() -> Result<PathBuf, String> {
    let file = dir()?.join("snippets.yaml");
    if file.is_file() {
        Ok(file)
    } else {
        Err(format!(
            "Helm parity corpus has no snippets: {} is not a file ({})",
            file.display(),
            origin()
        ))
    }
}

/// The case folders of `cases/` (those holding a `chart/` folder), sorted by name; an error
/// when there are fewer than [`MIN_CASES`].
pub fn case_dirs() -> Result<Vec<PathBuf>, String> {
    let cases = cases_dir()?;
    let entries =
        std::fs::read_dir(&cases).map_err(|e| format!("cannot read {}: {e}", cases.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("chart").is_dir())
        .collect();
    found.sort();
    at_least(found.len(), MIN_CASES, "chart cases", &cases)?;
    Ok(found)
}

/// One case folder by name, or an error naming the folder looked for.
pub fn case(name: &str) -> Result<PathBuf, String> {
    let case = cases_dir()?.join(name);
    if case.join("chart").is_dir() {
        Ok(case)
    } else {
        Err(format!(
            "corpus case {name} is missing: {} has no chart/ folder",
            case.display()
        ))
    }
}

/// An error unless `count` of `what` (read from `place`) is at least `minimum`.
pub fn at_least(count: usize, minimum: usize, what: &str, place: &Path) -> Result<(), String> {
    if count >= minimum {
        Ok(())
    } else {
        Err(format!(
            "only {count} {what} in {} (at least {minimum} expected; is the corpus complete?)",
            place.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewer_than_the_minimum_is_an_error_naming_the_place() {
        assert!(at_least(3, 3, "cases", Path::new("/c")).is_ok());
        let error = at_least(2, 3, "cases", Path::new("/c")).unwrap_err();
        assert!(error.contains("only 2 cases in /c"), "{error}");
    }
}
