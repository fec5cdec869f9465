//! Semantic versions as Masterminds/semver v3 handles them: `semver` returns a
//! `*semver.Version` object (methods `Major`, `Minor`, `Patch`, `Prerelease`, `Metadata`,
//! `Original`, `String`; JSON and `%v` give its canonical string), and `semverCompare`
//! checks a constraint (`^`, `~`, `x`/`*` wildcards, ranges, `||`, and the rule that a
//! pre-release version only satisfies constraints that carry a pre-release).

use std::cmp::Ordering;
use std::rc::Rc;
use std::sync::OnceLock;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg_str};
use capstan_gotmpl::value::{Object, Value};
use regex::Regex;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("semver", 1, false, |args| {
        let version = Version::parse(arg_str(args, 0)?).map_err(FuncError::new)?;
        Ok(Value::Object(Rc::new(version)))
    });
    funcs.add("semverCompare", 2, false, |args| {
        let constraints = Constraints::parse(arg_str(args, 0)?).map_err(FuncError::new)?;
        let version = Version::parse(arg_str(args, 1)?).map_err(FuncError::new)?;
        Ok(Value::Bool(constraints.check(&version)))
    });
}

const CONSTRAINT_VERSION: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPERATORS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Patterns {
    version: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static PATTERNS: OnceLock<Option<Patterns>> = OnceLock::new();
    PATTERNS
        .get_or_init(|| {
            let (cv, ops) = (CONSTRAINT_VERSION, OPERATORS);
            Some(Patterns {
                version: Regex::new(
                    r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$",
                )
                .ok()?,
                constraint: Regex::new(&format!(r"^\s*({ops})\s*({cv})\s*$")).ok()?,
                range: Regex::new(&format!(r"\s*({cv})\s+-\s+({cv})\s*")).ok()?,
                find: Regex::new(&format!(r"({ops})\s*({cv})")).ok()?,
                valid: Regex::new(&format!(
                    r"^(\s*({ops})\s*({cv})\s*)((?:\s+|,\s*)({ops})\s*({cv})\s*)*$"
                ))
                .ok()?,
            })
        })
        .as_ref()
}

fn internal_error() -> String {
    "semver: pattern failed to compile".into()
}

/// A parsed version (`semver.Version`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

fn is_numeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn is_identifier(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn parse_segment(text: &str) -> Result<u64, String> {
    text.parse::<u64>().map_err(|_| {
        format!(
            "Error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
            capstan_gotmpl::gofmt::quote(text)
        )
    })
}

impl Version {
    /// `semver.NewVersion`: lenient (`v` prefix, missing minor/patch).
    pub fn parse(text: &str) -> Result<Version, String> {
        let patterns = patterns().ok_or_else(internal_error)?;
        let caps = patterns
            .version
            .captures(text)
            .ok_or_else(|| "Invalid Semantic Version".to_owned())?;
        let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
        let version = Version {
            major: parse_segment(group(1))?,
            minor: if group(2).is_empty() {
                0
            } else {
                parse_segment(&group(2)[1..])?
            },
            patch: if group(3).is_empty() {
                0
            } else {
                parse_segment(&group(3)[1..])?
            },
            pre: group(5).to_owned(),
            metadata: group(8).to_owned(),
            original: text.to_owned(),
        };
        if !version.pre.is_empty() {
            for part in version.pre.split('.') {
                if is_numeric(part) {
                    if part.len() > 1 && part.starts_with('0') {
                        return Err("Version segment starts with 0".into());
                    }
                } else if !is_identifier(part) {
                    return Err("Invalid Prerelease string".into());
                }
            }
        }
        if !version.metadata.is_empty() && !version.metadata.split('.').all(is_identifier) {
            return Err("Invalid Metadata string".into());
        }
        Ok(version)
    }

    /// `Version.String`: the canonical form.
    fn canonical(&self) -> String {
        let mut out = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            out.push('-');
            out.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            out.push('+');
            out.push_str(&self.metadata);
        }
        out
    }

    /// `Version.Compare` (metadata ignored; a release is above its pre-releases).
    fn compare(&self, other: &Version) -> Ordering {
        let numbers =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if numbers != Ordering::Equal {
            return numbers;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(&self.pre, &other.pre),
        }
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let (a_parts, b_parts): (Vec<&str>, Vec<&str>) =
        (a.split('.').collect(), b.split('.').collect());
    for i in 0..a_parts.len().max(b_parts.len()) {
        let ordering = compare_prerelease_part(
            a_parts.get(i).copied().unwrap_or(""),
            b_parts.get(i).copied().unwrap_or(""),
        );
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

fn compare_prerelease_part(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    if a.is_empty() {
        return Ordering::Less;
    }
    if b.is_empty() {
        return Ordering::Greater;
    }
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Err(_), Err(_)) => a.cmp(b),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(x), Ok(y)) => {
            if x > y {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
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
            "String" => Value::from(self.canonical()),
            other => return Err(format!("can't call method {other}")),
        })
    }
    fn format(&self) -> String {
        self.canonical()
    }
    fn to_data(&self) -> Value {
        Value::from(self.canonical())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
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

struct Constraint {
    version: Version,
    operator: Operator,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

/// `semver.Constraints`: alternatives (`||`) of constraints that must all hold.
struct Constraints {
    alternatives: Vec<Vec<Constraint>>,
}

fn is_wildcard(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraints {
    /// `semver.NewConstraint`.
    fn parse(text: &str) -> Result<Constraints, String> {
        let patterns = patterns().ok_or_else(internal_error)?;
        let rewritten = rewrite_ranges(patterns, text);
        let mut alternatives = Vec::new();
        for part in rewritten.split("||") {
            if !patterns.valid.is_match(part) {
                return Err(format!("improper constraint: {part}"));
            }
            let mut found: Vec<&str> = patterns.find.find_iter(part).map(|m| m.as_str()).collect();
            if found.is_empty() {
                found.push(part);
            }
            alternatives.push(
                found
                    .into_iter()
                    .map(|c| parse_constraint(patterns, c))
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(Constraints { alternatives })
    }

    fn check(&self, version: &Version) -> bool {
        self.alternatives
            .iter()
            .any(|all| all.iter().all(|c| c.check(version)))
    }
}

/// `rewriteRange`: `A - B` becomes `>= A, <= B`.
fn rewrite_ranges(patterns: &Patterns, text: &str) -> String {
    let mut out = text.to_owned();
    for caps in patterns.range.captures_iter(text) {
        let (whole, from, to) = (&caps[0], &caps[1], &caps[11]);
        out = out.replacen(whole, &format!(">= {from}, <= {to} "), 1);
    }
    out
}

fn parse_constraint(patterns: &Patterns, text: &str) -> Result<Constraint, String> {
    if text.is_empty() {
        return Ok(Constraint {
            version: Version::parse("0.0.0")?,
            operator: Operator::TildeOrEqual,
            minor_dirty: false,
            patch_dirty: false,
            dirty: true,
        });
    }
    let caps = patterns
        .constraint
        .captures(text)
        .ok_or_else(|| format!("improper constraint: {text}"))?;
    let group = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    let operator = match group(1) {
        "" | "=" => Operator::TildeOrEqual,
        "!=" => Operator::NotEqual,
        ">" => Operator::Greater,
        "<" => Operator::Less,
        ">=" | "=>" => Operator::GreaterOrEqual,
        "<=" | "=<" => Operator::LessOrEqual,
        "~" | "~>" => Operator::Tilde,
        _ => Operator::Caret,
    };
    let (major, minor, patch, pre) = (group(3), group(4), group(5), group(6));
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let text_version = if is_wildcard(major) {
        dirty = true;
        format!("0.0.0{pre}")
    } else if minor.is_empty() || is_wildcard(&minor[1..]) {
        minor_dirty = true;
        dirty = true;
        format!("{major}.0.0{pre}")
    } else if patch.is_empty() || is_wildcard(&patch[1..]) {
        dirty = true;
        patch_dirty = true;
        format!("{major}{minor}.0{pre}")
    } else {
        group(2).to_owned()
    };
    let version =
        Version::parse(&text_version).map_err(|_| "constraint Parser Error".to_owned())?;
    Ok(Constraint {
        version,
        operator,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        // A pre-release only satisfies constraints that name a pre-release.
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
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
                if v.major > c.major {
                    true
                } else if v.major < c.major || self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == Ordering::Greater
                }
            }
            Operator::Less => v.compare(c) == Ordering::Less,
            Operator::GreaterOrEqual => v.compare(c) != Ordering::Less,
            Operator::LessOrEqual => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major || v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            Operator::Tilde => self.tilde(v),
            Operator::TildeOrEqual => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            Operator::Caret => {
                if v.compare(c) == Ordering::Less {
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
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
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

#[cfg(test)]
mod tests {
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
