//! Test helpers: call a registered function by name, and build values briefly.

use std::rc::Rc;

use capstan_gotmpl::funcs::{FuncError, FuncResult, Runtime};
use capstan_gotmpl::value::{Map, Value};

pub(crate) struct NoRuntime;

impl Runtime for NoRuntime {
    fn execute_named(&mut self, name: &str, _data: Value) -> Result<String, FuncError> {
        Err(FuncError::new(format!("no template {name}")))
    }
    fn execute_text(&mut self, _text: &str, _data: Value) -> Result<String, FuncError> {
        Err(FuncError::new("no runtime"))
    }
    fn template_name(&self) -> String {
        "test".into()
    }
}

/// Call `name` with `args` after the arity check the executor makes.
pub fn call(name: &str, args: &[Value]) -> FuncResult {
    let funcs = crate::functions();
    let func = funcs
        .get(name)
        .unwrap_or_else(|| panic!("function {name} is not registered"));
    if func.variadic {
        assert!(args.len() >= func.params, "{name}: too few arguments");
    } else {
        assert_eq!(args.len(), func.params, "{name}: wrong number of arguments");
    }
    (func.body)(&mut NoRuntime, args)
}

/// Call and print the result with `%v`.
pub fn show(name: &str, args: &[Value]) -> String {
    match call(name, args) {
        Ok(v) => v.to_go_string(),
        Err(e) => format!("ERROR: {e}"),
    }
}

/// Call and return the error text.
pub fn error(name: &str, args: &[Value]) -> String {
    match call(name, args) {
        Ok(v) => panic!("{name} succeeded with {v:?}"),
        Err(e) => e.0,
    }
}

/// A string value.
pub fn s(text: &str) -> Value {
    Value::from(text)
}

/// A Go `int` value (a template integer constant).
pub fn i(n: i64) -> Value {
    Value::Int(n)
}

/// A `float64` value (a number from YAML).
pub fn f(x: f64) -> Value {
    Value::Float(x)
}

/// A list value.
pub fn list(items: &[Value]) -> Value {
    Value::List(Rc::new(items.to_vec()))
}

/// A map value.
pub fn map(entries: &[(&str, Value)]) -> Value {
    Value::from(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<Map>(),
    )
}
