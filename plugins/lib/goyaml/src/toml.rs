//! The TOML that Helm's `toToml` prints: BurntSushi/toml's `Encoder` (two-space indent per
//! table level) on the template value: keys with plain values first, then tables and
//! arrays of tables, each group in byte order; nil map values skipped; floats with a forced
//! decimal (`1.0`, `1e+06`); quoted keys when not bare; and its error texts.

use std::rc::Rc;

use capstan_gotmpl::value::{Value, format_float_g};

const INDENT: &str = "  ";
const ERR_NIL_ELEMENT: &str = "toml: cannot encode array with nil element";
const ERR_NO_KEY: &str = "toml: top-level values must be Go maps or structs";

/// The encoder's view of a value's TOML type.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Nil,
    Scalar,
    Array,
    Table,
    ArrayOfTables,
}

fn data(v: &Value) -> Value {
    match v {
        Value::Object(o) => o.to_data(),
        other => other.clone(),
    }
}

fn kind_of(v: &Value, depth: usize) -> Result<Kind, String> {
    if depth > crate::DEFAULT_MAX_DEPTH {
        return Err("toml: value nested too deeply".into());
    }
    Ok(match v {
        Value::Nil => Kind::Nil,
        Value::Map(_) => Kind::Table,
        Value::List(items) => {
            if items.is_empty() {
                return Ok(Kind::Array);
            }
            let mut all_tables = true;
            for item in items.iter() {
                let k = kind_of(&data(item), depth + 1)?;
                if k == Kind::Nil {
                    return Err(ERR_NIL_ELEMENT.into());
                }
                if k != Kind::Table {
                    all_tables = false;
                }
            }
            if all_tables {
                Kind::ArrayOfTables
            } else {
                Kind::Array
            }
        }
        Value::Object(o) => kind_of(&o.to_data(), depth + 1)?,
        _ => Kind::Scalar,
    })
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0C' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\x7F' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

fn is_bare(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn quoted_key(k: &str) -> String {
    if is_bare(k) {
        k.to_string()
    } else {
        format!("\"{}\"", escape(k))
    }
}

fn key_string(key: &[String]) -> String {
    key.iter()
        .map(|k| quoted_key(k))
        .collect::<Vec<_>>()
        .join(".")
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    let s = format_float_g(f);
    if s.contains('e') || s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

struct Encoder {
    out: String,
    path: Vec<*const ()>,
}

impl Encoder {
    fn newline(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn indent(&mut self, key: &[String]) {
        for _ in 1..key.len() {
            self.out.push_str(INDENT);
        }
    }

    fn encode(&mut self, key: &[String], v: &Value, depth: usize) -> Result<(), String> {
        if depth > crate::DEFAULT_MAX_DEPTH {
            return Err("toml: value nested too deeply".into());
        }
        let v = data(v);
        match kind_of(&v, depth)? {
            Kind::Nil => Ok(()),
            Kind::Scalar | Kind::Array => self.key_value(key, &v, false, depth),
            Kind::ArrayOfTables => {
                if key.is_empty() {
                    return Err(ERR_NO_KEY.into());
                }
                let Value::List(items) = &v else {
                    return Ok(());
                };
                for item in items.iter() {
                    self.newline();
                    self.indent(key);
                    self.out.push_str(&format!("[[{}]]", key_string(key)));
                    self.newline();
                    self.map(key, &data(item), false, depth + 1)?;
                }
                Ok(())
            }
            Kind::Table => {
                if key.len() == 1 {
                    self.newline();
                }
                if !key.is_empty() {
                    self.indent(key);
                    self.out.push_str(&format!("[{}]", key_string(key)));
                    self.newline();
                }
                self.map(key, &v, false, depth + 1)
            }
        }
    }

    fn key_value(
        &mut self,
        key: &[String],
        v: &Value,
        inline: bool,
        depth: usize,
    ) -> Result<(), String> {
        if let Some(last) = key.last() {
            self.indent(key);
            self.out.push_str(&quoted_key(last));
            self.out.push_str(" = ");
            self.element(v, depth)?;
            if !inline {
                self.newline();
            }
        } else {
            self.element(v, depth)?;
        }
        Ok(())
    }

    fn element(&mut self, v: &Value, depth: usize) -> Result<(), String> {
        if depth > crate::DEFAULT_MAX_DEPTH {
            return Err("toml: value nested too deeply".into());
        }
        match v {
            Value::Nil => return Err(ERR_NIL_ELEMENT.into()),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => self.out.push_str(&i.to_string()),
            Value::Float(f) => self.out.push_str(&float_text(*f)),
            Value::String(s) => {
                self.out.push('"');
                self.out.push_str(&escape(s));
                self.out.push('"');
            }
            Value::Bytes(b) => {
                let parts: Vec<String> = b.iter().map(|x| x.to_string()).collect();
                self.out.push('[');
                self.out.push_str(&parts.join(", "));
                self.out.push(']');
            }
            Value::List(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    self.element(&data(item), depth + 1)?;
                    if i + 1 != items.len() {
                        self.out.push_str(", ");
                    }
                }
                self.out.push(']');
            }
            Value::Map(_) => self.map(&[], v, true, depth + 1)?,
            Value::Object(o) => self.element(&o.to_data(), depth + 1)?,
        }
        Ok(())
    }

    fn map(&mut self, key: &[String], v: &Value, inline: bool, depth: usize) -> Result<(), String> {
        let Value::Map(m) = v else {
            return Ok(());
        };
        let ptr = Rc::as_ptr(m) as *const ();
        if self.path.contains(&ptr) {
            return Err("toml: value nested too deeply".into());
        }
        self.path.push(ptr);
        let r = self.map_body(key, m, inline, depth);
        self.path.pop();
        r
    }

    fn map_body(
        &mut self,
        key: &[String],
        m: &capstan_gotmpl::value::MapRef,
        inline: bool,
        depth: usize,
    ) -> Result<(), String> {
        let entries: Vec<(String, Value)> = m
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), data(v)))
            .collect();
        let mut direct = Vec::new();
        let mut sub = Vec::new();
        for (k, v) in entries {
            match kind_of(&v, depth)? {
                Kind::Table | Kind::ArrayOfTables => sub.push((k, v)),
                _ => direct.push((k, v)),
            }
        }
        if inline {
            self.out.push('{');
        }
        let has_sub = !sub.is_empty();
        for (group, trailing_comma) in [(direct, has_sub), (sub, false)] {
            let n = group.len();
            for (i, (k, v)) in group.into_iter().enumerate() {
                if v.is_nil() {
                    continue;
                }
                if inline {
                    self.key_value(&[k], &v, true, depth)?;
                    if trailing_comma || i + 1 != n {
                        self.out.push_str(", ");
                    }
                } else {
                    let mut child = key.to_vec();
                    child.push(k);
                    self.encode(&child, &v, depth + 1)?;
                }
            }
        }
        if inline {
            self.out.push('}');
        }
        Ok(())
    }
}

/// What BurntSushi/toml's encoder writes for the value (Helm's `toToml`); errors carry the
/// encoder's text (`toml: cannot encode array with nil element`).
pub fn to_toml(v: &Value) -> Result<String, String> {
    let mut e = Encoder {
        out: String::new(),
        path: Vec::new(),
    };
    if data(v).is_nil() {
        // The Go encoder panics on a nil interface (Helm's template then fails).
        return Err("reflect: call of reflect.Value.Type on zero Value".into());
    }
    e.encode(&[], v, 0)?;
    Ok(e.out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_gotmpl::value::Map;

    fn dict(pairs: &[(&str, Value)]) -> Value {
        Value::from(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<Map>(),
        )
    }

    #[test]
    fn helm_snippet() {
        // snippets.yaml data-toToml-260: toToml (dict "a" 1 "b" (dict "c" "d")).
        let v = dict(&[
            ("a", Value::Int(1)),
            ("b", dict(&[("c", Value::from("d"))])),
        ]);
        assert_eq!(to_toml(&v).as_deref(), Ok("a = 1\n\n[b]\n  c = \"d\"\n"));
    }

    #[test]
    fn encoder_rules() {
        // BurntSushi/toml encode_test.go style expectations.
        let v = dict(&[
            ("f", Value::Float(1.0)),
            ("g", Value::Float(1e6)),
            ("s", Value::from("a\"b\n")),
            ("n", Value::Nil),
            ("l", Value::from(vec![Value::Int(1), Value::Int(2)])),
            ("e", Value::from(Vec::new())),
            ("key with space", Value::Bool(true)),
        ]);
        assert_eq!(
            to_toml(&v).as_deref(),
            Ok(
                "e = []\nf = 1.0\ng = 1e+06\n\"key with space\" = true\nl = [1, 2]\ns = \"a\\\"b\\n\"\n"
            )
        );
        let tables = dict(&[(
            "t",
            Value::from(vec![
                dict(&[("x", Value::Int(1))]),
                dict(&[("x", Value::Int(2))]),
            ]),
        )]);
        assert_eq!(
            to_toml(&tables).as_deref(),
            Ok("[[t]]\n  x = 1\n\n[[t]]\n  x = 2\n")
        );
        let nested = dict(&[("a", dict(&[("b", dict(&[("c", Value::Int(1))]))]))]);
        assert_eq!(to_toml(&nested).as_deref(), Ok("[a]\n  [a.b]\n    c = 1\n"));
        let inline = dict(&[(
            "m",
            Value::from(vec![dict(&[("x", Value::Int(1))]), Value::Int(2)]),
        )]);
        assert_eq!(to_toml(&inline).as_deref(), Ok("m = [{x = 1}, 2]\n"));
        // BurntSushi/toml encode_test.go "array of tables order", "tbl-in-arr-map",
        // "empty key name", "key with \n escape" (compared after trimming, as there).
        let v = dict(&[(
            "map",
            dict(&[
                ("zero", Value::Int(5)),
                ("arr", Value::from(vec![dict(&[("friend", Value::Int(5))])])),
            ]),
        )]);
        assert_eq!(
            to_toml(&v).as_deref(),
            Ok("[map]\n  zero = 5\n\n  [[map.arr]]\n    friend = 5\n")
        );
        let ab = |a: i64, b: i64| dict(&[("A", Value::Int(a)), ("B", Value::Int(b))]);
        let v = dict(&[(
            "arr",
            Value::from(vec![Value::from(vec![dict(&[
                (
                    "a",
                    Value::from(vec![Value::from("hello"), Value::from("world")]),
                ),
                (
                    "b",
                    Value::from(vec![Value::Float(1.12), Value::Float(4.1)]),
                ),
                ("c", Value::Int(1)),
                ("d", dict(&[("e", Value::from("E"))])),
                ("f", ab(1, 2)),
                ("g", Value::from(vec![ab(3, 4), ab(5, 6)])),
            ])])]),
        )]);
        assert_eq!(
            to_toml(&v).map(|s| s.trim().to_string()).as_deref(),
            Ok(
                r#"arr = [[{a = ["hello", "world"], b = [1.12, 4.1], c = 1, d = {e = "E"}, f = {A = 1, B = 2}, g = [{A = 3, B = 4}, {A = 5, B = 6}]}]]"#
            )
        );
        assert_eq!(
            to_toml(&dict(&[("", Value::Int(1))])).as_deref(),
            Ok("\"\" = 1\n")
        );
        assert_eq!(
            to_toml(&dict(&[("\n", Value::from("\n"))])).as_deref(),
            Ok("\"\\n\" = \"\\n\"\n")
        );
        let bad = dict(&[("l", Value::from(vec![Value::Nil]))]);
        assert_eq!(to_toml(&bad), Err(ERR_NIL_ELEMENT.to_string()));
        assert_eq!(to_toml(&Value::from("x")).as_deref(), Ok("\"x\""));
        assert!(to_toml(&Value::Nil).is_err());
    }
}
