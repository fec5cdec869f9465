//! Time RSA key generation: `cargo run --release -p capstan-sprig --example keygen -- BITS COUNT`
//! prints the mean milliseconds per key (what `genPrivateKey` and `genCA` spend).

use std::time::Instant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let bits: usize = args
        .next()
        .unwrap_or_else(|| "2048".into())
        .parse()
        .map_err(|e| format!("BITS: {e}"))?;
    let count: u32 = args
        .next()
        .unwrap_or_else(|| "5".into())
        .parse()
        .map_err(|e| format!("COUNT: {e}"))?;
    let started = Instant::now();
    for _ in 0..count {
        capstan_sprig::generate_rsa_key_der(bits)?;
    }
    let per_key = started.elapsed().as_secs_f64() * 1000.0 / f64::from(count.max(1));
    println!("capstan rsa {bits}: {per_key:.1} ms/key");
    Ok(())
}
