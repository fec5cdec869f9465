//! The fuzz corpora replayed on the stable toolchain (`make test`): every committed input of
//! the template, YAML, strvals, chart-archive and release-record targets through the same
//! code the libFuzzer targets run (`fuzz/fuzz_targets/bodies.rs`). The campaigns themselves
//! (`make fuzz`, nightly, sanitizers) found the inputs; this keeps them from regressing at
//! the cost of a test instead of a sanitizer build.

use std::path::{Path, PathBuf};

#[path = "../../../../fuzz/fuzz_targets/bodies.rs"]
mod bodies;
#[path = "../../../../fuzz/fuzz_targets/replay.rs"]
mod replay;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

#[test]
fn template_parse_corpus() {
    replay::replay(
        &repo_root(),
        "template_parse",
        100,
        replay::as_text(bodies::template_parse),
    );
}

#[test]
fn yaml_parse_corpus() {
    replay::replay(
        &repo_root(),
        "yaml_parse",
        100,
        replay::as_text(bodies::yaml_parse),
    );
}

#[test]
fn strvals_corpus() {
    replay::replay(
        &repo_root(),
        "strvals",
        100,
        replay::as_text(bodies::strvals),
    );
}

#[test]
fn chart_archive_corpus() {
    replay::replay(&repo_root(), "chart_archive", 100, bodies::chart_archive);
}

#[test]
fn release_records_corpus() {
    replay::replay(
        &repo_root(),
        "release_records",
        100,
        bodies::release_records,
    );
}
