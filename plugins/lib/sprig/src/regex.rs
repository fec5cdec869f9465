//! Regular expressions with Go's RE2 semantics on the `regex` crate: Perl classes (`\d`,
//! `\w`, `\s`, `\b`) are ASCII-only as in Go, `[` inside a class is literal, `FindAll` and
//! `Split` skip an empty match right after a previous match as Go does, replacement
//! templates expand `$1`/`${name}` by Go's rules, and compile errors are worded like Go's.
//!
//! Patterns are matched with `regex-lite` where it matches as Go does (see [`GoRegex`]):
//! every render starts from a fresh component instance, so each pattern a chart uses is
//! compiled again per render, and `regex` spent 0.1–0.3 ms building each one.

use std::cell::OnceCell;
use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg_int, arg_str};
use capstan_gotmpl::value::Value;

use crate::values::string_list;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("regexMatch", 2, false, |args| {
        let matched =
            compile(arg_str(args, 0)?).map(|re| re.is_match(arg_str(args, 1).unwrap_or("")));
        Ok(Value::Bool(matched.unwrap_or(false)))
    });
    funcs.add("mustRegexMatch", 2, false, |args| {
        let re = compile(arg_str(args, 0)?).map_err(FuncError::new)?;
        Ok(Value::Bool(re.is_match(arg_str(args, 1)?)))
    });
    for (name, must) in [("regexFindAll", false), ("mustRegexFindAll", true)] {
        funcs.add(name, 3, false, move |args| {
            let re = compile_for(arg_str(args, 0)?, must)?;
            let (text, n) = (arg_str(args, 1)?, arg_int(args, 2)?);
            let found = find_all(&re, text, n)
                .into_iter()
                .map(|(a, b)| text[a..b].to_owned());
            Ok(string_list(found))
        });
    }
    for (name, must) in [("regexFind", false), ("mustRegexFind", true)] {
        funcs.add(name, 2, false, move |args| {
            let re = compile_for(arg_str(args, 0)?, must)?;
            let text = arg_str(args, 1)?;
            Ok(Value::from(
                re.find_at(text, 0)
                    .map_or("", |(start, end)| &text[start..end]),
            ))
        });
    }
    for (name, must) in [("regexReplaceAll", false), ("mustRegexReplaceAll", true)] {
        funcs.add(name, 3, false, move |args| {
            let re = compile_for(arg_str(args, 0)?, must)?;
            let (text, template) = (arg_str(args, 1)?, arg_str(args, 2)?);
            Ok(Value::from(replace_all(&re, text, |groups, out| {
                expand(&re, text, groups, template, out)
            })))
        });
    }
    for (name, must) in [
        ("regexReplaceAllLiteral", false),
        ("mustRegexReplaceAllLiteral", true),
    ] {
        funcs.add(name, 3, false, move |args| {
            let re = compile_for(arg_str(args, 0)?, must)?;
            let (text, literal) = (arg_str(args, 1)?, arg_str(args, 2)?);
            Ok(Value::from(replace_all(&re, text, |_, out| {
                out.push_str(literal)
            })))
        });
    }
    for (name, must) in [("regexSplit", false), ("mustRegexSplit", true)] {
        funcs.add(name, 3, false, move |args| {
            let re = compile_for(arg_str(args, 0)?, must)?;
            let (text, n) = (arg_str(args, 1)?, arg_int(args, 2)?);
            Ok(string_list(split(&re, arg_str(args, 0)?, text, n)))
        });
    }
    funcs.add("regexQuoteMeta", 1, false, |args| {
        Ok(Value::from(quote_meta(arg_str(args, 0)?)))
    });
}

/// Compile for a `must` function (Go's compile error) or a plain one (`MustCompile`'s panic).
fn compile_for(pattern: &str, must: bool) -> Result<Rc<GoRegex>, FuncError> {
    compile(pattern).map_err(|e| {
        if must {
            FuncError::new(e)
        } else {
            FuncError::new(format!("regexp: Compile({}): {e}", backquote(pattern)))
        }
    })
}

/// Go's `regexp.quote`: backquoted when possible, else `strconv.Quote`.
fn backquote(s: &str) -> String {
    if s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !c.is_control()))
    {
        format!("`{s}`")
    } else {
        capstan_gotmpl::gofmt::quote(s)
    }
}

/// Compiled patterns kept per thread: charts call the same few patterns once per value,
/// and compiling dominates those calls. Bounded so hostile templates cannot grow it.
const COMPILED_CACHE_ENTRIES: usize = 256;

thread_local! {
    // Shared, not cloned: a cloned `Regex` starts with an empty matching cache of its own,
    // and building that again on every call cost as much as the match.
    static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Rc<GoRegex>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Compile a Go regular expression; the error is worded as Go's `regexp.Compile` would.
pub fn compile(pattern: &str) -> Result<Rc<GoRegex>, String> {
    if let Some(re) = COMPILED.with(|cache| cache.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let translated = translate(pattern)?;
    let re = Rc::new(GoRegex::new(pattern, translated)?);
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= COMPILED_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), re.clone());
    });
    Ok(re)
}

/// Texts longer than this are searched with `regex` (built then, once per pattern), whose
/// automata search in linear time with a small constant; `regex-lite`'s backtracker and
/// Pike VM are linear too, but tens of times slower per byte.
const LITE_TEXT_BYTES: usize = 4096;

/// A compiled Go pattern, on two engines with the same leftmost-first semantics.
/// `regex-lite` builds a pattern in microseconds where `regex` takes 0.1–0.3 ms, and
/// matches as Go does whenever the pattern asks for no Unicode-aware feature it lacks:
/// its case-insensitive matching is ASCII-only, and it has no `\p{..}` classes; Perl
/// classes and `\b`, ASCII in Go, are rewritten or ASCII in both. Such patterns, and
/// those it refuses, are built with `regex` at once; the others with `regex` only when a
/// long text is searched.
pub struct GoRegex {
    lite: Option<regex_lite::Regex>,
    /// The pattern in `regex`'s syntax, built on first need.
    translated: String,
    full: OnceCell<Option<regex::Regex>>,
}

/// Match positions of a pattern's groups (index 0: the whole match).
type Groups = Vec<Option<(usize, usize)>>;

impl GoRegex {
    fn new(pattern: &str, translated: String) -> Result<GoRegex, String> {
        let lite = lite_form(pattern, &translated).and_then(|p| regex_lite::Regex::new(&p).ok());
        let full = OnceCell::new();
        if lite.is_none() {
            let built = regex::Regex::new(&translated).map_err(|_| go_error(pattern))?;
            let _ = full.set(Some(built));
        }
        Ok(GoRegex {
            lite,
            translated,
            full,
        })
    }

    /// `regex`'s form, built now if it was not; `None` only if `regex` refuses a pattern
    /// `regex-lite` took (then `regex-lite` serves every text).
    fn full(&self) -> Option<&regex::Regex> {
        self.full
            .get_or_init(|| regex::Regex::new(&self.translated).ok())
            .as_ref()
    }

    /// The engine for `text`: `regex-lite` for short texts when the pattern has a lite
    /// form, `regex` otherwise.
    fn engine(&self, text: &str) -> Engine<'_> {
        match &self.lite {
            Some(lite) if text.len() <= LITE_TEXT_BYTES => Engine::Lite(lite),
            Some(lite) => self.full().map_or(Engine::Lite(lite), Engine::Full),
            None => match self.full() {
                Some(full) => Engine::Full(full),
                // Unreachable: without a lite form, `new` built the full one.
                None => Engine::Nothing,
            },
        }
    }

    /// Whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self.engine(text) {
            Engine::Lite(re) => re.is_match(text),
            Engine::Full(re) => re.is_match(text),
            Engine::Nothing => false,
        }
    }

    /// The first match starting the search at byte `start`.
    pub fn find_at(&self, text: &str, start: usize) -> Option<(usize, usize)> {
        match self.engine(text) {
            Engine::Lite(re) => re.find_at(text, start).map(|m| (m.start(), m.end())),
            Engine::Full(re) => re.find_at(text, start).map(|m| (m.start(), m.end())),
            Engine::Nothing => None,
        }
    }

    /// The groups of the first match starting the search at byte `start`.
    fn groups_at(&self, text: &str, start: usize) -> Option<Groups> {
        match self.engine(text) {
            Engine::Lite(re) => re
                .captures_at(text, start)
                .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect()),
            Engine::Full(re) => re
                .captures_at(text, start)
                .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect()),
            Engine::Nothing => None,
        }
    }

    /// The index of the group called `name`.
    fn group_named(&self, name: &str) -> Option<usize> {
        match (&self.lite, self.full.get()) {
            (Some(lite), _) => lite.capture_names().position(|n| n == Some(name)),
            (None, Some(Some(full))) => full.capture_names().position(|n| n == Some(name)),
            _ => None,
        }
    }
}

/// The engine a search runs on.
enum Engine<'r> {
    Lite(&'r regex_lite::Regex),
    Full(&'r regex::Regex),
    Nothing,
}

/// The pattern in `regex-lite`'s syntax when it matches there as Go does: no flag groups
/// (`(?i)` folds only ASCII there), no Unicode classes (`\p`, `\P`, which it lacks);
/// `\b` and `\B` are ASCII in both Go and `regex-lite`.
fn lite_form(pattern: &str, translated: &str) -> Option<String> {
    let mut rest = pattern;
    while let Some(at) = rest.find('(') {
        let after = &rest[at + 1..];
        if let Some(group) = after.strip_prefix('?')
            && !(group.starts_with(':') || group.starts_with("P<") || group.starts_with('<'))
        {
            return None;
        }
        rest = after;
    }
    if pattern.contains("\\p") || pattern.contains("\\P") {
        return None;
    }
    Some(
        translated
            .replace("(?-u:\\b)", "\\b")
            .replace("(?-u:\\B)", "\\B"),
    )
}

/// The repetition `{n}`, `{n,}` or `{n,m}` at the start of `chars`: its length and bounds.
fn parse_repeat(chars: &[char]) -> Option<(usize, u32, Option<u32>)> {
    let close = chars.iter().position(|c| *c == '}')?;
    let body: String = chars[1..close].iter().collect();
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().unwrap_or(u32::MAX))
    };
    let (min, max) = match body.split_once(',') {
        None => {
            let n = number(&body)?;
            (n, Some(n))
        }
        Some((min, "")) => (number(min)?, None),
        Some((min, max)) => (number(min)?, Some(number(max)?)),
    };
    Some((close + 1, min, max))
}

/// Rewrite Go syntax into the `regex` crate's where they differ, and reject what Go rejects
/// but the crate accepts (stacked repetitions, counts above 1000).
fn translate(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let text = |from: usize, to: usize| chars[from..to].iter().collect::<String>();
    let error =
        |code: &str, fragment: String| format!("error parsing regexp: {code}: `{fragment}`");
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut class_start = false;
    let mut last_repeat: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let mut this_repeat = None;
        if c == '\\' && i + 1 < chars.len() {
            let next = chars[i + 1];
            // Inside a class the positive classes are written as their ranges (the same
            // set, and `regex-lite` has no nested classes); the negated ones stay nested.
            let replacement = match next {
                'd' if in_class => Some("0-9"),
                'w' if in_class => Some("0-9A-Za-z_"),
                's' if in_class => Some("\\t\\n\\f\\r "),
                'd' => Some("[0-9]"),
                'D' => Some("[^0-9]"),
                'w' => Some("[0-9A-Za-z_]"),
                'W' => Some("[^0-9A-Za-z_]"),
                's' => Some("[\\t\\n\\f\\r ]"),
                'S' => Some("[^\\t\\n\\f\\r ]"),
                'b' if !in_class => Some("(?-u:\\b)"),
                'B' if !in_class => Some("(?-u:\\B)"),
                _ => None,
            };
            class_start = false;
            if let Some(r) = replacement {
                out.push_str(r);
                i += 2;
            } else if next == 'Q' {
                // \Q...\E quotes everything up to \E (or the end).
                let start = i + 2;
                let end = (start..chars.len())
                    .find(|&k| chars[k] == '\\' && chars.get(k + 1) == Some(&'E'))
                    .unwrap_or(chars.len());
                out.push_str(&regex_syntax::escape(&text(start, end)));
                i = (end + 2).min(chars.len());
            } else if matches!(next, 'p' | 'P' | 'x') && chars.get(i + 2) == Some(&'{') {
                let end = (i + 2..chars.len())
                    .find(|&k| chars[k] == '}')
                    .map_or(chars.len(), |k| k + 1);
                out.push_str(&text(i, end));
                i = end;
            } else {
                out.push('\\');
                out.push(next);
                i += 2;
            }
            last_repeat = None;
            continue;
        }
        if in_class {
            if c == ']' && !class_start {
                in_class = false;
                out.push(c);
            } else if c == '[' && chars.get(i + 1) == Some(&':') {
                // A POSIX class such as [:alpha:] is copied whole.
                let close = (i + 2..chars.len().saturating_sub(1))
                    .find(|&k| chars[k] == ':' && chars[k + 1] == ']');
                match close {
                    Some(k) => {
                        out.push_str(&text(i, k + 2));
                        i = k + 2;
                        class_start = false;
                        continue;
                    }
                    None => out.push_str("\\["),
                }
            } else if matches!(c, '[' | '&' | '~') || (c == '-' && chars.get(i + 1) == Some(&'-')) {
                out.push('\\');
                out.push(c);
            } else if c == '^' && class_start {
                out.push(c);
                i += 1;
                continue;
            } else {
                out.push(c);
            }
            class_start = false;
            i += 1;
            continue;
        }
        let mut width = 1;
        match c {
            '[' => {
                in_class = true;
                class_start = true;
                out.push(c);
            }
            '*' | '+' | '?' => {
                this_repeat = Some(i);
                out.push(c);
            }
            '{' => match parse_repeat(&chars[i..]) {
                Some((len, min, max)) => {
                    if min > 1000 || max.is_some_and(|m| m > 1000 || m < min) {
                        return Err(error("invalid repeat count", text(i, i + len)));
                    }
                    this_repeat = Some(i);
                    out.push_str(&text(i, i + len));
                    width = len;
                }
                // Go reads a brace that does not start a repetition literally.
                None => out.push_str("\\{"),
            },
            _ => out.push(c),
        }
        if this_repeat.is_some() {
            // A lazy marker belongs to the repetition it follows.
            if chars.get(i + width) == Some(&'?') {
                out.push('?');
                width += 1;
            }
            if let Some(previous) = last_repeat {
                return Err(error(
                    "invalid nested repetition operator",
                    text(previous, i + width),
                ));
            }
        }
        last_repeat = this_repeat;
        i += width;
    }
    Ok(out)
}

/// Go's compile error for a pattern that failed, from the syntax error's kind and place.
fn go_error(pattern: &str) -> String {
    use regex_syntax::ast::ErrorKind;
    let mut parser = regex_syntax::ast::parse::Parser::new();
    let (code, fragment) = match parser.parse(pattern) {
        Err(e) => {
            let span = e.span();
            let at =
                |start: usize, end: usize| pattern.get(start..end).unwrap_or(pattern).to_owned();
            match e.kind() {
                ErrorKind::ClassUnclosed => {
                    ("missing closing ]", at(span.start.offset, pattern.len()))
                }
                ErrorKind::GroupUnclosed => ("missing closing )", pattern.to_owned()),
                ErrorKind::GroupUnopened => ("unexpected )", pattern.to_owned()),
                ErrorKind::EscapeUnrecognized => (
                    "invalid escape sequence",
                    at(span.start.offset, span.end.offset),
                ),
                ErrorKind::EscapeUnexpectedEof => {
                    ("trailing backslash at end of expression", String::new())
                }
                ErrorKind::RepetitionMissing => {
                    let end = span.end.offset.max(span.start.offset + 1);
                    (
                        "missing argument to repetition operator",
                        at(span.start.offset, end),
                    )
                }
                ErrorKind::ClassRangeInvalid => (
                    "invalid character class range",
                    at(span.start.offset, span.end.offset),
                ),
                ErrorKind::RepetitionCountInvalid
                | ErrorKind::RepetitionCountUnclosed
                | ErrorKind::RepetitionCountDecimalEmpty => (
                    "invalid repeat count",
                    at(span.start.offset, span.end.offset),
                ),
                ErrorKind::GroupNameDuplicate { .. } => (
                    "duplicate capture group name",
                    at(span.start.offset, span.end.offset),
                ),
                ErrorKind::GroupNameEmpty
                | ErrorKind::GroupNameInvalid
                | ErrorKind::GroupNameUnexpectedEof => (
                    "invalid named capture",
                    at(span.start.offset, pattern.len()),
                ),
                _ => (
                    "invalid or unsupported Perl syntax",
                    at(span.start.offset, span.end.offset),
                ),
            }
        }
        Ok(_) => ("invalid or unsupported Perl syntax", pattern.to_owned()),
    };
    format!("error parsing regexp: {code}: `{fragment}`")
}

/// Go's `FindAllStringIndex(s, n)`: up to `n` matches (all when negative), skipping an
/// empty match that abuts the previous match.
fn find_all(re: &GoRegex, text: &str, n: i64) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    if n == 0 {
        return found;
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let mut pos = 0;
    let mut previous_end: Option<usize> = None;
    while found.len() < limit && pos <= text.len() {
        let Some((start, end)) = re.find_at(text, pos) else {
            break;
        };
        let mut accept = true;
        if end == pos {
            if Some(start) == previous_end {
                accept = false;
            }
            pos += text[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = end;
        }
        previous_end = Some(end);
        if accept {
            found.push((start, end));
        }
    }
    found
}

/// Go's `ReplaceAllString`/`ReplaceAllLiteralString`: every match (as `FindAll` sees them)
/// replaced by what `write` appends.
fn replace_all(re: &GoRegex, text: &str, write: impl Fn(&Groups, &mut String)) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (start, end) in find_all(re, text, -1) {
        out.push_str(&text[last..start]);
        if let Some(groups) = re.groups_at(text, start) {
            write(&groups, &mut out);
        }
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// Go's `Regexp.Expand`: `$name`/`${name}` (longest run of letters, digits and `_`), `$$`
/// for `$`; an unknown group expands to nothing and a malformed `$` stays literal.
fn expand(re: &GoRegex, text: &str, groups: &Groups, template: &str, out: &mut String) {
    let mut rest = template;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        rest = &rest[dollar + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            out.push('$');
            rest = after;
            continue;
        }
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let (name, remaining) = if let Some(braced) = rest.strip_prefix('{') {
            match braced.find('}') {
                Some(close) if close > 0 && braced[..close].chars().all(is_name) => {
                    (&braced[..close], &braced[close + 1..])
                }
                _ => {
                    out.push('$');
                    continue;
                }
            }
        } else {
            let len = rest.find(|c: char| !is_name(c)).unwrap_or(rest.len());
            if len == 0 {
                out.push('$');
                continue;
            }
            (&rest[..len], &rest[len..])
        };
        rest = remaining;
        let index = match name.parse::<usize>() {
            Ok(index) => Some(index),
            Err(_) => re.group_named(name),
        };
        if let Some(Some((start, end))) = index.and_then(|i| groups.get(i)) {
            out.push_str(&text[*start..*end]);
        }
    }
    out.push_str(rest);
}

/// Go's `Regexp.Split`.
fn split(re: &GoRegex, pattern: &str, text: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !pattern.is_empty() && text.is_empty() {
        return vec![String::new()];
    }
    let mut parts = Vec::new();
    let (mut begin, mut end) = (0, 0);
    for (start, stop) in find_all(re, text, n) {
        if n > 0 && parts.len() as i64 == n - 1 {
            break;
        }
        end = start;
        if stop != 0 {
            parts.push(text[begin..end].to_owned());
        }
        begin = stop;
    }
    if end != text.len() {
        parts.push(text[begin..].to_owned());
    }
    parts
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("regexMatch", &[s("^[a-z]+$"), s("abc")]), "true");
        assert_eq!(
            show("regexFindAll", &[s("[2,4,6,8]"), s("123456789"), i(-1)]),
            "[2 4 6 8]"
        );
        assert_eq!(
            show("regexFind", &[s("[a-zA-Z][1-9]"), s("abcd1234")]),
            "d1"
        );
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("a(x*)b"), s("-ab-axxb-"), s("${1}W")]
            ),
            "-W-xxW-"
        );
        assert_eq!(
            show(
                "regexReplaceAllLiteral",
                &[s("a(x*)b"), s("-ab-axxb-"), s("${1}")]
            ),
            "-${1}-${1}-"
        );
        assert_eq!(show("regexSplit", &[s("z+"), s("pizza"), i(-1)]), "[pi a]");
        assert_eq!(show("regexQuoteMeta", &[s("1.2.3")]), "1\\.2\\.3");
    }

    #[test]
    fn patterns_from_real_charts() {
        // The most common regular expressions in the parity charts' templates.
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("(-?[^a-z\\d\\-])+-?"), s("My_App.v2"), s("-")]
            ),
            "-y-pp-v2"
        );
        assert_eq!(
            show("regexReplaceAllLiteral", &[s("\\W"), s("a-b.c"), s("_")]),
            "a_b_c"
        );
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("[^A-Za-z0-9]+$"), s("name--"), s("")]
            ),
            "name"
        );
        assert_eq!(
            show(
                "regexMatch",
                &[s("{(v[0-9])*[^}]*}}$"), s("{{ .Values.x }}")]
            ),
            "true"
        );
        assert_eq!(
            show("regexMatch", &[s("{(v[0-9])*[^}]*}}$"), s("plain")]),
            "false"
        );
        assert_eq!(
            show("regexFind", &[s("-r\\d+$|sha256:"), s("1.2.3-r4")]),
            "-r4"
        );
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("[^a-zA-Z0-9-_.]+"), s("a b/c_d-e.f"), s("")]
            ),
            "abc_d-e.f"
        );
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("@sha256:[a-f0-9]+"), s("img@sha256:abc1"), s("")]
            ),
            "img"
        );
        assert_eq!(
            show("regexReplaceAll", &[s("([A-Za-z])i"), s("Mi"), s("${1}")]),
            "M"
        );
        assert_eq!(show("regexMatch", &[s(":\\d+$"), s("host:80")]), "true");
        assert_eq!(
            show(
                "regexMatch",
                &[
                    s("^arn:(aws|aws-us-gov|aws-cn):iam::.*$"),
                    s("arn:aws:iam::1:role/x")
                ]
            ),
            "true"
        );
    }

    #[test]
    fn go_semantics() {
        // Go regexp docs: ReplaceAllString examples.
        assert_eq!(
            show("regexReplaceAll", &[s("a(x*)b"), s("-ab-axxb-"), s("$1W")]),
            "---"
        );
        assert_eq!(
            show("regexReplaceAll", &[s("a(x*)b"), s("-ab-axxb-"), s("T")]),
            "-T-T-"
        );
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("a(?P<x>x*)b"), s("-axb-"), s("[${x}$$]")]
            ),
            "-[x$]-"
        );
        // Go docs: Split examples.
        assert_eq!(
            show("regexSplit", &[s("a"), s("banana"), i(-1)]),
            "[b n n ]"
        );
        assert_eq!(show("regexSplit", &[s("a"), s("banana"), i(0)]), "[]");
        assert_eq!(show("regexSplit", &[s("a"), s("banana"), i(1)]), "[banana]");
        assert_eq!(show("regexSplit", &[s("z+"), s("pizza"), i(2)]), "[pi a]");
        assert_eq!(show("regexSplit", &[s(""), s("abc"), i(-1)]), "[a b c]");
        // An empty match right after a match is skipped (Go's allMatches): "", "aaa", "".
        assert_eq!(
            show("regexFindAll", &[s("a*"), s("baaab"), i(-1)]),
            "[ aaa ]"
        );
        assert_eq!(show("regexFindAll", &[s("\\d"), s("1٣2"), i(-1)]), "[1 2]");
        assert_eq!(show("regexMatch", &[s("\\w+"), s("é")]), "false");
        assert_eq!(show("regexMatch", &[s("[[]"), s("[")]), "true");
        assert_eq!(show("regexMatch", &[s("[[:alpha:]]+"), s("abc")]), "true");
        assert_eq!(
            show("regexFindAll", &[s("\\bx"), s("x ax x"), i(-1)]),
            "[x x]"
        );
        assert_eq!(show("regexMatch", &[s("[a"), s("a")]), "false");
        assert_eq!(
            error("mustRegexMatch", &[s("[a"), s("a")]),
            "error parsing regexp: missing closing ]: `[a`"
        );
        assert_eq!(
            error("regexFind", &[s("a(b"), s("a")]),
            "regexp: Compile(`a(b`): error parsing regexp: missing closing ): `a(b`"
        );
        assert_eq!(
            error("mustRegexFind", &[s("*a"), s("a")]),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            error("mustRegexFind", &[s("\\q"), s("a")]),
            "error parsing regexp: invalid escape sequence: `\\q`"
        );
        // Go's parser rejects stacked repetitions and counts above 1000, and reads a
        // brace that starts no repetition literally; \Q...\E quotes.
        assert_eq!(
            error("mustRegexMatch", &[s("a**"), s("a")]),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            error("mustRegexMatch", &[s("a*?+"), s("a")]),
            "error parsing regexp: invalid nested repetition operator: `*?+`"
        );
        assert_eq!(
            error("mustRegexMatch", &[s("x{1001}"), s("a")]),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(show("mustRegexMatch", &[s("^a{,3}$"), s("a{,3}")]), "true");
        assert_eq!(show("mustRegexMatch", &[s("a*?b"), s("aab")]), "true");
        assert_eq!(show("mustRegexMatch", &[s("(?:a*)*"), s("aa")]), "true");
        assert_eq!(show("regexFind", &[s("\\Q1.5\\E+"), s("x1.55")]), "1.55");
        assert_eq!(show("regexFind", &[s("\\p{Greek}+"), s("aαβ")]), "αβ");
    }

    /// Both engines of a pattern find the same matches and groups: for the patterns of the
    /// parity charts and Go's documentation, on short texts and on one long enough to be
    /// searched with `regex`. Patterns with flags or Unicode classes get no lite form.
    #[test]
    fn the_two_engines_agree() {
        use super::{GoRegex, LITE_TEXT_BYTES, translate};
        let patterns = [
            "(-?[^a-z\\d\\-])+-?",
            "\\W",
            "[^A-Za-z0-9]+$",
            "-r\\d+$",
            "^([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?$",
            "{(v[0-9]+)}",
            "a(?P<x>x*)b",
            "a*",
            "\\bx\\B",
            "[[:alpha:]]+\\s*",
            ".+é",
            "(a|ab)(c|bcd)(d*)",
        ];
        let texts = [
            "",
            "My_App.v2",
            "name--",
            "1.2.3-rc.1+build.5",
            "x ax x xx",
            "-ab-axxb-",
            "{v1} {v22}",
            "abcd héllo ünïcode é\nend",
        ];
        let long = texts.join(" ").repeat(LITE_TEXT_BYTES / 40);
        let groups_by = |full: bool, re: &GoRegex, text: &str| {
            let mut all = Vec::new();
            let mut pos = 0;
            while pos <= text.len() {
                let found = if full {
                    re.full().unwrap().captures_at(text, pos).map(|c| {
                        c.iter()
                            .map(|m| m.map(|m| (m.start(), m.end())))
                            .collect::<Vec<_>>()
                    })
                } else {
                    re.lite.as_ref().unwrap().captures_at(text, pos).map(|c| {
                        c.iter()
                            .map(|m| m.map(|m| (m.start(), m.end())))
                            .collect::<Vec<_>>()
                    })
                };
                let Some(groups) = found else { break };
                let (start, end) = groups[0].unwrap();
                all.push(groups);
                pos = if end > start {
                    end
                } else {
                    end + text[end..].chars().next().map_or(1, char::len_utf8)
                };
            }
            all
        };
        for pattern in patterns {
            let re = GoRegex::new(pattern, translate(pattern).unwrap()).unwrap();
            assert!(re.lite.is_some(), "{pattern} has a lite form");
            for text in texts.iter().copied().chain([long.as_str()]) {
                assert_eq!(
                    groups_by(false, &re, text),
                    groups_by(true, &re, text),
                    "{pattern} on {text:.40?}"
                );
            }
        }
        for pattern in ["(?i)k", "(?s)a.b", "\\pL+", "\\p{Greek}"] {
            let re = GoRegex::new(pattern, translate(pattern).unwrap()).unwrap();
            assert!(re.lite.is_none(), "{pattern} has no lite form");
        }
        // Go folds case by Unicode's simple folding: the Kelvin sign matches `k`.
        assert_eq!(show("regexMatch", &[s("(?i)k"), s("\u{212A}")]), "true");
        // A long text is searched by `regex`, with the same result as a short one.
        let long_name = format!("{}--", "a".repeat(LITE_TEXT_BYTES));
        assert_eq!(
            show(
                "regexReplaceAll",
                &[s("[^A-Za-z0-9]+$"), s(&long_name), s("")]
            ),
            "a".repeat(LITE_TEXT_BYTES)
        );
    }
}
