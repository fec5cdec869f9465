//! Type conversions: spf13/cast's `ToInt64`/`ToInt`/`ToFloat64` (which every Sprig math
//! function goes through), Go's `strconv` integer and float parsing, and the functions
//! `toString`, `toStrings`, `atoi`, `int`, `int64`, `float64` and `toDecimal`.

use capstan_gotmpl::funcs::{FuncMap, arg, arg_str};
use capstan_gotmpl::value::Value;

use crate::values::{slice_elements, string_list, strval};

pub fn register(funcs: &mut FuncMap) {
    funcs.add("toString", 1, false, |args| {
        Ok(Value::from(strval(&arg(args, 0))))
    });
    funcs.add("toStrings", 1, false, |args| {
        Ok(string_list(to_strings(&arg(args, 0))))
    });
    funcs.add("atoi", 1, false, |args| {
        Ok(Value::Int(atoi(arg_str(args, 0)?)))
    });
    funcs.add("int", 1, false, |args| {
        Ok(Value::Int(to_int64(&arg(args, 0))))
    });
    funcs.add("int64", 1, false, |args| {
        Ok(Value::Int64(to_int64(&arg(args, 0))))
    });
    funcs.add("float64", 1, false, |args| {
        Ok(Value::Float(to_float64(&arg(args, 0))))
    });
    funcs.add("toDecimal", 1, false, |args| {
        let text = arg(args, 0).to_go_string();
        Ok(Value::Int64(parse_int(&text, 8).unwrap_or(0)))
    });
}

/// Sprig's `strslice`: list elements (nils dropped) or the single value as strings.
pub fn to_strings(value: &Value) -> Vec<String> {
    match slice_elements(value) {
        Some(items) => items.iter().filter(|v| !v.is_nil()).map(strval).collect(),
        None if value.is_nil() => Vec::new(),
        None => vec![strval(value)],
    }
}

/// `cast.ToInt64` (errors give 0): bools are 0/1, floats truncate, strings parse with Go's
/// base prefixes after dropping a zero decimal part (`"8.00"` is 8).
pub fn to_int64(value: &Value) -> i64 {
    match value {
        Value::Int(n) | Value::Int64(n) => *n,
        Value::Float(x) => float_to_int(*x),
        Value::Bool(b) => i64::from(*b),
        Value::String(s) => parse_int(trim_zero_decimal(s), 0).unwrap_or(0),
        _ => 0,
    }
}

/// `cast.ToFloat64` (errors give 0).
pub fn to_float64(value: &Value) -> f64 {
    match value {
        Value::Int(n) | Value::Int64(n) => *n as f64,
        Value::Float(x) => *x,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Go's float-to-int64 conversion on amd64: truncation, and the "integer indefinite" value
/// for NaN and out-of-range numbers.
pub fn float_to_int(x: f64) -> i64 {
    // 2^63 bounds the range that converts; beyond it (and for NaN) amd64 gives MinInt64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x.trunc() as i64
    }
}

/// cast's `trimZeroDecimal`: `"12.000"` becomes `"12"`; anything else is unchanged.
fn trim_zero_decimal(s: &str) -> &str {
    let mut found_zero = false;
    for (i, c) in s.char_indices().rev() {
        match c {
            '.' if found_zero => return &s[..i],
            '.' => return s,
            '0' => found_zero = true,
            _ => return s,
        }
    }
    s
}

/// `strconv.Atoi` with the error ignored: syntax errors give 0, out-of-range values clamp.
pub fn atoi(s: &str) -> i64 {
    match parse_int_checked(s, 10) {
        Ok(n) => n,
        Err(IntError::Range(n)) => n,
        Err(IntError::Syntax) => 0,
    }
}

/// `strconv.ParseInt(s, base, 64)`; `None` on any error.
pub fn parse_int(s: &str, base: u32) -> Option<i64> {
    parse_int_checked(s, base).ok()
}

enum IntError {
    Syntax,
    /// Out of range; Go returns the clamped value alongside the error.
    Range(i64),
}

fn parse_int_checked(s: &str, base: u32) -> Result<i64, IntError> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(body, base)?;
    if negative {
        if magnitude > 1u64 << 63 {
            return Err(IntError::Range(i64::MIN));
        }
        Ok((magnitude as i64).wrapping_neg())
    } else if magnitude > i64::MAX as u64 {
        Err(IntError::Range(i64::MAX))
    } else {
        Ok(magnitude as i64)
    }
}

fn parse_uint(s: &str, base: u32) -> Result<u64, IntError> {
    if s.is_empty() {
        return Err(IntError::Syntax);
    }
    let underscores_allowed = base == 0;
    let (base, digits, base_prefixed) = if base == 0 {
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("0x") {
            (16, &s[2..], true)
        } else if lower.starts_with("0o") {
            (8, &s[2..], true)
        } else if lower.starts_with("0b") {
            (2, &s[2..], true)
        } else if s.starts_with('0') && s.len() > 1 {
            (8, &s[1..], true)
        } else {
            (10, s, false)
        }
    } else {
        (base, s, false)
    };
    let digits: String = if digits.contains('_') {
        if !underscores_allowed || !underscores_between_digits(digits, base_prefixed) {
            return Err(IntError::Syntax);
        }
        digits.chars().filter(|c| *c != '_').collect()
    } else {
        digits.to_owned()
    };
    if digits.is_empty() {
        return Err(IntError::Syntax);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(base).ok_or(IntError::Syntax)?;
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        return Err(IntError::Range(i64::MAX));
    }
    Ok(value)
}

/// Go's rule that `_` may only separate digits (or follow a base prefix).
fn underscores_between_digits(digits: &str, after_prefix: bool) -> bool {
    let mut previous_was_digit = after_prefix;
    let mut last_underscore = false;
    for c in digits.chars() {
        if c == '_' {
            if !previous_was_digit {
                return false;
            }
            previous_was_digit = false;
            last_underscore = true;
        } else {
            previous_was_digit = true;
            last_underscore = false;
        }
    }
    !last_underscore
}

/// `strconv.ParseFloat(s, 64)` for decimal input (and `inf`/`nan`); `None` on error,
/// including overflow to infinity.
pub fn parse_float(s: &str) -> Option<f64> {
    let cleaned: String;
    let text = if s.contains('_') {
        if !underscores_between_digits(s.trim_start_matches(['+', '-']), false) {
            return None;
        }
        cleaned = s.chars().filter(|c| *c != '_').collect();
        &cleaned
    } else {
        s
    };
    let value: f64 = text.parse().ok()?;
    if value.is_infinite() && !text.to_ascii_lowercase().contains("inf") {
        return None;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("toString", &[i(42)]), "42");
        assert_eq!(show("toStrings", &[list(&[i(1), i(2)])]), "[1 2]");
        assert_eq!(show("atoi", &[s("42")]), "42");
        assert_eq!(show("int", &[s("42")]), "42");
        assert_eq!(show("int64", &[f(3.9)]), "3");
        assert_eq!(show("float64", &[s("1.5")]), "1.5");
        assert_eq!(show("toDecimal", &[s("0777")]), "511");
    }

    #[test]
    fn cast_semantics() {
        // cast.ToInt64: base prefixes, zero decimals, bools, garbage is 0.
        assert!(matches!(call("int64", &[s("0x10")]), Ok(Value::Int64(16))));
        assert!(matches!(call("int64", &[s("010")]), Ok(Value::Int64(8))));
        assert!(matches!(call("int64", &[s("8.00")]), Ok(Value::Int64(8))));
        assert!(matches!(call("int64", &[s("8.5")]), Ok(Value::Int64(0))));
        assert!(matches!(
            call("int64", &[s("1_000")]),
            Ok(Value::Int64(1000))
        ));
        assert!(matches!(
            call("int64", &[Value::Bool(true)]),
            Ok(Value::Int64(1))
        ));
        assert!(matches!(call("int64", &[Value::Nil]), Ok(Value::Int64(0))));
        assert!(matches!(call("int", &[f(-2.7)]), Ok(Value::Int(-2))));
        assert!(matches!(call("float64", &[s("abc")]), Ok(Value::Float(x)) if x == 0.0));
        assert!(matches!(call("float64", &[s("1e400")]), Ok(Value::Float(x)) if x == 0.0));
        assert!(matches!(call("float64", &[i(3)]), Ok(Value::Float(x)) if x == 3.0));
        // strconv.Atoi: sign allowed, junk gives 0.
        assert_eq!(show("atoi", &[s("-7")]), "-7");
        assert_eq!(show("atoi", &[s("7x")]), "0");
        assert_eq!(show("atoi", &[s("0x10")]), "0");
        // toStrings drops nils, stringifies one value.
        assert_eq!(
            show("toStrings", &[list(&[s("a"), Value::Nil, f(1.5)])]),
            "[a 1.5]"
        );
        assert_eq!(show("toStrings", &[s("x")]), "[x]");
        assert_eq!(show("toString", &[f(1_000_000.0)]), "1e+06");
        assert_eq!(show("toString", &[Value::Nil]), "<nil>");
        assert_eq!(show("toDecimal", &[i(777)]), "511");
        assert_eq!(show("toDecimal", &[s("9")]), "0");
    }
}
