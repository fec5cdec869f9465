//! Differential-testing helper: reads hex-encoded YAML documents (one per line) on stdin
//! and prints, hex-encoded and tab-separated, what this crate gives for them: the
//! sigs.k8s.io/yaml parse as JSON, its error, go-yaml's typed parse error, `to_yaml`,
//! `to_yaml_pretty` and `to_toml` of the parsed value. A Go program doing the same with the
//! real libraries lets a script compare both (see the crate's tests for the oracle's shape).

use std::io::{BufRead, Write};

use capstan_gotmpl::value::Value;
use capstan_goyaml::format::json_float;

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> String {
    let bytes: Vec<u8> = (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn json(v: &Value, out: &mut String) {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&json_float(*f)),
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(x, out);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(&Value::from(k.as_str()), out);
                out.push(':');
                json(x, out);
            }
            out.push('}');
        }
        _ => out.push_str("null"),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let text = unhex(line.trim());
        let mut fields = vec![String::new(); 11];
        match capstan_goyaml::from_yaml(&text) {
            Err(e) => fields[1] = e.0,
            Ok(v) => {
                json(&v, &mut fields[0]);
                match capstan_goyaml::to_yaml(&v) {
                    Ok(y) => fields[3] = y,
                    Err(e) => fields[4] = e.0,
                }
                fields[5] = match capstan_goyaml::to_yaml_pretty(&v) {
                    Ok(y) => y,
                    Err(e) => format!("ERR {}", e.0),
                };
                match capstan_goyaml::to_toml(&v) {
                    Ok(t) => fields[6] = t,
                    Err(e) => fields[7] = e.0,
                }
            }
        }
        match capstan_goyaml::from_yaml_typed(&text) {
            Err(e) => fields[2] = e.0,
            Ok(v) => {
                let err = |e: capstan_goyaml::YamlError| format!("ERR {}", e.0);
                fields[8] = capstan_goyaml::to_yaml(&v).unwrap_or_else(err);
                fields[9] = capstan_goyaml::to_yaml_pretty(&v).unwrap_or_else(err);
                fields[10] = capstan_goyaml::to_toml(&v).unwrap_or_else(err);
            }
        }
        let encoded: Vec<String> = fields.iter().map(|f| hex(f)).collect();
        let _ = writeln!(stdout, "{}", encoded.join("\t"));
    }
}
