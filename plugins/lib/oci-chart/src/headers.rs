//! Parsing of the response headers a registry client needs: `WWW-Authenticate` challenges
//! (RFC 7235, as registries send them) and `Link` pagination (RFC 8288).

use std::collections::BTreeMap;

/// One authentication challenge, e.g. `Bearer realm="https://auth/token",service="reg"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// Scheme in lowercase: `basic`, `bearer`, ...
    pub scheme: String,
    /// Parameters with lowercase names.
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    /// The value of parameter `name` (lowercase).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn skip_spaces_and_commas(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | ',')) {
            self.at += 1;
        }
    }

    fn token(&mut self) -> &'a str {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += self.peek().map_or(0, char::len_utf8);
        }
        &self.text[start..self.at]
    }

    /// An unquoted parameter value: up to the next comma or space (more lenient than a
    /// token, so `realm=https://auth/token` reads whole).
    fn unquoted(&mut self) -> &'a str {
        let start = self.at;
        while self.peek().is_some_and(|c| !matches!(c, ',' | ' ' | '\t')) {
            self.at += self.peek().map_or(0, char::len_utf8);
        }
        &self.text[start..self.at]
    }

    /// A quoted string (after its opening quote) with `\` escapes.
    fn quoted(&mut self) -> String {
        let mut value = String::new();
        let mut chars = self.text[self.at..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return value;
                }
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                c => value.push(c),
            }
        }
        self.at = self.text.len();
        value
    }
}

/// Every challenge of one `WWW-Authenticate` value (several may share one header).
/// Malformed parts are skipped rather than failing the whole header.
pub fn parse_challenges(header: &str) -> Vec<Challenge> {
    let mut cursor = Cursor {
        text: header,
        at: 0,
    };
    let mut challenges = Vec::new();
    loop {
        cursor.skip_spaces_and_commas();
        if cursor.peek().is_none() {
            break;
        }
        let scheme = cursor.token();
        if scheme.is_empty() {
            // Not a token: skip one character and resynchronise.
            cursor.at += cursor.peek().map_or(1, char::len_utf8);
            continue;
        }
        let mut challenge = Challenge {
            scheme: scheme.to_ascii_lowercase(),
            params: BTreeMap::new(),
        };
        loop {
            cursor.skip_spaces_and_commas();
            let before = cursor.at;
            let name = cursor.token();
            cursor.skip_spaces();
            if name.is_empty() || cursor.peek() != Some('=') {
                // The next challenge's scheme (or a token68, ignored).
                cursor.at = before;
                break;
            }
            cursor.at += 1; // '='
            // token68 padding (`abc==`): not a parameter.
            if cursor.peek() == Some('=') {
                while cursor.peek() == Some('=') {
                    cursor.at += 1;
                }
                continue;
            }
            cursor.skip_spaces();
            let value = if cursor.peek() == Some('"') {
                cursor.at += 1;
                cursor.quoted()
            } else {
                cursor.unquoted().to_owned()
            };
            challenge.params.insert(name.to_ascii_lowercase(), value);
        }
        // A token68 after the scheme (e.g. `Negotiate abc`) ends up as a "scheme" of its
        // own in the next round; harmless, as only `basic` and `bearer` are used.
        challenges.push(challenge);
    }
    challenges
}

/// The target of the `rel="next"` link in a `Link` header value, if any.
pub fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>')?;
        let target = &after[..close];
        let params_end = after[close..].find('<').map_or(after.len(), |i| close + i);
        let params = &after[close + 1..params_end];
        let is_next = params.split(';').any(|param| {
            let Some((name, value)) = param.split_once('=') else {
                return false;
            };
            name.trim().eq_ignore_ascii_case("rel")
                && value
                    .trim()
                    .trim_end_matches(',')
                    .trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target.trim().to_owned());
        }
        rest = &after[params_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn parses_registry_challenges() {
        assert_eq!(
            parse_challenges(
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#
            ),
            vec![Challenge {
                scheme: "bearer".into(),
                params: params(&[
                    ("realm", "https://auth.docker.io/token"),
                    ("service", "registry.docker.io"),
                    ("scope", "repository:library/nginx:pull"),
                ]),
            }]
        );
        assert_eq!(
            parse_challenges(r#"Basic realm="capstan-test""#),
            vec![Challenge {
                scheme: "basic".into(),
                params: params(&[("realm", "capstan-test")]),
            }]
        );
        // Several challenges in one value, spaces around `=`, unquoted values, escapes,
        // scopes with commas inside quotes.
        assert_eq!(
            parse_challenges(
                r#"Basic realm="a \"b\"", BEARER Realm = https://x/token , service=reg, scope="repository:a/b:pull,push""#
            ),
            vec![
                Challenge {
                    scheme: "basic".into(),
                    params: params(&[("realm", r#"a "b""#)]),
                },
                Challenge {
                    scheme: "bearer".into(),
                    params: params(&[
                        ("realm", "https://x/token"),
                        ("service", "reg"),
                        ("scope", "repository:a/b:pull,push"),
                    ]),
                },
            ]
        );
        assert_eq!(
            parse_challenges("Basic"),
            vec![Challenge {
                scheme: "basic".into(),
                params: BTreeMap::new()
            }]
        );
        assert!(parse_challenges("").is_empty());
        // Garbage does not panic.
        for junk in [
            "\"",
            "=",
            "Bearer realm=\"unterminated",
            "Bearer ,,, =x",
            "é=ü",
            "a b=c d",
        ] {
            let _ = parse_challenges(junk);
        }
        let c = parse_challenges("Bearer realm=\"unterminated");
        assert_eq!(c[0].param("realm"), Some("unterminated"));
    }

    #[test]
    fn finds_the_next_link() {
        assert_eq!(
            next_link(r#"</v2/charts/hello/tags/list?last=0.2.0&n=2>; rel="next""#).as_deref(),
            Some("/v2/charts/hello/tags/list?last=0.2.0&n=2")
        );
        assert_eq!(
            next_link(r#"<https://a/prev>; rel="prev", <https://a/next?x=1>; rel=next"#).as_deref(),
            Some("https://a/next?x=1")
        );
        assert_eq!(next_link(r#"<https://a/prev>; rel="prev""#), None);
        assert_eq!(next_link(""), None);
        assert_eq!(next_link("<unterminated; rel=next"), None);
    }
}
