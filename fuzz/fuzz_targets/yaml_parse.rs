//! The go-yaml-compatible parser on arbitrary text (every document, then Helm's values
//! reading), and the emitter on whatever parsed: an error or a value, never a panic.
#![no_main]

#[path = "bodies.rs"]
#[allow(dead_code)]
mod bodies;

libfuzzer_sys::fuzz_target!(|text: &str| bodies::yaml_parse(text));
