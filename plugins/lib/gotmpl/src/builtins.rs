//! Go's predefined template functions (`not len index slice print printf println html js
//! urlquery eq ne lt le gt ge call`) with Go's comparison rules and error wording. `and`
//! and `or` are registered here for parse-time checks but evaluated lazily by the executor.

use std::rc::Rc;

use crate::funcs::{FuncError, FuncMap, FuncResult};
use crate::gofmt;
use crate::value::Value;

/// The builtin function set.
pub fn builtins() -> FuncMap {
    let mut map = FuncMap::new();
    // Placeholders: the executor short-circuits `and`/`or` itself.
    map.add("and", 1, true, |args| {
        Ok(args.last().cloned().unwrap_or_default())
    });
    map.add("or", 1, true, |args| {
        Ok(args.last().cloned().unwrap_or_default())
    });
    map.add("not", 1, false, |args| Ok(Value::Bool(!args[0].is_true())));
    map.add("len", 1, false, |args| length(&args[0]));
    map.add("index", 1, true, |args| index(&args[0], &args[1..]));
    map.add("slice", 1, true, |args| slice(&args[0], &args[1..]));
    map.add("print", 0, true, |args| {
        Ok(Value::from(gofmt::sprint(args)))
    });
    map.add("println", 0, true, |args| {
        Ok(Value::from(gofmt::sprintln(args)))
    });
    map.add("printf", 1, true, |args| match &args[0] {
        Value::String(format) => Ok(Value::from(gofmt::sprintf(format, &args[1..]))),
        other => Err(crate::funcs::wrong_type("string", other)),
    });
    map.add("html", 0, true, |args| {
        Ok(Value::from(html_escape(&eval_args(args))))
    });
    map.add("js", 0, true, |args| {
        Ok(Value::from(js_escape(&eval_args(args))))
    });
    map.add("urlquery", 0, true, |args| {
        Ok(Value::from(query_escape(&eval_args(args))))
    });
    map.add("eq", 1, true, |args| {
        eq(&args[0], &args[1..]).map(Value::Bool)
    });
    map.add("ne", 2, false, |args| {
        eq(&args[0], &args[1..2]).map(|b| Value::Bool(!b))
    });
    map.add("lt", 2, false, |args| {
        lt(&args[0], &args[1]).map(Value::Bool)
    });
    map.add("le", 2, false, |args| {
        Ok(Value::Bool(
            lt(&args[0], &args[1])? || eq(&args[0], &args[1..2])?,
        ))
    });
    map.add("gt", 2, false, |args| {
        Ok(Value::Bool(
            !(lt(&args[0], &args[1])? || eq(&args[0], &args[1..2])?),
        ))
    });
    map.add("ge", 2, false, |args| {
        Ok(Value::Bool(!lt(&args[0], &args[1])?))
    });
    map.add("call", 1, true, |args| {
        Err(FuncError(format!(
            "non-function {} of type {}",
            args[0].to_go_string(),
            args[0].type_name()
        )))
    });
    map
}

fn length(item: &Value) -> FuncResult {
    let n = match item {
        Value::Nil => return Err(FuncError::new("len of nil pointer")),
        Value::String(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.borrow().len(),
        Value::Object(o) if o.entries().is_some() => o.entries().unwrap_or_default().len(),
        other => return Err(FuncError(format!("len of type {}", other.type_name()))),
    };
    Ok(Value::Int(n as i64))
}

fn index_arg(index: &Value, cap: usize) -> Result<usize, FuncError> {
    let x = match index {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Nil => return Err(FuncError::new("cannot index slice/array with nil")),
        other => {
            return Err(FuncError(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            )));
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(FuncError(format!("index out of range: {x}")));
    }
    Ok(x as usize)
}

/// Go's `index item i j ...`.
pub fn index(item: &Value, indexes: &[Value]) -> FuncResult {
    if item.is_nil() {
        return Err(FuncError::new("index of untyped nil"));
    }
    let mut item = item.clone();
    for index in indexes {
        item = match &item {
            Value::Nil => return Err(FuncError::new("index of nil pointer")),
            Value::List(l) => {
                let x = index_arg(index, l.len())?;
                if x >= l.len() {
                    return Err(FuncError(format!("index out of range: {x}")));
                }
                l[x].clone()
            }
            Value::String(s) => {
                let x = index_arg(index, s.len())?;
                match s.as_bytes().get(x) {
                    Some(b) => Value::Int(i64::from(*b)),
                    None => return Err(FuncError(format!("index out of range: {x}"))),
                }
            }
            Value::Bytes(b) => {
                let x = index_arg(index, b.len())?;
                match b.get(x) {
                    Some(byte) => Value::Int(i64::from(*byte)),
                    None => return Err(FuncError(format!("index out of range: {x}"))),
                }
            }
            Value::Map(m) => match index {
                Value::String(key) => m.borrow().get(&**key).cloned().unwrap_or_default(),
                Value::Nil => Value::Nil,
                other => {
                    return Err(FuncError(format!(
                        "value has type {}; should be string",
                        other.type_name()
                    )));
                }
            },
            other => {
                return Err(FuncError(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(item)
}

/// Go's `slice item i j [k]`.
pub fn slice(item: &Value, indexes: &[Value]) -> FuncResult {
    if item.is_nil() {
        return Err(FuncError::new("slice of untyped nil"));
    }
    if indexes.len() > 3 {
        return Err(FuncError(format!(
            "too many slice indexes: {}",
            indexes.len()
        )));
    }
    let len = match item {
        Value::String(s) => {
            if indexes.len() == 3 {
                return Err(FuncError::new("cannot 3-index slice a string"));
            }
            s.len()
        }
        Value::List(l) => l.len(),
        Value::Bytes(b) => b.len(),
        other => {
            return Err(FuncError(format!(
                "can't slice item of type {}",
                other.type_name()
            )));
        }
    };
    let mut bounds = [0, len, len];
    for (i, index) in indexes.iter().enumerate() {
        bounds[i] = index_arg(index, len)?;
    }
    if bounds[0] > bounds[1] {
        return Err(FuncError(format!(
            "invalid slice index: {} > {}",
            bounds[0], bounds[1]
        )));
    }
    if indexes.len() == 3 && bounds[1] > bounds[2] {
        return Err(FuncError(format!(
            "invalid slice index: {} > {}",
            bounds[1], bounds[2]
        )));
    }
    let (i, j) = (bounds[0], bounds[1]);
    Ok(match item {
        Value::String(s) => match s.get(i..j) {
            Some(part) => Value::from(part),
            None => Value::from(String::from_utf8_lossy(&s.as_bytes()[i..j]).into_owned()),
        },
        Value::List(l) => Value::from(l[i..j].to_vec()),
        Value::Bytes(b) => Value::Bytes(Rc::from(&b[i..j])),
        _ => Value::Nil,
    })
}

/// Go's `evalArgs`: a single string as is, otherwise `fmt.Sprint` of the arguments.
fn eval_args(args: &[Value]) -> String {
    if let [Value::String(s)] = args {
        return s.to_string();
    }
    gofmt::sprint(args)
}

/// Go's `template.HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 || c.is_control() => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Invalid,
    Bool,
    Int,
    Float,
    String,
    Other,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Nil => Kind::Invalid,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::String(_) => Kind::String,
        _ => Kind::Other,
    }
}

fn incompatible(a: &Value, b: &Value) -> FuncError {
    FuncError(format!(
        "incompatible types for comparison: {} and {}",
        a.type_name(),
        b.type_name()
    ))
}

/// Go's `eq arg1 arg2...`: true when `arg1` equals any of the others.
pub fn eq(arg1: &Value, others: &[Value]) -> Result<bool, FuncError> {
    if others.is_empty() {
        return Err(FuncError::new("missing argument for comparison"));
    }
    let k1 = basic_kind(arg1);
    for arg in others {
        let k2 = basic_kind(arg);
        let truth = if k1 != k2 {
            if k1 != Kind::Invalid && k2 != Kind::Invalid {
                return Err(incompatible(arg1, arg));
            }
            false
        } else {
            match (arg1, arg) {
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Int(a) | Value::Int64(a), Value::Int(b) | Value::Int64(b)) => a == b,
                (Value::Float(a), Value::Float(b)) => a == b,
                (Value::String(a), Value::String(b)) => a == b,
                (Value::Nil, Value::Nil) => true,
                (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b),
                (a, b) => {
                    return Err(FuncError(format!(
                        "non-comparable types {}: {}, {}: {}",
                        a.to_go_string(),
                        a.type_name(),
                        b.type_name(),
                        b.to_go_string()
                    )));
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Go's `lt arg1 arg2`.
pub fn lt(arg1: &Value, arg2: &Value) -> Result<bool, FuncError> {
    let (k1, k2) = (basic_kind(arg1), basic_kind(arg2));
    if matches!(k1, Kind::Bool | Kind::Other | Kind::Invalid) {
        return Err(FuncError::new("invalid type for comparison"));
    }
    if k1 != k2 {
        if k2 == Kind::Invalid || k2 == Kind::Other || k2 == Kind::Bool {
            return Err(FuncError::new("invalid type for comparison"));
        }
        return Err(incompatible(arg1, arg2));
    }
    Ok(match (arg1, arg2) {
        (Value::Int(a) | Value::Int64(a), Value::Int(b) | Value::Int64(b)) => a < b,
        (Value::Float(a), Value::Float(b)) => a < b,
        (Value::String(a), Value::String(b)) => a < b,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_go_rules() {
        assert!(eq(&Value::Int(1), &[Value::Int64(2), Value::Int64(1)]).unwrap());
        assert_eq!(
            eq(&Value::Float(42.0), &[Value::Int(42)]).unwrap_err().0,
            "incompatible types for comparison: float64 and int"
        );
        // A nil operand is not an error, just unequal.
        assert!(!eq(&Value::Nil, &[Value::from("x")]).unwrap());
        assert!(lt(&Value::from("a"), &Value::from("b")).unwrap());
    }

    #[test]
    fn index_follows_go() {
        let list = Value::from(vec![Value::from("a")]);
        assert_eq!(
            index(&list, &[Value::Int(9)]).unwrap_err().0,
            "index out of range: 9"
        );
        let map = Value::new_map();
        assert_eq!(
            index(&map, &[Value::from("x"), Value::from("y")])
                .unwrap_err()
                .0,
            "index of nil pointer"
        );
        assert_eq!(
            index(&Value::Nil, &[Value::from("x")]).unwrap_err().0,
            "index of untyped nil"
        );
    }

    #[test]
    fn escapers_match_go() {
        assert_eq!(
            html_escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&#34;"
        );
        assert_eq!(js_escape("a'b\"<=\n"), "a\\'b\\\"\\u003C\\u003D\\u000A");
        assert_eq!(query_escape("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    }
}
