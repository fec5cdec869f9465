//! Release records as stored in the cluster: Helm 3's (base64 of gzipped JSON) and
//! Tiller's (base64 of protobuf, gzipped or not), from arbitrary payloads.
#![no_main]

#[path = "bodies.rs"]
#[allow(dead_code)]
mod bodies;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| bodies::release_records(bytes));
