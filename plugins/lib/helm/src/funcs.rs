//! The functions Helm adds to Sprig: `include`, `tpl`, `required`, `fail`, the YAML/JSON/TOML
//! converters with Helm's error-swallowing behaviour, `lookup` through a caller-supplied
//! callback (`{}` when there is none, as in `helm template`), and `getHostByName` disabled.

use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_str};
use capstan_gotmpl::json::{self, JsonTarget};
use capstan_gotmpl::value::{Map, Value};
pub use capstan_sprig::{
    BCRYPT_COST, BcryptFn, BcryptStartFn, CryptoOffload, PendingHash, RsaKeySource, RsaSignFn,
    bcrypt_here, generate_rsa_key_der,
};

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
pub fn helm_functions(lookup: Option<LookupFn>, crypto: CryptoOffload) -> FuncMap {
    let mut funcs = capstan_sprig::functions_with(crypto);
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
        Ok(Value::from(
            match capstan_goyaml::to_yaml_pretty(&args[0]) {
                Ok(text) => text.strip_suffix('\n').map(str::to_owned).unwrap_or(text),
                Err(_) => String::new(),
            },
        ))
    });
    funcs.add("fromYaml", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match capstan_goyaml::from_yaml_map(text) {
            Ok(Value::Nil) => Value::new_map(),
            Ok(map) => map,
            Err(e) => error_map(&e.to_string()),
        })
    });
    funcs.add("fromYamlArray", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match capstan_goyaml::from_yaml_array(text) {
            Ok(Value::Nil) => Value::from(Vec::new()),
            Ok(list) => list,
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
        let (value, error) = json::unmarshal(text, JsonTarget::Map);
        let value = if value.is_nil() {
            Value::new_map()
        } else {
            value
        };
        if let (Some(error), Value::Map(map)) = (error, &value) {
            map.borrow_mut()
                .insert("Error".into(), Value::from(error.to_string()));
        }
        Ok(value)
    });
    funcs.add("fromJsonArray", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match json::unmarshal(text, JsonTarget::List) {
            (_, Some(error)) => Value::from(vec![Value::from(error.to_string())]),
            (Value::Nil, None) => Value::from(Vec::new()),
            (list, None) => list,
        })
    });
    funcs.add("toToml", 1, false, |args| {
        Ok(Value::from(match capstan_goyaml::to_toml(&args[0]) {
            Ok(text) => text,
            Err(e) => e.to_string(),
        }))
    });
    funcs.add("mustToToml", 1, false, |args| {
        capstan_goyaml::to_toml(&args[0])
            .map(Value::from)
            .map_err(|e| FuncError(e.to_string()))
    });
    funcs.add("fromToml", 1, false, |args| {
        let text = arg_str(args, 0)?;
        Ok(match text.parse::<toml::Table>() {
            Ok(table) => toml_to_value(&toml::Value::Table(table)),
            Err(e) => error_map(&format!("toml: {}", e.message())),
        })
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

/// A parsed TOML value as BurntSushi/toml decodes into `interface{}`: integers `int64`,
/// floats `float64`, datetimes as their text.
fn toml_to_value(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::from(s.as_str()),
        toml::Value::Integer(i) => Value::Int64(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(items) => {
            Value::from(items.iter().map(toml_to_value).collect::<Vec<_>>())
        }
        toml::Value::Table(table) => Value::from(
            table
                .iter()
                .map(|(k, v)| (k.clone(), toml_to_value(v)))
                .collect::<Map>(),
        ),
    }
}
