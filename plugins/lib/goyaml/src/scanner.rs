//! The YAML 1.1 scanner of libyaml as go-yaml v2 carries it (`scannerc.go`, `readerc.go`):
//! characters to tokens, with the same simple-key bookkeeping, indentation rules, scalar
//! folding and error texts and marks, so that what go-yaml accepts (and how it complains)
//! is reproduced.

use std::collections::VecDeque;

use foldhash::{HashMap, HashMapExt};

/// A position: character index, 0-based line and column.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

/// Which stage reported a problem (go-yaml adds one to scanner problem lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Reader,
    Scanner,
    Parser,
}

/// A libyaml problem with its context.
#[derive(Debug, Clone)]
pub struct Problem {
    pub kind: ErrorKind,
    pub context: &'static str,
    pub context_mark: Mark,
    pub problem: String,
    pub problem_mark: Mark,
}

impl Problem {
    /// go-yaml's `parser.fail()` wording: `line N: problem` (without the `yaml: ` prefix).
    pub fn message(&self) -> String {
        let mut line = 0;
        if self.problem_mark.line != 0 {
            line = self.problem_mark.line;
            if self.kind == ErrorKind::Scanner {
                line += 1;
            }
        } else if self.context_mark.line != 0 {
            line = self.context_mark.line;
        }
        if line != 0 {
            format!("line {line}: {}", self.problem)
        } else {
            self.problem.clone()
        }
    }
}

/// Scalar styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// Token kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    StreamStart,
    StreamEnd,
    VersionDirective(u8, u8),
    TagDirective { handle: String, prefix: String },
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(String),
    Anchor(String),
    Tag { handle: String, suffix: String },
    Scalar { value: String, style: ScalarStyle },
}

/// A token with its marks.
#[derive(Debug, Clone)]
pub struct Token {
    pub kind: TokenKind,
    pub start: Mark,
    pub end: Mark,
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

type SResult<T> = Result<T, Problem>;

const MAX_FLOW_LEVEL: usize = 10000;
const MAX_INDENTS: usize = 10000;

/// go-yaml's reader buffering (`readerc.go`), tracked only as far as it shows: raw input is
/// taken 512 bytes at a time and decoded whole, a refused character fails when its chunk
/// is decoded, and the decoded buffer is moved so that it starts at the scanner's position
/// whenever it is refilled (libyaml's `is_bom` test looks at the buffer's first character,
/// not at the current one).
struct Reader {
    /// Byte offset (in the input, byte-order mark included) just after each character.
    char_end: CharEnds,
    total: usize,
    starts_with_bom: bool,
    input_pos: usize,
    consumed: usize,
    decoded: usize,
    nuls: usize,
    eof: bool,
    encoding_known: bool,
    buf_start: usize,
    bad_char: Option<usize>,
}

const RAW_BUFFER_SIZE: usize = 512;

/// Where each character of the input ends, in bytes: arithmetic for ASCII input (one byte
/// per character, the common case), a table otherwise. Both are sorted, strictly rising.
enum CharEnds {
    /// `count` one-byte characters after `start` bytes (a byte-order mark, or none).
    Ascii { start: usize, count: usize },
    /// `count` characters after `start` bytes, one byte each but those listed in `wide`: a
    /// character's index and the bytes beyond one that it and the listed ones before it
    /// take, ascending.
    Sparse {
        start: usize,
        count: usize,
        wide: Vec<(usize, usize)>,
    },
    /// The end offset of every character.
    Table(Vec<usize>),
}

impl CharEnds {
    /// End offset of character `index` (`index` below the character count).
    fn get(&self, index: usize) -> usize {
        match self {
            CharEnds::Ascii { start, .. } => start + index + 1,
            CharEnds::Sparse { start, wide, .. } => {
                let before = wide.partition_point(|&(at, _)| at <= index);
                let extra = before.checked_sub(1).map_or(0, |last| wide[last].1);
                start + index + 1 + extra
            }
            CharEnds::Table(ends) => ends[index],
        }
    }

    /// How many characters end at or before byte `offset`.
    fn count_ending_by(&self, offset: usize) -> usize {
        match self {
            CharEnds::Ascii { start, count } => offset.saturating_sub(*start).min(*count),
            CharEnds::Sparse { count, .. } => {
                // Ends rise with the index: the first index ending past `offset`.
                let (mut low, mut high) = (0, *count);
                while low < high {
                    let middle = low + (high - low) / 2;
                    if self.get(middle) <= offset {
                        low = middle + 1;
                    } else {
                        high = middle;
                    }
                }
                low
            }
            CharEnds::Table(ends) => ends.partition_point(|&end| end <= offset),
        }
    }
}

impl Reader {
    #[inline(always)]
    fn unread(&self, pos: usize) -> usize {
        (self.decoded + self.nuls).saturating_sub(pos)
    }

    fn update_raw(&mut self) {
        let unconsumed = self.input_pos - self.consumed;
        if unconsumed >= RAW_BUFFER_SIZE || self.eof {
            return;
        }
        if self.input_pos == self.total {
            self.eof = true;
            return;
        }
        let n = (RAW_BUFFER_SIZE - unconsumed).min(self.total - self.input_pos);
        self.input_pos += n;
    }

    /// `yaml_parser_update_buffer(parser, length)` with the scanner at char `pos`.
    #[inline(never)]
    fn update(&mut self, pos: usize, length: usize) -> Result<(), Problem> {
        if self.unread(pos) >= length {
            return Ok(());
        }
        if !self.encoding_known {
            while !self.eof && self.input_pos - self.consumed < 3 {
                self.update_raw();
            }
            if self.starts_with_bom && self.input_pos >= 3 {
                self.consumed = 3;
            }
            self.encoding_known = true;
        }
        self.buf_start = pos;
        let mut first = true;
        while self.unread(pos) < length {
            if !first || self.consumed == self.input_pos {
                self.update_raw();
            }
            first = false;
            // Decode every character that ends within the raw input taken so far.
            let upto = self.char_end.count_ending_by(self.input_pos);
            if upto > self.decoded {
                if let Some(bad) = self.bad_char.filter(|b| (self.decoded..upto).contains(b)) {
                    if bad > self.decoded {
                        self.consumed = self.char_end.get(bad - 1);
                    }
                    self.decoded = bad;
                    return Err(Problem {
                        kind: ErrorKind::Reader,
                        context: "",
                        context_mark: Mark::default(),
                        problem: "control characters are not allowed".into(),
                        problem_mark: Mark::default(),
                    });
                }
                self.consumed = self.char_end.get(upto - 1);
                self.decoded = upto;
            }
            if self.eof {
                self.nuls += 1;
                break;
            }
        }
        Ok(())
    }
}

/// The scanner state.
pub struct Scanner {
    buf: Chars,
    pos: usize,
    pub mark: Mark,
    pub tokens: VecDeque<Token>,
    pub tokens_parsed: usize,
    pub token_available: bool,
    stream_start_produced: bool,
    pub stream_end_produced: bool,
    indent: i64,
    indents: Vec<i64>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    simple_keys_by_tok: HashMap<usize, usize>,
    flow_level: usize,
    reader: Reader,
    /// Move to a line break one character at a time, as the stretch-at-a-time advance's
    /// reference (tests only).
    #[cfg(test)]
    stepwise: bool,
}

/// The scanner's input, one element per character, so that looking ahead is indexing:
/// ASCII text (almost every chart file) as its bytes, one byte per character; anything
/// else decoded, four bytes per character (the 4-byte widening of every input was 1.4 %
/// of a bitnami/mastodon render in the component, and the memory it touched more).
enum Chars {
    Ascii(Box<[u8]>),
    /// Text with a few characters beyond ASCII (curly quotes in a CRD's descriptions): one
    /// byte per character, each of the others marked by a byte of 0x80 or more and listed
    /// in `wide` by index, ascending. Widening the whole text for them was a tenth of
    /// parsing such a document, and four or eight times its size in memory.
    Sparse {
        units: Box<[u8]>,
        wide: Vec<(usize, char)>,
    },
    Wide(Vec<char>),
}

/// How a scanner keeps its text: as the text suits ([`Chars::Ascii`] for ASCII,
/// [`Chars::Sparse`] for text with few characters beyond ASCII, else [`Chars::Wide`]), or,
/// for tests comparing the fast forms with their reference, forced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// As the text suits: what [`Scanner::new`] does.
    Chosen,
    /// Every character decoded into [`Chars::Wide`], with a table of where each ends: the
    /// reference the other forms must scan alike.
    #[cfg(test)]
    Widened,
    /// [`Chars::Sparse`] whatever the density of characters beyond ASCII.
    #[cfg(test)]
    Sparse,
}

/// Text with at most one character in this many beyond ASCII is kept [`Chars::Sparse`].
const SPARSE_RATIO: usize = 32;

/// The listed character at `index` of a [`Chars::Sparse`] text.
fn sparse_char(wide: &[(usize, char)], index: usize) -> char {
    wide.binary_search_by_key(&index, |&(at, _)| at)
        .map_or('\0', |found| wide[found].1)
}

impl Chars {
    /// How many of the `limit` characters from `from` come before the first line break or
    /// NUL (past the end counts as NUL).
    fn count_until_breakz(&self, from: usize, limit: usize) -> usize {
        match self {
            Chars::Ascii(bytes) => {
                let end = from.saturating_add(limit).min(bytes.len());
                let stretch = bytes.get(from..end).unwrap_or(&[]);
                stretch
                    .iter()
                    .position(|&b| matches!(b, b'\r' | b'\n' | 0))
                    .unwrap_or(stretch.len())
            }
            Chars::Sparse { units, wide } => {
                let end = from.saturating_add(limit).min(units.len());
                let stretch = units.get(from..end).unwrap_or(&[]);
                stretch
                    .iter()
                    .enumerate()
                    .position(|(k, &b)| match b {
                        b'\r' | b'\n' | 0 => true,
                        0x80.. => is_breakz(sparse_char(wide, from + k)),
                        _ => false,
                    })
                    .unwrap_or(stretch.len())
            }
            Chars::Wide(chars) => {
                let end = from.saturating_add(limit).min(chars.len());
                let stretch = chars.get(from..end).unwrap_or(&[]);
                stretch
                    .iter()
                    .position(|&c| is_breakz(c))
                    .unwrap_or(stretch.len())
            }
        }
    }

    /// Append the `count` characters from `from` to `s` (a stretch within the text, as
    /// [`Chars::count_until_breakz`] measures them).
    fn push_chars(&self, from: usize, count: usize, s: &mut String) {
        match self {
            Chars::Ascii(bytes) => {
                let end = from.saturating_add(count);
                let stretch = bytes.get(from..end.min(bytes.len())).unwrap_or(&[]);
                // ASCII (checked when the scanner was made) is UTF-8.
                s.push_str(std::str::from_utf8(stretch).unwrap_or_default());
            }
            Chars::Sparse { units, wide } => {
                let end = from.saturating_add(count);
                let stretch = units.get(from..end.min(units.len())).unwrap_or(&[]);
                let mut rest = stretch;
                let mut index = from;
                while !rest.is_empty() {
                    let ascii = rest.iter().position(|&b| b >= 0x80).unwrap_or(rest.len());
                    s.push_str(std::str::from_utf8(&rest[..ascii]).unwrap_or_default());
                    index += ascii;
                    rest = &rest[ascii..];
                    if let Some((_, after)) = rest.split_first() {
                        s.push(sparse_char(wide, index));
                        index += 1;
                        rest = after;
                    }
                }
            }
            Chars::Wide(chars) => {
                let end = from.saturating_add(count);
                let stretch = chars.get(from..end.min(chars.len())).unwrap_or(&[]);
                s.extend(stretch);
            }
        }
    }

    /// The character at `index`; `'\0'` past the end (libyaml's buffers end in NULs).
    #[inline]
    fn at(&self, index: usize) -> char {
        match self {
            Chars::Ascii(bytes) => bytes.get(index).map_or('\0', |&b| char::from(b)),
            Chars::Sparse { units, wide } => match units.get(index) {
                None => '\0',
                Some(&b) if b < 0x80 => char::from(b),
                Some(_) => sparse_char(wide, index),
            },
            Chars::Wide(chars) => chars.get(index).copied().unwrap_or('\0'),
        }
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}
fn is_breakz(c: char) -> bool {
    is_break(c) || c == '\0'
}
fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}
fn is_blankz(c: char) -> bool {
    is_blank(c) || is_breakz(c)
}
fn is_alpha(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}
fn reader_allows(c: char) -> bool {
    let v = c as u32;
    matches!(v, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85 | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// `body` as [`Chars::Sparse`] with its [`CharEnds::Sparse`] (after `start` bytes of
/// byte-order mark) and the index of its first character the reader refuses, when at most
/// one character in [`SPARSE_RATIO`] is beyond ASCII (or whatever the density, when
/// `any_density`: tests compare every text both ways).
fn sparse_chars(
    body: &str,
    start: usize,
    any_density: bool,
) -> Option<(Chars, Option<usize>, CharEnds)> {
    let beyond_ascii = body.bytes().filter(|&b| b >= 0xC0).count();
    if !any_density && beyond_ascii.saturating_mul(SPARSE_RATIO) > body.len() {
        return None;
    }
    let bytes = body.as_bytes();
    let mut units = Vec::with_capacity(body.len());
    let mut wide = Vec::with_capacity(beyond_ascii);
    let mut ends = Vec::with_capacity(beyond_ascii);
    let mut extra = 0;
    let mut bad_char = None;
    let mut offset = 0;
    while offset < bytes.len() {
        // A stretch of ASCII, copied whole, then one character beyond it.
        let ascii = &bytes[offset..];
        let ascii = &ascii[..ascii.iter().position(|&b| b >= 0x80).unwrap_or(ascii.len())];
        if bad_char.is_none() {
            bad_char = ascii
                .iter()
                .position(|&b| !reader_allows(char::from(b)))
                .map(|k| units.len() + k);
        }
        units.extend_from_slice(ascii);
        offset += ascii.len();
        let Some(c) = body.get(offset..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let index = units.len();
        if bad_char.is_none() && !reader_allows(c) {
            bad_char = Some(index);
        }
        units.push(0x80);
        wide.push((index, c));
        extra += c.len_utf8() - 1;
        ends.push((index, extra));
        offset += c.len_utf8();
    }
    let count = units.len();
    Some((
        Chars::Sparse {
            units: units.into(),
            wide,
        },
        bad_char,
        CharEnds::Sparse {
            start,
            count,
            wide: ends,
        },
    ))
}

impl Scanner {
    /// A scanner over the text (a leading byte-order mark is dropped as the reader does).
    pub fn new(text: &str) -> Scanner {
        Scanner::with_layout(text, Layout::Chosen)
    }

    /// [`Scanner::new`] with the text kept as `layout` says.
    fn with_layout(text: &str, layout: Layout) -> Scanner {
        let starts_with_bom = text.starts_with('\u{FEFF}');
        let body = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let ascii = body.is_ascii();
        let bom_len = text.len() - body.len();
        let sparse = match layout {
            Layout::Chosen => true,
            #[cfg(test)]
            Layout::Widened => false,
            #[cfg(test)]
            Layout::Sparse => true,
        };
        let (buf, bad_char, char_end) = if ascii && layout == Layout::Chosen {
            let bytes = body.as_bytes();
            let bad_char = bytes.iter().position(|&b| !reader_allows(char::from(b)));
            let char_end = CharEnds::Ascii {
                start: bom_len,
                count: bytes.len(),
            };
            (Chars::Ascii(bytes.into()), bad_char, char_end)
        } else if let Some(sparse) = sparse
            .then(|| sparse_chars(body, bom_len, layout != Layout::Chosen))
            .flatten()
        {
            sparse
        } else {
            let chars: Vec<char> = body.chars().collect();
            let bad_char = chars.iter().position(|&c| !reader_allows(c));
            let mut ends = Vec::with_capacity(chars.len());
            let mut offset = bom_len;
            for c in &chars {
                offset += c.len_utf8();
                ends.push(offset);
            }
            (Chars::Wide(chars), bad_char, CharEnds::Table(ends))
        };
        let reader = Reader {
            char_end,
            total: text.len(),
            starts_with_bom,
            input_pos: 0,
            consumed: 0,
            decoded: 0,
            nuls: 0,
            eof: false,
            encoding_known: false,
            buf_start: 0,
            bad_char,
        };
        Scanner {
            buf,
            pos: 0,
            mark: Mark::default(),
            tokens: VecDeque::new(),
            tokens_parsed: 0,
            token_available: false,
            stream_start_produced: false,
            stream_end_produced: false,
            indent: -1,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            simple_keys_by_tok: HashMap::new(),
            flow_level: 0,
            reader,
            #[cfg(test)]
            stepwise: false,
        }
    }

    /// Makes `n` characters available (go-yaml's `cache`/`update_buffer` calls). Inlined
    /// with its usual answer (already available): called for nearly every character, the
    /// call itself was 3 % of rendering a large chart.
    #[inline(always)]
    fn cache(&mut self, n: usize) -> SResult<()> {
        if self.reader.unread(self.pos) >= n {
            return Ok(());
        }
        self.reader.update(self.pos, n)
    }

    /// libyaml's `is_bom(buffer, pos)`, which tests the buffer's first character.
    fn buffer_starts_with_bom(&self) -> bool {
        self.buf.at(self.reader.buf_start) == '\u{FEFF}'
    }

    fn ch(&self, k: usize) -> char {
        self.buf.at(self.pos + k)
    }

    fn col(&self) -> i64 {
        self.mark.column as i64
    }

    fn skip(&mut self) {
        self.mark.index += 1;
        self.mark.column += 1;
        self.pos += 1;
    }

    /// Skip a comment up to (not over) its line break or the end (comments are most of a
    /// Bitnami `values.yaml`).
    fn skip_comment_body(&mut self) -> SResult<()> {
        self.advance_to_break(None)
    }

    fn skip_line(&mut self) {
        if self.ch(0) == '\r' && self.ch(1) == '\n' {
            self.mark.index += 2;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += 2;
        } else if is_break(self.ch(0)) {
            self.mark.index += 1;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += 1;
        }
    }

    /// Read up to (not over) the line break or the end into `s` (the lines of block
    /// scalars, most of a CRD's text, were read character by character: a fifth of scanning
    /// one).
    fn read_to_break(&mut self, s: &mut String) -> SResult<()> {
        self.advance_to_break(Some(s))
    }

    /// Move up to (not over) the line break or the end, appending the characters passed to
    /// `kept` when given: what moving one character at a time and asking the reader for one
    /// more each time does, a decoded stretch at a time. The reader is asked for more
    /// exactly where the one-at-a-time loop would refill, so a refused character fails at
    /// the same place.
    fn advance_to_break(&mut self, mut kept: Option<&mut String>) -> SResult<()> {
        #[cfg(test)]
        if self.stepwise {
            // The one-at-a-time loop the stretches replaced, kept as their reference.
            while !is_breakz(self.ch(0)) {
                match kept.as_deref_mut() {
                    Some(s) => self.read(s),
                    None => self.skip(),
                }
                self.cache(1)?;
            }
            return Ok(());
        }
        loop {
            let available = self.reader.unread(self.pos);
            let run = self.buf.count_until_breakz(self.pos, available);
            if let Some(s) = kept.as_deref_mut() {
                self.buf.push_chars(self.pos, run, s);
            }
            self.mark.index += run;
            self.mark.column += run;
            self.pos += run;
            if run < available {
                return Ok(());
            }
            self.cache(1)?;
            if is_breakz(self.ch(0)) {
                return Ok(());
            }
        }
    }

    fn read(&mut self, s: &mut String) {
        s.push(self.ch(0));
        self.skip();
    }

    fn read_line(&mut self, s: &mut String) {
        let c = self.ch(0);
        if c == '\r' && self.ch(1) == '\n' {
            s.push('\n');
            self.pos += 2;
            self.mark.index += 1;
        } else if c == '\r' || c == '\n' || c == '\u{85}' {
            s.push('\n');
            self.pos += 1;
        } else if c == '\u{2028}' || c == '\u{2029}' {
            s.push(c);
            self.pos += 1;
        } else {
            return;
        }
        self.mark.index += 1;
        self.mark.column = 0;
        self.mark.line += 1;
    }

    fn error(&self, context: &'static str, context_mark: Mark, problem: &str) -> Problem {
        Problem {
            kind: ErrorKind::Scanner,
            context,
            context_mark,
            problem: problem.to_string(),
            problem_mark: self.mark,
        }
    }

    fn insert_token(&mut self, pos: i64, token: Token) {
        if pos < 0 {
            self.tokens.push_back(token);
        } else {
            let at = (pos as usize).min(self.tokens.len());
            self.tokens.insert(at, token);
        }
    }

    fn push_token(&mut self, kind: TokenKind, start: Mark, end: Mark) {
        self.tokens.push_back(Token { kind, start, end });
    }

    /// Makes sure a token is ready at the head of the queue.
    pub fn fetch_more_tokens(&mut self) -> SResult<()> {
        loop {
            if !self.tokens.is_empty() {
                match self.simple_keys_by_tok.get(&self.tokens_parsed) {
                    None => break,
                    Some(&idx) => {
                        if !self.simple_key_is_valid(idx)? {
                            break;
                        }
                    }
                }
            }
            self.fetch_next_token()?;
        }
        self.token_available = true;
        Ok(())
    }

    fn simple_key_is_valid(&mut self, idx: usize) -> SResult<bool> {
        let mark = self.mark;
        let Some(key) = self.simple_keys.get_mut(idx) else {
            return Ok(false);
        };
        if !key.possible {
            return Ok(false);
        }
        if key.mark.line < mark.line || key.mark.index + 1024 < mark.index {
            if key.required {
                let km = key.mark;
                return Err(self.error(
                    "while scanning a simple key",
                    km,
                    "could not find expected ':'",
                ));
            }
            key.possible = false;
            return Ok(false);
        }
        Ok(true)
    }

    fn fetch_next_token(&mut self) -> SResult<()> {
        self.cache(1)?;
        if !self.stream_start_produced {
            return self.fetch_stream_start();
        }
        self.scan_to_next_token()?;
        self.unroll_indent(self.col());
        self.cache(4)?;
        let c = self.ch(0);
        if c == '\0' {
            return self.fetch_stream_end();
        }
        if self.mark.column == 0 && c == '%' {
            return self.fetch_directive();
        }
        if self.mark.column == 0
            && c == '-'
            && self.ch(1) == '-'
            && self.ch(2) == '-'
            && is_blankz(self.ch(3))
        {
            return self.fetch_document_indicator(TokenKind::DocumentStart);
        }
        if self.mark.column == 0
            && c == '.'
            && self.ch(1) == '.'
            && self.ch(2) == '.'
            && is_blankz(self.ch(3))
        {
            return self.fetch_document_indicator(TokenKind::DocumentEnd);
        }
        match c {
            '[' => return self.fetch_flow_collection_start(TokenKind::FlowSequenceStart),
            '{' => return self.fetch_flow_collection_start(TokenKind::FlowMappingStart),
            ']' => return self.fetch_flow_collection_end(TokenKind::FlowSequenceEnd),
            '}' => return self.fetch_flow_collection_end(TokenKind::FlowMappingEnd),
            ',' => return self.fetch_flow_entry(),
            _ => {}
        }
        let c1 = self.ch(1);
        if c == '-' && is_blankz(c1) {
            return self.fetch_block_entry();
        }
        if c == '?' && (self.flow_level > 0 || is_blankz(c1)) {
            return self.fetch_key();
        }
        if c == ':' && (self.flow_level > 0 || is_blankz(c1)) {
            return self.fetch_value();
        }
        match c {
            '*' => return self.fetch_anchor(true),
            '&' => return self.fetch_anchor(false),
            '!' => return self.fetch_tag(),
            '|' if self.flow_level == 0 => return self.fetch_block_scalar(true),
            '>' if self.flow_level == 0 => return self.fetch_block_scalar(false),
            '\'' => return self.fetch_flow_scalar(true),
            '"' => return self.fetch_flow_scalar(false),
            _ => {}
        }
        let indicator = is_blankz(c)
            || matches!(
                c,
                '-' | '?'
                    | ':'
                    | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '#'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '\''
                    | '"'
                    | '%'
                    | '@'
                    | '`'
            );
        if !indicator
            || (c == '-' && !is_blank(c1))
            || (self.flow_level == 0 && (c == '?' || c == ':') && !is_blankz(c1))
        {
            return self.fetch_plain_scalar();
        }
        Err(self.error(
            "while scanning for the next token",
            self.mark,
            "found character that cannot start any token",
        ))
    }

    fn save_simple_key(&mut self) -> SResult<()> {
        let required = self.flow_level == 0 && self.indent == self.col();
        if self.simple_key_allowed {
            let key = SimpleKey {
                possible: true,
                required,
                token_number: self.tokens_parsed + self.tokens.len(),
                mark: self.mark,
            };
            self.remove_simple_key()?;
            let last = self.simple_keys.len() - 1;
            self.simple_keys[last] = key;
            self.simple_keys_by_tok.insert(key.token_number, last);
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> SResult<()> {
        let Some(i) = self.simple_keys.len().checked_sub(1) else {
            return Ok(());
        };
        let key = self.simple_keys[i];
        if key.possible {
            if key.required {
                return Err(self.error(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                ));
            }
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
        }
        Ok(())
    }

    fn increase_flow_level(&mut self) -> SResult<()> {
        self.simple_keys.push(SimpleKey {
            possible: false,
            required: false,
            token_number: self.tokens_parsed + self.tokens.len(),
            mark: self.mark,
        });
        self.flow_level += 1;
        if self.flow_level > MAX_FLOW_LEVEL {
            let m = self.mark;
            return Err(self.error(
                "while increasing flow level",
                m,
                &format!("exceeded max depth of {MAX_FLOW_LEVEL}"),
            ));
        }
        Ok(())
    }

    fn decrease_flow_level(&mut self) {
        if self.flow_level > 0 {
            self.flow_level -= 1;
            if let Some(last) = self.simple_keys.pop() {
                self.simple_keys_by_tok.remove(&last.token_number);
            }
        }
    }

    fn roll_indent(
        &mut self,
        column: i64,
        number: i64,
        kind: TokenKind,
        mark: Mark,
    ) -> SResult<()> {
        if self.flow_level > 0 {
            return Ok(());
        }
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            if self.indents.len() > MAX_INDENTS {
                let m = self.simple_keys.last().map(|k| k.mark).unwrap_or_default();
                return Err(self.error(
                    "while increasing indent level",
                    m,
                    &format!("exceeded max depth of {MAX_INDENTS}"),
                ));
            }
            let token = Token {
                kind,
                start: mark,
                end: mark,
            };
            let pos = if number > -1 {
                number - self.tokens_parsed as i64
            } else {
                number
            };
            self.insert_token(pos, token);
        }
        Ok(())
    }

    fn unroll_indent(&mut self, column: i64) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            let m = self.mark;
            self.push_token(TokenKind::BlockEnd, m, m);
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn fetch_stream_start(&mut self) -> SResult<()> {
        self.indent = -1;
        self.simple_keys.push(SimpleKey::default());
        self.simple_key_allowed = true;
        self.stream_start_produced = true;
        let m = self.mark;
        self.push_token(TokenKind::StreamStart, m, m);
        Ok(())
    }

    fn fetch_stream_end(&mut self) -> SResult<()> {
        if self.mark.column != 0 {
            self.mark.column = 0;
            self.mark.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let m = self.mark;
        self.push_token(TokenKind::StreamEnd, m, m);
        Ok(())
    }

    fn fetch_directive(&mut self) -> SResult<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, kind: TokenKind) -> SResult<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.skip();
        self.skip();
        let end = self.mark;
        self.push_token(kind, start, end);
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: TokenKind) -> SResult<()> {
        self.save_simple_key()?;
        self.increase_flow_level()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(kind, start, end);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: TokenKind) -> SResult<()> {
        self.remove_simple_key()?;
        self.decrease_flow_level();
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(kind, start, end);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> SResult<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(TokenKind::FlowEntry, start, end);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> SResult<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(
                    "",
                    self.mark,
                    "block sequence entries are not allowed in this context",
                ));
            }
            let m = self.mark;
            self.roll_indent(self.col(), -1, TokenKind::BlockSequenceStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(TokenKind::BlockEntry, start, end);
        Ok(())
    }

    fn fetch_key(&mut self) -> SResult<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.error(
                    "",
                    self.mark,
                    "mapping keys are not allowed in this context",
                ));
            }
            let m = self.mark;
            self.roll_indent(self.col(), -1, TokenKind::BlockMappingStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(TokenKind::Key, start, end);
        Ok(())
    }

    fn fetch_value(&mut self) -> SResult<()> {
        let idx = self.simple_keys.len() - 1;
        if self.simple_key_is_valid(idx)? {
            let key = self.simple_keys[idx];
            let token = Token {
                kind: TokenKind::Key,
                start: key.mark,
                end: key.mark,
            };
            self.insert_token(key.token_number as i64 - self.tokens_parsed as i64, token);
            self.roll_indent(
                key.mark.column as i64,
                key.token_number as i64,
                TokenKind::BlockMappingStart,
                key.mark,
            )?;
            self.simple_keys[idx].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
            self.simple_key_allowed = false;
        } else {
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err(self.error(
                        "",
                        self.mark,
                        "mapping values are not allowed in this context",
                    ));
                }
                let m = self.mark;
                self.roll_indent(self.col(), -1, TokenKind::BlockMappingStart, m)?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push_token(TokenKind::Value, start, end);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> SResult<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_anchor(alias)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_tag(&mut self) -> SResult<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_tag()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, literal: bool) -> SResult<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let token = self.scan_block_scalar(literal)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> SResult<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_flow_scalar(single)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> SResult<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_plain_scalar()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn scan_to_next_token(&mut self) -> SResult<()> {
        loop {
            self.cache(1)?;
            if self.mark.column == 0 && self.buffer_starts_with_bom() {
                self.skip();
            }
            self.cache(1)?;
            while self.ch(0) == ' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.ch(0) == '\t')
            {
                self.skip();
                self.cache(1)?;
            }
            if self.ch(0) == '#' {
                self.skip_comment_body()?;
            }
            if is_break(self.ch(0)) {
                self.cache(2)?;
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    fn skip_comment_to_break(&mut self, start: Mark, context: &'static str) -> SResult<()> {
        self.cache(1)?;
        while is_blank(self.ch(0)) {
            self.skip();
            self.cache(1)?;
        }
        if self.ch(0) == '#' {
            self.skip_comment_body()?;
        }
        if !is_breakz(self.ch(0)) {
            return Err(self.error(
                context,
                start,
                "did not find expected comment or line break",
            ));
        }
        if is_break(self.ch(0)) {
            self.cache(2)?;
            self.skip_line();
        }
        Ok(())
    }

    fn scan_directive(&mut self) -> SResult<Token> {
        let start = self.mark;
        self.skip();
        let mut name = String::new();
        self.cache(1)?;
        while is_alpha(self.ch(0)) {
            self.read(&mut name);
            self.cache(1)?;
        }
        if name.is_empty() {
            return Err(self.error(
                "while scanning a directive",
                start,
                "could not find expected directive name",
            ));
        }
        if !is_blankz(self.ch(0)) {
            return Err(self.error(
                "while scanning a directive",
                start,
                "found unexpected non-alphabetical character",
            ));
        }
        let kind = if name == "YAML" {
            self.cache(1)?;
            while is_blank(self.ch(0)) {
                self.skip();
                self.cache(1)?;
            }
            let major = self.scan_version_number(start)?;
            if self.ch(0) != '.' {
                return Err(self.error(
                    "while scanning a %YAML directive",
                    start,
                    "did not find expected digit or '.' character",
                ));
            }
            self.skip();
            let minor = self.scan_version_number(start)?;
            TokenKind::VersionDirective(major, minor)
        } else if name == "TAG" {
            self.cache(1)?;
            while is_blank(self.ch(0)) {
                self.skip();
                self.cache(1)?;
            }
            let handle = self.scan_tag_handle(true, start)?;
            self.cache(1)?;
            if !is_blank(self.ch(0)) {
                return Err(self.error(
                    "while scanning a %TAG directive",
                    start,
                    "did not find expected whitespace",
                ));
            }
            while is_blank(self.ch(0)) {
                self.skip();
                self.cache(1)?;
            }
            let prefix = self.scan_tag_uri(true, "", start)?;
            self.cache(1)?;
            if !is_blankz(self.ch(0)) {
                return Err(self.error(
                    "while scanning a %TAG directive",
                    start,
                    "did not find expected whitespace or line break",
                ));
            }
            TokenKind::TagDirective { handle, prefix }
        } else {
            return Err(self.error(
                "while scanning a directive",
                start,
                "found unknown directive name",
            ));
        };
        let end = self.mark;
        self.skip_comment_to_break(start, "while scanning a directive")?;
        Ok(Token { kind, start, end })
    }

    fn scan_version_number(&mut self, start: Mark) -> SResult<u8> {
        let mut value: u8 = 0;
        let mut length = 0;
        self.cache(1)?;
        while self.ch(0).is_ascii_digit() {
            length += 1;
            if length > 2 {
                return Err(self.error(
                    "while scanning a %YAML directive",
                    start,
                    "found extremely long version number",
                ));
            }
            value = value * 10 + (self.ch(0) as u8 - b'0');
            self.skip();
            self.cache(1)?;
        }
        if length == 0 {
            return Err(self.error(
                "while scanning a %YAML directive",
                start,
                "did not find expected version number",
            ));
        }
        Ok(value)
    }

    fn scan_anchor(&mut self, alias: bool) -> SResult<Token> {
        let start = self.mark;
        self.skip();
        let mut s = String::new();
        self.cache(1)?;
        while is_alpha(self.ch(0)) {
            self.read(&mut s);
            self.cache(1)?;
        }
        let end = self.mark;
        let c = self.ch(0);
        if s.is_empty()
            || !(is_blankz(c) || matches!(c, '?' | ':' | ',' | ']' | '}' | '%' | '@' | '`'))
        {
            let context = if alias {
                "while scanning an alias"
            } else {
                "while scanning an anchor"
            };
            return Err(self.error(
                context,
                start,
                "did not find expected alphabetic or numeric character",
            ));
        }
        let kind = if alias {
            TokenKind::Alias(s)
        } else {
            TokenKind::Anchor(s)
        };
        Ok(Token { kind, start, end })
    }

    fn tag_error(&self, directive: bool, start: Mark, problem: &str) -> Problem {
        let context = if directive {
            "while parsing a %TAG directive"
        } else {
            "while parsing a tag"
        };
        self.error(context, start, problem)
    }

    fn scan_tag(&mut self) -> SResult<Token> {
        let start = self.mark;
        self.cache(2)?;
        let (handle, suffix);
        if self.ch(1) == '<' {
            self.skip();
            self.skip();
            suffix = self.scan_tag_uri(false, "", start)?;
            if self.ch(0) != '>' {
                return Err(self.error(
                    "while scanning a tag",
                    start,
                    "did not find the expected '>'",
                ));
            }
            self.skip();
            handle = String::new();
        } else {
            let h = self.scan_tag_handle(false, start)?;
            if h.len() > 1 && h.starts_with('!') && h.ends_with('!') {
                suffix = self.scan_tag_uri(false, "", start)?;
                handle = h;
            } else {
                let s = self.scan_tag_uri(false, &h, start)?;
                if s.is_empty() {
                    handle = String::new();
                    suffix = "!".to_string();
                } else {
                    handle = "!".to_string();
                    suffix = s;
                }
            }
        }
        self.cache(1)?;
        if !is_blankz(self.ch(0)) {
            return Err(self.error(
                "while scanning a tag",
                start,
                "did not find expected whitespace or line break",
            ));
        }
        let end = self.mark;
        Ok(Token {
            kind: TokenKind::Tag { handle, suffix },
            start,
            end,
        })
    }

    fn scan_tag_handle(&mut self, directive: bool, start: Mark) -> SResult<String> {
        self.cache(1)?;
        if self.ch(0) != '!' {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        let mut s = String::new();
        self.read(&mut s);
        self.cache(1)?;
        while is_alpha(self.ch(0)) {
            self.read(&mut s);
            self.cache(1)?;
        }
        if self.ch(0) == '!' {
            self.read(&mut s);
        } else if directive && s != "!" {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        Ok(s)
    }

    fn scan_tag_uri(&mut self, directive: bool, head: &str, start: Mark) -> SResult<String> {
        let mut bytes: Vec<u8> = Vec::new();
        let mut has_tag = !head.is_empty();
        if head.len() > 1 {
            bytes.extend_from_slice(&head.as_bytes()[1..]);
        }
        self.cache(1)?;
        loop {
            let c = self.ch(0);
            let ok = is_alpha(c)
                || matches!(
                    c,
                    ';' | '/'
                        | '?'
                        | ':'
                        | '@'
                        | '&'
                        | '='
                        | '+'
                        | '$'
                        | ','
                        | '.'
                        | '!'
                        | '~'
                        | '*'
                        | '\''
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '%'
                );
            if !ok {
                break;
            }
            if c == '%' {
                self.scan_uri_escapes(directive, start, &mut bytes)?;
            } else {
                let mut tmp = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                self.skip();
            }
            self.cache(1)?;
            has_tag = true;
        }
        if !has_tag {
            return Err(self.tag_error(directive, start, "did not find expected tag URI"));
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn scan_uri_escapes(&mut self, directive: bool, start: Mark, out: &mut Vec<u8>) -> SResult<()> {
        let mut w: i32 = 1024;
        while w > 0 {
            self.cache(3)?;
            let (c0, c1, c2) = (self.ch(0), self.ch(1), self.ch(2));
            if !(c0 == '%' && c1.is_ascii_hexdigit() && c2.is_ascii_hexdigit()) {
                return Err(self.tag_error(directive, start, "did not find URI escaped octet"));
            }
            let octet = (c1.to_digit(16).unwrap_or(0) * 16 + c2.to_digit(16).unwrap_or(0)) as u8;
            if w == 1024 {
                w = if octet & 0x80 == 0 {
                    1
                } else if octet & 0xE0 == 0xC0 {
                    2
                } else if octet & 0xF0 == 0xE0 {
                    3
                } else if octet & 0xF8 == 0xF0 {
                    4
                } else {
                    0
                };
                if w == 0 {
                    return Err(self.tag_error(
                        directive,
                        start,
                        "found an incorrect leading UTF-8 octet",
                    ));
                }
            } else if octet & 0xC0 != 0x80 {
                return Err(self.tag_error(
                    directive,
                    start,
                    "found an incorrect trailing UTF-8 octet",
                ));
            }
            out.push(octet);
            self.skip();
            self.skip();
            self.skip();
            w -= 1;
        }
        Ok(())
    }

    fn scan_block_scalar(&mut self, literal: bool) -> SResult<Token> {
        let start = self.mark;
        self.skip();
        self.cache(1)?;
        let mut chomping = 0i32;
        let mut increment = 0i64;
        let c = self.ch(0);
        if c == '+' || c == '-' {
            chomping = if c == '+' { 1 } else { -1 };
            self.skip();
            self.cache(1)?;
            if self.ch(0).is_ascii_digit() {
                if self.ch(0) == '0' {
                    return Err(self.error(
                        "while scanning a block scalar",
                        start,
                        "found an indentation indicator equal to 0",
                    ));
                }
                increment = (self.ch(0) as u8 - b'0') as i64;
                self.skip();
            }
        } else if c.is_ascii_digit() {
            if c == '0' {
                return Err(self.error(
                    "while scanning a block scalar",
                    start,
                    "found an indentation indicator equal to 0",
                ));
            }
            increment = (c as u8 - b'0') as i64;
            self.skip();
            self.cache(1)?;
            let c = self.ch(0);
            if c == '+' || c == '-' {
                chomping = if c == '+' { 1 } else { -1 };
                self.skip();
            }
        }
        self.skip_comment_to_break(start, "while scanning a block scalar")?;
        let mut end = self.mark;
        let mut indent: i64 = 0;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            };
        }
        let mut s = String::new();
        let mut leading_break = String::new();
        let mut trailing_breaks = String::new();
        self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        self.cache(1)?;
        let mut leading_blank = false;
        while self.col() == indent && self.ch(0) != '\0' {
            let trailing_blank = is_blank(self.ch(0));
            if !literal && !leading_blank && !trailing_blank && leading_break.starts_with('\n') {
                if trailing_breaks.is_empty() {
                    s.push(' ');
                }
            } else {
                s.push_str(&leading_break);
            }
            leading_break.clear();
            s.push_str(&trailing_breaks);
            trailing_breaks.clear();
            leading_blank = is_blank(self.ch(0));
            self.read_to_break(&mut s)?;
            self.cache(2)?;
            self.read_line(&mut leading_break);
            self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomping != -1 {
            s.push_str(&leading_break);
        }
        if chomping == 1 {
            s.push_str(&trailing_breaks);
        }
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        Ok(Token {
            kind: TokenKind::Scalar { value: s, style },
            start,
            end,
        })
    }

    fn scan_block_scalar_breaks(
        &mut self,
        indent: &mut i64,
        breaks: &mut String,
        start: Mark,
        end: &mut Mark,
    ) -> SResult<()> {
        *end = self.mark;
        let mut max_indent: i64 = 0;
        loop {
            self.cache(1)?;
            while (*indent == 0 || self.col() < *indent) && self.ch(0) == ' ' {
                self.skip();
                self.cache(1)?;
            }
            if self.col() > max_indent {
                max_indent = self.col();
            }
            if (*indent == 0 || self.col() < *indent) && self.ch(0) == '\t' {
                return Err(self.error(
                    "while scanning a block scalar",
                    start,
                    "found a tab character where an indentation space is expected",
                ));
            }
            if !is_break(self.ch(0)) {
                break;
            }
            self.cache(2)?;
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = max_indent;
            if *indent < self.indent + 1 {
                *indent = self.indent + 1;
            }
            if *indent < 1 {
                *indent = 1;
            }
        }
        Ok(())
    }

    fn at_document_indicator(&self) -> bool {
        self.mark.column == 0
            && ((self.ch(0) == '-' && self.ch(1) == '-' && self.ch(2) == '-')
                || (self.ch(0) == '.' && self.ch(1) == '.' && self.ch(2) == '.'))
            && is_blankz(self.ch(3))
    }

    fn scan_flow_scalar(&mut self, single: bool) -> SResult<Token> {
        let start = self.mark;
        self.skip();
        let mut s = String::new();
        let mut leading_break = String::new();
        let mut trailing_breaks = String::new();
        let mut whitespaces = String::new();
        loop {
            self.cache(4)?;
            if self.at_document_indicator() {
                return Err(self.error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected document indicator",
                ));
            }
            if self.ch(0) == '\0' {
                return Err(self.error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected end of stream",
                ));
            }
            let mut leading_blanks = false;
            while !is_blankz(self.ch(0)) {
                let c = self.ch(0);
                if single && c == '\'' && self.ch(1) == '\'' {
                    s.push('\'');
                    self.skip();
                    self.skip();
                } else if (single && c == '\'') || (!single && c == '"') {
                    break;
                } else if !single && c == '\\' && is_break(self.ch(1)) {
                    self.cache(3)?;
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == '\\' {
                    let mut code_length = 0usize;
                    match self.ch(1) {
                        '0' => s.push('\0'),
                        'a' => s.push('\x07'),
                        'b' => s.push('\x08'),
                        't' | '\t' => s.push('\t'),
                        'n' => s.push('\n'),
                        'v' => s.push('\x0B'),
                        'f' => s.push('\x0C'),
                        'r' => s.push('\r'),
                        'e' => s.push('\x1B'),
                        ' ' => s.push(' '),
                        '"' => s.push('"'),
                        '\'' => s.push('\''),
                        '\\' => s.push('\\'),
                        'N' => s.push('\u{85}'),
                        '_' => s.push('\u{A0}'),
                        'L' => s.push('\u{2028}'),
                        'P' => s.push('\u{2029}'),
                        'x' => code_length = 2,
                        'u' => code_length = 4,
                        'U' => code_length = 8,
                        _ => {
                            return Err(self.error(
                                "while parsing a quoted scalar",
                                start,
                                "found unknown escape character",
                            ));
                        }
                    }
                    self.skip();
                    self.skip();
                    if code_length > 0 {
                        self.cache(code_length)?;
                        let mut value: u32 = 0;
                        for k in 0..code_length {
                            let Some(d) = self.ch(k).to_digit(16) else {
                                return Err(self.error(
                                    "while parsing a quoted scalar",
                                    start,
                                    "did not find expected hexdecimal number",
                                ));
                            };
                            value = (value << 4) + d;
                        }
                        match char::from_u32(value) {
                            Some(ch) => s.push(ch),
                            None => {
                                return Err(self.error(
                                    "while parsing a quoted scalar",
                                    start,
                                    "found invalid Unicode character escape code",
                                ));
                            }
                        }
                        for _ in 0..code_length {
                            self.skip();
                        }
                    }
                } else {
                    self.read(&mut s);
                }
                self.cache(2)?;
            }
            self.cache(1)?;
            let c = self.ch(0);
            if (single && c == '\'') || (!single && c == '"') {
                break;
            }
            while is_blank(self.ch(0)) || is_break(self.ch(0)) {
                if is_blank(self.ch(0)) {
                    if !leading_blanks {
                        self.read(&mut whitespaces);
                    } else {
                        self.skip();
                    }
                } else {
                    self.cache(2)?;
                    if !leading_blanks {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    } else {
                        self.read_line(&mut trailing_breaks);
                    }
                }
                self.cache(1)?;
            }
            if leading_blanks {
                if leading_break.starts_with('\n') {
                    if trailing_breaks.is_empty() {
                        s.push(' ');
                    } else {
                        s.push_str(&trailing_breaks);
                    }
                } else {
                    s.push_str(&leading_break);
                    s.push_str(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.push_str(&whitespaces);
                whitespaces.clear();
            }
        }
        self.skip();
        let end = self.mark;
        let style = if single {
            ScalarStyle::SingleQuoted
        } else {
            ScalarStyle::DoubleQuoted
        };
        Ok(Token {
            kind: TokenKind::Scalar { value: s, style },
            start,
            end,
        })
    }

    fn scan_plain_scalar(&mut self) -> SResult<Token> {
        let mut s = String::new();
        let mut leading_break = String::new();
        let mut trailing_breaks = String::new();
        let mut whitespaces = String::new();
        let mut leading_blanks = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        loop {
            self.cache(4)?;
            if self.at_document_indicator() {
                break;
            }
            if self.ch(0) == '#' {
                break;
            }
            while !is_blankz(self.ch(0)) {
                let c = self.ch(0);
                if (c == ':' && is_blankz(self.ch(1)))
                    || (self.flow_level > 0 && matches!(c, ',' | '?' | '[' | ']' | '{' | '}'))
                {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.starts_with('\n') {
                            if trailing_breaks.is_empty() {
                                s.push(' ');
                            } else {
                                s.push_str(&trailing_breaks);
                            }
                        } else {
                            s.push_str(&leading_break);
                            s.push_str(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.push_str(&whitespaces);
                        whitespaces.clear();
                    }
                }
                self.read(&mut s);
                end = self.mark;
                self.cache(2)?;
            }
            if !(is_blank(self.ch(0)) || is_break(self.ch(0))) {
                break;
            }
            self.cache(1)?;
            while is_blank(self.ch(0)) || is_break(self.ch(0)) {
                if is_blank(self.ch(0)) {
                    if leading_blanks && self.col() < indent && self.ch(0) == '\t' {
                        return Err(self.error(
                            "while scanning a plain scalar",
                            start,
                            "found a tab character that violates indentation",
                        ));
                    }
                    if !leading_blanks {
                        self.read(&mut whitespaces);
                    } else {
                        self.skip();
                    }
                } else {
                    self.cache(2)?;
                    if !leading_blanks {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    } else {
                        self.read_line(&mut trailing_breaks);
                    }
                }
                self.cache(1)?;
            }
            if self.flow_level == 0 && self.col() < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(Token {
            kind: TokenKind::Scalar {
                value: s,
                style: ScalarStyle::Plain,
            },
            start,
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A problem as the scanner reports it, every field.
    type Reported = (ErrorKind, &'static str, Mark, String, Mark);

    /// Every token with its marks, and the problem that ended the scan (if any), of `text`
    /// kept as `layout` says.
    fn scan(text: &str, layout: Layout) -> (Vec<(TokenKind, Mark, Mark)>, Option<Reported>) {
        scan_with(text, layout, false)
    }

    /// [`scan`], moving to line breaks one character at a time when `stepwise`.
    fn scan_with(
        text: &str,
        layout: Layout,
        stepwise: bool,
    ) -> (Vec<(TokenKind, Mark, Mark)>, Option<Reported>) {
        let mut scanner = Scanner::with_layout(text, layout);
        scanner.stepwise = stepwise;
        let mut tokens = Vec::new();
        loop {
            if let Err(p) = scanner.fetch_more_tokens() {
                let reported = (p.kind, p.context, p.context_mark, p.problem, p.problem_mark);
                return (tokens, Some(reported));
            }
            let Some(token) = scanner.tokens.pop_front() else {
                return (tokens, None);
            };
            scanner.tokens_parsed += 1;
            let end = token.kind == TokenKind::StreamEnd;
            tokens.push((token.kind, token.start, token.end));
            if end {
                return (tokens, None);
            }
        }
    }

    /// How [`Scanner::new`] keeps `text`.
    fn chosen_form(text: &str) -> &'static str {
        match Scanner::new(text).buf {
            Chars::Ascii(_) => "ascii",
            Chars::Sparse { .. } => "sparse",
            Chars::Wide(_) => "wide",
        }
    }

    /// `text` scans alike as the scanner keeps it, widened and forced sparse, each moving
    /// to line breaks a stretch at a time, and widened moving one character at a time (the
    /// reference); `what` names the input in the failure.
    fn assert_scans_alike(text: &str, what: &str) {
        let widened = scan_with(text, Layout::Widened, true);
        let stretches = scan(text, Layout::Widened);
        assert!(
            stretches == widened,
            "{what}: widened, a stretch at a time scans otherwise than a character at a time:\n{text:?}\nstretches: {:?}\none by one: {:?}",
            first_difference(&stretches, &widened),
            first_difference(&widened, &stretches),
        );
        let chosen = scan(text, Layout::Chosen);
        assert!(
            chosen == widened,
            "{what}: kept {} scans otherwise than widened:\n{text:?}\nkept:    {:?}\nwidened: {:?}",
            chosen_form(text),
            first_difference(&chosen, &widened),
            first_difference(&widened, &chosen),
        );
        let sparse = scan(text, Layout::Sparse);
        assert!(
            sparse == widened,
            "{what}: forced sparse scans otherwise than widened:\n{text:?}\nsparse:  {:?}\nwidened: {:?}",
            first_difference(&sparse, &widened),
            first_difference(&widened, &sparse),
        );
    }

    /// The first token or problem of `a` that `b` does not have in its place.
    fn first_difference(
        a: &(Vec<(TokenKind, Mark, Mark)>, Option<Reported>),
        b: &(Vec<(TokenKind, Mark, Mark)>, Option<Reported>),
    ) -> String {
        match a.0.iter().zip(&b.0).position(|(x, y)| x != y) {
            Some(at) => format!("token {at}: {:?}", a.0[at]),
            None if a.0.len() != b.0.len() => {
                format!("{} tokens, then {:?}", a.0.len(), a.0.get(b.0.len()))
            }
            None => format!("problem {:?}", a.1),
        }
    }

    /// Text with a few characters beyond ASCII scans to the same tokens, marks and problems
    /// whether it is kept sparse or widened (fixed cases).
    #[test]
    fn sparse_text_scans_as_widened_text() {
        let long_ascii = "x".repeat(600);
        let cases = [
            "description: |-\n  The \u{201c}quoted\u{201d} word\n  next line\nkind: A\n".to_owned(),
            "k\u{e9}y: v\u{e4}lue\nother: \"d\u{f6}uble\"\n# c\u{f6}mment\nlast: 1\n".to_owned(),
            "\u{feff}a: \u{201c}x\u{201d}\nb: >\n  folded \u{2014} text\n\n  more\n".to_owned(),
            format!("a: {long_ascii}\u{e9}\nb: |\n  {long_ascii}\u{201c}\n  tail\n"),
            "a: one\u{85}b: two\u{2028}c: three\n".to_owned(),
            format!("a: \u{e9}{long_ascii}\nb: bad\u{1}char\n"),
            "a: [\u{e9}, b\nc: d\n".to_owned(),
        ];
        for text in &cases {
            // Enough ASCII for the text to count as mostly ASCII.
            let text = &format!("{text}# {long_ascii}\n");
            assert_eq!(chosen_form(text), "sparse", "not kept sparse: {text:?}");
            assert_scans_alike(text, "fixed case");
        }
        // Mostly beyond ASCII: widened.
        assert_eq!(
            chosen_form("k: \u{65e5}\u{672c}\u{8a9e}\u{30c6}\u{30ad}\u{30b9}\u{30c8}\n"),
            "wide"
        );
    }

    #[allow(dead_code)]
    mod xorshift {
        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test-support/xorshift.rs"
        ));
    }
    use xorshift::Rng;

    /// Characters beyond ASCII: of two, three and four bytes, line breaks and a space of
    /// their own (NEL, LS, PS, NBSP), a byte-order mark inside the text, and the extremes
    /// of what the reader allows.
    const BEYOND_ASCII: &[char] = &[
        '\u{e9}',
        '\u{fc}',
        '\u{df}',
        '\u{201c}',
        '\u{201d}',
        '\u{2014}',
        '\u{65e5}',
        '\u{672c}',
        '\u{1f600}',
        '\u{a0}',
        '\u{85}',
        '\u{2028}',
        '\u{2029}',
        '\u{feff}',
        '\u{d7ff}',
        '\u{e000}',
        '\u{fffd}',
        '\u{10000}',
        '\u{10ffff}',
    ];

    /// Characters the reader refuses.
    const REFUSED: &[char] = &[
        '\u{1}', '\u{7f}', '\u{80}', '\u{9f}', '\u{fffe}', '\u{ffff}',
    ];

    /// Characters that mean something to the scanner, for corrupting a document.
    const SYNTAX: &[char] = &[
        '\t', ' ', '\n', '\r', ':', '-', '?', '#', '"', '\'', '|', '>', '[', ']', '{', '}', ',',
        '&', '*', '!', '%', '@', '`', '\\', '.',
    ];

    /// One generated YAML-ish document.
    struct Document {
        rng: Rng,
        /// Characters beyond ASCII per thousand characters of text.
        wide_per_mille: usize,
        /// Line ending kinds in use (a line picks one).
        breaks: &'static [&'static str],
        out: String,
    }

    impl Document {
        fn newline(&mut self) {
            let ending = self.rng.pick(self.breaks);
            self.out.push_str(ending);
        }

        /// A character of text (no line break): ASCII, or beyond it at the document's
        /// density.
        fn text_char(&mut self) -> char {
            if self.rng.per_mille(self.wide_per_mille) {
                return match self.rng.pick(BEYOND_ASCII) {
                    c if is_break(c) => 'b',
                    c => c,
                };
            }
            const ASCII: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-./ ";
            char::from(self.rng.pick(ASCII))
        }

        /// A word: no blanks or line breaks.
        fn word(&mut self, max: usize) -> String {
            let len = 1 + self.rng.below(max);
            (0..len)
                .map(|_| match self.text_char() {
                    ' ' => 'w',
                    c => c,
                })
                .collect::<String>()
        }

        /// An anchor or alias name: ASCII letters and digits (go-yaml allows no others).
        fn name(&mut self) -> String {
            const NAME: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_-";
            let len = 1 + self.rng.below(6);
            (0..len).map(|_| char::from(self.rng.pick(NAME))).collect()
        }

        /// Up to `max` characters of text (some of them syntax), a long line now and then
        /// (the reader takes input 512 bytes at a time).
        fn text(&mut self, max: usize) -> String {
            let len = if self.rng.per_mille(30) {
                400 + self.rng.below(1200)
            } else {
                self.rng.below(max + 1)
            };
            (0..len)
                .map(|_| {
                    if self.rng.per_mille(15) {
                        self.rng
                            .pick(&[':', '#', ',', '"', '\'', '\t', '[', '{', '\\'])
                    } else {
                        self.text_char()
                    }
                })
                .collect()
        }

        fn indent(&mut self, n: usize) {
            for _ in 0..n {
                self.out.push(' ');
            }
        }

        fn comment(&mut self) {
            self.out.push_str(self.rng.pick(&["# ", "#", " # "]));
            let text = self.text(60);
            self.out.push_str(&text);
        }

        /// A scalar on the current line (plain, quoted, an alias, with a tag or anchor).
        fn inline_scalar(&mut self) {
            if self.rng.per_mille(80) {
                let tag = self
                    .rng
                    .pick(&["!!str ", "!local ", "!<tag:x,2000:y> ", "!e!t "]);
                self.out.push_str(tag);
            }
            if self.rng.per_mille(60) {
                let anchor = format!("&{} ", self.name());
                self.out.push_str(&anchor);
            }
            match self.rng.below(8) {
                0..=2 => {
                    let word = self.word(10);
                    self.out.push_str(&word);
                    if self.rng.per_mille(100) {
                        let more = self.text(30);
                        self.out.push(' ');
                        self.out.push_str(&more);
                    }
                }
                3 => {
                    self.out.push('\'');
                    let text = self.text(30).replace('\'', "''");
                    self.out.push_str(&text);
                    if self.rng.per_mille(200) {
                        self.newline();
                        let more = self.text(20).replace('\'', "''");
                        self.out.push_str(&more);
                    }
                    self.out.push('\'');
                }
                4 => {
                    self.out.push('"');
                    for _ in 0..self.rng.below(12) {
                        let piece = match self.rng.below(12) {
                            0 => "\\n".to_owned(),
                            1 => "\\t".to_owned(),
                            2 => "\\u00e9".to_owned(),
                            3 => "\\x41".to_owned(),
                            4 => "\\U0001F600".to_owned(),
                            5 => "\\\"".to_owned(),
                            6 if self.rng.per_mille(200) => {
                                self.rng.pick(&["\\q", "\\u12", "\\"]).to_owned()
                            }
                            7 => {
                                let ending = self.rng.pick(self.breaks);
                                format!("\\{ending}  ")
                            }
                            _ => self.word(8).replace('\\', "/"),
                        };
                        self.out.push_str(&piece);
                    }
                    self.out.push('"');
                }
                5 => {
                    let alias = format!("*{}", self.name());
                    self.out.push_str(&alias);
                }
                6 => {
                    let value = self
                        .rng
                        .pick(&["1", "-2.5", "0x1F", "~", "null", "yes", ""]);
                    self.out.push_str(value);
                }
                _ => self.flow(0),
            }
        }

        /// A flow collection, nested up to a few levels.
        fn flow(&mut self, depth: usize) {
            let mapping = self.rng.per_mille(500);
            self.out.push(if mapping { '{' } else { '[' });
            for item in 0..self.rng.below(5) {
                if item > 0 {
                    self.out.push_str(self.rng.pick(&[", ", ",", " , "]));
                }
                if self.rng.per_mille(100) {
                    self.newline();
                    let n = self.rng.below(4);
                    self.indent(n);
                }
                if depth < 3 && self.rng.per_mille(200) {
                    self.flow(depth + 1);
                    continue;
                }
                if mapping || self.rng.per_mille(100) {
                    let key = self.word(6);
                    self.out.push_str(&key);
                    self.out.push_str(self.rng.pick(&[": ", ":", " : "]));
                }
                let value = match self.rng.below(4) {
                    0 => format!("\"{}\"", self.word(6)),
                    1 => format!("'{}'", self.word(6)),
                    _ => self.word(8),
                };
                self.out.push_str(&value);
            }
            if !self.rng.per_mille(5) {
                self.out.push(if mapping { '}' } else { ']' });
            }
        }

        /// A block scalar's header and lines, indented by `indent`.
        fn block_scalar(&mut self, indent: usize) {
            self.out.push(self.rng.pick(&['|', '>']));
            let own = indent + 1 + self.rng.below(3);
            // An indentation indicator says how far the lines are indented (now and then
            // wrongly).
            let indicator = if self.rng.per_mille(5) {
                9
            } else {
                own - indent
            };
            let header = match self.rng.below(8) {
                0 => format!("{indicator}"),
                1 => format!("-{indicator}"),
                2 => format!("+{indicator}"),
                3 => "-".to_owned(),
                4 => "+".to_owned(),
                _ => String::new(),
            };
            self.out.push_str(&header);
            if self.rng.per_mille(150) {
                self.out.push(' ');
                self.comment();
            }
            self.newline();
            for _ in 0..1 + self.rng.below(8) {
                match self.rng.below(150) {
                    0 => {}
                    1 => self.indent(own + 2),
                    2 => {
                        self.indent(own);
                        self.out.push('\t');
                    }
                    3 => self.indent(own.saturating_sub(1)),
                    _ => self.indent(own),
                }
                let line = self.text(70);
                self.out.push_str(&line);
                self.newline();
            }
            for _ in 0..self.rng.below(3) {
                self.newline();
            }
        }

        /// A block mapping or sequence at `indent`, nested up to a few levels.
        fn block(&mut self, indent: usize, depth: usize) {
            let sequence = self.rng.per_mille(300);
            for _ in 0..1 + self.rng.below(5) {
                if self.rng.per_mille(120) {
                    let n = self.rng.below(indent + 2);
                    self.indent(n);
                    self.comment();
                    self.newline();
                }
                if self.rng.per_mille(30) {
                    self.newline();
                }
                self.indent(indent);
                if self.rng.per_mille(4) {
                    self.out.push('\t');
                }
                if sequence {
                    let entry = if self.rng.per_mille(5) {
                        self.rng.pick(&["-\t", "-"])
                    } else {
                        "- "
                    };
                    self.out.push_str(entry);
                } else {
                    if self.rng.per_mille(50) {
                        self.out.push_str("? ");
                    }
                    match self.rng.below(6) {
                        0 => {
                            let key = format!("\"{}\"", self.word(8));
                            self.out.push_str(&key);
                        }
                        1 => {
                            let key = format!("'{}'", self.word(8));
                            self.out.push_str(&key);
                        }
                        _ => {
                            let key = self.word(12);
                            self.out.push_str(&key);
                        }
                    }
                    let value = if self.rng.per_mille(5) {
                        ":"
                    } else {
                        self.rng.pick(&[": ", ":\t", " : "])
                    };
                    self.out.push_str(value);
                }
                match self.rng.below(10) {
                    0 | 1 if depth < 4 => {
                        self.newline();
                        let deeper = indent + 1 + self.rng.below(4);
                        self.block(deeper, depth + 1);
                        continue;
                    }
                    2 | 3 => {
                        let indent = indent + if sequence { 2 } else { 0 };
                        self.block_scalar(indent);
                        continue;
                    }
                    _ => self.inline_scalar(),
                }
                if self.rng.per_mille(150) {
                    self.out.push(' ');
                    self.comment();
                }
                self.newline();
            }
        }

        /// A stream of one or more documents, with directives and markers now and then.
        fn stream(&mut self) {
            if self.rng.per_mille(80) {
                self.out.push('\u{feff}');
            }
            for n in 0..1 + self.rng.below(3) {
                let directive = self.rng.per_mille(100);
                if directive {
                    let line = self.rng.pick(&[
                        "%YAML 1.1",
                        "%TAG !e! tag:e,2000:",
                        "%YAML 1.1",
                        "%FOO x",
                    ]);
                    self.out.push_str(line);
                    self.newline();
                }
                if n > 0 || directive || self.rng.per_mille(200) {
                    self.out.push_str("---");
                    if self.rng.per_mille(300) {
                        self.out.push(' ');
                        self.inline_scalar();
                    }
                    self.newline();
                }
                if self.rng.per_mille(100) {
                    self.inline_scalar();
                    self.newline();
                } else {
                    self.block(0, 0);
                }
                if self.rng.per_mille(100) {
                    self.out.push_str("...");
                    self.newline();
                }
            }
        }
    }

    /// `text` with up to a few characters inserted, removed or replaced at random places:
    /// syntax, characters beyond ASCII, refused ones.
    fn corrupt(rng: &mut Rng, text: &str) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(chars.len() + 1);
            let c = match rng.below(10) {
                0 => rng.pick(REFUSED),
                1..=3 => rng.pick(BEYOND_ASCII),
                _ => rng.pick(SYNTAX),
            };
            match rng.below(3) {
                0 => chars.insert(at, c),
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                _ if at < chars.len() => chars[at] = c,
                _ => chars.push(c),
            }
        }
        chars.into_iter().collect()
    }

    /// Generated documents (block and flow collections, block scalars, quoted scalars with
    /// escapes, comments, anchors, tags, directives, long lines across the reader's
    /// refills, tabs, CRLF and the other line breaks, a byte-order mark, characters beyond
    /// ASCII from none to most, refused characters, and corrupted input) scan to the same
    /// tokens, marks and problems however the scanner keeps their text: ASCII bytes,
    /// sparse (one byte per character, the others listed) and widened, and forced sparse
    /// where the density would widen it, each moving over comments and block scalar lines
    /// a stretch at a time; the reference is widened text moved over one character at a
    /// time, as the scanner did before the stretches.
    #[test]
    fn generated_documents_scan_alike_in_every_form() {
        const DOCUMENTS: usize = 20_000;
        const DENSITIES: [usize; 8] = [0, 0, 1, 5, 20, 31, 100, 600];
        const BREAKS: [&[&str]; 5] = [
            &["\n"],
            &["\r\n"],
            &["\n", "\r\n"],
            &["\n", "\r"],
            &["\n", "\r\n", "\u{85}", "\u{2028}", "\u{2029}"],
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut forms = std::collections::BTreeMap::<&str, usize>::new();
        let (mut failed, mut total) = (0, 0);
        for index in 0..DOCUMENTS {
            let mut document = Document {
                rng: Rng(rng.next() | 1),
                wide_per_mille: rng.pick(&DENSITIES),
                breaks: rng.pick(&BREAKS),
                out: String::new(),
            };
            document.stream();
            let mut text = document.out;
            if rng.per_mille(150) {
                text = corrupt(&mut rng, &text);
            }
            if rng.per_mille(10) {
                text.push(rng.pick(REFUSED));
            }
            total += text.len();
            *forms.entry(chosen_form(&text)).or_default() += 1;
            if scan(&text, Layout::Widened).1.is_some() {
                failed += 1;
            }
            assert_scans_alike(&text, &format!("generated document {index}"));
        }
        eprintln!(
            "{DOCUMENTS} generated documents ({total} bytes) scanned alike in every form: kept {forms:?}, {failed} with a problem"
        );
        // The generator reaches every form and both outcomes.
        for form in ["ascii", "sparse", "wide"] {
            assert!(
                forms.get(form).is_some_and(|&n| n >= DOCUMENTS / 20),
                "{forms:?}"
            );
        }
        assert!(
            (DOCUMENTS / 20..=DOCUMENTS * 19 / 20).contains(&failed),
            "{failed}"
        );
    }
}
