//! The executor: a set of parsed templates run against a [`Value`], with Go's semantics for
//! field and map access (`missingkey` modes, nil chains), variables and their scopes,
//! pipelines passing the previous result as the last argument, lazy `and`/`or`, `range`
//! over lists, maps (sorted keys) and integers with `break`/`continue`, and Go's error
//! texts with template name, line and column. Limits on template nesting depth, output
//! size and steps make a hostile template fail cleanly instead of exhausting the machine.

use foldhash::{HashMap, HashMapExt};
use std::fmt;
use std::rc::Rc;

use crate::builtins::builtins;
use crate::funcs::{FuncError, FuncMap, Runtime};
use crate::number::Complex128;
use crate::parse::{self, Arg, Command, Node, ParseError, Pipe, Tree};
use crate::value::Value;

/// What a map lookup of a missing key gives (Go's `missingkey` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// `missingkey=default`/`invalid`: an invalid value, printed `<no value>`.
    #[default]
    Default,
    /// `missingkey=zero`: the map's zero element (nil for `interface{}` maps) — Helm's mode.
    Zero,
    /// `missingkey=error`: an error.
    Error,
}

/// Bounds on one execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting of `template`/`include`/`tpl` calls.
    pub max_depth: usize,
    /// Maximum bytes written in total (all nested outputs included).
    pub max_output: usize,
    /// Maximum nodes and commands evaluated.
    pub max_steps: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 100,
            max_output: 64 << 20,
            max_steps: 100_000_000,
        }
    }
}

/// An execution error with Go's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecError {
    /// Template being executed.
    pub name: String,
    /// File the failing node came from.
    pub parse_name: String,
    /// Line (1-based).
    pub line: usize,
    /// Column (0-based byte offset in the line, as Go prints it).
    pub col: usize,
    /// The failing node as text.
    pub context: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "template: {}:{}:{}: executing {:?} at <{}>: {}",
            self.parse_name, self.line, self.col, self.name, self.context, self.message
        )
    }
}

impl std::error::Error for ExecError {}

/// Either kind of template failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The text did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Execution failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// No template of that name.
    #[error("template: no template {0:?} associated with template set")]
    NotFound(String),
}

/// A set of named templates sharing functions and options (Go's `*template.Template`).
#[derive(Clone)]
pub struct Template {
    trees: HashMap<String, Rc<Tree>>,
    /// The trees of every text parsed so far, by text: charts vendor the same library once
    /// per subchart (Bitnami's `common`: 132 of mastodon's 356 template files are copies),
    /// and a copy needs no second parse, only its own file name.
    parsed: HashMap<Rc<str>, Rc<[Tree]>>,
    /// Names and constants of every tree parsed into the set, one copy each.
    names: parse::Names,
    funcs: Rc<FuncMap>,
    /// Missing map keys.
    pub missing_key: MissingKey,
    /// Execution bounds.
    pub limits: Limits,
}

impl Template {
    /// A set with Go's builtins plus `funcs` (which win on name clashes).
    pub fn new(funcs: FuncMap) -> Self {
        let mut all = builtins();
        all.extend(funcs);
        Template {
            trees: HashMap::new(),
            parsed: HashMap::new(),
            names: parse::Names::default(),
            funcs: Rc::new(all),
            missing_key: MissingKey::Default,
            limits: Limits::default(),
        }
    }

    /// The functions templates can call.
    pub fn funcs(&self) -> &FuncMap {
        &self.funcs
    }

    /// Parse `text` as template `name` and add it and its definitions to the set. As in
    /// Go, a later non-empty definition replaces an earlier one; an empty one does not.
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), ParseError> {
        let trees: Vec<Tree> = match self.parsed.get(text) {
            // The same text parses to the same trees whatever the file: only the main
            // tree's name and every tree's file name differ.
            Some(parsed) => parsed
                .iter()
                .enumerate()
                .map(|(index, tree)| Tree {
                    name: if index == 0 {
                        name.to_owned()
                    } else {
                        tree.name.clone()
                    },
                    parse_name: name.to_owned(),
                    text: tree.text.clone(),
                    root: tree.root.clone(),
                })
                .collect(),
            None => {
                let funcs = &self.funcs;
                let trees =
                    parse::parse_interned(name, text, &|f| funcs.contains(f), &mut self.names)?;
                if let Some(main) = trees.first() {
                    self.parsed.insert(main.text.clone(), trees.clone().into());
                }
                trees
            }
        };
        for tree in trees {
            associate(&mut self.trees, tree);
        }
        Ok(())
    }

    /// Keep what `other` has parsed for this set's parses: a text `other` parsed is not
    /// parsed again here (only named). Both sets must know the same function names, which
    /// parsing checks.
    pub fn reuse_parses_of(&mut self, other: &Template) {
        for (text, trees) in &other.parsed {
            self.parsed
                .entry(text.clone())
                .or_insert_with(|| trees.clone());
        }
        self.names = other.names.clone();
    }

    /// Whether a template of that name exists.
    pub fn has(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// Execute the named template with `data` as dot.
    pub fn execute(&self, name: &str, data: Value) -> Result<String, TemplateError> {
        let tree = self
            .trees
            .get(name)
            .cloned()
            .ok_or_else(|| TemplateError::NotFound(name.to_owned()))?;
        let mut state = State::new(self, tree.clone());
        let mut out = String::new();
        state.run_tree(&tree, data, true, &mut out)?;
        Ok(out)
    }
}

fn associate(trees: &mut HashMap<String, Rc<Tree>>, tree: Tree) {
    if let Some(old) = trees.get(&tree.name)
        && tree.is_empty()
        && !old.is_empty()
    {
        return;
    }
    trees.insert(tree.name.clone(), Rc::new(tree));
}

enum Flow {
    Normal,
    Break,
    Continue,
}

type ExecResult<T> = Result<T, ExecError>;

struct State<'t> {
    tmpl: &'t Template,
    /// Definitions added by `tpl` texts, innermost last.
    overlays: Vec<HashMap<String, Rc<Tree>>>,
    vars: Vec<(String, Value)>,
    tree: Rc<Tree>,
    depth: usize,
    output: usize,
    steps: u64,
    /// Whether the current dot is Go's invalid value (nil data passed to Execute).
    dot_invalid: bool,
}

impl<'t> State<'t> {
    fn new(tmpl: &'t Template, tree: Rc<Tree>) -> Self {
        State {
            tmpl,
            overlays: Vec::new(),
            vars: Vec::new(),
            tree,
            depth: 0,
            output: 0,
            steps: 0,
            dot_invalid: false,
        }
    }

    fn error(&self, pos: usize, context: String, message: impl Into<String>) -> ExecError {
        let (line, col) = self.tree.line_col(pos);
        ExecError {
            name: self.tree.name.clone(),
            parse_name: self.tree.parse_name.clone(),
            line,
            col,
            context,
            message: message.into(),
        }
    }

    fn lookup(&self, name: &str) -> Option<Rc<Tree>> {
        for overlay in self.overlays.iter().rev() {
            if let Some(tree) = overlay.get(name) {
                return Some(tree.clone());
            }
        }
        self.tmpl.trees.get(name).cloned()
    }

    fn step(&mut self, pos: usize, context: impl FnOnce() -> String) -> ExecResult<()> {
        self.steps += 1;
        if self.steps > self.tmpl.limits.max_steps {
            return Err(self.error(
                pos,
                context(),
                format!(
                    "execution step limit of {} exceeded",
                    self.tmpl.limits.max_steps
                ),
            ));
        }
        Ok(())
    }

    fn write(&mut self, out: &mut String, text: &str, pos: usize) -> ExecResult<()> {
        self.output += text.len();
        if self.output > self.tmpl.limits.max_output {
            return Err(self.error(
                pos,
                String::new(),
                format!(
                    "output size limit of {} bytes exceeded",
                    self.tmpl.limits.max_output
                ),
            ));
        }
        out.push_str(text);
        Ok(())
    }

    /// Run `tree` with `data` as dot and `$` in a fresh variable scope.
    fn run_tree(
        &mut self,
        tree: &Rc<Tree>,
        data: Value,
        data_invalid: bool,
        out: &mut String,
    ) -> ExecResult<()> {
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".to_owned(), data.clone())]);
        let saved_tree = std::mem::replace(&mut self.tree, tree.clone());
        let saved_invalid = std::mem::replace(&mut self.dot_invalid, data_invalid && data.is_nil());
        let result = self.walk_list(&data, &tree.root, out);
        self.vars = saved_vars;
        self.tree = saved_tree;
        self.dot_invalid = saved_invalid;
        result.map(|_| ())
    }

    fn enter(&mut self, pos: usize, context: impl FnOnce() -> String) -> ExecResult<()> {
        if self.depth >= self.tmpl.limits.max_depth {
            return Err(self.error(
                pos,
                context(),
                format!(
                    "exceeded maximum template depth ({})",
                    self.tmpl.limits.max_depth
                ),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn walk_list(&mut self, dot: &Value, list: &[Node], out: &mut String) -> ExecResult<Flow> {
        for node in list {
            match self.walk(dot, node, out)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, dot: &Value, node: &Node, out: &mut String) -> ExecResult<Flow> {
        match node {
            Node::Text(text) => {
                self.write(out, text, 0)?;
                Ok(Flow::Normal)
            }
            Node::Action(pipe) => {
                self.step(pipe.pos, || parse::pipe_string(pipe))?;
                let value = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    let text = print_value(&value);
                    self.write(out, &text, pipe.pos)?;
                }
                Ok(Flow::Normal)
            }
            Node::If(branch) => self.walk_if_or_with(dot, branch, false, out),
            Node::With(branch) => self.walk_if_or_with(dot, branch, true, out),
            Node::Range(branch) => self.walk_range(dot, branch, out),
            Node::Template { pos, name, pipe } => {
                let context = || format!("{{{{template {name:?}}}}}");
                self.step(*pos, context)?;
                let data = match pipe {
                    Some(pipe) => self.eval_pipeline(dot, pipe)?,
                    None => Value::Nil,
                };
                let Some(tree) = self.lookup(name) else {
                    return Err(self.error(
                        *pos,
                        context(),
                        format!("template {name:?} not defined"),
                    ));
                };
                self.enter(*pos, context)?;
                // A pipeline's nil result is Go's invalid value (pipelines unwrap `interface{}`).
                let result = self.run_tree(&tree, data, true, out);
                self.depth -= 1;
                result.map(|_| Flow::Normal)
            }
            Node::Break(_) => Ok(Flow::Break),
            Node::Continue(_) => Ok(Flow::Continue),
        }
    }

    fn walk_if_or_with(
        &mut self,
        dot: &Value,
        branch: &Branch,
        is_with: bool,
        out: &mut String,
    ) -> ExecResult<Flow> {
        let mark = self.vars.len();
        let value = self.eval_pipeline(dot, &branch.pipe)?;
        let flow = if value.is_true() {
            if is_with {
                let saved = std::mem::replace(&mut self.dot_invalid, false);
                let flow = self.walk_list(&value, &branch.list, out);
                self.dot_invalid = saved;
                flow?
            } else {
                self.walk_list(dot, &branch.list, out)?
            }
        } else if let Some(else_list) = &branch.else_list {
            self.walk_list(dot, else_list, out)?
        } else {
            Flow::Normal
        };
        self.vars.truncate(mark);
        Ok(flow)
    }

    fn walk_range(&mut self, dot: &Value, branch: &Branch, out: &mut String) -> ExecResult<Flow> {
        let pipe = &branch.pipe;
        let mark = self.vars.len();
        let value = self.eval_commands(dot, pipe)?;
        // Declared variables sit below the body's variables.
        for name in pipe.decl.iter().rev() {
            if !pipe.is_assign {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        let body_mark = self.vars.len();
        let context = || parse::pipe_string(pipe);
        // Items are produced one at a time: `range 100000000` must cost steps, not memory.
        let (items, count): (Box<dyn Iterator<Item = (Value, Value)>>, usize) = match &value {
            Value::List(list) => collected(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| (Value::Int(i as i64), v.clone()))
                    .collect(),
            ),
            Value::Map(map) => collected(
                map.borrow()
                    .iter()
                    .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                    .collect(),
            ),
            Value::Bytes(bytes) => collected(
                bytes
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (Value::Int(i as i64), Value::Int(i64::from(*b))))
                    .collect(),
            ),
            Value::Int(n) | Value::Int64(n) => {
                if pipe.decl.len() > 1 {
                    return Err(self.error(
                        pipe.pos,
                        context(),
                        format!(
                            "can't use {} to iterate over more than one variable",
                            value.to_go_string()
                        ),
                    ));
                }
                let go_int = matches!(value, Value::Int(_));
                let make = move |i: i64| {
                    if go_int {
                        Value::Int(i)
                    } else {
                        Value::Int64(i)
                    }
                };
                let count = (*n).max(0);
                if count as u64 > self.tmpl.limits.max_steps {
                    return Err(self.error(
                        pipe.pos,
                        context(),
                        format!(
                            "execution step limit of {} exceeded",
                            self.tmpl.limits.max_steps
                        ),
                    ));
                }
                (
                    Box::new((0..count).map(move |i| (make(i), make(i)))),
                    usize::try_from(count).unwrap_or(usize::MAX),
                )
            }
            Value::Nil => collected(Vec::new()),
            Value::Object(object) if object.entries().is_some() => collected(
                object
                    .entries()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (Value::from(k), v))
                    .collect(),
            ),
            other => {
                return Err(self.error(
                    pipe.pos,
                    context(),
                    format!("range can't iterate over {}", other.to_go_string()),
                ));
            }
        };
        if count == 0 {
            self.vars.truncate(mark);
            if let Some(else_list) = &branch.else_list {
                let flow = self.walk_list(dot, else_list, out)?;
                self.vars.truncate(mark);
                return Ok(flow);
            }
            return Ok(Flow::Normal);
        }
        let saved_invalid = std::mem::replace(&mut self.dot_invalid, false);
        let result = (|| {
            for (index, elem) in items {
                self.step(pipe.pos, context)?;
                match pipe.decl.len() {
                    0 => {}
                    1 => self.set_range_var(pipe, 0, elem.clone(), body_mark),
                    _ => {
                        self.set_range_var(pipe, 0, index, body_mark);
                        self.set_range_var(pipe, 1, elem.clone(), body_mark);
                    }
                }
                let flow = self.walk_list(&elem, &branch.list, out)?;
                self.vars.truncate(body_mark);
                if let Flow::Break = flow {
                    break;
                }
            }
            Ok(())
        })();
        self.dot_invalid = saved_invalid;
        self.vars.truncate(mark);
        result.map(|_| Flow::Normal)
    }

    fn set_range_var(&mut self, pipe: &Pipe, which: usize, value: Value, body_mark: usize) {
        let name = &pipe.decl[which];
        if pipe.is_assign {
            self.set_var(name, value);
        } else {
            // Declared in order, pushed so that the first name is nearest the body.
            let slot = body_mark - pipe.decl.len() + (pipe.decl.len() - 1 - which);
            if let Some(entry) = self.vars.get_mut(slot) {
                entry.1 = value;
            }
        }
    }

    fn set_var(&mut self, name: &str, value: Value) {
        if let Some(entry) = self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            entry.1 = value;
        }
    }

    fn var_value(&self, pos: usize, name: &str) -> ExecResult<Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error(pos, name.to_owned(), format!("undefined variable: {name}")))
    }

    fn eval_commands(&mut self, dot: &Value, pipe: &Pipe) -> ExecResult<Value> {
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(dot, cmd, value)?);
        }
        Ok(value.unwrap_or_default())
    }

    fn eval_pipeline(&mut self, dot: &Value, pipe: &Pipe) -> ExecResult<Value> {
        let value = self.eval_commands(dot, pipe)?;
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone());
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, cmd: &Command, final_value: &Option<Value>) -> ExecResult<()> {
        if cmd.args.len() > 1 || final_value.is_some() {
            return Err(self.error(
                cmd.pos,
                parse::command_string(cmd),
                format!(
                    "can't give argument to non-function {}",
                    parse::arg_string(&cmd.args[0])
                ),
            ));
        }
        Ok(())
    }

    fn eval_command(
        &mut self,
        dot: &Value,
        cmd: &Command,
        final_value: Option<Value>,
    ) -> ExecResult<Value> {
        self.step(cmd.pos, || parse::command_string(cmd))?;
        let first = &cmd.args[0];
        match first {
            Arg::Field(pos, names) => {
                let invalid = self.dot_invalid && dot.is_nil();
                self.eval_field_chain(
                    dot,
                    dot.clone(),
                    invalid,
                    *pos,
                    first,
                    names,
                    cmd,
                    final_value,
                )
            }
            Arg::Chain(pos, node, fields) => {
                let receiver = self.eval_arg(dot, node)?;
                self.eval_field_chain(
                    dot,
                    receiver.clone(),
                    receiver.is_nil(),
                    *pos,
                    first,
                    fields,
                    cmd,
                    final_value,
                )
            }
            Arg::Identifier(_, name) => self.eval_function(dot, name, cmd, final_value),
            Arg::Pipe(_, pipe) => {
                self.not_a_function(cmd, &final_value)?;
                self.eval_pipeline(dot, pipe)
            }
            Arg::Variable(pos, names) => {
                let value = self.var_value(*pos, &names[0])?;
                if names.len() == 1 {
                    self.not_a_function(cmd, &final_value)?;
                    return Ok(value);
                }
                let invalid = value.is_nil();
                self.eval_field_chain(
                    dot,
                    value,
                    invalid,
                    *pos,
                    first,
                    &names[1..],
                    cmd,
                    final_value,
                )
            }
            Arg::Nil(pos) => Err(self.error(*pos, "nil".into(), "nil is not a command")),
            _ => {
                self.not_a_function(cmd, &final_value)?;
                self.eval_arg(dot, first)
            }
        }
    }

    fn eval_arg(&mut self, dot: &Value, arg: &Arg) -> ExecResult<Value> {
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Value::Nil),
            Arg::Bool(_, b) => Ok(Value::Bool(*b)),
            Arg::String(_, s, _) => Ok(Value::String(s.clone())),
            Arg::Number(pos, n) => {
                // Go's `idealConstant`: complex first, then float by its look, then int.
                if let Some((re, im)) = n.complex {
                    return Ok(Value::Object(Rc::new(Complex128 { re, im })));
                }
                match (n.looks_float, n.int, n.float) {
                    (true, _, Some(f)) => Ok(Value::Float(f)),
                    (_, Some(i), _) => Ok(Value::Int(i)),
                    _ if n.uint.is_some() => {
                        Err(self.error(*pos, n.text.clone(), format!("{} overflows int", n.text)))
                    }
                    _ => Err(self.error(*pos, n.text.clone(), "invalid number")),
                }
            }
            Arg::Field(pos, names) => {
                let invalid = self.dot_invalid && dot.is_nil();
                let cmd = Command {
                    pos: *pos,
                    args: vec![arg.clone()],
                };
                self.eval_field_chain(dot, dot.clone(), invalid, *pos, arg, names, &cmd, None)
            }
            Arg::Variable(pos, names) => {
                let value = self.var_value(*pos, &names[0])?;
                if names.len() == 1 {
                    return Ok(value);
                }
                let cmd = Command {
                    pos: *pos,
                    args: vec![arg.clone()],
                };
                self.eval_field_chain(
                    dot,
                    value.clone(),
                    value.is_nil(),
                    *pos,
                    arg,
                    &names[1..],
                    &cmd,
                    None,
                )
            }
            Arg::Pipe(_, pipe) => {
                // Variables declared inside parentheses stay visible afterwards, as in Go.
                self.eval_pipeline(dot, pipe)
            }
            Arg::Identifier(pos, name) => {
                let cmd = Command {
                    pos: *pos,
                    args: vec![arg.clone()],
                };
                self.eval_function(dot, name, &cmd, None)
            }
            Arg::Chain(pos, node, fields) => {
                let receiver = self.eval_arg(dot, node)?;
                let cmd = Command {
                    pos: *pos,
                    args: vec![arg.clone()],
                };
                self.eval_field_chain(
                    dot,
                    receiver.clone(),
                    receiver.is_nil(),
                    *pos,
                    arg,
                    fields,
                    &cmd,
                    None,
                )
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain(
        &mut self,
        dot: &Value,
        mut receiver: Value,
        mut invalid: bool,
        pos: usize,
        node: &Arg,
        names: &[Rc<str>],
        cmd: &Command,
        final_value: Option<Value>,
    ) -> ExecResult<Value> {
        let last = names.len().saturating_sub(1);
        for name in &names[..last] {
            let (value, now_invalid) =
                self.eval_field(dot, name, receiver, invalid, pos, node, None, None)?;
            receiver = value;
            invalid = now_invalid;
        }
        let (value, _) = self.eval_field(
            dot,
            &names[last],
            receiver,
            invalid,
            pos,
            node,
            Some(cmd),
            final_value,
        )?;
        Ok(value)
    }

    /// One field step; returns the value and whether it is Go's invalid value.
    #[allow(clippy::too_many_arguments)]
    fn eval_field(
        &mut self,
        dot: &Value,
        name: &str,
        receiver: Value,
        receiver_invalid: bool,
        pos: usize,
        node: &Arg,
        cmd: Option<&Command>,
        final_value: Option<Value>,
    ) -> ExecResult<(Value, bool)> {
        let has_args = cmd.is_some_and(|c| c.args.len() > 1) || final_value.is_some();
        let context = || parse::arg_string(node);
        match &receiver {
            Value::Nil => {
                if receiver_invalid {
                    if self.tmpl.missing_key == MissingKey::Error {
                        return Err(self.error(
                            pos,
                            context(),
                            format!("nil data; no entry for key {name:?}"),
                        ));
                    }
                    return Ok((Value::Nil, true));
                }
                Err(self.error(
                    pos,
                    context(),
                    format!("nil pointer evaluating interface {{}}.{name}"),
                ))
            }
            Value::Object(object) => {
                if object.has_method(name) {
                    let mut args = Vec::new();
                    if let Some(cmd) = cmd {
                        for arg in &cmd.args[1..] {
                            args.push(self.eval_arg(dot, arg)?);
                        }
                    }
                    if let Some(v) = final_value {
                        args.push(v);
                    }
                    return object.call_method(name, &args).map(|v| (v, false)).map_err(
                        |message| {
                            self.error(pos, context(), format!("error calling {name}: {message}"))
                        },
                    );
                }
                match object.field(name) {
                    Some(value) => {
                        if has_args {
                            return Err(self.error(
                                pos,
                                context(),
                                format!("{name} has arguments but cannot be invoked as function"),
                            ));
                        }
                        Ok((value, false))
                    }
                    None => Err(self.error(
                        pos,
                        context(),
                        format!("can't evaluate field {name} in type {}", object.type_name()),
                    )),
                }
            }
            Value::Map(map) => {
                if has_args {
                    return Err(self.error(
                        pos,
                        context(),
                        format!("{name} is not a method but has arguments"),
                    ));
                }
                let found = map.borrow().get(name).cloned();
                match found {
                    Some(value) => Ok((value, false)),
                    None => match self.tmpl.missing_key {
                        MissingKey::Default => Ok((Value::Nil, true)),
                        MissingKey::Zero => Ok((Value::Nil, false)),
                        MissingKey::Error => Err(self.error(
                            pos,
                            context(),
                            format!("map has no entry for key {name:?}"),
                        )),
                    },
                }
            }
            other => Err(self.error(
                pos,
                context(),
                format!("can't evaluate field {name} in type {}", other.type_name()),
            )),
        }
    }

    fn eval_function(
        &mut self,
        dot: &Value,
        name: &str,
        cmd: &Command,
        final_value: Option<Value>,
    ) -> ExecResult<Value> {
        let context = || parse::command_string(cmd);
        let Some(func) = self.tmpl.funcs.get(name).cloned() else {
            return Err(self.error(
                cmd.pos,
                context(),
                format!("{name:?} is not a defined function"),
            ));
        };
        let given = cmd.args.len() - 1 + usize::from(final_value.is_some());
        if func.variadic && given < func.params {
            return Err(self.error(
                cmd.pos,
                context(),
                format!(
                    "wrong number of args for {name}: want at least {} got {given}",
                    func.params
                ),
            ));
        }
        if !func.variadic && given != func.params {
            return Err(self.error(
                cmd.pos,
                context(),
                format!(
                    "wrong number of args for {name}: want {} got {given}",
                    func.params
                ),
            ));
        }
        if name == "and" || name == "or" {
            let stop_on = name == "or";
            let mut value = Value::Nil;
            for arg in &cmd.args[1..] {
                value = self.eval_arg(dot, arg)?;
                if value.is_true() == stop_on {
                    return Ok(value);
                }
            }
            if let Some(v) = final_value {
                value = v;
            }
            return Ok(value);
        }
        let mut args = Vec::with_capacity(given);
        for arg in &cmd.args[1..] {
            args.push(self.eval_arg(dot, arg)?);
        }
        if let Some(v) = final_value {
            args.push(v);
        }
        let saved_tree = self.tree.clone();
        let result = (func.body)(self, &args);
        self.tree = saved_tree;
        result.map_err(|e| self.error(cmd.pos, context(), format!("error calling {name}: {e}")))
    }
}

use crate::parse::Branch;

impl Runtime for State<'_> {
    fn execute_named(&mut self, name: &str, data: Value) -> Result<String, FuncError> {
        let tree = self.lookup(name).ok_or_else(|| {
            FuncError(format!(
                "template: no template {name:?} associated with template {:?}",
                self.tree.name
            ))
        })?;
        self.enter(0, || name.to_owned())
            .map_err(|e| FuncError(e.to_string()))?;
        let mut out = String::new();
        let result = self.run_tree(&tree, data, true, &mut out);
        self.depth -= 1;
        result.map_err(|e| FuncError(e.to_string()))?;
        Ok(out)
    }

    fn execute_text(&mut self, text: &str, data: Value) -> Result<String, FuncError> {
        let name = self.tree.name.clone();
        let funcs = self.tmpl.funcs.clone();
        let trees = parse::parse(&name, text, &|f| funcs.contains(f))
            .map_err(|e| FuncError(e.to_string()))?;
        let mut overlay = HashMap::new();
        let mut main = None;
        for (i, tree) in trees.into_iter().enumerate() {
            if i == 0 {
                main = Some(Rc::new(tree));
            } else {
                associate(&mut overlay, tree);
            }
        }
        let Some(main) = main else {
            return Ok(String::new());
        };
        self.enter(0, || name.clone())
            .map_err(|e| FuncError(e.to_string()))?;
        self.overlays.push(overlay);
        let mut out = String::new();
        let result = self.run_tree(&main, data, true, &mut out);
        self.overlays.pop();
        self.depth -= 1;
        result.map_err(|e| FuncError(e.to_string()))?;
        Ok(out)
    }

    fn template_name(&self) -> String {
        self.tree.name.clone()
    }
}

/// How an action prints its value: Go's invalid/nil value is `<no value>`, everything else
/// `fmt.Sprint`.
pub fn print_value(value: &Value) -> String {
    match value {
        Value::Nil => "<no value>".to_owned(),
        other => other.to_go_string(),
    }
}

/// The items of a `range` over a collection, with their number.
fn collected(items: Vec<(Value, Value)>) -> (Box<dyn Iterator<Item = (Value, Value)>>, usize) {
    let count = items.len();
    (Box::new(items.into_iter()), count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    fn run_with(text: &str, data: Value, missing: MissingKey) -> Result<String, String> {
        let mut funcs = FuncMap::new();
        funcs.add_runtime("include", 2, false, |rt, args| {
            let name = crate::funcs::arg_str(args, 0)?.to_owned();
            rt.execute_named(&name, args[1].clone()).map(Value::from)
        });
        funcs.add_runtime("tpl", 2, false, |rt, args| {
            let text = crate::funcs::arg_str(args, 0)?.to_owned();
            rt.execute_text(&text, args[1].clone()).map(Value::from)
        });
        let mut t = Template::new(funcs);
        t.missing_key = missing;
        t.parse("t", text).map_err(|e| e.to_string())?;
        t.execute("t", data).map_err(|e| e.to_string())
    }

    fn values() -> Value {
        let mut nested = Map::new();
        nested.insert("z".into(), Value::from("deep"));
        let mut m = Map::new();
        m.insert("str".into(), Value::from("hello"));
        m.insert("num".into(), Value::Float(1_000_000.0));
        m.insert("i".into(), Value::Float(42.0));
        m.insert(
            "list".into(),
            Value::from(vec![Value::from("b"), Value::from("a")]),
        );
        m.insert("nested".into(), Value::from(nested));
        m.insert("n".into(), Value::Nil);
        let mut top = Map::new();
        top.insert("Values".into(), Value::from(m));
        Value::from(top)
    }

    fn run(text: &str) -> Result<String, String> {
        run_with(text, values(), MissingKey::Zero)
    }

    #[test]
    fn printing_and_missing_values() {
        // Outputs as real Helm gives them (helm-parity snippets).
        assert_eq!(run("{{ .Values.num }}").unwrap(), "1e+06");
        assert_eq!(run("{{ .Values.nope }}").unwrap(), "<no value>");
        assert_eq!(run("{{ .Values.n }}").unwrap(), "<no value>");
        assert_eq!(run("{{ .Values.list }}").unwrap(), "[b a]");
        assert_eq!(run("{{ .Values.nested }}").unwrap(), "map[z:deep]");
        let err = run("{{ .Values.nope.deeper }}").unwrap_err();
        assert!(
            err.ends_with("nil pointer evaluating interface {}.deeper"),
            "{err}"
        );
    }

    #[test]
    fn control_flow() {
        assert_eq!(
            run("{{ range $i, $v := .Values.list }}{{ $i }}={{ $v }};{{ end }}").unwrap(),
            "0=b;1=a;"
        );
        assert_eq!(
            run("{{ range $k, $v := .Values.nested }}{{ $k }}:{{ $v }}{{ end }}").unwrap(),
            "z:deep"
        );
        assert_eq!(
            run("{{ range 5 }}{{ if eq . 3 }}{{ break }}{{ end }}{{ . }}{{ end }}").unwrap(),
            "012"
        );
        assert_eq!(
            run(
                "{{ range .Values.list }}{{ if eq . \"b\" }}{{ continue }}{{ end }}{{ . }}{{ end }}"
            )
            .unwrap(),
            "a"
        );
        assert_eq!(
            run("{{ range .Values.nope }}x{{ else }}empty{{ end }}").unwrap(),
            "empty"
        );
        assert_eq!(
            run("{{ if .Values.nope }}a{{ else if .Values.str }}b{{ else }}c{{ end }}").unwrap(),
            "b"
        );
        assert_eq!(
            run("{{ with .Values.nope }}a{{ else with .Values.nested }}{{ .z }}{{ end }}").unwrap(),
            "deep"
        );
        assert_eq!(
            run("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}").unwrap(),
            "2"
        );
    }

    #[test]
    fn functions_pipelines_and_errors() {
        assert_eq!(run("{{ .Values.str | printf \"%s\" | len }}").unwrap(), "5");
        assert_eq!(run("{{ or .Values.nope \"dflt\" }}").unwrap(), "dflt");
        assert_eq!(run("{{ and 1 0 2 }}").unwrap(), "0");
        let err = run("{{ eq .Values.i 42 }}").unwrap_err();
        assert_eq!(
            err,
            "template: t:1:3: executing \"t\" at <eq .Values.i 42>: error calling eq: incompatible types for comparison: float64 and int"
        );
        let err = run("{{ index .Values.list 9 }}").unwrap_err();
        assert_eq!(
            err,
            "template: t:1:3: executing \"t\" at <index .Values.list 9>: error calling index: index out of range: 9"
        );
        let err = run("{{ len }}").unwrap_err();
        assert!(
            err.contains("wrong number of args for len: want 1 got 0"),
            "{err}"
        );
    }

    #[test]
    fn templates_include_and_tpl() {
        assert_eq!(
            run(r#"{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .Values.str }}{{ include "x" 3 }}"#)
                .unwrap(),
            "[hello][3]"
        );
        assert_eq!(
            run(r#"{{ tpl "{{ .Values.str }}-{{ define \"y\" }}Y{{ end }}{{ template \"y\" }}" . }}"#)
                .unwrap(),
            "hello-Y"
        );
    }

    /// A text parsed again under another name reuses the first parse, yet errors name the
    /// file being executed, and the later copy's definitions are the ones kept.
    #[test]
    fn a_copied_template_keeps_its_own_name() {
        let text =
            "{{ define \"lib.fail\" }}{{ .nope.deeper }}{{ end }}x{{ template \"lib.fail\" . }}";
        let mut t = Template::new(FuncMap::new());
        t.missing_key = MissingKey::Error;
        t.parse("a/charts/common/templates/_lib.tpl", text).unwrap();
        t.parse("b/charts/common/templates/_lib.tpl", text).unwrap();
        assert_eq!(t.parsed.len(), 1, "the copy was parsed again");
        for name in [
            "a/charts/common/templates/_lib.tpl",
            "b/charts/common/templates/_lib.tpl",
        ] {
            assert!(t.has(name), "{name}");
        }
        let err = t
            .execute(
                "a/charts/common/templates/_lib.tpl",
                Value::Map(Default::default()),
            )
            .unwrap_err()
            .to_string();
        // The definition executed is the later copy's, as Go keeps the last one.
        assert!(
            err.contains("b/charts/common/templates/_lib.tpl:1:"),
            "{err}"
        );
        let fresh = {
            let mut alone = Template::new(FuncMap::new());
            alone.missing_key = MissingKey::Error;
            alone
                .parse("b/charts/common/templates/_lib.tpl", text)
                .unwrap();
            alone
                .execute(
                    "b/charts/common/templates/_lib.tpl",
                    Value::Map(Default::default()),
                )
                .unwrap_err()
                .to_string()
        };
        let copied = t
            .execute(
                "b/charts/common/templates/_lib.tpl",
                Value::Map(Default::default()),
            )
            .unwrap_err()
            .to_string();
        assert_eq!(copied, fresh, "a copy fails differently from a fresh parse");
    }

    #[test]
    fn hostile_recursion_and_output_are_bounded() {
        let err =
            run(r#"{{ define "r" }}{{ include "r" . }}{{ end }}{{ include "r" . }}"#).unwrap_err();
        assert!(err.contains("exceeded maximum template depth"), "{err}");
        let mut t = Template::new(FuncMap::new());
        t.limits.max_output = 1000;
        // A range over a large integer produces its items one at a time: it stops at the
        // output limit instead of first building 10^8 items.
        t.parse("t", "{{ range $i := 100000000 }}xxxxxxxxxx{{ end }}")
            .unwrap();
        let err = t.execute("t", Value::Nil).unwrap_err().to_string();
        assert!(
            err.contains("output size limit of 1000 bytes exceeded"),
            "{err}"
        );
    }

    #[test]
    fn missing_key_modes() {
        assert_eq!(
            run_with("{{ .Values.nope.deeper }}", values(), MissingKey::Default).unwrap(),
            "<no value>"
        );
        let err = run_with("{{ .Values.nope }}", values(), MissingKey::Error).unwrap_err();
        assert!(err.ends_with("map has no entry for key \"nope\""), "{err}");
        // A pipeline's nil result is Go's invalid value (Go unwraps interface{} results), so
        // fields of it are empty rather than an error — Helm charts rely on
        // `(.Values.resources.limits).cpu`.
        assert_eq!(run("{{ (.Values.nope).cpu }}").unwrap(), "<no value>");
        assert_eq!(
            run("{{ $x := .Values.nope }}{{ $x.cpu }}").unwrap(),
            "<no value>"
        );
        // Nil data is Go's invalid value: field access gives nothing, no error.
        assert_eq!(
            run_with("{{ .a.b }}", Value::Nil, MissingKey::Zero).unwrap(),
            "<no value>"
        );
    }

    /// xorshift64*: the generated templates' source (the same sets on every run).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<T: Copy>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())]
        }
    }

    /// A generated template text: literal text and line breaks, fields (present, nested,
    /// missing, nil), `if`/`else`, `range`, `with`, `template` and `include` of definitions
    /// (some never defined), `define`s and `block`s, `tpl` defining its own, functions,
    /// variables, comments, trim markers, and a failing `index`.
    fn generated_text(rng: &mut Rng, depth: usize) -> String {
        let mut text = String::new();
        for _ in 0..1 + rng.below(6) {
            let (open, close) = (rng.pick(&["{{ ", "{{- "]), rng.pick(&[" }}", " -}}"]));
            let piece = match rng.below(19) {
                0 => rng
                    .pick(&["text ", "line\n", "  indented\n", "\r\n"])
                    .to_owned(),
                1 => format!("{open}.a{close}"),
                2 => format!("{open}.b.c{close}"),
                3 if rng.below(4) == 0 => format!("{open}.missing.deeper{close}"),
                4 => format!("{open}.n{close}"),
                5 => format!("{open}if .flag{close}T{{{{ else }}}}F{{{{ end }}}}"),
                6 => format!(
                    "{open}range $i, $v := .list{close}{{{{ $i }}}}:{{{{ $v }}}},{{{{ end }}}}"
                ),
                7 => format!("{open}with .b{close}{{{{ .c }}}}{{{{ end }}}}"),
                8 => format!("{open}template \"d{}\" .{close}", rng.below(4)),
                9 => format!("{open}include \"d{}\" .{close}", rng.below(4)),
                10 if depth == 0 => format!(
                    "{{{{ define \"d{}\" }}}}{}{{{{ end }}}}",
                    rng.below(4),
                    generated_text(rng, depth + 1)
                ),
                11 if depth == 0 => format!(
                    "{open}block \"d{}\" .{close}{}{{{{ end }}}}",
                    rng.below(4),
                    generated_text(rng, depth + 1)
                ),
                12 => format!("{open}printf \"%v|%d\" .a 3{close}"),
                13 => format!("{open}len .list{close}"),
                14 if rng.below(4) == 0 => format!("{open}index .list 5{close}"),
                15 => format!(
                    "{open}tpl \"{{{{ .a }}}}{{{{ define \\\"d{0}\\\" }}}}in tpl{{{{ end }}}}{{{{ template \\\"d{0}\\\" }}}}\" .{close}",
                    rng.below(4)
                ),
                16 => format!("{open}/* a comment */{close}"),
                17 => format!("{open}$x := .a{close}{{{{ $x }}}}"),
                _ => "plain".to_owned(),
            };
            text.push_str(&piece);
        }
        text
    }

    /// The executor's functions for these sets: `include` and `tpl` as Helm has them.
    fn runtime_funcs() -> FuncMap {
        let mut funcs = FuncMap::new();
        funcs.add_runtime("include", 2, false, |rt, args| {
            let name = crate::funcs::arg_str(args, 0)?.to_owned();
            rt.execute_named(&name, args[1].clone()).map(Value::from)
        });
        funcs.add_runtime("tpl", 2, false, |rt, args| {
            let text = crate::funcs::arg_str(args, 0)?.to_owned();
            rt.execute_text(&text, args[1].clone()).map(Value::from)
        });
        funcs
    }

    /// Generated template sets in which texts recur under other names (a library vendored
    /// per subchart) run alike whether a recurring text reuses its first parse (the
    /// parse-once table), reuses another set's parses (`Template::reuse_parses_of`, as a
    /// render reuses its run ahead's), or is parsed anew (the reference: every registered
    /// text made distinct by a trailing comment, so nothing is reused): the same output or
    /// the same error, naming the same file, for every template and data.
    #[test]
    fn generated_sets_run_alike_with_parses_reused_or_not() {
        const SETS: usize = 10_000;
        let mut rng = Rng(0x7e3d_1a7e_0043_0006);
        let data = {
            let mut b = Map::new();
            b.insert("c".into(), Value::Int(1));
            let mut m = Map::new();
            m.insert("a".into(), Value::from("x"));
            m.insert("b".into(), Value::from(b));
            m.insert("flag".into(), Value::Bool(true));
            m.insert(
                "list".into(),
                Value::from(vec![Value::from("p"), Value::from("q")]),
            );
            m.insert("n".into(), Value::Nil);
            Value::from(m)
        };
        let (mut copies, mut failures, mut runs) = (0, 0, 0);
        for index in 0..SETS {
            let texts: Vec<String> = (0..1 + rng.below(4))
                .map(|_| generated_text(&mut rng, 0))
                .collect();
            // Files in parse order: each text under one or more names.
            let files: Vec<(String, usize)> = (0..1 + rng.below(7))
                .map(|k| {
                    (
                        format!("c{k}/templates/f{}.yaml", rng.below(3)),
                        rng.below(texts.len()),
                    )
                })
                .collect();
            let missing_key = rng.pick(&[MissingKey::Zero, MissingKey::Error]);
            let new_set = || {
                let mut set = Template::new(runtime_funcs());
                set.missing_key = missing_key;
                set
            };
            let (mut fast, mut reused, mut reference, mut earlier) =
                (new_set(), new_set(), new_set(), new_set());
            // Another set parses some of the texts first (a run ahead's partials).
            for (k, (name, text)) in files.iter().enumerate() {
                if rng.below(2) == 0 {
                    let _ = earlier.parse(&format!("ahead{k}/{name}"), &texts[*text]);
                }
            }
            reused.reuse_parses_of(&earlier);
            let mut parsed = Vec::new();
            for (k, (name, text)) in files.iter().enumerate() {
                let text = &texts[*text];
                let outcomes = [
                    fast.parse(name, text).map_err(|e| e.to_string()),
                    reused.parse(name, text).map_err(|e| e.to_string()),
                    reference
                        .parse(name, &format!("{text}{{{{/* {k} */}}}}"))
                        .map_err(|e| e.to_string()),
                ];
                assert!(
                    outcomes[0] == outcomes[1] && outcomes[0].is_ok() == outcomes[2].is_ok(),
                    "set {index}: {name} parses otherwise: {outcomes:?}\n{text:?}"
                );
                if outcomes[0].is_ok() {
                    parsed.push(name.clone());
                }
            }
            copies += (0..files.len())
                .filter(|&k| files[..k].iter().any(|(_, text)| *text == files[k].1))
                .count();
            let names: Vec<String> = parsed
                .iter()
                .cloned()
                .chain((0..4).map(|d| format!("d{d}")).filter(|d| fast.has(d)))
                .collect();
            for name in &names {
                for dot in [data.clone(), Value::Nil] {
                    let run =
                        |set: &Template| set.execute(name, dot.clone()).map_err(|e| e.to_string());
                    let (fast_run, reused_run, reference_run) =
                        (run(&fast), run(&reused), run(&reference));
                    let show = || {
                        files
                            .iter()
                            .map(|(name, text)| format!("--- {name}\n{}\n", texts[*text]))
                            .collect::<String>()
                    };
                    assert_eq!(
                        fast_run,
                        reference_run,
                        "set {index}: {name} runs otherwise with copies parsed once (left) than each parsed anew:\n{}",
                        show()
                    );
                    assert_eq!(
                        reused_run,
                        reference_run,
                        "set {index}: {name} runs otherwise with another set's parses reused (left) than each parsed anew:\n{}",
                        show()
                    );
                    runs += 1;
                    failures += usize::from(reference_run.is_err());
                }
            }
        }
        eprintln!(
            "{SETS} generated template sets ({copies} copied texts) ran alike with parses reused or not: {runs} runs, {failures} of them failing alike"
        );
        assert!(copies >= SETS, "{copies}");
        assert!(
            (runs / 10..=runs * 3 / 4).contains(&failures),
            "{failures} of {runs}"
        );
    }
}
