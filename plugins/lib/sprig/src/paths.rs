//! Path functions: Go's `path` package (`base`, `dir`, `clean`, `ext`, `isAbs`) and
//! `path/filepath` (`osBase`, `osClean`, `osDir`, `osExt`, `osIsAbs`), which on the Unix-like
//! systems Helm runs on behave the same.

use capstan_gotmpl::funcs::{FuncMap, arg_str};
use capstan_gotmpl::value::Value;

pub(crate) fn register(funcs: &mut FuncMap) {
    for (plain, os) in [
        ("base", "osBase"),
        ("dir", "osDir"),
        ("clean", "osClean"),
        ("ext", "osExt"),
    ] {
        let operation: fn(&str) -> String = match plain {
            "base" => base,
            "dir" => dir,
            "clean" => clean,
            _ => ext,
        };
        for name in [plain, os] {
            funcs.add(name, 1, false, move |args| {
                Ok(Value::from(operation(arg_str(args, 0)?)))
            });
        }
    }
    for name in ["isAbs", "osIsAbs"] {
        funcs.add(name, 1, false, |args| {
            Ok(Value::Bool(arg_str(args, 0)?.starts_with('/')))
        });
    }
}

/// `path.Clean`: the shortest equivalent path, by lexical processing.
pub fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for element in path.split('/') {
        match element {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// `path.Base`: the last element, trailing slashes removed.
fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_owned()
}

/// `path.Dir`: everything before the last element, cleaned.
fn dir(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    clean(&path[..cut])
}

/// `path.Ext`: the suffix from the final dot of the last element.
fn ext(path: &str) -> String {
    for (i, c) in path.char_indices().rev() {
        match c {
            '/' => break,
            '.' => return path[i..].to_owned(),
            _ => {}
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("base", &[s("a/b/c.txt")]), "c.txt");
        assert_eq!(show("dir", &[s("a/b/c.txt")]), "a/b");
        assert_eq!(show("ext", &[s("a/b/c.txt")]), ".txt");
        assert_eq!(show("clean", &[s("a//b/../c")]), "a/c");
        assert_eq!(show("isAbs", &[s("/a")]), "true");
    }

    #[test]
    fn go_path_examples() {
        // Examples from Go's path package documentation.
        for (input, cleaned) in [
            ("a/c", "a/c"),
            ("a//c", "a/c"),
            ("a/c/.", "a/c"),
            ("a/c/b/..", "a/c"),
            ("/../a/c", "/a/c"),
            ("/../a/b/../././/c", "/a/c"),
            ("", "."),
            ("../../x", "../../x"),
        ] {
            assert_eq!(show("clean", &[s(input)]), cleaned, "{input}");
        }
        assert_eq!(show("base", &[s("/a/b/")]), "b");
        assert_eq!(show("base", &[s("///")]), "/");
        assert_eq!(show("base", &[s("")]), ".");
        assert_eq!(show("dir", &[s("/a/b/c")]), "/a/b");
        assert_eq!(show("dir", &[s("a/b/c/")]), "a/b/c");
        assert_eq!(show("dir", &[s("x")]), ".");
        assert_eq!(show("ext", &[s("/a/b.c/d")]), "");
        assert_eq!(show("osBase", &[s("/x/y.tar.gz")]), "y.tar.gz");
        assert_eq!(show("osExt", &[s("/x/y.tar.gz")]), ".gz");
        assert_eq!(show("osIsAbs", &[s("x")]), "false");
    }
}
