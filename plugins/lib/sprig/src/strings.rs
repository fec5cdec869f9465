//! String functions: Go's `strings` package as Sprig exposes it (arguments reordered for
//! pipelines), Masterminds/goutils (abbreviations, wrapping, initials, random strings,
//! `swapcase`, `nospace`) and huandu/xstrings (`snakecase`, `kebabcase`, `camelcase`,
//! `shuffle`), including their byte-oriented quirks on non-ASCII text.

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_int, arg_str};
use capstan_gotmpl::gofmt;
use capstan_gotmpl::value::{Map, Value};

use crate::conv::to_strings;
use crate::crypto::{random_below, random_string};
use crate::values::{
    is_go_space, is_lower, is_title_case, is_upper, latin1, lower_rune, string_list, strval,
    upper_rune,
};

pub fn register(funcs: &mut FuncMap) {
    funcs.add("hello", 0, false, |_| Ok(Value::from("Hello!")));
    funcs.add("abbrev", 2, false, |args| {
        let (width, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        if width < 4 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(
            abbreviate_full(s.as_bytes(), 0, width).unwrap_or_default(),
        ))
    });
    funcs.add("abbrevboth", 3, false, |args| {
        let (left, right, s) = (arg_int(args, 0)?, arg_int(args, 1)?, arg_str(args, 2)?);
        if right < 4 || left > 0 && right < 7 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(
            abbreviate_full(s.as_bytes(), left, right).unwrap_or_default(),
        ))
    });
    funcs.add("trunc", 2, false, |args| {
        let (count, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        Ok(Value::from(truncate(count, s)))
    });
    funcs.add("trim", 1, false, |args| {
        Ok(Value::from(arg_str(args, 0)?.trim()))
    });
    funcs.add("upper", 1, false, |args| {
        Ok(Value::from(to_upper(arg_str(args, 0)?)))
    });
    funcs.add("lower", 1, false, |args| {
        Ok(Value::from(to_lower(arg_str(args, 0)?)))
    });
    funcs.add("title", 1, false, |args| {
        Ok(Value::from(title(arg_str(args, 0)?)))
    });
    funcs.add("untitle", 1, false, |args| {
        Ok(Value::from(untitle(arg_str(args, 0)?)))
    });
    funcs.add("substr", 3, false, |args| {
        let (start, end, s) = (arg_int(args, 0)?, arg_int(args, 1)?, arg_str(args, 2)?);
        substring(start, end, s).map(Value::from)
    });
    funcs.add("repeat", 2, false, |args| {
        let (count, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        repeat(s, count).map(Value::from)
    });
    for name in ["trimall", "trimAll"] {
        funcs.add(name, 2, false, |args| {
            let (cutset, s) = (arg_str(args, 0)?, arg_str(args, 1)?);
            Ok(Value::from(s.trim_matches(|c| cutset.contains(c))))
        });
    }
    funcs.add("trimSuffix", 2, false, |args| {
        let (suffix, s) = (arg_str(args, 0)?, arg_str(args, 1)?);
        Ok(Value::from(s.strip_suffix(suffix).unwrap_or(s)))
    });
    funcs.add("trimPrefix", 2, false, |args| {
        let (prefix, s) = (arg_str(args, 0)?, arg_str(args, 1)?);
        Ok(Value::from(s.strip_prefix(prefix).unwrap_or(s)))
    });
    funcs.add("nospace", 1, false, |args| {
        Ok(Value::from(delete_white_space(arg_str(args, 0)?)))
    });
    funcs.add("initials", 1, false, |args| {
        Ok(Value::from(initials(arg_str(args, 0)?)))
    });
    funcs.add("randAlphaNum", 1, false, |args| {
        random_chars(arg_int(args, 0)?, |c| c.is_ascii_alphanumeric())
    });
    funcs.add("randAlpha", 1, false, |args| {
        random_chars(arg_int(args, 0)?, |c| c.is_ascii_alphabetic())
    });
    funcs.add("randAscii", 1, false, |args| {
        random_chars(arg_int(args, 0)?, |c| (' '..='~').contains(&c))
    });
    funcs.add("randNumeric", 1, false, |args| {
        random_chars(arg_int(args, 0)?, |c| c.is_ascii_digit())
    });
    funcs.add("swapcase", 1, false, |args| {
        Ok(Value::from(swap_case(arg_str(args, 0)?)))
    });
    funcs.add("shuffle", 1, false, |args| {
        Ok(Value::from(shuffle(arg_str(args, 0)?)))
    });
    funcs.add("snakecase", 1, false, |args| {
        Ok(Value::from(camel_case_to_lower_case(
            arg_str(args, 0)?,
            '_',
        )))
    });
    funcs.add("kebabcase", 1, false, |args| {
        Ok(Value::from(camel_case_to_lower_case(
            arg_str(args, 0)?,
            '-',
        )))
    });
    funcs.add("camelcase", 1, false, |args| {
        Ok(Value::from(pascal_case(arg_str(args, 0)?)))
    });
    funcs.add("wrap", 2, false, |args| {
        let (width, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        Ok(Value::from(wrap_custom(s, width, "", false)))
    });
    funcs.add("wrapWith", 3, false, |args| {
        let (width, sep, s) = (arg_int(args, 0)?, arg_str(args, 1)?, arg_str(args, 2)?);
        Ok(Value::from(wrap_custom(s, width, sep, true)))
    });
    funcs.add("contains", 2, false, |args| {
        Ok(Value::Bool(arg_str(args, 1)?.contains(arg_str(args, 0)?)))
    });
    funcs.add("hasPrefix", 2, false, |args| {
        Ok(Value::Bool(
            arg_str(args, 1)?.starts_with(arg_str(args, 0)?),
        ))
    });
    funcs.add("hasSuffix", 2, false, |args| {
        Ok(Value::Bool(arg_str(args, 1)?.ends_with(arg_str(args, 0)?)))
    });
    funcs.add("quote", 0, true, |args| {
        let quoted: Vec<String> = args
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| gofmt::quote(&strval(v)))
            .collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("squote", 0, true, |args| {
        let quoted: Vec<String> = args
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| format!("'{}'", v.to_go_string()))
            .collect();
        Ok(Value::from(quoted.join(" ")))
    });
    funcs.add("cat", 0, true, |args| {
        let parts: Vec<String> = args
            .iter()
            .filter(|v| !v.is_nil())
            .map(Value::to_go_string)
            .collect();
        Ok(Value::from(parts.join(" ")))
    });
    funcs.add("indent", 2, false, |args| {
        let (spaces, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        indent(spaces, s).map(Value::from)
    });
    funcs.add("nindent", 2, false, |args| {
        let (spaces, s) = (arg_int(args, 0)?, arg_str(args, 1)?);
        indent(spaces, s).map(|text| Value::from(format!("\n{text}")))
    });
    funcs.add("replace", 3, false, |args| {
        let (old, new, src) = (arg_str(args, 0)?, arg_str(args, 1)?, arg_str(args, 2)?);
        Ok(Value::from(src.replace(old, new)))
    });
    funcs.add("plural", 3, false, |args| {
        let (one, many, count) = (arg_str(args, 0)?, arg_str(args, 1)?, arg_int(args, 2)?);
        Ok(Value::from(if count == 1 { one } else { many }))
    });
    funcs.add("split", 2, false, |args| {
        let (sep, s) = (arg_str(args, 0)?, arg_str(args, 1)?);
        Ok(indexed_parts(go_split(s, sep, -1)))
    });
    funcs.add("splitList", 2, false, |args| {
        let (sep, s) = (arg_str(args, 0)?, arg_str(args, 1)?);
        Ok(string_list(go_split(s, sep, -1)))
    });
    funcs.add("splitn", 3, false, |args| {
        let (sep, n, s) = (arg_str(args, 0)?, arg_int(args, 1)?, arg_str(args, 2)?);
        Ok(indexed_parts(go_split(s, sep, n)))
    });
    funcs.add("join", 2, false, |args| {
        let sep = arg_str(args, 0)?;
        Ok(Value::from(to_strings(&arg(args, 1)).join(sep)))
    });
}

/// `strings.Repeat`, with its panics.
/// Largest string `repeat` and `indent` build: far beyond any real chart, small enough that
/// a hostile template cannot make the renderer allocate gigabytes in one call.
pub const MAX_BUILT_STRING: u128 = 64 << 20;

fn repeat(s: &str, count: i64) -> Result<String, FuncError> {
    if count < 0 {
        return Err(FuncError::new("strings: negative Repeat count"));
    }
    let total = (s.len() as u128) * (count as u128);
    if total > MAX_BUILT_STRING {
        return Err(FuncError(format!(
            "strings: Repeat output of {total} bytes exceeds the {} MiB limit",
            MAX_BUILT_STRING >> 20
        )));
    }
    Ok(s.repeat(count as usize))
}

/// Sprig's `indent`: the pad before the text and after every newline.
fn indent(spaces: i64, s: &str) -> Result<String, FuncError> {
    let lines = s.matches('\n').count() as u128 + 1;
    let total = s.len() as u128 + lines * spaces.max(0) as u128;
    if total > MAX_BUILT_STRING {
        return Err(FuncError(format!(
            "indent output of {total} bytes exceeds the {} MiB limit",
            MAX_BUILT_STRING >> 20
        )));
    }
    let pad = repeat(" ", spaces)?;
    Ok(format!("{pad}{}", s.replace('\n', &format!("\n{pad}"))))
}

/// `map[string]string{"_0": ..., "_1": ...}` as `split` and `splitn` return it.
fn indexed_parts(parts: Vec<String>) -> Value {
    Value::from(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| (format!("_{i}"), Value::from(part)))
            .collect::<Map>(),
    )
}

/// Go's `strings.SplitN` (`n < 0` for all pieces; an empty separator splits into runes).
pub fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let count = chars.len().min(limit);
        let mut parts: Vec<String> = chars[..count].iter().map(|c| c.to_string()).collect();
        if count < chars.len() && count > 0 {
            let rest: String = chars[count - 1..].iter().collect();
            parts[count - 1] = rest;
        }
        return parts;
    }
    s.splitn(limit, sep).map(str::to_owned).collect()
}

/// Sprig's `trunc`: the first `count` bytes, or the last `-count` bytes when negative.
fn truncate(count: i64, s: &str) -> String {
    let len = s.len() as i64;
    let bytes = s.as_bytes();
    if count < 0 && len + count > 0 {
        return String::from_utf8_lossy(&bytes[(len + count) as usize..]).into_owned();
    }
    if count >= 0 && len > count {
        return String::from_utf8_lossy(&bytes[..count as usize]).into_owned();
    }
    s.to_owned()
}

/// Sprig's `substring`, with Go's slice-bounds panics.
fn substring(start: i64, end: i64, s: &str) -> Result<String, FuncError> {
    let len = s.len() as i64;
    let bytes = s.as_bytes();
    let out_of_range =
        |text: String| FuncError::new(format!("runtime error: slice bounds out of range {text}"));
    let (lo, hi) = if start < 0 {
        if end < 0 {
            return Err(out_of_range(format!("[:{end}]")));
        }
        if end > len {
            return Err(out_of_range(format!("[:{end}] with length {len}")));
        }
        (0, end)
    } else if end < 0 || end > len {
        if start > len {
            return Err(out_of_range(format!("[{start}:{len}]")));
        }
        (start, len)
    } else {
        if start > end {
            return Err(out_of_range(format!("[{start}:{end}]")));
        }
        (start, end)
    };
    Ok(String::from_utf8_lossy(&bytes[lo as usize..hi as usize]).into_owned())
}

/// Go's `strings.ToUpper`.
pub fn to_upper(s: &str) -> String {
    s.chars().map(upper_rune).collect()
}

/// Go's `strings.ToLower`.
pub fn to_lower(s: &str) -> String {
    s.chars().map(lower_rune).collect()
}

/// Go's `unicode.ToTitle`.
fn title_rune(c: char) -> char {
    match c {
        'Ǆ' | 'ǅ' | 'ǆ' => 'ǅ',
        'Ǉ' | 'ǈ' | 'ǉ' => 'ǈ',
        'Ǌ' | 'ǋ' | 'ǌ' => 'ǋ',
        'Ǳ' | 'ǲ' | 'ǳ' => 'ǲ',
        _ => upper_rune(c),
    }
}

/// Go's (deprecated) `strings.Title`: every rune after a separator in title case.
fn title(s: &str) -> String {
    let is_separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if c.is_alphanumeric() {
            false
        } else {
            is_go_space(c)
        }
    };
    let mut previous = ' ';
    s.chars()
        .map(|c| {
            let out = if is_separator(previous) {
                title_rune(c)
            } else {
                c
            };
            previous = c;
            out
        })
        .collect()
}

/// goutils `Uncapitalize`: the first rune of each space-separated word in lower case.
fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if is_go_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                lower_rune(c)
            } else {
                c
            }
        })
        .collect()
}

/// goutils `DeleteWhiteSpace`, which reads bytes as runes: non-ASCII text comes back
/// re-encoded as Latin-1 runes whenever anything was removed.
fn delete_white_space(s: &str) -> String {
    let kept: Vec<u8> = s.bytes().filter(|b| !is_go_space(char::from(*b))).collect();
    if kept.len() == s.len() {
        s.to_owned()
    } else {
        latin1(&kept)
    }
}

/// goutils `Initials`: the first byte (as a rune) of each whitespace-separated word.
fn initials(s: &str) -> String {
    let mut out = Vec::new();
    let mut last_was_gap = true;
    for b in s.bytes() {
        if is_go_space(char::from(b)) {
            last_was_gap = true;
        } else if last_was_gap {
            out.push(b);
            last_was_gap = false;
        }
    }
    latin1(&out)
}

/// goutils `SwapCase`: upper to lower, lower to upper, and title case for a lower-case
/// rune starting a word.
fn swap_case(s: &str) -> String {
    let mut whitespace = true;
    s.chars()
        .map(|c| {
            if is_upper(c) || is_title_case(c) {
                whitespace = false;
                lower_rune(c)
            } else if is_lower(c) {
                let out = if whitespace {
                    title_rune(c)
                } else {
                    upper_rune(c)
                };
                whitespace = false;
                out
            } else {
                whitespace = is_go_space(c);
                c
            }
        })
        .collect()
}

/// xstrings `Shuffle`: the runes in random order.
fn shuffle(s: &str) -> String {
    let mut runes: Vec<char> = s.chars().collect();
    for i in (1..runes.len()).rev() {
        let j = random_below(i as u64 + 1) as usize;
        runes.swap(i, j);
    }
    runes.into_iter().collect()
}

/// goutils `CryptoRandom` over printable ASCII filtered by `accept`; a negative count is an
/// error that Sprig turns into "".
fn random_chars(count: i64, accept: fn(char) -> bool) -> Result<Value, FuncError> {
    if count <= 0 {
        return Ok(Value::from(""));
    }
    Ok(Value::from(random_string(count as usize, accept)))
}

/// goutils `AbbreviateFull` (byte offsets, as Go slices strings).
fn abbreviate_full(s: &[u8], offset: i64, max_width: i64) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if s.is_empty() {
        return Some(String::new());
    }
    if max_width < 4 {
        return None;
    }
    let len = s.len() as i64;
    if len <= max_width {
        return Some(text(s));
    }
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    if offset <= 4 {
        return Some(format!("{}...", text(&s[..(max_width - 3) as usize])));
    }
    if max_width < 7 {
        return None;
    }
    if offset + max_width - 3 < len {
        let rest = abbreviate_full(&s[offset as usize..], 0, max_width - 3).unwrap_or_default();
        return Some(format!("...{rest}"));
    }
    Some(format!(
        "...{}",
        text(&s[(len - (max_width - 3)) as usize..])
    ))
}

/// goutils `WrapCustom`: break at the last space within `width` bytes; a word longer than
/// the width is split only when `wrap_long_words`.
fn wrap_custom(s: &str, width: i64, newline: &str, wrap_long_words: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline }.as_bytes();
    let width = width.max(1) as usize;
    let bytes = s.as_bytes();
    let len = bytes.len();
    let mut offset = 0;
    let mut out: Vec<u8> = Vec::new();
    while len - offset > width {
        if bytes[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = width + offset + 1;
        let window = &bytes[offset..end];
        if let Some(space) = window.iter().rposition(|b| *b == b' ') {
            out.extend_from_slice(&bytes[offset..offset + space]);
            out.extend_from_slice(newline);
            offset += space + 1;
        } else if wrap_long_words {
            out.extend_from_slice(&bytes[offset..offset + width]);
            out.extend_from_slice(newline);
            offset += width;
        } else {
            let end = width + offset;
            match bytes[end..].iter().position(|b| *b == b' ') {
                None => {
                    out.extend_from_slice(&bytes[offset..]);
                    offset = len;
                }
                Some(index) => {
                    out.extend_from_slice(&bytes[offset..index + end]);
                    out.extend_from_slice(newline);
                    offset = index + end + 1;
                }
            }
        }
    }
    out.extend_from_slice(&bytes[offset..]);
    String::from_utf8_lossy(&out).into_owned()
}

/// xstrings' connector runes: `-`, `_` and white space.
fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || is_go_space(c)
}

/// Go's `unicode.IsPunct` (category P).
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return matches!(
            c,
            '!' | '"'
                | '#'
                | '%'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | ','
                | '-'
                | '.'
                | '/'
                | ':'
                | ';'
                | '?'
                | '@'
                | '['
                | '\\'
                | ']'
                | '_'
                | '{'
                | '}'
        );
    }
    matches!(
        c,
        '\u{A1}' | '\u{A7}' | '\u{AB}' | '\u{B6}' | '\u{B7}' | '\u{BB}' | '\u{BF}'
            | '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{2043}' | '\u{2045}'..='\u{2051}'
            | '\u{2053}'..='\u{205E}' | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}'
            | '\u{FF01}'..='\u{FF03}' | '\u{FF05}'..='\u{FF0A}' | '\u{FF0C}'..='\u{FF0F}'
    )
}

/// xstrings' `isAlphabet`: letters other than CJK ideographs.
fn is_alphabet(c: char) -> bool {
    if !c.is_alphabetic() {
        return false;
    }
    !matches!(c, '\u{4E00}'..='\u{9FCC}' | '\u{3400}'..='\u{4D85}' | '\u{20000}'..='\u{2B81D}')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum WordKind {
    Invalid,
    Number,
    UpperCase,
    Alphabet,
    Connector,
    Punct,
    Other,
}

const RUNE_ERROR: char = '\u{FFFD}';

/// xstrings `nextValidRune`: the next rune that is not U+FFFD and the bytes consumed.
fn next_valid_rune(s: &str, previous: char) -> (char, usize) {
    let mut size = 0;
    for c in s.chars() {
        size += c.len_utf8();
        if c != RUNE_ERROR {
            return (c, size);
        }
    }
    (previous, size)
}

/// xstrings `nextWord`: the next word, its kind, and what remains.
fn next_word(s: &str) -> (WordKind, &str, &str) {
    if s.is_empty() {
        return (WordKind::Invalid, "", "");
    }
    let (mut r, mut size) = next_valid_rune(s, RUNE_ERROR);
    let mut offset = size;
    if r == RUNE_ERROR {
        return (WordKind::Invalid, &s[..offset], &s[offset..]);
    }
    let mut remaining = &s[size..];
    // Extend the word while `accept` holds for the next rune.
    let extend =
        |accept: &dyn Fn(char) -> bool, r: &mut char, offset: &mut usize, remaining: &mut &str| {
            while !remaining.is_empty() {
                let (next, next_size) = next_valid_rune(remaining, *r);
                *r = next;
                if !accept(next) {
                    break;
                }
                *offset += next_size;
                *remaining = &remaining[next_size..];
            }
        };
    let kind;
    if is_connector(r) {
        kind = WordKind::Connector;
        extend(&is_connector, &mut r, &mut offset, &mut remaining);
    } else if is_punct(r) {
        kind = WordKind::Punct;
        extend(&is_punct, &mut r, &mut offset, &mut remaining);
    } else if is_upper(r) {
        kind = WordKind::UpperCase;
        if !remaining.is_empty() {
            (r, size) = next_valid_rune(remaining, r);
            if is_upper(r) {
                let mut previous_size = size;
                offset += size;
                remaining = &remaining[size..];
                while !remaining.is_empty() {
                    (r, size) = next_valid_rune(remaining, r);
                    if !is_upper(r) {
                        break;
                    }
                    previous_size = size;
                    offset += size;
                    remaining = &remaining[size..];
                }
                // "HTTPStatus" splits as "HTTP" + "Status".
                if !remaining.is_empty() && is_alphabet(r) {
                    offset -= previous_size;
                    remaining = &s[offset..];
                }
            } else if is_alphabet(r) {
                offset += size;
                remaining = &remaining[size..];
                extend(
                    &|c| is_alphabet(c) && !is_upper(c),
                    &mut r,
                    &mut offset,
                    &mut remaining,
                );
            }
        }
    } else if is_alphabet(r) {
        kind = WordKind::Alphabet;
        extend(
            &|c| is_alphabet(c) && !is_upper(c),
            &mut r,
            &mut offset,
            &mut remaining,
        );
    } else if r.is_numeric() {
        kind = WordKind::Number;
        extend(
            &|c: char| c.is_numeric(),
            &mut r,
            &mut offset,
            &mut remaining,
        );
    } else {
        kind = WordKind::Other;
        extend(
            &|c: char| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c)),
            &mut r,
            &mut offset,
            &mut remaining,
        );
    }
    (kind, &s[..offset], remaining)
}

/// xstrings `toLower`: upper-case and connector words are lowered and connectors replaced.
fn push_lower(out: &mut String, kind: WordKind, word: &str, connector: char) {
    if kind != WordKind::UpperCase && kind != WordKind::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else if is_upper(c) {
            out.push(lower_rune(c));
        } else {
            out.push(c);
        }
    }
}

/// xstrings `camelCaseToLowerCase` (`ToSnakeCase`/`ToKebabCase`).
fn camel_case_to_lower_case(s: &str, connector: char) -> String {
    use WordKind::*;
    if s.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let (mut kind, mut word, mut remaining) = next_word(s);
    while !remaining.is_empty() {
        if kind != Connector {
            push_lower(&mut out, kind, word, connector);
        }
        let previous = kind;
        let last = word;
        (kind, word, remaining) = next_word(remaining);
        match previous {
            Number => {
                while kind == Alphabet || kind == Number {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word, remaining) = next_word(remaining);
                }
                if kind != Invalid && kind != Punct && kind != Connector {
                    out.push(connector);
                }
            }
            Connector => push_lower(&mut out, previous, last, connector),
            Punct => {}
            _ => {
                if kind != Number {
                    if kind != Connector && kind != Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let number = word;
                (kind, word, remaining) = next_word(remaining);
                if kind != Alphabet {
                    push_lower(&mut out, Number, number, connector);
                    if kind != Connector && kind != Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lower(&mut out, Number, number, connector);
                while kind == Alphabet || kind == Number {
                    push_lower(&mut out, kind, word, connector);
                    (kind, word, remaining) = next_word(remaining);
                }
                if kind != Invalid && kind != Connector && kind != Punct {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, kind, word, connector);
    out
}

/// xstrings v1.5 `ToPascalCase` (Sprig's `camelcase`): connectors removed and the rune
/// after each one upper-cased, the rest of an upper-case run lowered (`GOLANG_IS_GREAT` is
/// `GolangIsGreat`); leading and doubled connectors are kept.
fn pascal_case(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    let mut first_rune_upper = false;
    let mut current = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_rune_upper = is_upper(c);
            current = Some(upper_rune(c));
            break;
        }
        out.push(c);
        current = Some(c);
    }
    let Some(mut r0) = current else {
        return out;
    };
    let rest: Vec<char> = chars.collect();
    if rest.is_empty() {
        out.push(r0);
        return out;
    }
    for c in rest {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_rune_upper = is_upper(r0);
            r0 = upper_rune(r0);
        } else {
            if first_rune_upper {
                if is_upper(r0) {
                    r0 = lower_rune(r0);
                } else {
                    first_rune_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("trim", &[s("  x  ")]), "x");
        assert_eq!(show("trimAll", &[s("$"), s("$5.00$")]), "5.00");
        assert_eq!(show("trimPrefix", &[s("-"), s("-hi")]), "hi");
        assert_eq!(show("trimSuffix", &[s("-"), s("hi-")]), "hi");
        assert_eq!(show("upper", &[s("abc")]), "ABC");
        assert_eq!(show("lower", &[s("ABC")]), "abc");
        assert_eq!(show("title", &[s("hello world")]), "Hello World");
        assert_eq!(show("untitle", &[s("Hello World")]), "hello world");
        assert_eq!(show("repeat", &[i(3), s("ab")]), "ababab");
        assert_eq!(show("substr", &[i(1), i(3), s("hello")]), "el");
        assert_eq!(show("nospace", &[s("a b c")]), "abc");
        assert_eq!(show("trunc", &[i(3), s("hello")]), "hel");
        assert_eq!(show("trunc", &[i(-3), s("hello")]), "llo");
        assert_eq!(show("abbrev", &[i(5), s("hello world")]), "he...");
        assert_eq!(
            show("abbrevboth", &[i(5), i(10), s("1234 5678 9123")]),
            "...5678..."
        );
        assert_eq!(show("initials", &[s("First Try")]), "FT");
        assert_eq!(
            show("wrap", &[i(5), s("hello world again")]),
            "hello\nworld\nagain"
        );
        assert_eq!(
            show("wrapWith", &[i(5), s("\t"), s("hello world")]),
            "hello\tworld"
        );
        assert_eq!(show("contains", &[s("cat"), s("catch")]), "true");
        assert_eq!(show("hasPrefix", &[s("ca"), s("cat")]), "true");
        assert_eq!(show("hasSuffix", &[s("at"), s("cat")]), "true");
        assert_eq!(show("squote", &[s("a")]), "'a'");
        assert_eq!(show("cat", &[s("a"), i(1), Value::Nil, s("b")]), "a 1 b");
        assert_eq!(show("indent", &[i(2), s("a\nb")]), "  a\n  b");
        assert_eq!(show("nindent", &[i(2), s("a\nb")]), "\n  a\n  b");
        assert_eq!(show("replace", &[s(" "), s("-"), s("a b c")]), "a-b-c");
        assert_eq!(show("plural", &[s("one"), s("many"), i(2)]), "many");
        assert_eq!(show("snakecase", &[s("FirstName")]), "first_name");
        assert_eq!(show("camelcase", &[s("http_server")]), "HttpServer");
        assert_eq!(show("kebabcase", &[s("FirstName")]), "first-name");
        assert_eq!(show("swapcase", &[s("This Is")]), "tHIS iS");
        assert_eq!(show("splitList", &[s(","), s("a,b")]), "[a b]");
        assert_eq!(show("split", &[s("$"), s("a$b")]), "map[_0:a _1:b]");
        assert_eq!(
            show("join", &[s("-"), list(&[i(1), s("a"), i(2)])]),
            "1-a-2"
        );
        assert_eq!(show("shuffle", &[s("")]), "");
    }

    #[test]
    fn quote_skips_nils() {
        // snippets.yaml: {{ quote "a" 1 .Values.n }} => "a" "1" (needs gofmt::quote).
        assert_eq!(show("quote", &[s("a"), i(1), Value::Nil]), "\"a\" \"1\"");
        assert_eq!(show("quote", &[]), "");
    }

    #[test]
    fn xstrings_case_conversions() {
        // Samples from xstrings v1.5.0's doc comments.
        for (input, snake) in [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
            ("http2xx", "http_2xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
        ] {
            assert_eq!(show("snakecase", &[s(input)]), snake, "{input}");
        }
        assert_eq!(show("kebabcase", &[s("HTTP20xOK")]), "http-20x-ok");
        for (input, pascal) in [
            ("some_words", "SomeWords"),
            ("http_server", "HttpServer"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("some words", "SomeWords"),
            ("GOLANG_IS_GREAT", "GolangIsGreat"),
        ] {
            assert_eq!(show("camelcase", &[s(input)]), pascal, "{input}");
        }
    }

    #[test]
    fn go_edge_cases() {
        // strings.Split with an empty separator splits into runes.
        assert_eq!(show("splitList", &[s(""), s("abc")]), "[a b c]");
        assert_eq!(
            show("splitn", &[s("/"), i(2), s("a/b/c")]),
            "map[_0:a _1:b/c]"
        );
        assert_eq!(show("splitList", &[s(","), s("")]), "[]");
        // Sprig docs: substr with a negative start slices from 0.
        assert_eq!(show("substr", &[i(-1), i(2), s("hello")]), "he");
        assert_eq!(show("substr", &[i(2), i(-1), s("hello")]), "llo");
        assert_eq!(
            error("substr", &[i(3), i(1), s("hello")]),
            "runtime error: slice bounds out of range [3:1]"
        );
        assert_eq!(
            error("repeat", &[i(-1), s("a")]),
            "strings: negative Repeat count"
        );
        // goutils: abbreviation widths below 4 leave the string.
        assert_eq!(show("abbrev", &[i(3), s("hello world")]), "hello world");
        assert_eq!(
            show("abbrevboth", &[i(5), i(6), s("1234 5678 9123")]),
            "1234 5678 9123"
        );
        assert_eq!(
            show("title", &[s("o'neil is_here x-y")]),
            "O'Neil Is_here X-Y"
        );
        assert_eq!(show("wrap", &[i(3), s("abcdef gh")]), "abcdef\ngh");
        assert_eq!(show("wrapWith", &[i(3), s("|"), s("abcdef")]), "abc|def");
        assert_eq!(show("indent", &[i(2), s("a\n\nb")]), "  a\n  \n  b");
        assert_eq!(show("join", &[s(","), s("x")]), "x");
        assert_eq!(show("squote", &[Value::Nil, f(1.5)]), "'1.5'");
        for (name, check) in [
            (
                "randAlphaNum",
                (|c: char| c.is_ascii_alphanumeric()) as fn(char) -> bool,
            ),
            ("randAlpha", |c: char| c.is_ascii_alphabetic()),
            ("randNumeric", |c: char| c.is_ascii_digit()),
            ("randAscii", |c: char| (' '..='~').contains(&c)),
        ] {
            let out = show(name, &[i(40)]);
            assert_eq!(out.len(), 40);
            assert!(out.chars().all(check), "{name}: {out}");
        }
        assert_eq!(show("randAlphaNum", &[i(-1)]), "");
        let mut shuffled: Vec<char> = show("shuffle", &[s("abcdef")]).chars().collect();
        shuffled.sort_unstable();
        assert_eq!(shuffled.into_iter().collect::<String>(), "abcdef");
    }
}
