//! A word-at-a-time `memcmp` for components. wasi-libc's `memcmp` (musl's) compares byte by
//! byte, and inside a component every string comparison goes through it: ordering the keys
//! of a `BTreeMap<String, _>` (every Helm value lookup), `==` on strings and slices. It was
//! 5 % of a `capstan template` run of bitnami/mastodon. [`use_word_memcmp!`] exports
//! [`compare_bytes`] as the component's `memcmp` (a strong definition, so the linker never
//! takes wasi-libc's).
//!
//! [`use_word_memcmp!`]: crate::use_word_memcmp

/// Export [`compare_bytes`] as `memcmp` when built as a WebAssembly component (a no-op
/// natively, where the C library's is vectorised).
#[macro_export]
macro_rules! use_word_memcmp {
    () => {
        /// C's `memcmp` (see `capstan_plugin_sdk::memcmp`).
        #[cfg(target_arch = "wasm32")]
        #[unsafe(no_mangle)]
        unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, len: usize) -> i32 {
            // SAFETY: C's contract for `memcmp`: both pointers are readable for `len` bytes.
            unsafe { $crate::memcmp::compare_bytes(left, right, len) }
        }
    };
}

/// Compare `len` bytes at `left` and `right` as unsigned bytes, as C's `memcmp`: negative,
/// zero or positive as the first differing byte of `left` is below, equal to or above that
/// of `right`.
///
/// # Safety
///
/// `left` and `right` must be readable for `len` bytes (any alignment).
#[inline]
pub unsafe fn compare_bytes(left: *const u8, right: *const u8, len: usize) -> i32 {
    let mut at = 0;
    while at + 8 <= len {
        // SAFETY: `at + 8 <= len`, and both are readable for `len` bytes; unaligned reads.
        let (a, b) = unsafe {
            (
                left.add(at).cast::<u64>().read_unaligned(),
                right.add(at).cast::<u64>().read_unaligned(),
            )
        };
        if a != b {
            // Read as big-endian, the first differing byte is the most significant one
            // that differs, so the numbers order as the bytes do.
            return if u64::from_be(a) < u64::from_be(b) {
                -1
            } else {
                1
            };
        }
        at += 8;
    }
    while at < len {
        // SAFETY: `at < len`.
        let (a, b) = unsafe { (*left.add(at), *right.add(at)) };
        if a != b {
            return i32::from(a) - i32::from(b);
        }
        at += 1;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::compare_bytes;

    fn sign(x: i32) -> i32 {
        x.signum()
    }

    fn compare(a: &[u8], b: &[u8]) -> i32 {
        assert_eq!(a.len(), b.len());
        // SAFETY: both slices hold `a.len()` bytes.
        sign(unsafe { compare_bytes(a.as_ptr(), b.as_ptr(), a.len()) })
    }

    #[test]
    fn orders_as_bytes_at_every_length_and_position() {
        for len in 0..40 {
            let base: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
            assert_eq!(compare(&base, &base), 0, "len {len}");
            for at in 0..len {
                for (low, high) in [(0u8, 1u8), (0x7f, 0x80), (0x01, 0xff), (b'a', b'b')] {
                    let mut a = base.clone();
                    let mut b = base.clone();
                    a[at] = low;
                    b[at] = high;
                    // Later bytes must not matter: make them order the other way.
                    for i in at + 1..len {
                        a[i] = 0xff;
                        b[i] = 0;
                    }
                    assert_eq!(compare(&a, &b), -1, "len {len} at {at}");
                    assert_eq!(compare(&b, &a), 1, "len {len} at {at}");
                    assert_eq!(compare(&a, &b), sign(a.cmp(&b) as i32), "len {len} at {at}");
                }
            }
        }
    }

    #[test]
    fn byte_difference_is_unsigned() {
        // C compares as unsigned char: 0x80 is above 0x7f.
        assert!(unsafe { compare_bytes([0x80u8].as_ptr(), [0x7fu8].as_ptr(), 1) } > 0);
        let a = [0u8; 9];
        let mut b = [0u8; 9];
        b[8] = 0x90;
        assert!(unsafe { compare_bytes(a.as_ptr(), b.as_ptr(), 9) } < 0);
    }

    #[test]
    fn unaligned_inputs() {
        let data: Vec<u8> = (0..64u8).collect();
        let copy = data.clone();
        for offset in 0..8 {
            let n = 40;
            assert_eq!(
                compare(&data[offset..offset + n], &copy[offset..offset + n]),
                0
            );
            assert_eq!(
                compare(&data[offset..offset + n], &copy[offset + 1..offset + 1 + n]),
                -1
            );
        }
    }
}
