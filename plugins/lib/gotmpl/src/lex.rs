//! The lexer: template text into items, following Go's `text/template/parse` lexer rules —
//! `{{`/`}}` delimiters, `{{- ` and ` -}}` trim markers (which eat the whitespace around
//! them), comments that must close right before the delimiter, quoted, raw and character
//! literals, numbers in every Go syntax, variables, fields, keywords, and paren balance.

use std::fmt;

/// What kind of token an [`Item`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// Plain text outside actions.
    Text,
    /// `{{`.
    LeftDelim,
    /// `}}`.
    RightDelim,
    /// Spaces inside an action (they separate arguments).
    Space,
    /// `true` or `false`.
    Bool,
    /// A character constant, quotes included.
    CharConstant,
    /// A number, as written.
    Number,
    /// A complex constant with a real and an imaginary part (`1+2i`), as written.
    Complex,
    /// An interpreted string, quotes included.
    String,
    /// A raw string, backquotes included.
    RawString,
    /// `:=`.
    Declare,
    /// `=`.
    Assign,
    /// `|`.
    Pipe,
    /// `(`.
    LeftParen,
    /// `)`.
    RightParen,
    /// `,` (in `range $i, $v :=`).
    Comma,
    /// `.` alone.
    Dot,
    /// `.Name` (one segment; chains are consecutive fields).
    Field,
    /// `$` or `$name`.
    Variable,
    /// A function name.
    Identifier,
    /// `nil`.
    Nil,
    /// A keyword: block, break, continue, define, else, end, if, range, template, with.
    Keyword,
    /// A comment (`{{/* ... */}}`), delimiters excluded.
    Comment,
    /// Where lexing stopped with an error ([`lex_until_error`]).
    Error,
    /// Any other printable ASCII character inside an action (Go's `itemChar`): no operand,
    /// so the parser reports it as unexpected, as Go does (`unexpected "}" in operand`).
    Char,
    /// End of input.
    Eof,
}

/// One token with its text and the line it starts on (1-based). The text is a slice of the
/// template text, so lexing allocates nothing per token and the parser copies items freely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    /// Kind of token.
    pub kind: ItemKind,
    /// Its text.
    pub text: &'a str,
    /// Line where it starts.
    pub line: usize,
    /// Byte offset in the template text where it starts.
    pub pos: usize,
}

/// A lexing error, with Go's wording and the line where it happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LexError {
    /// Line of the error.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

const KEYWORDS: &[&str] = &[
    "block", "break", "continue", "define", "else", "end", "if", "range", "template", "with",
];

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    line: usize,
    items: Vec<Item<'a>>,
    paren_depth: usize,
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn emit(&mut self, kind: ItemKind, start: usize, line: usize) {
        self.items.push(Item {
            kind,
            text: &self.input[start..self.pos],
            line,
            pos: start,
        });
    }

    fn advance(&mut self, bytes: usize) {
        self.line += self.input.as_bytes()[self.pos..self.pos + bytes]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        self.pos += bytes;
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, LexError> {
        Err(LexError {
            line: self.line,
            message: message.into(),
        })
    }

    /// Text up to the next `{{`, honouring a `{{-` trim marker.
    fn lex_text(&mut self) -> Result<bool, LexError> {
        let start = self.pos;
        let line = self.line;
        match find_left_delimiter(self.rest()) {
            None => {
                self.advance(self.input.len() - self.pos);
                if self.pos > start {
                    self.emit(ItemKind::Text, start, line);
                }
                Ok(false)
            }
            Some(offset) => {
                let delim = self.pos + offset;
                let after = &self.input[delim + 2..];
                let trims = after.starts_with('-') && after[1..].starts_with(is_space);
                let text_end = if trims {
                    self.input[start..delim].trim_end_matches(is_space).len() + start
                } else {
                    delim
                };
                if text_end > start {
                    self.items.push(Item {
                        kind: ItemKind::Text,
                        text: &self.input[start..text_end],
                        line,
                        pos: start,
                    });
                }
                self.advance(delim - self.pos);
                Ok(true)
            }
        }
    }

    /// Whether the input at the current position is a right delimiter (with optional trim
    /// marker); returns its length and whether it trims.
    fn at_right_delim(&self) -> Option<(usize, bool)> {
        let rest = self.rest();
        if rest.starts_with("}}") {
            return Some((2, false));
        }
        let mut chars = rest.char_indices();
        if let Some((_, c)) = chars.next()
            && is_space(c)
        {
            let after_space = &rest[c.len_utf8()..];
            if let Some(tail) = after_space.strip_prefix('-')
                && tail.starts_with("}}")
            {
                return Some((c.len_utf8() + 3, true));
            }
        }
        None
    }

    fn lex_left_delim(&mut self) -> Result<(), LexError> {
        let line = self.line;
        let start = self.pos;
        self.advance(2);
        let trims = self.rest().starts_with('-') && self.rest()[1..].starts_with(is_space);
        if trims {
            self.advance(2);
        }
        // A comment must follow the delimiter (and its trim marker) directly.
        if self.rest().starts_with("/*") {
            let Some(end) = self.rest().find("*/") else {
                return self.error("unclosed comment");
            };
            let comment_start = self.pos;
            self.advance(end + 2);
            let comment = &self.input[comment_start..self.pos];
            let Some((len, trim_after)) = self.at_right_delim() else {
                return self.error("comment ends before closing delimiter");
            };
            self.advance(len);
            self.items.push(Item {
                kind: ItemKind::Comment,
                text: comment,
                line,
                pos: comment_start,
            });
            if trim_after {
                self.skip_leading_space();
            }
            return Ok(());
        }
        self.items.push(Item {
            kind: ItemKind::LeftDelim,
            text: &self.input[start..start + 2],
            line,
            pos: start,
        });
        self.paren_depth = 0;
        self.lex_inside_action()
    }

    fn skip_leading_space(&mut self) {
        let skip = self.rest().len() - self.rest().trim_start_matches(is_space).len();
        self.advance(skip);
    }

    fn lex_inside_action(&mut self) -> Result<(), LexError> {
        loop {
            if let Some((len, trims)) = self.at_right_delim() {
                if self.paren_depth > 0 {
                    return self.error("unclosed left paren");
                }
                let line = self.line;
                // The space before a trim marker is not an item of its own.
                let start = self.pos + len - 2;
                self.advance(len);
                self.items.push(Item {
                    kind: ItemKind::RightDelim,
                    text: &self.input[start..self.pos],
                    line,
                    pos: start,
                });
                if trims {
                    self.skip_leading_space();
                }
                return Ok(());
            }
            let start = self.pos;
            let line = self.line;
            let Some(c) = self.peek() else {
                return self.error("unclosed action");
            };
            match c {
                c if is_space(c) => {
                    let len = self.rest().len() - self.rest().trim_start_matches(is_space).len();
                    // Stop before a trim marker so that ` -}}` is seen as a delimiter.
                    let len = if self.rest()[len..].starts_with("-}}") && len > 0 {
                        len - 1
                    } else {
                        len
                    };
                    if len == 0 {
                        self.advance(c.len_utf8());
                    } else {
                        self.advance(len);
                    }
                    self.emit(ItemKind::Space, start, line);
                }
                '=' => {
                    self.advance(1);
                    self.emit(ItemKind::Assign, start, line);
                }
                ':' => {
                    if !self.rest().starts_with(":=") {
                        return self.error("expected :=");
                    }
                    self.advance(2);
                    self.emit(ItemKind::Declare, start, line);
                }
                '|' => {
                    self.advance(1);
                    self.emit(ItemKind::Pipe, start, line);
                }
                ',' => {
                    self.advance(1);
                    self.emit(ItemKind::Comma, start, line);
                }
                '(' => {
                    self.advance(1);
                    self.paren_depth += 1;
                    self.emit(ItemKind::LeftParen, start, line);
                }
                ')' => {
                    if self.paren_depth == 0 {
                        return self.error("unexpected right paren");
                    }
                    self.paren_depth -= 1;
                    self.advance(1);
                    self.emit(ItemKind::RightParen, start, line);
                }
                '"' => self.lex_quoted(
                    '"',
                    ItemKind::String,
                    start,
                    line,
                    "unterminated quoted string",
                )?,
                '`' => {
                    let Some(end) = self.rest()[1..].find('`') else {
                        return self.error("unterminated raw quoted string");
                    };
                    self.advance(end + 2);
                    self.emit(ItemKind::RawString, start, line);
                }
                '\'' => self.lex_quoted(
                    '\'',
                    ItemKind::CharConstant,
                    start,
                    line,
                    "unterminated character constant",
                )?,
                '$' => {
                    self.advance(1);
                    self.take_while(is_alphanumeric);
                    self.emit(ItemKind::Variable, start, line);
                }
                '.' => {
                    let next = self.rest()[1..].chars().next();
                    if next.is_some_and(|n| n.is_ascii_digit()) {
                        self.lex_number(start, line)?;
                    } else {
                        self.advance(1);
                        let before = self.pos;
                        self.take_while(is_alphanumeric);
                        let kind = if self.pos == before {
                            ItemKind::Dot
                        } else {
                            ItemKind::Field
                        };
                        self.emit(kind, start, line);
                    }
                }
                '+' | '-' | '0'..='9' => self.lex_number(start, line)?,
                c if is_alphanumeric(c) => {
                    self.take_while(is_alphanumeric);
                    let word = &self.input[start..self.pos];
                    let kind = match word {
                        "true" | "false" => ItemKind::Bool,
                        "nil" => ItemKind::Nil,
                        w if KEYWORDS.contains(&w) => ItemKind::Keyword,
                        _ => ItemKind::Identifier,
                    };
                    self.emit(kind, start, line);
                }
                c if c.is_ascii_graphic() => {
                    self.advance(1);
                    self.emit(ItemKind::Char, start, line);
                }
                other => {
                    // Go's `%#U`: the code point, and the character when it is printable.
                    let shown = if other.is_control() {
                        format!("U+{:04X}", u32::from(other))
                    } else {
                        format!("U+{:04X} '{other}'", u32::from(other))
                    };
                    return self.error(format!("unrecognized character in action: {shown}"));
                }
            }
        }
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) {
        let len = self.rest().len() - self.rest().trim_start_matches(|c: char| keep(c)).len();
        self.advance(len);
    }

    /// A `"`-quoted string or a `'`-quoted character: backslash escapes, no newline inside.
    fn lex_quoted(
        &mut self,
        quote: char,
        kind: ItemKind,
        start: usize,
        line: usize,
        unterminated: &str,
    ) -> Result<(), LexError> {
        let mut chars = self.rest()[1..].char_indices();
        loop {
            match chars.next() {
                None | Some((_, '\n')) => return self.error(unterminated),
                Some((_, '\\')) => {
                    if matches!(chars.next(), None | Some((_, '\n'))) {
                        return self.error(unterminated);
                    }
                }
                Some((i, c)) if c == quote => {
                    self.advance(i + 2);
                    self.emit(kind, start, line);
                    return Ok(());
                }
                Some(_) => {}
            }
        }
    }

    /// Go's `lexNumber`: one number ([`scan_number`]), and when a sign follows it, the
    /// imaginary part of a complex constant (`1+2i`, no spaces, ending in `i`). Anything
    /// else right after (`3k`, `1-2`) is "bad number syntax".
    fn lex_number(&mut self, start: usize, line: usize) -> Result<(), LexError> {
        let (mut end, mut ok) = scan_number(self.input, self.pos);
        let mut kind = ItemKind::Number;
        if ok && matches!(self.input.as_bytes().get(end), Some(b'+' | b'-')) {
            (end, ok) = scan_number(self.input, end);
            ok = ok && self.input.as_bytes()[end - 1] == b'i';
            kind = ItemKind::Complex;
        }
        if !ok {
            return self.error(format!(
                "bad number syntax: {:?}",
                &self.input[self.pos..end]
            ));
        }
        self.advance(end - self.pos);
        self.emit(kind, start, line);
        Ok(())
    }
}

/// Go's `scanNumber` from `from`: an optional sign, a `0x`/`0o`/`0b` prefix, digits with `_`,
/// a fraction, an exponent (`e` for decimal, `p` for hexadecimal; none for octal and
/// binary), an imaginary `i`. Returns where it stopped and whether the next character is
/// not alphanumeric; when it is, that character is taken too, as Go's error shows it.
fn scan_number(input: &str, from: usize) -> (usize, bool) {
    const DECIMAL: &[u8] = b"0123456789_";
    const HEX: &[u8] = b"0123456789abcdefABCDEF_";
    let bytes = input.as_bytes();
    let accept = |i: &mut usize, set: &[u8]| {
        let hit = bytes.get(*i).is_some_and(|b| set.contains(b));
        if hit {
            *i += 1;
        }
        hit
    };
    let accept_run = |i: &mut usize, set: &[u8]| while accept(i, set) {};
    let mut i = from;
    accept(&mut i, b"+-");
    let mut digits = DECIMAL;
    if accept(&mut i, b"0") {
        if accept(&mut i, b"xX") {
            digits = HEX;
        } else if accept(&mut i, b"oO") {
            digits = b"01234567_";
        } else if accept(&mut i, b"bB") {
            digits = b"01_";
        }
    }
    accept_run(&mut i, digits);
    if accept(&mut i, b".") {
        accept_run(&mut i, digits);
    }
    let exponent: &[u8] = match digits.len() {
        11 => b"eE",
        23 => b"pP",
        _ => b"",
    };
    if accept(&mut i, exponent) {
        accept(&mut i, b"+-");
        accept_run(&mut i, DECIMAL);
    }
    accept(&mut i, b"i");
    match input[i..].chars().next() {
        Some(c) if is_alphanumeric(c) => (i + c.len_utf8(), false),
        _ => (i, true),
    }
}

/// Lex a whole template. Comments are kept as items; the parser drops them.
pub fn lex(input: &str) -> Result<Vec<Item<'_>>, LexError> {
    match lex_until_error(input) {
        (items, None) => Ok(items),
        (_, Some(error)) => Err(error),
    }
}

/// Lex a template as far as it goes: the items, ending in [`ItemKind::Eof`], or in an
/// [`ItemKind::Error`] item at the line of the error that stopped the lexer (also
/// returned). Go's parser takes items as its lexer makes them, so a template with a
/// parse error before a lexing error reports the parse error (`{{ .x }` followed by the
/// end of the file is `unexpected "}" in operand`, not "unclosed action"): the parser
/// reports the lexing error only when it reaches that item.
pub fn lex_until_error(input: &str) -> (Vec<Item<'_>>, Option<LexError>) {
    let mut lexer = Lexer {
        input,
        pos: 0,
        line: 1,
        items: Vec::new(),
        paren_depth: 0,
    };
    let outcome = (|| -> Result<(), LexError> {
        while lexer.lex_text()? {
            lexer.lex_left_delim()?;
        }
        Ok(())
    })();
    let (kind, error) = match outcome {
        Ok(()) => (ItemKind::Eof, None),
        Err(error) => (ItemKind::Error, Some(error)),
    };
    lexer.items.push(Item {
        kind,
        text: "",
        line: error.as_ref().map_or(lexer.line, |e: &LexError| e.line),
        pos: lexer.pos,
    });
    (lexer.items, error)
}

/// Where the next `{{` starts: a byte search for `{` and a look at the next byte, cheaper
/// than a substring search set up afresh for every stretch of text (the lexer's largest
/// cost on Bitnami charts, whose text stretches are short).
fn find_left_delimiter(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + found;
        if bytes.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::ItemKind::*;
    use super::*;

    #[test]
    fn the_left_delimiter_is_found_where_a_substring_search_finds_it() {
        for text in [
            "", "{", "{{", "a{{b", "a{b{{c", "{{{", "x{ {y", "}}{{", "é{{", "{a{", "abc",
        ] {
            assert_eq!(find_left_delimiter(text), text.find("{{"), "{text:?}");
        }
    }

    fn kinds(input: &str) -> Vec<(ItemKind, std::string::String)> {
        lex(input)
            .unwrap()
            .into_iter()
            .map(|i| (i.kind, i.text.to_owned()))
            .collect()
    }

    fn k(kind: ItemKind, text: &str) -> (ItemKind, std::string::String) {
        (kind, text.to_owned())
    }

    #[test]
    fn text_actions_fields_and_pipes() {
        assert_eq!(
            kinds("hello {{ .Values.name | quote }}!"),
            [
                k(Text, "hello "),
                k(LeftDelim, "{{"),
                k(Space, " "),
                k(Field, ".Values"),
                k(Field, ".name"),
                k(Space, " "),
                k(Pipe, "|"),
                k(Space, " "),
                k(Identifier, "quote"),
                k(Space, " "),
                k(RightDelim, "}}"),
                k(Text, "!"),
                k(Eof, ""),
            ]
        );
    }

    #[test]
    fn trim_markers_eat_surrounding_whitespace() {
        assert_eq!(
            kinds("a  \n {{- $x := 1 -}} \n\t b"),
            [
                k(Text, "a"),
                k(LeftDelim, "{{"),
                k(Variable, "$x"),
                k(Space, " "),
                k(Declare, ":="),
                k(Space, " "),
                k(Number, "1"),
                k(RightDelim, "}}"),
                k(Text, "b"),
                k(Eof, ""),
            ]
        );
        // `{{-3}}` is the number -3, not a trim marker.
        assert_eq!(kinds("{{-3}}")[1], k(Number, "-3"));
    }

    #[test]
    fn comments_and_keywords() {
        assert_eq!(
            kinds("x {{- /* note */ -}} y{{ if .a }}{{ else }}{{ end }}"),
            [
                k(Text, "x"),
                k(Comment, "/* note */"),
                k(Text, "y"),
                k(LeftDelim, "{{"),
                k(Space, " "),
                k(Keyword, "if"),
                k(Space, " "),
                k(Field, ".a"),
                k(Space, " "),
                k(RightDelim, "}}"),
                k(LeftDelim, "{{"),
                k(Space, " "),
                k(Keyword, "else"),
                k(Space, " "),
                k(RightDelim, "}}"),
                k(LeftDelim, "{{"),
                k(Space, " "),
                k(Keyword, "end"),
                k(Space, " "),
                k(RightDelim, "}}"),
                k(Eof, ""),
            ]
        );
    }

    #[test]
    fn literals_of_every_kind() {
        let items = kinds(
            r#"{{ "a\"b" `raw` 'x' '\n' 0x1F 1_000 3.5e-2 .5 0b101 0o17 1i true nil $ . ( ) , = }}"#,
        );
        let significant: Vec<_> = items
            .into_iter()
            .filter(|(kind, _)| *kind != Space)
            .collect();
        assert_eq!(
            significant,
            [
                k(LeftDelim, "{{"),
                k(String, r#""a\"b""#),
                k(RawString, "`raw`"),
                k(CharConstant, "'x'"),
                k(CharConstant, r"'\n'"),
                k(Number, "0x1F"),
                k(Number, "1_000"),
                k(Number, "3.5e-2"),
                k(Number, ".5"),
                k(Number, "0b101"),
                k(Number, "0o17"),
                k(Number, "1i"),
                k(Bool, "true"),
                k(Nil, "nil"),
                k(Variable, "$"),
                k(Dot, "."),
                k(LeftParen, "("),
                k(RightParen, ")"),
                k(Comma, ","),
                k(Assign, "="),
                k(RightDelim, "}}"),
                k(Eof, ""),
            ]
        );
    }

    /// Go's lexer test "numbers", plus a sign alone (a number token the parser refuses).
    #[test]
    fn every_number_form_of_gos_lexer_test() {
        let items = lex(
            "{{1 02 0x14 0X14 -7.2i 1e3 1E3 +1.2e-4 4.2i 1+2i 1_2 0x1.e_fp4 0X1.E_FP4 + 0x1p60}}",
        )
        .unwrap();
        let numbers: Vec<_> = items
            .into_iter()
            .filter(|item| matches!(item.kind, Number | Complex))
            .map(|item| (item.kind, item.text.to_owned()))
            .collect();
        let expected = [
            "1",
            "02",
            "0x14",
            "0X14",
            "-7.2i",
            "1e3",
            "1E3",
            "+1.2e-4",
            "4.2i",
            "1+2i",
            "1_2",
            "0x1.e_fp4",
            "0X1.E_FP4",
            "+",
            "0x1p60",
        ]
        .map(|text| {
            let kind = if text == "1+2i" { Complex } else { Number };
            (kind, text.to_owned())
        });
        assert_eq!(numbers, expected);
    }

    #[test]
    fn lines_are_counted_across_text_and_actions() {
        let items = lex("a\nb\n{{ .x\n | y }}\nc").unwrap();
        let pipe = items.iter().find(|i| i.kind == Pipe).unwrap();
        assert_eq!(pipe.line, 4);
        assert_eq!(items.last().unwrap().line, 5);
    }

    #[test]
    fn errors_use_go_wording_and_lines() {
        let error = |input: &str| lex(input).unwrap_err().to_string();
        assert_eq!(error("{{ .a "), "1: unclosed action");
        assert_eq!(error("\n{{ \"abc }}"), "2: unterminated quoted string");
        assert_eq!(error("{{ `abc }}"), "1: unterminated raw quoted string");
        assert_eq!(error("{{ 'a }}"), "1: unterminated character constant");
        assert_eq!(error("{{ (a }}"), "1: unclosed left paren");
        assert_eq!(error("{{ a) }}"), "1: unexpected right paren");
        assert_eq!(
            error("{{/* a */ x }}"),
            "1: comment ends before closing delimiter"
        );
        assert_eq!(error("{{/* a "), "1: unclosed comment");
        assert_eq!(error("{{ 3x }}"), "1: bad number syntax: \"3x\"");
        // Go shows the number up to the first character it could not take.
        assert_eq!(error("{{ 3kx }}"), "1: bad number syntax: \"3k\"");
        // A sign right after a number starts a complex constant's imaginary part.
        assert_eq!(error("{{ 1-2 }}"), "1: bad number syntax: \"1-2\"");
        assert_eq!(error("{{ 1+2 }}"), "1: bad number syntax: \"1+2\"");
        assert_eq!(error("{{ 1+2ix }}"), "1: bad number syntax: \"1+2ix\"");
        assert_eq!(error("{{ 0b102 }}"), "1: bad number syntax: \"0b102\"");
        assert_eq!(error("{{ a : b }}"), "1: expected :=");
        // Printable ASCII is an item the parser refuses; anything else is refused here,
        // named as Go's `%#U` names it.
        assert_eq!(
            error("{{ \u{7f} }}"),
            "1: unrecognized character in action: U+007F"
        );
        assert_eq!(
            error("{{ \u{20ac} }}"),
            "1: unrecognized character in action: U+20AC '€'"
        );
        let (items, error) = lex_until_error("{{ # }");
        let kinds: Vec<_> = items.iter().map(|i| (i.kind, i.text)).collect();
        assert_eq!(
            kinds[2..],
            [(Char, "#"), (Space, " "), (Char, "}"), (Error, "")],
            "# and a lone }} are characters; the items end where the lexer stopped"
        );
        assert_eq!(error.unwrap().message, "unclosed action");
    }
}
