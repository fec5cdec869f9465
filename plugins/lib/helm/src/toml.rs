//! `toToml`: the layout of the BurntSushi/toml encoder Helm uses — plain keys first, then
//! tables and arrays of tables with dotted headers, two-space indentation per depth, a blank
//! line before each header, floats always with a fraction. Written by hand because the Rust
//! `toml` crate lays documents out differently.

use capstan_gotmpl::value::Value;

/// Encode a map as TOML; errors use the encoder's wording.
pub fn to_toml(value: &Value) -> Result<String, String> {
    let data = value.to_data();
    let Value::Map(_) = data else {
        return Err(format!(
            "toml: top-level values must be Go maps or structs, not {}",
            data.type_name()
        ));
    };
    let mut out = String::new();
    write_table(&mut out, &[], &data, 0)?;
    Ok(out)
}

fn is_table(value: &Value) -> bool {
    matches!(value.to_data(), Value::Map(_))
}

fn is_table_array(value: &Value) -> bool {
    match value.to_data() {
        Value::List(l) => !l.is_empty() && l.iter().all(is_table),
        _ => false,
    }
}

fn key_text(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_owned()
    } else {
        quote(key)
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn scalar(value: &Value) -> Result<String, String> {
    Ok(match value.to_data() {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Float(f) => {
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                if f > 0.0 { "inf".into() } else { "-inf".into() }
            } else {
                let text = format!("{f}");
                if text.contains('.') {
                    text
                } else {
                    format!("{text}.0")
                }
            }
        }
        Value::String(s) => quote(&s),
        Value::Bytes(b) => quote(&String::from_utf8_lossy(&b)),
        Value::List(items) => {
            let parts = items
                .iter()
                .filter(|v| !v.is_nil())
                .map(scalar)
                .collect::<Result<Vec<_>, _>>()?;
            format!("[{}]", parts.join(", "))
        }
        Value::Map(_) => return Err("toml: inline table not supported here".into()),
        Value::Nil => return Err("toml: cannot encode a nil value".into()),
        Value::Object(_) => return Err("toml: unsupported type".into()),
    })
}

fn write_table(
    out: &mut String,
    path: &[String],
    table: &Value,
    depth: usize,
) -> Result<(), String> {
    let Value::Map(map) = table.to_data() else {
        return Ok(());
    };
    let entries: Vec<(String, Value)> = map
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let indent = "  ".repeat(depth);
    for (key, value) in &entries {
        if value.is_nil() || is_table(value) || is_table_array(value) {
            continue;
        }
        out.push_str(&indent);
        out.push_str(&key_text(key));
        out.push_str(" = ");
        out.push_str(&scalar(value)?);
        out.push('\n');
    }
    for (key, value) in &entries {
        let mut child_path = path.to_vec();
        child_path.push(key_text(key));
        let header_indent = "  ".repeat(child_path.len() - 1);
        if is_table(value) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("{header_indent}[{}]\n", child_path.join(".")));
            write_table(out, &child_path, value, child_path.len())?;
        } else if is_table_array(value) {
            if let Value::List(items) = value.to_data() {
                for item in items.iter() {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&format!("{header_indent}[[{}]]\n", child_path.join(".")));
                    write_table(out, &child_path, item, child_path.len())?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_gotmpl::value::Map;

    #[test]
    fn layout_matches_helm_to_toml() {
        // helm-parity snippet data-toToml-260: toToml (dict "a" 1 "b" (dict "c" "d")).
        let mut inner = Map::new();
        inner.insert("c".into(), Value::from("d"));
        let mut top = Map::new();
        top.insert("a".into(), Value::Int64(1));
        top.insert("b".into(), Value::from(inner));
        assert_eq!(
            to_toml(&Value::from(top)).unwrap(),
            "a = 1\n\n[b]\n  c = \"d\"\n"
        );
    }
}
