//! A Helm repository's `index.yaml` as the Helm-repository source reads it, and version
//! selection over whatever parsed.
#![no_main]

// The module itself, not its crate: that crate links the plugin SDK's component bindings,
// which do not link natively under the fuzzing flags.
#[path = "../../plugins/lib/chart-repo/src/index.rs"]
#[allow(dead_code)]
mod index;
libfuzzer_sys::fuzz_target!(|bytes: &[u8]| index::exercise(bytes));
