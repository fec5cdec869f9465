//! `.helmignore` rules as `helm package` applies them (Helm's `pkg/ignore`): Go
//! `filepath.Match` globs, basename matching for rules without a slash, a leading `/`
//! anchoring to the chart root, a trailing `/` for folders only. Rules are tried in order
//! and the first positive match ignores the path. A `!` rule is Helm's, not git's: a path
//! it does *not* match is ignored at once, a path it matches goes on to the next rule.
//! `**` is refused, as Helm refuses it. The rule `templates/.?*` is always appended.
//! Written here because no crate has Helm's exact rules.

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// The glob's characters, checked well formed when parsed.
    pattern: Vec<char>,
    negate: bool,
    folders_only: bool,
    whole_path: bool,
}

/// Parsed `.helmignore` rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules(Vec<Rule>);

impl Rules {
    /// Parse `.helmignore` text (empty text gives only the default rule).
    pub fn parse(text: &str) -> Result<Rules, String> {
        let mut rules = Vec::new();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (number, line) in text.lines().enumerate() {
            let mut rule = line.trim();
            if rule.is_empty() || rule.starts_with('#') {
                continue;
            }
            if rule.contains("**") {
                return Err(format!(
                    ".helmignore line {}: `**` is not supported",
                    number + 1
                ));
            }
            let negate = rule.starts_with('!');
            if negate {
                rule = &rule[1..];
            }
            let folders_only = rule.ends_with('/') && rule.len() > 1;
            if folders_only {
                rule = &rule[..rule.len() - 1];
            }
            let anchored = rule.starts_with('/');
            let pattern: Vec<char> = rule.trim_start_matches('/').chars().collect();
            if let Err(message) = matches_from(&pattern, &[], Checks::Syntax) {
                return Err(format!(
                    ".helmignore line {}: bad pattern `{}`: {message}",
                    number + 1,
                    rule.trim_start_matches('/')
                ));
            }
            rules.push(Rule {
                whole_path: anchored || pattern.contains(&'/'),
                pattern,
                negate,
                folders_only,
            });
        }
        rules.push(Rule {
            pattern: "templates/.?*".chars().collect(),
            negate: false,
            folders_only: false,
            whole_path: true,
        });
        Ok(Rules(rules))
    }

    /// Whether `path` (relative to the chart root, `/`-separated) is ignored.
    pub fn ignores(&self, path: &str, is_folder: bool) -> bool {
        if matches!(path, "" | "." | "./") {
            return false;
        }
        let path_chars: Vec<char> = path.chars().collect();
        let base_chars: Vec<char> = go_base(path).chars().collect();
        for rule in &self.0 {
            let subject = if rule.whole_path {
                &path_chars
            } else {
                &base_chars
            };
            // Patterns were checked when parsed: matching cannot fail.
            let matched = || matches_from(&rule.pattern, subject, Checks::None).unwrap_or(false);
            if rule.negate {
                if (rule.folders_only && !is_folder) || !matched() {
                    return true;
                }
                continue;
            }
            if (is_folder || !rule.folders_only) && matched() {
                return true;
            }
        }
        false
    }

    /// Whether a file is excluded, by itself or because a folder above it is.
    pub fn excludes_file(&self, path: &str) -> bool {
        self.excludes_file_noting(path, &mut std::collections::HashMap::new())
    }

    /// The files of `paths` that are kept, in order. Each folder is judged once, not once
    /// per file below it (a chart with vendored subcharts has thousands of files in a few
    /// dozen folders).
    pub fn kept<'p, T>(&self, items: &'p [T], path: impl Fn(&'p T) -> &'p str) -> Vec<&'p T> {
        let mut folders = std::collections::HashMap::new();
        items
            .iter()
            .filter(|item| !self.excludes_file_noting(path(item), &mut folders))
            .collect()
    }

    fn excludes_file_noting<'p>(
        &self,
        path: &'p str,
        folders: &mut std::collections::HashMap<&'p str, bool>,
    ) -> bool {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            let folder = &path[..end];
            let ignored = *folders
                .entry(folder)
                .or_insert_with(|| self.ignores(folder, true));
            if ignored {
                return true;
            }
            end += 1;
        }
        self.ignores(path, false)
    }
}

/// Go's `filepath.Base` for `/` paths: the last element, trailing slashes dropped.
fn go_base(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Go's `filepath.Match`: `*` (any run without `/`), `?` (one non-`/`), `[...]` classes
/// with ranges and `^` negation, `\` escapes; the whole name must match.
pub fn glob_match(pattern: &str, name: &str) -> Result<bool, String> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches_from(&p, &n, Checks::Syntax).map_err(|e| format!("bad pattern `{pattern}`: {e}"))
}

/// Whether a mismatch still reads the rest of the pattern to report a malformed one (as
/// Go does, even when an earlier character already failed to match), or returns at once
/// (the pattern was checked before: re-reading it on every mismatch made `.helmignore`
/// matching quadratic, a tenth of packing a large chart).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checks {
    Syntax,
    None,
}

fn matches_from(p: &[char], n: &[char], checks: Checks) -> Result<bool, &'static str> {
    let Some((&first, rest)) = p.split_first() else {
        return Ok(n.is_empty());
    };
    let mismatch = |rest: &[char]| match checks {
        Checks::Syntax => matches_from(rest, &[], checks).map(|_| false),
        Checks::None => Ok(false),
    };
    match first {
        '*' => {
            // Validate the remainder even when the name is exhausted.
            let mut verdict = matches_from(rest, n, checks)?;
            let mut i = 0;
            while !verdict && i < n.len() && n[i] != '/' {
                i += 1;
                verdict = matches_from(rest, &n[i..], checks)?;
            }
            Ok(verdict)
        }
        '?' => match n.split_first() {
            Some((&c, tail)) if c != '/' => matches_from(rest, tail, checks),
            _ => mismatch(rest),
        },
        '[' => {
            let (class_len, matched) = class(rest, n.first().copied())?;
            match n.split_first() {
                Some((&c, tail)) if c != '/' && matched => {
                    matches_from(&rest[class_len..], tail, checks)
                }
                _ => mismatch(&rest[class_len..]),
            }
        }
        '\\' => {
            let (&escaped, rest) = rest.split_first().ok_or("trailing backslash")?;
            match n.split_first() {
                Some((&c, tail)) if c == escaped => matches_from(rest, tail, checks),
                _ => mismatch(rest),
            }
        }
        literal => match n.split_first() {
            Some((&c, tail)) if c == literal => matches_from(rest, tail, checks),
            _ => mismatch(rest),
        },
    }
}

/// Parse a class after `[`; returns its length (through `]`) and whether `c` is in it.
fn class(p: &[char], c: Option<char>) -> Result<(usize, bool), &'static str> {
    let mut i = 0;
    let negated = matches!(p.first(), Some('^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let Some(&start) = p.get(i) else {
            return Err("unterminated character class");
        };
        if start == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let mut low = start;
        if low == '\\' {
            i += 1;
            low = *p.get(i).ok_or("trailing backslash")?;
        }
        i += 1;
        let mut high = low;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&ch| ch != ']') {
            high = p[i + 1];
            if high == '\\' {
                high = *p.get(i + 2).ok_or("trailing backslash")?;
                i += 1;
            }
            i += 2;
            if high < low {
                return Err("bad range in character class");
            }
        }
        if let Some(c) = c
            && low <= c
            && c <= high
        {
            matched = true;
        }
    }
    Ok((i, matched != negated))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_filepath_match_semantics() {
        assert!(glob_match("*.tgz", "a.tgz").unwrap());
        assert!(
            !glob_match("*.tgz", "dir/a.tgz").unwrap(),
            "* does not cross /"
        );
        assert!(glob_match("a?c", "abc").unwrap());
        assert!(glob_match("[a-c]x", "bx").unwrap());
        assert!(glob_match("[^a-c]x", "dx").unwrap());
        assert!(!glob_match("[^a-c]x", "bx").unwrap());
        assert!(glob_match("\\*", "*").unwrap());
        assert!(glob_match("[", "x").is_err());
    }

    #[test]
    fn helmignore_rules_as_helm_applies_them() {
        let rules = Rules::parse("# comment\n*.tgz\n/ci/\ndocs/*.md\n.git/\n").unwrap();
        assert!(
            rules.excludes_file("charts/sub-1.0.0.tgz"),
            "basename rule matches in any folder"
        );
        assert!(
            rules.excludes_file("ci/values.yaml"),
            "anchored folder rule"
        );
        assert!(
            !rules.excludes_file("templates/ci/x.yaml"),
            "anchored: only at the root"
        );
        assert!(rules.excludes_file("docs/a.md"));
        assert!(!rules.excludes_file("docs/sub/a.md"));
        assert!(rules.excludes_file(".git/config"));
        assert!(
            rules.excludes_file("templates/.hidden.yaml"),
            "default rule"
        );
        assert!(!rules.excludes_file("templates/deployment.yaml"));
        // Helm's negation: what the `!` rule does not match is ignored; what it matches
        // is judged by the rules after it.
        let negated = Rules::parse("!*.yaml\nsecret.yaml\n").unwrap();
        assert!(!negated.excludes_file("values.yaml"));
        assert!(negated.excludes_file("secret.yaml"));
        assert!(negated.excludes_file("README.md"));
        assert_eq!(
            Rules::parse("a\n**/b\n").unwrap_err(),
            ".helmignore line 2: `**` is not supported"
        );
    }

    #[test]
    fn ignore_table_from_helm() {
        // Helm pkg/ignore/rules_test.go TestIgnore (folders as in its fixtures).
        let folders = ["cargo", "cargo/", "mast/", ".", "./"];
        let cases = [
            ("helm.txt", "helm.txt", true),
            ("helm.*", "helm.txt", true),
            ("helm.*", "rudder.txt", false),
            ("*.txt", "tiller.txt", true),
            ("*.txt", "cargo/a.txt", true),
            ("cargo/*.txt", "cargo/a.txt", true),
            ("cargo/*.*", "cargo/a.txt", true),
            ("cargo/*.txt", "mast/a.txt", false),
            ("ru[c-e]?er.txt", "rudder.txt", true),
            ("templates/.?*", "templates/.dotfile", true),
            (".*", ".", false),
            (".*", "./", false),
            (".*", ".joonix", true),
            (".*", "helm.txt", false),
            (".*", "", false),
            ("cargo/", "cargo", true),
            ("cargo/", "cargo/", true),
            ("cargo/", "mast/", false),
            ("helm.txt/", "helm.txt", false),
            ("!helm.txt", "helm.txt", false),
            ("!helm.txt", "tiller.txt", true),
            ("!*.txt", "cargo", true),
            ("!cargo/", "mast/", true),
            ("/a.txt", "a.txt", true),
            ("/a.txt", "cargo/a.txt", false),
            ("/cargo/a.txt", "cargo/a.txt", true),
        ];
        for (pattern, name, expected) in cases {
            let rules = Rules::parse(pattern).unwrap();
            assert_eq!(
                rules.ignores(name, folders.contains(&name)),
                expected,
                "{name:?} with {pattern:?}"
            );
        }
    }

    #[test]
    fn parse_failures_from_helm() {
        // Helm TestParseFail.
        for rule in ["foo/**/bar", "[z-"] {
            assert!(Rules::parse(rule).is_err(), "{rule}");
        }
    }
}
