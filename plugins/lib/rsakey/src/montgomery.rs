//! Modular exponentiation in Montgomery form for RSA prime search.
//!
//! Finding an RSA prime means one modular exponentiation per candidate that survives the
//! sieve, so this is where key generation spends its time. `num-bigint-dig`'s `modpow`
//! allocates for every multiplication and reduces separately; here the modulus has a fixed
//! number of limbs and every product is reduced in place (coarsely integrated operand
//! scanning), squarings use the symmetric half of the products, and the base-2 test that
//! rejects almost every composite needs only squarings and doublings. Limbs are 64-bit
//! natively; inside WebAssembly, which has no 64×64→128-bit multiplication, 32-bit.
//!
//! Not constant-time: it runs on candidates that are discarded or become secret primes only
//! after the test, the same exposure Go's and OpenSSL's prime searches accept for their
//! trial phase.

#[cfg(not(target_family = "wasm"))]
mod width {
    pub type Limb = u64;
    pub type Wide = u128;
}
#[cfg(target_family = "wasm")]
mod width {
    pub type Limb = u32;
    pub type Wide = u64;
}
pub(crate) use width::Limb;
use width::Wide;

use num_bigint_dig::BigUint;

const LIMB_BITS: u32 = Limb::BITS;
const LIMB_BYTES: usize = (Limb::BITS / 8) as usize;

/// Little-endian limbs of the big-endian `bytes`, exactly `len` limbs.
pub(crate) fn limbs_from_be_bytes(bytes: &[u8], len: usize) -> Vec<Limb> {
    let mut limbs = vec![0; len];
    for (i, chunk) in bytes.rchunks(LIMB_BYTES).enumerate().take(len) {
        limbs[i] = chunk
            .iter()
            .fold(0 as Limb, |acc, b| (acc << 8) | Limb::from(*b));
    }
    limbs
}

/// Big-endian bytes of little-endian `limbs`, without leading zeros.
pub(crate) fn limbs_to_be_bytes(limbs: &[Limb]) -> Vec<u8> {
    let mut bytes: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    let leading = bytes.iter().take_while(|b| **b == 0).count();
    bytes.drain(..leading);
    bytes
}

/// `a += small`; returns the carry out.
pub(crate) fn add_small(a: &mut [Limb], small: Limb) -> bool {
    let mut carry = small;
    for limb in a.iter_mut() {
        let (sum, overflow) = limb.overflowing_add(carry);
        *limb = sum;
        if !overflow {
            return false;
        }
        carry = 1;
    }
    carry != 0
}

/// `a >= b` for equal-length numbers.
fn at_least(a: &[Limb], b: &[Limb]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x > y;
        }
    }
    true
}

/// `a -= b` for equal-length numbers; returns the borrow out.
fn sub_assign(a: &mut [Limb], b: &[Limb]) -> bool {
    let mut borrow = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (d1, o1) = x.overflowing_sub(*y);
        let (d2, o2) = d1.overflowing_sub(Limb::from(borrow));
        *x = d2;
        borrow = o1 || o2;
    }
    borrow
}

/// Limbs of the prime sizes RSA keys of 2048, 3072 and 4096 bits are made of.
const PRIME_1024: usize = 1024 / LIMB_BITS as usize;
const PRIME_1536: usize = 1536 / LIMB_BITS as usize;
const PRIME_2048: usize = 2048 / LIMB_BITS as usize;

/// `out = a·b·R⁻¹ mod n` for `len`-limb values, with `t` (2·len limbs at least) as scratch.
/// Inlined where it is called, so that a constant `len` specialises it.
#[inline(always)]
fn product(
    n: &[Limb],
    n_prime: Limb,
    a: &[Limb],
    b: &[Limb],
    out: &mut [Limb],
    t: &mut [Limb],
    len: usize,
) {
    let (n, a, b, out, t) = (
        &n[..len],
        &a[..len],
        &b[..len],
        &mut out[..len],
        &mut t[..2 * len],
    );
    t.fill(0);
    for (i, bi) in b.iter().enumerate() {
        let bi = Wide::from(*bi);
        let mut carry: Wide = 0;
        for (ti, aj) in t[i..i + len].iter_mut().zip(a) {
            let s = Wide::from(*ti) + Wide::from(*aj) * bi + carry;
            *ti = s as Limb;
            carry = s >> LIMB_BITS;
        }
        t[i + len] = carry as Limb;
    }
    reduce(n, n_prime, out, t, len);
}

/// `out = a²·R⁻¹ mod n` for `len`-limb values, computing each cross product once; `t` as
/// in [`product`].
#[inline(always)]
fn square(n: &[Limb], n_prime: Limb, a: &[Limb], out: &mut [Limb], t: &mut [Limb], len: usize) {
    let (n, a, out, t) = (&n[..len], &a[..len], &mut out[..len], &mut t[..2 * len]);
    t.fill(0);
    // Cross products a_i·a_j for i < j.
    for i in 0..len {
        let ai = Wide::from(a[i]);
        let mut carry: Wide = 0;
        for (tj, aj) in t[2 * i + 1..i + len].iter_mut().zip(&a[i + 1..]) {
            let s = Wide::from(*tj) + ai * Wide::from(*aj) + carry;
            *tj = s as Limb;
            carry = s >> LIMB_BITS;
        }
        t[i + len] = carry as Limb;
    }
    // Double them and add the squares a_i².
    let mut shifted_out: Limb = 0;
    for limb in t.iter_mut() {
        let next = *limb >> (LIMB_BITS - 1);
        *limb = (*limb << 1) | shifted_out;
        shifted_out = next;
    }
    let mut carry: Wide = 0;
    for i in 0..len {
        let square = Wide::from(a[i]) * Wide::from(a[i]);
        let low = Wide::from(t[2 * i]) + (square & Wide::from(Limb::MAX)) + carry;
        t[2 * i] = low as Limb;
        let high = Wide::from(t[2 * i + 1]) + (square >> LIMB_BITS) + (low >> LIMB_BITS);
        t[2 * i + 1] = high as Limb;
        carry = high >> LIMB_BITS;
    }
    reduce(n, n_prime, out, t, len);
}

/// Reduce the 2·len-limb value `t` (times R⁻¹) into `out`, below `n`.
#[inline(always)]
fn reduce(n: &[Limb], n_prime: Limb, out: &mut [Limb], t: &mut [Limb], len: usize) {
    // The carry out of a row's top limb (one bit) is added with the next row's carry into
    // the limb above, which no earlier row reads: no carry ripples up the value (the
    // rippling loop's data-dependent exit was a mispredicted branch per row; 12 % of a
    // base-2 test of a 1024-bit candidate).
    let mut overflow: Limb = 0;
    for i in 0..len {
        let m = Wide::from(t[i].wrapping_mul(n_prime));
        let mut carry: Wide = 0;
        for (ti, nj) in t[i..i + len].iter_mut().zip(n) {
            let s = Wide::from(*ti) + m * Wide::from(*nj) + carry;
            *ti = s as Limb;
            carry = s >> LIMB_BITS;
        }
        let top = Wide::from(t[i + len]) + carry + Wide::from(overflow);
        t[i + len] = top as Limb;
        overflow = (top >> LIMB_BITS) as Limb;
    }
    out.copy_from_slice(&t[len..2 * len]);
    if overflow != 0 || at_least(out, n) {
        sub_assign(out, n);
    }
}

/// Arithmetic modulo one odd number `n` with values in Montgomery form (`x·R mod n`,
/// `R = 2^(limbs·LIMB_BITS)`).
pub(crate) struct Montgomery {
    modulus: Vec<Limb>,
    /// `-n⁻¹ mod 2^LIMB_BITS`.
    n_prime: Limb,
    /// `R mod n`: one in Montgomery form.
    one: Vec<Limb>,
    /// `R² mod n`, computed when first needed (only candidates that pass base 2 need it).
    r_squared: Option<Vec<Limb>>,
    /// Scratch for products: 2·len limbs.
    scratch: Vec<Limb>,
}

impl Montgomery {
    /// Set up arithmetic modulo the odd `modulus` (little-endian limbs).
    pub(crate) fn new(modulus: &[Limb]) -> Montgomery {
        debug_assert!(modulus[0] & 1 == 1, "modulus must be odd");
        let len = modulus.len();
        // Newton's iteration for the inverse modulo 2^LIMB_BITS; n·n ≡ 1 (mod 8) starts it
        // with 3 correct bits, and each step doubles them.
        let n0 = modulus[0];
        let mut inverse = n0;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul((2 as Limb).wrapping_sub(n0.wrapping_mul(inverse)));
        }
        let modulus_big = BigUint::from_bytes_be(&limbs_to_be_bytes(modulus));
        let r_mod_n = (BigUint::from(1u32) << (len * LIMB_BITS as usize)) % modulus_big;
        let one = limbs_from_be_bytes(&r_mod_n.to_bytes_be(), len);
        Montgomery {
            modulus: modulus.to_vec(),
            n_prime: inverse.wrapping_neg(),
            one,
            r_squared: None,
            scratch: vec![0; 2 * len],
        }
    }

    /// `n - 1` in Montgomery form (`n - R mod n`).
    pub(crate) fn minus_one(&self) -> Vec<Limb> {
        let mut minus_one = self.modulus.clone();
        sub_assign(&mut minus_one, &self.one);
        minus_one
    }

    /// `out = a·b·R⁻¹ mod n`.
    pub(crate) fn mul(&mut self, a: &[Limb], b: &[Limb], out: &mut [Limb]) {
        let (n, n_prime, t) = (&self.modulus[..], self.n_prime, &mut self.scratch[..]);
        match n.len() {
            // The sizes of RSA primes (1024, 1536 and 2048 bits natively): with the length
            // a constant the loops are unrolled and bounds checks go (measured: 10 % of a
            // base-2 test of a 1024-bit candidate).
            PRIME_1024 => product(n, n_prime, a, b, out, t, PRIME_1024),
            PRIME_1536 => product(n, n_prime, a, b, out, t, PRIME_1536),
            PRIME_2048 => product(n, n_prime, a, b, out, t, PRIME_2048),
            len => product(n, n_prime, a, b, out, t, len),
        }
    }

    /// `out = a²·R⁻¹ mod n`, computing each cross product once.
    pub(crate) fn square(&mut self, a: &[Limb], out: &mut [Limb]) {
        let (n, n_prime, t) = (&self.modulus[..], self.n_prime, &mut self.scratch[..]);
        match n.len() {
            PRIME_1024 => square(n, n_prime, a, out, t, PRIME_1024),
            PRIME_1536 => square(n, n_prime, a, out, t, PRIME_1536),
            PRIME_2048 => square(n, n_prime, a, out, t, PRIME_2048),
            len => square(n, n_prime, a, out, t, len),
        }
    }

    /// `x = 2x mod n`.
    fn double(&self, x: &mut [Limb]) {
        let mut shifted_out: Limb = 0;
        for limb in x.iter_mut() {
            let next = *limb >> (LIMB_BITS - 1);
            *limb = (*limb << 1) | shifted_out;
            shifted_out = next;
        }
        if shifted_out != 0 || at_least(x, &self.modulus) {
            sub_assign(x, &self.modulus);
        }
    }

    /// `x` (an ordinary residue below n) in Montgomery form.
    pub(crate) fn montgomery_form_of(&mut self, x: &[Limb]) -> Vec<Limb> {
        // x·R²·R⁻¹ = x·R; R² mod n comes from doubling R mod n len·LIMB_BITS times.
        let len = self.modulus.len();
        let r_squared = match self.r_squared.take() {
            Some(r_squared) => r_squared,
            None => {
                let mut r_squared = self.one.clone();
                for _ in 0..len * LIMB_BITS as usize {
                    self.double(&mut r_squared);
                }
                r_squared
            }
        };
        let mut out = vec![0; len];
        self.mul(x, &r_squared, &mut out);
        self.r_squared = Some(r_squared);
        out
    }

    /// `2^exponent` in Montgomery form, by squaring and doubling (no multiplications).
    pub(crate) fn pow_of_two(&mut self, exponent: &[Limb]) -> Vec<Limb> {
        let len = self.modulus.len();
        let mut x = self.one.clone();
        let mut tmp = vec![0; len];
        let mut started = false;
        for limb in exponent.iter().rev() {
            for bit in (0..LIMB_BITS).rev() {
                if started {
                    self.square(&x, &mut tmp);
                    std::mem::swap(&mut x, &mut tmp);
                }
                if (limb >> bit) & 1 == 1 {
                    self.double(&mut x);
                    started = true;
                }
            }
        }
        x
    }

    /// `base^exponent` with `base` in Montgomery form, by 4-bit fixed windows.
    pub(crate) fn pow(&mut self, base: &[Limb], exponent: &[Limb]) -> Vec<Limb> {
        let len = self.modulus.len();
        let mut table = vec![self.one.clone(), base.to_vec()];
        for i in 2..16 {
            let mut next = vec![0; len];
            self.mul(&table[i - 1], base, &mut next);
            table.push(next);
        }
        let mut x = self.one.clone();
        let mut tmp = vec![0; len];
        for limb in exponent.iter().rev() {
            for window in (0..LIMB_BITS / 4).rev() {
                for _ in 0..4 {
                    self.square(&x, &mut tmp);
                    std::mem::swap(&mut x, &mut tmp);
                }
                let digit = ((limb >> (window * 4)) & 15) as usize;
                if digit != 0 {
                    self.mul(&x, &table[digit], &mut tmp);
                    std::mem::swap(&mut x, &mut tmp);
                }
            }
        }
        x
    }

    /// Miller–Rabin's strong-probable-prime check of `n` given `x = a^d` (Montgomery form)
    /// where `n - 1 = d·2^s`.
    pub(crate) fn strong_probable_prime(&mut self, mut x: Vec<Limb>, s: u32) -> bool {
        let minus_one = self.minus_one();
        if x == self.one || x == minus_one {
            return true;
        }
        let mut tmp = vec![0; self.modulus.len()];
        for _ in 1..s {
            self.square(&x, &mut tmp);
            std::mem::swap(&mut x, &mut tmp);
            if x == minus_one {
                return true;
            }
            if x == self.one {
                return false;
            }
        }
        false
    }
}

/// `n - 1 = d·2^s` for odd `n > 1`: returns `(d, s)`.
pub(crate) fn split_minus_one(n: &[Limb]) -> (Vec<Limb>, u32) {
    let mut d = n.to_vec();
    d[0] &= !1; // n is odd: n - 1 clears bit 0.
    let zero_limbs = d.iter().take_while(|l| **l == 0).count();
    let zero_bits = d[zero_limbs].trailing_zeros();
    let s = zero_limbs as u32 * LIMB_BITS + zero_bits;
    // Shift right by s bits.
    let limb_shift = zero_limbs;
    let bit_shift = zero_bits;
    let len = d.len();
    let mut shifted = vec![0; len];
    for i in 0..len - limb_shift {
        let low = d[i + limb_shift] >> bit_shift;
        let high = if bit_shift > 0 && i + limb_shift + 1 < len {
            d[i + limb_shift + 1] << (LIMB_BITS - bit_shift)
        } else {
            0
        };
        shifted[i] = low | high;
    }
    (shifted, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(limbs: &[Limb]) -> BigUint {
        BigUint::from_bytes_be(&limbs_to_be_bytes(limbs))
    }

    fn limbs(n: &BigUint, len: usize) -> Vec<Limb> {
        limbs_from_be_bytes(&n.to_bytes_be(), len)
    }

    /// A deterministic pseudo-random odd modulus of `len` limbs with the top bit set.
    fn modulus(len: usize, seed: u64) -> Vec<Limb> {
        let mut state = seed;
        let mut out: Vec<Limb> = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 7) as Limb
            })
            .collect();
        out[0] |= 1;
        out[len - 1] |= 1 << (LIMB_BITS - 1);
        out
    }

    #[test]
    fn byte_conversions_round_trip() {
        let bytes = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09];
        let l = limbs_from_be_bytes(&bytes, 4);
        assert_eq!(limbs_to_be_bytes(&l), bytes);
        assert_eq!(big(&l), BigUint::from_bytes_be(&bytes));
    }

    #[test]
    fn products_and_powers_agree_with_num_bigint() {
        for (len, seed) in [(1, 3), (2, 5), (5, 7), (16, 11), (32, 13)] {
            let n = modulus(len, seed);
            let n_big = big(&n);
            let r = BigUint::from(1u32) << (len * LIMB_BITS as usize);
            let r_inv_check = |x: &BigUint| (x * &r) % &n_big;
            let mut m = Montgomery::new(&n);
            assert_eq!(big(&m.one), &r % &n_big);
            let a = modulus(len, seed + 100);
            let b = modulus(len, seed + 200);
            let (a_big, b_big) = (big(&a) % &n_big, big(&b) % &n_big);
            let (a, b) = (limbs(&a_big, len), limbs(&b_big, len));
            let mut out = vec![0; len];
            m.mul(&a, &b, &mut out);
            assert_eq!(
                r_inv_check(&big(&out)),
                (&a_big * &b_big) % &n_big,
                "mul {len}"
            );
            m.square(&a, &mut out);
            assert_eq!(
                r_inv_check(&big(&out)),
                (&a_big * &a_big) % &n_big,
                "sqr {len}"
            );
            let a_m = m.montgomery_form_of(&a);
            assert_eq!(
                big(&a_m),
                (&a_big * &r) % &n_big,
                "montgomery_form_of {len}"
            );
            let e = modulus(len, seed + 300);
            let e_big = big(&e);
            let expected = a_big.modpow(&e_big, &n_big);
            let power = m.pow(&a_m, &e);
            assert_eq!(big(&power), (&expected * &r) % &n_big, "pow {len}");
            let two_power = m.pow_of_two(&e);
            let two = BigUint::from(2u32).modpow(&e_big, &n_big);
            assert_eq!(big(&two_power), (&two * &r) % &n_big, "pow_of_two {len}");
        }
    }

    #[test]
    fn splitting_n_minus_one() {
        let n = limbs(&((BigUint::from(3u32) << 130) + BigUint::from(1u32)), 5);
        let (d, s) = split_minus_one(&n);
        assert_eq!(s, 130);
        assert_eq!(big(&d), BigUint::from(3u32));
        let (d, s) = split_minus_one(&[0b1011]);
        assert_eq!((d, s), (vec![0b101], 1));
    }

    #[test]
    fn strong_probable_primes() {
        // 2^127 - 1 is prime; 2^127 + 1 (divisible by 3) is not; 2047 = 23·89 is a strong
        // pseudoprime to base 2, which the base-2 test must accept (the random bases that
        // follow in prime search reject it).
        let mersenne = (BigUint::from(1u32) << 127) - BigUint::from(1u32);
        let plus = (BigUint::from(1u32) << 127) + BigUint::from(1u32);
        for (n, expected) in [
            (mersenne, true),
            (plus, false),
            (BigUint::from(2047u32), true),
        ] {
            let len = n.bits().div_ceil(LIMB_BITS as usize);
            let n_limbs = limbs(&n, len);
            let mut m = Montgomery::new(&n_limbs);
            let (d, s) = split_minus_one(&n_limbs);
            let x = m.pow_of_two(&d);
            assert_eq!(m.strong_probable_prime(x, s), expected, "{n}");
        }
    }

    #[allow(dead_code)]
    mod xorshift {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test-support/xorshift.rs"
        ));
    }
    use xorshift::Rng;

    /// A random limb.
    fn limb(rng: &mut Rng) -> Limb {
        rng.next() as Limb
    }

    /// An odd modulus of `len` limbs, of a generated shape: random with the top bit set,
    /// its top limbs all ones (just below R, where a reduction overflows most), a small
    /// top limb, R − 1, or long runs of zero limbs.
    fn generated_modulus(rng: &mut Rng, len: usize) -> Vec<Limb> {
        let mut n: Vec<Limb> = (0..len).map(|_| limb(rng)).collect();
        match rng.below(6) {
            0 => n[len - 1] |= 1 << (LIMB_BITS - 1),
            1 => {
                let ones = 1 + rng.below(len);
                for limb in &mut n[len - ones..] {
                    *limb = Limb::MAX;
                }
            }
            2 => n[len - 1] = 1 + (limb(rng) & 0xff),
            3 => n.fill(Limb::MAX),
            4 => {
                for limb in n.iter_mut().take(len - 1).skip(1) {
                    *limb = 0;
                }
                n[len - 1] |= 1;
            }
            _ => n[len - 1] = limb(rng) | 1,
        }
        n[0] |= 1;
        if n == [1] {
            n[0] = 3;
        }
        n
    }

    /// A residue modulo `n`: random, or one of the edge values 0, 1, n − 1, n − 2.
    fn operand(rng: &mut Rng, n: &BigUint, len: usize) -> BigUint {
        match rng.below(8) {
            0 => BigUint::from(0u32),
            1 => BigUint::from(1u32) % n,
            2 => n - BigUint::from(1u32),
            3 => (n - BigUint::from(1u32)) - (BigUint::from(1u32) % n),
            _ => big(&(0..len).map(|_| limb(rng)).collect::<Vec<_>>()) % n,
        }
    }

    /// Montgomery products, squares, conversions and powers agree with `num-bigint-dig` and
    /// come out fully reduced, on generated moduli of every length around the three the
    /// arithmetic is specialised for (1024-, 1536- and 2048-bit primes: 16, 24 and 32 limbs
    /// natively) and of small ones that take the general path, with operands at the edges.
    #[test]
    fn generated_products_agree_with_num_bigint_on_every_path() {
        let mut lengths = vec![1, 2, 3, 5, 8];
        for special in [PRIME_1024, PRIME_1536, PRIME_2048] {
            lengths.extend([special - 1, special, special + 1]);
        }
        let mut rng = Rng(0x0043_5eed_7a11_0006);
        let mut checked = 0;
        for &len in &lengths {
            let r = BigUint::from(1u32) << (len * LIMB_BITS as usize);
            for modulus_index in 0..120 {
                let n = generated_modulus(&mut rng, len);
                let n_big = big(&n);
                let mut m = Montgomery::new(&n);
                let what =
                    |op: &str| format!("{op}, {len} limbs, modulus {modulus_index}: {n_big:#x}");
                let r_inv = |x: &BigUint| (x * &r) % &n_big;
                assert_eq!(big(&m.one), &r % &n_big, "{}", what("one"));
                for _ in 0..6 {
                    let (a, b) = (
                        operand(&mut rng, &n_big, len),
                        operand(&mut rng, &n_big, len),
                    );
                    let (a_limbs, b_limbs) = (limbs(&a, len), limbs(&b, len));
                    let mut out = vec![0; len];
                    m.mul(&a_limbs, &b_limbs, &mut out);
                    assert!(
                        big(&out) < n_big,
                        "{} not reduced: {a:#x} * {b:#x}",
                        what("mul")
                    );
                    assert_eq!(
                        r_inv(&big(&out)),
                        (&a * &b) % &n_big,
                        "{}: {a:#x} * {b:#x}",
                        what("mul")
                    );
                    m.square(&a_limbs, &mut out);
                    assert!(big(&out) < n_big, "{} not reduced: {a:#x}", what("square"));
                    assert_eq!(
                        r_inv(&big(&out)),
                        (&a * &a) % &n_big,
                        "{}: {a:#x}",
                        what("square")
                    );
                    let a_m = m.montgomery_form_of(&a_limbs);
                    assert_eq!(
                        big(&a_m),
                        (&a * &r) % &n_big,
                        "{}: {a:#x}",
                        what("montgomery_form_of")
                    );
                    checked += 1;
                }
                // Powers, with exponents of up to two limbs (their steps are the products
                // checked above, many times over).
                let a = operand(&mut rng, &n_big, len);
                let e: Vec<Limb> = (0..1 + rng.below(2)).map(|_| limb(&mut rng)).collect();
                let e_big = big(&e);
                let a_m = m.montgomery_form_of(&limbs(&a, len));
                let power = m.pow(&a_m, &e);
                assert_eq!(
                    big(&power),
                    (a.modpow(&e_big, &n_big) * &r) % &n_big,
                    "{}: {a:#x} ^ {e_big:#x}",
                    what("pow")
                );
                let two_power = m.pow_of_two(&e);
                assert_eq!(
                    big(&two_power),
                    (BigUint::from(2u32).modpow(&e_big, &n_big) * &r) % &n_big,
                    "{}: 2 ^ {e_big:#x}",
                    what("pow_of_two")
                );
            }
        }
        eprintln!(
            "{checked} generated products, squares and conversions and {} powers agree with num-bigint on {} lengths",
            2 * 120 * lengths.len(),
            lengths.len()
        );
    }
}
