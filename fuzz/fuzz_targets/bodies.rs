//! What each fuzz target does with one input, in one place for the two runners of it: the
//! libFuzzer targets beside this file (`make fuzz`, nightly, with sanitizers) and the corpus
//! replay of `make test` (`plugins/lib/helm/tests/fuzz_corpus.rs`), which runs every
//! committed input through the same code on the stable toolchain. Each returns nothing:
//! errors are expected answers; only a panic (or a hang, or an allocation the limits did
//! not stop) is a finding.

use std::io::Write;

use base64::Engine;

/// The Go template lexer and parser on arbitrary text: an error or trees, never a panic.
pub fn template_parse(text: &str) {
    // Known function names are what makes `{{ x }}` a call or a parse error.
    let is_func = |name: &str| matches!(name, "include" | "tpl" | "quote" | "default" | "printf");
    let _ = capstan_gotmpl::parse::parse("fuzz", text, &is_func);
}

/// The go-yaml-compatible parser on arbitrary text (every document, then Helm's values
/// reading), and the emitter on whatever parsed.
pub fn yaml_parse(text: &str) {
    if let Ok(documents) = capstan_goyaml::from_yaml_documents(text) {
        for document in &documents {
            let _ = capstan_goyaml::to_yaml(document);
        }
    }
    let _ = capstan_helm::load::load_values(text.as_bytes());
}

/// Helm's `--set` family of expression parsers on arbitrary text, each into fresh values.
pub fn strvals(text: &str) {
    use capstan_helm::strvals;
    for parse in [
        strvals::parse_into,
        strvals::parse_into_string,
        strvals::parse_json_into,
        strvals::parse_literal_into,
    ] {
        let values = capstan_gotmpl::value::Value::new_map();
        let _ = parse(text, &values);
    }
}

/// Chart archive loading on arbitrary bytes, as given and gzipped (so the tar reader and
/// the chart checks see the input, not only the gzip header check).
pub fn chart_archive(bytes: &[u8]) {
    let _ = capstan_helm::load::load_archive(bytes);
    if let Some(packed) = gzipped(bytes) {
        let _ = capstan_helm::load::load_archive(&packed);
    }
}

/// Release records as stored in the cluster: Helm 3's (base64 of gzipped JSON) and
/// Tiller's (base64 of protobuf, gzipped or not), from arbitrary payloads.
pub fn release_records(bytes: &[u8]) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let plain = b64.encode(bytes);
    let _ = capstan_helm::tiller::decode(&plain);
    let _ = capstan_helm::release::decode(&plain);
    if let Some(packed) = gzipped(bytes) {
        let packed = b64.encode(packed);
        let _ = capstan_helm::release::decode(&packed);
        let _ = capstan_helm::tiller::decode(&packed);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = capstan_helm::release::from_json(text);
    }
}

fn gzipped(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).ok()?;
    gz.finish().ok()
}
