//! Chart archive loading on arbitrary bytes, as given and gzipped (so the tar reader and
//! the chart checks see the fuzzer's bytes, not only the gzip header check).
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = capstan_helm::load::load_archive(bytes);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    if gz.write_all(bytes).is_ok()
        && let Ok(packed) = gz.finish()
    {
        let _ = capstan_helm::load::load_archive(&packed);
    }
});
