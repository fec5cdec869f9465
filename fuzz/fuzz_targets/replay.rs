//! The corpus replay of `make test`: every committed input of a fuzz target
//! (`fuzz/corpus/<target>` and `fuzz/seeds/<target>`) through the target's code on the
//! stable toolchain, each under `catch_unwind`, failing with the names of the files that
//! panicked. Included by path from the tests that replay (no crate of its own: it is test
//! code for two crates that share nothing else).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Replays every input of `target` through `run`; panics naming the inputs that made `run`
/// panic, or if the target has fewer than `at_least` inputs (a corpus that went missing
/// must not pass quietly). Returns how many inputs ran.
pub fn replay(repo_root: &Path, target: &str, at_least: usize, run: impl Fn(&[u8])) -> usize {
    let mut inputs = Vec::new();
    for kind in ["corpus", "seeds"] {
        let dir = repo_root.join("fuzz").join(kind).join(target);
        if let Ok(entries) = std::fs::read_dir(&dir) {
            inputs.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_file()),
            );
        }
    }
    inputs.sort();
    assert!(
        inputs.len() >= at_least,
        "fuzz/corpus/{target} and fuzz/seeds/{target} hold {} inputs, fewer than {at_least}",
        inputs.len()
    );
    let panicked: Vec<PathBuf> = inputs
        .iter()
        .filter(|path| {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            catch_unwind(AssertUnwindSafe(|| run(&bytes))).is_err()
        })
        .cloned()
        .collect();
    assert!(
        panicked.is_empty(),
        "{target}: these inputs panic: {panicked:?}"
    );
    inputs.len()
}

/// For the targets that take text: libFuzzer's `&str` targets skip input that is not UTF-8.
pub fn as_text(run: impl Fn(&str)) -> impl Fn(&[u8]) {
    move |bytes| {
        if let Ok(text) = std::str::from_utf8(bytes) {
            run(text)
        }
    }
}
