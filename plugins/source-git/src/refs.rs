//! Choosing a tag by SemVer range with the constraint syntax Helm and Flux accept
//! (Masterminds/semver, as implemented in `capstan_helm::semver`): comparators separated
//! by spaces or commas are all required, `||` separates alternatives, `A - B` is an
//! inclusive range. Tags may carry a leading `v`; pre-releases are considered only when
//! a comparator names one.

use capstan_helm::semver::{Constraints, highest_matching as highest_version};

/// The name of the highest tag whose version satisfies `range`.
pub fn highest_matching<'a>(
    range: &str,
    tags: impl Iterator<Item = &'a str>,
) -> Result<String, String> {
    let constraint = Constraints::parse(range.trim())
        .map_err(|e| format!("invalid SemVer range `{range}`: {e}"))?;
    highest_version(&constraint, tags)
        .map(str::to_owned)
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
            "invalid SemVer range `>=`: improper constraint: \">=\""
        );
        assert_eq!(pick("^9").unwrap_err(), "no tag matches SemVer range `^9`");
    }
}
