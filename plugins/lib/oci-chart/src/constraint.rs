//! Version constraints as Helm reads them (Masterminds semver v3), and the tag Helm picks.
//!
//! A constraint is one or more `||`-separated groups; a group is comparators separated by
//! spaces or commas, all of which must hold. Comparators: `=`, `!=`, `>`, `<`, `>=` (`=>`),
//! `<=` (`=<`), `~` (`~>`), `^`, or none (like `=`); versions may be partial (`1.2`) or use
//! `x`, `X` or `*` wildcards (`1.2.x`), which makes `=`/none behave like `~`. `A - B` is
//! `>= A, <= B`. A pre-release version satisfies a group only when one of the group's
//! comparators names a pre-release; `*` (and an empty version) therefore means "the highest
//! stable version".
//!
//! Tags: OCI tags cannot hold `+`, so Helm pushes `1.0.0+build.1` as tag `1.0.0_build.1`
//! and reads `_` back as `+`. Only tags that are then strict SemVer 2 versions count.

use std::cmp::Ordering;
use std::fmt;

use semver::{BuildMetadata, Prerelease, Version};

/// OCI tag for a chart version (`+` becomes `_`).
pub fn tag_for_version(version: &str) -> String {
    version.replace('+', "_")
}

/// Chart version for an OCI tag (`_` becomes `+`), if the result is strict SemVer 2.
pub fn version_for_tag(tag: &str) -> Option<Version> {
    Version::parse(&tag.replace('_', "+")).ok()
}

/// Comparison operator of one comparator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `=` or no operator: equal, or like `~` when the version has wildcards.
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// One comparator, e.g. `>=1.2.x`.
#[derive(Clone, Debug)]
struct Comparator {
    op: Op,
    /// The version with wildcards and missing parts set to zero.
    version: Version,
    /// Some part is a wildcard or missing.
    dirty: bool,
    /// The minor part (and so the patch part) is a wildcard or missing.
    minor_dirty: bool,
    /// The patch part is a wildcard or missing.
    patch_dirty: bool,
}

/// Comparators that must all hold.
#[derive(Clone, Debug)]
struct Group {
    comparators: Vec<Comparator>,
    /// One comparator names a pre-release: pre-release versions may match this group.
    includes_prerelease: bool,
}

/// A parsed constraint: any group may hold.
#[derive(Clone, Debug)]
pub struct Constraints {
    groups: Vec<Group>,
}

/// Why a constraint does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintError(pub String);

impl fmt::Display for ConstraintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_wildcard(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

/// Splits `text` at the first `-` or `+` that ends the numeric part.
fn split_core(text: &str) -> (&str, &str) {
    match text.find(['-', '+']) {
        Some(i) => (&text[..i], &text[i..]),
        None => (text, ""),
    }
}

/// Parses a (possibly partial, possibly wildcard) version of a comparator.
fn parse_comparator_version(text: &str, op: Op) -> Result<Comparator, ConstraintError> {
    let bad = |why: &str| ConstraintError(format!("`{text}` is not a version: {why}"));
    let body = text.strip_prefix(['v', 'V']).unwrap_or(text);
    let (core, rest) = split_core(body);
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad("expected MAJOR[.MINOR[.PATCH]]"));
    }
    let mut numbers = [0u64; 3];
    let mut wildcard_at = None;
    for (i, part) in parts.iter().enumerate() {
        if is_wildcard(part) {
            wildcard_at.get_or_insert(i);
        } else if wildcard_at.is_none() {
            numbers[i] = part
                .parse()
                .map_err(|_| bad(&format!("`{part}` is not a number or x")))?;
        } else if !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(&format!("`{part}` is not a number or x")));
        }
        // Numbers after a wildcard (`1.x.3`) are ignored, as Masterminds does.
    }
    let first_missing = wildcard_at.unwrap_or(parts.len());
    let (pre, build) = match rest.split_once('+') {
        Some((pre, build)) => (pre, Some(build)),
        None => (rest, None),
    };
    let pre = match pre.strip_prefix('-') {
        Some("") => return Err(bad("empty pre-release")),
        Some(pre) => Prerelease::new(pre).map_err(|e| bad(&format!("pre-release: {e}")))?,
        None if pre.is_empty() => Prerelease::EMPTY,
        None => return Err(bad("unexpected text after the version")),
    };
    let build = match build {
        Some("") => return Err(bad("empty build metadata")),
        Some(build) => {
            BuildMetadata::new(build).map_err(|e| bad(&format!("build metadata: {e}")))?
        }
        None => BuildMetadata::EMPTY,
    };
    let (dirty, minor_dirty, patch_dirty) = match first_missing {
        0 => (true, false, false),
        1 => (true, true, false),
        2 => (true, false, true),
        _ => (false, false, false),
    };
    let mut version = Version::new(
        if first_missing > 0 { numbers[0] } else { 0 },
        if first_missing > 1 { numbers[1] } else { 0 },
        if first_missing > 2 { numbers[2] } else { 0 },
    );
    version.pre = pre;
    if !dirty {
        version.build = build;
    }
    Ok(Comparator {
        op,
        version,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

/// The operator at the start of `text` and the rest.
fn split_op(text: &str) -> (Op, &str) {
    const OPS: [(&str, Op); 11] = [
        ("!=", Op::NotEqual),
        (">=", Op::GreaterEqual),
        ("=>", Op::GreaterEqual),
        ("<=", Op::LessEqual),
        ("=<", Op::LessEqual),
        ("~>", Op::Tilde),
        (">", Op::Greater),
        ("<", Op::Less),
        ("=", Op::TildeOrEqual),
        ("~", Op::Tilde),
        ("^", Op::Caret),
    ];
    for (symbol, op) in OPS {
        if let Some(rest) = text.strip_prefix(symbol) {
            return (op, rest);
        }
    }
    (Op::TildeOrEqual, text)
}

/// Tokens of one group: comparator texts (operator and version, whitespace between them
/// removed), separators, and the `-` of hyphen ranges.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    Op(&'a str),
    Version(&'a str),
    Comma,
    Hyphen,
}

fn tokenize(group: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let bytes = group.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b',' {
            tokens.push(Token::Comma);
            i += 1;
        } else if b"!=<>~^".contains(&c) {
            let start = i;
            while i < bytes.len() && b"!=<>~^".contains(&bytes[i]) {
                i += 1;
            }
            tokens.push(Token::Op(&group[start..i]));
        } else if c == b'-'
            && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace())
            && i > 0
            && bytes[i - 1].is_ascii_whitespace()
        {
            tokens.push(Token::Hyphen);
            i += 1;
        } else {
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b',' {
                i += 1;
            }
            tokens.push(Token::Version(&group[start..i]));
        }
    }
    tokens
}

fn parse_group(text: &str) -> Result<Group, ConstraintError> {
    let tokens = tokenize(text);
    if tokens.is_empty() {
        return Err(ConstraintError(format!("empty constraint in `{text}`")));
    }
    let mut comparators = Vec::new();
    let mut i = 0;
    let mut expect_comparator = true;
    while i < tokens.len() {
        match tokens[i] {
            Token::Comma if !expect_comparator => {
                expect_comparator = true;
                i += 1;
                continue;
            }
            Token::Comma | Token::Hyphen => {
                return Err(ConstraintError(format!(
                    "improper constraint `{}`",
                    text.trim()
                )));
            }
            _ => {}
        }
        // A comparator: optional operator, then a version.
        let (op_text, version_index) = match tokens[i] {
            Token::Op(op) => (op, i + 1),
            _ => ("", i),
        };
        let version = match tokens.get(version_index) {
            Some(Token::Version(v)) => *v,
            _ => {
                return Err(ConstraintError(format!(
                    "improper constraint `{}`: operator `{op_text}` without a version",
                    text.trim()
                )));
            }
        };
        let (op, leftover) = split_op(op_text);
        if !leftover.is_empty() {
            return Err(ConstraintError(format!(
                "improper constraint `{}`: unknown operator `{op_text}`",
                text.trim()
            )));
        }
        i = version_index + 1;
        // `A - B`: a hyphen range, only without an operator.
        if op_text.is_empty() && tokens.get(i) == Some(&Token::Hyphen) {
            let upper = match tokens.get(i + 1) {
                Some(Token::Version(v)) => *v,
                _ => {
                    return Err(ConstraintError(format!(
                        "improper constraint `{}`: range `{version} -` without an upper bound",
                        text.trim()
                    )));
                }
            };
            comparators.push(parse_comparator_version(version, Op::GreaterEqual)?);
            comparators.push(parse_comparator_version(upper, Op::LessEqual)?);
            i += 2;
        } else {
            comparators.push(parse_comparator_version(version, op)?);
        }
        expect_comparator = false;
    }
    if expect_comparator {
        return Err(ConstraintError(format!(
            "improper constraint `{}`: trailing comma",
            text.trim()
        )));
    }
    let includes_prerelease = comparators.iter().any(|c| !c.version.pre.is_empty());
    Ok(Group {
        comparators,
        includes_prerelease,
    })
}

impl Constraints {
    /// Parses a constraint such as `>=1.2.0 <2`, `~1.4`, `^0.3 || 1.x` or `1.0 - 1.4`.
    pub fn parse(text: &str) -> Result<Self, ConstraintError> {
        let groups = text
            .split("||")
            .map(parse_group)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Constraints { groups })
    }

    /// Whether `version` satisfies the constraint.
    pub fn matches(&self, version: &Version) -> bool {
        self.groups.iter().any(|group| {
            (version.pre.is_empty() || group.includes_prerelease)
                && group.comparators.iter().all(|c| c.matches(version))
        })
    }
}

/// Ordering without build metadata (SemVer precedence).
fn compare(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

impl Comparator {
    /// Masterminds' checks, once the group's pre-release rule has let `v` through.
    fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => compare(v, c) == Ordering::Equal,
            Op::NotEqual => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    }
                    if self.minor_dirty {
                        return false;
                    }
                    if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    }
                    if self.patch_dirty {
                        return (!v.pre.is_empty() || !c.pre.is_empty()) && v.pre != c.pre;
                    }
                }
                compare(v, c) != Ordering::Equal
            }
            Op::Greater => {
                if !self.dirty {
                    return compare(v, c) == Ordering::Greater;
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
                compare(v, c) == Ordering::Greater
            }
            Op::Less => compare(v, c) == Ordering::Less,
            Op::GreaterEqual => compare(v, c) != Ordering::Less,
            Op::LessEqual => {
                if !self.dirty {
                    return compare(v, c) != Ordering::Greater;
                }
                if v.major > c.major {
                    return false;
                }
                !(v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            Op::Tilde => self.tilde(v),
            Op::Caret => {
                if compare(v, c) == Ordering::Less {
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
                v.patch == c.patch
            }
        }
    }

    /// `~1.2.3` is `>=1.2.3 <1.3.0`; `~1` is `>=1.0.0 <2.0.0`; `~0.0.0` and `*` match all.
    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if compare(v, c) == Ordering::Less {
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
}

/// The tag Helm would pull for `wanted`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selected {
    /// The tag as the registry lists it.
    pub tag: String,
    /// The chart version it stands for.
    pub version: Version,
}

/// Why no tag was selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectError {
    /// `wanted` is neither a listed version nor a valid constraint.
    BadConstraint(ConstraintError),
    /// No tag satisfies the constraint; `available` holds the highest versions listed.
    NoMatch { available: Vec<String> },
}

/// Picks the tag for `wanted` among `tags` as Helm does: tags that are not SemVer (after
/// `_` → `+`) are ignored; a version equal to `wanted` wins; otherwise the highest version
/// satisfying `wanted` as a constraint (empty: `*`, the highest stable version).
pub fn select(tags: &[String], wanted: &str) -> Result<Selected, SelectError> {
    let wanted = wanted.trim();
    let mut versions: Vec<(Version, &String)> = tags
        .iter()
        .filter_map(|tag| version_for_tag(tag).map(|v| (v, tag)))
        .collect();
    // Highest first; equal precedence ordered by build metadata, for a stable choice.
    versions.sort_by(|(a, _), (b, _)| compare(b, a).then_with(|| b.cmp(a)));
    if !wanted.is_empty()
        && let Some((version, tag)) = versions.iter().find(|(v, _)| v.to_string() == wanted)
    {
        return Ok(Selected {
            tag: (*tag).clone(),
            version: version.clone(),
        });
    }
    let constraint = Constraints::parse(if wanted.is_empty() { "*" } else { wanted })
        .map_err(SelectError::BadConstraint)?;
    versions
        .iter()
        .find(|(v, _)| constraint.matches(v))
        .map(|(version, tag)| Selected {
            tag: (*tag).clone(),
            version: version.clone(),
        })
        .ok_or_else(|| SelectError::NoMatch {
            available: versions
                .iter()
                .take(10)
                .map(|(v, _)| v.to_string())
                .collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    fn check(constraint: &str, version: &str) -> bool {
        Constraints::parse(constraint)
            .unwrap_or_else(|e| panic!("{constraint}: {e}"))
            .matches(&v(version))
    }

    /// TestConstraintsCheck of Masterminds semver v3 (constraints_test.go), verbatim.
    const MASTERMINDS_CHECK: &[(&str, &str, bool)] = &[
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
    ];

    /// Every case of Masterminds' table whose version is strict SemVer (the only versions
    /// tags can stand for; the table also has lenient ones like `1.4`).
    #[test]
    fn matches_like_masterminds() {
        let mut checked = 0;
        for (constraint, version, want) in MASTERMINDS_CHECK {
            let Ok(version) = Version::parse(version) else {
                continue;
            };
            let got = Constraints::parse(constraint)
                .unwrap_or_else(|e| panic!("{constraint}: {e}"))
                .matches(&version);
            assert_eq!(got, *want, "`{constraint}` against {version}");
            checked += 1;
        }
        assert!(checked > 100, "only {checked} cases checked");
    }

    /// Cases beyond Masterminds' table: `v` prefixes, build metadata, `-0` pre-release
    /// floors, comma and spacing variants, operator aliases.
    #[test]
    fn matches_other_common_forms() {
        let cases: &[(&str, &str, bool)] = &[
            ("v1.2.3", "1.2.3", true),
            ("=1.2.3+build.1", "1.2.3+build.2", true),
            (">=1.0.0-0", "1.0.0-alpha", true),
            (">=1.0.0-0 <2", "1.5.0-rc.1", true),
            (">=1.0.0 <2", "1.5.0-rc.1", false),
            (">=1.0.0-0 <2 || >=3", "3.1.0-rc.1", false),
            (">= 1.2 , < 3.0.0", "2.9.9", true),
            ("=> 1.2, =< 2", "2.9.9", true),
            ("~> 1.3", "1.3.9", true),
            ("1.2.3 - 1.4", "1.4.7", true),
            ("1.2.3 - 1.4", "1.5.0", false),
            ("^1.2.3", "1.9.0", true),
            ("^1.2.3", "2.0.0", false),
            ("*", "0.0.1", true),
            ("x", "3.0.0", true),
        ];
        for (constraint, version, want) in cases {
            assert_eq!(
                check(constraint, version),
                *want,
                "`{constraint}` against {version}"
            );
        }
    }

    /// TestNewConstraint of Masterminds semver v3: which inputs parse.
    #[test]
    fn parses_like_masterminds() {
        for good in [
            ">= 1.1",
            ">40.50.60, < 50.70",
            "2.0",
            "v2.3.5-20161202202307-sha.e8fc5e5",
            "v1.2.3-0abc",
            ">= 1.2.3 < 2.0",
            ">= 1.2.3 < 2.0 || => 3.0 < 4",
            ">= 1.2.3, < 2.0",
            ">= 1.2.3, < 2.0 || => 3.0, < 4",
            "3 - 4 || => 3.0, < 4",
            "12.3.34 ~1.2.3",
            "1.0.0 - 2.0.0, <=2.0.0",
        ] {
            assert!(
                Constraints::parse(good).is_ok(),
                "`{good}`: {:?}",
                Constraints::parse(good)
            );
        }
        for bad in [
            "v1.2.3-beta.01",
            ">= bar",
            "BAR >= 1.2.3",
            "12.3.4.1234",
            "12.23.4.1234",
            "12.3.34.1234",
            "12.3.34~ 1.2.3",
        ] {
            assert!(Constraints::parse(bad).is_err(), "`{bad}` should not parse");
        }
    }

    #[test]
    fn rejects_malformed_constraints() {
        for bad in [
            "",
            "   ",
            ">",
            ">= ",
            "1.2.3.4",
            "abc",
            "1.a",
            ">=1, ,<2",
            ">=1,",
            ", >=1",
            "1 -",
            "- 2",
            "=!1",
            "<<1",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3 || ",
            "1.2.3 - 2 - 3",
        ] {
            assert!(
                Constraints::parse(bad).is_err(),
                "`{bad}` should not parse: {:?}",
                Constraints::parse(bad)
            );
        }
    }

    #[test]
    fn tags_map_plus_to_underscore() {
        assert_eq!(tag_for_version("1.0.0+build.1"), "1.0.0_build.1");
        assert_eq!(tag_for_version("1.0.0"), "1.0.0");
        assert_eq!(version_for_tag("1.0.0_build.1"), Some(v("1.0.0+build.1")));
        assert_eq!(version_for_tag("latest"), None);
        assert_eq!(version_for_tag("v1.0.0"), None, "strict SemVer, as Helm");
        assert_eq!(version_for_tag("1.0"), None);
        assert_eq!(version_for_tag("sha256-abc.sig"), None);
    }

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn selects_as_helm_does() {
        let listed = tags(&[
            "0.1.0",
            "0.2.0",
            "1.0.0_build.1",
            "1.1.0-rc.1",
            "latest",
            "v9.9.9",
            "sha256-0123.sig",
            "0.10.0",
        ]);
        let pick = |wanted: &str| select(&listed, wanted).map(|s| s.tag);
        assert_eq!(pick("").unwrap(), "1.0.0_build.1", "highest stable");
        assert_eq!(pick("*").unwrap(), "1.0.0_build.1");
        assert_eq!(pick("0.2.0").unwrap(), "0.2.0");
        assert_eq!(pick("1.0.0+build.1").unwrap(), "1.0.0_build.1", "exact");
        assert_eq!(pick("1.0.0").unwrap(), "1.0.0_build.1", "= ignores build");
        assert_eq!(pick(">=0.1.0 <1.0.0").unwrap(), "0.10.0", "numeric order");
        assert_eq!(pick("~0.1").unwrap(), "0.1.0");
        assert_eq!(pick("^0.2").unwrap(), "0.2.0");
        assert_eq!(
            pick("1.1.0-rc.1").unwrap(),
            "1.1.0-rc.1",
            "exact pre-release"
        );
        assert_eq!(pick(">=1.1.0-0").unwrap(), "1.1.0-rc.1");
        assert_eq!(pick("0.x").unwrap(), "0.10.0");
        assert_eq!(
            pick("9.9.9"),
            Err(SelectError::NoMatch {
                available: ["1.1.0-rc.1", "1.0.0+build.1", "0.10.0", "0.2.0", "0.1.0"]
                    .map(String::from)
                    .to_vec()
            }),
            "v-prefixed tags are not versions"
        );
        assert!(matches!(pick(">=>1"), Err(SelectError::BadConstraint(_))));
        assert!(matches!(
            select(&tags(&["latest"]), ""),
            Err(SelectError::NoMatch { available }) if available.is_empty()
        ));
        assert!(
            matches!(
                select(&tags(&["1.0.0-rc.1"]), ""),
                Err(SelectError::NoMatch { .. })
            ),
            "only pre-releases: no stable version"
        );
    }
}
