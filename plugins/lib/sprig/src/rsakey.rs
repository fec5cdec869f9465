//! RSA key generation for `genPrivateKey`, `genCA` and the other certificate functions.
//!
//! The `rsa` crate's `RsaPrivateKey::new` finds each prime by testing random odd numbers
//! sieved only by the primes up to 53, and confirms each with 21 Miller–Rabin rounds and a
//! Lucas test (Go's `ProbablyPrime(20)`). That made a 4096-bit key take seconds inside
//! WebAssembly. Here a random start is sieved by every odd prime below 2^14 (candidates with
//! `p ≡ 1 mod 65537`, for which `e` would have no inverse, are skipped too), so about a
//! third as many candidates reach a modular exponentiation; a candidate is accepted after
//! the Miller–Rabin rounds FIPS 186-5 (Table B.1) asks for at its size — the counts Go's
//! `crypto/rsa` key generation uses — plus a Lucas test (together a Baillie–PSW test).
//! The key is then built from its two primes by the `rsa` crate, which validates it.

use std::sync::OnceLock;

use num_bigint_dig::BigUint;
use num_bigint_dig::prime::{probably_prime_lucas, probably_prime_miller_rabin};
use rand_core::RngCore;

use crate::crypto::SystemRandom;

/// The public exponent Go uses.
const EXPONENT: u32 = 65537;

/// Sieve bound: every odd prime below this divides no accepted candidate.
const SIEVE_LIMIT: u32 = 1 << 14;

/// How far past a random start the search goes before drawing a new start.
const MAX_DELTA: u32 = 1 << 20;

fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let limit = SIEVE_LIMIT as usize;
        let mut composite = vec![false; limit];
        let mut primes = Vec::new();
        for n in 3..limit {
            if n % 2 == 1 && !composite[n] {
                primes.push(n as u32);
                let mut m = n * n;
                while m < limit {
                    composite[m] = true;
                    m += n;
                }
            }
        }
        primes
    })
}

/// Miller–Rabin rounds for a random prime candidate of `bits` bits (FIPS 186-5, Table B.1,
/// error probability at most 2^-100 for 1024-bit and larger primes; more below).
fn miller_rabin_rounds(bits: usize) -> usize {
    match bits {
        1536.. => 4,
        1024.. => 5,
        512.. => 8,
        _ => 20,
    }
}

/// The remainder of the big-endian number `bytes` divided by `m` (`m` < 2^32).
fn remainder(bytes: &[u8], m: u32) -> u32 {
    let m = u64::from(m);
    bytes
        .iter()
        .fold(0u64, |r, b| ((r << 8) | u64::from(*b)) % m) as u32
}

/// A random prime of exactly `bits` bits (at least 16) with its top two bits set and
/// `p - 1` coprime to 65537.
pub(crate) fn random_prime(rng: &mut impl RngCore, bits: usize) -> BigUint {
    assert!(bits >= 16, "prime size must be at least 16 bits");
    let primes = small_primes();
    let rounds = miller_rabin_rounds(bits);
    let len = bits.div_ceil(8);
    let top = match bits % 8 {
        0 => 8,
        b => b,
    };
    let mut bytes = vec![0u8; len];
    let mut residues = vec![0u32; primes.len()];
    loop {
        rng.fill_bytes(&mut bytes);
        bytes[0] &= ((1u32 << top) - 1) as u8;
        if top >= 2 {
            bytes[0] |= 3 << (top - 2);
        } else {
            bytes[0] |= 1;
            bytes[1] |= 0x80;
        }
        bytes[len - 1] |= 1;
        for (r, p) in residues.iter_mut().zip(primes) {
            *r = remainder(&bytes, *p);
        }
        let residue_e = remainder(&bytes, EXPONENT);
        let start = BigUint::from_bytes_be(&bytes);
        let mut delta = 0u32;
        while delta < MAX_DELTA {
            let sieved = (residue_e + delta) % EXPONENT != 1
                && residues
                    .iter()
                    .zip(primes)
                    .all(|(r, p)| !(r + delta).is_multiple_of(*p));
            if sieved {
                let candidate = &start + BigUint::from(delta);
                if candidate.bits() != bits {
                    break;
                }
                if probably_prime_miller_rabin(&candidate, rounds, true)
                    && probably_prime_lucas(&candidate)
                {
                    return candidate;
                }
            }
            delta += 2;
        }
    }
}

/// A new RSA key of `bits` bits (an even number, at least 32) with exponent 65537.
pub(crate) fn generate(bits: usize) -> rsa::Result<rsa::RsaPrivateKey> {
    let mut rng = SystemRandom;
    let mut attempts = 0;
    loop {
        let p = random_prime(&mut rng, bits / 2);
        let q = random_prime(&mut rng, bits - bits / 2);
        match rsa::RsaPrivateKey::from_primes(vec![p, q], BigUint::from(EXPONENT)) {
            Ok(key) => return Ok(key),
            // Equal primes (practically impossible): draw again, a bounded number of times.
            Err(e) if attempts >= 8 => return Err(e),
            Err(_) => attempts += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint_dig::prime::probably_prime;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    #[test]
    fn sieve_lists_the_odd_primes() {
        let primes = small_primes();
        assert_eq!(&primes[..8], &[3, 5, 7, 11, 13, 17, 19, 23]);
        assert_eq!(*primes.last().unwrap(), 16381);
        assert_eq!(primes.len(), 1899);
    }

    #[test]
    fn remainder_of_big_endian_bytes() {
        assert_eq!(remainder(&[0x01, 0x00], 7), 256 % 7);
        assert_eq!(remainder(&[0xff; 16], 65537), (u128::MAX % 65537) as u32);
    }

    #[test]
    fn primes_have_the_size_and_pass_go_s_primality_test() {
        for bits in [16usize, 17, 64, 256, 512] {
            for _ in 0..4 {
                let p = random_prime(&mut SystemRandom, bits);
                assert_eq!(p.bits(), bits);
                assert_eq!(&p >> (bits - 2), BigUint::from(3u32), "top two bits set");
                assert!(probably_prime(&p, 20), "{p} is prime");
                assert_ne!(&p % EXPONENT, BigUint::from(1u32));
            }
        }
    }

    #[test]
    fn keys_are_valid_with_the_requested_size() {
        let key = generate(1024).expect("key");
        assert_eq!(key.n().bits(), 1024);
        assert_eq!(key.e(), &BigUint::from(EXPONENT));
        assert_eq!(key.primes().len(), 2);
        key.validate().expect("valid key");
        for p in key.primes() {
            assert!(probably_prime(p, 20));
        }
    }
}
