//! Defaults and flow control (`default`, `empty`, `coalesce`, `all`, `any`, `ternary`,
//! `fail`) and the JSON functions, which call [`capstan_gotmpl::json`] for Go's
//! `encoding/json` output.

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_bool, arg_str};
use capstan_gotmpl::json;
use capstan_gotmpl::value::Value;

use crate::values::is_empty;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("default", 1, true, |args| {
        let given = args.get(1).cloned().unwrap_or_default();
        Ok(if is_empty(&given) {
            arg(args, 0)
        } else {
            given
        })
    });
    funcs.add("empty", 1, false, |args| {
        Ok(Value::Bool(is_empty(&arg(args, 0))))
    });
    funcs.add("coalesce", 0, true, |args| {
        Ok(args
            .iter()
            .find(|v| !is_empty(v))
            .cloned()
            .unwrap_or_default())
    });
    funcs.add("all", 0, true, |args| {
        Ok(Value::Bool(args.iter().all(|v| !is_empty(v))))
    });
    funcs.add("any", 0, true, |args| {
        Ok(Value::Bool(args.iter().any(|v| !is_empty(v))))
    });
    funcs.add("ternary", 3, false, |args| {
        Ok(if arg_bool(args, 2)? {
            arg(args, 0)
        } else {
            arg(args, 1)
        })
    });
    funcs.add("fail", 1, false, |args| {
        Err(FuncError::new(arg_str(args, 0)?))
    });

    funcs.add("fromJson", 1, false, |args| {
        Ok(json::from_json(arg_str(args, 0)?).unwrap_or_default())
    });
    funcs.add("mustFromJson", 1, false, |args| {
        json::from_json(arg_str(args, 0)?).map_err(|e| FuncError::new(e.0))
    });
    funcs.add("toJson", 1, false, |args| {
        Ok(Value::from(
            json::to_json(&arg(args, 0)).unwrap_or_default(),
        ))
    });
    funcs.add("mustToJson", 1, false, |args| {
        json::to_json(&arg(args, 0))
            .map(Value::from)
            .map_err(|e| FuncError::new(e.0))
    });
    funcs.add("toPrettyJson", 1, false, |args| {
        Ok(Value::from(
            json::to_json_pretty(&arg(args, 0), "  ").unwrap_or_default(),
        ))
    });
    funcs.add("mustToPrettyJson", 1, false, |args| {
        json::to_json_pretty(&arg(args, 0), "  ")
            .map(Value::from)
            .map_err(|e| FuncError::new(e.0))
    });
    for name in ["toRawJson", "mustToRawJson"] {
        funcs.add(name, 1, false, |args| {
            json::to_json_raw(&arg(args, 0))
                .map(Value::from)
                .map_err(|e| FuncError::new(e.0))
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("default", &[s("d"), Value::Nil]), "d");
        assert_eq!(show("default", &[s("d"), s("")]), "d");
        assert_eq!(show("default", &[s("d"), f(0.0)]), "d");
        assert_eq!(show("default", &[s("d"), s("hello")]), "hello");
        assert_eq!(show("empty", &[list(&[s("b")])]), "false");
        assert_eq!(show("empty", &[f(0.0)]), "true");
        assert_eq!(show("empty", &[map(&[])]), "true");
        assert_eq!(show("coalesce", &[Value::Nil, s(""), s("c")]), "c");
        assert_eq!(show("ternary", &[s("y"), s("n"), Value::Bool(true)]), "y");
        assert_eq!(show("all", &[i(1), s("a"), Value::Bool(true)]), "true");
        assert_eq!(show("any", &[i(0), s(""), i(1)]), "true");
        assert_eq!(error("fail", &[s("boom")]), "boom");
    }

    #[test]
    fn sprig_semantics() {
        // Sprig docs: `default true false` is true; a missing second argument is empty.
        assert_eq!(
            show("default", &[Value::Bool(true), Value::Bool(false)]),
            "true"
        );
        assert_eq!(show("default", &[s("d")]), "d");
        assert!(matches!(
            call("coalesce", &[Value::Nil, i(0)]),
            Ok(Value::Nil)
        ));
        assert_eq!(show("all", &[]), "true");
        assert_eq!(show("any", &[]), "false");
        assert_eq!(show("ternary", &[s("y"), s("n"), Value::Bool(false)]), "n");
        assert_eq!(
            error("ternary", &[s("y"), s("n"), s("true")]),
            "wrong type for value; expected bool; got string"
        );
    }

    /// Helm outputs from snippets.yaml (list-list-152, data-toRawJson-242, data-toJson-243,
    /// data-toPrettyJson-241, data-fromJson-244).
    #[test]
    fn json_snippets() {
        assert_eq!(
            show("toJson", &[list(&[i(1), s("a"), f(2.5)])]),
            "[1,\"a\",2.5]"
        );
        assert_eq!(
            show("toRawJson", &[map(&[("h", s("<b>&"))])]),
            "{\"h\":\"<b>&\"}"
        );
        assert_eq!(
            show("toJson", &[map(&[("h", s("<b>&"))])]),
            "{\"h\":\"\\u003cb\\u003e\\u0026\"}"
        );
        assert_eq!(
            show("toPrettyJson", &[map(&[("x", map(&[("z", s("deep"))]))])]),
            "{\n  \"x\": {\n    \"z\": \"deep\"\n  }\n}"
        );
        assert_eq!(show("fromJson", &[s("{\"a\":[1,2]}")]), "map[a:[1 2]]");
        assert!(matches!(call("fromJson", &[s("{bad")]), Ok(Value::Nil)));
    }
}
