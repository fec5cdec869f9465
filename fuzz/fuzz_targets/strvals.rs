//! Helm's `--set` family of expression parsers on arbitrary text, each into fresh values.
#![no_main]

#[path = "bodies.rs"]
#[allow(dead_code)]
mod bodies;

libfuzzer_sys::fuzz_target!(|text: &str| bodies::strvals(text));
