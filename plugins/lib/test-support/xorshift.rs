// xorshift64*: the seeded source of the generated-input tests (the same inputs on every
// run and machine, no dependency). One copy for every crate: a test module includes it with
// `#[allow(dead_code)] mod xorshift { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../test-support/xorshift.rs")); }`.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// True `per_mille` times in a thousand.
    pub fn per_mille(&mut self, per_mille: usize) -> bool {
        self.below(1000) < per_mille
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}
