//! The parser: lexer items into a tree, following Go's `text/template/parse` grammar —
//! actions, pipelines with declarations, parenthesised pipelines, field chains, control
//! structures (`if`/`else if`, `range` with `break`/`continue`, `with`/`else with`),
//! `define`/`template`/`block`, and Go's parse-time checks (undefined variables and
//! functions, misplaced `end`/`else`/`break`) with Go's error wording.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::fmt;
use std::rc::Rc;

use crate::lex::{Item, ItemKind, LexError, lex_until_error};
pub use crate::number::Number;
use crate::number::{Literal, parse_number};

/// A parse error: template name, line and Go's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// Name of the template (file) being parsed.
    pub name: String,
    /// Line of the error.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "template: {}:{}: {}", self.name, self.line, self.message)
    }
}

/// A node of the tree.
#[derive(Debug, Clone)]
pub enum Node {
    /// Literal text.
    Text(Rc<str>),
    /// `{{pipeline}}`: evaluate and print (unless it declares variables).
    Action(Pipe),
    /// `{{if}}`.
    If(Branch),
    /// `{{range}}`.
    Range(Branch),
    /// `{{with}}`.
    With(Branch),
    /// `{{template "name" pipeline}}` (also what `{{block}}` leaves in place).
    Template {
        /// Byte offset.
        pos: usize,
        /// Template to run.
        name: String,
        /// Its data, if given.
        pipe: Option<Pipe>,
    },
    /// `{{break}}`.
    Break(usize),
    /// `{{continue}}`.
    Continue(usize),
}

/// The parts shared by `if`, `range` and `with`.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The controlling pipeline.
    pub pipe: Pipe,
    /// Body.
    pub list: Vec<Node>,
    /// `{{else}}` body.
    pub else_list: Option<Vec<Node>>,
}

/// A pipeline: optional variable declarations and `|`-separated commands.
#[derive(Debug, Clone)]
pub struct Pipe {
    /// Byte offset.
    pub pos: usize,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    /// Declared variable names, `$` included.
    pub decl: Vec<String>,
    /// Commands.
    pub cmds: Vec<Command>,
}

/// One command: a function or operand with arguments.
#[derive(Debug, Clone)]
pub struct Command {
    /// Byte offset of its first token.
    pub pos: usize,
    /// Operands.
    pub args: Vec<Arg>,
}

/// An operand.
#[derive(Debug, Clone)]
pub enum Arg {
    /// `.A.B` (names without dots).
    Field(usize, Vec<Rc<str>>),
    /// `$x.A.B`: the variable name then fields.
    Variable(usize, Vec<Rc<str>>),
    /// `.`.
    Dot(usize),
    /// `nil`.
    Nil(usize),
    /// `true`/`false`.
    Bool(usize, bool),
    /// A number or character constant.
    Number(usize, Number),
    /// A string constant: value and text as written.
    String(usize, Rc<str>, Rc<str>),
    /// A function name.
    Identifier(usize, Rc<str>),
    /// `(pipeline).A.B` or another term followed by fields.
    Chain(usize, Box<Arg>, Vec<Rc<str>>),
    /// `(pipeline)`.
    Pipe(usize, Box<Pipe>),
}

impl Arg {
    /// Byte offset.
    pub fn pos(&self) -> usize {
        match self {
            Arg::Field(p, _)
            | Arg::Variable(p, _)
            | Arg::Dot(p)
            | Arg::Nil(p)
            | Arg::Bool(p, _)
            | Arg::Number(p, _)
            | Arg::String(p, _, _)
            | Arg::Identifier(p, _)
            | Arg::Chain(p, _, _)
            | Arg::Pipe(p, _) => *p,
        }
    }
}

/// One parsed template.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Template name.
    pub name: String,
    /// Name of the file it came from (for error positions).
    pub parse_name: String,
    /// Its text (for line and column of errors).
    pub text: Rc<str>,
    /// Body (shared by the copies of a tree parsed once, see `Template::parse`).
    pub root: Rc<[Node]>,
}

impl Tree {
    /// Line and column (0-based byte offset in the line, as Go prints it) of a byte offset.
    pub fn line_col(&self, pos: usize) -> (usize, usize) {
        let before = self.text.get(..pos.min(self.text.len())).unwrap_or("");
        let line = 1 + before.matches('\n').count();
        let col = before
            .rfind('\n')
            .map_or(before.len(), |nl| before.len() - nl - 1);
        (line, col)
    }

    /// Whether the body is only whitespace text (an empty `define` does not replace).
    pub fn is_empty(&self) -> bool {
        self.root.iter().all(|n| match n {
            Node::Text(t) => t.trim().is_empty(),
            _ => false,
        })
    }
}

/// Parse `text` as template `name`; returns the main tree and every `define`d/`block` tree
/// (in order). `is_func` says whether a function name exists (Go checks at parse time).
pub fn parse(
    name: &str,
    text: &str,
    is_func: &dyn Fn(&str) -> bool,
) -> Result<Vec<Tree>, ParseError> {
    parse_interned(name, text, is_func, &mut Names::default())
}

/// The names and constants of parsed templates, one shared copy of each: a template set
/// names the same functions, fields and templates thousands of times (`include`,
/// `.Values`, `"common.names.fullname"`), and one allocation per occurrence — made while
/// parsing, freed with the tree — was most of what parsing cost.
#[derive(Clone, Default)]
pub struct Names {
    known: HashSet<Rc<str>>,
}

impl Names {
    /// The shared copy of `text`.
    pub fn get(&mut self, text: &str) -> Rc<str> {
        if let Some(known) = self.known.get(text) {
            return known.clone();
        }
        let name: Rc<str> = Rc::from(text);
        self.known.insert(name.clone());
        name
    }
}

/// [`parse`] with names and constants shared with earlier parses through `names`.
pub fn parse_interned(
    name: &str,
    text: &str,
    is_func: &dyn Fn(&str) -> bool,
    names: &mut Names,
) -> Result<Vec<Tree>, ParseError> {
    let (items, lex_error) = lex_until_error(text);
    let text: Rc<str> = Rc::from(text);
    let mut parser = Parser {
        items,
        lex_error,
        at: 0,
        name: name.to_owned(),
        text: text.clone(),
        vars: vec!["$"],
        range_depth: 0,
        is_func,
        defined: Vec::new(),
        defined_names: HashMap::new(),
        names,
    };
    let root = parser.parse_top()?;
    let mut trees = vec![Tree {
        name: name.to_owned(),
        parse_name: name.to_owned(),
        text,
        root: root.into(),
    }];
    trees.append(&mut parser.defined);
    Ok(trees)
}

enum Stop {
    End,
    Else(usize),
}

struct Parser<'a> {
    items: Vec<Item<'a>>,
    /// The error that stopped the lexer, reported when the parser reaches its item.
    lex_error: Option<LexError>,
    at: usize,
    name: String,
    text: Rc<str>,
    vars: Vec<&'a str>,
    range_depth: usize,
    is_func: &'a dyn Fn(&str) -> bool,
    defined: Vec<Tree>,
    defined_names: HashMap<String, usize>,
    names: &'a mut Names,
}

type PResult<T> = Result<T, ParseError>;

fn kind_desc(item: &Item<'_>) -> String {
    match item.kind {
        ItemKind::Eof => "EOF".into(),
        ItemKind::RightDelim => "\"}}\"".into(),
        ItemKind::LeftDelim => "\"{{\"".into(),
        ItemKind::Keyword => format!("<{}>", item.text),
        ItemKind::Space => "space".into(),
        // Go's `%.10q...` for long items: the first ten characters, quoted.
        _ if item.text.chars().nth(10).is_some() => {
            let head: String = item.text.chars().take(10).collect();
            format!("{head:?}...")
        }
        _ => format!("{:?}", item.text),
    }
}

impl<'a> Parser<'a> {
    fn error<T>(&self, line: usize, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            name: self.name.clone(),
            line,
            message: message.into(),
        })
    }

    fn peek(&self) -> &Item<'a> {
        &self.items[self.at.min(self.items.len() - 1)]
    }

    fn next(&mut self) -> Item<'a> {
        let item = *self.peek();
        if self.at < self.items.len() {
            self.at += 1;
        }
        item
    }

    fn backup(&mut self) {
        self.at = self.at.saturating_sub(1);
    }

    fn next_non_space(&mut self) -> Item<'a> {
        loop {
            let item = self.next();
            if item.kind != ItemKind::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item<'a> {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn expect(&mut self, kind: ItemKind, context: &str) -> PResult<Item<'a>> {
        let item = self.next_non_space();
        if item.kind != kind {
            return self.unexpected(&item, context);
        }
        Ok(item)
    }

    fn unexpected<T>(&self, item: &Item<'_>, context: &str) -> PResult<T> {
        if item.kind == ItemKind::Error
            && let Some(error) = &self.lex_error
        {
            return self.error(error.line, error.message.clone());
        }
        if item.kind == ItemKind::Eof {
            return self.error(item.line, format!("unexpected EOF in {context}"));
        }
        self.error(
            item.line,
            format!("unexpected {} in {context}", kind_desc(item)),
        )
    }

    fn parse_top(&mut self) -> PResult<Vec<Node>> {
        let mut list = Vec::new();
        loop {
            match self.peek().kind {
                ItemKind::Eof => return Ok(list),
                ItemKind::LeftDelim if self.define_follows() => {
                    self.next();
                    self.next_non_space();
                    self.parse_definition()?;
                    continue;
                }
                _ => {}
            }
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                Parsed::Nothing => {}
                Parsed::End(pos) => return self.error(self.line_of(pos), "unexpected {{end}}"),
                Parsed::Else(pos) => return self.error(self.line_of(pos), "unexpected {{else}}"),
            }
        }
    }

    /// Whether the `{{` at the current item opens a `define`.
    fn define_follows(&self) -> bool {
        self.items[self.at + 1..]
            .iter()
            .find(|i| i.kind != ItemKind::Space)
            .is_some_and(|i| i.kind == ItemKind::Keyword && i.text == "define")
    }

    fn line_of(&self, pos: usize) -> usize {
        1 + self.text.get(..pos).unwrap_or("").matches('\n').count()
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let name_item = self.next_non_space();
        let name = match name_item.kind {
            ItemKind::String | ItemKind::RawString => unquote(name_item.text)
                .ok_or(())
                .or_else(|_| self.error(name_item.line, "bad string in define"))?,
            _ => return self.unexpected(&name_item, "define clause"),
        };
        self.expect(ItemKind::RightDelim, "define clause")?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let (list, stop) = self.item_list()?;
        self.vars = saved_vars;
        if let Stop::Else(pos) = stop {
            return self.error(self.line_of(pos), "unexpected {{else}} in define clause");
        }
        self.add_tree(name, list, name_item.line)
    }

    fn add_tree(&mut self, name: String, root: Vec<Node>, line: usize) -> PResult<()> {
        let tree = Tree {
            name: name.clone(),
            parse_name: self.name.clone(),
            text: self.text.clone(),
            root: root.into(),
        };
        if let Some(&index) = self.defined_names.get(&name) {
            let existing = &self.defined[index];
            if existing.is_empty() {
                self.defined[index] = tree;
            } else if !tree.is_empty() {
                return self.error(
                    line,
                    format!("template: multiple definition of template {name:?}"),
                );
            }
            return Ok(());
        }
        self.defined_names.insert(name, self.defined.len());
        self.defined.push(tree);
        Ok(())
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, Stop)> {
        let mut list = Vec::new();
        loop {
            if self.peek_non_space().kind == ItemKind::Eof {
                let line = self.peek().line;
                return self.error(line, "unexpected EOF");
            }
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                Parsed::Nothing => {}
                Parsed::End(_) => return Ok((list, Stop::End)),
                Parsed::Else(pos) => return Ok((list, Stop::Else(pos))),
            }
        }
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            ItemKind::Text => Ok(Parsed::Node(Node::Text(Rc::from(item.text)))),
            ItemKind::LeftDelim => self.action(),
            ItemKind::Comment => Ok(Parsed::Nothing),
            _ => self.unexpected(&item, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let item = self.next_non_space();
        if item.kind == ItemKind::Keyword {
            match item.text {
                "block" => return self.block_control(item.pos).map(Parsed::Node),
                "break" => return self.loop_control(&item, true).map(Parsed::Node),
                "continue" => return self.loop_control(&item, false).map(Parsed::Node),
                "else" => return self.else_control(),
                "end" => {
                    self.expect(ItemKind::RightDelim, "end")?;
                    return Ok(Parsed::End(item.pos));
                }
                "if" => return self.branch_control("if").map(|b| Parsed::Node(Node::If(b))),
                "range" => {
                    return self
                        .branch_control("range")
                        .map(|b| Parsed::Node(Node::Range(b)));
                }
                "template" => return self.template_control(item.pos).map(Parsed::Node),
                "with" => {
                    return self
                        .branch_control("with")
                        .map(|b| Parsed::Node(Node::With(b)));
                }
                _ => {}
            }
        }
        self.backup();
        let pipe = self.pipeline("command", ItemKind::RightDelim)?;
        Ok(Parsed::Node(Node::Action(pipe)))
    }

    fn loop_control(&mut self, item: &Item, is_break: bool) -> PResult<Node> {
        let word = if is_break { "break" } else { "continue" };
        let next = self.next_non_space();
        if next.kind != ItemKind::RightDelim {
            return self.unexpected(&next, &format!("{{{{{word}}}}}"));
        }
        if self.range_depth == 0 {
            return self.error(item.line, format!("{{{{{word}}}}} outside {{{{range}}}}"));
        }
        Ok(if is_break {
            Node::Break(item.pos)
        } else {
            Node::Continue(item.pos)
        })
    }

    fn else_control(&mut self) -> PResult<Parsed> {
        let peek = self.peek_non_space();
        if peek.kind == ItemKind::Keyword && (peek.text == "if" || peek.text == "with") {
            // `{{else if ...}}` is `{{else}}{{if ...}}...{{end}}`: leave the keyword for the
            // enclosing branch to parse.
            return Ok(Parsed::Else(peek.pos));
        }
        let token = self.expect(ItemKind::RightDelim, "else")?;
        Ok(Parsed::Else(token.pos))
    }

    fn branch_control(&mut self, context: &str) -> PResult<Branch> {
        let vars_mark = self.vars.len();
        let pipe = self.pipeline(context, ItemKind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, stop) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Stop::Else(_) = stop {
            let peek = self.peek_non_space();
            let chained = peek.kind == ItemKind::Keyword
                && ((context == "if" && peek.text == "if")
                    || (context == "with" && peek.text == "with"));
            if chained {
                self.next_non_space();
                let inner = self.branch_control(context)?;
                else_list = Some(vec![if context == "if" {
                    Node::If(inner)
                } else {
                    Node::With(inner)
                }]);
            } else {
                if context == "range" {
                    // `break`/`continue` are not allowed in a range's else.
                }
                let (list, stop) = self.item_list()?;
                if let Stop::Else(pos) = stop {
                    return self.error(self.line_of(pos), "expected end; found {{else}}");
                }
                else_list = Some(list);
            }
        }
        self.vars.truncate(vars_mark);
        Ok(Branch {
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&mut self, context: &str) -> PResult<String> {
        let item = self.next_non_space();
        match item.kind {
            ItemKind::String | ItemKind::RawString => unquote(item.text)
                .ok_or(())
                .or_else(|_| self.error(item.line, format!("bad string in {context}"))),
            _ => self.unexpected(&item, &format!("{context} clause")),
        }
    }

    fn template_control(&mut self, pos: usize) -> PResult<Node> {
        let name = self.template_name("template")?;
        let pipe = if self.peek_non_space().kind != ItemKind::RightDelim {
            Some(self.pipeline("template", ItemKind::RightDelim)?)
        } else {
            self.next_non_space();
            None
        };
        Ok(Node::Template { pos, name, pipe })
    }

    fn block_control(&mut self, pos: usize) -> PResult<Node> {
        let line = self.line_of(pos);
        let name = self.template_name("block")?;
        let pipe = self.pipeline("block", ItemKind::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let saved_depth = std::mem::replace(&mut self.range_depth, 0);
        let (list, stop) = self.item_list()?;
        self.vars = saved_vars;
        self.range_depth = saved_depth;
        if let Stop::Else(p) = stop {
            return self.error(self.line_of(p), "unexpected {{else}} in block clause");
        }
        self.add_tree(name.clone(), list, line)?;
        Ok(Node::Template {
            pos,
            name,
            pipe: Some(pipe),
        })
    }

    fn pipeline(&mut self, context: &str, end: ItemKind) -> PResult<Pipe> {
        let start = self.peek_non_space();
        let mut pipe = Pipe {
            pos: start.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        // Declarations: `$x :=`, `$x =`, `$k, $v :=` (range only).
        'decls: loop {
            let var = self.peek_non_space();
            if var.kind != ItemKind::Variable {
                break;
            }
            let mark = self.at;
            self.next_non_space();
            let after = self.next();
            let after = if after.kind == ItemKind::Space {
                self.next()
            } else {
                after
            };
            match after.kind {
                ItemKind::Declare | ItemKind::Assign => {
                    pipe.is_assign = after.kind == ItemKind::Assign;
                    if pipe.is_assign && !self.vars.contains(&var.text) {
                        return self.error(var.line, format!("undefined variable {:?}", var.text));
                    }
                    pipe.decl.push(var.text.to_owned());
                    if !pipe.is_assign {
                        self.vars.push(var.text);
                    }
                    break 'decls;
                }
                ItemKind::Comma => {
                    if context == "range" && pipe.decl.is_empty() {
                        pipe.decl.push(var.text.to_owned());
                        self.vars.push(var.text);
                        continue 'decls;
                    }
                    return self.error(var.line, format!("too many declarations in {context}"));
                }
                _ => {
                    self.at = mark;
                    if !pipe.decl.is_empty() {
                        return self
                            .error(var.line, format!("missing := after variables in {context}"));
                    }
                    break 'decls;
                }
            }
        }
        if pipe.decl.len() == 1
            && context == "range"
            && self.items[self.at - 1].kind == ItemKind::Comma
        {
            return self.error(start.line, "range can only initialize variables with :=");
        }
        loop {
            let token = self.next_non_space();
            if token.kind == end {
                if pipe.cmds.is_empty() {
                    return self.error(token.line, format!("missing value for {context}"));
                }
                for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
                    if matches!(
                        cmd.args.first(),
                        Some(
                            Arg::Bool(..)
                                | Arg::Dot(_)
                                | Arg::Nil(_)
                                | Arg::Number(..)
                                | Arg::String(..)
                        )
                    ) {
                        return self.error(
                            token.line,
                            format!("non executable command in pipeline stage {}", i + 1),
                        );
                    }
                }
                return Ok(pipe);
            }
            match token.kind {
                ItemKind::Bool
                | ItemKind::CharConstant
                | ItemKind::Dot
                | ItemKind::Field
                | ItemKind::Identifier
                | ItemKind::Number
                | ItemKind::Complex
                | ItemKind::Nil
                | ItemKind::RawString
                | ItemKind::String
                | ItemKind::Variable
                | ItemKind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn command(&mut self) -> PResult<Command> {
        let first = self.peek_non_space();
        let mut cmd = Command {
            pos: first.pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let token = self.next();
            match token.kind {
                ItemKind::Space => continue,
                ItemKind::RightDelim | ItemKind::RightParen => self.backup(),
                ItemKind::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return self.error(first.line, "empty command");
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(term) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != ItemKind::Field {
            return Ok(Some(term));
        }
        let chain_pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().kind == ItemKind::Field {
            let field = self.next().text;
            fields.push(self.names.get(&field[1..]));
        }
        Ok(Some(match term {
            Arg::Field(_, mut names) => {
                names.append(&mut fields);
                Arg::Field(chain_pos, names)
            }
            Arg::Variable(_, mut names) => {
                names.append(&mut fields);
                Arg::Variable(chain_pos, names)
            }
            Arg::Bool(..) | Arg::String(..) | Arg::Number(..) | Arg::Nil(_) | Arg::Dot(_) => {
                let line = self.line_of(chain_pos);
                return self.error(
                    line,
                    format!("unexpected . after term {:?}", arg_string(&term)),
                );
            }
            other => Arg::Chain(chain_pos, Box::new(other), fields),
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        let pos = token.pos;
        Ok(Some(match token.kind {
            ItemKind::Identifier => {
                if !(self.is_func)(token.text) {
                    return self
                        .error(token.line, format!("function {:?} not defined", token.text));
                }
                Arg::Identifier(pos, self.names.get(token.text))
            }
            ItemKind::Dot => Arg::Dot(pos),
            ItemKind::Nil => Arg::Nil(pos),
            ItemKind::Variable => {
                if !self.vars.contains(&token.text) {
                    return self.error(token.line, format!("undefined variable {:?}", token.text));
                }
                Arg::Variable(pos, vec![self.names.get(token.text)])
            }
            ItemKind::Field => Arg::Field(pos, vec![self.names.get(&token.text[1..])]),
            ItemKind::Bool => Arg::Bool(pos, token.text == "true"),
            ItemKind::CharConstant | ItemKind::Number | ItemKind::Complex => {
                let literal = match token.kind {
                    ItemKind::CharConstant => Literal::Char,
                    ItemKind::Complex => Literal::Complex,
                    _ => Literal::Number,
                };
                let number = match parse_number(token.text, literal) {
                    Ok(number) => number,
                    Err(e) => return self.error(token.line, e.to_string()),
                };
                Arg::Number(pos, number)
            }
            ItemKind::LeftParen => {
                let pipe = self.pipeline("parenthesized pipeline", ItemKind::RightParen)?;
                Arg::Pipe(pos, Box::new(pipe))
            }
            ItemKind::String | ItemKind::RawString => {
                let value = unquote(token.text)
                    .ok_or(())
                    .or_else(|_| self.error(token.line, "invalid syntax"))?;
                Arg::String(pos, self.names.get(&value), self.names.get(token.text))
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

enum Parsed {
    Node(Node),
    Nothing,
    End(usize),
    Else(usize),
}

/// Go's `strconv.Unquote` for `"..."`, `` `...` `` and `'x'`.
pub fn unquote(text: &str) -> Option<String> {
    if let Some(raw) = text.strip_prefix('`') {
        return raw.strip_suffix('`').map(|s| s.replace('\r', ""));
    }
    let quote = text.chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let inner = text.get(1..text.len().checked_sub(1)?)?;
    if !text.ends_with(quote) || text.len() < 2 {
        return None;
    }
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            if c == quote || c == '\n' {
                return None;
            }
            out.push(c);
            continue;
        }
        let escape = chars.next()?;
        match escape {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '"' if quote == '"' => out.push('"'),
            '\'' if quote == '\'' => out.push('\''),
            'x' | 'u' | 'U' => {
                let len = match escape {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                if hex.len() != len {
                    return None;
                }
                let code = u32::from_str_radix(&hex, 16).ok()?;
                if escape == 'x' {
                    // A byte; only valid as a char when ASCII in this model.
                    out.push(char::from_u32(code)?);
                } else {
                    out.push(char::from_u32(code)?);
                }
            }
            '0'..='7' => {
                let mut code = escape.to_digit(8)?;
                for _ in 0..2 {
                    code = code * 8 + chars.next()?.to_digit(8)?;
                }
                if code > 255 {
                    return None;
                }
                out.push(char::from_u32(code)?);
            }
            _ => return None,
        }
    }
    if quote == '\'' && out.chars().count() != 1 {
        return None;
    }
    Some(out)
}

/// Go's `String()` of an operand, used in error contexts (`<index .Values.x 1>`).
pub fn arg_string(arg: &Arg) -> String {
    match arg {
        Arg::Field(_, names) => names.iter().map(|n| format!(".{n}")).collect(),
        Arg::Variable(_, names) => {
            let mut out = names[0].to_string();
            for n in &names[1..] {
                out.push('.');
                out.push_str(n);
            }
            out
        }
        Arg::Dot(_) => ".".into(),
        Arg::Nil(_) => "nil".into(),
        Arg::Bool(_, b) => b.to_string(),
        Arg::Number(_, n) => n.text.clone(),
        Arg::String(_, _, text) => text.to_string(),
        Arg::Identifier(_, name) => name.to_string(),
        Arg::Chain(_, node, fields) => {
            let mut out = match node.as_ref() {
                Arg::Pipe(..) => arg_string(node),
                other => arg_string(other),
            };
            for f in fields {
                out.push('.');
                out.push_str(f);
            }
            out
        }
        Arg::Pipe(_, pipe) => format!("({})", pipe_string(pipe)),
    }
}

/// Go's `String()` of a command.
pub fn command_string(cmd: &Command) -> String {
    cmd.args
        .iter()
        .map(arg_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Go's `String()` of a pipeline.
pub fn pipe_string(pipe: &Pipe) -> String {
    let mut out = String::new();
    if !pipe.decl.is_empty() {
        out.push_str(&pipe.decl.join(", "));
        out.push_str(if pipe.is_assign { " = " } else { " := " });
    }
    out.push_str(
        &pipe
            .cmds
            .iter()
            .map(command_string)
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_funcs(name: &str) -> bool {
        matches!(name, "printf" | "include" | "eq" | "quote" | "default")
    }

    fn parse_ok(text: &str) -> Vec<Tree> {
        parse("t", text, &all_funcs).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse("t", text, &all_funcs).unwrap_err().to_string()
    }

    #[test]
    fn pipelines_and_chains() {
        let trees =
            parse_ok(r#"{{ $x := .Values.a.b | default "z" | quote }}{{ (include "n" .).Foo }}"#);
        let Node::Action(pipe) = &trees[0].root[0] else {
            panic!("not an action")
        };
        assert_eq!(
            pipe_string(pipe),
            r#"$x := .Values.a.b | default "z" | quote"#
        );
        let Node::Action(pipe) = &trees[0].root[1] else {
            panic!("not an action")
        };
        assert_eq!(pipe_string(pipe), r#"(include "n" .).Foo"#);
    }

    #[test]
    fn defines_are_separate_trees() {
        let trees = parse_ok(r#"a{{define "x"}}X{{end}}b{{block "y" .}}Y{{end}}"#);
        let names: Vec<_> = trees.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t", "x", "y"]);
    }

    #[test]
    fn else_if_and_else_with_chain() {
        let trees = parse_ok(
            "{{if .a}}A{{else if .b}}B{{else}}C{{end}}{{with .x}}1{{else with .y}}2{{end}}",
        );
        let Node::If(branch) = &trees[0].root[0] else {
            panic!("not an if")
        };
        let else_list = branch.else_list.as_ref().unwrap();
        assert!(matches!(else_list[0], Node::If(_)));
    }

    #[test]
    fn go_parse_errors() {
        // Messages as Go's text/template/parse gives them.
        assert_eq!(
            parse_err("{{ nope 1 }}"),
            r#"template: t:1: function "nope" not defined"#
        );
        assert_eq!(
            parse_err("{{ $x }}"),
            r#"template: t:1: undefined variable "$x""#
        );
        assert_eq!(parse_err("{{ end }}"), "template: t:1: unexpected {{end}}");
        // Go's messages for stray characters and long items (checked with Helm 4.3.2).
        assert_eq!(
            parse_err("a: 1\nb: {{ .Values.x }\n"),
            "template: t:2: unexpected \"}\" in operand"
        );
        assert_eq!(
            parse_err("{{ # }}"),
            "template: t:1: unexpected \"#\" in command"
        );
        assert_eq!(
            parse_err("{{ if }}{{ \"a long string here\" 3 }}{{ end }}"),
            "template: t:1: missing value for if"
        );
        assert_eq!(parse_err("{{ if .a }}x"), "template: t:1: unexpected EOF");
        assert_eq!(
            parse_err("{{ break }}"),
            "template: t:1: {{break}} outside {{range}}"
        );
        assert_eq!(
            parse_err("{{ }}"),
            "template: t:1: missing value for command"
        );
        assert_eq!(
            parse_err("{{ .a | 3 }}"),
            "template: t:1: non executable command in pipeline stage 2"
        );
        assert_eq!(
            parse_err(r#"{{define "a"}}1{{end}}{{define "a"}}2{{end}}"#),
            r#"template: t:1: template: multiple definition of template "a""#
        );
    }

    #[test]
    fn strings() {
        assert_eq!(unquote(r#""a\tb\u00e9""#).unwrap(), "a\tbé");
        assert_eq!(unquote("`raw\\n`").unwrap(), "raw\\n");
    }

    #[test]
    fn line_and_column_like_go() {
        let trees = parse_ok("ab\n  {{ .x }}");
        assert_eq!(trees[0].line_col(8), (2, 5));
    }
}
