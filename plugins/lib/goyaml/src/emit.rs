//! go-yaml v2's encoder and libyaml emitter (`encode.go`, `emitterc.go`) for the values
//! sigs.k8s.io/yaml hands it after its JSON step: block mappings with sorted keys, compact
//! block sequences, `{}`/`[]` for empty collections, scalar style selection (plain, single-
//! or double-quoted, literal blocks) from the emitter's scalar analysis, double-quoted
//! escapes, and line folding at 80 columns. Written as a recursive walk that keeps the
//! emitter's column/indent/whitespace state exactly as the event state machine does.
//!
//! A go-yaml v3 mode (what Helm's `toYamlPretty` uses: `yaml.v3` encoder, indent 2) changes
//! what v3 changed: regular indentation (sequences indented under their key, two columns
//! inside a `- ` item), no line folding, tabs allowed in literal blocks, and the v3 key order.

use capstan_gotmpl::value::format_float_g;

use crate::decode::GoVal;
use crate::resolve::{self, STR_TAG};
use crate::sort::key_less;

/// Which go-yaml encoder to imitate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavor {
    /// go-yaml v2 (`toYaml`, through sigs.k8s.io/yaml): indent 2.
    V2,
    /// go-yaml v3 with `SetIndent(n)` (`toYamlPretty` uses 2; v3's default is 4).
    V3(i64),
}

/// Emitter failures (the output limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmitError {
    /// The output grew past the configured limit.
    TooLarge(usize),
    /// Nesting deeper than the emitter allows.
    TooDeep(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

struct Analysis {
    multiline: bool,
    flow_plain_allowed: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blankz(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => c == ' ' || c == '\t' || is_break(c) || c == '\0',
    }
}

/// libyaml's `is_printable` on the character's UTF-8 form.
fn is_printable(c: char) -> bool {
    let v = c as u32;
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

fn analyze_scalar(value: &str, flavor: Flavor) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain_allowed: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = false;
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut tab_characters = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut previous_space = false;
    let mut previous_break = false;

    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let chars: Vec<char> = value.chars().collect();
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = match next {
            None => true,
            Some(n) => n == ' ' || n == '\t',
        };
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if matches!(flavor, Flavor::V3(_)) && c == '\t' {
            tab_characters = true;
        } else if !is_printable(c) {
            special_characters = true;
        }
        let last = i + 1 == chars.len();
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blankz(Some(c));
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain_allowed: true,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || tab_characters || special_characters {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_indicators {
        a.flow_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// The emitter state.
pub struct Emitter {
    flavor: Flavor,
    best_indent: i64,
    best_width: usize,
    /// v3: whether the node being started is an item of a block sequence (the state on top
    /// of libyaml's stack is then BLOCK-SEQUENCE-ITEM).
    in_seq_item: bool,
    out: String,
    limit: usize,
    max_depth: usize,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    flow_level: usize,
    mapping_context: bool,
    simple_key_context: bool,
}

impl Emitter {
    fn new(flavor: Flavor, limit: usize, max_depth: usize) -> Emitter {
        let (best_indent, best_width) = match flavor {
            Flavor::V2 => (2, 80),
            Flavor::V3(n) => (if (2..=9).contains(&n) { n } else { 2 }, usize::MAX),
        };
        Emitter {
            flavor,
            best_indent,
            best_width,
            in_seq_item: false,
            out: String::new(),
            limit,
            max_depth,
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            flow_level: 0,
            mapping_context: false,
            simple_key_context: false,
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn write_str(&mut self, s: &str) {
        for c in s.chars() {
            self.write(c);
        }
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.write(c);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { self.best_indent } else { 0 };
        } else if !indentless {
            if self.flavor == Flavor::V2 {
                self.indent += self.best_indent;
            } else if self.in_seq_item {
                self.indent += 2;
            } else {
                self.indent =
                    self.best_indent * ((self.indent + self.best_indent) / self.best_indent);
            }
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        self.write_str(ind);
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn check_limit(&self) -> Result<(), EmitError> {
        if self.out.len() > self.limit {
            Err(EmitError::TooLarge(self.limit))
        } else {
            Ok(())
        }
    }

    fn emit_document(&mut self, root: &GoVal) -> Result<(), EmitError> {
        self.emit_node(root, false, false, false, 0)?;
        // Implicit document end.
        self.write_indent();
        self.check_limit()
    }

    fn emit_node(
        &mut self,
        node: &GoVal,
        mapping: bool,
        simple_key: bool,
        seq_item: bool,
        depth: usize,
    ) -> Result<(), EmitError> {
        if depth > self.max_depth {
            return Err(EmitError::TooDeep(self.max_depth));
        }
        self.in_seq_item = seq_item;
        self.mapping_context = mapping;
        self.simple_key_context = simple_key;
        match node {
            GoVal::Seq(items) => {
                if self.flow_level > 0 || items.is_empty() {
                    self.emit_flow_sequence(items, depth)
                } else {
                    self.emit_block_sequence(items, depth)
                }
            }
            GoVal::Map(entries) => {
                if self.flow_level > 0 || entries.is_empty() {
                    self.emit_flow_mapping(entries, depth)
                } else {
                    self.emit_block_mapping(entries, depth)
                }
            }
            scalar => {
                let (text, style) = scalar_text(scalar);
                self.emit_scalar(&text, style);
                self.check_limit()
            }
        }
    }

    fn emit_flow_sequence(&mut self, items: &[GoVal], depth: usize) -> Result<(), EmitError> {
        self.write_indicator("[", true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.write_indicator(",", false, false, false);
            }
            if self.column > self.best_width {
                self.write_indent();
            }
            self.emit_node(item, false, false, false, depth + 1)?;
        }
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator("]", false, false, false);
        Ok(())
    }

    fn emit_flow_mapping(
        &mut self,
        entries: &[(GoVal, GoVal)],
        depth: usize,
    ) -> Result<(), EmitError> {
        self.write_indicator("{", true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                self.write_indicator(",", false, false, false);
            }
            if self.column > self.best_width {
                self.write_indent();
            }
            if check_simple_key(k) {
                self.emit_node(k, true, true, false, depth + 1)?;
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, false);
                self.emit_node(k, true, false, false, depth + 1)?;
                if self.column > self.best_width {
                    self.write_indent();
                }
                self.write_indicator(":", true, false, false);
            }
            self.emit_node(v, true, false, false, depth + 1)?;
        }
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator("}", false, false, false);
        Ok(())
    }

    fn emit_block_sequence(&mut self, items: &[GoVal], depth: usize) -> Result<(), EmitError> {
        let indentless = self.flavor == Flavor::V2 && self.mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.emit_node(item, false, false, true, depth + 1)?;
        }
        self.pop_indent();
        Ok(())
    }

    fn emit_block_mapping(
        &mut self,
        entries: &[(GoVal, GoVal)],
        depth: usize,
    ) -> Result<(), EmitError> {
        self.increase_indent(false, false);
        for (k, v) in entries {
            self.write_indent();
            if check_simple_key(k) {
                self.emit_node(k, true, true, false, depth + 1)?;
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.emit_node(k, true, false, false, depth + 1)?;
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.emit_node(v, true, false, false, depth + 1)?;
        }
        self.pop_indent();
        Ok(())
    }

    fn select_style(&self, value: &str, requested: Style, a: &Analysis) -> Style {
        let mut style = requested;
        if self.simple_key_context && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain {
            if (self.flow_level > 0 && !a.flow_plain_allowed)
                || (self.flow_level == 0 && !a.block_plain_allowed)
            {
                style = Style::SingleQuoted;
            }
            if value.is_empty() && (self.flow_level > 0 || self.simple_key_context) {
                style = Style::SingleQuoted;
            }
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal
            && (!a.block_allowed || self.flow_level > 0 || self.simple_key_context)
        {
            style = Style::DoubleQuoted;
        }
        style
    }

    fn emit_scalar(&mut self, value: &str, requested: Style) {
        let a = analyze_scalar(value, self.flavor);
        let style = self.select_style(value, requested, &a);
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        let v3_empty = matches!(self.flavor, Flavor::V3(_)) && value.is_empty();
        if !self.whitespace && !v3_empty {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > self.best_width && !next_space {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        if !v3_empty {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && i > 0
                    && i + 1 < n
                    && !next_space
                {
                    self.write_indent();
                } else {
                    self.write(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.write(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        // libyaml's is_bom looks at the start of the value whatever the position.
        let bom = value.starts_with('\u{FEFF}');
        let chars: Vec<char> = value.chars().collect();
        let n = chars.len();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || bom || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                let v = c as u32;
                match v {
                    0x00 => self.put('0'),
                    0x07 => self.put('a'),
                    0x08 => self.put('b'),
                    0x09 => self.put('t'),
                    0x0A => self.put('n'),
                    0x0B => self.put('v'),
                    0x0C => self.put('f'),
                    0x0D => self.put('r'),
                    0x1B => self.put('e'),
                    0x22 => self.put('"'),
                    0x5C => self.put('\\'),
                    0x85 => self.put('N'),
                    0xA0 => self.put('_'),
                    0x2028 => self.put('L'),
                    0x2029 => self.put('P'),
                    _ => {
                        let (letter, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(letter);
                        for k in (0..width).rev() {
                            let digit = (v >> (k * 4)) & 0x0F;
                            let ch = char::from_digit(digit, 16)
                                .unwrap_or('0')
                                .to_ascii_uppercase();
                            self.put(ch);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > self.best_width && i > 0 && i + 1 < n {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.write(c);
                }
                spaces = true;
            } else {
                self.write(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_block_scalar_hints(&mut self, value: &str) {
        let first = value.chars().next();
        if first == Some(' ') || first.is_some_and(is_break) {
            let hint = char::from_digit(self.best_indent as u32, 10).unwrap_or('2');
            self.write_indicator(&hint.to_string(), false, false, false);
        }
        let chars: Vec<char> = value.chars().collect();
        let chomp = match chars.last() {
            None => Some('-'),
            Some(&last) if !is_break(last) => Some('-'),
            Some(_) if chars.len() == 1 => Some('+'),
            Some(_) => {
                if is_break(chars[chars.len() - 2]) {
                    Some('+')
                } else {
                    None
                }
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(&c.to_string(), false, false, false);
        }
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        self.write_block_scalar_hints(value);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

fn check_simple_key(node: &GoVal) -> bool {
    match node {
        GoVal::Seq(items) => items.is_empty(),
        GoVal::Map(entries) => entries.is_empty(),
        scalar => {
            let (text, _) = scalar_text(scalar);
            if text.chars().any(is_break) {
                return false;
            }
            text.len() <= 128
        }
    }
}

/// The scalar text and the style go-yaml's encoder asks for.
fn scalar_text(v: &GoVal) -> (String, Style) {
    match v {
        GoVal::Nil => ("null".into(), Style::Plain),
        GoVal::Bool(b) => (b.to_string(), Style::Plain),
        GoVal::Int(i) => (i.to_string(), Style::Plain),
        GoVal::Uint(u) => (u.to_string(), Style::Plain),
        GoVal::Float(f) => {
            let s = if f.is_nan() {
                ".nan".to_string()
            } else if f.is_infinite() {
                if *f > 0.0 {
                    ".inf".into()
                } else {
                    "-.inf".into()
                }
            } else {
                format_float_g(*f)
            };
            (s, Style::Plain)
        }
        GoVal::Str(s) => {
            let can_plain = matches!(resolve::resolve("", s), Ok((tag, _)) if tag == STR_TAG)
                && !resolve::is_base60_float(s);
            let style = if s.contains('\n') {
                Style::Literal
            } else if can_plain {
                Style::Plain
            } else {
                Style::DoubleQuoted
            };
            (s.clone(), style)
        }
        // Not reachable through the JSON step (strings are always valid UTF-8 there).
        GoVal::Bin(b) => (crate::format::go_string_from_bytes(b), Style::DoubleQuoted),
        GoVal::Seq(_) | GoVal::Map(_) => (String::new(), Style::Plain),
    }
}

/// go-yaml v2's `Marshal` of one value (maps' keys sorted as `sorter.go` does; the caller
/// supplies string keys).
pub fn marshal(
    root: &GoVal,
    flavor: Flavor,
    limit: usize,
    max_depth: usize,
) -> Result<String, EmitError> {
    let mut e = Emitter::new(flavor, limit, max_depth);
    e.emit_document(root)?;
    Ok(e.out)
}

/// Sorts map keys (strings) the way go-yaml orders them, recursively.
pub fn sort_keys(v: &mut GoVal, flavor: Flavor) {
    match v {
        GoVal::Seq(items) => items.iter_mut().for_each(|x| sort_keys(x, flavor)),
        GoVal::Map(entries) => {
            let v3 = matches!(flavor, Flavor::V3(_));
            let mut order: Vec<usize> = (0..entries.len()).collect();
            {
                let key = |i: usize| match &entries[i].0 {
                    GoVal::Str(s) => s.as_str(),
                    _ => "",
                };
                crate::sort::sort_with(&mut order, &|&a, &b| key_less(key(a), key(b), v3));
            }
            let mut slots: Vec<Option<(GoVal, GoVal)>> = entries.drain(..).map(Some).collect();
            for i in order {
                if let Some(entry) = slots.get_mut(i).and_then(Option::take) {
                    entries.push(entry);
                }
            }
            entries.iter_mut().for_each(|(_, v)| sort_keys(v, flavor));
        }
        _ => {}
    }
}
