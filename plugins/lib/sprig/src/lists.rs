//! List functions. Like Sprig (which works through reflection) they accept any slice,
//! return new `[]interface{}` lists without touching their input, and fail with Sprig's
//! texts (`Cannot find first on type string`) for other kinds; the `must` variants behave
//! the same because a Sprig panic reaches the template as the same error.

use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncMap, arg, arg_int};
use capstan_gotmpl::value::Value;

use crate::conv::{to_int64, to_strings};
use crate::values::{
    is_empty, nil_dereference, require_slice, slice_elements, string_list, strval,
};

/// A list function body taking the list as its first argument.
type ListBody = fn(Vec<Value>, &[Value]) -> Result<Value, FuncError>;

/// Register `name` and `mustName` with `params` parameters, the first being the list.
fn add_list_function(
    funcs: &mut FuncMap,
    names: &[&str],
    params: usize,
    variadic: bool,
    message: &'static str,
    body: ListBody,
) {
    for name in names {
        funcs.add(name, params, variadic, move |args| {
            let items = require_slice(&arg(args, 0), |kind| message.replace("%s", kind))?;
            body(items, args)
        });
    }
}

pub fn register(funcs: &mut FuncMap) {
    for name in ["list", "tuple"] {
        funcs.add(name, 0, true, |args| Ok(Value::from(args.to_vec())));
    }
    add_list_function(
        funcs,
        &["append", "push", "mustAppend", "mustPush"],
        2,
        false,
        "Cannot push on type %s",
        |mut items, args| {
            items.push(arg(args, 1));
            Ok(Value::from(items))
        },
    );
    add_list_function(
        funcs,
        &["prepend", "mustPrepend"],
        2,
        false,
        "Cannot prepend on type %s",
        |mut items, args| {
            items.insert(0, arg(args, 1));
            Ok(Value::from(items))
        },
    );
    add_list_function(
        funcs,
        &["first", "mustFirst"],
        1,
        false,
        "Cannot find first on type %s",
        |items, _| Ok(items.first().cloned().unwrap_or_default()),
    );
    add_list_function(
        funcs,
        &["last", "mustLast"],
        1,
        false,
        "Cannot find last on type %s",
        |items, _| Ok(items.last().cloned().unwrap_or_default()),
    );
    add_list_function(
        funcs,
        &["rest", "mustRest"],
        1,
        false,
        "Cannot find rest on type %s",
        |items, _| {
            Ok(Value::from(
                items.get(1..).map(<[Value]>::to_vec).unwrap_or_default(),
            ))
        },
    );
    add_list_function(
        funcs,
        &["initial", "mustInitial"],
        1,
        false,
        "Cannot find initial on type %s",
        |mut items, _| {
            items.pop();
            Ok(Value::from(items))
        },
    );
    add_list_function(
        funcs,
        &["reverse", "mustReverse"],
        1,
        false,
        "Cannot find reverse on type %s",
        |mut items, _| {
            items.reverse();
            Ok(Value::from(items))
        },
    );
    add_list_function(
        funcs,
        &["compact", "mustCompact"],
        1,
        false,
        "Cannot compact on type %s",
        |items, _| {
            Ok(Value::from(
                items
                    .into_iter()
                    .filter(|v| !is_empty(v))
                    .collect::<Vec<_>>(),
            ))
        },
    );
    add_list_function(
        funcs,
        &["uniq", "mustUniq"],
        1,
        false,
        "Cannot find uniq on type %s",
        |items, _| {
            let mut unique: Vec<Value> = Vec::new();
            for item in items {
                if !unique.iter().any(|seen| seen.deep_equal(&item)) {
                    unique.push(item);
                }
            }
            Ok(Value::from(unique))
        },
    );
    add_list_function(
        funcs,
        &["without", "mustWithout"],
        1,
        true,
        "Cannot find without on type %s",
        |items, args| {
            let omit = &args[1..];
            Ok(Value::from(
                items
                    .into_iter()
                    .filter(|item| !omit.iter().any(|o| o.deep_equal(item)))
                    .collect::<Vec<_>>(),
            ))
        },
    );
    for name in ["has", "mustHas"] {
        funcs.add(name, 2, false, |args| {
            let (needle, haystack) = (arg(args, 0), arg(args, 1));
            if haystack.is_nil() {
                return Ok(Value::Bool(false));
            }
            let items = require_slice(&haystack, |kind| format!("Cannot find has on type {kind}"))?;
            Ok(Value::Bool(
                items.iter().any(|item| needle.deep_equal(item)),
            ))
        });
    }
    for name in ["slice", "mustSlice"] {
        funcs.add(name, 1, true, |args| {
            let list = arg(args, 0);
            let items = require_slice(&list, |kind| {
                format!("list should be type of slice or array but {kind}")
            })?;
            if items.is_empty() {
                return Ok(Value::Nil);
            }
            let start = args.get(1).map(to_int64).unwrap_or(0);
            let end = args.get(2).map(to_int64).unwrap_or(items.len() as i64);
            if start < 0 || end < start || end > items.len() as i64 {
                return Err(FuncError::new(
                    "reflect.Value.Slice: slice index out of bounds",
                ));
            }
            let part = items[start as usize..end as usize].to_vec();
            Ok(match list {
                Value::Bytes(_) => Value::Bytes(Rc::from(
                    part.iter().map(|v| to_int64(v) as u8).collect::<Vec<u8>>(),
                )),
                _ => Value::from(part),
            })
        });
    }
    funcs.add("concat", 0, true, |args| {
        let mut joined = Vec::new();
        for list in args {
            if list.is_nil() {
                return Err(nil_dereference());
            }
            match slice_elements(list) {
                Some(items) => joined.extend(items),
                None => {
                    return Err(FuncError::new(format!(
                        "Cannot concat type {} as list",
                        list.kind_name()
                    )));
                }
            }
        }
        Ok(Value::from(joined))
    });
    for name in ["chunk", "mustChunk"] {
        funcs.add(name, 2, false, |args| {
            let size = arg_int(args, 0)?;
            let items = require_slice(&arg(args, 1), |kind| format!("Cannot chunk type {kind}"))?;
            if size <= 0 {
                if size == 0 || !items.is_empty() {
                    return Err(FuncError::new("runtime error: makeslice: len out of range"));
                }
                return Ok(Value::from(Vec::new()));
            }
            Ok(Value::from(
                items
                    .chunks(size as usize)
                    .map(|chunk| Value::from(chunk.to_vec()))
                    .collect::<Vec<_>>(),
            ))
        });
    }
    funcs.add("sortAlpha", 1, false, |args| {
        let list = arg(args, 0);
        if slice_elements(&list).is_none() {
            return Ok(string_list([strval(&list)]));
        }
        let mut strings = to_strings(&list);
        strings.sort();
        Ok(string_list(strings))
    });
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    fn values_list() -> Value {
        list(&[s("b"), s("a"), s("c")])
    }

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml (.Values.list = [b a c]).
        assert_eq!(show("first", &[values_list()]), "b");
        assert_eq!(show("rest", &[values_list()]), "[a c]");
        assert_eq!(show("last", &[values_list()]), "c");
        assert_eq!(show("initial", &[values_list()]), "[b a]");
        assert_eq!(show("append", &[values_list(), s("d")]), "[b a c d]");
        assert_eq!(show("prepend", &[values_list(), s("z")]), "[z b a c]");
        assert_eq!(
            show("concat", &[values_list(), list(&[i(1), i(2)])]),
            "[b a c 1 2]"
        );
        assert_eq!(show("reverse", &[values_list()]), "[c a b]");
        assert_eq!(show("uniq", &[list(&[i(1), i(1), i(2)])]), "[1 2]");
        assert_eq!(show("without", &[values_list(), s("a")]), "[b c]");
        assert_eq!(show("has", &[s("a"), values_list()]), "true");
        assert_eq!(
            show("compact", &[list(&[i(1), s(""), Value::Nil, i(2)])]),
            "[1 2]"
        );
        assert_eq!(
            show("chunk", &[i(2), list(&[i(1), i(2), i(3)])]),
            "[[1 2] [3]]"
        );
        assert_eq!(
            show("sortAlpha", &[list(&[s("b"), s("a"), s("C")])]),
            "[C a b]"
        );
        assert!(matches!(call("mustFirst", &[list(&[])]), Ok(Value::Nil)));
        assert_eq!(show("slice", &[values_list(), i(1)]), "[a c]");
        assert_eq!(show("slice", &[values_list(), i(0), i(2)]), "[b a]");
        assert_eq!(
            error("slice", &[s("abc"), i(1), i(3)]),
            "list should be type of slice or array but string"
        );
    }

    #[test]
    fn sprig_list_tests() {
        // Sprig list_test.go.
        let split = call("regexSplit", &[s("/"), s("foo//bar"), i(-1)]).unwrap();
        assert_eq!(show("compact", &[split]), "[foo bar]");
        assert_eq!(
            show("compact", &[list(&[i(1), i(0), s(""), s("hello")])]),
            "[1 hello]"
        );
        assert_eq!(show("compact", &[list(&[s(""), s("")])]), "[]");
        let seven: Vec<_> = (1..=7).map(i).collect();
        assert_eq!(
            show("chunk", &[i(3), list(&seven)]),
            "[[1 2 3] [4 5 6] [7]]"
        );
        assert_eq!(show("chunk", &[i(3), list(&[])]), "[]");
        assert_eq!(show("chunk", &[i(3), list(&[i(1), i(2)])]), "[[1 2]]");
        let path = call("regexSplit", &[s("/"), s("foo/bar/baz"), i(-1)]).unwrap();
        assert_eq!(
            show("append", &[path.clone(), s("qux")]),
            "[foo bar baz qux]"
        );
        assert_eq!(
            show("prepend", &[path.clone(), s("qux")]),
            "[qux foo bar baz]"
        );
        assert_eq!(show("initial", std::slice::from_ref(&path)), "[foo bar]");
        assert_eq!(show("rest", std::slice::from_ref(&path)), "[bar baz]");
        assert_eq!(show("reverse", &[path]), "[baz bar foo]");
        assert_eq!(show("uniq", &[list(&[s("a"), s("b"), s("a")])]), "[a b]");
        assert_eq!(
            show("without", &[list(&[i(1), i(2), i(3), i(4)]), i(1), i(3)]),
            "[2 4]"
        );
        assert_eq!(
            show("has", &[i(4), list(&[i(1), i(2), i(3), i(4)])]),
            "true"
        );
        assert_eq!(
            show("slice", &[list(&[i(1), i(2), i(3), i(4)]), i(1), i(3)]),
            "[2 3]"
        );
        assert_eq!(
            show("concat", &[list(&[i(1)]), list(&[i(2)]), list(&[i(3)])]),
            "[1 2 3]"
        );
    }

    #[test]
    fn sprig_errors_and_edges() {
        // Sprig list_test.go / list.go error texts.
        assert_eq!(
            error("first", &[s("abc")]),
            "Cannot find first on type string"
        );
        assert_eq!(
            error("mustLast", &[f(1.0)]),
            "Cannot find last on type float64"
        );
        assert_eq!(
            error("append", &[map(&[]), i(1)]),
            "Cannot push on type map"
        );
        assert_eq!(
            error("concat", &[list(&[]), i(1)]),
            "Cannot concat type int as list"
        );
        assert_eq!(
            error("first", &[Value::Nil]),
            "runtime error: invalid memory address or nil pointer dereference"
        );
        assert_eq!(show("has", &[s("a"), Value::Nil]), "false");
        // reflect.DeepEqual: int 1 is not float64 1.
        assert_eq!(show("has", &[i(1), list(&[f(1.0)])]), "false");
        assert_eq!(show("rest", &[list(&[])]), "[]");
        assert!(matches!(call("last", &[list(&[])]), Ok(Value::Nil)));
        assert_eq!(
            show(
                "chunk",
                &[i(3), list(&[i(1), i(2), i(3), i(4), i(5), i(6)])]
            ),
            "[[1 2 3] [4 5 6]]"
        );
        assert_eq!(show("sortAlpha", &[s("x")]), "[x]");
        assert_eq!(show("sortAlpha", &[list(&[i(10), i(9), i(1)])]), "[1 10 9]");
        assert_eq!(show("list", &[]), "[]");
        assert_eq!(show("tuple", &[i(1), s("a")]), "[1 a]");
        assert!(matches!(call("slice", &[list(&[])]), Ok(Value::Nil)));
        assert_eq!(
            error("slice", &[values_list(), i(2), i(5)]),
            "reflect.Value.Slice: slice index out of bounds"
        );
        // Inputs are never modified.
        let original = values_list();
        let _ = call("append", &[original.clone(), s("x")]);
        let _ = call("reverse", std::slice::from_ref(&original));
        assert_eq!(original.to_go_string(), "[b a c]");
    }
}
