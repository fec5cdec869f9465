//! Template functions: the registry a template set calls into, and helpers that convert
//! arguments the way Go's reflection-based call does (with Go's error wording when a value
//! has the wrong type).

use foldhash::HashMap;
use std::rc::Rc;

use crate::value::Value;

/// An error from a function; the executor wraps it as `error calling NAME: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuncError(pub String);

impl FuncError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        FuncError(message.into())
    }
}

impl std::fmt::Display for FuncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a function returns.
pub type FuncResult = Result<Value, FuncError>;

/// What a function may ask of the running template (Helm's `include` and `tpl` need it).
pub trait Runtime {
    /// Execute the named template with `data` as dot and return its output.
    fn execute_named(&mut self, name: &str, data: Value) -> Result<String, FuncError>;
    /// Parse `text` as a new template (named after the template now running, sharing the
    /// set's definitions) and execute it with `data` as dot.
    fn execute_text(&mut self, text: &str, data: Value) -> Result<String, FuncError>;
    /// Name of the template now executing.
    fn template_name(&self) -> String;
}

/// A function body.
pub type FuncBody = Rc<dyn Fn(&mut dyn Runtime, &[Value]) -> FuncResult>;

/// A registered function: how many arguments it takes and its body.
#[derive(Clone)]
pub struct Func {
    /// Number of fixed parameters.
    pub params: usize,
    /// Whether more arguments may follow the fixed ones (Go `...T`).
    pub variadic: bool,
    /// The body; it gets the arguments already counted.
    pub body: FuncBody,
}

/// Functions by name.
#[derive(Clone, Default)]
pub struct FuncMap {
    funcs: HashMap<String, Func>,
}

impl FuncMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a function with `params` fixed parameters (and more when `variadic`).
    pub fn add(
        &mut self,
        name: &str,
        params: usize,
        variadic: bool,
        body: impl Fn(&[Value]) -> FuncResult + 'static,
    ) {
        self.funcs.insert(
            name.to_owned(),
            Func {
                params,
                variadic,
                body: Rc::new(move |_rt: &mut dyn Runtime, args: &[Value]| body(args)),
            },
        );
    }

    /// Register a function that needs the running template.
    pub fn add_runtime(
        &mut self,
        name: &str,
        params: usize,
        variadic: bool,
        body: impl Fn(&mut dyn Runtime, &[Value]) -> FuncResult + 'static,
    ) {
        self.funcs.insert(
            name.to_owned(),
            Func {
                params,
                variadic,
                body: Rc::new(body),
            },
        );
    }

    /// Look a function up.
    pub fn get(&self, name: &str) -> Option<&Func> {
        self.funcs.get(name)
    }

    /// Whether a function exists.
    pub fn contains(&self, name: &str) -> bool {
        self.funcs.contains_key(name)
    }

    /// Remove a function (Helm drops Sprig's `env` and `expandenv`).
    pub fn remove(&mut self, name: &str) {
        self.funcs.remove(name);
    }

    /// Add every function of `other`, replacing same-named ones.
    pub fn extend(&mut self, other: FuncMap) {
        self.funcs.extend(other.funcs);
    }
}

/// Go's error when an argument cannot be converted to the parameter type.
pub fn wrong_type(expected: &str, got: &Value) -> FuncError {
    if got.is_nil() {
        FuncError(format!("invalid value; expected {expected}"))
    } else {
        FuncError(format!(
            "wrong type for value; expected {expected}; got {}",
            got.type_name()
        ))
    }
}

/// A `string` parameter.
pub fn arg_str(args: &[Value], i: usize) -> Result<&str, FuncError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(wrong_type("string", other)),
        None => Err(wrong_type("string", &Value::Nil)),
    }
}

/// An `int` parameter (any Go integer kind converts; floats do not).
pub fn arg_int(args: &[Value], i: usize) -> Result<i64, FuncError> {
    match args.get(i) {
        Some(Value::Int(n) | Value::Int64(n)) => Ok(*n),
        Some(other) => Err(wrong_type("int", other)),
        None => Err(wrong_type("int", &Value::Nil)),
    }
}

/// A `float64` parameter (template integer constants convert too).
pub fn arg_float(args: &[Value], i: usize) -> Result<f64, FuncError> {
    match args.get(i) {
        Some(Value::Float(x)) => Ok(*x),
        Some(Value::Int(n)) => Ok(*n as f64),
        Some(other) => Err(wrong_type("float64", other)),
        None => Err(wrong_type("float64", &Value::Nil)),
    }
}

/// A `bool` parameter.
pub fn arg_bool(args: &[Value], i: usize) -> Result<bool, FuncError> {
    match args.get(i) {
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(wrong_type("bool", other)),
        None => Err(wrong_type("bool", &Value::Nil)),
    }
}

/// A `[]interface{}` parameter (nil converts to an empty list, as a nil slice).
pub fn arg_list(args: &[Value], i: usize) -> Result<Rc<Vec<Value>>, FuncError> {
    match args.get(i) {
        Some(Value::List(l)) => Ok(l.clone()),
        Some(Value::Nil) | None => Ok(Rc::new(Vec::new())),
        Some(other) => Err(wrong_type("[]interface {}", other)),
    }
}

/// A `map[string]interface{}` parameter.
pub fn arg_map(args: &[Value], i: usize) -> Result<crate::value::MapRef, FuncError> {
    match args.get(i) {
        Some(Value::Map(m)) => Ok(m.clone()),
        Some(other) => Err(wrong_type("map[string]interface {}", other)),
        None => Err(wrong_type("map[string]interface {}", &Value::Nil)),
    }
}

/// An `interface{}` parameter.
pub fn arg(args: &[Value], i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}
