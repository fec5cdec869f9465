//! Small Go formatting helpers the YAML paths need: `strconv.FormatFloat(f, 'g', -1, 32)`
//! (sigs.k8s.io/yaml's float keys), `strconv.Quote` (`%#v` in errors), Go's JSON number
//! text for float64 (`encoding/json`), and Go's per-byte replacement of invalid UTF-8.

use capstan_gotmpl::value::{format_float_special, format_g_digits, plain_decimal, split_exp};

/// Go's `strconv.FormatFloat(x, 'g', -1, 32)` (the value rounded to float32 first).
pub fn format_float32_g(x: f64) -> String {
    let f = x as f32;
    if let Some(special) = format_float_special(f64::from(f)) {
        return special;
    }
    // Shortest digits of the float32 (not of the float64 it widens to).
    let (digits, exp) = split_exp(&format!("{:e}", f.abs()));
    format_g_digits(f.is_sign_negative(), &digits, exp)
}

/// Go's `encoding/json` text for a finite float64: `'f'` form, or `'e'` form (with a
/// two-digit minimum exponent trimmed to one, `1e-07` → `1e-7`) when the magnitude is below
/// 1e-6 or at least 1e21.
pub fn json_float(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let abs = x.abs();
    let (digits, exp) = split_exp(&format!("{:e}", abs));
    let mut out = String::new();
    if x.is_sign_negative() {
        out.push('-');
    }
    if !(1e-6..1e21).contains(&abs) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        out.push_str(&format!("e{sign}{}", exp.unsigned_abs()));
    } else {
        out.push_str(&plain_decimal(&digits, exp));
    }
    out
}

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7F' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                let v = c as u32;
                if v < 0x10000 {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Go string of arbitrary bytes as `encoding/json` writes it: each byte that does not
/// start a valid UTF-8 sequence becomes U+FFFD.
pub fn go_string_from_bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    let mut rest = b;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push('\u{FFFD}');
                rest = &after[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float32_g() {
        // Go: strconv.FormatFloat(x, 'g', -1, 32).
        assert_eq!(format_float32_g(1.1), "1.1");
        assert_eq!(format_float32_g(0.1), "0.1");
        assert_eq!(format_float32_g(1.0), "1");
        assert_eq!(format_float32_g(1e6), "1e+06");
        assert_eq!(format_float32_g(123456.0), "123456");
        assert_eq!(format_float32_g(1.23456789), "1.2345679");
        assert_eq!(format_float32_g(1e39), "+Inf");
    }

    #[test]
    fn json_floats() {
        // Go: json.Marshal(float64).
        assert_eq!(json_float(1e21), "1e+21");
        assert_eq!(json_float(1e20), "100000000000000000000");
        assert_eq!(json_float(0.000001), "0.000001");
        assert_eq!(json_float(0.0000001), "1e-7");
        assert_eq!(json_float(1.5), "1.5");
        assert_eq!(json_float(-0.0), "-0");
        assert_eq!(json_float(123456789.5), "123456789.5");
    }

    #[test]
    fn quote() {
        assert_eq!(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(go_quote("\x01"), "\"\\x01\"");
    }

    #[test]
    fn lossy_bytes() {
        assert_eq!(go_string_from_bytes(b"a\xe2\x82b"), "a\u{FFFD}\u{FFFD}b");
        assert_eq!(go_string_from_bytes(b"ok"), "ok");
    }
}
