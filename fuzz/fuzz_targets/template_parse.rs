//! The Go template lexer and parser on arbitrary text: an error or trees, never a panic.
#![no_main]

#[path = "bodies.rs"]
#[allow(dead_code)]
mod bodies;

libfuzzer_sys::fuzz_target!(|text: &str| bodies::template_parse(text));
