//! Sprig's regular-expression functions with Go's `regexp` semantics. A pattern is read
//! by [`syntax`], Go's RE2 grammar written out (errors word for word), and handed to the
//! engines in a form they cannot read otherwise; matches are then walked as Go walks them:
//! `FindAll` and `Split` skip an empty match right after a previous match, `ReplaceAll`
//! keeps Go's own loop, and replacement templates expand `$1`/`${name}` by Go's rules.
//!
//! Short texts are matched with `regex-lite` (see [`GoRegex`]): every render starts from a
//! fresh component instance, so each pattern a chart uses is compiled again per render,
//! and `regex` spent 0.1–0.3 ms building each one.

pub mod syntax;

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
    // Go's strconv.CanBackquote: no backquote, no byte-order mark, no ASCII control
    // character but tab (C1 controls, encoded on two bytes, are fine).
    if s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !(c < ' ' || c == '\x7f')))
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
    let re = Rc::new(GoRegex::new(pattern)?);
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

/// A compiled Go pattern, on two engines with the same leftmost-first semantics, both
/// given the pattern as [`syntax`] read it (classes as code-point ranges, case folding
/// and Go's Unicode tables already applied), so neither interprets Go's syntax itself.
/// `regex-lite` builds a pattern in microseconds where `regex` takes 0.1–0.3 ms; `regex`
/// is built only when a long text is searched, or when `regex-lite` refuses the pattern
/// (nesting or size beyond its limits).
pub struct GoRegex {
    lite: Option<regex_lite::Regex>,
    /// The pattern in `regex`'s syntax, built on first need.
    translated: String,
    full: OnceCell<Option<regex::Regex>>,
    /// The names of the groups (index 0: the whole match), as Go numbers them.
    group_names: Vec<Option<String>>,
}

/// Match positions of a pattern's groups (index 0: the whole match).
type Groups = Vec<Option<(usize, usize)>>;

/// How deep the emitted form may nest in `regex`: Go allows a tree 1000 high, and the
/// emitted form adds a group for each repetition and alternation.
const NEST_LIMIT: u32 = 2100;
/// How deep it may nest in `regex-lite`, whose parser recurses (a component's stack is
/// small); deeper patterns are matched with `regex`, whose parser does not.
const LITE_NEST_LIMIT: u32 = 250;
/// The compiled size `regex` may reach: Go's own limit counts instructions, not bytes,
/// and admits patterns such as `\pL{500}` past `regex`'s default of 10 MiB.
const SIZE_LIMIT: usize = 256 << 20;

impl GoRegex {
    /// Compile a Go pattern; the error is Go's.
    pub fn new(pattern: &str) -> Result<GoRegex, String> {
        let parsed = syntax::parse(pattern)?;
        let lite_pattern = syntax::emit(&parsed.tree, syntax::Dialect::Lite);
        let translated = syntax::emit(&parsed.tree, syntax::Dialect::Full);
        let lite = regex_lite::RegexBuilder::new(&lite_pattern)
            .nest_limit(LITE_NEST_LIMIT)
            .build()
            .ok();
        let full = OnceCell::new();
        if lite.is_none() {
            // Go accepted the pattern and neither engine can hold it: say so as Go says
            // a pattern is too large.
            let built = build_full(&translated)
                .map_err(|_| syntax::error("expression too large", pattern))?;
            let _ = full.set(Some(built));
        }
        Ok(GoRegex {
            lite,
            translated,
            full,
            group_names: parsed.group_names,
        })
    }

    /// `regex`'s form, built now if it was not; `None` only if `regex` refuses a pattern
    /// `regex-lite` took (then `regex-lite` serves every text).
    fn full(&self) -> Option<&regex::Regex> {
        self.full
            .get_or_init(|| build_full(&self.translated).ok())
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

    /// The groups named `name`, in order.
    fn groups_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.group_names
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.as_deref() == Some(name))
            .map(|(i, _)| i)
    }
}

/// Where the two engines of `pattern` disagree on one of `texts` (the groups of every
/// match from each position), or `None` when they agree; for the differential tests,
/// which compare both engines whatever the texts' length. `Err` when the pattern does not
/// compile.
pub fn engines_disagree(pattern: &str, texts: &[&str]) -> Result<Option<String>, String> {
    let re = GoRegex::new(pattern)?;
    let (Some(lite), Some(full)) = (re.lite.as_ref(), re.full()) else {
        return Ok(None);
    };
    for text in texts {
        let mut pos = 0;
        while pos <= text.len() {
            let by_lite = lite.captures_at(text, pos).map(|c| {
                c.iter()
                    .map(|m| m.map(|m| (m.start(), m.end())))
                    .collect::<Groups>()
            });
            let by_full = full.captures_at(text, pos).map(|c| {
                c.iter()
                    .map(|m| m.map(|m| (m.start(), m.end())))
                    .collect::<Groups>()
            });
            if by_lite != by_full {
                return Ok(Some(format!(
                    "on {text:?} from byte {pos}: regex-lite {by_lite:?}, regex {by_full:?}"
                )));
            }
            pos += text[pos..].chars().next().map_or(1, char::len_utf8);
        }
    }
    Ok(None)
}

/// `regex`'s form of an emitted pattern.
fn build_full(translated: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(translated)
        .nest_limit(NEST_LIMIT)
        .size_limit(SIZE_LIMIT)
        .build()
}

/// The engine a search runs on.
enum Engine<'r> {
    Lite(&'r regex_lite::Regex),
    Full(&'r regex::Regex),
    Nothing,
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

/// Go's `ReplaceAllString`/`ReplaceAllLiteralString`, in Go's own loop: each match found
/// from the search position is replaced by what `write` appends, except an empty match
/// right after the previous match; the search then moves past the match, and at least one
/// character on.
fn replace_all(re: &GoRegex, text: &str, write: impl Fn(&Groups, &mut String)) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last_match_end = 0;
    let mut search = 0;
    while search <= text.len() {
        let Some(groups) = re.groups_at(text, search) else {
            break;
        };
        let Some(Some((start, end))) = groups.first().copied() else {
            break;
        };
        out.push_str(&text[last_match_end..start]);
        if end > last_match_end || start == 0 {
            write(&groups, &mut out);
        }
        last_match_end = end;
        let width = text[search..].chars().next().map_or(0, char::len_utf8);
        search = if search + width > end {
            search + width
        } else if search + 1 > end {
            search + 1
        } else {
            end
        };
    }
    out.push_str(&text[last_match_end..]);
    out
}

/// Go's `Regexp.Expand`: `$$` is `$`; `$name` or `${name}` (letters, digits and `_`) is
/// the group numbered `name` when it is a number without leading zeros, else the first
/// group of that name that matched; a malformed `$` stays literal.
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
        let Some((name, remaining)) = template_name(rest) else {
            out.push('$');
            continue;
        };
        rest = remaining;
        let matched = |i: usize| groups.get(i).copied().flatten();
        let span = match group_number(name) {
            Some(number) => matched(number),
            None => re.groups_named(name).find_map(matched),
        };
        if let Some((start, end)) = span {
            out.push_str(&text[start..end]);
        }
    }
    out.push_str(rest);
}

/// The name after a `$` in a replacement template and the rest, as Go's `extract` reads
/// it: a run of Unicode letters, decimal digits and `_`, braced or not.
fn template_name(s: &str) -> Option<(&str, &str)> {
    let (braced, s) = match s.strip_prefix('{') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let len = s
        .char_indices()
        .find(|&(_, c)| !(c == '_' || syntax::is_letter_or_digit(c)))
        .map_or(s.len(), |(i, _)| i);
    if len == 0 {
        return None;
    }
    let (name, rest) = s.split_at(len);
    if braced {
        return Some((name, rest.strip_prefix('}')?));
    }
    Some((name, rest))
}

/// A template name read as a group number: decimal, no leading zero, below 10^8 or so.
fn group_number(name: &str) -> Option<usize> {
    if name.len() > 1 && name.starts_with('0') {
        return None;
    }
    let mut number: usize = 0;
    for b in name.bytes() {
        if !b.is_ascii_digit() || number >= 100_000_000 {
            return None;
        }
        number = number * 10 + usize::from(b - b'0');
    }
    Some(number)
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
        // A Perl class before `-` in a bracket starts no range (stable/redis-ha's guard).
        assert_eq!(
            show("regexMatch", &[s("^[\\w-\\.]+$"), s("mymaster")]),
            "true"
        );
        assert_eq!(show("regexMatch", &[s("^[a\\w-\\.]+$"), s("x.y")]), "true");
    }

    /// Both engines of a pattern find the same matches and groups: for the patterns of the
    /// parity charts and Go's documentation, on short texts and on one long enough to be
    /// searched with `regex`. Flags and Unicode classes are resolved before either engine
    /// sees the pattern, so every pattern has both forms.
    #[test]
    fn the_two_engines_agree() {
        use super::{GoRegex, LITE_TEXT_BYTES};
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
            "(?i)k",
            "(?s)a.b",
            "\\pL+",
            "\\p{Greek}",
            "[\\w-\\.]+",
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
            let re = GoRegex::new(pattern).unwrap();
            assert!(re.lite.is_some(), "{pattern} has a lite form");
            for text in texts.iter().copied().chain([long.as_str()]) {
                assert_eq!(
                    groups_by(false, &re, text),
                    groups_by(true, &re, text),
                    "{pattern} on {text:.40?}"
                );
            }
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
