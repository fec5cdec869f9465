//! Release records as stored in the cluster: Helm 3's (base64 of gzipped JSON) and
//! Tiller's (base64 of protobuf, gzipped or not), from arbitrary payloads.
#![no_main]

use std::io::Write;

use base64::Engine;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let b64 = base64::engine::general_purpose::STANDARD;
    let plain = b64.encode(bytes);
    let _ = capstan_helm::tiller::decode(&plain);
    let _ = capstan_helm::release::decode(&plain);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    if gz.write_all(bytes).is_ok()
        && let Ok(packed) = gz.finish()
    {
        let packed = b64.encode(packed);
        let _ = capstan_helm::release::decode(&packed);
        let _ = capstan_helm::tiller::decode(&packed);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = capstan_helm::release::from_json(text);
    }
});
