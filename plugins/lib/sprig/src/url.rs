//! URLs and network: `urlParse` and `urlJoin` with Go's `net/url` parsing and escaping
//! rules, and `getHostByName`, which answers "" as Helm does without `--enable-dns`.

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg_str};
use capstan_gotmpl::value::{Map, MapRef, Value};

use crate::values::map_or_nil;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("urlParse", 1, false, |args| {
        let raw = arg_str(args, 0)?;
        let url = parse(raw).map_err(|e| {
            FuncError::new(format!("unable to parse url: parse {}: {e}", go_quote(raw)))
        })?;
        let mut dict = Map::new();
        dict.insert("scheme".into(), Value::from(url.scheme.as_str()));
        dict.insert("host".into(), Value::from(url.host.as_str()));
        dict.insert("hostname".into(), Value::from(hostname(&url.host)));
        dict.insert("path".into(), Value::from(url.path.as_str()));
        dict.insert("query".into(), Value::from(url.raw_query.as_str()));
        dict.insert("opaque".into(), Value::from(url.opaque.as_str()));
        dict.insert("fragment".into(), Value::from(url.fragment.as_str()));
        let userinfo = url.user.as_ref().map(user_string).unwrap_or_default();
        dict.insert("userinfo".into(), Value::from(userinfo));
        Ok(Value::from(dict))
    });
    funcs.add("urlJoin", 1, false, |args| {
        let dict = map_or_nil(args, 0)?.unwrap_or_else(|| std::rc::Rc::new(Map::new().into()));
        let field = |key: &str| dict_string(&dict, key);
        let mut url = Url {
            scheme: field("scheme")?,
            host: field("host")?,
            path: field("path")?,
            raw_query: field("query")?,
            opaque: field("opaque")?,
            fragment: field("fragment")?,
            ..Url::default()
        };
        let userinfo = field("userinfo")?;
        if !userinfo.is_empty() {
            let temp = parse(&format!("proto://{userinfo}@host"))
                .map_err(|e| FuncError::new(format!("unable to parse userinfo in dict: {e}")))?;
            url.user = temp.user;
        }
        Ok(Value::from(url.to_string_go()))
    });
    funcs.add("getHostByName", 1, false, |args| {
        arg_str(args, 0)?;
        Ok(Value::from(""))
    });
}

/// Sprig's `dictGetOrEmpty`: a string field, "" when absent, a panic for other kinds.
fn dict_string(dict: &MapRef, key: &str) -> Result<String, FuncError> {
    match dict.borrow().get(key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(Value::Nil) => Err(crate::values::nil_dereference()),
        Some(other) => Err(FuncError::new(format!(
            "unable to parse {key} key, must be of type string, but {} found",
            other.kind_name()
        ))),
    }
}

fn go_quote(s: &str) -> String {
    capstan_gotmpl::gofmt::quote(s)
}

#[derive(Default, Debug)]
struct User {
    username: String,
    password: Option<String>,
}

#[derive(Default, Debug)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<User>,
    host: String,
    path: String,
    raw_query: String,
    force_query: bool,
    fragment: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Path,
    Host,
    UserPassword,
    Fragment,
}

/// `net/url`'s `shouldEscape`.
fn should_escape(c: u8, mode: Encoding) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Encoding::Host
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Encoding::Path => c == b'?',
                Encoding::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Encoding::Fragment => false,
                Encoding::Host => true,
            };
        }
        _ => {}
    }
    if mode == Encoding::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

/// `net/url`'s `escape` (never in query-component mode here).
fn escape(s: &str, mode: Encoding) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if should_escape(b, mode) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// `net/url`'s `unescape` for the non-query modes.
fn unescape(s: &str, mode: Encoding) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                        out.push(v);
                        i += 3;
                    }
                    _ => {
                        let end = (i + 3).min(bytes.len());
                        return Err(format!(
                            "invalid URL escape {}",
                            go_quote(&String::from_utf8_lossy(&bytes[i..end]))
                        ));
                    }
                }
            }
            c => {
                if mode == Encoding::Host && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&char::from(c).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `url.Parse`: the reference split into its parts (fragment unescaped).
fn parse(raw: &str) -> Result<Url, String> {
    let (rest, fragment) = match raw.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (raw, None),
    };
    let mut url = parse_without_fragment(rest)?;
    if let Some(fragment) = fragment {
        url.fragment = unescape(fragment, Encoding::Fragment)?;
    }
    Ok(url)
}

fn parse_without_fragment(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        let first_segment = rest.split('/').next().unwrap_or("");
        if first_segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        parse_authority(&mut url, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Encoding::Path)?;
    Ok(url)
}

/// `getScheme`: the scheme and the rest, or no scheme when the text does not start with one.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.char_indices() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if c.is_ascii_digit() || c == '+' || c == '-' || c == '.' {
            if i == 0 {
                return Ok(("", raw));
            }
            continue;
        }
        if c == ':' {
            if i == 0 {
                return Err("missing protocol scheme".into());
            }
            return Ok((&raw[..i], &raw[i + 1..]));
        }
        return Ok(("", raw));
    }
    Ok(("", raw))
}

fn parse_authority(url: &mut Url, authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    url.host = if host.starts_with('[') {
        host.to_owned()
    } else {
        unescape(host, Encoding::Host)?
    };
    if let Some(userinfo) = userinfo {
        let valid = userinfo
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c));
        if !valid {
            return Err("net/url: invalid userinfo".into());
        }
        url.user = Some(match userinfo.split_once(':') {
            Some((name, password)) => User {
                username: unescape(name, Encoding::UserPassword)?,
                password: Some(unescape(password, Encoding::UserPassword)?),
            },
            None => User {
                username: unescape(userinfo, Encoding::UserPassword)?,
                password: None,
            },
        });
    }
    Ok(())
}

/// `Userinfo.String`.
fn user_string(user: &User) -> String {
    let mut out = escape(&user.username, Encoding::UserPassword);
    if let Some(password) = &user.password {
        out.push(':');
        out.push_str(&escape(password, Encoding::UserPassword));
    }
    out
}

/// `URL.Hostname`: the host without port or IPv6 brackets.
fn hostname(host: &str) -> String {
    if let Some(inner) = host.strip_prefix('[') {
        return inner.split(']').next().unwrap_or("").to_owned();
    }
    match host.rfind(':') {
        Some(i) => host[..i].to_owned(),
        None => host.to_owned(),
    }
}

impl Url {
    /// `URL.String`.
    fn to_string_go(&self) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    out.push_str("//");
                }
                if let Some(user) = &self.user {
                    out.push_str(&user_string(user));
                    out.push('@');
                }
                out.push_str(&escape(&self.host, Encoding::Host));
            }
            let path = escape(&self.path, Encoding::Path);
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty() {
                let first = path.split('/').next().unwrap_or("");
                if first.contains(':') {
                    out.push_str("./");
                }
            }
            out.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&escape(&self.fragment, Encoding::Fragment));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml (shown here with %v).
        assert_eq!(
            show("urlParse", &[s("https://u:p@h:8/p?q=1#f")]),
            "map[fragment:f host:h:8 hostname:h opaque: path:/p query:q=1 scheme:https userinfo:u:p]"
        );
        assert_eq!(
            show(
                "urlJoin",
                &[map(&[
                    ("scheme", s("https")),
                    ("host", s("h")),
                    ("path", s("/p"))
                ])]
            ),
            "https://h/p"
        );
    }

    #[test]
    fn go_net_url_behaviour() {
        assert_eq!(
            show("urlParse", &[s("mailto:someone@example.com")]),
            "map[fragment: host: hostname: opaque:someone@example.com path: query: scheme:mailto userinfo:]"
        );
        assert_eq!(
            show("urlParse", &[s("/a%20b?x=1")]),
            "map[fragment: host: hostname: opaque: path:/a b query:x=1 scheme: userinfo:]"
        );
        assert_eq!(
            show(
                "urlJoin",
                &[map(&[
                    ("scheme", s("http")),
                    ("host", s("example.com:8080")),
                    ("path", s("a b")),
                    ("query", s("q=1")),
                    ("fragment", s("frag ment")),
                    ("userinfo", s("user:pass")),
                ])]
            ),
            "http://user:pass@example.com:8080/a%20b?q=1#frag%20ment"
        );
        assert_eq!(
            error("urlJoin", &[map(&[("host", i(1))])]),
            "unable to parse host key, must be of type string, but int found"
        );
        assert_eq!(show("getHostByName", &[s("example.com")]), "");
    }
}
