//! Glob patterns as Helm's `.Files.Glob` compiles them (gobwas/glob with `/` as the
//! separator): `*` stays within a path segment, `**` crosses segments, `?` is one
//! non-separator character, `[abc]`/`[!a-z]` classes, `{a,b}` alternatives and `\`
//! escapes. A pattern that does not compile matches everything, as Helm falls back to `**`.

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    alternatives: Vec<Vec<Token>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Literal(char),
    AnyInSegment,
    AnyAcross,
    One,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Glob {
    /// Compile; an invalid pattern becomes `**` (match all), like Helm.
    pub fn new(pattern: &str) -> Glob {
        match expand_braces(pattern).and_then(|alts| {
            alts.iter()
                .map(|alt| tokenize(alt))
                .collect::<Option<Vec<_>>>()
        }) {
            Some(alternatives) => Glob { alternatives },
            None => Glob {
                alternatives: vec![vec![Token::AnyAcross]],
            },
        }
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        let chars: Vec<char> = name.chars().collect();
        self.alternatives
            .iter()
            .any(|tokens| match_tokens(tokens, &chars))
    }
}

/// Expand `{a,b}` alternatives (nested allowed) into plain patterns.
fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut escaped = false;
    while i < chars.len() {
        let c = chars[i];
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '{' {
            // Find the matching close brace and top-level commas.
            let mut depth = 0;
            let mut parts = Vec::new();
            let mut start = i + 1;
            let mut j = i;
            let mut esc = false;
            let mut end = None;
            while j < chars.len() {
                let d = chars[j];
                if esc {
                    esc = false;
                } else if d == '\\' {
                    esc = true;
                } else if d == '{' {
                    depth += 1;
                } else if d == '}' {
                    depth -= 1;
                    if depth == 0 {
                        parts.push(chars[start..j].iter().collect::<String>());
                        end = Some(j);
                        break;
                    }
                } else if d == ',' && depth == 1 {
                    parts.push(chars[start..j].iter().collect::<String>());
                    start = j + 1;
                }
                j += 1;
            }
            let end = end?;
            let prefix: String = chars[..i].iter().collect();
            let suffix: String = chars[end + 1..].iter().collect();
            let mut out = Vec::new();
            for part in parts {
                for expanded in expand_braces(&format!("{prefix}{part}{suffix}"))? {
                    out.push(expanded);
                }
            }
            return Some(out);
        } else if c == '}' {
            return None;
        }
        i += 1;
    }
    Some(vec![pattern.to_owned()])
}

fn tokenize(pattern: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                tokens.push(Token::Literal(*chars.get(i + 1)?));
                i += 2;
                continue;
            }
            '*' => {
                if chars.get(i + 1) == Some(&'*') {
                    tokens.push(Token::AnyAcross);
                    i += 2;
                    while chars.get(i) == Some(&'*') {
                        i += 1;
                    }
                    continue;
                }
                tokens.push(Token::AnyInSegment);
            }
            '?' => tokens.push(Token::One),
            '[' => {
                let mut j = i + 1;
                let negated = chars.get(j) == Some(&'!');
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    let c = *chars.get(j)?;
                    if c == ']' {
                        break;
                    }
                    if chars.get(j + 1) == Some(&'-') && chars.get(j + 2).is_some_and(|&e| e != ']')
                    {
                        ranges.push((c, chars[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((c, c));
                        j += 1;
                    }
                }
                tokens.push(Token::Class { negated, ranges });
                i = j;
            }
            c => tokens.push(Token::Literal(c)),
        }
        i += 1;
    }
    Some(tokens)
}

fn match_tokens(tokens: &[Token], name: &[char]) -> bool {
    // Iterative backtracking over positions (memoised to stay linear-ish).
    let mut memo = vec![vec![None; name.len() + 1]; tokens.len() + 1];
    match_at(tokens, name, 0, 0, &mut memo)
}

fn match_at(
    tokens: &[Token],
    name: &[char],
    t: usize,
    n: usize,
    memo: &mut Vec<Vec<Option<bool>>>,
) -> bool {
    if let Some(done) = memo[t][n] {
        return done;
    }
    let result = match tokens.get(t) {
        None => n == name.len(),
        Some(Token::Literal(c)) => {
            name.get(n) == Some(c) && match_at(tokens, name, t + 1, n + 1, memo)
        }
        Some(Token::One) => {
            name.get(n).is_some_and(|&c| c != '/') && match_at(tokens, name, t + 1, n + 1, memo)
        }
        Some(Token::Class { negated, ranges }) => {
            name.get(n).is_some_and(|&c| {
                let inside = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                inside != *negated
            }) && match_at(tokens, name, t + 1, n + 1, memo)
        }
        Some(Token::AnyInSegment) => {
            let mut end = n;
            loop {
                if match_at(tokens, name, t + 1, end, memo) {
                    break true;
                }
                if end >= name.len() || name[end] == '/' {
                    break false;
                }
                end += 1;
            }
        }
        Some(Token::AnyAcross) => {
            (n..=name.len()).any(|end| match_at(tokens, name, t + 1, end, memo))
        }
    };
    memo[t][n] = Some(result);
    result
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn gobwas_semantics_with_slash_separator() {
        // Cases from gobwas/glob's documentation and Helm's files_test.go.
        assert!(Glob::new("*.conf").matches("a.conf"));
        assert!(!Glob::new("*.conf").matches("dir/a.conf"));
        assert!(Glob::new("files/*").matches("files/a.txt"));
        assert!(!Glob::new("files/*").matches("files/sub/a.txt"));
        assert!(Glob::new("files/**").matches("files/sub/a.txt"));
        assert!(Glob::new("**.toml").matches("x/y/z.toml"));
        assert!(Glob::new("story.{txt,md}").matches("story.md"));
        assert!(Glob::new("[!a]?.txt").matches("bc.txt"));
        assert!(!Glob::new("[!a]?.txt").matches("ac.txt"));
        assert!(Glob::new("ab[0-9]").matches("ab7"));
        // Unclosed class: Helm falls back to "**".
        assert!(Glob::new("[abc").matches("any/thing"));
    }
}
