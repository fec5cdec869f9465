//! RSA PKCS#1 v1.5 signatures with SHA-256 (what Go's `x509.CreateCertificate` makes for
//! an RSA issuer), computed with the Chinese remainder theorem on [`Montgomery`]
//! arithmetic.
//!
//! Why not the `rsa` crate's signer: its exponentiations run on `num-bigint-dig`, which
//! allocates for every product and reduces separately; inside WebAssembly the signatures of
//! a chart's certificates took ~160 ms of bitnami/harbor's render (`perf`, 2026-12-06).
//! PKCS#1 v1.5 is deterministic, so the result is the same signature bytes the `rsa` crate
//! gives (tested), and it is checked against the public key before it is used, as Go does.
//!
//! Exposure: not constant-time, like the `rsa` crate's signing without a random source
//! that the certificate builder used before (its `Signer` passes none, so no blinding
//! either). The keys are those a chart's own templates generate or pass in.

use num_bigint_dig::{BigUint, ModInverse};
use rsa::RsaPrivateKey;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use sha2::{Digest, Sha256};

use crate::montgomery::{Limb, Montgomery, limbs_from_be_bytes, limbs_to_be_bytes};

/// DER of the `DigestInfo` prefix for SHA-256 (RFC 8017, section 9.2, note 1).
const SHA256_DIGEST_INFO: [u8; 19] = [
    0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
    0x00, 0x04, 0x20,
];

/// The PKCS#1 v1.5 SHA-256 signature of `message` under `key`, as many bytes as the
/// modulus. Keys of more than two primes go to the `rsa` crate.
pub fn sign_sha256(key: &RsaPrivateKey, message: &[u8]) -> Result<Vec<u8>, String> {
    let size = key.size();
    let digest = Sha256::digest(message);
    let padding = size
        .checked_sub(SHA256_DIGEST_INFO.len() + digest.len() + 3)
        .filter(|n| *n >= 8)
        .ok_or_else(|| {
            format!(
                "RSA key of {} bits is too short for SHA-256",
                key.n().bits()
            )
        })?;
    let mut encoded = Vec::with_capacity(size);
    encoded.extend_from_slice(&[0, 1]);
    encoded.resize(2 + padding, 0xff);
    encoded.push(0);
    encoded.extend_from_slice(&SHA256_DIGEST_INFO);
    encoded.extend_from_slice(&digest);
    let m = BigUint::from_bytes_be(&encoded);

    let [p, q] = key.primes() else {
        return sign_with_rsa_crate(key, message);
    };
    let one = BigUint::from(1u32);
    let d = key.d();
    let dp = d % (p - &one);
    let dq = d % (q - &one);
    let q_inverse = q
        .clone()
        .mod_inverse(p)
        .and_then(|inverse| inverse.to_biguint())
        .ok_or("RSA key: q has no inverse modulo p")?;
    let s_p = mod_pow(&(&m % p), &dp, p);
    let s_q = mod_pow(&(&m % q), &dq, q);
    // s = s_q + q·((s_p − s_q)·q⁻¹ mod p)
    let difference = (&s_p + p - (&s_q % p)) % p;
    let h = (difference * q_inverse) % p;
    let signature = s_q + h * q;
    if signature.modpow(key.e(), key.n()) != m {
        return Err("RSA signature failed its check against the public key".into());
    }
    let bytes = signature.to_bytes_be();
    let mut out = vec![0; size - bytes.len()];
    out.extend_from_slice(&bytes);
    Ok(out)
}

/// `base^exponent mod modulus` for an odd `modulus`, in Montgomery form.
fn mod_pow(base: &BigUint, exponent: &BigUint, modulus: &BigUint) -> BigUint {
    let limb_bits = Limb::BITS as usize;
    let len = modulus.bits().div_ceil(limb_bits);
    let mut arithmetic = Montgomery::new(&limbs_from_be_bytes(&modulus.to_bytes_be(), len));
    let base = arithmetic.montgomery_form_of(&limbs_from_be_bytes(&base.to_bytes_be(), len));
    let exponent_limbs = exponent.bits().div_ceil(limb_bits).max(1);
    let power = arithmetic.pow(
        &base,
        &limbs_from_be_bytes(&exponent.to_bytes_be(), exponent_limbs),
    );
    // Out of Montgomery form: multiply by an ordinary 1 (times R⁻¹).
    let mut unit = vec![0; len];
    unit[0] = 1;
    let mut out = vec![0; len];
    arithmetic.mul(&power, &unit, &mut out);
    BigUint::from_bytes_be(&limbs_to_be_bytes(&out))
}

/// The `rsa` crate's signature, for keys this module does not handle.
fn sign_with_rsa_crate(key: &RsaPrivateKey, message: &[u8]) -> Result<Vec<u8>, String> {
    use rsa::signature::{SignatureEncoding, Signer};
    let signing = rsa::pkcs1v15::SigningKey::<Sha256>::new(key.clone());
    signing
        .try_sign(message)
        .map(|signature| signature.to_vec())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1::DecodeRsaPrivateKey;

    const RSA_KEY: &str = include_str!("testdata/rsa.pem");

    /// The DER entry point signs as [`sign_sha256`] does, and refuses what is not a key or
    /// a key outside the sizes allowed, naming it.
    #[test]
    fn der_keys_sign_alike_and_bad_keys_are_named() {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let key = RsaPrivateKey::from_pkcs1_pem(RSA_KEY).unwrap();
        let der = key.to_pkcs1_der().unwrap();
        let bits = key.n().bits();
        assert_eq!(
            crate::sign_sha256_der(der.as_bytes(), b"m", 1024..=4096).unwrap(),
            sign_sha256(&key, b"m").unwrap()
        );
        let refused = crate::sign_sha256_der(der.as_bytes(), b"m", bits + 2..=4096).unwrap_err();
        assert_eq!(
            refused,
            format!("a {bits}-bit key is not from {} to 4096 bits", bits + 2)
        );
        let garbage = crate::sign_sha256_der(b"not a key", b"m", 1024..=4096).unwrap_err();
        assert!(
            garbage.starts_with("not an RSA private key (PKCS#1 DER)"),
            "{garbage}"
        );
    }

    #[test]
    fn signatures_are_the_rsa_crates_bytes() {
        let fixed = RsaPrivateKey::from_pkcs1_pem(RSA_KEY).unwrap();
        let generated = crate::keygen::generate(1024).unwrap();
        let odd_size = crate::keygen::generate(1026).unwrap();
        for key in [fixed, generated, odd_size] {
            for message in [&b""[..], b"tbsCertificate", &[0xa5; 3000]] {
                assert_eq!(
                    sign_sha256(&key, message).unwrap(),
                    sign_with_rsa_crate(&key, message).unwrap(),
                    "{} bits, {} bytes",
                    key.n().bits(),
                    message.len()
                );
            }
        }
    }

    #[test]
    fn a_key_too_short_for_the_digest_is_refused() {
        let key = crate::keygen::generate(256).unwrap();
        let error = sign_sha256(&key, b"x").unwrap_err();
        assert!(error.contains("256 bits is too short"), "{error}");
    }

    #[test]
    fn mod_pow_matches_num_bigint() {
        let modulus = BigUint::parse_bytes(b"f123456789abcdef0123456789abcdef1", 16).unwrap();
        let base = BigUint::parse_bytes(b"1234567890fedcba9876543210", 16).unwrap();
        for exponent in [0u32, 1, 2, 65537, 0xffff_ffff] {
            let exponent = BigUint::from(exponent);
            assert_eq!(
                mod_pow(&base, &exponent, &modulus),
                base.modpow(&exponent, &modulus),
                "{exponent}"
            );
        }
    }
}
