//! Reflection: `typeOf` (Go's `%T`), `typeIs`, `typeIsLike`, `kindOf` (`reflect.Kind`),
//! `kindIs` and `deepEqual` (`reflect.DeepEqual`: numbers of different Go types differ).

use capstan_gotmpl::funcs::{FuncMap, arg, arg_str};
use capstan_gotmpl::value::Value;

pub fn register(funcs: &mut FuncMap) {
    funcs.add("typeOf", 1, false, |args| {
        Ok(Value::from(arg(args, 0).type_name()))
    });
    funcs.add("typeIs", 2, false, |args| {
        Ok(Value::Bool(arg_str(args, 0)? == arg(args, 1).type_name()))
    });
    funcs.add("typeIsLike", 2, false, |args| {
        let (target, actual) = (arg_str(args, 0)?, arg(args, 1).type_name());
        Ok(Value::Bool(
            target == actual || format!("*{target}") == actual,
        ))
    });
    funcs.add("kindOf", 1, false, |args| {
        Ok(Value::from(arg(args, 0).kind_name()))
    });
    funcs.add("kindIs", 2, false, |args| {
        Ok(Value::Bool(arg_str(args, 0)? == arg(args, 1).kind_name()))
    });
    funcs.add("deepEqual", 2, false, |args| {
        Ok(Value::Bool(arg(args, 0).deep_equal(&arg(args, 1))))
    });
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use capstan_gotmpl::value::Value;

    #[test]
    fn snippets_corpus() {
        // Real Helm outputs from shared/helm-parity/snippets.yaml.
        assert_eq!(show("typeOf", &[f(1.5)]), "float64");
        assert_eq!(show("typeOf", &[map(&[])]), "map[string]interface {}");
        assert_eq!(show("typeOf", &[list(&[])]), "[]interface {}");
        assert_eq!(show("typeOf", &[s("x")]), "string");
        assert_eq!(show("kindOf", &[f(1.5)]), "float64");
        assert_eq!(show("kindIs", &[s("map"), map(&[])]), "true");
        assert_eq!(show("typeIs", &[s("string"), s("hello")]), "true");
        assert_eq!(
            show("deepEqual", &[list(&[i(1), i(2)]), list(&[i(1), i(2)])]),
            "true"
        );
    }

    #[test]
    fn go_names() {
        assert_eq!(show("typeOf", &[Value::Nil]), "<nil>");
        assert_eq!(show("typeOf", &[i(1)]), "int");
        assert_eq!(show("typeOf", &[Value::Int64(1)]), "int64");
        assert_eq!(show("kindOf", &[Value::Nil]), "invalid");
        assert_eq!(show("kindOf", &[list(&[])]), "slice");
        assert_eq!(show("typeIsLike", &[s("string"), s("x")]), "true");
        assert_eq!(show("deepEqual", &[i(1), f(1.0)]), "false");
        assert_eq!(
            show("deepEqual", &[map(&[("a", i(1))]), map(&[("a", i(1))])]),
            "true"
        );
    }
}
