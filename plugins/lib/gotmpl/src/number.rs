//! Number constants of templates as Go reads them: the literal forms of Go's lexer (decimal,
//! `0x`/`0o`/`0b` and legacy-octal integers, `_` separators, decimal and hexadecimal
//! floats such as `0x1p60`, imaginary and complex constants such as `4i` and `1+2i`, and
//! character constants), and the rules of `text/template/parse` that decide whether a
//! constant is an integer, an unsigned integer, a float or a complex number.
//!
//! Written by hand: Rust's `str::parse` knows neither Go's base prefixes, `_` separators nor
//! hexadecimal floats, and the classification (an integral float is also an int; `08` is an
//! "integer overflow") is Go's own.

use std::fmt;

use crate::strconv::{go_parse_float, go_parse_int, go_parse_uint, underscore_ok};
use crate::value::{Object, Value, format_float_g};

/// How the lexer classified the constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// A number (`73`, `0x1p4`, `4i`).
    Number,
    /// A complex constant with a real and an imaginary part (`1+2i`).
    Complex,
    /// A character constant, quotes included (`'a'`).
    Char,
}

/// A number constant and every Go type it can be.
#[derive(Debug, Clone, PartialEq)]
pub struct Number {
    /// Text as written.
    pub text: String,
    /// Value as an `int64`, when it is one exactly.
    pub int: Option<i64>,
    /// Value as a `uint64`, when it is one exactly.
    pub uint: Option<u64>,
    /// Value as a `float64`, when it can be one.
    pub float: Option<f64>,
    /// Value as a `complex128` (real, imaginary), for imaginary and complex constants.
    pub complex: Option<(f64, f64)>,
    /// Whether Go evaluates it as a float when untyped: it has `.`, `e` or `p` and is neither
    /// a hexadecimal integer nor a character.
    pub looks_float: bool,
}

/// Why a constant is not a number, worded as Go's parser words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberError(pub String);

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads `text` as Go's `parse.newNumber` does.
pub fn parse_number(text: &str, literal: Literal) -> Result<Number, NumberError> {
    let mut number = Number {
        text: text.to_owned(),
        int: None,
        uint: None,
        float: None,
        complex: None,
        looks_float: false,
    };
    match literal {
        Literal::Char => {
            let malformed = || NumberError(format!("malformed character constant: {text}"));
            let (c, tail) = text
                .strip_prefix('\'')
                .and_then(first_char_of_char_constant)
                .ok_or_else(|| NumberError("invalid syntax".into()))?;
            if tail != "'" {
                return Err(malformed());
            }
            number.int = Some(i64::from(u32::from(c)));
            number.uint = Some(u64::from(u32::from(c)));
            number.float = Some(f64::from(u32::from(c)));
            return Ok(number);
        }
        Literal::Complex => {
            let (re, im) = split_complex(text)
                .ok_or_else(|| NumberError(format!("illegal number syntax: {text:?}")))?;
            number.simplify_complex(re, im);
            return Ok(number);
        }
        Literal::Number => {}
    }
    if let Some(imaginary) = text.strip_suffix('i')
        && let Some(im) = parse_float(imaginary)
    {
        number.simplify_complex(0.0, im);
        return Ok(number);
    }
    number.uint = parse_uint(text);
    number.int = parse_int(text);
    if number.int == Some(0) {
        // `-0` is no uint64 to ParseUint, but Go counts it as one.
        number.uint = Some(0);
    }
    if let Some(i) = number.int {
        number.float = Some(i as f64);
    } else if let Some(u) = number.uint {
        number.float = Some(u as f64);
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            // Integral text that fits no integer type: Go refuses it rather than round.
            return Err(NumberError(format!("integer overflow: {text:?}")));
        }
        number.float = Some(f);
        number.int = exact_i64(f);
        number.uint = exact_u64(f);
    }
    if number.int.is_none() && number.uint.is_none() && number.float.is_none() {
        return Err(NumberError(format!("illegal number syntax: {text:?}")));
    }
    number.looks_float = !is_hex_int(text) && text.contains(['.', 'e', 'E', 'p', 'P']);
    Ok(number)
}

impl Number {
    /// Go's `simplifyComplex`: a complex constant with no imaginary part is also a float,
    /// and an int or uint when integral.
    fn simplify_complex(&mut self, re: f64, im: f64) {
        self.complex = Some((re, im));
        if im == 0.0 {
            self.float = Some(re);
            self.int = exact_i64(re);
            self.uint = exact_u64(re);
        }
    }
}

/// Go's `strconv.UnquoteChar(s, '\'')`: the first character of a character constant's
/// body, escapes decoded, and what follows it.
fn first_char_of_char_constant(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    let c = chars.next()?;
    if c == '\'' || c == '\n' {
        return None;
    }
    if c != '\\' {
        return Some((c, chars.as_str()));
    }
    let escape = chars.next()?;
    let rest = chars.as_str();
    let from_digits = |count: usize, radix: u32| -> Option<(u32, &str)> {
        let digits = rest.get(..count)?;
        Some((u32::from_str_radix(digits, radix).ok()?, &rest[count..]))
    };
    let (value, tail) = match escape {
        'a' => (0x07, rest),
        'b' => (0x08, rest),
        'f' => (0x0c, rest),
        'n' => (0x0a, rest),
        'r' => (0x0d, rest),
        't' => (0x09, rest),
        'v' => (0x0b, rest),
        '\\' | '\'' => (u32::from(escape), rest),
        'x' => from_digits(2, 16)?,
        'u' => from_digits(4, 16)?,
        'U' => from_digits(8, 16)?,
        '0'..='7' => {
            let digits = s.get(1..4)?;
            let value = u32::from_str_radix(digits, 8).ok()?;
            (value <= 255).then_some((value, &s[4..]))?
        }
        _ => return None,
    };
    Some((char::from_u32(value)?, tail))
}

/// `0x…` without a binary exponent: an integer, even with `e` among its digits.
fn is_hex_int(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && !text.contains(['p', 'P'])
}

fn exact_i64(f: f64) -> Option<i64> {
    // `as` saturates; the range check keeps only values Go's conversion round-trips.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    (f.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&f)).then_some(f as i64)
}

fn exact_u64(f: f64) -> Option<u64> {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    (f.fract() == 0.0 && (0.0..TWO_POW_64).contains(&f)).then_some(f as u64)
}

/// The real and imaginary parts of `1+2i`, `-1.2-4.2i` (what `fmt.Sscan` reads into a
/// `complex128`): the imaginary part starts at the last sign that is not an exponent's.
fn split_complex(text: &str) -> Option<(f64, f64)> {
    let imaginary = text.strip_suffix('i')?;
    let bytes = imaginary.as_bytes();
    let split = (1..bytes.len()).rev().find(|&i| {
        matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
    })?;
    Some((
        parse_float(&imaginary[..split])?,
        parse_float(&imaginary[split..])?,
    ))
}

/// `text` without its `_` separators, when Go's `underscoreOK` allows them (`None` if not).
fn without_underscores(text: &str) -> Option<String> {
    if !text.contains('_') {
        return Some(text.to_owned());
    }
    underscore_ok(text).then(|| text.replace('_', ""))
}

/// Go's `strconv.ParseUint(text, 0, 64)`.
fn parse_uint(text: &str) -> Option<u64> {
    go_parse_uint(&without_underscores(text)?)
}

/// Go's `strconv.ParseInt(text, 0, 64)`.
fn parse_int(text: &str) -> Option<i64> {
    go_parse_int(&without_underscores(text)?)
}

/// Go's `strconv.ParseFloat(text, 64)` for the forms a template number can take: decimal
/// (`1e9`, `.5`, `1_000.5`) and hexadecimal with a mandatory binary exponent (`0x1p-2`,
/// `0x1.8p1`). Out of range (±Inf) is an error, as Go reports `ErrRange`.
fn parse_float(text: &str) -> Option<f64> {
    let clean = without_underscores(text)?;
    let (negative, unsigned) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    else {
        return go_parse_float(&clean);
    };
    let magnitude = parse_hex_float(hex)?;
    magnitude
        .is_finite()
        .then_some(if negative { -magnitude } else { magnitude })
}

/// The value of a hexadecimal float's digits after `0x`: `h.hhh` then `p` and a signed
/// decimal exponent of two, rounded to nearest as Go rounds.
fn parse_hex_float(text: &str) -> Option<f64> {
    let (mantissa, exponent) = text.split_once(['p', 'P'])?;
    let exponent: i64 = match exponent.strip_prefix('+') {
        Some(rest) if !rest.starts_with(['+', '-']) => rest.parse().ok()?,
        _ => exponent.parse().ok()?,
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    // Up to 15 significant hex digits (60 bits) are kept exactly; any further nonzero digit
    // only sets a sticky bit so the rounding to 53 bits stays correct.
    let mut value: u64 = 0;
    let mut scale: i64 = 0;
    let mut kept = 0;
    let mut sticky = false;
    for (i, c) in whole.chars().chain(fraction.chars()).enumerate() {
        let digit = u64::from(c.to_digit(16)?);
        let in_fraction = i >= whole.len();
        if kept < 15 {
            if value != 0 || digit != 0 {
                kept += 1;
            }
            value = value * 16 + digit;
            if in_fraction {
                scale -= 4;
            }
        } else {
            sticky |= digit != 0;
            if !in_fraction {
                scale += 4;
            }
        }
    }
    if sticky {
        value = (value << 1) | 1;
        scale -= 1;
    }
    // `value as f64` rounds once to 53 bits; scaling by a power of two is exact unless the
    // result leaves the normal range.
    let exponent = i32::try_from(exponent.saturating_add(scale).clamp(-2000, 2000)).ok()?;
    Some(scale_by_power_of_two(value as f64, exponent))
}

/// `x × 2^exponent` in steps that stay within f64's range (`2^-1074` is not `1 / 2^1074`).
fn scale_by_power_of_two(mut x: f64, mut exponent: i32) -> f64 {
    while exponent > 1000 {
        x *= 2f64.powi(1000);
        exponent -= 1000;
    }
    while exponent < -1000 {
        x *= 2f64.powi(-1000);
        exponent += 1000;
    }
    x * 2f64.powi(exponent)
}

/// A `complex128` constant (`4i`, `1+2i`) as a template value: it prints as Go prints one,
/// `(0+4i)`; functions that want a number do not take it, as in Go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Complex128 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Object for Complex128 {
    fn type_name(&self) -> String {
        "complex128".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn kind_name(&self) -> &'static str {
        "complex128"
    }
    fn format(&self) -> String {
        let im = format_float_g(self.im);
        let sign = if im.starts_with(['-', '+']) { "" } else { "+" };
        format!("({}{sign}{im}i)", format_float_g(self.re))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Go's `parse.TestNumberParse` table expects of each constant:
    /// (text, int, uint, float, complex).
    type Expected = (
        &'static str,
        Option<i64>,
        Option<u64>,
        Option<f64>,
        Option<(f64, f64)>,
    );

    fn literal_of(text: &str) -> Literal {
        if text.starts_with('\'') {
            Literal::Char
        } else if text[1..].contains(['+', '-'])
            && text.ends_with('i')
            && !text[1..].contains(['e', 'E', 'p', 'P'])
        {
            Literal::Complex
        } else {
            Literal::Number
        }
    }

    #[test]
    fn go_number_table() {
        let cases: &[Expected] = &[
            ("0", Some(0), Some(0), Some(0.0), None),
            ("-0", Some(0), Some(0), Some(0.0), None),
            ("73", Some(73), Some(73), Some(73.0), None),
            ("7_3", Some(73), Some(73), Some(73.0), None),
            ("0b10_010_01", Some(73), Some(73), Some(73.0), None),
            ("0B10_010_01", Some(73), Some(73), Some(73.0), None),
            ("073", Some(59), Some(59), Some(59.0), None),
            ("0o73", Some(59), Some(59), Some(59.0), None),
            ("0O73", Some(59), Some(59), Some(59.0), None),
            ("0x73", Some(115), Some(115), Some(115.0), None),
            ("0X73", Some(115), Some(115), Some(115.0), None),
            ("0x7_3", Some(115), Some(115), Some(115.0), None),
            ("-73", Some(-73), None, Some(-73.0), None),
            ("+73", Some(73), None, Some(73.0), None),
            ("100", Some(100), Some(100), Some(100.0), None),
            (
                "1e9",
                Some(1_000_000_000),
                Some(1_000_000_000),
                Some(1e9),
                None,
            ),
            ("-1e9", Some(-1_000_000_000), None, Some(-1e9), None),
            ("-1.2", None, None, Some(-1.2), None),
            (
                "1e19",
                None,
                Some(10_000_000_000_000_000_000),
                Some(1e19),
                None,
            ),
            (
                "1e1_9",
                None,
                Some(10_000_000_000_000_000_000),
                Some(1e19),
                None,
            ),
            (
                "1E19",
                None,
                Some(10_000_000_000_000_000_000),
                Some(1e19),
                None,
            ),
            ("-1e19", None, None, Some(-1e19), None),
            ("0x_1p4", Some(16), Some(16), Some(16.0), None),
            ("0X_1P4", Some(16), Some(16), Some(16.0), None),
            ("0x_1p-4", None, None, Some(1.0 / 16.0), None),
            ("4i", None, None, None, Some((0.0, 4.0))),
            ("-1.2+4.2i", None, None, None, Some((-1.2, 4.2))),
            ("073i", None, None, None, Some((0.0, 73.0))),
            ("0i", Some(0), Some(0), Some(0.0), Some((0.0, 0.0))),
            ("-1.2+0i", None, None, Some(-1.2), Some((-1.2, 0.0))),
            ("-12+0i", Some(-12), None, Some(-12.0), Some((-12.0, 0.0))),
            ("13+0i", Some(13), Some(13), Some(13.0), Some((13.0, 0.0))),
            ("0123", Some(83), Some(83), Some(83.0), None),
            ("-0x0", Some(0), Some(0), Some(0.0), None),
            (
                "0xdeadbeef",
                Some(0xdead_beef),
                Some(0xdead_beef),
                Some(3_735_928_559.0),
                None,
            ),
            ("'a'", Some(97), Some(97), Some(97.0), None),
            (r"'\n'", Some(10), Some(10), Some(10.0), None),
            (r"'\\'", Some(92), Some(92), Some(92.0), None),
            (r"'\''", Some(39), Some(39), Some(39.0), None),
            (r"'\xFF'", Some(255), Some(255), Some(255.0), None),
            ("'パ'", Some(0x30d1), Some(0x30d1), Some(12497.0), None),
            (r"'\u30d1'", Some(0x30d1), Some(0x30d1), Some(12497.0), None),
            (
                r"'\U000030d1'",
                Some(0x30d1),
                Some(0x30d1),
                Some(12497.0),
                None,
            ),
            ("0xef", Some(239), Some(239), Some(239.0), None),
            // The forms charts use for byte sizes.
            (
                "0x1p60",
                Some(1 << 60),
                Some(1 << 60),
                Some(1_152_921_504_606_846_976.0),
                None,
            ),
            ("0x1P-2", None, None, Some(0.25), None),
            ("0x1.8p1", Some(3), Some(3), Some(3.0), None),
            ("1_000", Some(1000), Some(1000), Some(1000.0), None),
            ("0o17", Some(15), Some(15), Some(15.0), None),
            ("0b101", Some(5), Some(5), Some(5.0), None),
            (".5", None, None, Some(0.5), None),
            ("1e3", Some(1000), Some(1000), Some(1000.0), None),
            (
                "18446744073709551615",
                None,
                Some(u64::MAX),
                Some(1.844_674_407_370_955_2e19),
                None,
            ),
        ];
        for &(text, int, uint, float, complex) in cases {
            let n = parse_number(text, literal_of(text))
                .unwrap_or_else(|e| panic!("{text}: refused: {e}"));
            assert_eq!(
                (n.int, n.uint, n.float, n.complex),
                (int, uint, float, complex),
                "{text}"
            );
        }
    }

    #[test]
    fn go_refuses_these_constants() {
        for (text, literal, message) in [
            ("+-2", Literal::Number, r#"illegal number syntax: "+-2""#),
            (
                "0x123.",
                Literal::Number,
                r#"illegal number syntax: "0x123.""#,
            ),
            ("1e.", Literal::Number, r#"illegal number syntax: "1e.""#),
            ("0xi.", Literal::Number, r#"illegal number syntax: "0xi.""#),
            ("1+2.", Literal::Number, r#"illegal number syntax: "1+2.""#),
            ("'x", Literal::Char, "malformed character constant: 'x"),
            ("'xx'", Literal::Char, "malformed character constant: 'xx'"),
            (
                "'433937734937734969526500969526500'",
                Literal::Char,
                "malformed character constant: '433937734937734969526500969526500'",
            ),
            ("+", Literal::Number, r#"illegal number syntax: "+""#),
            ("1__0", Literal::Number, r#"illegal number syntax: "1__0""#),
            ("1_", Literal::Number, r#"illegal number syntax: "1_""#),
            (
                "0x1.8",
                Literal::Number,
                r#"illegal number syntax: "0x1.8""#,
            ),
            (
                "1e400",
                Literal::Number,
                r#"illegal number syntax: "1e400""#,
            ),
            // Integral text too large for any integer: Go's own wording.
            ("08", Literal::Number, r#"integer overflow: "08""#),
            (
                "99999999999999999999",
                Literal::Number,
                r#"integer overflow: "99999999999999999999""#,
            ),
        ] {
            assert_eq!(
                parse_number(text, literal).map(|n| n.text),
                Err(NumberError(message.into())),
                "{text}"
            );
        }
    }

    #[test]
    fn floats_are_told_from_integers_as_go_evaluates_them() {
        let looks_float = |text: &str| parse_number(text, Literal::Number).unwrap().looks_float;
        assert!(looks_float("0x1p60"));
        assert!(looks_float("1e3"));
        assert!(looks_float(".5"));
        assert!(!looks_float("0xef"));
        assert!(!looks_float("0x1E"));
        assert!(!looks_float("1_000"));
        assert!(!parse_number("'e'", Literal::Char).unwrap().looks_float);
    }

    #[test]
    fn hexadecimal_floats_round_like_go() {
        let f = |text: &str| parse_float(text).unwrap();
        assert_eq!(f("0x1.fffffffffffffp1023"), f64::MAX);
        assert_eq!(f("0x1p-1074"), 5e-324);
        assert_eq!(f("0x1.00000000000008p0"), 1.0); // halfway: to even
        assert_eq!(f("0x1.000000000000081p0"), 1.0 + f64::EPSILON); // sticky: up
        assert_eq!(f("0xAp0"), 10.0);
        assert_eq!(f("0x.8p1"), 1.0);
        assert!(parse_float("0x1p1024").is_none());
    }
}
