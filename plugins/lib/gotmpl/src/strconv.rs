//! Go's `strconv` number parsing as Go programs rely on it: `ParseInt`/`ParseUint` with
//! base 0 (`0x`, `0o`, `0b` and leading-zero octal prefixes), decimal `ParseFloat`, and the
//! `underscoreOK` rule for `_` separators. Shared by the template engine's number constants
//! (`crate::number`) and go-yaml's scalar resolution (`capstan-goyaml`).
//!
//! Written by hand: Rust's `str::parse` knows neither Go's base prefixes nor its `_` rules.

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms YAML can reach here (an optional
/// sign, digits with an optional point, an optional exponent); `None` on a syntax error or
/// overflow (Go's ErrRange).
pub fn go_parse_float(s: &str) -> Option<f64> {
    let cleaned;
    let s = if s.contains('_') {
        if !underscore_ok(s) {
            return None;
        }
        cleaned = s.replace('_', "");
        cleaned.as_str()
    } else {
        s
    };
    if !decimal_float_syntax(s) {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    if f.is_infinite() { None } else { Some(f) }
}

/// Go's `strconv.underscoreOK`: underscores only between digits (or after a base prefix).
pub fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let b = if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
        &b[1..]
    } else {
        b
    };
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

fn decimal_float_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut mant = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        mant += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            mant += 1;
        }
    }
    if mant == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// Digits and base after Go's base-0 prefix rules (`0x`, `0o`, `0b`, leading `0` octal).
fn split_base(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => return (16, &s[2..]),
            b'o' | b'O' => return (8, &s[2..]),
            b'b' | b'B' => return (2, &s[2..]),
            _ => return (8, &s[1..]),
        }
    }
    (10, s)
}

fn parse_magnitude(s: &str) -> Option<u64> {
    let (base, digits) = split_base(s);
    if digits.is_empty() {
        // "0x", "0b", "0o" alone are errors ("0" itself is parsed as base 10).
        return None;
    }
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(base)?;
        n = n.checked_mul(base as u64)?.checked_add(d as u64)?;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)` (without underscores, which the caller removed).
pub fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if rest.is_empty() {
        return None;
    }
    let mag = parse_magnitude(rest)?;
    if neg {
        if mag > (i64::MAX as u64) + 1 {
            return None;
        }
        Some((mag as i64).wrapping_neg())
    } else {
        i64::try_from(mag).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: no sign allowed.
pub fn go_parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || s.starts_with(['+', '-']) {
        return None;
    }
    parse_magnitude(s)
}
