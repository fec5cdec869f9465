//! RSA key generation for `genPrivateKey`, `genCA` and the other certificate functions.
//!
//! Each prime is found as Go's and OpenSSL's searches find theirs: a random odd start with
//! its top two bits set, a sieve over the next 4096 odd numbers by every odd prime up to a
//! bound that grows with the size (2^14 for small primes, 2^16 from 768 bits, 2^18 from
//! 1536 bits; also skipping `p ≡ 1 mod 65537`, where `e` would have no inverse), and a
//! probable-prime test of each survivor in order: Miller–Rabin to base 2 (squarings and
//! doublings only, see the `montgomery` module; it rejects practically every composite), then
//! random bases up to the round count FIPS 186-5 (Table B.1) asks for at the size — the
//! counts Go's `crypto/rsa` uses, which bound the error for random candidates at 2^-100
//! without a Lucas test.
//! [`generate`] natively has every core (up to four) test candidates of the same prime, so
//! one key is not kept waiting by the slower of two independent searches;
//! [`generate_with_threads`] sets the number (the host's key reserve runs one-thread
//! searches side by side). The key is built from its primes by the `rsa` crate, which
//! validates it.

use std::sync::OnceLock;

use num_bigint_dig::BigUint;
use rand_core::RngCore;

use crate::SystemRandom;
use crate::montgomery::{
    Limb, Montgomery, add_small, limbs_from_be_bytes, limbs_to_be_bytes, split_minus_one,
};

/// The public exponent Go uses.
const EXPONENT: u32 = 65537;

/// Largest sieve bound used (for the biggest primes).
const MAX_SIEVE_LIMIT: u32 = 1 << 18;

/// How many odd numbers past a random start one sieve covers before a new start is drawn
/// (primes of 2048 bits are about 1420 apart on average).
const WINDOW: usize = 4096;

/// The odd primes below [`MAX_SIEVE_LIMIT`], ascending.
fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let limit = MAX_SIEVE_LIMIT as usize;
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

/// The sieve primes for candidates of `bits` bits: a deeper sieve pays off as the
/// exponentiation it saves grows (cubically with the size), and no sieve prime may reach
/// the candidates themselves (they are at least 2^(bits-1)).
fn sieve_primes(bits: usize) -> &'static [u32] {
    let limit: u64 = match bits {
        1536.. => 1 << 18,
        768.. => 1 << 16,
        _ => 1 << 14,
    };
    let limit = limit.min(1u64 << (bits - 2).min(40));
    let primes = small_primes();
    &primes[..primes.partition_point(|p| u64::from(*p) < limit)]
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

/// The remainder of the little-endian `limbs` divided by `m` (`m` < 2^32).
fn remainder(limbs: &[Limb], m: u32) -> u32 {
    let m = u64::from(m);
    let mut r = 0u64;
    for limb in limbs.iter().rev() {
        for half in limb.to_be_bytes().chunks(4) {
            let chunk = half.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
            r = ((r << 32) | chunk) % m;
        }
    }
    r as u32
}

/// The offset `k` below `step` with `residue + 2k ≡ target (mod step)`, for odd `step`.
fn first_offset(residue: u32, target: u32, step: u32) -> usize {
    let step = u64::from(step);
    let half = step.div_ceil(2); // 2⁻¹ mod step
    let needed = (u64::from(target) + step - u64::from(residue) % step) % step;
    (needed * half % step) as usize
}

/// A uniformly random number below 2^`bits`, in `len` limbs.
fn random_bits(rng: &mut impl RngCore, bits: usize, len: usize) -> Vec<Limb> {
    let mut bytes = vec![0u8; bits.div_ceil(8)];
    rng.fill_bytes(&mut bytes);
    if !bits.is_multiple_of(8) {
        bytes[0] &= (1u8 << (bits % 8)) - 1;
    }
    limbs_from_be_bytes(&bytes, len)
}

/// A random odd number of exactly `bits` bits (at least 2) with its top two bits set, in
/// `len` limbs.
fn random_start(rng: &mut impl RngCore, bits: usize, len: usize) -> Vec<Limb> {
    let mut start = random_bits(rng, bits, len);
    for bit in [bits - 1, bits - 2, 0] {
        start[bit / Limb::BITS as usize] |= 1 << (bit % Limb::BITS as usize);
    }
    start
}

/// The number of significant bits of little-endian `limbs`.
fn bit_length(limbs: &[Limb]) -> usize {
    match limbs.iter().rposition(|l| *l != 0) {
        Some(top) => top * Limb::BITS as usize + (Limb::BITS - limbs[top].leading_zeros()) as usize,
        None => 0,
    }
}

/// Miller–Rabin with `rounds` bases: 2 first (which rejects almost every composite, with
/// squarings and doublings only), then `rounds - 1` random ones.
fn probably_prime(candidate: &[Limb], bits: usize, rounds: usize, rng: &mut impl RngCore) -> bool {
    let mut arithmetic = Montgomery::new(candidate);
    let (d, s) = split_minus_one(candidate);
    let x = arithmetic.pow_of_two(&d);
    if !arithmetic.strong_probable_prime(x, s) {
        return false;
    }
    let len = candidate.len();
    for _ in 1..rounds {
        // A uniform base in [2, 2^(bits-1)): below n (which has `bits` bits), not 0 or 1.
        let base = loop {
            let base = random_bits(rng, bits - 1, len);
            if bit_length(&base) > 1 {
                break base;
            }
        };
        let base = arithmetic.montgomery_form_of(&base);
        let x = arithmetic.pow(&base, &d);
        if !arithmetic.strong_probable_prime(x, s) {
            return false;
        }
    }
    true
}

/// The offsets `k` below [`WINDOW`] for which `start + 2k` has no factor among `primes`
/// and is not 1 modulo 65537, ascending.
fn sieve(start: &[Limb], primes: &[u32], composite: &mut [bool]) -> Vec<usize> {
    composite.fill(false);
    for p in primes {
        let mut k = first_offset(remainder(start, *p), 0, *p);
        while k < WINDOW {
            composite[k] = true;
            k += *p as usize;
        }
    }
    // p ≡ 1 (mod 65537) would leave e without an inverse; the window is shorter than 65537,
    // so at most one offset has it.
    let k = first_offset(remainder(start, EXPONENT), 1, EXPONENT);
    if k < WINDOW {
        composite[k] = true;
    }
    (0..WINDOW).filter(|k| !composite[*k]).collect()
}

/// How many threads test candidates of one prime: every core natively (at most 4), one
/// inside WebAssembly.
fn searchers() -> usize {
    #[cfg(not(target_family = "wasm"))]
    {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    }
    #[cfg(target_family = "wasm")]
    {
        1
    }
}

/// Test the candidates `start + 2k` for the sieved offsets `k`, on `threads` threads that
/// take the next untested offset in turn; returns a prime as soon as one thread finds one.
fn search_window(
    start: &[Limb],
    offsets: &[usize],
    bits: usize,
    threads: usize,
) -> Option<Vec<Limb>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let rounds = miller_rabin_rounds(bits);
    let next = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    let search = || -> Option<Vec<Limb>> {
        let mut rng = SystemRandom;
        while !done.load(Ordering::Relaxed) {
            let k = *offsets.get(next.fetch_add(1, Ordering::Relaxed))?;
            let mut candidate = start.to_vec();
            let carry = add_small(&mut candidate, 2 * k as Limb);
            if carry || bit_length(&candidate) != bits {
                // Past the top of the size: later offsets are too, for every thread.
                done.store(true, Ordering::Relaxed);
                return None;
            }
            if probably_prime(&candidate, bits, rounds, &mut rng) {
                done.store(true, Ordering::Relaxed);
                return Some(candidate);
            }
        }
        None
    };
    if threads <= 1 {
        return search();
    }
    #[cfg(not(target_family = "wasm"))]
    {
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(search)).collect();
            let mut found = search();
            for helper in helpers {
                // A helper that panicked found nothing; the search stands without it.
                if let Ok(Some(prime)) = helper.join() {
                    found.get_or_insert(prime);
                }
            }
            found
        })
    }
    #[cfg(target_family = "wasm")]
    {
        search()
    }
}

/// A random prime of exactly `bits` bits (at least 16) with its top two bits set and
/// `p - 1` coprime to 65537.
pub(crate) fn random_prime(bits: usize, threads: usize) -> BigUint {
    assert!(bits >= 16, "prime size must be at least 16 bits");
    let primes = sieve_primes(bits);
    let len = bits.div_ceil(Limb::BITS as usize);
    let mut composite = vec![false; WINDOW];
    loop {
        let start = random_start(&mut SystemRandom, bits, len);
        let offsets = sieve(&start, primes, &mut composite);
        if let Some(prime) = search_window(&start, &offsets, bits, threads) {
            return BigUint::from_bytes_be(&limbs_to_be_bytes(&prime));
        }
    }
}

/// A new RSA key of `bits` bits (an even number, at least 32) with exponent 65537, every
/// core (up to four) searching for each prime.
pub fn generate(bits: usize) -> rsa::Result<rsa::RsaPrivateKey> {
    generate_with_threads(bits, searchers())
}

/// [`generate`] with `threads` threads searching for each prime. One thread wastes nothing:
/// with several, the candidates other threads are testing when one finds the prime are
/// thrown away (2048 bits on two cores: 1.36× faster for 1.37× the CPU time). A caller
/// that needs several keys gets them sooner from independent one-thread searches.
pub fn generate_with_threads(bits: usize, threads: usize) -> rsa::Result<rsa::RsaPrivateKey> {
    let threads = threads.max(1);
    let mut attempts = 0;
    loop {
        let (p, q) = (
            random_prime(bits / 2, threads),
            random_prime(bits - bits / 2, threads),
        );
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
        // π(2^18) = 23000, less the even prime 2.
        assert_eq!(primes.len(), 22999);
        assert_eq!(*primes.last().unwrap(), 262139);
        assert_eq!(sieve_primes(1024).len(), 6541);
        assert_eq!(*sieve_primes(16).last().unwrap(), 16381);
        assert_eq!(*sieve_primes(12 + 2).last().unwrap(), 4093);
    }

    #[test]
    fn remainder_of_big_endian_bytes() {
        let limbs = limbs_from_be_bytes(&[0x01, 0x00], 2);
        assert_eq!(remainder(&limbs, 7), 256 % 7);
        let limbs = limbs_from_be_bytes(&[0xff; 16], 128 / Limb::BITS as usize);
        assert_eq!(remainder(&limbs, 65537), (u128::MAX % 65537) as u32);
    }

    #[test]
    fn offsets_reach_the_target_residue() {
        for (residue, target, step) in [
            (0, 0, 3),
            (1, 0, 3),
            (2, 0, 7),
            (10, 1, 65537),
            (65536, 1, 65537),
        ] {
            let k = first_offset(residue, target, step) as u64;
            assert!(k < u64::from(step));
            assert_eq!(
                (u64::from(residue) + 2 * k) % u64::from(step),
                u64::from(target)
            );
        }
    }

    #[test]
    fn primes_have_the_size_and_pass_go_s_primality_test() {
        for bits in [16usize, 17, 64, 256, 512] {
            for _ in 0..4 {
                let p = random_prime(bits, 2);
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
