//! The go-yaml-compatible parser on arbitrary text (every document, then Helm's values
//! reading), and the emitter on whatever parsed: an error or a value, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(documents) = capstan_goyaml::from_yaml_documents(text) {
        for document in &documents {
            let _ = capstan_goyaml::to_yaml(document);
        }
    }
    let _ = capstan_helm::load::load_values(text.as_bytes());
});
