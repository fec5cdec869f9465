//! Chart archive loading on arbitrary bytes, as given and gzipped (so the tar reader and
//! the chart checks see the fuzzer's bytes, not only the gzip header check).
#![no_main]

#[path = "bodies.rs"]
#[allow(dead_code)]
mod bodies;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| bodies::chart_archive(bytes));
