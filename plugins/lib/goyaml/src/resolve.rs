//! go-yaml v2's YAML 1.1 implicit scalar resolution (`resolve.go`): which plain scalars are
//! booleans (`y`, `yes`, `on`, ...), nulls, ints (decimal, `0x`, `0o`, `0b`, leading-zero
//! octal, `_` separators), floats (`.inf`, `.nan`, decimal forms) and timestamps; plus the
//! base-60 check the encoder uses. Go's `strconv` number parsing comes from
//! `capstan_gotmpl::strconv`, shared with the template engine's number constants.

/// The long form of the YAML core tags, as libyaml hands them over.
use capstan_gotmpl::strconv::{go_parse_float, go_parse_int, go_parse_uint};

pub const STR_TAG: &str = "tag:yaml.org,2002:str";
pub const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
pub const INT_TAG: &str = "tag:yaml.org,2002:int";
pub const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
pub const NULL_TAG: &str = "tag:yaml.org,2002:null";
pub const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
pub const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
pub const MERGE_TAG: &str = "tag:yaml.org,2002:merge";
pub const MAP_TAG: &str = "tag:yaml.org,2002:map";
pub const SEQ_TAG: &str = "tag:yaml.org,2002:seq";

const LONG_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// A resolved scalar, with go-yaml v2's Go types.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// nil.
    Null,
    /// bool.
    Bool(bool),
    /// int (int64 on 64-bit platforms).
    Int(i64),
    /// uint64 (only for values above `i64::MAX`).
    Uint(u64),
    /// float64.
    Float(f64),
    /// A string (also timestamps, which go-yaml leaves as strings in `interface{}`).
    Str(String),
    /// The `<<` merge key.
    Merge,
}

/// `!!int` for `tag:yaml.org,2002:int`; other tags unchanged.
pub fn short_tag(tag: &str) -> String {
    match tag.strip_prefix(LONG_TAG_PREFIX) {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

fn resolvable_tag(tag: &str) -> bool {
    matches!(
        tag,
        "" | STR_TAG | BOOL_TAG | INT_TAG | FLOAT_TAG | NULL_TAG | TIMESTAMP_TAG
    )
}

fn lookup_map(s: &str) -> Option<(&'static str, Scalar)> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (BOOL_TAG, Scalar::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (BOOL_TAG, Scalar::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (NULL_TAG, Scalar::Null),
        ".nan" | ".NaN" | ".NAN" => (FLOAT_TAG, Scalar::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            (FLOAT_TAG, Scalar::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => (FLOAT_TAG, Scalar::Float(f64::NEG_INFINITY)),
        "<<" => (MERGE_TAG, Scalar::Merge),
        _ => return None,
    })
}

/// What `resolve(tag, in)` gives: the resolved tag and value, or go-yaml's failure text
/// (`cannot decode !!str `x` as a !!int`, without the `yaml: ` prefix).
pub fn resolve(tag: &str, input: &str) -> Result<(String, Scalar), String> {
    if !resolvable_tag(tag) {
        return Ok((tag.to_string(), Scalar::Str(input.to_string())));
    }
    let (rtag, out) = resolve_implicit(tag, input);
    if tag.is_empty() || tag == rtag || tag == STR_TAG || tag == BINARY_TAG {
        return Ok((rtag.to_string(), out));
    }
    if tag == FLOAT_TAG && rtag == INT_TAG {
        match out {
            Scalar::Int(i) => return Ok((FLOAT_TAG.to_string(), Scalar::Float(i as f64))),
            // go-yaml only converts int and int64 here; a uint64 fails below.
            Scalar::Uint(_) => {}
            _ => {}
        }
    }
    Err(format!(
        "cannot decode {} `{}` as a {}",
        short_tag(rtag),
        input,
        short_tag(tag)
    ))
}

fn resolve_implicit(tag: &str, input: &str) -> (&'static str, Scalar) {
    let hint = match input.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint != 0 && tag != STR_TAG && tag != BINARY_TAG {
        if let Some(found) = lookup_map(input) {
            return found;
        }
        match hint {
            b'.' => {
                if let Some(f) = go_parse_float(input) {
                    return (FLOAT_TAG, Scalar::Float(f));
                }
            }
            b'D' | b'S' => {
                if (tag.is_empty() || tag == TIMESTAMP_TAG) && is_timestamp(input) {
                    return (TIMESTAMP_TAG, Scalar::Str(input.to_string()));
                }
                let plain: String = input.chars().filter(|&c| c != '_').collect();
                if let Some(i) = go_parse_int(&plain) {
                    return (INT_TAG, Scalar::Int(i));
                }
                if let Some(u) = go_parse_uint(&plain) {
                    return (INT_TAG, Scalar::Uint(u));
                }
                if let Some(f) = yaml_style_float(&plain)
                    .then(|| go_parse_float(&plain))
                    .flatten()
                {
                    return (FLOAT_TAG, Scalar::Float(f));
                }
                // The explicit `0b`/`-0b` branches of resolve.go are covered by Go's
                // base-prefix parsing above.
            }
            _ => {}
        }
    }
    (STR_TAG, Scalar::Str(input.to_string()))
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// The encoder's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
pub fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !(b[0] == b'+' || b[0] == b'-' || b[0].is_ascii_digit()) || !s.contains(':')
    {
        return false;
    }
    let mut i = 0;
    if b[0] == b'+' || b[0] == b'-' {
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        // [0-5]?[0-9]
        if i + 1 < b.len()
            && (b'0'..=b'5').contains(&b[i])
            && b[i + 1].is_ascii_digit()
            && !(i + 2 < b.len() && b[i + 2].is_ascii_digit())
        {
            i += 2;
        } else if i < b.len() && b[i].is_ascii_digit() {
            // A two-digit group whose first digit is 6-9 cannot match; one digit can.
            if i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                if !(b'0'..=b'5').contains(&b[i]) {
                    return false;
                }
                i += 2;
            } else {
                i += 1;
            }
        } else {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// Whether go-yaml v2's `parseTimestamp` accepts the string (one of the layouts
/// `2006-1-2T15:4:5.999999999Z07:00`, the same with `t`, `2006-1-2 15:4:5.999999999`,
/// `2006-1-2`, with Go `time.Parse` rules).
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let lead = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if lead != 4 || b.len() == 4 || b[4] != b'-' {
        return false;
    }
    parse_ts(b, Some(b'T'), true)
        || parse_ts(b, Some(b't'), true)
        || parse_ts(b, Some(b' '), false)
        || parse_ts(b, None, false)
}

/// Go's `getnum(s, false)`: one or two digits.
fn getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    if *i >= b.len() || !b[*i].is_ascii_digit() {
        return None;
    }
    let mut n = (b[*i] - b'0') as u32;
    *i += 1;
    if *i < b.len() && b[*i].is_ascii_digit() {
        n = n * 10 + (b[*i] - b'0') as u32;
        *i += 1;
    }
    Some(n)
}

fn days_in(month: u32, year: i64) -> u32 {
    match month {
        2 => {
            if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) {
                29
            } else {
                28
            }
        }
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn parse_ts(b: &[u8], sep: Option<u8>, zone: bool) -> bool {
    let year: i64 = match std::str::from_utf8(&b[..4])
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(y) => y,
        None => return false,
    };
    let mut i = 5;
    let Some(month) = getnum(b, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) {
        return false;
    }
    if i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    let Some(day) = getnum(b, &mut i) else {
        return false;
    };
    let Some(sep) = sep else {
        return i == b.len() && day >= 1 && day <= days_in(month, year);
    };
    if sep == b' ' {
        // A space in a Go layout matches one or more spaces.
        if i >= b.len() || b[i] != b' ' {
            return false;
        }
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
    } else {
        if i >= b.len() || b[i] != sep {
            return false;
        }
        i += 1;
    }
    let Some(hour) = getnum(b, &mut i) else {
        return false;
    };
    if hour >= 24 || i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    let Some(min) = getnum(b, &mut i) else {
        return false;
    };
    if min >= 60 || i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    let Some(sec) = getnum(b, &mut i) else {
        return false;
    };
    if sec >= 60 {
        return false;
    }
    // Optional fractional seconds (`.` or `,` then digits).
    if i + 1 < b.len() && (b[i] == b'.' || b[i] == b',') && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if zone {
        if i < b.len() && b[i] == b'Z' {
            i += 1;
        } else {
            if i + 6 > b.len() || !(b[i] == b'+' || b[i] == b'-') || b[i + 3] != b':' {
                return false;
            }
            let all_digits = [1, 2, 4, 5].iter().all(|&k| b[i + k].is_ascii_digit());
            if !all_digits {
                return false;
            }
            i += 6;
        }
    }
    i == b.len() && day >= 1 && day <= days_in(month, year)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Scalar {
        resolve("", s)
            .map(|(_, v)| v)
            .unwrap_or(Scalar::Str("ERR".into()))
    }

    #[test]
    fn yaml11_words() {
        // From go-yaml v2 resolve.go's table and decode_test.go.
        for t in [
            "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(r(t), Scalar::Bool(true), "{t}");
        }
        for f in [
            "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "FALSE",
        ] {
            assert_eq!(r(f), Scalar::Bool(false), "{f}");
        }
        for n in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(r(n), Scalar::Null);
        }
        assert_eq!(r("yEs"), Scalar::Str("yEs".into()));
        assert_eq!(r("nULL"), Scalar::Str("nULL".into()));
    }

    #[test]
    fn numbers() {
        // decode_test.go: 0b10 → 2, 0xA → 10, .1 → 0.1, 1e3 → 1000.0, 0755 octal.
        assert_eq!(r("10"), Scalar::Int(10));
        assert_eq!(r("0b10"), Scalar::Int(2));
        assert_eq!(r("-0b10"), Scalar::Int(-2));
        assert_eq!(r("0xA"), Scalar::Int(10));
        assert_eq!(r("0755"), Scalar::Int(493));
        assert_eq!(r("0o17"), Scalar::Int(15));
        assert_eq!(r("1_000"), Scalar::Int(1000));
        assert_eq!(r("+12"), Scalar::Int(12));
        assert_eq!(r("-12"), Scalar::Int(-12));
        assert_eq!(r("0"), Scalar::Int(0));
        assert_eq!(r("-0"), Scalar::Int(0));
        assert_eq!(r("08"), Scalar::Float(8.0));
        assert_eq!(r("0.1"), Scalar::Float(0.1));
        assert_eq!(r(".1"), Scalar::Float(0.1));
        assert_eq!(r("1e3"), Scalar::Float(1000.0));
        assert_eq!(r("1e+21"), Scalar::Float(1e21));
        assert_eq!(r("-1.5"), Scalar::Float(-1.5));
        assert_eq!(r("1."), Scalar::Float(1.0));
        assert_eq!(r("9223372036854775807"), Scalar::Int(i64::MAX));
        assert_eq!(r("-9223372036854775808"), Scalar::Int(i64::MIN));
        assert_eq!(r("18446744073709551615"), Scalar::Uint(u64::MAX));
        assert_eq!(
            r("18446744073709551616"),
            Scalar::Float(18446744073709551616.0)
        );
        assert!(matches!(r(".nan"), Scalar::Float(f) if f.is_nan()));
        assert_eq!(r("-.Inf"), Scalar::Float(f64::NEG_INFINITY));
        assert_eq!(r("1e999"), Scalar::Str("1e999".into()));
        assert_eq!(r("1:20"), Scalar::Str("1:20".into()));
        assert_eq!(r("1.2.3"), Scalar::Str("1.2.3".into()));
        assert_eq!(r("0x"), Scalar::Str("0x".into()));
        assert_eq!(r("."), Scalar::Str(".".into()));
        // Go's ParseFloat takes underscores between digits.
        assert_eq!(r(".3_9"), Scalar::Float(0.39));
        assert_eq!(r("._5"), Scalar::Str("._5".into()));
        assert_eq!(r(".5_"), Scalar::Str(".5_".into()));
        assert_eq!(r("+"), Scalar::Str("+".into()));
        // The hint table has no entry for `<`, so `<<` resolves as a string.
        assert_eq!(r("<<"), Scalar::Str("<<".into()));
    }

    #[test]
    fn tags() {
        assert_eq!(
            resolve(FLOAT_TAG, "1").ok(),
            Some((FLOAT_TAG.to_string(), Scalar::Float(1.0)))
        );
        assert_eq!(
            resolve(FLOAT_TAG, "error").err().as_deref(),
            Some("cannot decode !!str `error` as a !!float")
        );
        assert_eq!(
            resolve(STR_TAG, "123").ok(),
            Some((STR_TAG.to_string(), Scalar::Str("123".into())))
        );
        assert_eq!(
            resolve("!foo", "1").ok(),
            Some(("!foo".to_string(), Scalar::Str("1".into())))
        );
    }

    #[test]
    fn timestamps() {
        for t in [
            "2001-12-14",
            "2001-12-14T21:59:43.10-05:00",
            "2001-12-14t21:59:43.10Z",
            "2001-12-14 21:59:43.10",
            "2015-2-3T3:4:5Z",
            "2024-02-29",
        ] {
            assert!(is_timestamp(t), "{t}");
            assert_eq!(resolve("", t).ok().map(|x| x.0), Some(TIMESTAMP_TAG.into()));
        }
        for t in [
            "2023-02-29",
            "2001-13-01",
            "2001-12-14 21:59:43.10 -5",
            "20011-12-14",
            "2001-12",
        ] {
            assert!(!is_timestamp(t), "{t}");
        }
    }

    #[test]
    fn base60() {
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("-190:20:30.15"));
        assert!(is_base60_float("1:2"));
        assert!(!is_base60_float("1:60"));
        assert!(!is_base60_float("1:123"));
        assert!(!is_base60_float("a:1"));
        assert!(!is_base60_float("1:"));
    }
}
