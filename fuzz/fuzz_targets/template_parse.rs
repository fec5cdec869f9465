//! The Go template lexer and parser on arbitrary text: an error or trees, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    // Known function names are what makes `{{ x }}` a call or a parse error.
    let is_func = |name: &str| matches!(name, "include" | "tpl" | "quote" | "default" | "printf");
    let _ = capstan_gotmpl::parse::parse("fuzz", text, &is_func);
});
