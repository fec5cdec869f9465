//! Helm's `--set` family of expression parsers on arbitrary text, each into fresh values.
#![no_main]

use capstan_gotmpl::value::Value;
use capstan_helm::strvals;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for parse in [
        strvals::parse_into,
        strvals::parse_into_string,
        strvals::parse_json_into,
        strvals::parse_literal_into,
    ] {
        let values = Value::new_map();
        let _ = parse(text, &values);
    }
});
