//! Dictionary functions on `map[string]interface{}`: `dict`, `get`, `set`/`unset` (which
//! change the map in place, as Go maps are shared), `hasKey`, `pluck`, `keys`, `values`,
//! `pick`, `omit`, `dig`, `deepCopy`, and `merge`/`mergeOverwrite` with dario.cat/mergo's
//! semantics (nested maps merged in place; `merge` keeps non-empty destination values).

use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_str};
use capstan_gotmpl::value::{Map, MapRef, Value};

use crate::values::{is_empty, map_or_nil, string_list, strval, variadic_strings};

pub fn register(funcs: &mut FuncMap) {
    funcs.add("dict", 0, true, |args| {
        let mut dict = Map::new();
        for pair in args.chunks(2) {
            let value = pair.get(1).cloned().unwrap_or_else(|| Value::from(""));
            dict.insert(strval(&pair[0]), value);
        }
        Ok(Value::from(dict))
    });
    funcs.add("get", 2, false, |args| {
        let (dict, key) = (map_or_nil(args, 0)?, arg_str(args, 1)?);
        let found = dict.and_then(|d| d.borrow().get(key).cloned());
        Ok(found.unwrap_or_else(|| Value::from("")))
    });
    funcs.add("set", 3, false, |args| {
        let (dict, key) = (map_or_nil(args, 0)?, arg_str(args, 1)?);
        let Some(dict) = dict else {
            return Err(FuncError::new("assignment to entry in nil map"));
        };
        dict.borrow_mut().insert(key.to_owned(), arg(args, 2));
        Ok(Value::Map(dict))
    });
    funcs.add("unset", 2, false, |args| {
        let (dict, key) = (map_or_nil(args, 0)?, arg_str(args, 1)?);
        Ok(match dict {
            Some(dict) => {
                dict.borrow_mut().remove(key);
                Value::Map(dict)
            }
            None => Value::Nil,
        })
    });
    funcs.add("hasKey", 2, false, |args| {
        let (dict, key) = (map_or_nil(args, 0)?, arg_str(args, 1)?);
        Ok(Value::Bool(
            dict.is_some_and(|d| d.borrow().contains_key(key)),
        ))
    });
    funcs.add("pluck", 1, true, |args| {
        let key = arg_str(args, 0)?;
        let mut found = Vec::new();
        for i in 1..args.len() {
            if let Some(dict) = map_or_nil(args, i)?
                && let Some(value) = dict.borrow().get(key)
            {
                found.push(value.clone());
            }
        }
        Ok(Value::from(found))
    });
    funcs.add("keys", 0, true, |args| {
        let mut keys = Vec::new();
        for i in 0..args.len() {
            if let Some(dict) = map_or_nil(args, i)? {
                keys.extend(dict.borrow().keys().cloned());
            }
        }
        Ok(string_list(keys))
    });
    funcs.add("values", 1, false, |args| {
        let dict = map_or_nil(args, 0)?;
        let values: Vec<Value> = dict
            .map(|d| d.borrow().values().cloned().collect())
            .unwrap_or_default();
        Ok(Value::from(values))
    });
    funcs.add("pick", 1, true, |args| {
        let dict = map_or_nil(args, 0)?;
        let keys = variadic_strings(args, 1)?;
        let mut picked = Map::new();
        if let Some(dict) = dict {
            let dict = dict.borrow();
            for key in keys {
                if let Some(value) = dict.get(&key) {
                    picked.insert(key, value.clone());
                }
            }
        }
        Ok(Value::from(picked))
    });
    funcs.add("omit", 1, true, |args| {
        let dict = map_or_nil(args, 0)?;
        let keys = variadic_strings(args, 1)?;
        let kept = dict
            .map(|d| {
                d.borrow()
                    .iter()
                    .filter(|(k, _)| !keys.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Map>()
            })
            .unwrap_or_default();
        Ok(Value::from(kept))
    });
    for (name, overwrite) in [
        ("merge", false),
        ("mustMerge", false),
        ("mergeOverwrite", true),
        ("mustMergeOverwrite", true),
    ] {
        funcs.add(name, 1, true, move |args| {
            let dst = map_or_nil(args, 0)?.unwrap_or_else(|| Rc::new(Map::new().into()));
            for i in 1..args.len() {
                if let Some(src) = map_or_nil(args, i)? {
                    merge_maps(&dst, &src, overwrite, 0);
                }
            }
            Ok(Value::Map(dst))
        });
    }
    for name in ["deepCopy", "mustDeepCopy"] {
        funcs.add(name, 1, false, |args| Ok(arg(args, 0).deep_copy()));
    }
    funcs.add("dig", 0, true, |args| {
        if args.len() < 3 {
            return Err(FuncError::new("dig needs at least three arguments"));
        }
        let dict = expect_map(&args[args.len() - 1])?;
        let default = args[args.len() - 2].clone();
        let keys = args[..args.len() - 2]
            .iter()
            .map(|k| match k {
                Value::String(s) => Ok(s.to_string()),
                other => Err(interface_conversion(other, "string")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        dig(&dict, default, &keys)
    });
}

/// Go's panic for a failed `x.(T)` type assertion on an `interface{}`.
fn interface_conversion(value: &Value, wanted: &str) -> FuncError {
    let actual = if value.is_nil() {
        "nil".to_owned()
    } else {
        value.type_name()
    };
    FuncError::new(format!(
        "interface conversion: interface {{}} is {actual}, not {wanted}"
    ))
}

fn expect_map(value: &Value) -> Result<MapRef, FuncError> {
    match value {
        Value::Map(m) => Ok(m.clone()),
        other => Err(interface_conversion(other, "map[string]interface {}")),
    }
}

/// Sprig's `digFromDict`: walk the keys; a missing key gives the default.
fn dig(dict: &MapRef, default: Value, keys: &[String]) -> Result<Value, FuncError> {
    let Some((key, rest)) = keys.split_first() else {
        return Ok(default);
    };
    let Some(step) = dict.borrow().get(key).cloned() else {
        return Ok(default);
    };
    if rest.is_empty() {
        return Ok(step);
    }
    dig(&expect_map(&step)?, default, rest)
}

/// mergo's `deepMerge` of one map into another, in place. Nested maps are merged into the
/// destination's own maps; a source value replaces the destination's when overwriting
/// (nil included) or when the destination's is missing or empty.
fn merge_maps(dst: &MapRef, src: &MapRef, overwrite: bool, depth: usize) {
    if Rc::ptr_eq(dst, src) || depth > 10_000 {
        return;
    }
    let entries: Vec<(String, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, src_value) in entries {
        let dst_value = dst.borrow().get(&key).cloned();
        if src_value.is_nil() {
            if overwrite {
                dst.borrow_mut().insert(key, Value::Nil);
            }
            continue;
        }
        if let (Value::Map(src_map), Some(Value::Map(dst_map))) = (&src_value, &dst_value) {
            merge_maps(dst_map, src_map, overwrite, depth + 1);
        }
        if let Some(existing) = &dst_value
            && !is_empty(existing)
        {
            match (&src_value, existing) {
                // mergo already stored the source slice when overwriting.
                (Value::List(_) | Value::Bytes(_), _) if !overwrite => continue,
                (Value::Map(_), Value::Map(_)) => continue,
                _ => {}
            }
        }
        let replace = overwrite || dst_value.as_ref().is_none_or(is_empty);
        if replace {
            dst.borrow_mut().insert(key, src_value);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    fn values_map() -> Value {
        map(&[("a", f(1.0)), ("b", f(2.0)), ("c", f(3.0))])
    }

    fn nested() -> Value {
        map(&[("x", map(&[("true", map(&[("z", s("deep"))]))]))])
    }

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("get", &[values_map(), s("a")]), "1");
        assert_eq!(show("get", &[values_map(), s("zz")]), "");
        assert_eq!(show("hasKey", &[values_map(), s("a")]), "true");
        assert_eq!(
            show("dig", &[s("x"), s("y"), s("z"), s("def"), nested()]),
            "def"
        );
        assert_eq!(show("dig", &[s("x"), s("q"), s("def"), nested()]), "def");
        assert_eq!(show("keys", &[values_map()]), "[a b c]");
        assert_eq!(
            show("pick", &[values_map(), s("a"), s("b")]),
            "map[a:1 b:2]"
        );
        assert_eq!(show("omit", &[values_map(), s("a")]), "map[b:2 c:3]");
        let merged = show(
            "merge",
            &[map(&[("a", i(1))]), map(&[("a", i(2)), ("b", i(3))])],
        );
        assert_eq!(merged, "map[a:1 b:3]");
        let over = show(
            "mergeOverwrite",
            &[map(&[("a", i(1))]), map(&[("a", i(2)), ("b", i(3))])],
        );
        assert_eq!(over, "map[a:2 b:3]");
        assert_eq!(
            show("set", &[map(&[("a", i(1))]), s("b"), i(2)]),
            "map[a:1 b:2]"
        );
        assert_eq!(
            show("unset", &[map(&[("a", i(1)), ("b", i(2))]), s("a")]),
            "map[b:2]"
        );
        assert_eq!(
            show("deepCopy", &[nested()]),
            "map[x:map[true:map[z:deep]]]"
        );
        assert_eq!(
            show("pluck", &[s("a"), map(&[("a", i(1))]), map(&[("a", i(2))])]),
            "[1 2]"
        );
        assert_eq!(show("values", &[map(&[("a", i(1))])]), "[1]");
        assert_eq!(
            show("dict", &[s("a"), i(1), s("b"), s("x")]),
            "map[a:1 b:x]"
        );
    }

    #[test]
    fn set_and_merge_mutate_in_place() {
        let d = map(&[("a", i(1))]);
        let _ = call("set", &[d.clone(), s("k"), s("v")]);
        assert_eq!(d.to_go_string(), "map[a:1 k:v]");
        let dst = map(&[
            ("n", map(&[("keep", i(1)), ("empty", s(""))])),
            ("list", list(&[i(1)])),
        ]);
        let src = map(&[
            (
                "n",
                map(&[
                    ("keep", i(9)),
                    ("empty", s("filled")),
                    ("new", Value::Bool(true)),
                ]),
            ),
            ("list", list(&[i(2)])),
            ("nil", Value::Nil),
        ]);
        let _ = call("merge", &[dst.clone(), src.clone()]);
        assert_eq!(
            dst.to_go_string(),
            "map[list:[1] n:map[empty:filled keep:1 new:true]]"
        );
        let _ = call("mergeOverwrite", &[dst.clone(), src]);
        assert_eq!(
            dst.to_go_string(),
            "map[list:[2] n:map[empty:filled keep:9 new:true] nil:<nil>]"
        );
    }

    fn merge_fixture() -> (Value, Value, Value) {
        let src2 = map(&[("h", i(10)), ("i", s("i")), ("j", s("j"))]);
        let src1 = map(&[
            ("a", i(1)),
            ("b", i(2)),
            ("d", map(&[("e", s("four"))])),
            ("g", list(&[i(6), i(7)])),
            ("i", s("aye")),
            ("j", s("jay")),
            ("k", map(&[("l", Value::Bool(false))])),
        ]);
        let dst = map(&[
            ("a", s("one")),
            ("c", i(3)),
            ("d", map(&[("f", i(5))])),
            ("g", list(&[i(8), i(9)])),
            ("i", s("eye")),
            ("k", map(&[("l", Value::Bool(true))])),
        ]);
        (dst, src1, src2)
    }

    #[test]
    fn sprig_merge_tests() {
        // Sprig dict_test.go TestMerge and TestMergeOverwrite.
        let (dst, src1, src2) = merge_fixture();
        let _ = call("merge", &[dst.clone(), src1, src2]);
        assert_eq!(
            dst.to_go_string(),
            "map[a:one b:2 c:3 d:map[e:four f:5] g:[8 9] h:10 i:eye j:jay k:map[l:true]]"
        );
        let (dst, src1, src2) = merge_fixture();
        let _ = call("mergeOverwrite", &[dst.clone(), src1, src2]);
        assert_eq!(
            dst.to_go_string(),
            "map[a:1 b:2 c:3 d:map[e:four f:5] g:[6 7] h:10 i:i j:j k:map[l:false]]"
        );
        // dict_test.go: pick, omit, get, dig, keys.
        let d = || map(&[("one", i(1)), ("two", i(222222))]);
        assert_eq!(show("pick", &[d(), s("two")]), "map[two:222222]");
        assert_eq!(show("omit", &[d(), s("one")]), "map[two:222222]");
        assert_eq!(
            show("pick", &[d(), s("one"), s("two"), s("three")]),
            "map[one:1 two:222222]"
        );
        let nested = map(&[("a", map(&[("b", map(&[("c", i(1))]))]))]);
        assert_eq!(
            show("dig", &[s("a"), s("b"), s("c"), s(""), nested.clone()]),
            "1"
        );
        assert_eq!(show("dig", &[s("a"), s("b"), s("z"), s("2"), nested]), "2");
        assert_eq!(show("dig", &[s("a"), s(""), map(&[("a", i(1))])]), "1");
        assert_eq!(show("keys", &[map(&[])]), "[]");
        let foo = map(&[
            ("foo", map(&[("bar", s("baz"))])),
            ("qux", Value::Bool(true)),
        ]);
        assert_eq!(show("deepCopy", &[foo]), "map[foo:map[bar:baz] qux:true]");
    }

    #[test]
    fn sprig_edges() {
        // dict with an odd count gives the last key "" (Sprig dict_test.go).
        assert_eq!(show("dict", &[s("a"), i(1), s("b")]), "map[a:1 b:]");
        assert_eq!(show("dict", &[i(1), s("one")]), "map[1:one]");
        assert_eq!(show("get", &[Value::Nil, s("a")]), "");
        assert_eq!(show("hasKey", &[Value::Nil, s("a")]), "false");
        assert_eq!(
            error("set", &[Value::Nil, s("a"), i(1)]),
            "assignment to entry in nil map"
        );
        assert_eq!(
            show("merge", &[Value::Nil, map(&[("a", i(1))])]),
            "map[a:1]"
        );
        assert_eq!(
            show("dig", &[s("x"), s("true"), s("z"), s("def"), nested()]),
            "deep"
        );
        assert_eq!(
            error("dig", &[s("a"), s("b")]),
            "dig needs at least three arguments"
        );
        assert_eq!(
            error("dig", &[s("a"), s("d"), s("str")]),
            "interface conversion: interface {} is string, not map[string]interface {}"
        );
        assert_eq!(
            error("dig", &[s("a"), s("b"), s("d"), map(&[("a", i(1))])]),
            "interface conversion: interface {} is int, not map[string]interface {}"
        );
        assert_eq!(
            error("dig", &[i(1), s("d"), map(&[])]),
            "interface conversion: interface {} is int, not string"
        );
        assert_eq!(
            error("get", &[s("x"), s("a")]),
            "wrong type for value; expected map[string]interface {}; got string"
        );
        let original = nested();
        let copy = call("deepCopy", std::slice::from_ref(&original)).unwrap();
        let _ = call("set", &[copy, s("extra"), i(1)]);
        assert_eq!(original.to_go_string(), "map[x:map[true:map[z:deep]]]");
    }
}
