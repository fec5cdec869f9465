//! Choosing a tag by SemVer range with the constraint syntax Helm and Flux accept
//! (Masterminds/semver): comparators separated by spaces or commas are all required,
//! `||` separates alternatives, `A - B` is an inclusive range, and operators may be
//! followed by a space. Tags may carry a leading `v`; pre-releases are considered only
//! when a comparator names one. The `semver` crate evaluates each comparator.

use semver::{Version, VersionReq};

/// A parsed constraint: any alternative may match; within one, every comparator must.
struct Constraint(Vec<VersionReq>);

fn parse(range: &str) -> Result<Constraint, String> {
    let invalid = |detail: String| format!("invalid SemVer range `{range}`: {detail}");
    let mut alternatives = Vec::new();
    for alternative in range.split("||") {
        let tokens: Vec<&str> = alternative
            .split([' ', ',', '\t'])
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.is_empty() {
            return Err(invalid("empty constraint".into()));
        }
        let mut comparators = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let token = tokens[i];
            if tokens.get(i + 1) == Some(&"-") {
                let upper = tokens
                    .get(i + 2)
                    .ok_or_else(|| invalid(format!("range `{token} -` has no upper bound")))?;
                comparators.push(format!(">={token}"));
                comparators.push(format!("<={upper}"));
                i += 3;
            } else if token.chars().all(|c| "<>=!~^".contains(c)) {
                let operand = tokens
                    .get(i + 1)
                    .ok_or_else(|| invalid(format!("operator `{token}` has no version")))?;
                comparators.push(format!("{token}{operand}"));
                i += 2;
            } else {
                comparators.push(token.to_owned());
                i += 1;
            }
        }
        let joined = comparators
            .iter()
            .map(|c| without_v(c))
            .collect::<Vec<_>>()
            .join(", ");
        alternatives.push(VersionReq::parse(&joined).map_err(|e| invalid(e.to_string()))?);
    }
    Ok(Constraint(alternatives))
}

/// `>=v1.2` -> `>=1.2`: the operator kept, a `v` before the version dropped.
fn without_v(comparator: &str) -> String {
    let split = comparator
        .find(|c: char| !"<>=!~^".contains(c))
        .unwrap_or(comparator.len());
    let (operator, version) = comparator.split_at(split);
    format!("{operator}{}", version.strip_prefix('v').unwrap_or(version))
}

/// The name of the highest tag whose version satisfies `range`.
pub fn highest_matching<'a>(
    range: &str,
    tags: impl Iterator<Item = &'a str>,
) -> Result<String, String> {
    let constraint = parse(range.trim())?;
    let mut best: Option<(Version, &str)> = None;
    for tag in tags {
        let Ok(version) = Version::parse(tag.strip_prefix('v').unwrap_or(tag)) else {
            continue;
        };
        if !constraint.0.iter().any(|req| req.matches(&version)) {
            continue;
        }
        if best.as_ref().is_none_or(|(b, _)| version > *b) {
            best = Some((version, tag));
        }
    }
    best.map(|(_, tag)| tag.to_owned())
        .ok_or_else(|| format!("no tag matches SemVer range `{range}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAGS: &[&str] = &[
        "v1.0.0",
        "v1.2.0",
        "1.3.0-rc.1",
        "v2.0.0",
        "latest",
        "v1.2.9",
        "v3.1.0",
    ];

    fn pick(range: &str) -> Result<String, String> {
        highest_matching(range, TAGS.iter().copied())
    }

    #[test]
    fn picks_the_highest_stable_match_in_every_syntax() {
        assert_eq!(pick(">=1.0.0, <2.0.0").unwrap(), "v1.2.9");
        assert_eq!(pick(">=1.0.0 <2.0.0").unwrap(), "v1.2.9");
        assert_eq!(pick(">= 1.0.0 < 1.2.5").unwrap(), "v1.2.0");
        assert_eq!(pick("^2").unwrap(), "v2.0.0");
        assert_eq!(pick("1.0.0 - 1.2.0").unwrap(), "v1.2.0");
        assert_eq!(pick("~1.0 || ^3").unwrap(), "v3.1.0");
        assert_eq!(pick(">=v1.2.0 <v1.3.0").unwrap(), "v1.2.9");
    }

    #[test]
    fn pre_releases_only_when_asked() {
        assert_eq!(pick(">=1.3.0-rc.0, <1.4.0").unwrap(), "1.3.0-rc.1");
        assert!(pick("~1.3").is_err());
    }

    #[test]
    fn bad_range_and_no_match_are_explained() {
        assert!(
            pick("nonsense!")
                .unwrap_err()
                .starts_with("invalid SemVer range `nonsense!`")
        );
        assert_eq!(
            pick(">=").unwrap_err(),
            "invalid SemVer range `>=`: operator `>=` has no version"
        );
        assert_eq!(pick("^9").unwrap_err(), "no tag matches SemVer range `^9`");
    }
}
