//! A Helm repository's `index.yaml` as the Helm-repository source reads it, and version
//! selection over whatever parsed.
#![no_main]

// The module itself, not the component crate: that crate's cdylib (with the component's
// exports) does not link natively under the fuzzing flags.
#[path = "../../plugins/source-helm-repo/src/index.rs"]
#[allow(dead_code)]
mod index;
libfuzzer_sys::fuzz_target!(|bytes: &[u8]| index::exercise(bytes));
