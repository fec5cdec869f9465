//! Semantic versions and version constraints exactly as Masterminds/semver v3 evaluates
//! them, for Sprig's `semver` / `semverCompare` and for Helm (chart versions, dependency
//! matching, `kubeVersion`): the loose `NewVersion` (optional `v`, missing minor/patch
//! meaning 0, leading zeros coerced), semver 2.0 ordering, and `NewConstraint` / `Check`
//! with `||` alternatives, comma or space separated AND terms, hyphen ranges, wildcards,
//! tilde, caret and the pre-release rule (a pre-release version satisfies an AND group
//! only if one of its terms names a pre-release). The constraint grammar is the same set
//! of regular expressions Masterminds uses, so what it accepts and refuses matches.
//!
//! In templates, `semver` returns a `*semver.Version` object (methods `Major`, `Minor`,
//! `Patch`, `Prerelease`, `Metadata`, `Original`, `String`; JSON and `%v` give its
//! canonical string), and `semverCompare` checks a constraint.

use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;
use std::sync::LazyLock;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg_str};
use capstan_gotmpl::value::{Object, Value};
use regex_lite::Regex;

pub(crate) fn register(funcs: &mut FuncMap) {
    let fail = |e: SemverError| FuncError::new(e.template_text());
    funcs.add("semver", 1, false, move |args| {
        let version = Version::parse(arg_str(args, 0)?).map_err(fail)?;
        Ok(Value::Object(Rc::new(version)))
    });
    funcs.add("semverCompare", 2, false, move |args| {
        let constraints = Constraints::parse(arg_str(args, 0)?).map_err(fail)?;
        let version = Version::parse(arg_str(args, 1)?).map_err(fail)?;
        Ok(Value::Bool(constraints.check(&version)))
    });
}

/// Why a version or a constraint did not parse (Masterminds' error texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SemverError {
    /// The text is not a version at all.
    InvalidVersion,
    /// A numeric segment is too large for 64 bits.
    Segment(String),
    /// A numeric pre-release identifier starts with 0.
    SegmentStartsZero,
    /// A pre-release identifier is empty or holds characters outside `[0-9A-Za-z-]`.
    InvalidPrerelease,
    /// A metadata identifier is empty or holds characters outside `[0-9A-Za-z-]`.
    InvalidMetadata,
    /// A constraint group does not match the constraint grammar.
    ImproperConstraint(String),
    /// A constraint's version could not be built.
    ConstraintParser,
}

impl fmt::Display for SemverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SemverError::InvalidVersion => f.write_str("invalid semantic version"),
            SemverError::Segment(detail) => write!(f, "error parsing version segment: {detail}"),
            SemverError::SegmentStartsZero => f.write_str("version segment starts with 0"),
            SemverError::InvalidPrerelease => f.write_str("invalid prerelease string"),
            SemverError::InvalidMetadata => f.write_str("invalid metadata string"),
            SemverError::ImproperConstraint(text) => write!(f, "improper constraint: {text:?}"),
            SemverError::ConstraintParser => f.write_str("constraint parser error"),
        }
    }
}

impl std::error::Error for SemverError {}

impl SemverError {
    /// The text Sprig's `semver` and `semverCompare` fail with in templates (the
    /// capitalised Masterminds wording, and an unquoted improper constraint).
    fn template_text(&self) -> String {
        match self {
            SemverError::InvalidVersion => "Invalid Semantic Version".into(),
            SemverError::Segment(detail) => format!("Error parsing version segment: {detail}"),
            SemverError::SegmentStartsZero => "Version segment starts with 0".into(),
            SemverError::InvalidPrerelease => "Invalid Prerelease string".into(),
            SemverError::InvalidMetadata => "Invalid Metadata string".into(),
            SemverError::ImproperConstraint(text) => format!("improper constraint: {text}"),
            SemverError::ConstraintParser => "constraint Parser Error".into(),
        }
    }
}

/// Go's `\s` (RE2, ASCII): tab, newline, form feed, carriage return, space.
const SPACE: &str = r"[\t\n\x0C\r ]";
/// Masterminds' operator alternatives, in its order (the empty operator is second).
const OPERATORS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";
/// Masterminds' constraint version (`cvRegex`); its classes include a literal `|`.
const CONSTRAINT_VERSION: &str = r"v?([0-9|xX*]+)(\.[0-9|xX*]+)?(\.[0-9|xX*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
/// Masterminds' loose version (`looseSemVerRegex`), which [`LooseParts`] matches by hand.
#[cfg(test)]
const LOOSE_VERSION: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";

/// Masterminds' constraint grammar, on `regex-lite`: the patterns are ASCII-only, where it
/// matches as `regex` does, and it builds them in microseconds, where `regex` took 0.5 ms of
/// every render that checks a dependency's version range (2 % of a `capstan template` run
/// of bitnami/wordpress) — each call starts from a fresh instance, so nothing is kept.
/// A test checks both crates agree on these patterns.
struct Grammar {
    constraint: Regex,
    constraint_range: Regex,
    find_constraint: Regex,
    valid_constraint: Regex,
}

/// The patterns of [`Grammar`], in its field order.
fn grammar_patterns() -> [String; 4] {
    [
        format!("^{SPACE}*({OPERATORS}){SPACE}*({CONSTRAINT_VERSION}){SPACE}*$"),
        format!("{SPACE}*({CONSTRAINT_VERSION}){SPACE}+-{SPACE}+({CONSTRAINT_VERSION}){SPACE}*"),
        format!("({OPERATORS}){SPACE}*({CONSTRAINT_VERSION})"),
        format!(
            "^({SPACE}*({OPERATORS}){SPACE}*({CONSTRAINT_VERSION}){SPACE}*)((?:{SPACE}+|,{SPACE}*)({OPERATORS}){SPACE}*({CONSTRAINT_VERSION}){SPACE}*)*$"
        ),
    ]
}

static GRAMMAR: LazyLock<Option<Grammar>> = LazyLock::new(|| {
    let [
        constraint,
        constraint_range,
        find_constraint,
        valid_constraint,
    ] = grammar_patterns().map(|pattern| Regex::new(&pattern).ok());
    Some(Grammar {
        constraint: constraint?,
        constraint_range: constraint_range?,
        find_constraint: find_constraint?,
        valid_constraint: valid_constraint?,
    })
});

fn grammar() -> Result<&'static Grammar, SemverError> {
    GRAMMAR.as_ref().ok_or(SemverError::ConstraintParser)
}

/// The pieces of a version matched by Masterminds' loose version pattern
/// ([`LOOSE_VERSION`], anchored at both ends), split by hand: building that regex was 3 ms
/// of every component call that validates a chart's version, most of a small chart's
/// render. The equivalence is tested against the regex.
#[derive(Debug, PartialEq, Eq)]
struct LooseParts<'a> {
    major: &'a str,
    minor: Option<&'a str>,
    patch: Option<&'a str>,
    pre: &'a str,
    metadata: &'a str,
}

impl<'a> LooseParts<'a> {
    fn of(text: &'a str) -> Option<Self> {
        fn digits(text: &str) -> (&str, &str) {
            let end = text
                .bytes()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(text.len());
            text.split_at(end)
        }
        // Dot-separated, non-empty identifiers of ASCII letters, digits and `-`.
        fn identifiers(text: &str) -> bool {
            text.split('.').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
        }
        let rest = text.strip_prefix('v').unwrap_or(text);
        let (major, mut rest) = digits(rest);
        if major.is_empty() {
            return None;
        }
        let mut numbers = [None, None];
        for number in &mut numbers {
            if let Some(after_dot) = rest.strip_prefix('.') {
                let (found, after) = digits(after_dot);
                if found.is_empty() {
                    return None;
                }
                *number = Some(found);
                rest = after;
            }
        }
        let (before_plus, metadata) = match rest.split_once('+') {
            Some((before, metadata)) if identifiers(metadata) => (before, metadata),
            Some(_) => return None,
            None => (rest, ""),
        };
        let pre = match before_plus.strip_prefix('-') {
            Some(pre) if identifiers(pre) => pre,
            Some(_) => return None,
            None if before_plus.is_empty() => "",
            None => return None,
        };
        Some(LooseParts {
            major,
            minor: numbers[0],
            patch: numbers[1],
            pre,
            metadata,
        })
    }
}

/// A parsed version (Masterminds `Version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Major number.
    pub major: u64,
    /// Minor number.
    pub minor: u64,
    /// Patch number.
    pub patch: u64,
    /// Pre-release (without the `-`), empty when none.
    pub pre: String,
    /// Build metadata (without the `+`), empty when none.
    pub metadata: String,
    /// The text it was parsed from.
    pub original: String,
}

fn parse_segment(digits: &str) -> Result<u64, SemverError> {
    digits.parse::<u64>().map_err(|_| {
        SemverError::Segment(format!(
            "strconv.ParseUint: parsing {digits:?}: value out of range"
        ))
    })
}

fn only(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    text.chars().all(allowed)
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn validate_prerelease(pre: &str) -> Result<(), SemverError> {
    for part in pre.split('.') {
        if part.is_empty() {
            return Err(SemverError::InvalidPrerelease);
        } else if only(part, |c| c.is_ascii_digit()) {
            if part.len() > 1 && part.starts_with('0') {
                return Err(SemverError::SegmentStartsZero);
            }
        } else if !only(part, is_identifier_char) {
            return Err(SemverError::InvalidPrerelease);
        }
    }
    Ok(())
}

fn validate_metadata(metadata: &str) -> Result<(), SemverError> {
    for part in metadata.split('.') {
        if part.is_empty() || !only(part, is_identifier_char) {
            return Err(SemverError::InvalidMetadata);
        }
    }
    Ok(())
}

impl Version {
    /// Masterminds `NewVersion` (loose, leading zeros coerced), which Helm uses for chart
    /// versions and dependency matching.
    pub fn parse(text: &str) -> Result<Version, SemverError> {
        let parts = LooseParts::of(text).ok_or(SemverError::InvalidVersion)?;
        let version = Version {
            major: parse_segment(parts.major)?,
            minor: parts.minor.map_or(Ok(0), parse_segment)?,
            patch: parts.patch.map_or(Ok(0), parse_segment)?,
            pre: parts.pre.to_owned(),
            metadata: parts.metadata.to_owned(),
            original: text.to_owned(),
        };
        if !version.pre.is_empty() {
            validate_prerelease(&version.pre)?;
        }
        if !version.metadata.is_empty() {
            validate_metadata(&version.metadata)?;
        }
        Ok(version)
    }

    /// Semver 2.0 precedence (metadata ignored).
    pub fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }

    fn less_than(&self, other: &Version) -> bool {
        self.compare(other) == Ordering::Less
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl Object for Version {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Major" | "Minor" | "Patch" | "Prerelease" | "Metadata" | "Original" | "String"
        )
    }
    fn call_method(&self, name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(match name {
            "Major" => Value::Int64(self.major as i64),
            "Minor" => Value::Int64(self.minor as i64),
            "Patch" => Value::Int64(self.patch as i64),
            "Prerelease" => Value::from(self.pre.as_str()),
            "Metadata" => Value::from(self.metadata.as_str()),
            "Original" => Value::from(self.original.as_str()),
            "String" => Value::from(self.to_string()),
            other => return Err(format!("can't call method {other}")),
        })
    }
    fn format(&self) -> String {
        self.to_string()
    }
    fn to_data(&self) -> Value {
        Value::from(self.to_string())
    }
}

fn compare_prerelease(left: &str, right: &str) -> Ordering {
    let left: Vec<&str> = left.split('.').collect();
    let right: Vec<&str> = right.split('.').collect();
    for i in 0..left.len().max(right.len()) {
        let ordering = compare_prerelease_part(
            left.get(i).copied().unwrap_or(""),
            right.get(i).copied().unwrap_or(""),
        );
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

fn compare_prerelease_part(left: &str, right: &str) -> Ordering {
    if left == right {
        return Ordering::Equal;
    }
    if left.is_empty() {
        return Ordering::Less;
    }
    if right.is_empty() {
        return Ordering::Greater;
    }
    match (left.parse::<u64>(), right.parse::<u64>()) {
        (Err(_), Err(_)) => left.cmp(right),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(l), Ok(r)) => {
            if l > r {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

/// The operator of one constraint term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    Tilde,
    Caret,
}

impl Operator {
    fn from_text(text: &str) -> Option<Operator> {
        Some(match text {
            "" | "=" => Operator::TildeOrEqual,
            "!=" => Operator::NotEqual,
            ">" => Operator::Greater,
            "<" => Operator::Less,
            ">=" | "=>" => Operator::GreaterOrEqual,
            "<=" | "=<" => Operator::LessOrEqual,
            "~" | "~>" => Operator::Tilde,
            "^" => Operator::Caret,
            _ => return None,
        })
    }
}

/// One term such as `>=1.2` (with which parts were wildcards or missing).
#[derive(Debug, Clone)]
struct Term {
    operator: Operator,
    version: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

fn is_wildcard(text: &str) -> bool {
    matches!(text, "x" | "X" | "*")
}

impl Term {
    fn parse(text: &str) -> Result<Term, SemverError> {
        if text.is_empty() {
            return Ok(Term {
                operator: Operator::TildeOrEqual,
                version: Version::parse("0.0.0")?,
                dirty: true,
                minor_dirty: false,
                patch_dirty: false,
            });
        }
        let captures = grammar()?
            .constraint
            .captures(text)
            .ok_or_else(|| SemverError::ImproperConstraint(text.to_owned()))?;
        let group = |i: usize| captures.get(i).map_or("", |m| m.as_str());
        let operator = Operator::from_text(group(1)).ok_or(SemverError::ConstraintParser)?;
        let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));
        let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
        let version_text = if is_wildcard(major) || major.is_empty() {
            dirty = true;
            format!("0.0.0{pre}")
        } else if is_wildcard(minor.trim_start_matches('.')) || minor.is_empty() {
            dirty = true;
            minor_dirty = true;
            format!("{major}.0.0{pre}")
        } else if is_wildcard(patch.trim_start_matches('.')) || patch.is_empty() {
            dirty = true;
            patch_dirty = true;
            format!("{major}{minor}.0{pre}")
        } else {
            group(2).to_owned()
        };
        let version = Version::parse(&version_text).map_err(|_| SemverError::ConstraintParser)?;
        Ok(Term {
            operator,
            version,
            dirty,
            minor_dirty,
            patch_dirty,
        })
    }

    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.pre.is_empty() && !include_pre {
            return false;
        }
        let c = &self.version;
        match self.operator {
            Operator::NotEqual => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    } else if self.minor_dirty {
                        return false;
                    } else if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    } else if self.patch_dirty {
                        if !v.pre.is_empty() || !c.pre.is_empty() {
                            return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                        }
                        return false;
                    }
                }
                v.compare(c) != Ordering::Equal
            }
            Operator::Greater => {
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                v.compare(c) == Ordering::Greater
            }
            Operator::Less => v.compare(c) == Ordering::Less,
            Operator::GreaterOrEqual => v.compare(c) != Ordering::Less,
            Operator::LessOrEqual => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                if v.major > c.major {
                    return false;
                }
                !(v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            Operator::Tilde => self.tilde(v),
            Operator::TildeOrEqual => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            Operator::Caret => self.caret(v),
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.less_than(c) {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.less_than(c) {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }
}

/// A parsed constraint (Masterminds `Constraints`): any alternative may match; within
/// one, every term must.
#[derive(Debug, Clone)]
pub struct Constraints {
    alternatives: Vec<(Vec<Term>, bool)>,
}

/// Masterminds `rewriteRange`: `1.2 - 1.4.5` becomes `>= 1.2, <= 1.4.5 `.
fn rewrite_ranges(text: &str) -> Result<String, SemverError> {
    let range = &grammar()?.constraint_range;
    let mut out = text.to_owned();
    for captures in range.captures_iter(text) {
        let whole = captures.get(0).map_or("", |m| m.as_str());
        let low = captures.get(1).map_or("", |m| m.as_str());
        let high = captures.get(11).map_or("", |m| m.as_str());
        out = out.replacen(whole, &format!(">= {low}, <= {high} "), 1);
    }
    Ok(out)
}

impl Constraints {
    /// Masterminds `NewConstraint`.
    pub fn parse(text: &str) -> Result<Constraints, SemverError> {
        let grammar = grammar()?;
        let rewritten = rewrite_ranges(text)?;
        let mut alternatives = Vec::new();
        for group in rewritten.split("||") {
            if !grammar.valid_constraint.is_match(group) {
                return Err(SemverError::ImproperConstraint(group.to_owned()));
            }
            let mut found: Vec<&str> = grammar
                .find_constraint
                .find_iter(group)
                .map(|m| m.as_str())
                .collect();
            if found.is_empty() {
                found.push(group);
            }
            let mut terms = Vec::new();
            let mut has_pre = false;
            for term in found {
                let term = Term::parse(term)?;
                has_pre |= !term.version.pre.is_empty();
                terms.push(term);
            }
            alternatives.push((terms, has_pre));
        }
        Ok(Constraints { alternatives })
    }

    /// Masterminds `Check` (without `IncludePrerelease`, as Helm uses it).
    pub fn check(&self, version: &Version) -> bool {
        self.alternatives
            .iter()
            .any(|(terms, has_pre)| terms.iter().all(|t| t.check(version, *has_pre)))
    }
}

/// Helm's `IsCompatibleRange`: whether `version` parses and satisfies `constraint`
/// (false when either does not parse).
pub fn is_compatible_range(constraint: &str, version: &str) -> bool {
    match (Version::parse(version), Constraints::parse(constraint)) {
        (Ok(version), Ok(constraints)) => constraints.check(&version),
        _ => false,
    }
}

/// The highest of `candidates` (by semver precedence) that parses as a version and
/// satisfies `constraint`; candidates that are not versions are skipped.
pub fn highest_matching<'a>(
    constraint: &Constraints,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(Version, &'a str)> = None;
    for candidate in candidates {
        let Ok(version) = Version::parse(candidate) else {
            continue;
        };
        if !constraint.check(&version) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(b, _)| version.compare(b) == Ordering::Greater)
        {
            best = Some((version, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written split agrees with Masterminds' pattern on every string of up to
    /// five characters over an alphabet of its interesting characters, and on longer cases.
    #[test]
    fn loose_parts_match_the_loose_version_pattern() {
        let pattern = regex::Regex::new(&format!("^{LOOSE_VERSION}$")).unwrap();
        type Parts<'t> = (&'t str, Option<&'t str>, Option<&'t str>, &'t str, &'t str);
        fn by_pattern<'t>(pattern: &regex::Regex, text: &'t str) -> Option<Parts<'t>> {
            pattern.captures(text).map(|c| {
                let group = |i: usize| c.get(i).map(|m| m.as_str());
                (
                    group(1).unwrap_or(""),
                    group(2).map(|g| &g[1..]),
                    group(3).map(|g| &g[1..]),
                    group(5).unwrap_or(""),
                    group(8).unwrap_or(""),
                )
            })
        }
        fn by_hand(text: &str) -> Option<Parts<'_>> {
            LooseParts::of(text).map(|p| (p.major, p.minor, p.patch, p.pre, p.metadata))
        }
        let alphabet = ['v', '0', '1', '.', '-', '+', 'a', 'Z', ' '];
        let mut texts: Vec<String> = vec![String::new()];
        let mut frontier = texts.clone();
        for _ in 0..5 {
            frontier = frontier
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(frontier.iter().cloned());
        }
        texts.extend(
            [
                "1.2.3-alpha.1+build.5",
                "v10.20.30-rc-1.x+meta-data.01",
                "1.2.3.4",
                "1.2.3-+x",
                "1.2.3-a..b",
                "1.2.3+a+b",
                "18446744073709551616.0.0",
                "1.0.0-\u{e9}",
            ]
            .map(String::from),
        );
        let mut matched = 0;
        for text in &texts {
            assert_eq!(by_hand(text), by_pattern(&pattern, text), "{text:?}");
            matched += usize::from(by_pattern(&pattern, text).is_some());
        }
        assert!(
            matched > 100,
            "only {matched} strings matched: the test checks too little"
        );
    }

    #[test]
    fn new_version_accepts_and_refuses_like_masterminds() {
        // Masterminds version_test.go TestNewVersion "With loose NewVersion".
        let cases = [
            ("1.2.3", false),
            ("1.2.3-alpha.01", true),
            ("1.2.3+test.01", false),
            ("1.2.3-alpha.-1", false),
            ("v1.2.3", false),
            ("1.0", false),
            ("v1.0", false),
            ("1", false),
            ("v1", false),
            ("1.2.beta", true),
            ("v1.2.beta", true),
            ("foo", true),
            ("1.2-5", false),
            ("v1.2-5", false),
            ("1.2-beta.5", false),
            ("v1.2-beta.5", false),
            ("\n1.2", true),
            ("\nv1.2", true),
            ("1.2.0-x.Y.0+metadata", false),
            ("v1.2.0-x.Y.0+metadata", false),
            ("1.2.0-x.Y.0+metadata-width-hypen", false),
            ("1.2.3-rc1-with-hypen", false),
            ("1.2.3-0abc123", false),
            ("1.2.3-beta.01", true),
            ("1.2.3.4", true),
            ("v1.2.3.4", true),
            ("1.2.2147483648", false),
            ("12.3.4.1234", true),
            ("20221209-update-renovatejson-v4", false),
            ("1.1.2+.123", true),
            ("1.0.0-alpha_beta", true),
            ("1.0.0-alpha..", true),
            ("1.0.0-alpha..1", true),
            ("9.8.7+meta+meta", true),
            ("1.2.31----RC-SNAPSHOT.12.09.1--.12+788", true),
            ("01.1.1", false),
            ("1.01.1", false),
            ("1.1.01", false),
        ];
        for (text, fails) in cases {
            assert_eq!(Version::parse(text).is_err(), fails, "{text:?}");
        }
        assert_eq!(Version::parse("v1.2").unwrap().to_string(), "1.2.0");
    }

    #[test]
    fn compare_follows_semver_precedence() {
        // Masterminds TestCompare.
        let cases = [
            ("1.2.3", "1.5.1", Ordering::Less),
            ("2.2.3", "1.5.1", Ordering::Greater),
            ("2.2.3", "2.2.2", Ordering::Greater),
            ("3.2-beta", "3.2-beta", Ordering::Equal),
            ("1.3", "1.1.4", Ordering::Greater),
            ("4.2", "4.2-beta", Ordering::Greater),
            ("4.2-beta", "4.2", Ordering::Less),
            ("4.2-alpha", "4.2-beta", Ordering::Less),
            ("4.2-alpha", "4.2-alpha", Ordering::Equal),
            ("4.2-beta.2", "4.2-beta.1", Ordering::Greater),
            ("4.2-beta2", "4.2-beta1", Ordering::Greater),
            ("4.2-beta", "4.2-beta.2", Ordering::Less),
            ("4.2-beta", "4.2-beta.foo", Ordering::Less),
            ("4.2-beta.2", "4.2-beta", Ordering::Greater),
            ("4.2-beta.foo", "4.2-beta", Ordering::Greater),
            ("1.2+bar", "1.2+baz", Ordering::Equal),
            ("1.0.0-beta.4", "1.0.0-beta.-2", Ordering::Less),
            ("1.0.0-beta.-2", "1.0.0-beta.-3", Ordering::Less),
            ("1.0.0-beta.-3", "1.0.0-beta.5", Ordering::Greater),
        ];
        for (a, b, expected) in cases {
            let (va, vb) = (Version::parse(a).unwrap(), Version::parse(b).unwrap());
            assert_eq!(va.compare(&vb), expected, "{a} vs {b}");
        }
    }

    fn term_check(constraint: &str, version: &str) -> bool {
        let term = Term::parse(constraint).unwrap();
        let version = Version::parse(version).unwrap();
        term.check(&version, !term.version.pre.is_empty())
    }

    #[test]
    fn single_terms_check_like_masterminds() {
        // Masterminds constraints_test.go TestConstraintCheck.
        let cases: &[(&str, &str, bool)] = &[
            ("=2.0.0", "1.2.3", false),
            ("=2.0.0", "2.0.0", true),
            ("=2.0", "1.2.3", false),
            ("=2.0", "2.0.0", true),
            ("=2.0", "2.0.1", true),
            ("4.1", "4.1.0", true),
            ("!=4.1.0", "4.1.0", false),
            ("!=4.1.0", "4.1.1", true),
            ("!=4.1", "4.1.0", false),
            ("!=4.1", "4.1.1", false),
            ("!=4.1", "5.1.0-alpha.1", false),
            ("!=4.1.0", "5.1.0-alpha.1", false),
            ("!=4.1-alpha", "4.1.0", true),
            ("!=4.1", "5.1.0", true),
            ("<11", "0.1.0", true),
            ("<11", "11.1.0", false),
            ("<1.1", "0.1.0", true),
            ("<1.1", "1.1.0", false),
            ("<1.1", "1.1.1", false),
            ("<=11", "1.2.3", true),
            ("<=11", "12.2.3", false),
            ("<=11", "11.2.3", true),
            ("<=1.1", "1.2.3", false),
            ("<=1.1", "0.1.0", true),
            ("<=1.1", "1.1.0", true),
            ("<=1.1", "1.1.1", true),
            (">1.1", "4.1.0", true),
            (">1.1", "1.1.0", false),
            (">0", "0", false),
            (">0", "1", true),
            (">0", "0.0.1-alpha", false),
            (">0.0", "0.0.1-alpha", false),
            (">0-0", "0.0.1-alpha", false),
            (">0.0-0", "0.0.1-alpha", false),
            (">0", "0.0.0-alpha", false),
            (">0-0", "0.0.0-alpha", false),
            (">0.0.0-0", "0.0.0-alpha", true),
            (">1.2.3-alpha.1", "1.2.3-alpha.2", true),
            (">1.2.3-alpha.1", "1.3.3-alpha.2", true),
            (">11", "11.1.0", false),
            (">11.1", "11.1.0", false),
            (">11.1", "11.1.1", false),
            (">11.1", "11.2.1", true),
            (">=11", "11.1.2", true),
            (">=11.1", "11.1.2", true),
            (">=11.1", "11.0.2", false),
            (">=1.1", "4.1.0", true),
            (">=1.1", "1.1.0", true),
            (">=1.1", "0.0.9", false),
            (">=0", "0.0.1-alpha", false),
            (">=0.0", "0.0.1-alpha", false),
            (">=0-0", "0.0.1-alpha", true),
            (">=0.0-0", "0.0.1-alpha", true),
            (">=0", "0.0.0-alpha", false),
            (">=0-0", "0.0.0-alpha", true),
            (">=0.0.0-0", "0.0.0-alpha", true),
            (">=0.0.0-0", "1.2.3", true),
            (">=0.0.0-0", "3.4.5-beta.1", true),
            ("<0", "0.0.0-alpha", false),
            ("<0-z", "0.0.0-alpha", true),
            (">=0", "0", true),
            ("=0", "1", false),
            ("*", "1", true),
            ("*", "4.5.6", true),
            ("*", "1.2.3-alpha.1", false),
            ("*-0", "1.2.3-alpha.1", true),
            ("2.*", "1", false),
            ("2.*", "3.4.5", false),
            ("2.*", "2.1.1", true),
            ("2.1.*", "2.1.1", true),
            ("2.1.*", "2.2.1", false),
            ("", "1", true),
            ("", "4.5.6", true),
            ("", "1.2.3-alpha.1", false),
            ("2", "1", false),
            ("2", "3.4.5", false),
            ("2", "2.1.1", true),
            ("2.1", "2.1.1", true),
            ("2.1", "2.2.1", false),
            ("~1.2.3", "1.2.4", true),
            ("~1.2.3", "1.3.4", false),
            ("~1.2", "1.2.4", true),
            ("~1.2", "1.3.4", false),
            ("~1", "1.2.4", true),
            ("~1", "2.3.4", false),
            ("~0.2.3", "0.2.5", true),
            ("~0.2.3", "0.3.5", false),
            ("~1.2.3-beta.2", "1.2.3-beta.4", true),
            ("~1.2.3-beta.2", "1.2.4-beta.2", true),
            ("~1.2.3-beta.2", "1.3.4-beta.2", false),
            ("^1.2.3", "1.8.9", true),
            ("^1.2.3", "2.8.9", false),
            ("^1.2.3", "1.2.1", false),
            ("^1.1.0", "2.1.0", false),
            ("^1.2.0", "2.2.1", false),
            ("^1.2.0", "1.2.1-alpha.1", false),
            ("^1.2.0-alpha.0", "1.2.1-alpha.1", true),
            ("^1.2.0-alpha.0", "1.2.1-alpha.0", true),
            ("^1.2.0-alpha.2", "1.2.0-alpha.1", false),
            ("^1.2", "1.8.9", true),
            ("^1.2", "2.8.9", false),
            ("^1", "1.8.9", true),
            ("^1", "2.8.9", false),
            ("^0.2.3", "0.2.5", true),
            ("^0.2.3", "0.5.6", false),
            ("^0.2", "0.2.5", true),
            ("^0.2", "0.5.6", false),
            ("^0.0.3", "0.0.3", true),
            ("^0.0.3", "0.0.4", false),
            ("^0.0", "0.0.3", true),
            ("^0.0", "0.1.4", false),
            ("^0.0", "1.0.4", false),
            ("^0", "0.2.3", true),
            ("^0", "1.1.4", false),
            ("^0.2.3-beta.2", "0.2.3-beta.4", true),
            ("^0.2.3-beta.2", "0.2.4-beta.2", true),
            ("^0.2.3-beta.2", "0.3.4-beta.2", false),
            ("^0.2.3-beta.2", "0.2.3-beta.2", true),
        ];
        for (constraint, version, expected) in cases {
            assert_eq!(
                term_check(constraint, version),
                *expected,
                "{constraint:?} with {version:?}"
            );
        }
    }

    #[test]
    fn constraints_check_like_masterminds() {
        // Masterminds constraints_test.go TestConstraintsCheck.
        let cases: &[(&str, &str, bool)] = &[
            ("*", "1.2.3", true),
            ("~0.0.0", "1.2.3", true),
            ("0.x.x", "1.2.3", false),
            ("0.0.x", "1.2.3", false),
            ("0.0.0", "1.2.3", false),
            ("^0.0.0", "1.2.3", false),
            ("= 2.0", "1.2.3", false),
            ("= 2.0", "2.0.0", true),
            ("4.1.x", "4.1.3", true),
            ("1.x", "1.4", true),
            ("!=4.1-alpha", "4.1.0-alpha", false),
            ("!=4.1-alpha", "4.1.1-alpha", false),
            ("!=4.x", "5.1.0", true),
            ("!=4.x", "4.1.0", false),
            ("!=4.1.x", "4.2.0", true),
            ("!=4.2.x", "4.2.3", false),
            ("<1.x", "1.1.1", false),
            ("<1.x", "0.1.1", true),
            ("<1.x", "2.0.0", false),
            ("<1.1.x", "1.2.1", false),
            ("<1.1.x", "1.1.500", false),
            ("<1.1.x", "1.0.500", true),
            ("<1.2.x", "1.1.1", true),
            (">=1.1", "4.1.0-beta", false),
            ("<=1.1", "0.1.0-alpha", false),
            ("<=1.1-a", "0.1.0-alpha", true),
            ("<=1.x", "1.1.0", true),
            ("<=2.x", "3.0.0", false),
            ("<=1.1.x", "1.2.500", false),
            ("<=4.5", "3.4.0", true),
            ("<=4.5", "3.7.0", true),
            ("<=4.5", "4.6.3", false),
            (">1.1, <2", "1.1.1", false),
            (">1.1, <2", "1.2.1", true),
            (">1.1, <3", "4.3.2", false),
            (">=1.1, <2, !=1.2.3", "1.2.3", false),
            (">1.1 <2", "1.2.1", true),
            (">1.1    <3", "4.3.2", false),
            (">=1.1, <2, !=1.2.3 || > 3", "4.1.2", true),
            (">=1.1, <2, !=1.2.3 || > 3", "3.1.2", false),
            (">=1.1, <2, !=1.2.3 || >= 3", "3.0.0", true),
            (">=1.1 <2 !=1.2.3 || > 3", "3.0.0", false),
            ("> 1.1, <     2", "1.1.1", false),
            (">   1.1, <2", "1.2.1", true),
            (">=1.1    < 2    != 1.2.3", "1.2.3", false),
            (">= 1.1 <2 != 1.2.3 || >= 3", "3.0.0", true),
            (">= 1.0.0  <= 2.0.0-beta", "1.0.1-beta", true),
            (">= 1.0.0  <= 2.0.0-beta", "1.0.1", true),
            (">= 1.0.0  <= 2.0.0-beta", "3.0.0", false),
            (">= 1.0.0  <= 2.0.0-beta || > 3", "1.0.1-beta", true),
            (">= 1.0.0  <= 2.0.0-beta || > 3", "3.0.1-beta", false),
            (
                ">= 1.0.0  <= 2.0.0-beta != 1.0.1 || > 3",
                "1.0.1-beta",
                true,
            ),
            (
                ">= 1.0.0  <= 2.0.0-beta != 1.0.1-beta || > 3",
                "1.0.1-beta",
                false,
            ),
            (">= 1.0.0-0  <= 2.0.0", "1.0.1-beta", true),
            ("1.1 - 2", "1.1.1", true),
            ("1.5.0 - 4.5", "3.7.0", true),
            ("1.1-3", "4.3.2", false),
            ("^1.1", "1.1.1", true),
            ("^1.1", "4.3.2", false),
            ("^1.x", "1.1.1", true),
            ("^2.x", "1.1.1", false),
            ("^1.x", "2.1.1", false),
            ("^1.x", "1.1.1-beta1", false),
            ("^1.1.2-alpha", "1.2.1-beta1", true),
            ("^1.2.x-alpha", "1.1.1-beta1", false),
            ("^0.0.1", "0.0.1", true),
            ("^0.0.1", "0.3.1", false),
            ("~*", "2.1.1", true),
            ("~1", "2.1.1", false),
            ("~1", "1.3.5", true),
            ("~1", "1.4", true),
            ("~1.x", "2.1.1", false),
            ("~1.x", "1.3.5", true),
            ("~1.1", "1.1.1-alpha", false),
            ("~1.1-alpha", "1.1.1-beta", true),
            ("~1.1.1-beta", "1.1.1-alpha", false),
            ("~1.1.1-beta", "1.1.1", true),
            ("~1.2.3", "1.2.5", true),
            ("~1.2.3", "1.2.2", false),
            ("~1.2.3", "1.3.2", false),
            ("~1.1", "1.2.3", false),
            ("~1.3", "2.4.5", false),
            ("1.0.0 - 2.0.0 <=2.0.0", "1.5.0", true),
            ("1.0.0 - 2.0.0, <=2.0.0", "1.5.0", true),
        ];
        for (constraint, version, expected) in cases {
            let parsed = Constraints::parse(constraint).unwrap();
            let version_parsed = Version::parse(version).unwrap();
            assert_eq!(
                parsed.check(&version_parsed),
                *expected,
                "{constraint:?} with {version:?}"
            );
        }
    }

    /// `regex-lite`, which the grammar is built on, finds what `regex` finds with every
    /// pattern of it, group by group, on every string of up to three characters over the
    /// grammar's interesting characters and on the Masterminds cases below.
    #[test]
    fn the_lite_grammar_matches_as_regex_does() {
        let alphabet: Vec<char> = "0123456789.xX*|-+v ~^<>=!,\tA".chars().collect();
        let mut inputs: Vec<String> = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = inputs
                .iter()
                .filter(|s| s.chars().count() == inputs.last().map_or(0, |l| l.chars().count()))
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            inputs.extend(longer);
        }
        inputs.extend(
            [
                ">= 1.2.3, < 2.0.0-beta.1+build.5",
                "1.2 - 1.4.5",
                "~1.2.x || ^0.3 || =v1.0.0-rc.1",
                "  >1.x  <3 ",
                "1.2.3 -  2.3.4",
                "!=4.5.6,>=1,<=9.9.9",
                "^1.2.3-alpha.1 ,>1",
            ]
            .map(String::from),
        );
        for pattern in grammar_patterns() {
            let lite = Regex::new(&pattern).unwrap();
            let full = regex::Regex::new(&pattern).unwrap();
            for input in &inputs {
                let by_lite: Vec<Vec<Option<(usize, usize)>>> = lite
                    .captures_iter(input)
                    .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect())
                    .collect();
                let by_full: Vec<Vec<Option<(usize, usize)>>> = full
                    .captures_iter(input)
                    .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect())
                    .collect();
                assert_eq!(by_lite, by_full, "pattern {pattern} on {input:?}");
            }
        }
    }

    #[test]
    fn new_constraint_refuses_like_masterminds() {
        // Masterminds TestNewConstraint (ors, and-count, error).
        let cases: &[(&str, usize, usize, bool)] = &[
            (">= 1.1", 1, 1, false),
            (">40.50.60, < 50.70", 1, 2, false),
            ("2.0", 1, 1, false),
            ("v2.3.5-20161202202307-sha.e8fc5e5", 1, 1, false),
            ("v1.2.3-0abc", 1, 1, false),
            ("v1.2.3-beta.01", 1, 1, true),
            (">= bar", 0, 0, true),
            ("BAR >= 1.2.3", 0, 0, true),
            (">= 1.2.3 < 2.0", 1, 2, false),
            (">= 1.2.3 < 2.0 || => 3.0 < 4", 2, 2, false),
            (">= 1.2.3, < 2.0", 1, 2, false),
            (">= 1.2.3, < 2.0 || => 3.0, < 4", 2, 2, false),
            ("3 - 4 || => 3.0, < 4", 2, 2, false),
            ("12.3.4.1234", 0, 0, true),
            ("12.23.4.1234", 0, 0, true),
            ("12.3.34.1234", 0, 0, true),
            ("12.3.34 ~1.2.3", 1, 2, false),
            ("12.3.34~ 1.2.3", 0, 0, true),
            ("1.0.0 - 2.0.0, <=2.0.0", 1, 3, false),
        ];
        for (text, ors, count, fails) in cases {
            let parsed = Constraints::parse(text);
            assert_eq!(parsed.is_err(), *fails, "{text:?}");
            if let Ok(parsed) = parsed {
                assert_eq!(parsed.alternatives.len(), *ors, "{text:?}");
                assert_eq!(parsed.alternatives[0].0.len(), *count, "{text:?}");
            }
        }
        assert_eq!(
            Constraints::parse(">= bar").unwrap_err().to_string(),
            "improper constraint: \">= bar\""
        );
    }

    #[test]
    fn compatible_range_as_helm_uses_it() {
        // Helm pkg/chart/v2/util/compatible_test.go TestIsCompatibleRange.
        let cases = [
            ("v2.0.0-alpha.4", "v2.0.0-alpha.4", true),
            ("v2.0.0-alpha.3", "v2.0.0-alpha.4", false),
            ("v2.0.0", "v2.0.0-alpha.4", false),
            ("v2.0.0-alpha.4", "v2.0.0", false),
            ("~v2.0.0", "v2.0.1", true),
            ("v2", "v2.0.0", true),
            (">2.0.0", "v2.1.1", true),
            ("v2.1.*", "v2.1.1", true),
        ];
        for (constraint, version, expected) in cases {
            assert_eq!(
                is_compatible_range(constraint, version),
                expected,
                "{constraint} {version}"
            );
        }
    }
}

#[cfg(test)]
mod template_tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("semverCompare", &[s(">=1.2.0"), s("1.2.3")]), "true");
        assert_eq!(show("semverCompare", &[s("^1.2"), s("1.3.0-rc1")]), "false");
        assert_eq!(show("semverCompare", &[s("~1.2.0"), s("1.2.9")]), "true");
        assert_eq!(show("semverCompare", &[s(">1.20-0"), s("v1.36.0")]), "true");
        assert_eq!(show("semverCompare", &[s("<1.19"), s("v1.36.0")]), "false");
        // {{ (semver "1.2.3").Major }} => 1; {{ semver "1.2.3-beta.1+b" | toJson }} => "1.2.3-beta.1+b"
        let Ok(Value::Object(v)) = call("semver", &[s("1.2.3")]) else {
            panic!("no object")
        };
        assert_eq!(v.call_method("Major", &[]).unwrap().to_go_string(), "1");
        let Ok(Value::Object(v)) = call("semver", &[s("1.2.3-beta.1+b")]) else {
            panic!("no object")
        };
        assert_eq!(v.to_data().to_go_string(), "1.2.3-beta.1+b");
    }

    fn check(constraint: &str, version: &str) -> bool {
        show("semverCompare", &[s(constraint), s(version)]) == "true"
    }

    #[test]
    fn masterminds_constraint_cases() {
        // Cases from Masterminds/semver's constraints_test.go (TestConstraintsCheck).
        for (constraint, version, expected) in [
            ("*", "1.2.3", true),
            ("~0.0.0", "1.2.3", true),
            ("0.x.x", "1.2.3", false),
            ("0.0.x", "1.2.3", false),
            ("0.0.0", "1.2.3", false),
            ("*", "1.2.3", true),
            ("^0.0.0", "1.2.3", false),
            ("= 2.0", "1.2.3", false),
            ("= 2.0", "2.0.0", true),
            ("4.1", "4.1.0", true),
            ("4.1.x", "4.1.3", true),
            ("1.x", "1.4", true),
            ("!=4.1", "4.1.0", false),
            ("!=4.1-alpha", "4.1.0-alpha", false),
            ("!=4.1-alpha", "4.1.1-alpha", false),
            ("!=4.1-alpha", "4.1.0", true),
            ("!=4.1", "5.1.0", true),
            ("!=4.x", "5.1.0", true),
            ("!=4.x", "4.1.0", false),
            ("!=4.1.x", "4.2.0", true),
            ("!=4.2.x", "4.2.3", false),
            (">1.1", "4.1.0", true),
            (">1.1", "1.1.0", false),
            ("<1.1", "0.1.0", true),
            ("<1.1", "1.1.0", false),
            ("<1.1", "1.1.1", false),
            ("<1.x", "1.1.1", false),
            ("<1.x", "0.1.1", true),
            ("<1.x", "2.0.0", false),
            ("<1.1.x", "1.2.1", false),
            ("<1.1.x", "1.1.500", false),
            ("<1.1.x", "1.0.500", true),
            ("<1.2.x", "1.1.1", true),
            (">=1.1", "4.1.0", true),
            (">=1.1", "4.1.0-beta", false),
            (">=1.1", "1.1.0", true),
            (">=1.1", "0.0.9", false),
            ("<=1.1", "0.1.0", true),
            ("<=1.1", "0.1.0-alpha", false),
            ("<=1.1-a", "0.1.0-alpha", true),
            ("<=1.1", "1.1.0", true),
            ("<=1.x", "1.1.0", true),
            ("<=2.x", "3.0.0", false),
            ("<=1.1", "1.1.1", true),
            ("<=1.1.x", "1.2.500", false),
            ("<=4.5", "3.4.0", true),
            ("<=4.5", "3.7.0", true),
            ("<=4.5", "4.6.3", false),
            (">1.1, <2", "1.1.1", false),
            (">1.1, <2", "1.2.1", true),
            (">1.1, <3", "4.3.2", false),
            (">=1.1, <2, !=1.2.3", "1.2.3", false),
            (">1.1 <2", "1.1.1", false),
            (">1.1 <2", "1.2.1", true),
            (">1.1    <3", "4.3.2", false),
            (">=1.1    <2    !=1.2.3", "1.2.3", false),
            (">=1.1, <2, !=1.2.3 || > 3", "4.1.2", true),
            (">=1.1, <2, !=1.2.3 || > 3", "3.1.2", false),
            (">=1.1, <2, !=1.2.3 || >= 3", "3.0.0", true),
            (">=1.1, <2, !=1.2.3 || > 3", "3.0.0", false),
            (">=1.1, <2, !=1.2.3 || > 3", "1.2.3", false),
            (">=1.1 <2 !=1.2.3", "1.2.3", false),
            (">=1.1 <2 !=1.2.3 || > 3", "4.1.2", true),
            (">=1.1 <2 !=1.2.3 || > 3", "3.1.2", false),
            (">=1.1 <2 !=1.2.3 || >= 3", "3.0.0", true),
            (">=1.1 <2 !=1.2.3 || > 3", "3.0.0", false),
            (">=1.1 <2 !=1.2.3 || > 3", "1.2.3", false),
            ("> 1.1, <     2", "1.1.1", false),
            (">   1.1, <2", "1.2.1", true),
            (">1.1, <  3", "4.3.2", false),
            (">= 1.1, <     2, !=1.2.3", "1.2.3", false),
            ("> 1.1 < 2", "1.1.1", false),
            (">1.1 < 2", "1.2.1", true),
            ("> 1.1    <3", "4.3.2", false),
            (">=1.1    < 2    != 1.2.3", "1.2.3", false),
            (">= 1.1, <2, !=1.2.3 || > 3", "4.1.2", true),
            (">= 1.1, <2, != 1.2.3 || > 3", "3.1.2", false),
            (">= 1.1, <2, != 1.2.3 || >= 3", "3.0.0", true),
            (">= 1.1, <2, !=1.2.3 || > 3", "3.0.0", false),
            (">= 1.1, <2, !=1.2.3 || > 3", "1.2.3", false),
            (">= 1.1 <2 != 1.2.3", "1.2.3", false),
            (">= 1.1 <2 != 1.2.3 || > 3", "4.1.2", true),
            (">= 1.1 <2 != 1.2.3 || > 3", "3.1.2", false),
            (">= 1.1 <2 != 1.2.3 || >= 3", "3.0.0", true),
            (">= 1.1 < 2 !=1.2.3 || > 3", "3.0.0", false),
            (">=1.1 < 2 !=1.2.3 || > 3", "1.2.3", false),
            ("1.1 - 2", "1.1.1", true),
            ("1.5.0 - 4.5", "3.7.0", true),
            ("1.1-3", "4.3.2", false),
            ("^1.1", "1.1.1", true),
            ("^1.1", "4.3.2", false),
            ("^1.x", "1.1.1", true),
            ("^2.x", "1.1.1", false),
            ("^1.x", "2.1.1", false),
            ("^1.x", "1.1.1-beta1", false),
            ("^1.1.2-alpha", "1.2.1-beta1", true),
            ("^1.2.x-alpha", "1.1.1-beta1", false),
            ("^0.0.1", "0.0.1", true),
            ("^0.0.1", "0.3.1", false),
            ("~*", "2.1.1", true),
            ("~1", "2.1.1", false),
            ("~1", "1.3.5", true),
            ("~1", "1.4", true),
            ("~1.x", "2.1.1", false),
            ("~1.x", "1.3.5", true),
            ("~1.x", "1.4", true),
            ("~1.1", "1.1.1", true),
            ("~1.1", "1.1.1-alpha", false),
            ("~1.1-alpha", "1.1.1-beta", true),
            ("~1.1.1-beta", "1.1.1-alpha", false),
            ("~1.1.1-beta", "1.1.1", true),
            ("~1.2.3", "1.2.5", true),
            ("~1.2.3", "1.2.2", false),
            ("~1.2.3", "1.3.2", false),
            ("~1.1", "1.2.3", false),
            ("~1.3", "2.4.5", false),
            ("1.0.0 - 2.0.0 <=2.0.0", "1.5.0", true),
            ("1.0.0 - 2.0.0, <=2.0.0", "1.5.0", true),
        ] {
            assert_eq!(
                check(constraint, version),
                expected,
                "{constraint} vs {version}"
            );
        }
    }

    #[test]
    fn errors_and_objects() {
        assert_eq!(error("semver", &[s("1.2.x")]), "Invalid Semantic Version");
        assert_eq!(
            error("semverCompare", &[s(">= 1.0"), s("bad")]),
            "Invalid Semantic Version"
        );
        assert_eq!(
            error("semverCompare", &[s("!!1"), s("1.0.0")]),
            "improper constraint: !!1"
        );
        assert_eq!(
            error("semver", &[s("1.2.3-01")]),
            "Version segment starts with 0"
        );
        let Ok(Value::Object(v)) = call("semver", &[s("v1.2")]) else {
            panic!("no object")
        };
        assert_eq!(v.format(), "1.2.0");
        assert_eq!(v.type_name(), "*semver.Version");
        assert_eq!(
            v.call_method("Original", &[]).unwrap().to_go_string(),
            "v1.2"
        );
        assert_eq!(v.call_method("Minor", &[]).unwrap().to_go_string(), "2");
    }
}
