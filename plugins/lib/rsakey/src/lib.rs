//! RSA keys and signatures for Capstan, without Helm: the prime search behind Sprig's
//! `genPrivateKey`/`genCA`/… (used natively by the template functions and by the host's
//! `crypto` interface, which serves keys to components) and the PKCS#1 v1.5 SHA-256
//! signatures of the certificates those functions make.
//!
//! Why by hand: the `rsa` crate's key generation and signing run on `num-bigint-dig`, which
//! allocates for every product; a fixed-width Montgomery representation (the `montgomery` module)
//! generates 2048-bit keys about 2× faster than AWS-LC on the same machine and signs
//! without allocating per multiplication (figures in docs/rendering.md).

mod keygen;
mod montgomery;
mod sign;

pub use keygen::{generate, generate_with_threads};
pub use sign::sign_sha256;

/// A new RSA key of `bits` bits (even, 512 to 16384; exponent 65537) as PKCS#1 DER, every
/// core (up to four) searching for each prime.
pub fn generate_der(bits: usize) -> Result<Vec<u8>, String> {
    der_of(bits, generate)
}

/// [`generate_der`] with `threads` threads searching for each prime
/// ([`generate_with_threads`]).
pub fn generate_der_with_threads(bits: usize, threads: usize) -> Result<Vec<u8>, String> {
    der_of(bits, |bits| generate_with_threads(bits, threads))
}

/// A key of `bits` bits from `generate`, as PKCS#1 DER.
fn der_of(
    bits: usize,
    generate: impl FnOnce(usize) -> rsa::Result<rsa::RsaPrivateKey>,
) -> Result<Vec<u8>, String> {
    use rsa::pkcs1::EncodeRsaPrivateKey;
    if !(512..=16384).contains(&bits) || !bits.is_multiple_of(2) {
        return Err(format!("unsupported RSA key size {bits}"));
    }
    let key = generate(bits).map_err(|e| e.to_string())?;
    let der = key.to_pkcs1_der().map_err(|e| e.to_string())?;
    Ok(der.as_bytes().to_vec())
}

/// [`sign_sha256`] with the key given as PKCS#1 DER (`RSAPrivateKey`), as the host's
/// `crypto` interface receives it from a component; keys whose size is not in `sizes`
/// (bits) are refused before any work.
pub fn sign_sha256_der(
    key_der: &[u8],
    message: &[u8],
    sizes: std::ops::RangeInclusive<usize>,
) -> Result<Vec<u8>, String> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::traits::PublicKeyParts;
    let key = rsa::RsaPrivateKey::from_pkcs1_der(key_der)
        .map_err(|e| format!("not an RSA private key (PKCS#1 DER): {e}"))?;
    let bits = key.n().bits();
    if !sizes.contains(&bits) {
        return Err(format!(
            "a {bits}-bit key is not from {} to {} bits",
            sizes.start(),
            sizes.end()
        ));
    }
    sign_sha256(&key, message)
}

/// Random bytes from the operating system (`getrandom`, which also serves WASI 0.2), as
/// the `rand_core` traits want them.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemRandom;

impl rand_core::RngCore for SystemRandom {
    fn next_u32(&mut self) -> u32 {
        let mut bytes = [0u8; 4];
        self.fill_bytes(&mut bytes);
        u32::from_le_bytes(bytes)
    }

    fn next_u64(&mut self) -> u64 {
        let mut bytes = [0u8; 8];
        self.fill_bytes(&mut bytes);
        u64::from_le_bytes(bytes)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        let _ = getrandom::fill(dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        getrandom::fill(dest).map_err(|e| {
            let code = std::num::NonZeroU32::new(e.raw_os_error().unwrap_or(1).unsigned_abs())
                .unwrap_or(std::num::NonZeroU32::MIN);
            rand_core::Error::from(code)
        })
    }
}

impl rand_core::CryptoRng for SystemRandom {}
