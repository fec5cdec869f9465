//! The functions Helm adds to Sprig: `include`, `tpl`, `required`, `fail`, the YAML/JSON/TOML
//! converters with Helm's error-swallowing behaviour, `lookup` through a caller-supplied
//! callback (`{}` when there is none, as in `helm template`), and `getHostByName` disabled.

use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_str};
use capstan_gotmpl::json;
use capstan_gotmpl::value::{Map, Value};

/// Marks around `required`/`fail` messages so the engine can report them on their own.
pub const WARN_START: &str = "HELM_ERR_START";
/// End marker.
pub const WARN_END: &str = "HELM_ERR_END";

/// A `lookup apiVersion kind namespace name` implementation.
pub type LookupFn = Rc<dyn Fn(&str, &str, &str, &str) -> Result<Value, String>>;

/// `toYaml`'s text: sigs.k8s.io/yaml output without its trailing newline; `""` on error.
pub fn to_yaml_text(value: &Value) -> String {
    match capstan_goyaml::to_yaml(value) {
        Ok(text) => text.strip_suffix('\n').map(str::to_owned).unwrap_or(text),
        Err(_) => String::new(),
    }
}

fn wrap(message: &str) -> FuncError {
    FuncError(format!("{WARN_START}{message}{WARN_END}"))
}

/// Sprig plus Helm's functions, as Helm's engine registers them.
pub fn helm_functions(lookup: Option<LookupFn>) -> FuncMap {
    let mut funcs = capstan_sprig::functions();
    funcs.remove("env");
    funcs.remove("expandenv");
    funcs.add_runtime("include", 2, false, |rt, args| {
        let name = arg_str(args, 0)?.to_owned();
        rt.execute_named(&name, arg(args, 1)).map(Value::from)
    });
    funcs.add_runtime("tpl", 2, false, |rt, args| {
        let text = arg_str(args, 0)?.to_owned();
        let out = rt.execute_text(&text, arg(args, 1)).map_err(|e| {
            FuncError(format!(
                "error during tpl function execution for {text:?}: {e}"
            ))
        })?;
        Ok(Value::from(out.replace("<no value>", "")))
    });
    funcs.add("required", 2, false, |args| {
        let warn = arg_str(args, 0)?;
        match &args[1] {
            Value::Nil => Err(wrap(warn)),
            Value::String(s) if s.is_empty() => Err(wrap(warn)),
            other => Ok(other.clone()),
        }
    });
    funcs.add("fail", 1, false, |args| Err(wrap(arg_str(args, 0)?)));
    funcs.add("toYaml", 1, false, |args| {
        Ok(Value::from(to_yaml_text(&args[0])))
    });
    funcs.add("mustToYaml", 1, false, |args| {
        capstan_goyaml::to_yaml(&args[0])
            .map(|t| Value::from(t.strip_suffix('\n').map(str::to_owned).unwrap_or(t)))
            .map_err(|e| FuncError(e.to_string()))
    });
    funcs.add("toYamlPretty", 1, false, |args| {
        Ok(Value::from(to_yaml_text(&args[0])))
    });
    funcs.add("fromYaml", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match capstan_goyaml::from_yaml(text) {
            Ok(Value::Map(m)) => Value::Map(m),
            Ok(Value::Nil) => Value::new_map(),
            Ok(other) => error_map(&format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )),
            Err(e) => error_map(&e.to_string()),
        })
    });
    funcs.add("fromYamlArray", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match capstan_goyaml::from_yaml(text) {
            Ok(Value::List(l)) => Value::List(l),
            Ok(Value::Nil) => Value::from(Vec::new()),
            Ok(other) => Value::from(vec![Value::from(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                json_kind(&other)
            ))]),
            Err(e) => Value::from(vec![Value::from(e.to_string())]),
        })
    });
    funcs.add("toJson", 1, false, |args| {
        Ok(Value::from(json::to_json(&args[0]).unwrap_or_default()))
    });
    funcs.add("mustToJson", 1, false, |args| {
        json::to_json(&args[0])
            .map(Value::from)
            .map_err(|e| FuncError(e.to_string()))
    });
    funcs.add("fromJson", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match json::from_json(text) {
            Ok(Value::Map(m)) => Value::Map(m),
            Ok(other) => error_map(&format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )),
            Err(e) => error_map(&e.to_string()),
        })
    });
    funcs.add("fromJsonArray", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match json::from_json(text) {
            Ok(Value::List(l)) => Value::List(l),
            Ok(other) => Value::from(vec![Value::from(format!(
                "json: cannot unmarshal {} into Go value of type []interface {{}}",
                json_kind(&other)
            ))]),
            Err(e) => Value::from(vec![Value::from(e.to_string())]),
        })
    });
    funcs.add("toToml", 1, false, |args| {
        Ok(Value::from(match crate::toml::to_toml(&args[0]) {
            Ok(text) => text,
            Err(e) => e,
        }))
    });
    funcs.add("mustToToml", 1, false, |args| {
        crate::toml::to_toml(&args[0])
            .map(Value::from)
            .map_err(FuncError)
    });
    funcs.add("getHostByName", 1, false, |_| Ok(Value::from("")));
    match lookup {
        Some(lookup) => funcs.add("lookup", 4, false, move |args| {
            let api_version = arg_str(args, 0)?;
            let kind = arg_str(args, 1)?;
            let namespace = arg_str(args, 2)?;
            let name = arg_str(args, 3)?;
            lookup(api_version, kind, namespace, name).map_err(FuncError)
        }),
        None => funcs.add("lookup", 4, false, |args| {
            for i in 0..4 {
                arg_str(args, i)?;
            }
            Ok(Value::new_map())
        }),
    }
    funcs
}

fn error_map(message: &str) -> Value {
    let mut map = Map::new();
    map.insert("Error".into(), Value::from(message));
    Value::from(map)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::List(_) => "array",
        Value::Map(_) => "object",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Nil => "null",
        _ => "number",
    }
}
