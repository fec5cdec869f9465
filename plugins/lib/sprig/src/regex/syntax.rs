//! Go's RE2 syntax (`regexp/syntax` as `regexp.Compile` uses it, with the `Perl` flags)
//! read into a tree whose character classes are resolved to code-point ranges, with Go's
//! compile errors word for word.
//!
//! Written by hand because no crate reads Go's dialect: the `regex` crates differ from it
//! in many small places (a Perl class next to `-` in a bracket, escapes they refuse or read
//! otherwise, capture names starting with a digit or repeated, `\p{..}` names and their
//! tables, what a repetition may follow, Go's limits). Reading the pattern once here and
//! writing each engine an unambiguous form of it (`emit`) leaves them nothing to read
//! their own way. The parser follows the grammar of Go's `parse.go`; the code is ours.

use std::sync::OnceLock;

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

/// The largest code point.
const MAX_RUNE: u32 = 0x10FFFF;
/// Go's limit on counted repetitions (`x{1001}` is refused).
const MAX_REPEAT: u32 = 1000;
/// Go's limit on the height of the parse tree.
const MAX_HEIGHT: usize = 1000;
/// Go's limit on the compiled size (instructions of 40 bytes in 128 MiB).
const MAX_SIZE: u64 = (128 << 20) / 40;

/// A code-point set: sorted, disjoint, non-adjacent inclusive ranges.
pub type Ranges = Vec<(u32, u32)>;

/// A parsed Go regular expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Matches the empty string.
    Empty,
    /// One code point out of a set (a literal is a set of one, or its case-fold orbit).
    Class(Ranges),
    /// `^` in multi-line mode.
    BeginLine,
    /// `$` in multi-line mode.
    EndLine,
    /// `^` or `\A`.
    BeginText,
    /// `$` or `\z`.
    EndText,
    /// `\b` (ASCII).
    WordBoundary,
    /// `\B` (ASCII).
    NoWordBoundary,
    /// A capturing group; its index is its position among the groups.
    Capture(Box<Node>),
    /// A repetition, `max` `None` for unbounded.
    Repeat {
        sub: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
}

/// A parsed pattern: its tree and the names of its groups (index 0: the whole match).
#[derive(Debug)]
pub struct Parsed {
    pub tree: Node,
    pub group_names: Vec<Option<String>>,
}

/// Go's compile error: `error parsing regexp: <code>: `<expr>``.
pub fn error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

/// The flags a pattern can change with `(?flags)`.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    fold_case: bool,
    multi_line: bool,
    dot_nl: bool,
    non_greedy: bool,
}

/// The height of a node's tree and its compiled size as Go estimates them (`calcSize`),
/// kept beside each node as it is made, so a tree too deep or too large is refused before
/// anything walks it.
#[derive(Debug, Clone, Copy)]
struct Measure {
    height: usize,
    size: u64,
    /// Go's tree holds this node as one literal string (a run of literal characters).
    literal: bool,
}

const LEAF: Measure = Measure {
    height: 1,
    size: 1,
    literal: false,
};
const LITERAL: Measure = Measure {
    height: 1,
    size: 1,
    literal: true,
};

/// An open group on the parse stack.
struct Frame {
    /// The flags to restore at its `)`.
    saved: Flags,
    /// `Some(index)` for a capturing group.
    capture: Option<usize>,
    /// Alternatives finished so far (before a `|`).
    alternatives: Vec<(Node, Measure)>,
    /// The concatenation being read.
    concat: Vec<(Node, Measure)>,
}

impl Frame {
    fn new(saved: Flags, capture: Option<usize>) -> Frame {
        Frame {
            saved,
            capture,
            alternatives: Vec::new(),
            concat: Vec::new(),
        }
    }

    /// The group's expression once its `)` (or the end) is reached.
    fn finish(mut self) -> (Node, Measure) {
        let last = concat_of(std::mem::take(&mut self.concat));
        if self.alternatives.is_empty() {
            return last;
        }
        self.alternatives.push(last);
        let count = self.alternatives.len() as u64;
        let measure = combine(&self.alternatives, count - 1, |node| {
            matches!(node, Node::Alternate(_))
        });
        let nodes = self
            .alternatives
            .into_iter()
            .map(|(node, _)| node)
            .collect();
        (Node::Alternate(nodes), measure)
    }
}

/// The measure of a node made of `parts`, adding `extra` to their sizes. Go's tree folds
/// a part of the same kind (`flattened`) into its parent, so such a part adds no level.
fn combine(parts: &[(Node, Measure)], extra: u64, flattened: impl Fn(&Node) -> bool) -> Measure {
    let height = parts
        .iter()
        .map(|(node, m)| {
            if flattened(node) {
                m.height - 1
            } else {
                m.height
            }
        })
        .max()
        .unwrap_or(0);
    Measure {
        height: 1 + height,
        size: (parts.iter().map(|(_, m)| m.size).sum::<u64>() + extra).max(1),
        literal: false,
    }
}

fn concat_of(mut nodes: Vec<(Node, Measure)>) -> (Node, Measure) {
    match nodes.len() {
        0 => (Node::Empty, LEAF),
        1 => nodes.pop().unwrap_or((Node::Empty, LEAF)),
        _ => {
            let mut measure = combine(&nodes, 0, |node| matches!(node, Node::Concat(_)));
            // Go joins a run of literal characters into one literal string.
            if nodes.iter().all(|(_, m)| m.literal) {
                measure = Measure {
                    height: 1,
                    literal: true,
                    ..measure
                };
            }
            (
                Node::Concat(nodes.into_iter().map(|(node, _)| node).collect()),
                measure,
            )
        }
    }
}

/// The parser's state: the rest of the pattern and the stack of open groups.
struct Parser<'p> {
    whole: &'p str,
    flags: Flags,
    stack: Vec<Frame>,
    group_names: Vec<Option<String>>,
}

/// Parse `pattern` as Go's `regexp.Compile` does.
pub fn parse(pattern: &str) -> Result<Parsed, String> {
    let mut p = Parser {
        whole: pattern,
        flags: Flags::default(),
        stack: vec![Frame::new(Flags::default(), None)],
        group_names: vec![None],
    };
    let mut t = pattern;
    // The text from the last repetition operator on, while it is the last token read.
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' if t.as_bytes().get(1) == Some(&b'?') => t = p.perl_flags(t)?,
            '(' => {
                p.group_names.push(None);
                let index = p.group_names.len() - 1;
                p.stack.push(Frame::new(p.flags, Some(index)));
                t = &t[1..];
            }
            '|' => {
                let frame = p.top();
                let concat = concat_of(std::mem::take(&mut frame.concat));
                frame.alternatives.push(concat);
                if let Some((_, measure)) = frame.alternatives.last() {
                    let measure = *measure;
                    p.check_limits(measure)?;
                }
                t = &t[1..];
            }
            ')' => {
                p.right_paren()?;
                t = &t[1..];
            }
            '^' => {
                let node = if p.flags.multi_line {
                    Node::BeginLine
                } else {
                    Node::BeginText
                };
                p.push(node);
                t = &t[1..];
            }
            '$' => {
                let node = if p.flags.multi_line {
                    Node::EndLine
                } else {
                    Node::EndText
                };
                p.push(node);
                t = &t[1..];
            }
            '.' => {
                let node = if p.flags.dot_nl {
                    Node::Class(vec![(0, MAX_RUNE)])
                } else {
                    Node::Class(vec![(0, 9), (11, MAX_RUNE)])
                };
                p.push(node);
                t = &t[1..];
            }
            '[' => t = p.class(t)?,
            '*' | '+' | '?' => {
                let (min, max) = match c {
                    '*' => (0, None),
                    '+' => (1, None),
                    _ => (0, Some(1)),
                };
                let after = p.repeat(min, max, t, &t[1..], last_repeat)?;
                repeat = Some(t);
                t = after;
            }
            '{' => match parse_repeat(t) {
                None => {
                    // Not a repetition: the brace is a literal.
                    p.literal('{');
                    t = &t[1..];
                }
                Some((min, max, after)) => {
                    let limit = i64::from(MAX_REPEAT);
                    if min < 0 || min > limit || max > limit || (max >= 0 && min > max) {
                        return Err(error("invalid repeat count", &t[..t.len() - after.len()]));
                    }
                    // In range of u32 now: 0 <= min <= max <= 1000, or max unbounded.
                    let max = u32::try_from(max).ok();
                    let min = u32::try_from(min).unwrap_or(0);
                    let after = p.repeat(min, max, t, after, last_repeat)?;
                    repeat = Some(t);
                    t = after;
                }
            },
            '\\' => t = p.escape(t)?,
            _ => {
                p.literal(c);
                t = &t[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    if p.stack.len() != 1 {
        return Err(error("missing closing )", pattern));
    }
    let (tree, measure) = p.stack.pop().map_or((Node::Empty, LEAF), Frame::finish);
    p.check_limits(measure)?;
    Ok(Parsed {
        tree,
        group_names: p.group_names,
    })
}

/// `{min}`, `{min,}` or `{min,max}` at the start of `s`: the bounds (-1 for a number too
/// large to read; `max` -1 also when unbounded, and then `min` -1 when `max` was too large)
/// and the rest; `None` when `s` does not start with one, so the brace is a literal.
fn parse_repeat(s: &str) -> Option<(i64, i64, &str)> {
    let s = s.strip_prefix('{')?;
    let (mut min, s) = parse_int(s)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (min, s),
        Some(rest) if rest.starts_with('}') => (-1, rest),
        Some(rest) => {
            let (max, rest) = parse_int(rest)?;
            if max < 0 {
                min = -1;
            }
            (max, rest)
        }
    };
    Some((min, max, s.strip_prefix('}')?))
}

/// A decimal number without leading zeros at the start of `s` (-1 when it reaches 10^8),
/// and the rest.
fn parse_int(s: &str) -> Option<(i64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let mut n: i64 = 0;
    for b in s[..digits].bytes() {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(b - b'0');
    }
    Some((n, &s[digits..]))
}

impl<'p> Parser<'p> {
    fn top(&mut self) -> &mut Frame {
        if self.stack.is_empty() {
            self.stack.push(Frame::new(Flags::default(), None));
        }
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn push(&mut self, node: Node) {
        self.top().concat.push((node, LEAF));
    }

    /// Go's limits on a node just made: its height, and its compiled size.
    fn check_limits(&self, measure: Measure) -> Result<(), String> {
        if measure.height > MAX_HEIGHT {
            return Err(error("expression nests too deeply", self.whole));
        }
        if measure.size > MAX_SIZE {
            return Err(error("expression too large", self.whole));
        }
        Ok(())
    }

    /// A literal code point, folded to its case orbit under `(?i)`.
    fn literal(&mut self, c: char) {
        let ranges = vec![(c as u32, c as u32)];
        let node = if self.flags.fold_case {
            Node::Class(fold(&ranges))
        } else {
            Node::Class(ranges)
        };
        self.top().concat.push((node, LITERAL));
    }

    /// The last expression read, repeated; `before` starts at the operator and `after`
    /// follows it. Returns the rest after an optional lazy `?`.
    fn repeat(
        &mut self,
        min: u32,
        max: Option<u32>,
        before: &'p str,
        after: &'p str,
        last_repeat: Option<&'p str>,
    ) -> Result<&'p str, String> {
        let mut greedy = !self.flags.non_greedy;
        let mut after = after;
        if let Some(rest) = after.strip_prefix('?') {
            after = rest;
            greedy = !greedy;
        }
        if let Some(last) = last_repeat {
            return Err(error(
                "invalid nested repetition operator",
                &last[..last.len() - after.len()],
            ));
        }
        let operator = &before[..before.len() - after.len()];
        let Some((sub, sub_measure)) = self.top().concat.pop() else {
            return Err(error("missing argument to repetition operator", operator));
        };
        let node = Node::Repeat {
            sub: Box::new(sub),
            min,
            max,
            greedy,
        };
        let sub_size = sub_measure.size;
        let size = match (min, max) {
            (0, None) => 2 + sub_size,
            (min, None) => 1 + u64::from(min) * sub_size,
            (0, Some(1)) => 1 + sub_size,
            (min, Some(max)) => u64::from(max) * sub_size + u64::from(max - min),
        };
        let measure = Measure {
            height: sub_measure.height + 1,
            size: size.max(1),
            literal: false,
        };
        // Go checks the limits as each node is made, so a repetition too large to compile
        // is refused as such before its count is judged.
        self.check_limits(measure)?;
        let counted = operator.starts_with('{');
        if counted && (min >= 2 || max.is_some_and(|m| m >= 2)) && !repeat_is_valid(&node, 1000) {
            return Err(error("invalid repeat count", operator));
        }
        self.top().concat.push((node, measure));
        Ok(after)
    }

    fn right_paren(&mut self) -> Result<(), String> {
        if self.stack.len() < 2 {
            return Err(error("unexpected )", self.whole));
        }
        let Some(frame) = self.stack.pop() else {
            return Err(error("unexpected )", self.whole));
        };
        self.flags = frame.saved;
        let capture = frame.capture;
        let (node, measure) = frame.finish();
        let made = match capture {
            Some(_) => (
                Node::Capture(Box::new(node)),
                Measure {
                    height: measure.height + 1,
                    size: measure.size + 2,
                    literal: false,
                },
            ),
            None => (node, measure),
        };
        self.check_limits(made.1)?;
        self.top().concat.push(made);
        Ok(())
    }

    /// `(?flags)`, `(?flags:`, `(?P<name>` or `(?<name>` at the start of `s`.
    fn perl_flags(&mut self, s: &'p str) -> Result<&'p str, String> {
        let bytes = s.as_bytes();
        let starts_with_p = bytes.len() > 4 && bytes[2] == b'P' && bytes[3] == b'<';
        let starts_with_name = bytes.len() > 3 && bytes[2] == b'<';
        if starts_with_p || starts_with_name {
            let name_start = if starts_with_p { 4 } else { 3 };
            let Some(end) = s.find('>') else {
                return Err(error("invalid named capture", s));
            };
            let name = &s[name_start..end];
            if name.is_empty() || !name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()) {
                return Err(error("invalid named capture", &s[..=end]));
            }
            self.group_names.push(Some(name.to_owned()));
            let index = self.group_names.len() - 1;
            self.stack.push(Frame::new(self.flags, Some(index)));
            return Ok(&s[end + 1..]);
        }
        let mut flags = self.flags;
        let mut negated = false;
        let mut saw_flag = false;
        let mut t = &s[2..];
        while let Some(c) = t.chars().next() {
            t = &t[c.len_utf8()..];
            let set = !negated;
            match c {
                'i' => flags.fold_case = set,
                'm' => flags.multi_line = set,
                's' => flags.dot_nl = set,
                'U' => flags.non_greedy = set,
                '-' if !negated => {
                    negated = true;
                    saw_flag = false;
                    continue;
                }
                // After a `-`, at least one flag must follow.
                ':' | ')' if !negated || saw_flag => {
                    if c == ':' {
                        self.stack.push(Frame::new(self.flags, None));
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
            saw_flag = true;
        }
        Err(error(
            "invalid or unsupported Perl syntax",
            &s[..s.len() - t.len()],
        ))
    }

    /// A backslash sequence outside a class at the start of `t`.
    fn escape(&mut self, t: &'p str) -> Result<&'p str, String> {
        let node = match t.as_bytes().get(1) {
            Some(b'A') => Some(Node::BeginText),
            Some(b'b') => Some(Node::WordBoundary),
            Some(b'B') => Some(Node::NoWordBoundary),
            Some(b'z') => Some(Node::EndText),
            Some(b'C') => return Err(error("invalid escape sequence", &t[..2])),
            Some(b'Q') => {
                let (quoted, rest) = t[2..].split_once("\\E").unwrap_or((&t[2..], ""));
                for c in quoted.chars() {
                    self.literal(c);
                }
                return Ok(rest);
            }
            _ => None,
        };
        if let Some(node) = node {
            self.push(node);
            return Ok(&t[2..]);
        }
        if let Some((ranges, rest)) = self.unicode_class(t)? {
            self.push(Node::Class(ranges));
            return Ok(rest);
        }
        if let Some((ranges, rest)) = self.perl_class(t) {
            self.push(Node::Class(ranges));
            return Ok(rest);
        }
        let (c, rest) = parse_escape(t)?;
        self.literal(c);
        Ok(rest)
    }

    /// A class group (`\d`, `[:alpha:]`, …) as the current flags read it: folded before
    /// it is negated.
    fn group(&self, negated: bool, ranges: &[(u32, u32)]) -> Ranges {
        let ranges = if self.flags.fold_case {
            fold(ranges)
        } else {
            ranges.to_vec()
        };
        if negated { negate(&ranges) } else { ranges }
    }

    /// `\d`, `\D`, `\s`, `\S`, `\w`, `\W` at the start of `t`.
    fn perl_class(&self, t: &'p str) -> Option<(Ranges, &'p str)> {
        let letter = t.strip_prefix('\\')?.chars().next()?;
        let ranges: &[(u32, u32)] = match letter.to_ascii_lowercase() {
            'd' => &[(0x30, 0x39)],
            's' => &[(0x9, 0xa), (0xc, 0xd), (0x20, 0x20)],
            'w' => &[(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)],
            _ => return None,
        };
        Some((self.group(letter.is_ascii_uppercase(), ranges), &t[2..]))
    }

    /// `\pX`, `\p{Name}`, `\PX`, `\P{Name}`, `\p{^Name}` at the start of `t`.
    fn unicode_class(&self, t: &'p str) -> Result<Option<(Ranges, &'p str)>, String> {
        let mut negated = match t.as_bytes().get(..2) {
            Some(b"\\p") => false,
            Some(b"\\P") => true,
            _ => return Ok(None),
        };
        let after = &t[2..];
        let (sequence, mut name, rest) = match after.chars().next() {
            Some('{') => {
                let Some(end) = t.find('}') else {
                    return Err(error("invalid character class range", t));
                };
                (&t[..=end], &t[3..end], &t[end + 1..])
            }
            Some(c) => {
                let end = 2 + c.len_utf8();
                (&t[..end], &t[2..end], &t[end..])
            }
            None => (t, "", ""),
        };
        if let Some(rest) = name.strip_prefix('^') {
            negated = !negated;
            name = rest;
        }
        let Some((ranges, table_negated)) = unicode_table(name) else {
            return Err(error("invalid character class range", sequence));
        };
        Ok(Some((self.group(negated != table_negated, &ranges), rest)))
    }

    /// A bracketed class at the start of `s`.
    fn class(&mut self, s: &'p str) -> Result<&'p str, String> {
        let mut t = &s[1..];
        let mut negated = false;
        if let Some(rest) = t.strip_prefix('^') {
            negated = true;
            t = rest;
        }
        let mut class: Ranges = Vec::new();
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            if t.len() > 2
                && t.starts_with("[:")
                && let Some(end) = t[2..].find(":]")
            {
                let name = &t[..end + 4];
                let Some((group_negated, ranges)) = posix_group(name) else {
                    return Err(error("invalid character class range", name));
                };
                class.extend(self.group(group_negated, ranges));
                t = &t[end + 4..];
                continue;
            }
            if let Some((ranges, rest)) = self.unicode_class(t)? {
                class.extend(ranges);
                t = rest;
                continue;
            }
            if let Some((ranges, rest)) = self.perl_class(t) {
                class.extend(ranges);
                t = rest;
                continue;
            }
            let range_start = t;
            let (lo, rest) = class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (high, rest) = class_char(&t[1..], s)?;
                t = rest;
                if high < lo {
                    return Err(error(
                        "invalid character class range",
                        &range_start[..range_start.len() - t.len()],
                    ));
                }
                hi = high;
            }
            let range = [(lo as u32, hi as u32)];
            if self.flags.fold_case {
                class.extend(fold(&range));
            } else {
                class.extend(range);
            }
        }
        let class = clean(class);
        let class = if negated { negate(&class) } else { class };
        self.push(Node::Class(class));
        Ok(&t[1..])
    }
}

/// One character of a class (a plain one or an escape); `whole` is the class from its `[`,
/// named when the class never closes.
fn class_char<'t>(t: &'t str, whole: &str) -> Result<(char, &'t str), String> {
    match t.chars().next() {
        None => Err(error("missing closing ]", whole)),
        Some('\\') => parse_escape(t),
        Some(c) => Ok((c, &t[c.len_utf8()..])),
    }
}

/// A single-character escape at the start of `s` (which starts with `\`).
fn parse_escape(s: &str) -> Result<(char, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(error("trailing backslash at end of expression", ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| Err(error("invalid escape sequence", &s[..s.len() - t.len()]));
    let simple = match c {
        'a' => Some('\x07'),
        'f' => Some('\x0c'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\x0b'),
        _ => None,
    };
    if let Some(c) = simple {
        return Ok((c, t));
    }
    match c {
        // A single non-zero digit would be a backreference, which Go does not support.
        '1'..='7' if !t.starts_with(|d: char| ('0'..='7').contains(&d)) => invalid(t),
        '0'..='7' => {
            let mut value = c as u32 - '0' as u32;
            for _ in 1..3 {
                match t.as_bytes().first() {
                    Some(d @ b'0'..=b'7') => {
                        value = value * 8 + u32::from(d - b'0');
                        t = &t[1..];
                    }
                    _ => break,
                }
            }
            Ok((char::from_u32(value).unwrap_or('\0'), t))
        }
        'x' => {
            let Some(first) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[first.len_utf8()..];
            if first == '{' {
                let mut value: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(d) = t.chars().next() else {
                        return invalid(t);
                    };
                    t = &t[d.len_utf8()..];
                    if d == '}' {
                        break;
                    }
                    let Some(v) = d.to_digit(16) else {
                        return invalid(t);
                    };
                    value = value * 16 + v;
                    if value > MAX_RUNE {
                        return invalid(t);
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return invalid(t);
                }
                // A surrogate cannot be in a Rust string, so it can match nothing; Go
                // accepts it and matches nothing in valid UTF-8 either.
                return Ok((
                    char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER),
                    t,
                ));
            }
            let Some(second) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[second.len_utf8()..];
            match (first.to_digit(16), second.to_digit(16)) {
                (Some(x), Some(y)) => Ok((char::from_u32(x * 16 + y).unwrap_or('\0'), t)),
                _ => invalid(t),
            }
        }
        // Escaped punctuation is itself (letters and digits are refused above).
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, t)),
        _ => invalid(t),
    }
}

/// `[:name:]` or `[:^name:]`: whether it is negated and its ranges.
fn posix_group(name: &str) -> Option<(bool, &'static [(u32, u32)])> {
    let (negated, bare) = match name.strip_prefix("[:^") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("[:")?),
    };
    let ranges: &[(u32, u32)] = match bare.strip_suffix(":]")? {
        "alnum" => &[(0x30, 0x39), (0x41, 0x5a), (0x61, 0x7a)],
        "alpha" => &[(0x41, 0x5a), (0x61, 0x7a)],
        "ascii" => &[(0x0, 0x7f)],
        "blank" => &[(0x9, 0x9), (0x20, 0x20)],
        "cntrl" => &[(0x0, 0x1f), (0x7f, 0x7f)],
        "digit" => &[(0x30, 0x39)],
        "graph" => &[(0x21, 0x7e)],
        "lower" => &[(0x61, 0x7a)],
        "print" => &[(0x20, 0x7e)],
        "punct" => &[(0x21, 0x2f), (0x3a, 0x40), (0x5b, 0x60), (0x7b, 0x7e)],
        "space" => &[(0x9, 0xd), (0x20, 0x20)],
        "upper" => &[(0x41, 0x5a)],
        "word" => &[(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)],
        "xdigit" => &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
        _ => return None,
    };
    Some((negated, ranges))
}

/// Go's lookup key for a `\p{..}` name: first letter upper case, the others lower case,
/// without `_`, `-` and spaces.
fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')) {
        if out.is_empty() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// What a `\p{..}` name Go accepts stands for.
enum UnicodeName {
    Category(String),
    Script(String),
}

/// The names Go's `unicode` tables define (`tests/cluster/regex-oracle -names`), keyed as
/// Go looks them up: categories and scripts by their exact spelling, aliases by their
/// canonical form.
fn unicode_names() -> &'static std::collections::HashMap<String, UnicodeName> {
    static NAMES: OnceLock<std::collections::HashMap<String, UnicodeName>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names = std::collections::HashMap::new();
        for line in include_str!("go_unicode_names.txt").lines() {
            let Some((name, kind)) = line.split_once('\t') else {
                continue;
            };
            let entry = match kind.split_once(' ') {
                Some(("alias", category)) => (
                    canonical_name(name),
                    UnicodeName::Category(category.to_owned()),
                ),
                _ if kind == "script" => (name.to_owned(), UnicodeName::Script(name.to_owned())),
                _ => (name.to_owned(), UnicodeName::Category(name.to_owned())),
            };
            // An exact category or script spelling wins over an alias with the same key.
            names.entry(entry.0).or_insert(entry.1);
        }
        names
    })
}

/// The table a `\p{..}` name stands for and whether it is inverted, as Go's
/// `unicodeTable` answers; `None` when Go does not know the name.
fn unicode_table(name: &str) -> Option<(Ranges, bool)> {
    let key = canonical_name(name);
    let property = match key.as_str() {
        "Any" => return Some((vec![(0, MAX_RUNE)], false)),
        "Ascii" => return Some((vec![(0, 0x7f)], false)),
        "Assigned" => return Some((property_ranges("gc=Cn")?, true)),
        "Lc" => "gc=LC".to_owned(),
        _ => match unicode_names().get(&key)? {
            UnicodeName::Category(category) => format!("gc={category}"),
            UnicodeName::Script(script) => format!("sc={script}"),
        },
    };
    Some((property_ranges(&property)?, false))
}

/// The code points of a Unicode property, from `regex-syntax`'s tables.
fn property_ranges(property: &str) -> Option<Ranges> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&format!("\\p{{{property}}}"))
        .ok()?;
    match hir.kind() {
        regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(class)) => Some(
            class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
        ),
        _ => None,
    }
}

/// Whether `c` is a letter (category L) or a decimal digit (Nd), as Go's
/// `unicode.IsLetter` and `unicode.IsDigit` answer.
pub fn is_letter_or_digit(c: char) -> bool {
    static TABLE: OnceLock<Ranges> = OnceLock::new();
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    let table = TABLE.get_or_init(|| {
        let mut ranges = property_ranges("gc=L").unwrap_or_default();
        ranges.extend(property_ranges("gc=Nd").unwrap_or_default());
        clean(ranges)
    });
    let c = c as u32;
    // The first range not wholly below `c` holds it, if any does.
    let at = table.partition_point(|&(_, hi)| hi < c);
    table.get(at).is_some_and(|&(lo, _)| lo <= c)
}

/// Sorted, merged ranges.
pub fn clean(mut ranges: Ranges) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The complement of clean ranges within 0..=MAX_RUNE.
pub fn negate(ranges: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    let mut next = 0;
    for &(lo, hi) in ranges {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= MAX_RUNE {
        out.push((next, MAX_RUNE));
    }
    out
}

/// The ranges with every code point's simple case-fold orbit added (Go's `SimpleFold`).
fn fold(ranges: &[(u32, u32)]) -> Ranges {
    let mut class = ClassUnicode::new(ranges.iter().flat_map(|&(lo, hi)| {
        // Surrogates are no `char`; they fold to nothing.
        [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)]
            .into_iter()
            .filter(|(lo, hi)| lo <= hi)
            .filter_map(|(lo, hi)| {
                Some(ClassUnicodeRange::new(
                    char::from_u32(lo)?,
                    char::from_u32(hi)?,
                ))
            })
    }));
    class.case_fold_simple();
    let mut out: Ranges = class
        .ranges()
        .iter()
        .map(|r| (r.start() as u32, r.end() as u32))
        .collect();
    out.extend_from_slice(ranges);
    clean(out)
}

/// Go's `repeatIsValid`: nested counted repetitions multiply to at most `n` copies.
fn repeat_is_valid(node: &Node, mut n: u32) -> bool {
    if let Node::Repeat { min, max, .. } = node {
        let m = match max {
            Some(0) => return true,
            Some(m) => *m,
            None => *min,
        };
        if m > n {
            return false;
        }
        if let Some(quotient) = n.checked_div(m) {
            n = quotient;
        }
    }
    children(node).iter().all(|sub| repeat_is_valid(sub, n))
}

fn children(node: &Node) -> &[Node] {
    match node {
        Node::Capture(sub) | Node::Repeat { sub, .. } => std::slice::from_ref(sub),
        Node::Concat(subs) | Node::Alternate(subs) => subs,
        _ => &[],
    }
}

/// Which engine a pattern is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The `regex` crate (Unicode mode).
    Full,
    /// `regex-lite` (no Unicode classes, no nested classes, ASCII `\b`).
    Lite,
}

/// The tree written in an engine's syntax, leaving it nothing to interpret: every code
/// point escaped, every class flat, every group explicit, every repetition counted.
pub fn emit(node: &Node, dialect: Dialect) -> String {
    let mut out = String::new();
    write_node(node, dialect, &mut out);
    out
}

fn write_node(node: &Node, dialect: Dialect, out: &mut String) {
    match node {
        Node::Empty => out.push_str("(?:)"),
        Node::Class(ranges) => write_class(ranges, out),
        Node::BeginLine => out.push_str("(?m:^)"),
        Node::EndLine => out.push_str("(?m:$)"),
        Node::BeginText => out.push_str("\\A"),
        Node::EndText => out.push_str("\\z"),
        Node::WordBoundary if dialect == Dialect::Full => out.push_str("(?-u:\\b)"),
        Node::NoWordBoundary if dialect == Dialect::Full => out.push_str("(?-u:\\B)"),
        Node::WordBoundary => out.push_str("\\b"),
        Node::NoWordBoundary => out.push_str("\\B"),
        Node::Capture(sub) => {
            out.push('(');
            write_node(sub, dialect, out);
            out.push(')');
        }
        Node::Repeat {
            sub,
            min,
            max,
            greedy,
        } => {
            out.push_str("(?:");
            write_node(sub, dialect, out);
            out.push(')');
            match max {
                Some(max) => out.push_str(&format!("{{{min},{max}}}")),
                None => out.push_str(&format!("{{{min},}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
        Node::Concat(subs) => {
            for sub in subs {
                write_node(sub, dialect, out);
            }
        }
        Node::Alternate(subs) => {
            out.push_str("(?:");
            for (i, sub) in subs.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_node(sub, dialect, out);
            }
            out.push(')');
        }
    }
}

/// A set of code points (surrogates dropped: no `char` is one).
fn write_class(ranges: &[(u32, u32)], out: &mut String) {
    let ranges: Ranges = ranges
        .iter()
        .flat_map(|&(lo, hi)| [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)])
        .filter(|(lo, hi)| lo <= hi)
        .collect();
    match ranges.as_slice() {
        // No code point: a class of none, written as the complement of all.
        [] => out.push_str("[^\\x{0}-\\x{10FFFF}]"),
        [(lo, hi)] if lo == hi => write_code_point(*lo, out),
        _ => {
            out.push('[');
            for (lo, hi) in ranges {
                write_code_point(lo, out);
                if hi > lo {
                    out.push('-');
                    write_code_point(hi, out);
                }
            }
            out.push(']');
        }
    }
}

fn write_code_point(c: u32, out: &mut String) {
    match char::from_u32(c) {
        Some(c) if c.is_ascii_alphanumeric() => out.push(c),
        _ => out.push_str(&format!("\\x{{{c:X}}}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class_of(pattern: &str) -> Ranges {
        match parse(pattern).unwrap().tree {
            Node::Class(ranges) => ranges,
            other => panic!("{pattern}: {other:?}"),
        }
    }

    #[test]
    fn a_perl_class_before_a_dash_starts_no_range() {
        // `[\w-\.]`: word characters, `-` and `.` (issue: the `-` was read as a range).
        let expected = clean(vec![
            (0x30, 0x39),
            (0x41, 0x5a),
            (0x5f, 0x5f),
            (0x61, 0x7a),
            ('-' as u32, '-' as u32),
            ('.' as u32, '.' as u32),
        ]);
        assert_eq!(class_of("[\\w-\\.]"), expected);
        assert_eq!(
            parse("[a-\\d]").unwrap_err(),
            "error parsing regexp: invalid escape sequence: `\\d`"
        );
    }

    #[test]
    fn brackets_read_as_go_reads_them() {
        assert_eq!(class_of("[]a]"), vec![(0x5d, 0x5d), (0x61, 0x61)]);
        assert_eq!(
            parse("[^]").unwrap_err(),
            "error parsing regexp: missing closing ]: `[^]`"
        );
        assert_eq!(class_of("[[:alpha:]]"), vec![(0x41, 0x5a), (0x61, 0x7a)]);
        assert_eq!(
            parse("[[:foo:]]").unwrap_err(),
            "error parsing regexp: invalid character class range: `[:foo:]`"
        );
        assert_eq!(
            parse("[z-a]").unwrap_err(),
            "error parsing regexp: invalid character class range: `z-a`"
        );
        assert_eq!(class_of("[a-]"), vec![(0x2d, 0x2d), (0x61, 0x61)]);
    }

    #[test]
    fn escapes_and_limits() {
        assert_eq!(class_of("\\141"), vec![(0x61, 0x61)]);
        assert_eq!(
            parse("\\1").unwrap_err(),
            "error parsing regexp: invalid escape sequence: `\\1`"
        );
        assert_eq!(class_of("\\x{10FFFF}"), vec![(0x10FFFF, 0x10FFFF)]);
        assert_eq!(
            parse("\\x{110000}").unwrap_err(),
            "error parsing regexp: invalid escape sequence: `\\x{110000`"
        );
        assert_eq!(
            parse("a{1001}").unwrap_err(),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            parse("(a{100}){100}").unwrap_err(),
            "error parsing regexp: invalid repeat count: `{100}`"
        );
        assert_eq!(
            parse("(?i").unwrap_err(),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?i`"
        );
        assert!(parse("(?)").is_ok());
        assert!(parse("a|").is_ok());
        assert_eq!(
            parse("\\p{Old_Italic}").unwrap_err(),
            "error parsing regexp: invalid character class range: `\\p{Old_Italic}`"
        );
        assert!(parse("\\p{greek}\\p{Letter}\\p{lc}\\pN").is_ok());
    }

    /// Go's answers (tests/cluster/regex-oracle) on deep patterns: 1001 nested groups are
    /// refused, 999 are not; non-capturing groups and nested alternatives fold away.
    #[test]
    fn nesting_is_measured_as_go_measures_it() {
        let nested = |open: &str, inner: &str, n: usize| {
            format!("{}{inner}{}", open.repeat(n), ")".repeat(n))
        };
        let deep = nested("(", "a", 1001);
        assert_eq!(
            parse(&deep).unwrap_err(),
            error("expression nests too deeply", &deep)
        );
        assert!(parse(&nested("(", "a", 999)).is_ok());
        assert!(parse(&nested("(", "ab", 999)).is_ok());
        assert!(parse(&nested("(?:", "a", 5000)).is_ok());
        assert!(parse(&nested("(?:a|", "b", 1200)).is_ok());
        // Far past the limit, the parser refuses without walking the tree.
        assert!(parse(&nested("(", "a", 200_000)).is_err());
    }
}
