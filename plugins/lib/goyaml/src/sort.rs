//! go-yaml's map key order (`sorter.go`'s `keyList.Less`) for string keys: rune by rune,
//! non-letters before letters, letters by code point, and runs of digits compared by their
//! numeric value (`a2` < `a10`), shorter prefix first. go-yaml v3 differs in one case: right
//! after equal digits, a letter sorts before a non-letter (`a1b` < `a1.`).

use std::cmp::Ordering;

fn is_letter(c: char) -> bool {
    // Go's unicode.IsLetter (categories L*); Rust's alphabetic property is the closest.
    c.is_alphabetic()
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// `keyList.Less` for two string keys (`v3`: go-yaml v3's variant).
pub fn key_less(a: &str, b: &str, v3: bool) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let n = ar.len().min(br.len());
    let mut digits = false;
    for i in 0..n {
        if ar[i] == br[i] {
            digits = is_digit(ar[i]);
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if v3 && digits { al } else { bl };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Sorts with a "less" function that may not be a total order (go-yaml's is not for some
/// mixes of digits and letters, where Go's own result depends on random map order): a
/// merge sort that never panics, stable, O(n log n).
pub fn sort_with<T: Clone>(items: &mut Vec<T>, less: &dyn Fn(&T, &T) -> bool) {
    let n = items.len();
    if n < 2 {
        return;
    }
    if n <= 12 {
        // Insertion sort, as Go's pdqsort does for short runs.
        for i in 1..n {
            let mut j = i;
            while j > 0 && less(&items[j], &items[j - 1]) {
                items.swap(j, j - 1);
                j -= 1;
            }
        }
        return;
    }
    let mut width = 1;
    let mut src = items.clone();
    let mut dst = items.clone();
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                if less(&src[j], &src[i]) {
                    dst[k] = src[j].clone();
                    j += 1;
                } else {
                    dst[k] = src[i].clone();
                    i += 1;
                }
                k += 1;
            }
            while i < mid {
                dst[k] = src[i].clone();
                i += 1;
                k += 1;
            }
            while j < end {
                dst[k] = src[j].clone();
                j += 1;
                k += 1;
            }
            start = end;
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    *items = src;
}

/// An `Ordering` from [`key_less`].
pub fn key_cmp(a: &str, b: &str, v3: bool) -> Ordering {
    if key_less(a, b, v3) {
        Ordering::Less
    } else if key_less(b, a, v3) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        // Helm: toYaml (dict "a10" 1 "a2" 2 "B" 3 "a" 4 "10" 5 "9" 6) lists 9, 10, B, a, a2, a10.
        let mut keys = vec!["a10", "a2", "B", "a", "10", "9"];
        sort_with(&mut keys, &|a, b| key_less(a, b, false));
        assert_eq!(keys, vec!["9", "10", "B", "a", "a2", "a10"]);
        // encode_test.go TestSortedOutput order (the string keys).
        let want = [
            "", ".1", ".2", ".a", "1", "2", "a!10", "a/0001", "a/002", "a/3", "a/10", "a/11",
            "a/0012", "a/100", "a~10", "ab/1", "b/1", "b/01", "b/2", "b/02", "b/3", "b/03", "b1",
            "b01", "b3", "c2.10", "c10.2", "d1", "d7", "d7abc", "d12", "d12a",
        ];
        let mut got: Vec<&str> = want.to_vec();
        got.reverse();
        sort_with(&mut got, &|a, b| key_less(a, b, false));
        assert_eq!(got, want.to_vec());
    }

    #[test]
    fn inconsistent_order_does_not_panic() {
        // "3A0-9/" < "9" < "31" < "3A0-9/" under keyList.Less: Go's result depends on map
        // order; ours must simply not fail.
        let mut keys: Vec<String> = ["31", "9/", "3A0-9/", "A0", "9", "B_", ".9", "/"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for _ in 0..50 {
            keys.rotate_left(3);
            sort_with(&mut keys, &|a, b| key_less(a, b, false));
            assert_eq!(keys.len(), 8);
        }
    }
}
