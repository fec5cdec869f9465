//! Go's `fmt` formatting of template values: `Sprint`, `Sprintln` and `Sprintf` with Go's
//! verbs, flags, widths, precisions, argument indexes and error notations (`%!d(string=x)`,
//! `%!v(MISSING)`, `%!(EXTRA ...)`), plus `strconv.Quote` and Go's float layouts.
//!
//! The printer mirrors the structure of Go's `fmt` package (a flag set, a byte buffer, one
//! routine per kind of operand) so that corner cases such as zero padding after a sign,
//! element-wise verbs on lists and maps, and `%#g` trailing zeros come out byte-identical.
//! Correctly rounded decimal digits come from Rust's float formatting (exact, ties to even,
//! like Go's `strconv`); only the layout is done here.

use std::rc::Rc;

use crate::value::{Value, shortest_digits};

/// Go's `fmt.Sprint`: operands formatted with `%v`, a space between two operands when
/// neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut p = Printer::new(MAX_PRINT_OUTPUT);
    let mut prev_string = false;
    for (i, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Value::String(_));
        if i > 0 && !is_string && !prev_string {
            p.buf.push(b' ');
        }
        p.print_arg(arg, 'v');
        prev_string = is_string;
    }
    p.finish()
}

/// Go's `fmt.Sprintln`: operands with `%v`, always space-separated, then a newline.
pub fn sprintln(args: &[Value]) -> String {
    let mut p = Printer::new(MAX_PRINT_OUTPUT);
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            p.buf.push(b' ');
        }
        p.print_arg(arg, 'v');
    }
    p.buf.push(b'\n');
    p.finish()
}

/// Go's `fmt.Sprintf` with every verb and flag Go supports for these types, including the
/// `%!v(MISSING)`/`%!(EXTRA ...)` error notations.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut p = Printer::new(MAX_PRINT_OUTPUT);
    p.do_printf(format, args);
    p.finish()
}

/// Go's `strconv.Quote` (what `%q` does for strings).
pub fn quote(s: &str) -> String {
    bytes_to_string(quote_with(s.as_bytes(), b'"', false))
}

/// Go's `strconv.QuoteToASCII` (what `%+q` does for strings).
pub fn quote_to_ascii(s: &str) -> String {
    bytes_to_string(quote_with(s.as_bytes(), b'"', true))
}

/// Go's `strconv.QuoteRune` (what `%q` does for integers).
pub fn quote_rune(c: char) -> String {
    let mut out = vec![b'\''];
    append_escaped_rune(&mut out, c, b'\'', false);
    out.push(b'\'');
    bytes_to_string(out)
}

/// Go's `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII
/// space (Unicode 15.0 tables, as in Go 1.21–1.26).
pub fn is_print(c: char) -> bool {
    let c = c as u32;
    PRINT_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Go's `strconv.CanBackquote`: whether `%#q` may print the string between backquotes.
pub fn can_backquote(s: &[u8]) -> bool {
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\u{feff}' || (c < ' ' && c != '\t') || c == '`' || c == '\u{7f}' {
                return false;
            }
        }
        if !chunk.invalid().is_empty() {
            return false;
        }
    }
    true
}

/// Go's `strconv.FormatFloat(x, fmt, prec, 64)` for the formats `b e E f g G x X`; a
/// negative `prec` asks for the shortest digits that round-trip.
pub fn format_float(x: f64, fmt: char, prec: i32) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    match fmt {
        'b' => format_float_b(x),
        'x' | 'X' => format_float_x(x, fmt, prec),
        'e' | 'E' | 'f' | 'g' | 'G' => format_float_decimal(x, fmt, prec),
        other => format!("%{other}"),
    }
}

/// Width, precision and flags of one verb (Go's `fmtFlags` plus `wid`/`prec`).
#[derive(Clone, Copy, Default)]
struct Flags {
    wid: usize,
    wid_present: bool,
    prec: usize,
    prec_present: bool,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    /// `%+v`: the plus flag moved aside so it does not reach nested numbers.
    plus_v: bool,
    /// `%#v`: Go-syntax output.
    sharp_v: bool,
}

/// Widths and precisions above this are treated as malformed, as Go does.
const TOO_LARGE: usize = 1_000_000;

/// Nesting beyond this prints `...` instead of recursing (Go would overflow its stack on a
/// map that contains itself; we must not).
const MAX_PRINT_DEPTH: usize = 1000;

/// Output beyond this many bytes stops the walk over collections, so that maps sharing
/// each other many times over (or containing themselves twice) cannot make printing take
/// exponential time; the result is then cut short and far above the executor's default
/// output limit, which reports it.
const MAX_PRINT_OUTPUT: usize = 128 << 20;

/// Go's `pp`: output buffer plus the flags of the verb being formatted.
struct Printer {
    buf: Vec<u8>,
    f: Flags,
    reordered: bool,
    good_arg_num: bool,
    /// Output size at which walks over collections stop (see [`MAX_PRINT_OUTPUT`]).
    max_output: usize,
}

/// An operand as Go's reflection sees it: a template value, or a `uint8` element of a
/// `[]byte` reached through `printValue`.
#[derive(Clone, Copy)]
enum Operand<'a> {
    Value(&'a Value),
    /// A map key (a Go `string`).
    Key(&'a str),
    Byte(u8),
}

impl Printer {
    fn new(max_output: usize) -> Self {
        Printer {
            buf: Vec::new(),
            f: Flags::default(),
            reordered: false,
            good_arg_num: false,
            max_output,
        }
    }

    fn finish(self) -> String {
        bytes_to_string(self.buf)
    }

    fn write(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn write_padding(&mut self, n: usize) {
        let pad = if self.f.zero && !self.f.minus {
            b'0'
        } else {
            b' '
        };
        self.buf.extend(std::iter::repeat_n(pad, n));
    }

    /// Go's `pad`/`padString`: left or right padding to the width, counted in runes.
    fn pad(&mut self, b: &[u8]) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.buf.extend_from_slice(b);
            return;
        }
        let width = self.f.wid.saturating_sub(rune_count(b));
        if self.f.minus {
            self.buf.extend_from_slice(b);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.buf.extend_from_slice(b);
        }
    }

    fn pad_str(&mut self, s: &str) {
        self.pad(s.as_bytes());
    }

    /// Go's `fmtS`/`fmtBs`: truncated to the precision, then padded.
    fn fmt_s(&mut self, b: &[u8]) {
        let b = if self.f.prec_present {
            truncate_runes(b, self.f.prec)
        } else {
            b
        };
        self.pad(b);
    }

    fn fmt_boolean(&mut self, v: bool) {
        self.pad_str(if v { "true" } else { "false" });
    }

    /// Go's `fmtInteger`: `u` is the two's-complement bits when `signed`.
    fn fmt_integer(&mut self, u: u64, base: u32, signed: bool, verb: char, upper: bool) {
        let negative = signed && (u as i64) < 0;
        let mut u = if negative { u.wrapping_neg() } else { u };
        let digits: &[u8; 17] = if upper {
            b"0123456789ABCDEFX"
        } else {
            b"0123456789abcdefx"
        };
        let mut prec = 0usize;
        if self.f.prec_present {
            prec = self.f.prec;
            // Precision 0 and value 0 print nothing but the padding.
            if prec == 0 && u == 0 {
                let old = self.f.zero;
                self.f.zero = false;
                self.write_padding(self.f.wid);
                self.f.zero = old;
                return;
            }
        } else if self.f.zero && !self.f.minus && self.f.wid_present {
            prec = self.f.wid;
            if negative || self.f.plus || self.f.space {
                prec = prec.saturating_sub(1);
            }
        }
        // Digits right to left, then reversed.
        let mut rev: Vec<u8> = Vec::with_capacity(prec.max(24));
        let b = u64::from(base);
        loop {
            rev.push(digits[(u % b) as usize]);
            u /= b;
            if u == 0 {
                break;
            }
        }
        while rev.len() < prec {
            rev.push(b'0');
        }
        if self.f.sharp {
            match base {
                2 => rev.extend([b'b', b'0']),
                8 if rev.last() != Some(&b'0') => rev.push(b'0'),
                16 => rev.extend([digits[16], b'0']),
                _ => {}
            }
        }
        if verb == 'O' {
            rev.extend([b'o', b'0']);
        }
        if negative {
            rev.push(b'-');
        } else if self.f.plus {
            rev.push(b'+');
        } else if self.f.space {
            rev.push(b' ');
        }
        rev.reverse();
        // Zero padding was done above as precision (or is ignored with a precision).
        let old = self.f.zero;
        self.f.zero = false;
        self.pad(&rev);
        self.f.zero = old;
    }

    /// Hexadecimal with or without a leading `0x`, whatever the sharp flag says.
    fn fmt_0x64(&mut self, u: u64, leading_0x: bool) {
        let sharp = self.f.sharp;
        self.f.sharp = leading_0x;
        self.fmt_integer(u, 16, false, 'v', false);
        self.f.sharp = sharp;
    }

    /// Go's `fmtUnicode`: `U+0041`, with `%#U` also `'A'`.
    fn fmt_unicode(&mut self, u: u64) {
        let prec = if self.f.prec_present && self.f.prec > 4 {
            self.f.prec
        } else {
            4
        };
        let mut s = format!("U+{u:0prec$X}");
        if self.f.sharp
            && let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
            && is_print(c)
        {
            s.push_str(" '");
            s.push(c);
            s.push('\'');
        }
        let old = self.f.zero;
        self.f.zero = false;
        self.pad_str(&s);
        self.f.zero = old;
    }

    fn rune_of(u: u64) -> char {
        u32::try_from(u)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('\u{fffd}')
    }

    fn fmt_c(&mut self, u: u64) {
        let mut tmp = [0u8; 4];
        let s = Self::rune_of(u).encode_utf8(&mut tmp);
        self.pad_str(s);
    }

    fn fmt_qc(&mut self, u: u64) {
        let c = Self::rune_of(u);
        let mut out = vec![b'\''];
        append_escaped_rune(&mut out, c, b'\'', self.f.plus);
        out.push(b'\'');
        self.pad(&out);
    }

    /// Go's `fmtSbx`: hex encoding of bytes, `% x` spaced, `%#x` with `0x`.
    fn fmt_sbx(&mut self, b: &[u8], upper: bool) {
        let digits: &[u8; 17] = if upper {
            b"0123456789ABCDEFX"
        } else {
            b"0123456789abcdefx"
        };
        let mut length = b.len();
        if self.f.prec_present && self.f.prec < length {
            length = self.f.prec;
        }
        let mut width = 2 * length;
        if width > 0 {
            if self.f.space {
                if self.f.sharp {
                    width *= 2;
                }
                width += length - 1;
            } else if self.f.sharp {
                width += 2;
            }
        } else {
            if self.f.wid_present {
                self.write_padding(self.f.wid);
            }
            return;
        }
        if self.f.wid_present && self.f.wid > width && !self.f.minus {
            self.write_padding(self.f.wid - width);
        }
        if self.f.sharp {
            self.buf.extend([b'0', digits[16]]);
        }
        for (i, &c) in b[..length].iter().enumerate() {
            if self.f.space && i > 0 {
                self.buf.push(b' ');
                if self.f.sharp {
                    self.buf.extend([b'0', digits[16]]);
                }
            }
            self.buf
                .extend([digits[usize::from(c >> 4)], digits[usize::from(c & 0xf)]]);
        }
        if self.f.wid_present && self.f.wid > width && self.f.minus {
            self.write_padding(self.f.wid - width);
        }
    }

    /// Go's `fmtQ`: `strconv.Quote`, `%+q` ASCII-only, `%#q` backquoted when possible.
    fn fmt_q(&mut self, b: &[u8]) {
        let b = if self.f.prec_present {
            truncate_runes(b, self.f.prec)
        } else {
            b
        };
        if self.f.sharp && can_backquote(b) {
            let mut out = Vec::with_capacity(b.len() + 2);
            out.push(b'`');
            out.extend_from_slice(b);
            out.push(b'`');
            self.pad(&out);
            return;
        }
        let quoted = quote_with(b, b'"', self.f.plus);
        self.pad(&quoted);
    }

    /// Go's `fmtFloat`: sign handling, `%#` decimal point and trailing zeros, zero padding
    /// after the sign, no zero padding for infinities and NaN.
    fn fmt_float(&mut self, v: f64, verb: char, default_prec: i32) {
        let prec = if self.f.prec_present {
            self.f.prec as i32
        } else {
            default_prec
        };
        let formatted = format_float(v, verb, prec);
        let mut num: Vec<u8> = Vec::with_capacity(formatted.len() + 8);
        if !formatted.starts_with(['-', '+']) {
            num.push(b'+');
        }
        num.extend_from_slice(formatted.as_bytes());
        if self.f.space && num[0] == b'+' && !self.f.plus {
            num[0] = b' ';
        }
        if num[1] == b'I' || num[1] == b'N' {
            let old = self.f.zero;
            self.f.zero = false;
            let start = usize::from(num[1] == b'N' && !self.f.space && !self.f.plus);
            self.pad(&num[start..]);
            self.f.zero = old;
            return;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i32 = 0;
            if matches!(verb, 'v' | 'g' | 'G' | 'x') {
                digits = if prec == -1 { 6 } else { prec };
            }
            let mut tail: Vec<u8> = Vec::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut i = 1;
            while i < num.len() {
                match num[i] {
                    b'.' => has_point = true,
                    b'p' | b'P' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    b'e' | b'E' if verb != 'x' && verb != 'X' => {
                        tail.extend_from_slice(&num[i..]);
                        num.truncate(i);
                        break;
                    }
                    c => {
                        if c != b'0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
                i += 1;
            }
            if !has_point {
                if num.len() == 2 && num[1] == b'0' {
                    digits -= 1;
                }
                num.push(b'.');
            }
            while digits > 0 {
                num.push(b'0');
                digits -= 1;
            }
            num.extend_from_slice(&tail);
        }
        if self.f.plus || num[0] != b'+' {
            if self.f.zero && !self.f.minus && self.f.wid_present && self.f.wid > num.len() {
                self.buf.push(num[0]);
                self.write_padding(self.f.wid - num.len());
                self.buf.extend_from_slice(&num[1..]);
                return;
            }
            self.pad(&num);
            return;
        }
        self.pad(&num[1..]);
    }

    /// Go's `badVerb`: `%!verb(type=value)`, or `%!verb(<nil>)`.
    fn bad_verb(&mut self, verb: char, op: Operand<'_>) {
        self.write("%!");
        self.push_char(verb);
        self.buf.push(b'(');
        match op {
            Operand::Value(Value::Nil) => self.write("<nil>"),
            Operand::Value(v) => {
                self.write(&v.type_name());
                self.buf.push(b'=');
                self.print_arg(v, 'v');
            }
            Operand::Key(k) => {
                self.write("string=");
                self.fmt_s(k.as_bytes());
            }
            Operand::Byte(b) => {
                self.write("uint8=");
                self.fmt_integer(u64::from(b), 10, false, 'v', false);
            }
        }
        self.buf.push(b')');
    }

    fn push_char(&mut self, c: char) {
        let mut tmp = [0u8; 4];
        self.buf
            .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }

    /// Go's `pp.fmtInteger`: the verbs an integer accepts.
    fn fmt_integer_verb(&mut self, u: u64, signed: bool, verb: char, op: Operand<'_>) {
        match verb {
            'v' => {
                if self.f.sharp_v && !signed {
                    self.fmt_0x64(u, true);
                } else {
                    self.fmt_integer(u, 10, signed, verb, false);
                }
            }
            'd' => self.fmt_integer(u, 10, signed, verb, false),
            'b' => self.fmt_integer(u, 2, signed, verb, false),
            'o' | 'O' => self.fmt_integer(u, 8, signed, verb, false),
            'x' => self.fmt_integer(u, 16, signed, verb, false),
            'X' => self.fmt_integer(u, 16, signed, verb, true),
            'c' => self.fmt_c(u),
            'q' => self.fmt_qc(u),
            'U' => self.fmt_unicode(u),
            _ => self.bad_verb(verb, op),
        }
    }

    /// Go's `pp.fmtFloat`: the verbs a float64 accepts and their default precisions.
    fn fmt_float_verb(&mut self, x: f64, verb: char, op: Operand<'_>) {
        match verb {
            'v' => self.fmt_float(x, 'g', -1),
            'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float(x, verb, -1),
            'f' | 'e' | 'E' => self.fmt_float(x, verb, 6),
            'F' => self.fmt_float(x, 'f', 6),
            _ => self.bad_verb(verb, op),
        }
    }

    /// Go's `pp.fmtString`.
    fn fmt_string(&mut self, s: &[u8], verb: char, op: Operand<'_>) {
        match verb {
            'v' => {
                if self.f.sharp_v {
                    self.fmt_q(s);
                } else {
                    self.fmt_s(s);
                }
            }
            's' => self.fmt_s(s),
            'x' => self.fmt_sbx(s, false),
            'X' => self.fmt_sbx(s, true),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, op),
        }
    }

    /// Go's `pp.fmtBytes` for a `[]byte` operand (type `[]byte` at top level, `[]uint8`
    /// inside a collection).
    fn fmt_bytes(&mut self, b: &[u8], verb: char, type_string: &str) {
        match verb {
            'v' | 'd' => {
                if self.f.sharp_v {
                    self.write(type_string);
                    self.buf.push(b'{');
                    for (i, &c) in b.iter().enumerate() {
                        if i > 0 {
                            self.write(", ");
                        }
                        self.fmt_0x64(u64::from(c), true);
                    }
                    self.buf.push(b'}');
                } else {
                    self.buf.push(b'[');
                    for (i, &c) in b.iter().enumerate() {
                        if i > 0 {
                            self.buf.push(b' ');
                        }
                        self.fmt_integer(u64::from(c), 10, false, verb, false);
                    }
                    self.buf.push(b']');
                }
            }
            's' => self.fmt_s(b),
            'x' => self.fmt_sbx(b, false),
            'X' => self.fmt_sbx(b, true),
            'q' => self.fmt_q(b),
            _ => self.print_byte_slice(b, verb),
        }
    }

    /// A `[]uint8` printed element by element through reflection.
    fn print_byte_slice(&mut self, b: &[u8], verb: char) {
        if self.f.sharp_v {
            self.write("[]uint8{");
            for (i, &c) in b.iter().enumerate() {
                if i > 0 {
                    self.write(", ");
                }
                self.fmt_integer_verb(u64::from(c), false, verb, Operand::Byte(c));
            }
            self.buf.push(b'}');
        } else {
            self.buf.push(b'[');
            for (i, &c) in b.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b' ');
                }
                self.fmt_integer_verb(u64::from(c), false, verb, Operand::Byte(c));
            }
            self.buf.push(b']');
        }
    }

    /// Go's `printArg`: one top-level operand.
    fn print_arg(&mut self, v: &Value, verb: char) {
        if v.is_nil() {
            match verb {
                'T' | 'v' => self.pad_str("<nil>"),
                _ => self.bad_verb(verb, Operand::Value(v)),
            }
            return;
        }
        match verb {
            'T' => {
                let t = v.type_name();
                self.fmt_s(t.as_bytes());
                return;
            }
            // Go checks `%w` operands for the error interface before looking inside
            // composite values; none of ours is an error.
            'w' if matches!(v, Value::List(_) | Value::Map(_) | Value::Object(_)) => {
                self.bad_verb(verb, Operand::Value(v));
                return;
            }
            'p' => {
                self.fmt_pointer(v, verb);
                return;
            }
            _ => {}
        }
        self.print_value(v, verb, 0);
    }

    /// `%p`: maps and lists print an address (Go's is a heap address, so any value is as
    /// good); everything else is a bad verb.
    fn fmt_pointer(&mut self, v: &Value, verb: char) {
        let addr = match v {
            Value::Map(m) => Rc::as_ptr(m) as *const u8 as usize,
            Value::List(l) => Rc::as_ptr(l) as *const u8 as usize,
            Value::Bytes(b) => b.as_ptr() as usize,
            Value::Object(o) => Rc::as_ptr(o) as *const u8 as usize,
            _ => {
                self.bad_verb(verb, Operand::Value(v));
                return;
            }
        };
        let sharp = self.f.sharp;
        self.fmt_0x64(addr as u64, !sharp);
    }

    /// Go's `printValue`: `depth` 0 is the operand itself, deeper levels are elements.
    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        if self.buf.len() > self.max_output {
            return;
        }
        if depth > MAX_PRINT_DEPTH {
            self.write("...");
            return;
        }
        let op = Operand::Value(v);
        match v {
            Value::Nil => {
                // A nil interface inside a collection.
                if self.f.sharp_v {
                    self.write("interface {}(nil)");
                } else {
                    self.write("<nil>");
                }
            }
            Value::Bool(b) => match verb {
                't' | 'v' => self.fmt_boolean(*b),
                _ => self.bad_verb(verb, op),
            },
            Value::Int(i) | Value::Int64(i) => self.fmt_integer_verb(*i as u64, true, verb, op),
            Value::Float(x) => self.fmt_float_verb(*x, verb, op),
            Value::String(s) => self.fmt_string(s.as_bytes(), verb, op),
            Value::Bytes(b) => {
                if depth == 0 {
                    self.fmt_bytes(b, verb, "[]byte");
                } else if matches!(verb, 's' | 'q' | 'x' | 'X') {
                    self.fmt_bytes(b, verb, "[]uint8");
                } else {
                    self.print_byte_slice(b, verb);
                }
            }
            Value::List(l) => {
                let sharp_v = self.f.sharp_v;
                if sharp_v {
                    self.write("[]interface {}{");
                } else {
                    self.buf.push(b'[');
                }
                for (i, item) in l.iter().enumerate() {
                    if i > 0 {
                        self.write(if sharp_v { ", " } else { " " });
                    }
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(if sharp_v { b'}' } else { b']' });
            }
            Value::Map(m) => {
                let sharp_v = self.f.sharp_v;
                self.write(if sharp_v {
                    "map[string]interface {}{"
                } else {
                    "map["
                });
                // Printing only reads, so the map stays borrowed (shared) while its
                // entries are printed.
                let map = m.borrow();
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.write(if sharp_v { ", " } else { " " });
                    }
                    self.fmt_string(k.as_bytes(), verb, Operand::Key(k));
                    self.buf.push(b':');
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(if sharp_v { b'}' } else { b']' });
            }
            Value::Object(o) => {
                if self.f.sharp_v {
                    let s = format!("({})({})", o.type_name(), o.format());
                    self.write(&s);
                } else if matches!(verb, 'v' | 's' | 'q' | 'x' | 'X') {
                    // Host objects format like a Go Stringer.
                    let s = o.format();
                    self.fmt_string(s.as_bytes(), verb, op);
                } else {
                    self.bad_verb(verb, op);
                }
            }
        }
    }

    /// Go's `doPrintf`.
    fn do_printf(&mut self, format: &str, args: &[Value]) {
        let fb = format.as_bytes();
        let end = fb.len();
        let mut arg_num = 0usize;
        let mut after_index;
        self.reordered = false;
        let mut i = 0usize;
        while i < end {
            self.good_arg_num = true;
            let last = i;
            while i < end && fb[i] != b'%' {
                i += 1;
            }
            if i > last {
                self.buf.extend_from_slice(&fb[last..i]);
            }
            if i >= end {
                break;
            }
            // Skip the '%'.
            i += 1;
            self.f = Flags::default();
            while i < end {
                match fb[i] {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = true,
                    b'+' => self.f.plus = true,
                    b'-' => self.f.minus = true,
                    b' ' => self.f.space = true,
                    _ => break,
                }
                i += 1;
            }
            // Argument index, width.
            (arg_num, i, after_index) = self.arg_number(arg_num, fb, i, args.len());
            if i < end && fb[i] == b'*' {
                i += 1;
                let (n, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                self.f.wid_present = ok;
                if !ok {
                    self.write("%!(BADWIDTH)");
                }
                if n < 0 {
                    self.f.minus = true;
                    self.f.zero = false;
                }
                self.f.wid = n.unsigned_abs() as usize;
                after_index = false;
            } else {
                let (n, ok, next) = parse_num(fb, i, end);
                self.f.wid = n;
                self.f.wid_present = ok;
                i = next;
                if after_index && ok {
                    self.good_arg_num = false;
                }
            }
            // Precision.
            if i + 1 < end && fb[i] == b'.' {
                i += 1;
                if after_index {
                    self.good_arg_num = false;
                }
                (arg_num, i, after_index) = self.arg_number(arg_num, fb, i, args.len());
                if i < end && fb[i] == b'*' {
                    i += 1;
                    let (n, ok, next) = int_from_arg(args, arg_num);
                    arg_num = next;
                    self.f.prec_present = ok && n >= 0;
                    self.f.prec = if n >= 0 { n as usize } else { 0 };
                    if !self.f.prec_present {
                        self.write("%!(BADPREC)");
                    }
                    after_index = false;
                } else {
                    let (n, _, next) = parse_num(fb, i, end);
                    self.f.prec = n;
                    self.f.prec_present = true;
                    i = next;
                }
            }
            if !after_index {
                (arg_num, i, _) = self.arg_number(arg_num, fb, i, args.len());
            }
            if i >= end {
                self.write("%!(NOVERB)");
                break;
            }
            let verb = format
                .get(i..)
                .and_then(|s| s.chars().next())
                .unwrap_or('\u{fffd}');
            i += verb.len_utf8();
            if verb == '%' {
                // A literal percent takes no operand and ignores width and precision.
                self.buf.push(b'%');
            } else if !self.good_arg_num {
                self.write("%!");
                self.push_char(verb);
                self.write("(BADINDEX)");
            } else if arg_num >= args.len() {
                self.write("%!");
                self.push_char(verb);
                self.write("(MISSING)");
            } else {
                // `%w` is `%v` for flags; outside `Errorf` it then fails as a bad verb.
                if verb == 'v' || verb == 'w' {
                    self.f.sharp_v = self.f.sharp;
                    self.f.sharp = false;
                    self.f.plus_v = self.f.plus;
                    self.f.plus = false;
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }
        if !self.reordered && arg_num < args.len() {
            self.f = Flags::default();
            self.write("%!(EXTRA ");
            for (k, arg) in args[arg_num..].iter().enumerate() {
                if k > 0 {
                    self.write(", ");
                }
                if arg.is_nil() {
                    self.write("<nil>");
                } else {
                    self.write(&arg.type_name());
                    self.buf.push(b'=');
                    self.print_arg(arg, 'v');
                }
            }
            self.buf.push(b')');
        }
    }

    /// Go's `argNumber`: an explicit `[n]` index at `i`, if any.
    fn arg_number(
        &mut self,
        arg_num: usize,
        fb: &[u8],
        i: usize,
        num_args: usize,
    ) -> (usize, usize, bool) {
        if i >= fb.len() || fb[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let (index, wid, ok) = parse_arg_number(&fb[i..]);
        if ok && index < num_args {
            return (index, i + wid, true);
        }
        self.good_arg_num = false;
        (arg_num, i + wid, ok)
    }
}

/// Go's `parsenum`: a decimal number at `start`; `(0, false, _)` when absent or too large.
fn parse_num(fb: &[u8], start: usize, end: usize) -> (usize, bool, usize) {
    if start >= end {
        return (0, false, end);
    }
    let mut num = 0usize;
    let mut isnum = false;
    let mut i = start;
    while i < end && fb[i].is_ascii_digit() {
        if num > TOO_LARGE {
            return (0, false, end);
        }
        num = num * 10 + usize::from(fb[i] - b'0');
        isnum = true;
        i += 1;
    }
    (num, isnum, i)
}

/// Go's `parseArgNumber`: `[n]` at the start of `fb`, as a zero-based index, the bytes it
/// takes, and whether it parsed.
fn parse_arg_number(fb: &[u8]) -> (usize, usize, bool) {
    if fb.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..fb.len() {
        if fb[i] == b']' {
            let (width, ok, newi) = parse_num(fb, 1, i);
            if !ok || newi != i || width == 0 {
                // `[0]` is index -1 in Go: parsed, but out of range.
                return (usize::MAX, i + 1, ok && newi == i);
            }
            return (width - 1, i + 1, true);
        }
    }
    (0, 1, false)
}

/// Go's `intFromArg`: an integer operand for `*` width or precision.
fn int_from_arg(args: &[Value], arg_num: usize) -> (i64, bool, usize) {
    let Some(arg) = args.get(arg_num) else {
        return (0, false, arg_num);
    };
    match arg {
        Value::Int(n) | Value::Int64(n) if n.unsigned_abs() <= TOO_LARGE as u64 => {
            (*n, true, arg_num + 1)
        }
        _ => (0, false, arg_num + 1),
    }
}

/// Decimal digits `0.d1d2d3… × 10^dp` (Go's `decimalSlice`); no trailing zeros, empty for 0.
struct Digits {
    d: Vec<u8>,
    dp: i32,
}

impl Digits {
    fn nd(&self) -> i32 {
        self.d.len() as i32
    }

    fn from_raw(mut d: Vec<u8>, mut dp: i32) -> Digits {
        let leading = d.iter().take_while(|&&b| b == b'0').count();
        d.drain(..leading);
        dp -= leading as i32;
        while d.last() == Some(&b'0') {
            d.pop();
        }
        if d.is_empty() {
            dp = 0;
        }
        Digits { d, dp }
    }

    /// `sig` significant digits of `abs`, correctly rounded (ties to even on the exact value).
    fn significant(abs: f64, sig: usize) -> Digits {
        let s = format!("{:.*e}", sig.saturating_sub(1), abs);
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let d: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        let exp: i32 = exp.parse().unwrap_or(0);
        Digits::from_raw(d, exp + 1)
    }

    /// `abs` rounded to `prec` digits after the decimal point.
    fn fixed(abs: f64, prec: usize) -> Digits {
        let s = format!("{abs:.prec$}");
        let (int_part, frac) = s.split_once('.').unwrap_or((&s, ""));
        let mut d: Vec<u8> = int_part.bytes().collect();
        d.extend(frac.bytes());
        Digits::from_raw(d, int_part.len() as i32)
    }

    /// The shortest digits that read back as `abs`, closest to it on ties (as Go).
    fn shortest(abs: f64) -> Digits {
        let (_, s, exp) = shortest_digits(abs);
        Digits::from_raw(s.into_bytes(), exp + 1)
    }
}

fn format_float_decimal(x: f64, fmt: char, mut prec: i32) -> String {
    let neg = x.is_sign_negative();
    let abs = x.abs();
    let shortest = prec < 0;
    let digs = if abs == 0.0 {
        Digits {
            d: Vec::new(),
            dp: 0,
        }
    } else if shortest {
        let digs = Digits::shortest(abs);
        prec = match fmt {
            'e' | 'E' => (digs.nd() - 1).max(0),
            'f' => (digs.nd() - digs.dp).max(0),
            _ => digs.nd(),
        };
        digs
    } else {
        match fmt {
            'e' | 'E' => Digits::significant(abs, prec as usize + 1),
            'f' => Digits::fixed(abs, prec as usize),
            _ => {
                if prec == 0 {
                    prec = 1;
                }
                Digits::significant(abs, prec as usize)
            }
        }
    };
    let mut out = Vec::new();
    match fmt {
        'e' | 'E' => fmt_e(&mut out, neg, &digs, prec, fmt),
        'f' => fmt_f(&mut out, neg, &digs, prec),
        _ => {
            let mut eprec = prec;
            if eprec > digs.nd() && digs.nd() >= digs.dp {
                eprec = digs.nd();
            }
            // %e is used if the exponent from the conversion is less than -4 or greater
            // than or equal to the precision; shortest output uses 6 for that test.
            if shortest {
                eprec = 6;
            }
            let exp = digs.dp - 1;
            let e = if fmt == 'g' { 'e' } else { 'E' };
            if exp < -4 || exp >= eprec {
                if prec > digs.nd() {
                    prec = digs.nd();
                }
                fmt_e(&mut out, neg, &digs, prec - 1, e);
            } else {
                if prec > digs.dp {
                    prec = digs.nd();
                }
                fmt_f(&mut out, neg, &digs, (prec - digs.dp).max(0));
            }
        }
    }
    bytes_to_string(out)
}

/// `-d.ddddde±dd`.
fn fmt_e(out: &mut Vec<u8>, neg: bool, d: &Digits, prec: i32, e: char) {
    if neg {
        out.push(b'-');
    }
    out.push(d.d.first().copied().unwrap_or(b'0'));
    if prec > 0 {
        out.push(b'.');
        for i in 1..=prec as usize {
            out.push(d.d.get(i).copied().unwrap_or(b'0'));
        }
    }
    out.push(e as u8);
    let mut exp = if d.d.is_empty() { 0 } else { d.dp - 1 };
    if exp < 0 {
        out.push(b'-');
        exp = -exp;
    } else {
        out.push(b'+');
    }
    if exp < 10 {
        out.push(b'0');
    }
    out.extend(exp.to_string().bytes());
}

/// `-ddddd.ddddd`.
fn fmt_f(out: &mut Vec<u8>, neg: bool, d: &Digits, prec: i32) {
    if neg {
        out.push(b'-');
    }
    if d.dp > 0 {
        for i in 0..d.dp as usize {
            out.push(d.d.get(i).copied().unwrap_or(b'0'));
        }
    } else {
        out.push(b'0');
    }
    if prec > 0 {
        out.push(b'.');
        for i in 0..prec {
            let j = d.dp + i;
            let c = if j >= 0 {
                d.d.get(j as usize).copied()
            } else {
                None
            };
            out.push(c.unwrap_or(b'0'));
        }
    }
}

/// IEEE 754 fields of a float64 as Go's `genericFtoa` sees them: sign, mantissa with the
/// implicit bit, and the unbiased exponent of the mantissa's top bit.
fn float_parts(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let mut exp = ((bits >> 52) & 0x7ff) as i32;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        exp = 1;
    } else {
        mant |= 1u64 << 52;
    }
    (neg, mant, exp - 1023)
}

/// `-ddddp±ddd`: decimal mantissa, binary exponent.
fn format_float_b(x: f64) -> String {
    let (neg, mant, exp) = float_parts(x);
    let exp = exp - 52;
    let sign = if neg { "-" } else { "" };
    let esign = if exp >= 0 { "+" } else { "" };
    format!("{sign}{mant}p{esign}{exp}")
}

/// `-0x1.hhhhp±dd`: hexadecimal mantissa, binary exponent.
fn format_float_x(x: f64, fmt: char, prec: i32) -> String {
    let (neg, mut mant, mut exp) = float_parts(x);
    if mant == 0 {
        exp = 0;
    }
    mant <<= 60 - 52;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if (0..15).contains(&prec) {
        let shift = (prec * 4) as u32;
        let extra = (mant << shift) & ((1u64 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex: &[u8; 16] = if fmt == 'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = Vec::new();
    if neg {
        out.push(b'-');
    }
    out.extend([b'0', fmt as u8, b'0' + ((mant >> 60) & 1) as u8]);
    mant <<= 4;
    if prec < 0 && mant != 0 {
        out.push(b'.');
        while mant != 0 {
            out.push(hex[((mant >> 60) & 15) as usize]);
            mant <<= 4;
        }
    } else if prec > 0 {
        out.push(b'.');
        for _ in 0..prec {
            out.push(hex[((mant >> 60) & 15) as usize]);
            mant <<= 4;
        }
    }
    out.push(if fmt == 'X' { b'P' } else { b'p' });
    if exp < 0 {
        out.push(b'-');
        exp = -exp;
    } else {
        out.push(b'+');
    }
    if exp < 10 {
        out.push(b'0');
    }
    out.extend(exp.to_string().bytes());
    bytes_to_string(out)
}

fn bytes_to_string(b: Vec<u8>) -> String {
    match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Go's `appendQuotedWith`: `quote`-delimited, escaped; invalid UTF-8 bytes as `\xNN`.
fn quote_with(s: &[u8], quote: u8, ascii_only: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(quote);
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            append_escaped_rune(&mut out, c, quote, ascii_only);
        }
        for &b in chunk.invalid() {
            push_hex_escape(&mut out, 'x', u32::from(b), 2);
        }
    }
    out.push(quote);
    out
}

fn push_hex_escape(out: &mut Vec<u8>, kind: char, v: u32, width: usize) {
    out.push(b'\\');
    out.push(kind as u8);
    out.extend(format!("{v:0width$x}").bytes());
}

/// Go's `appendEscapedRune` (without the graphic-only mode).
fn append_escaped_rune(out: &mut Vec<u8>, c: char, quote: u8, ascii_only: bool) {
    let mut utf8 = [0u8; 4];
    if c as u32 == u32::from(quote) || c == '\\' {
        out.push(b'\\');
        out.push(c as u8);
        return;
    }
    let printable = if ascii_only {
        c.is_ascii() && is_print(c)
    } else {
        is_print(c)
    };
    if printable {
        out.extend(c.encode_utf8(&mut utf8).bytes());
        return;
    }
    let simple = match c {
        '\u{7}' => Some('a'),
        '\u{8}' => Some('b'),
        '\u{c}' => Some('f'),
        '\n' => Some('n'),
        '\r' => Some('r'),
        '\t' => Some('t'),
        '\u{b}' => Some('v'),
        _ => None,
    };
    if let Some(e) = simple {
        out.push(b'\\');
        out.push(e as u8);
    } else if c < ' ' || c == '\u{7f}' {
        push_hex_escape(out, 'x', c as u32, 2);
    } else if (c as u32) < 0x10000 {
        push_hex_escape(out, 'u', c as u32, 4);
    } else {
        push_hex_escape(out, 'U', c as u32, 8);
    }
}

/// Runes counted as Go counts them: each invalid UTF-8 byte is one rune.
fn rune_count(b: &[u8]) -> usize {
    b.utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum()
}

/// The first `n` runes (Go's `truncate`), invalid bytes counting as one rune each.
fn truncate_runes(b: &[u8], n: usize) -> &[u8] {
    let mut seen = 0;
    let mut pos = 0;
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            if seen == n {
                return &b[..pos];
            }
            seen += 1;
            pos += c.len_utf8();
        }
        for _ in chunk.invalid() {
            if seen == n {
                return &b[..pos];
            }
            seen += 1;
            pos += 1;
        }
    }
    b
}

/// Ranges of runes Go's `strconv.IsPrint` accepts (generated from Go 1.26, Unicode 15.0).
#[rustfmt::skip]
const PRINT_RANGES: &[(u32, u32)] = &[
    (0x0020, 0x007e), (0x00a1, 0x00ac), (0x00ae, 0x0377), (0x037a, 0x037f), (0x0384, 0x038a), (0x038c, 0x038c),
    (0x038e, 0x03a1), (0x03a3, 0x052f), (0x0531, 0x0556), (0x0559, 0x058a), (0x058d, 0x058f), (0x0591, 0x05c7),
    (0x05d0, 0x05ea), (0x05ef, 0x05f4), (0x0606, 0x061b), (0x061d, 0x06dc), (0x06de, 0x070d), (0x0710, 0x074a),
    (0x074d, 0x07b1), (0x07c0, 0x07fa), (0x07fd, 0x082d), (0x0830, 0x083e), (0x0840, 0x085b), (0x085e, 0x085e),
    (0x0860, 0x086a), (0x0870, 0x088e), (0x0898, 0x08e1), (0x08e3, 0x0983), (0x0985, 0x098c), (0x098f, 0x0990),
    (0x0993, 0x09a8), (0x09aa, 0x09b0), (0x09b2, 0x09b2), (0x09b6, 0x09b9), (0x09bc, 0x09c4), (0x09c7, 0x09c8),
    (0x09cb, 0x09ce), (0x09d7, 0x09d7), (0x09dc, 0x09dd), (0x09df, 0x09e3), (0x09e6, 0x09fe), (0x0a01, 0x0a03),
    (0x0a05, 0x0a0a), (0x0a0f, 0x0a10), (0x0a13, 0x0a28), (0x0a2a, 0x0a30), (0x0a32, 0x0a33), (0x0a35, 0x0a36),
    (0x0a38, 0x0a39), (0x0a3c, 0x0a3c), (0x0a3e, 0x0a42), (0x0a47, 0x0a48), (0x0a4b, 0x0a4d), (0x0a51, 0x0a51),
    (0x0a59, 0x0a5c), (0x0a5e, 0x0a5e), (0x0a66, 0x0a76), (0x0a81, 0x0a83), (0x0a85, 0x0a8d), (0x0a8f, 0x0a91),
    (0x0a93, 0x0aa8), (0x0aaa, 0x0ab0), (0x0ab2, 0x0ab3), (0x0ab5, 0x0ab9), (0x0abc, 0x0ac5), (0x0ac7, 0x0ac9),
    (0x0acb, 0x0acd), (0x0ad0, 0x0ad0), (0x0ae0, 0x0ae3), (0x0ae6, 0x0af1), (0x0af9, 0x0aff), (0x0b01, 0x0b03),
    (0x0b05, 0x0b0c), (0x0b0f, 0x0b10), (0x0b13, 0x0b28), (0x0b2a, 0x0b30), (0x0b32, 0x0b33), (0x0b35, 0x0b39),
    (0x0b3c, 0x0b44), (0x0b47, 0x0b48), (0x0b4b, 0x0b4d), (0x0b55, 0x0b57), (0x0b5c, 0x0b5d), (0x0b5f, 0x0b63),
    (0x0b66, 0x0b77), (0x0b82, 0x0b83), (0x0b85, 0x0b8a), (0x0b8e, 0x0b90), (0x0b92, 0x0b95), (0x0b99, 0x0b9a),
    (0x0b9c, 0x0b9c), (0x0b9e, 0x0b9f), (0x0ba3, 0x0ba4), (0x0ba8, 0x0baa), (0x0bae, 0x0bb9), (0x0bbe, 0x0bc2),
    (0x0bc6, 0x0bc8), (0x0bca, 0x0bcd), (0x0bd0, 0x0bd0), (0x0bd7, 0x0bd7), (0x0be6, 0x0bfa), (0x0c00, 0x0c0c),
    (0x0c0e, 0x0c10), (0x0c12, 0x0c28), (0x0c2a, 0x0c39), (0x0c3c, 0x0c44), (0x0c46, 0x0c48), (0x0c4a, 0x0c4d),
    (0x0c55, 0x0c56), (0x0c58, 0x0c5a), (0x0c5d, 0x0c5d), (0x0c60, 0x0c63), (0x0c66, 0x0c6f), (0x0c77, 0x0c8c),
    (0x0c8e, 0x0c90), (0x0c92, 0x0ca8), (0x0caa, 0x0cb3), (0x0cb5, 0x0cb9), (0x0cbc, 0x0cc4), (0x0cc6, 0x0cc8),
    (0x0cca, 0x0ccd), (0x0cd5, 0x0cd6), (0x0cdd, 0x0cde), (0x0ce0, 0x0ce3), (0x0ce6, 0x0cef), (0x0cf1, 0x0cf3),
    (0x0d00, 0x0d0c), (0x0d0e, 0x0d10), (0x0d12, 0x0d44), (0x0d46, 0x0d48), (0x0d4a, 0x0d4f), (0x0d54, 0x0d63),
    (0x0d66, 0x0d7f), (0x0d81, 0x0d83), (0x0d85, 0x0d96), (0x0d9a, 0x0db1), (0x0db3, 0x0dbb), (0x0dbd, 0x0dbd),
    (0x0dc0, 0x0dc6), (0x0dca, 0x0dca), (0x0dcf, 0x0dd4), (0x0dd6, 0x0dd6), (0x0dd8, 0x0ddf), (0x0de6, 0x0def),
    (0x0df2, 0x0df4), (0x0e01, 0x0e3a), (0x0e3f, 0x0e5b), (0x0e81, 0x0e82), (0x0e84, 0x0e84), (0x0e86, 0x0e8a),
    (0x0e8c, 0x0ea3), (0x0ea5, 0x0ea5), (0x0ea7, 0x0ebd), (0x0ec0, 0x0ec4), (0x0ec6, 0x0ec6), (0x0ec8, 0x0ece),
    (0x0ed0, 0x0ed9), (0x0edc, 0x0edf), (0x0f00, 0x0f47), (0x0f49, 0x0f6c), (0x0f71, 0x0f97), (0x0f99, 0x0fbc),
    (0x0fbe, 0x0fcc), (0x0fce, 0x0fda), (0x1000, 0x10c5), (0x10c7, 0x10c7), (0x10cd, 0x10cd), (0x10d0, 0x1248),
    (0x124a, 0x124d), (0x1250, 0x1256), (0x1258, 0x1258), (0x125a, 0x125d), (0x1260, 0x1288), (0x128a, 0x128d),
    (0x1290, 0x12b0), (0x12b2, 0x12b5), (0x12b8, 0x12be), (0x12c0, 0x12c0), (0x12c2, 0x12c5), (0x12c8, 0x12d6),
    (0x12d8, 0x1310), (0x1312, 0x1315), (0x1318, 0x135a), (0x135d, 0x137c), (0x1380, 0x1399), (0x13a0, 0x13f5),
    (0x13f8, 0x13fd), (0x1400, 0x167f), (0x1681, 0x169c), (0x16a0, 0x16f8), (0x1700, 0x1715), (0x171f, 0x1736),
    (0x1740, 0x1753), (0x1760, 0x176c), (0x176e, 0x1770), (0x1772, 0x1773), (0x1780, 0x17dd), (0x17e0, 0x17e9),
    (0x17f0, 0x17f9), (0x1800, 0x180d), (0x180f, 0x1819), (0x1820, 0x1878), (0x1880, 0x18aa), (0x18b0, 0x18f5),
    (0x1900, 0x191e), (0x1920, 0x192b), (0x1930, 0x193b), (0x1940, 0x1940), (0x1944, 0x196d), (0x1970, 0x1974),
    (0x1980, 0x19ab), (0x19b0, 0x19c9), (0x19d0, 0x19da), (0x19de, 0x1a1b), (0x1a1e, 0x1a5e), (0x1a60, 0x1a7c),
    (0x1a7f, 0x1a89), (0x1a90, 0x1a99), (0x1aa0, 0x1aad), (0x1ab0, 0x1ace), (0x1b00, 0x1b4c), (0x1b50, 0x1b7e),
    (0x1b80, 0x1bf3), (0x1bfc, 0x1c37), (0x1c3b, 0x1c49), (0x1c4d, 0x1c88), (0x1c90, 0x1cba), (0x1cbd, 0x1cc7),
    (0x1cd0, 0x1cfa), (0x1d00, 0x1f15), (0x1f18, 0x1f1d), (0x1f20, 0x1f45), (0x1f48, 0x1f4d), (0x1f50, 0x1f57),
    (0x1f59, 0x1f59), (0x1f5b, 0x1f5b), (0x1f5d, 0x1f5d), (0x1f5f, 0x1f7d), (0x1f80, 0x1fb4), (0x1fb6, 0x1fc4),
    (0x1fc6, 0x1fd3), (0x1fd6, 0x1fdb), (0x1fdd, 0x1fef), (0x1ff2, 0x1ff4), (0x1ff6, 0x1ffe), (0x2010, 0x2027),
    (0x2030, 0x205e), (0x2070, 0x2071), (0x2074, 0x208e), (0x2090, 0x209c), (0x20a0, 0x20c0), (0x20d0, 0x20f0),
    (0x2100, 0x218b), (0x2190, 0x2426), (0x2440, 0x244a), (0x2460, 0x2b73), (0x2b76, 0x2b95), (0x2b97, 0x2cf3),
    (0x2cf9, 0x2d25), (0x2d27, 0x2d27), (0x2d2d, 0x2d2d), (0x2d30, 0x2d67), (0x2d6f, 0x2d70), (0x2d7f, 0x2d96),
    (0x2da0, 0x2da6), (0x2da8, 0x2dae), (0x2db0, 0x2db6), (0x2db8, 0x2dbe), (0x2dc0, 0x2dc6), (0x2dc8, 0x2dce),
    (0x2dd0, 0x2dd6), (0x2dd8, 0x2dde), (0x2de0, 0x2e5d), (0x2e80, 0x2e99), (0x2e9b, 0x2ef3), (0x2f00, 0x2fd5),
    (0x2ff0, 0x2ffb), (0x3001, 0x303f), (0x3041, 0x3096), (0x3099, 0x30ff), (0x3105, 0x312f), (0x3131, 0x318e),
    (0x3190, 0x31e3), (0x31f0, 0x321e), (0x3220, 0xa48c), (0xa490, 0xa4c6), (0xa4d0, 0xa62b), (0xa640, 0xa6f7),
    (0xa700, 0xa7ca), (0xa7d0, 0xa7d1), (0xa7d3, 0xa7d3), (0xa7d5, 0xa7d9), (0xa7f2, 0xa82c), (0xa830, 0xa839),
    (0xa840, 0xa877), (0xa880, 0xa8c5), (0xa8ce, 0xa8d9), (0xa8e0, 0xa953), (0xa95f, 0xa97c), (0xa980, 0xa9cd),
    (0xa9cf, 0xa9d9), (0xa9de, 0xa9fe), (0xaa00, 0xaa36), (0xaa40, 0xaa4d), (0xaa50, 0xaa59), (0xaa5c, 0xaac2),
    (0xaadb, 0xaaf6), (0xab01, 0xab06), (0xab09, 0xab0e), (0xab11, 0xab16), (0xab20, 0xab26), (0xab28, 0xab2e),
    (0xab30, 0xab6b), (0xab70, 0xabed), (0xabf0, 0xabf9), (0xac00, 0xd7a3), (0xd7b0, 0xd7c6), (0xd7cb, 0xd7fb),
    (0xf900, 0xfa6d), (0xfa70, 0xfad9), (0xfb00, 0xfb06), (0xfb13, 0xfb17), (0xfb1d, 0xfb36), (0xfb38, 0xfb3c),
    (0xfb3e, 0xfb3e), (0xfb40, 0xfb41), (0xfb43, 0xfb44), (0xfb46, 0xfbc2), (0xfbd3, 0xfd8f), (0xfd92, 0xfdc7),
    (0xfdcf, 0xfdcf), (0xfdf0, 0xfe19), (0xfe20, 0xfe52), (0xfe54, 0xfe66), (0xfe68, 0xfe6b), (0xfe70, 0xfe74),
    (0xfe76, 0xfefc), (0xff01, 0xffbe), (0xffc2, 0xffc7), (0xffca, 0xffcf), (0xffd2, 0xffd7), (0xffda, 0xffdc),
    (0xffe0, 0xffe6), (0xffe8, 0xffee), (0xfffc, 0xfffd), (0x10000, 0x1000b), (0x1000d, 0x10026), (0x10028, 0x1003a),
    (0x1003c, 0x1003d), (0x1003f, 0x1004d), (0x10050, 0x1005d), (0x10080, 0x100fa), (0x10100, 0x10102), (0x10107, 0x10133),
    (0x10137, 0x1018e), (0x10190, 0x1019c), (0x101a0, 0x101a0), (0x101d0, 0x101fd), (0x10280, 0x1029c), (0x102a0, 0x102d0),
    (0x102e0, 0x102fb), (0x10300, 0x10323), (0x1032d, 0x1034a), (0x10350, 0x1037a), (0x10380, 0x1039d), (0x1039f, 0x103c3),
    (0x103c8, 0x103d5), (0x10400, 0x1049d), (0x104a0, 0x104a9), (0x104b0, 0x104d3), (0x104d8, 0x104fb), (0x10500, 0x10527),
    (0x10530, 0x10563), (0x1056f, 0x1057a), (0x1057c, 0x1058a), (0x1058c, 0x10592), (0x10594, 0x10595), (0x10597, 0x105a1),
    (0x105a3, 0x105b1), (0x105b3, 0x105b9), (0x105bb, 0x105bc), (0x10600, 0x10736), (0x10740, 0x10755), (0x10760, 0x10767),
    (0x10780, 0x10785), (0x10787, 0x107b0), (0x107b2, 0x107ba), (0x10800, 0x10805), (0x10808, 0x10808), (0x1080a, 0x10835),
    (0x10837, 0x10838), (0x1083c, 0x1083c), (0x1083f, 0x10855), (0x10857, 0x1089e), (0x108a7, 0x108af), (0x108e0, 0x108f2),
    (0x108f4, 0x108f5), (0x108fb, 0x1091b), (0x1091f, 0x10939), (0x1093f, 0x1093f), (0x10980, 0x109b7), (0x109bc, 0x109cf),
    (0x109d2, 0x10a03), (0x10a05, 0x10a06), (0x10a0c, 0x10a13), (0x10a15, 0x10a17), (0x10a19, 0x10a35), (0x10a38, 0x10a3a),
    (0x10a3f, 0x10a48), (0x10a50, 0x10a58), (0x10a60, 0x10a9f), (0x10ac0, 0x10ae6), (0x10aeb, 0x10af6), (0x10b00, 0x10b35),
    (0x10b39, 0x10b55), (0x10b58, 0x10b72), (0x10b78, 0x10b91), (0x10b99, 0x10b9c), (0x10ba9, 0x10baf), (0x10c00, 0x10c48),
    (0x10c80, 0x10cb2), (0x10cc0, 0x10cf2), (0x10cfa, 0x10d27), (0x10d30, 0x10d39), (0x10e60, 0x10e7e), (0x10e80, 0x10ea9),
    (0x10eab, 0x10ead), (0x10eb0, 0x10eb1), (0x10efd, 0x10f27), (0x10f30, 0x10f59), (0x10f70, 0x10f89), (0x10fb0, 0x10fcb),
    (0x10fe0, 0x10ff6), (0x11000, 0x1104d), (0x11052, 0x11075), (0x1107f, 0x110bc), (0x110be, 0x110c2), (0x110d0, 0x110e8),
    (0x110f0, 0x110f9), (0x11100, 0x11134), (0x11136, 0x11147), (0x11150, 0x11176), (0x11180, 0x111df), (0x111e1, 0x111f4),
    (0x11200, 0x11211), (0x11213, 0x11241), (0x11280, 0x11286), (0x11288, 0x11288), (0x1128a, 0x1128d), (0x1128f, 0x1129d),
    (0x1129f, 0x112a9), (0x112b0, 0x112ea), (0x112f0, 0x112f9), (0x11300, 0x11303), (0x11305, 0x1130c), (0x1130f, 0x11310),
    (0x11313, 0x11328), (0x1132a, 0x11330), (0x11332, 0x11333), (0x11335, 0x11339), (0x1133b, 0x11344), (0x11347, 0x11348),
    (0x1134b, 0x1134d), (0x11350, 0x11350), (0x11357, 0x11357), (0x1135d, 0x11363), (0x11366, 0x1136c), (0x11370, 0x11374),
    (0x11400, 0x1145b), (0x1145d, 0x11461), (0x11480, 0x114c7), (0x114d0, 0x114d9), (0x11580, 0x115b5), (0x115b8, 0x115dd),
    (0x11600, 0x11644), (0x11650, 0x11659), (0x11660, 0x1166c), (0x11680, 0x116b9), (0x116c0, 0x116c9), (0x11700, 0x1171a),
    (0x1171d, 0x1172b), (0x11730, 0x11746), (0x11800, 0x1183b), (0x118a0, 0x118f2), (0x118ff, 0x11906), (0x11909, 0x11909),
    (0x1190c, 0x11913), (0x11915, 0x11916), (0x11918, 0x11935), (0x11937, 0x11938), (0x1193b, 0x11946), (0x11950, 0x11959),
    (0x119a0, 0x119a7), (0x119aa, 0x119d7), (0x119da, 0x119e4), (0x11a00, 0x11a47), (0x11a50, 0x11aa2), (0x11ab0, 0x11af8),
    (0x11b00, 0x11b09), (0x11c00, 0x11c08), (0x11c0a, 0x11c36), (0x11c38, 0x11c45), (0x11c50, 0x11c6c), (0x11c70, 0x11c8f),
    (0x11c92, 0x11ca7), (0x11ca9, 0x11cb6), (0x11d00, 0x11d06), (0x11d08, 0x11d09), (0x11d0b, 0x11d36), (0x11d3a, 0x11d3a),
    (0x11d3c, 0x11d3d), (0x11d3f, 0x11d47), (0x11d50, 0x11d59), (0x11d60, 0x11d65), (0x11d67, 0x11d68), (0x11d6a, 0x11d8e),
    (0x11d90, 0x11d91), (0x11d93, 0x11d98), (0x11da0, 0x11da9), (0x11ee0, 0x11ef8), (0x11f00, 0x11f10), (0x11f12, 0x11f3a),
    (0x11f3e, 0x11f59), (0x11fb0, 0x11fb0), (0x11fc0, 0x11ff1), (0x11fff, 0x12399), (0x12400, 0x1246e), (0x12470, 0x12474),
    (0x12480, 0x12543), (0x12f90, 0x12ff2), (0x13000, 0x1342f), (0x13440, 0x13455), (0x14400, 0x14646), (0x16800, 0x16a38),
    (0x16a40, 0x16a5e), (0x16a60, 0x16a69), (0x16a6e, 0x16abe), (0x16ac0, 0x16ac9), (0x16ad0, 0x16aed), (0x16af0, 0x16af5),
    (0x16b00, 0x16b45), (0x16b50, 0x16b59), (0x16b5b, 0x16b61), (0x16b63, 0x16b77), (0x16b7d, 0x16b8f), (0x16e40, 0x16e9a),
    (0x16f00, 0x16f4a), (0x16f4f, 0x16f87), (0x16f8f, 0x16f9f), (0x16fe0, 0x16fe4), (0x16ff0, 0x16ff1), (0x17000, 0x187f7),
    (0x18800, 0x18cd5), (0x18d00, 0x18d08), (0x1aff0, 0x1aff3), (0x1aff5, 0x1affb), (0x1affd, 0x1affe), (0x1b000, 0x1b122),
    (0x1b132, 0x1b132), (0x1b150, 0x1b152), (0x1b155, 0x1b155), (0x1b164, 0x1b167), (0x1b170, 0x1b2fb), (0x1bc00, 0x1bc6a),
    (0x1bc70, 0x1bc7c), (0x1bc80, 0x1bc88), (0x1bc90, 0x1bc99), (0x1bc9c, 0x1bc9f), (0x1cf00, 0x1cf2d), (0x1cf30, 0x1cf46),
    (0x1cf50, 0x1cfc3), (0x1d000, 0x1d0f5), (0x1d100, 0x1d126), (0x1d129, 0x1d172), (0x1d17b, 0x1d1ea), (0x1d200, 0x1d245),
    (0x1d2c0, 0x1d2d3), (0x1d2e0, 0x1d2f3), (0x1d300, 0x1d356), (0x1d360, 0x1d378), (0x1d400, 0x1d454), (0x1d456, 0x1d49c),
    (0x1d49e, 0x1d49f), (0x1d4a2, 0x1d4a2), (0x1d4a5, 0x1d4a6), (0x1d4a9, 0x1d4ac), (0x1d4ae, 0x1d4b9), (0x1d4bb, 0x1d4bb),
    (0x1d4bd, 0x1d4c3), (0x1d4c5, 0x1d505), (0x1d507, 0x1d50a), (0x1d50d, 0x1d514), (0x1d516, 0x1d51c), (0x1d51e, 0x1d539),
    (0x1d53b, 0x1d53e), (0x1d540, 0x1d544), (0x1d546, 0x1d546), (0x1d54a, 0x1d550), (0x1d552, 0x1d6a5), (0x1d6a8, 0x1d7cb),
    (0x1d7ce, 0x1da8b), (0x1da9b, 0x1da9f), (0x1daa1, 0x1daaf), (0x1df00, 0x1df1e), (0x1df25, 0x1df2a), (0x1e000, 0x1e006),
    (0x1e008, 0x1e018), (0x1e01b, 0x1e021), (0x1e023, 0x1e024), (0x1e026, 0x1e02a), (0x1e030, 0x1e06d), (0x1e08f, 0x1e08f),
    (0x1e100, 0x1e12c), (0x1e130, 0x1e13d), (0x1e140, 0x1e149), (0x1e14e, 0x1e14f), (0x1e290, 0x1e2ae), (0x1e2c0, 0x1e2f9),
    (0x1e2ff, 0x1e2ff), (0x1e4d0, 0x1e4f9), (0x1e7e0, 0x1e7e6), (0x1e7e8, 0x1e7eb), (0x1e7ed, 0x1e7ee), (0x1e7f0, 0x1e7fe),
    (0x1e800, 0x1e8c4), (0x1e8c7, 0x1e8d6), (0x1e900, 0x1e94b), (0x1e950, 0x1e959), (0x1e95e, 0x1e95f), (0x1ec71, 0x1ecb4),
    (0x1ed01, 0x1ed3d), (0x1ee00, 0x1ee03), (0x1ee05, 0x1ee1f), (0x1ee21, 0x1ee22), (0x1ee24, 0x1ee24), (0x1ee27, 0x1ee27),
    (0x1ee29, 0x1ee32), (0x1ee34, 0x1ee37), (0x1ee39, 0x1ee39), (0x1ee3b, 0x1ee3b), (0x1ee42, 0x1ee42), (0x1ee47, 0x1ee47),
    (0x1ee49, 0x1ee49), (0x1ee4b, 0x1ee4b), (0x1ee4d, 0x1ee4f), (0x1ee51, 0x1ee52), (0x1ee54, 0x1ee54), (0x1ee57, 0x1ee57),
    (0x1ee59, 0x1ee59), (0x1ee5b, 0x1ee5b), (0x1ee5d, 0x1ee5d), (0x1ee5f, 0x1ee5f), (0x1ee61, 0x1ee62), (0x1ee64, 0x1ee64),
    (0x1ee67, 0x1ee6a), (0x1ee6c, 0x1ee72), (0x1ee74, 0x1ee77), (0x1ee79, 0x1ee7c), (0x1ee7e, 0x1ee7e), (0x1ee80, 0x1ee89),
    (0x1ee8b, 0x1ee9b), (0x1eea1, 0x1eea3), (0x1eea5, 0x1eea9), (0x1eeab, 0x1eebb), (0x1eef0, 0x1eef1), (0x1f000, 0x1f02b),
    (0x1f030, 0x1f093), (0x1f0a0, 0x1f0ae), (0x1f0b1, 0x1f0bf), (0x1f0c1, 0x1f0cf), (0x1f0d1, 0x1f0f5), (0x1f100, 0x1f1ad),
    (0x1f1e6, 0x1f202), (0x1f210, 0x1f23b), (0x1f240, 0x1f248), (0x1f250, 0x1f251), (0x1f260, 0x1f265), (0x1f300, 0x1f6d7),
    (0x1f6dc, 0x1f6ec), (0x1f6f0, 0x1f6fc), (0x1f700, 0x1f776), (0x1f77b, 0x1f7d9), (0x1f7e0, 0x1f7eb), (0x1f7f0, 0x1f7f0),
    (0x1f800, 0x1f80b), (0x1f810, 0x1f847), (0x1f850, 0x1f859), (0x1f860, 0x1f887), (0x1f890, 0x1f8ad), (0x1f8b0, 0x1f8b1),
    (0x1f900, 0x1fa53), (0x1fa60, 0x1fa6d), (0x1fa70, 0x1fa7c), (0x1fa80, 0x1fa88), (0x1fa90, 0x1fabd), (0x1fabf, 0x1fac5),
    (0x1face, 0x1fadb), (0x1fae0, 0x1fae8), (0x1faf0, 0x1faf8), (0x1fb00, 0x1fb92), (0x1fb94, 0x1fbca), (0x1fbf0, 0x1fbf9),
    (0x20000, 0x2a6df), (0x2a700, 0x2b739), (0x2b740, 0x2b81d), (0x2b820, 0x2cea1), (0x2ceb0, 0x2ebe0), (0x2f800, 0x2fa1d),
    (0x30000, 0x3134a), (0x31350, 0x323af), (0xe0100, 0xe01ef),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::{by, l, m, s};

    /// Expected strings are the output of Go 1.26's `fmt.Sprintf` on the same operands.
    #[test]
    fn sprintf_matches_go() {
        let cases: Vec<(&str, Vec<Value>, &str)> = vec![
            ("%d", vec![Value::Int(5)], "5"),
            (
                "%5d|%-5d|%05d",
                vec![Value::Int(-42), Value::Int(42), Value::Int(-42)],
                "  -42|42   |-0042",
            ),
            (
                "%+d % d %x %X %o %O %b %#x %#o %#b",
                vec![
                    Value::Int(7),
                    Value::Int(7),
                    Value::Int(255),
                    Value::Int(255),
                    Value::Int(8),
                    Value::Int(8),
                    Value::Int(5),
                    Value::Int(255),
                    Value::Int(8),
                    Value::Int(5),
                ],
                "+7  7 ff FF 10 0o10 101 0xff 010 0b101",
            ),
            (
                "%.3d|%.0d|%5.0d|%08.3d|%-08d|",
                vec![
                    Value::Int(7),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Int(7),
                    Value::Int(7),
                ],
                "007||     |     007|7       |",
            ),
            (
                "%c%c%c|%q|%+q|%U|%#U|%#U",
                vec![
                    Value::Int(65),
                    Value::Int(19990),
                    Value::Int(-1),
                    Value::Int(9786),
                    Value::Int(9786),
                    Value::Int(9786),
                    Value::Int(9786),
                    Value::Int(10),
                ],
                "A\u{4e16}\u{fffd}|'\u{263a}'|'\\u263a'|U+263A|U+263A '\u{263a}'|U+000A",
            ),
            (
                "%q %q %q",
                vec![Value::Int(39), Value::Int(34), Value::Int(127)],
                "'\\'' '\"' '\\x7f'",
            ),
            (
                "%s|%10s|%-10s|%.2s|%5.1s|%q|%#q|%#q|%+q|%x|% x|%#x|%# X|%X",
                vec![
                    s("hi"),
                    s("hi"),
                    s("hi"),
                    s("h\u{e9}llo"),
                    s("h\u{e9}llo"),
                    s("a\"b\\c\n\u{7}\u{0}\u{e9}\u{2028}\u{1f600}"),
                    s("back"),
                    s("has`tick"),
                    s("h\u{e9}llo\u{263a}"),
                    s("hi"),
                    s("hi"),
                    s("hi"),
                    s("hi"),
                    s(""),
                ],
                "hi|        hi|hi        |h\u{e9}|    h|\"a\\\"b\\\\c\\n\\a\\x00\u{e9}\\u2028\u{1f600}\"|`back`|\"has`tick\"|\"h\\u00e9llo\\u263a\"|6869|68 69|0x6869|0X68 0X69|",
            ),
            (
                "%010s|%-010s|%05q",
                vec![s("abc"), s("abc"), s("a")],
                "0000000abc|abc       |00\"a\"",
            ),
            (
                "%v %v %v %v %v %v %v",
                vec![
                    Value::Float(1e+06_f64),
                    Value::Float(123456.0_f64),
                    Value::Float(1.5_f64),
                    Value::Float(1e-05_f64),
                    Value::Float(1e+21_f64),
                    Value::Float(0.0_f64),
                    Value::Float(f64::INFINITY),
                ],
                "1e+06 123456 1.5 1e-05 1e+21 0 +Inf",
            ),
            (
                "%e|%E|%.2e|%.0e|%f|%.2f|%.0f|%.0f|%.0f|%5.1f|%-8.2f|%08.3f|%+.1f|% .1f|%F",
                vec![
                    Value::Float(1234.5678_f64),
                    Value::Float(1234.5678_f64),
                    Value::Float(1234.5678_f64),
                    Value::Float(2.5_f64),
                    Value::Float(0.3333333333333333_f64),
                    Value::Float(2.675_f64),
                    Value::Float(0.5_f64),
                    Value::Float(1.5_f64),
                    Value::Float(2.5_f64),
                    Value::Float(3.16159_f64),
                    Value::Float(3.16159_f64),
                    Value::Float(-3.16159_f64),
                    Value::Float(2.0_f64),
                    Value::Float(2.0_f64),
                    Value::Float(1e+20_f64),
                ],
                "1.234568e+03|1.234568E+03|1.23e+03|2e+00|0.333333|2.67|0|2|2|  3.2|3.16    |-003.162|+2.0| 2.0|100000000000000000000.000000",
            ),
            (
                "%g|%G|%.3g|%.3g|%.0g|%.10g|%g|%g|%#g|%#.3g|%#g|%#.4g|%#e|%#.0f|%#.0e",
                vec![
                    Value::Float(1e-07_f64),
                    Value::Float(1e-07_f64),
                    Value::Float(1234.5678_f64),
                    Value::Float(1.2345e-05_f64),
                    Value::Float(1234.0_f64),
                    Value::Float(0.3333333333333333_f64),
                    Value::Float(100000.0_f64),
                    Value::Float(1e+06_f64),
                    Value::Float(1.0_f64),
                    Value::Float(1.0_f64),
                    Value::Float(1.23456789e+08_f64),
                    Value::Float(0.0_f64),
                    Value::Float(1.0_f64),
                    Value::Float(3.0_f64),
                    Value::Float(3.0_f64),
                ],
                "1e-07|1E-07|1.23e+03|1.23e-05|1e+03|0.3333333333|100000|1e+06|1.00000|1.00|1.23456789e+08|0.000|1.000000e+00|3.|3.e+00",
            ),
            (
                "%b|%x|%X|%.2x|%#x|%x|%x",
                vec![
                    Value::Float(1.0_f64),
                    Value::Float(1.0_f64),
                    Value::Float(-3.5_f64),
                    Value::Float(0.3333333333333333_f64),
                    Value::Float(1.0_f64),
                    Value::Float(0.0_f64),
                    Value::Float(5e-324_f64),
                ],
                "4503599627370496p-52|0x1p+00|-0X1.CP+01|0x1.55p-02|0x1.0000p+00|0x0p+00|0x1p-1074",
            ),
            (
                "%08.2f|%-08.2f|%+08.2f|%8.2f|%08f|%08v|%+v|% v|%+e",
                vec![
                    Value::Float(-1.5_f64),
                    Value::Float(-1.5_f64),
                    Value::Float(1.5_f64),
                    Value::Float(f64::NAN),
                    Value::Float(f64::NEG_INFINITY),
                    Value::Float(f64::INFINITY),
                    Value::Float(f64::NAN),
                    Value::Float(f64::NAN),
                    Value::Float(1e-300_f64),
                ],
                "-0001.50|-1.50   |+0001.50|     NaN|    -Inf|    +Inf|NaN| NaN|+1.000000e-300",
            ),
            (
                "%v|%.20f|%.17g|%e|%g|%v|%v|%v",
                vec![
                    Value::Float(5e-324_f64),
                    Value::Float(0.1_f64),
                    Value::Float(0.1_f64),
                    Value::Float(1.7976931348623157e+308_f64),
                    Value::Float(1e+100_f64),
                    Value::Float(1e-05_f64),
                    Value::Float(1.23456789e+08_f64),
                    Value::Float(0.000123_f64),
                ],
                "5e-324|0.10000000000000000555|0.10000000000000001|1.797693e+308|1e+100|1e-05|1.23456789e+08|0.000123",
            ),
            (
                "%t|%v|%5t|%d",
                vec![
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Bool(true),
                    Value::Bool(true),
                ],
                "true|false| true|%!d(bool=true)",
            ),
            (
                "%s|%d|%s|%x",
                vec![
                    Value::Int(5),
                    s("hi"),
                    Value::Float(1.5_f64),
                    Value::Bool(true),
                ],
                "%!s(int=5)|%!d(string=hi)|%!s(float64=1.5)|%!x(bool=true)",
            ),
            (
                "%v|%d|%s|%T|%5v|%q",
                vec![
                    Value::Nil,
                    Value::Nil,
                    Value::Nil,
                    Value::Nil,
                    Value::Nil,
                    Value::Nil,
                ],
                "<nil>|%!d(<nil>)|%!s(<nil>)|<nil>|<nil>|%!q(<nil>)",
            ),
            (
                "%v|%s|%d|%x|%q|%#v|%+v|%5v",
                vec![
                    l(vec![s("a"), Value::Int(1)]),
                    l(vec![s("a"), Value::Int(1)]),
                    l(vec![s("a"), Value::Int(1)]),
                    l(vec![s("hi"), Value::Int(255)]),
                    l(vec![s("a"), Value::Int(1)]),
                    l(vec![
                        s("a"),
                        Value::Int(1),
                        Value::Nil,
                        Value::Float(1.0_f64),
                    ]),
                    l(vec![s("a"), Value::Nil]),
                    l(vec![s("a"), Value::Int(1)]),
                ],
                "[a 1]|[a %!s(int=1)]|[%!d(string=a) 1]|[6869 ff]|[\"a\" '\\x01']|[]interface {}{\"a\", 1, interface {}(nil), 1}|[a <nil>]|[    a     1]",
            ),
            (
                "%v|%s|%d|%#v|%x|%v|%#v",
                vec![
                    m(vec![("b", Value::Int(2)), ("a", s("x"))]),
                    m(vec![("a", Value::Int(1))]),
                    m(vec![("a", Value::Int(1))]),
                    m(vec![
                        ("a", Value::Int(1)),
                        ("b", Value::Nil),
                        ("c", l(vec![s("z")])),
                    ]),
                    m(vec![("a", Value::Int(255))]),
                    m(vec![]),
                    m(vec![]),
                ],
                "map[a:x b:2]|map[a:%!s(int=1)]|map[%!d(string=a):1]|map[string]interface {}{\"a\":1, \"b\":interface {}(nil), \"c\":[]interface {}{\"z\"}}|map[61:ff]|map[]|map[string]interface {}{}",
            ),
            (
                "%v|%s|%d|%x|%X|% x|%q|%#v|%t|%c|%o|%5d",
                vec![
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                    by("hi"),
                ],
                "[104 105]|hi|[104 105]|6869|6869|68 69|\"hi\"|[]byte{0x68, 0x69}|[%!t(uint8=104) %!t(uint8=105)]|[h i]|[150 151]|[  104   105]",
            ),
            (
                "%v|%s|%#v|%x|%d",
                vec![
                    l(vec![by("hi")]),
                    l(vec![by("hi")]),
                    l(vec![by("hi")]),
                    l(vec![by("hi")]),
                    l(vec![by("hi")]),
                ],
                "[[104 105]]|[hi]|[]interface {}{[]uint8{0x68, 0x69}}|[6869]|[[104 105]]",
            ),
            (
                "%T %T %T %T %T %T %T %T %T",
                vec![
                    Value::Int(1),
                    Value::Int64(1),
                    Value::Float(1.0_f64),
                    s(""),
                    Value::Bool(true),
                    Value::Nil,
                    by(""),
                    l(vec![]),
                    m(vec![]),
                ],
                "int int64 float64 string bool <nil> []uint8 []interface {} map[string]interface {}",
            ),
            (
                "%#v %#v %#v %#v %#v %#v %#v",
                vec![
                    Value::Int(1),
                    Value::Int64(-1),
                    Value::Float(1.0_f64),
                    Value::Float(1e+06_f64),
                    s("a\"b"),
                    Value::Bool(true),
                    by("a"),
                ],
                "1 -1 1 1e+06 \"a\\\"b\" true []byte{0x61}",
            ),
            ("%d %d", vec![Value::Int(1)], "1 %!d(MISSING)"),
            (
                "%d",
                vec![Value::Int(1), s("x"), Value::Nil, Value::Int(3)],
                "1%!(EXTRA string=x, <nil>, int=3)",
            ),
            ("hi", vec![Value::Int(1)], "hi%!(EXTRA int=1)"),
            ("%", vec![], "%!(NOVERB)"),
            ("%-", vec![Value::Int(1)], "%!(NOVERB)%!(EXTRA int=1)"),
            ("%!", vec![Value::Int(1)], "%!!(int=1)"),
            ("%z", vec![Value::Int(1)], "%!z(int=1)"),
            ("%.", vec![Value::Int(1)], "%!.(int=1)"),
            ("%[2]d %[1]d", vec![Value::Int(1), Value::Int(2)], "2 1"),
            ("%[3]d", vec![Value::Int(1), Value::Int(2)], "%!d(BADINDEX)"),
            ("%[0]d", vec![Value::Int(1)], "%!d(BADINDEX)"),
            ("%[x]d", vec![Value::Int(1)], "%!d(BADINDEX)"),
            (
                "%[2]d %d",
                vec![Value::Int(1), Value::Int(2), Value::Int(3)],
                "2 3",
            ),
            (
                "%[1]d %[1]x %d",
                vec![Value::Int(10), Value::Int(11)],
                "10 a 11",
            ),
            ("%[-1]d", vec![Value::Int(1)], "%!d(BADINDEX)"),
            ("%[1]2d", vec![Value::Int(1)], "%!d(BADINDEX)"),
            ("%[1].2d", vec![Value::Int(1)], "%!d(BADINDEX)"),
            ("%[1]*d", vec![Value::Int(3), Value::Int(1)], "  1"),
            (
                "%*d|%-*d|%*d|%.*f|%.*d|%*.*f",
                vec![
                    Value::Int(5),
                    Value::Int(1),
                    Value::Int(5),
                    Value::Int(1),
                    Value::Int(-5),
                    Value::Int(1),
                    Value::Int(2),
                    Value::Float(3.16159_f64),
                    Value::Int(-1),
                    Value::Int(7),
                    Value::Int(8),
                    Value::Int(2),
                    Value::Float(3.16159_f64),
                ],
                "    1|1    |1    |3.16|%!(BADPREC)7|    3.16",
            ),
            ("%*d", vec![s("x"), Value::Int(1)], "%!(BADWIDTH)1"),
            (
                "%.*d",
                vec![Value::Float(1.0_f64), Value::Int(1)],
                "%!(BADPREC)1",
            ),
            (
                "%*d",
                vec![Value::Int(10000000), Value::Int(1)],
                "%!(BADWIDTH)1",
            ),
            ("%*d", vec![Value::Int(1)], "%!d(MISSING)"),
            (
                "%3c|%-3c|%5q|%08q",
                vec![Value::Int(120), Value::Int(120), Value::Int(120), s("x")],
                "  x|x  |  'x'|00000\"x\"",
            ),
            (
                "%v %d",
                vec![
                    Value::Int64(-9223372036854775808),
                    Value::Int64(-9223372036854775808),
                ],
                "-9223372036854775808 -9223372036854775808",
            ),
            (
                "%x %X %o %b",
                vec![
                    Value::Int(-255),
                    Value::Int(-255),
                    Value::Int(-8),
                    Value::Int(-5),
                ],
                "-ff -FF -10 -101",
            ),
            (
                "%6.2v|%.3v|%10.4v|%-10v|",
                vec![
                    Value::Float(3.16159_f64),
                    s("abcdef"),
                    Value::Float(1234.5678_f64),
                    Value::Float(1.5_f64),
                ],
                "   3.2|abc|      1235|1.5       |",
            ),
            (
                "%v %v",
                vec![
                    m(vec![(
                        "k",
                        m(vec![("n", l(vec![Value::Int(1), Value::Float(2.5_f64)]))]),
                    )]),
                    l(vec![l(vec![]), m(vec![])]),
                ],
                "map[k:map[n:[1 2.5]]] [[] map[]]",
            ),
            (
                "%s %v %q",
                vec![
                    s("\u{65e5}\u{672c}\u{8a9e}"),
                    s("\u{ff}"),
                    s("\u{0}\u{1f}\u{ad}\u{feff}\u{e0001}"),
                ],
                "\u{65e5}\u{672c}\u{8a9e} \u{ff} \"\\x00\\x1f\\u00ad\\ufeff\\U000e0001\"",
            ),
            (
                "%.1q|%5.2s|%.0s|%.5x|%.1x",
                vec![
                    s("\u{65e5}\u{672c}\u{8a9e}"),
                    s("\u{65e5}\u{672c}\u{8a9e}"),
                    s("abc"),
                    s("hi"),
                    by("hi"),
                ],
                "\"\u{65e5}\"|   \u{65e5}\u{672c}||6869|68",
            ),
            (
                "%v|%v",
                vec![
                    Value::Float(9.007199254740992e+15_f64),
                    Value::Float(0.3_f64),
                ],
                "9.007199254740992e+15|0.3",
            ),
            (
                "%.3e|%.1e|%.1f|%.2f|%.1f|%.3f",
                vec![
                    Value::Float(1.0005_f64),
                    Value::Float(0.25_f64),
                    Value::Float(0.25_f64),
                    Value::Float(1.005_f64),
                    Value::Float(0.05_f64),
                    Value::Float(2.0005_f64),
                ],
                "1.000e+00|2.5e-01|0.2|1.00|0.1|2.001",
            ),
            (
                "%+.3v|%#.3v|%+#x",
                vec![
                    Value::Float(3.16159_f64),
                    Value::Float(1.0_f64),
                    Value::Float(1.0_f64),
                ],
                "3.16|1|+0x1.0000p+00",
            ),
            (
                "%U|%#U|%.6U|%-8U|%08U",
                vec![
                    Value::Int(128512),
                    Value::Int(128512),
                    Value::Int(65),
                    Value::Int(65),
                    Value::Int(65),
                ],
                "U+1F600|U+1F600 '\u{1f600}'|U+000041|U+0041  |  U+0041",
            ),
            (
                "%+s|%+v|%+q|%#s",
                vec![
                    s("\u{e9}"),
                    m(vec![("a", s("\u{e9}"))]),
                    l(vec![s("\u{e9}")]),
                    s("x"),
                ],
                "\u{e9}|map[a:\u{e9}]|[\"\\u00e9\"]|x",
            ),
            (
                "%d|%v",
                vec![
                    Value::Float(42.0_f64),
                    l(vec![
                        Value::Float(1.0_f64),
                        Value::Float(1e+06_f64),
                        Value::Float(0.1_f64),
                    ]),
                ],
                "%!d(float64=42)|[1 1e+06 0.1]",
            ),
        ];
        let mut failures = Vec::new();
        for (format, args, want) in &cases {
            let got = sprintf(format, args);
            if got != *want {
                failures.push(format!("{format:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Real Helm outputs from `shared/helm-parity/snippets.yaml` (YAML numbers are float64).
    #[test]
    fn sprintf_matches_helm_snippets() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("%d", Value::Float(42.0), "%!d(float64=42)"),
            ("%d", Value::Int(3), "3"),
            ("%s", s("hello"), "hello"),
            (
                "%v",
                m(vec![
                    ("b", Value::Float(2.0)),
                    ("a", Value::Float(1.0)),
                    ("c", Value::Float(3.0)),
                ]),
                "map[a:1 b:2 c:3]",
            ),
            ("%v", l(vec![s("b"), s("a"), s("c")]), "[b a c]"),
            ("%q", s("hello"), "\"hello\""),
            ("%x", s("hello"), "68656c6c6f"),
            ("%X", Value::Int(255), "FF"),
            ("%o", Value::Int(8), "10"),
            ("%b", Value::Int(5), "101"),
            ("%e", Value::Float(1.5), "1.500000e+00"),
            ("%f", Value::Float(1.5), "1.500000"),
            ("%g", Value::Float(1e6), "1e+06"),
            ("%5.2f", Value::Float(1.5), " 1.50"),
            ("%-6s|", s("hello"), "hello |"),
            ("%05d", Value::Int(42), "00042"),
            ("%t", Value::Bool(true), "true"),
            ("%c", Value::Int(65), "A"),
            ("%U", Value::Int(65), "U+0041"),
            ("%v", Value::Float(1e6), "1e+06"),
            ("%d", Value::Float(1e6), "%!d(float64=1e+06)"),
            ("%s", Value::Float(42.0), "%!s(float64=42)"),
            ("%v", Value::Nil, "<nil>"),
            ("%T", Value::Float(1.5), "float64"),
            ("%T", m(vec![]), "map[string]interface {}"),
            ("%T", l(vec![]), "[]interface {}"),
            ("%08.3f", Value::Float(0.1), "0000.100"),
            ("%+d", Value::Int(5), "+5"),
            ("%x", Value::Int(255), "ff"),
            ("%q", s("a\tb"), "\"a\\tb\""),
            ("%6.1e", Value::Float(1e6), "1.0e+06"),
            ("%.0f", Value::Float(2.5), "2"),
            ("%.0f", Value::Float(3.5), "4"),
            ("%s", l(vec![s("b"), s("a"), s("c")]), "[b a c]"),
            ("%v", Value::Bool(true), "true"),
        ];
        for (format, arg, want) in cases {
            assert_eq!(sprintf(format, &[arg]), want, "{format}");
        }
        assert_eq!(sprintf("%%", &[]), "%");
        // Go 1.26: Sprintf("%w|%#w|%+w|%w|%w|%w|%#w|%w", 5, "a", "b", []any{"a", 1},
        // map[string]any{"a": 1}, []byte("hi"), 1.5, nil)
        let args = [
            Value::Int(5),
            s("a"),
            s("b"),
            l(vec![s("a"), Value::Int(1)]),
            m(vec![("a", Value::Int(1))]),
            by("hi"),
            Value::Float(1.5),
            Value::Nil,
        ];
        assert_eq!(
            sprintf("%w|%#w|%+w|%w|%w|%w|%#w|%w", &args),
            "%!w(int=5)|%!w(string=\"a\")|%!w(string=b)|%!w([]interface {}=[a 1])|\
             %!w(map[string]interface {}=map[a:1])|[%!w(uint8=104) %!w(uint8=105)]|\
             %!w(float64=1.5)|%!w(<nil>)"
        );
        assert_eq!(sprintf("%s-%s", &[s("a"), s("b")]), "a-b");
    }

    #[test]
    fn sprint_and_sprintln_match_helm() {
        // `{{ print 1 2 }}|{{ print "a" "b" }}|{{ print 1 "a" 2 }}|{{ println 1 2 }}`
        assert_eq!(sprint(&[Value::Int(1), Value::Int(2)]), "1 2");
        assert_eq!(sprint(&[s("a"), s("b")]), "ab");
        assert_eq!(sprint(&[Value::Int(1), s("a"), Value::Int(2)]), "1a2");
        assert_eq!(sprintln(&[Value::Int(1), Value::Int(2)]), "1 2\n");
        // Go: Sprint(nil, nil) == "<nil> <nil>"; Sprintln() == "\n".
        assert_eq!(sprint(&[Value::Nil, Value::Nil]), "<nil> <nil>");
        assert_eq!(sprintln(&[]), "\n");
        assert_eq!(sprint(&[]), "");
        assert_eq!(sprint(&[Value::Float(1e6), by("hi")]), "1e+06 [104 105]");
    }

    #[test]
    fn self_referencing_maps_do_not_hang_or_overflow() {
        let map = Value::new_map();
        if let Value::Map(inner) = &map {
            inner.borrow_mut().insert("a".into(), map.clone());
            inner.borrow_mut().insert("b".into(), map.clone());
        }
        // With the real cap this stops after 128 MiB; a small cap shows the mechanism.
        let mut p = Printer::new(1 << 20);
        p.print_arg(&map, 'v');
        let out = p.finish();
        assert!(out.starts_with("map[a:map[a:map[a:"));
        assert!(out.len() <= 2 << 20, "{}", out.len());
        if let Value::Map(inner) = &map {
            inner.borrow_mut().clear();
        }
    }

    #[test]
    fn quote_matches_strconv() {
        // From Go's strconv quote_test.go.
        assert_eq!(
            quote("\u{7}\u{8}\u{c}\r\n\t\u{b}"),
            "\"\\a\\b\\f\\r\\n\\t\\v\""
        );
        assert_eq!(quote("\\"), "\"\\\\\"");
        assert_eq!(quote("abc\u{ff}def"), "\"abc\u{ff}def\"");
        assert_eq!(quote("\u{263a}"), "\"\u{263a}\"");
        assert_eq!(quote("\u{10ffff}"), "\"\\U0010ffff\"");
        assert_eq!(quote("\u{4}"), "\"\\x04\"");
        assert_eq!(
            quote("!\u{a0}!\u{2000}!\u{3000}!"),
            "\"!\\u00a0!\\u2000!\\u3000!\""
        );
        assert_eq!(quote("\u{7f}"), "\"\\x7f\"");
        assert_eq!(quote_to_ascii("\u{263a}"), "\"\\u263a\"");
        assert_eq!(quote_to_ascii("\u{10ffff}"), "\"\\U0010ffff\"");
        assert_eq!(quote_rune('\''), "'\\''");
        assert_eq!(quote_rune('"'), "'\"'");
        assert_eq!(
            String::from_utf8_lossy(&quote_with(b"\xffa\xe2\x82", b'"', false)),
            "\"\\xffa\\xe2\\x82\""
        );
        assert!(can_backquote(b"abc\tdef"));
        assert!(!can_backquote(b"a`b"));
        assert!(!can_backquote(b"a\nb"));
        assert!(!can_backquote("\u{feff}".as_bytes()));
        assert!(
            is_print(' ') && is_print('\u{263a}') && !is_print('\u{a0}') && !is_print('\u{ad}')
        );
    }

    #[test]
    fn format_float_matches_strconv() {
        // From Go's strconv ftoa_test.go.
        for (x, f, prec, want) in [
            (1.0, 'e', 5, "1.00000e+00"),
            (1.0, 'f', 5, "1.00000"),
            (1.0, 'g', 5, "1"),
            (1.0, 'g', -1, "1"),
            (20.0, 'g', -1, "20"),
            (1234567.8, 'g', -1, "1.2345678e+06"),
            (200000.0, 'g', -1, "200000"),
            (2000000.0, 'g', -1, "2e+06"),
            (1e10, 'g', -1, "1e+10"),
            (400.0, 'g', 2, "4e+02"),
            (40.0, 'g', 2, "40"),
            (4.0, 'g', 2, "4"),
            (0.0, 'e', 5, "0.00000e+00"),
            (0.0, 'e', -1, "0e+00"),
            (-1.0, 'g', -1, "-1"),
            (12.0, 'g', 0, "1e+01"),
            (123456700.0, 'e', 3, "1.235e+08"),
            (123456700.0, 'g', 3, "1.23e+08"),
            (1e23, 'e', 17, "9.99999999999999916e+22"),
            (1e23, 'f', -1, "100000000000000000000000"),
            (1e23, 'g', -1, "1e+23"),
            (5e-324, 'e', -1, "5e-324"),
            (0.5, 'f', 0, "0"),
            (1.5, 'f', 0, "2"),
            (-1.5, 'x', -1, "-0x1.8p+00"),
            (1.0, 'x', -1, "0x1p+00"),
            (1.0, 'b', -1, "4503599627370496p-52"),
            (0.0, 'b', -1, "0p-1074"),
            (3.999, 'x', 1, "0x1.0p+02"),
            (f64::NAN, 'g', -1, "NaN"),
            (f64::NEG_INFINITY, 'e', 3, "-Inf"),
        ] {
            assert_eq!(format_float(x, f, prec), want, "{x} {f} {prec}");
        }
    }

    /// Reads a Go `strconv.Quote`/`QuoteToASCII` literal (test data only).
    fn go_unquote(s: &str) -> String {
        let b = s.as_bytes();
        let mut out: Vec<u8> = Vec::new();
        let mut i = 1;
        while i + 1 < b.len() {
            if b[i] != b'\\' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let e = b[i + 1];
            i += 2;
            let hex = |n: usize, i: usize| u32::from_str_radix(&s[i..i + n], 16).unwrap();
            let mut push = |c: u32| out.extend(char::from_u32(c).unwrap().to_string().bytes());
            match e {
                b'n' => push(10),
                b't' => push(9),
                b'r' => push(13),
                b'a' => push(7),
                b'b' => push(8),
                b'f' => push(12),
                b'v' => push(11),
                b'x' => {
                    out.push(hex(2, i) as u8);
                    i += 2;
                }
                b'u' => {
                    push(hex(4, i));
                    i += 4;
                }
                b'U' => {
                    push(hex(8, i));
                    i += 8;
                }
                other => out.push(other),
            }
        }
        String::from_utf8(out).unwrap()
    }

    /// Random operands (seeded) run through Go 1.26: `F` float64 bits with a format, `S`
    /// a string with a format plus its `json.Marshal`, `I` an int64 with a format, `J`
    /// float64 bits with `json.Marshal`. A sample of a 100 000-case differential run.
    const GO_RANDOM_SAMPLES: &str = r##"F	"%.6f"	13856661259744706560	"-57.500000"
F	"%.7f"	10121034438956105653	"-0.0000000"
F	"%-+10.2f|"	4601816650059983104	"+0.45     |"
F	"%#.0e"	5138626914301654395	"3.e+35"
F	"%.24x"	4665568355404690227	"0x1.f6db33333333300000000000p+12"
F	"%.4F"	4628530536369031747	"27.8437"
F	"%#.0f"	4631846663634288640	"47."
F	"%10.3v"	5063072509146384491	"  3.11e+30"
F	"%.12F"	4596495931264749400	"0.203390387149"
F	"%e"	4390491103202061726	"3.348188e-15"
F	"%.21f"	4621625237625013220	"9.655599999999999738520"
F	"%e"	4623367229960880128	"1.275000e+01"
F	"%.22v"	4647895135353307136	"532.5"
F	"%.11v"	4645237307885716767	"371.17"
F	"%.21g"	4662716881949215949	"5452.3000000000001819"
F	"%.0g"	4674763213806501888	"3e+04"
F	"%.6G"	4541046585635709285	"4.01274E-05"
F	"%x"	13256339434776842059	"-0x1.7fa7b17e04f4bp-128"
F	"%.12E"	4632673496378376192	"5.312500000000E+01"
F	"%10.3v"	5110185304423506383	"  4.39e+33"
F	"%.12g"	4995379807370596880	"9.26238945094e+25"
F	"%.22x"	2423461533800825878	"0x1.1dd6cc9058416000000000p-485"
F	"%.3g"	4648047043879800668	"550"
F	"%.0e"	4578284441287046789	"1e-02"
F	"%.23g"	6349726368352469867	"3.0299872355016294374718e+116"
F	"%08.3f"	4606502645472262105	"0000.925"
F	"%.9x"	12818698958133022337	"-0x1.52ac93a30p-225"
F	"%.14e"	4678151908643307520	"5.76190000000000e+04"
F	"%5.0f"	4572038777266215347	"    0"
F	"%.5g"	17108921310981257264	"-1.3722e+219"
F	"%.3x"	4584685605595812079	"0x1.013p-05"
F	"%e"	4633377183820152832	"5.812500e+01"
F	"%#.1g"	4635138583855663940	"8.e+01"
F	"%.23G"	4589481182594224259	"0.066846000000000002638778"
F	"%.11v"	4635690556284993536	"85.125"
F	"%.15x"	17641333575367669121	"-0x1.29b6b43f6358100p+846"
F	"%#.1g"	4495199334679232869	"3.e-08"
F	"%.20F"	14890469937189696691	"-74456831983752078166910777390229454872267419655653186832915036727410688.00000000000000000000"
F	"%G"	13852935320501563966	"-31.51280468450772"
F	"%X"	345904506157173054	"0X1.CE650CFB4893EP-947"
F	"%e"	13867260551836467200	"-2.945000e+02"
F	"%+v"	4609377022898435051	"1.4873"
F	"%0+12.3e"	13865052732487892992	"-002.125e+02"
F	"%.18e"	4762641235560706626	"2.609264014229907990e+10"
F	"%v"	13922442769323463873	"-1.4714712157452556e+06"
F	"%.10e"	18123072422136438635	"-8.6067568015e+286"
F	"%.1E"	5304320572330486119	"4.1E+46"
F	"%.10E"	13947950080993956917	"-7.1609536631E+07"
F	"%.1v"	4636728495261614080	"1e+02"
F	"%.12g"	3579887204470086417	"2.19612822325e-69"
F	"%#.0f"	4633027169686613131	"56."
F	"%#.1g"	4628222673309138944	"3.e+01"
F	"%v"	13869565128208285696	"-425.5"
F	"%f"	13706685891319752750	"-0.000000"
F	"%v"	11043895196181953437	"-5.687530344665436e-187"
F	"%#.1g"	13947022447615004501	"-6.e+07"
F	"%.12g"	4535528634379628016	"1.66269492644e-05"
F	"% .2f"	4593452986459143034	" 0.12"
F	"%.14f"	13866662417510957056	"-260.50000000000000"
F	"%.24g"	4619071021096350043	"6.55919999999999969730879"
F	"%.12G"	1855936223813248015	"1.29512668736E-184"
F	"%-12.4g|"	5455500318648420517	"5.353e+56   |"
F	"%.18E"	4637018766331346944	"1.040000000000000000E+02"
F	"%.21v"	4675587710088380416	"38962"
F	"%g"	15289150940345112555	"-3.2013835150714657e+97"
F	"%.5f"	4649751110980993024	"743.50000"
F	"%.9F"	4449963512862332270	"0.000000000"
F	"%.21G"	4678396687419441152	"59400"
F	"%.11v"	4616865381951043603	"4.6001989095"
F	"%-12.4g|"	13556761906054753718	"-5.23e-19   |"
F	"%e"	6571738917114732500	"2.163430e+131"
F	"%5.0f"	4660295867296015974	" 3673"
F	"%g"	4638672431819522048	"127.5"
F	"%x"	13860285250069856256	"-0x1.9ap+06"
F	"%#.1g"	4607825983186768652	"1."
F	"%.21g"	4651140893678501888	"901.5"
F	"%X"	4626991220286029824	"0X1.66P+04"
F	"%.0g"	14024945473667245207	"-1e+13"
F	"%.0g"	4423091129955066024	"5e-13"
F	"%g"	8140610293833794270	"1.6061560870672701e+236"
F	"%#.3x"	4844939645118489962	"0x1.cafp+52"
F	"%.22F"	13737130437389075708	"-0.0000005987647884749638"
F	"%10.3v"	10850570673876620100	"-6.85e-200"
F	"%-12.4g|"	13686066315584608673	"-2.232e-10  |"
F	"%.6g"	4632758642558831165	"53.73"
F	"%.19v"	13958176145453016851	"-359088174.0582134128"
F	"%.5f"	4643519079074758656	"273.50000"
F	"%.19G"	4636200729680281600	"92.375"
F	"%.23E"	4635409081308282880	"8.11250000000000000000000E+01"
F	"%#.0f"	4595705085221656246	"0."
F	"%.19E"	4673639650361868288	"2.8778000000000000000E+04"
F	"%5.0f"	4625513476658298880	"   17"
F	"%#x"	4651571902236590080	"0x1.db40p+09"
F	"%.15E"	4573612281863149327	"6.038797681929399E-03"
F	"%.21E"	4619004367821864960	"6.500000000000000000000E+00"
F	"%f"	5089018043719498846	"161366929831125145543721743286272.000000"
F	"%.11f"	4618703414776765927	"6.23270000000"
F	"%#g"	4633289222889930752	"57.5000"
F	"%.0g"	14871292573386011545	"-4e+69"
F	"%G"	8473700251180144606	"2.958657417952315E+258"
F	"%+.3e"	5154540670632006719	"+4.089e+36"
F	"%.1F"	11577269463943951461	"-0.0"
F	"%.21G"	8643516252922160952	"6.58335045232604961062E+269"
F	"%.13e"	4167581177578843428	"4.3826463482634e-30"
F	"%.3F"	4591535328427463470	"0.095"
F	"%-+10.2f|"	4633476263011954983	"+58.83    |"
F	"%.0E"	13482072934192965920	"-5E-24"
F	"%.10g"	13873545360300834816	"-791.5"
F	"%.19e"	4624915342332788736	"1.5500000000000000000e+01"
F	"%G"	5018853097887832665	"3.4891421643790886E+27"
F	"%.13e"	4680483972805820416	"8.3638000000000e+04"
F	"%x"	13693688773128497771	"-0x1.9c1630b142a6bp-31"
F	"%.3G"	4531000789973468611	"8.27E-06"
F	"%#.0f"	4651668659259834368	"962."
F	"%#.1g"	5213793295747852109	"4.e+40"
F	"%.22F"	4233717677763422842	"0.0000000000000000000000"
F	"%.10e"	4718361306386698276	"2.8297663320e+07"
F	"%-12.4g|"	4635655371912904704	"84.62       |"
F	"%.11F"	13254597885900525681	"-0.00000000000"
F	"%.9G"	9721757559737198256	"-2.40280979E-275"
F	"%.18x"	4710242006243756465	"0x1.e2426144849b100000p+22"
F	"%e"	10247716763175781799	"-3.479825e-240"
F	"%.15F"	5186056280858813088	"522611784973024996016192146565463277568.000000000000000"
F	"%#g"	6236104748081473412	"7.95411475209881e+108"
F	"%e"	13860214881325678592	"-1.015000e+02"
F	"%#.1g"	13962376578708391849	"-7.e+08"
F	"%#e"	4600010886753392630	"3.519000e-01"
F	"%.8f"	10057636596648236175	"-0.00000000"
F	"%X"	13391271942407873199	"-0X1.75AE1B1E062AFP-98"
F	"%.3x"	9058278102485895025	"0x1.578p+988"
F	"%.14x"	4566267598090604853	"0x1.ea42ff59111350p-10"
F	"%g"	13865826788673847296	"-234.5"
F	"%.16v"	2187234478443489892	"1.848908114675864e-162"
F	"%.5f"	4575924872135718416	"0.00828"
F	"%.4F"	4646205933649322312	"426.2300"
F	"%.8f"	4604232741188074828	"0.67252000"
F	"%.0G"	4703550350283615732	"3E+06"
F	"%.13v"	4209467443517659133	"2.729591720186e-27"
F	"%g"	4626217164100075520	"19.625"
F	"%.20e"	4597757285499856434	"2.38400000000000000799e-01"
F	"%.24F"	4634925296192061440	"74.250000000000000000000000"
F	"%.16E"	13862800932674207744	"-1.4850000000000000E+02"
F	"%.23v"	4618306535059603902	"5.880200000000000315481"
F	"%-+10.2f|"	4622311698798215168	"+10.88    |"
F	"%.0g"	4967952825750730370	"1e+24"
F	"%+v"	17630882439599870107	"-1.0805696720457314e+254"
F	"%.3x"	4600791621509128083	"0x1.94cp-02"
F	"%.12f"	10403279109809066024	"-0.000000000000"
F	"%.3E"	13871231987835994112	"-5.285E+02"
F	"%#f"	17797303254827590785	"-14471106973321390447599417817628651038717880590536871245034814701265509991307441538230305896727731218504668610554603036516536277860402431499437036124986930622863730781750561625355247046155298494108688436676385893412148188571395044658702653234648655220956322343157760.000000"
F	"%.0g"	3882305828228195840	"4e-49"
F	"%E"	10130753562649610037	"-5.288864E-248"
F	"%-+10.2f|"	4622170961309859840	"+10.62    |"
F	"%.20e"	4637616900656857088	"1.12500000000000000000e+02"
F	"%b"	4573349418432652410	"6699396278969466p-60"
F	"%.7E"	11906547561934016926	"-2.5746297E-129"
F	"%.23G"	640207497079951227	"7.1616514664371309190745E-266"
F	"%x"	4644750532097867776	"0x1.578p+08"
F	"%.15g"	4473838773602026308	"1.29618028434787e-09"
F	"%.21f"	4637740045959168000	"114.250000000000000000000"
S	"%x"	"\U000fc01d\U00021b25\u286d\u2468\u0e2b"	"f3bc809df0a1aca5e2a1ade291a8e0b8ab"	"\"\U000fc01d𡬥⡭⑨ห\""
S	"%v"	"\u17e5\u1b55\t\U0001f3a8"	"៥᭕\t🎨"	"\"៥᭕\\t🎨\""
S	"%10q"	"\U0001ffc1"	"\"\\U0001ffc1\""	"\"\U0001ffc1\""
S	"% X"	"\U000e243a\U000216c8\u1766\u05a5\U0002197d"	"F3 A2 90 BA F0 A1 9B 88 E1 9D A6 D6 A5 F0 A1 A5 BD"	"\"\U000e243a𡛈ᝦ֥𡥽\""
S	"%#q"	"\U000f558b\u1f4a\u053c\u2472"	"`\U000f558bὊԼ⑲`"	"\"\U000f558bὊԼ⑲\""
S	"%.2s"	"\u1a40n\u123ai\U000ed959"	"ᩀn"	"\"ᩀnሺi\U000ed959\""
S	"%#q"	"H\U000203dd\U000c03e7\U000d581e"	"`H𠏝\U000c03e7\U000d581e`"	"\"H𠏝\U000c03e7\U000d581e\""
S	"%v"	"x\u0766e"	"xݦe"	"\"xݦe\""
S	"%x"	"c"	"63"	"\"c\""
S	"%.3q"	"pH6\U0001fbb9\u1052"	"\"pH6\""	"\"pH6🮹ၒ\""
S	"%v"	"z\u1a4e"	"zᩎ"	"\"zᩎ\""
S	"%#q"	"\U0001ff9eS"	"`\U0001ff9eS`"	"\"\U0001ff9eS\""
S	"%+q"	""	"\"\""	"\"\""
S	"%-8s|"	"\U0001f257"	"\U0001f257       |"	"\"\U0001f257\""
S	"%.2s"	"\U0001fbf4#\U000212d6|\U0007e1f9"	"🯴#"	"\"🯴#𡋖|\U0007e1f9\""
S	"%-8s|"	"\u157bj\u1261\u1395x"	"ᕻjቡ᎕x   |"	"\"ᕻjቡ᎕x\""
S	"%.2s"	"\U000211a2\u2c81=\U000b5d13\U00058a66"	"𡆢ⲁ"	"\"𡆢ⲁ=\U000b5d13\U00058a66\""
S	"% X"	"\U0002015f\U00021f30>\U0001fe91"	"F0 A0 85 9F F0 A1 BC B0 3E F0 9F BA 91"	"\"𠅟𡼰\\u003e\U0001fe91\""
S	"%+q"	"'\u23e2\u19f8\U00020575"	"\"'\\u23e2\\u19f8\\U00020575\""	"\"'⏢᧸𠕵\""
S	"%+q"	"\U000ec61a)\u15a7"	"\"\\U000ec61a)\\u15a7\""	"\"\U000ec61a)ᖧ\""
S	"%#q"	""	"``"	"\"\""
S	"%-8s|"	"\U0003ae84\U000a7801"	"\U0003ae84\U000a7801      |"	"\"\U0003ae84\U000a7801\""
S	"%.2s"	"_\U0010231c"	"_\U0010231c"	"\"_\U0010231c\""
S	"% X"	"\x18j\x06"	"18 6A 06"	"\"\\u0018j\\u0006\""
S	"%x"	"\U0002ff3d\u2b99\u2771\u2f7d"	"f0afbcbde2ae99e29db1e2bdbd"	"\"\U0002ff3d⮙❱⽽\""
S	"%v"	"\U000337bb"	"\U000337bb"	"\"\U000337bb\""
S	"%.2s"	""	""	"\"\""
S	"% X"	"\U0002a1d5\u1275|"	"F0 AA 87 95 E1 89 B5 7C"	"\"𪇕ት|\""
S	"%#q"	"\U0001f51b\u2195"	"`🔛↕`"	"\"🔛↕\""
S	"%#q"	"\x7f\u07b4"	"\"\\x7f\\u07b4\""	"\"\x7f\u07b4\""
S	"% X"	"\U0002d9ca\U0004ca2c\U00020491"	"F0 AD A7 8A F1 8C A8 AC F0 A0 92 91"	"\"𭧊\U0004ca2c𠒑\""
S	"%x"	""	""	"\"\""
S	"%.3q"	"\U000cc7c4\u03c4\U0007e758"	"\"\\U000cc7c4τ\\U0007e758\""	"\"\U000cc7c4τ\U0007e758\""
S	"%-8s|"	"\u1d87\U0003aada\U00020748L\x1d"	"ᶇ\U0003aada𠝈L\x1d   |"	"\"ᶇ\U0003aada𠝈L\\u001d\""
S	"%q"	"\u1c4e"	"\"ᱎ\""	"\"ᱎ\""
S	"%x"	"]\u0a56\U0001fa40\u10d9"	"5de0a996f09fa980e18399"	"\"]\u0a56🩀კ\""
S	"%10q"	""	"        \"\""	"\"\""
S	"%q"	"\x1d"	"\"\\x1d\""	"\"\\u001d\""
S	"%.3q"	""	"\"\""	"\"\""
S	"%.2s"	"\u1039"	"္"	"\"္\""
S	"%v"	"\U00021b96\u2d69"	"𡮖\u2d69"	"\"𡮖\u2d69\""
S	"%+q"	"\U0001f032\u1861\U00020cbd"	"\"\\U0001f032\\u1861\\U00020cbd\""	"\"🀲ᡡ𠲽\""
S	"%+q"	"b\u1336"	"\"b\\u1336\""	"\"bጶ\""
S	"%x"	"\U000bd081\U0001cf36\u10c1"	"f2bd8281f09cbcb6e18381"	"\"\U000bd081𜼶Ⴡ\""
S	"% X"	""	""	"\"\""
S	"% X"	"\U000215d6\u10b1"	"F0 A1 97 96 E1 82 B1"	"\"𡗖Ⴑ\""
S	"%v"	"\U00034006\x03\U0001f642"	"\U00034006\x03🙂"	"\"\U00034006\\u0003🙂\""
S	"% X"	")\U000a7f03\u06a5\x18\U00020787"	"29 F2 A7 BC 83 DA A5 18 F0 A0 9E 87"	"\")\U000a7f03ڥ\\u0018𠞇\""
S	"% X"	""	""	"\"\""
S	"%x"	""	""	"\"\""
S	"%v"	"\U000eafdb"	"\U000eafdb"	"\"\U000eafdb\""
S	"%x"	"\U000eab6b\u2faf"	"f3aaadabe2beaf"	"\"\U000eab6b⾯\""
S	"% X"	"4\u2335\U000fdb85\U0009b4d4\U000214e3"	"34 E2 8C B5 F3 BD AE 85 F2 9B 93 94 F0 A1 93 A3"	"\"4⌵\U000fdb85\U0009b4d4𡓣\""
S	"%10q"	""	"        \"\""	"\"\""
S	"%#q"	"\U0001f99d\U000e68b1"	"`🦝\U000e68b1`"	"\"🦝\U000e68b1\""
S	"%#q"	""	"``"	"\"\""
S	"%x"	"\uf6a8\x16=\U0003d976"	"ef9aa8163df0bda5b6"	"\"\uf6a8\\u0016=\U0003d976\""
S	"%-8s|"	"\U000def38\u03bc}\u13f6\u108b"	"\U000def38μ}\u13f6ႋ   |"	"\"\U000def38μ}\u13f6ႋ\""
S	"%#q"	"\U000b7555\u00a6\u11b0"	"`\U000b7555¦ᆰ`"	"\"\U000b7555¦ᆰ\""
S	"%-8s|"	"\U00021b23\u16c4b"	"𡬣ᛄb     |"	"\"𡬣ᛄb\""
S	"%v"	"\U0001190e{X\u2765b"	"𑤎{X❥b"	"\"𑤎{X❥b\""
S	"%x"	"\U00020a11h(\u0e5e\x00"	"f0a0a8916828e0b99e00"	"\"𠨑h(\u0e5e\\u0000\""
S	"%x"	"\U00020391\u0586\u04e0"	"f0a08e91d686d3a0"	"\"𠎑ֆӠ\""
S	"%.2s"	""	""	"\"\""
S	"%.3q"	"\U00021536\U00041e5f\U000f6c82\U00103aed\U0003d03c"	"\"𡔶\\U00041e5f\\U000f6c82\""	"\"𡔶\U00041e5f\U000f6c82\U00103aed\U0003d03c\""
S	"%-8s|"	"\u25c6"	"◆       |"	"\"◆\""
S	"%.3q"	""	"\"\""	"\"\""
S	"%#q"	"\U001044bf\u1714\U00021423\U0001fb02"	"`\U001044bf᜔𡐣🬂`"	"\"\U001044bf᜔𡐣🬂\""
S	"%+q"	"\U0005ce3eC"	"\"\\U0005ce3eC\""	"\"\U0005ce3eC\""
S	"%+q"	"\u2627"	"\"\\u2627\""	"\"☧\""
S	"%v"	"M\U0001f42d"	"M🐭"	"\"M🐭\""
S	"%#q"	"\U00021a5f\U00020ff9\U00021bf8\u2cbc"	"`𡩟𠿹𡯸Ⲽ`"	"\"𡩟𠿹𡯸Ⲽ\""
S	"%-8s|"	"\u067f"	"ٿ       |"	"\"ٿ\""
S	"%10q"	"\u0f96\U00021abby\U0002170d"	"    \"ྖ𡪻y𡜍\""	"\"ྖ𡪻y𡜍\""
S	"% X"	"\U000a5410\U00021e23\u74a0\U0009b57fY"	"F2 A5 90 90 F0 A1 B8 A3 E7 92 A0 F2 9B 95 BF 59"	"\"\U000a5410𡸣璠\U0009b57fY\""
S	"%.3q"	"\u0e15\U00020970#\U0001f50a\u1341"	"\"ต𠥰#\""	"\"ต𠥰#🔊ፁ\""
S	"%10q"	"\U00085ba4\u2389\U000217a4\U0005ecc5\U000a0f39"	"\"\\U00085ba4⎉𡞤\\U0005ecc5\\U000a0f39\""	"\"\U00085ba4⎉𡞤\U0005ecc5\U000a0f39\""
S	"%10q"	"\U00021d88"	"       \"𡶈\""	"\"𡶈\""
S	"%q"	"\u19f3\u1525"	"\"᧳ᔥ\""	"\"᧳ᔥ\""
S	"%.3q"	"\u111e"	"\"ᄞ\""	"\"ᄞ\""
S	"% X"	"\U00096909\U00021f0d\U00020042\x7f\U00021150"	"F2 96 A4 89 F0 A1 BC 8D F0 A0 81 82 7F F0 A1 85 90"	"\"\U00096909𡼍𠁂\x7f𡅐\""
S	"%.3q"	"\u0b18\x00R\u0427c"	"\"ଘ\\x00R\""	"\"ଘ\\u0000RЧc\""
S	"%-8s|"	"\u2c39\u24ce\u1b25"	"ⰹⓎᬥ     |"	"\"ⰹⓎᬥ\""
S	"%v"	""	""	"\"\""
S	"%10q"	"\U0001fea0\u1ae4\U0001f7fb\U0002148d\U0009d558"	"\"\\U0001fea0\\u1ae4\\U0001f7fb𡒍\\U0009d558\""	"\"\U0001fea0\u1ae4\U0001f7fb𡒍\U0009d558\""
S	"%x"	"U\u0ecb\U000214e0\x7f\U0008bcbf"	"55e0bb8bf0a193a07ff28bb2bf"	"\"U໋𡓠\x7f\U0008bcbf\""
S	"%x"	"\u1186"	"e18686"	"\"ᆆ\""
S	"%10q"	"\U000dfbc6\U00021044\u146b"	"\"\\U000dfbc6𡁄ᑫ\""	"\"\U000dfbc6𡁄ᑫ\""
S	"%#q"	"\U00020733\u0457\U00081b8e\U0003aa38\u0679"	"`𠜳ї\U00081b8e\U0003aa38ٹ`"	"\"𠜳ї\U00081b8e\U0003aa38ٹ\""
S	"%+q"	"\u28b6\U0001f03a\U000d6170k\U000af163"	"\"\\u28b6\\U0001f03a\\U000d6170k\\U000af163\""	"\"⢶🀺\U000d6170k\U000af163\""
S	"%+q"	"\u0208"	"\"\\u0208\""	"\"Ȉ\""
S	"%.2s"	"\U0001fd8e"	"\U0001fd8e"	"\"\U0001fd8e\""
S	"%10q"	"\u2a1d\U0002003e\U0001f054\U000a91c7+"	"\"⨝𠀾🁔\\U000a91c7+\""	"\"⨝𠀾🁔\U000a91c7+\""
S	"%.2s"	""	""	"\"\""
S	"%v"	""	""	"\"\""
S	"%+q"	"\u01e2{\U00020048"	"\"\\u01e2{\\U00020048\""	"\"Ǣ{𠁈\""
S	"%#q"	"j\U0004aff1"	"`j\U0004aff1`"	"\"j\U0004aff1\""
S	"%x"	"=\t\U00021bc1\U00020465\U0001fcb0"	"3d09f0a1af81f0a091a5f09fb2b0"	"\"=\\t𡯁𠑥\U0001fcb0\""
S	"%v"	".\U0001f028"	".🀨"	"\".🀨\""
S	"%x"	"\U000407d6\U0008d8de"	"f1809f96f28da39e"	"\"\U000407d6\U0008d8de\""
I	"%b"	-2369470528845510452	"-10000011100010000011001110010001011001100101111111011100110100"
I	"%+d"	907	"+907"
I	"%.3d"	886	"886"
I	"%U"	-34	"U+FFFFFFFFFFFFFFDE"
I	"%05d"	1055832	"1055832"
I	"%s"	1041814	"%!s(int64=1041814)"
I	"%o"	3116600304786560058	"255003067337153252072"
I	"%.3d"	220	"220"
I	"%U"	640716	"U+9C6CC"
I	"%.0d"	-564	"-564"
I	"%8.3x"	-874	"    -36a"
I	"%05d"	444788	"444788"
I	"%#08x"	808944	"0x000c57f0"
I	"%-5d|"	-108	"-108 |"
I	"%q"	4949223224949968630	"'�'"
I	"%#o"	699076	"02525304"
I	"%x"	-1840117211378869197	"-198968dab951e3cd"
I	"%O"	5226691075698449603	"0o442107375352555356303"
I	"%x"	774	"306"
I	"%.3d"	68326	"68326"
I	"%#X"	787149	"0XC02CD"
I	"%-#8x|"	482006804287144534	"0x6b06ea27cdb4256|"
I	"%#.3o"	708	"01304"
I	"%c"	5429226638863896737	"�"
I	"%6q"	-430	"   '�'"
I	"%+q"	316743	"'\\U0004d547'"
I	"%.3d"	8469163931627167315	"8469163931627167315"
I	"%d"	4579313846641146341	"4579313846641146341"
I	"%+d"	422112	"+422112"
I	"%#b"	7838167632298627585	"0b110110011000110110000111110111011100101000111111101001000000001"
I	"%+05d"	-8266128167695030727	"-8266128167695030727"
I	"%-#8x|"	221770	"0x3624a |"
I	"%#08x"	745	"0x000002e9"
I	"%6q"	-572	"   '�'"
I	"%#o"	-413	"-0635"
I	"%#o"	-7829845237467072420	"-0662511454113140443644"
I	"%6q"	-7940891833628441309	"   '�'"
I	"%05d"	-563	"-0563"
I	"%05d"	771	"00771"
I	"%b"	901042	"11011011111110110010"
I	"%05d"	184	"00184"
I	"%s"	-894	"%!s(int64=-894)"
I	"%#X"	6869958091602485468	"0X5F56FE7C57C960DC"
I	"%#.3o"	-6826078542102020860	"-0572730644222672041374"
I	"%.3d"	5788217816475687893	"5788217816475687893"
I	"%.3d"	973669	"973669"
I	"%s"	-8519830032910612421	"%!s(int64=-8519830032910612421)"
I	"%O"	812662	"0o3063166"
I	"%08c"	907	"0000000\u038b"
I	"%.0d"	-8077248246142820114	"-8077248246142820114"
I	"%05d"	658186	"658186"
I	"%+05d"	281222	"+281222"
I	"%#U"	-636	"U+FFFFFFFFFFFFFD84"
I	"%6q"	947136	"'\\U000e73c0'"
I	"%-5d|"	-7470276921692749705	"-7470276921692749705|"
I	"%x"	-772	"-304"
I	"%#08x"	-5264388491495911406	"-0x490edd70eb44afee"
I	"%.0d"	-76	"-76"
I	"%s"	562075	"%!s(int64=562075)"
I	"%8.3x"	-773	"    -305"
I	"%-5d|"	-616	"-616 |"
I	"%#U"	528860	"U+811DC"
I	"%#X"	1741293434932438848	"0X182A51273EDE2740"
I	"%d"	-955	"-955"
I	"%x"	-1056631934695865951	"-ea9e92575e17e5f"
I	"%t"	452062226228465415	"%!t(int64=452062226228465415)"
I	"%o"	-211	"-323"
I	"%o"	6939823330315816382	"601171510632734246676"
I	"%x"	-333	"-14d"
I	"%#U"	-755	"U+FFFFFFFFFFFFFD0D"
I	"%05d"	641	"00641"
I	"%-5d|"	445	"445  |"
I	"%-#8x|"	-724	"-0x2d4  |"
I	"%.0d"	-342	"-342"
I	"%+05d"	3910823974724470561	"+3910823974724470561"
I	"%O"	458	"0o712"
I	"%+05d"	459427	"+459427"
I	"%#U"	960	"U+03C0 'π'"
I	"%8.3x"	5432686597800420882	"4b64c7ad55eb6612"
I	"%s"	530043	"%!s(int64=530043)"
I	"%-5d|"	2529783864776180881	"2529783864776180881|"
I	"%U"	533312650821852562	"U+766B507C2755D92"
I	"%+d"	-46	"-46"
I	"%q"	264	"'Ĉ'"
I	"%+05d"	50	"+0050"
I	"%#o"	-2924788721072012759	"-0242267375417244176727"
I	"%x"	-536418700636874230	"-771bdf7565665f6"
I	"%s"	851087	"%!s(int64=851087)"
I	"%O"	674772	"0o2445724"
I	"%x"	-695	"-2b7"
I	"%c"	2031646515862495668	"�"
I	"%+q"	-866	"'\\ufffd'"
I	"%#o"	994637	"03626515"
I	"%q"	171372	"'𩵬'"
I	"%-5d|"	-792	"-792 |"
I	"%q"	-3578373006020878680	"'�'"
I	"%o"	20214	"47366"
I	"%05d"	301145	"301145"
I	"%-5d|"	647	"647  |"
I	"%#U"	-795958948788707171	"U+F4F42F8DA1A7E09D"
J	1751802018851233483	"1.3874589315578081e-191"
J	7939098281888951985	"5.3033741220275595e+222"
J	13689942064119388417	"-4.139209804025537e-10"
J	13781389058463208955	"-0.0005288519553771626"
J	4472370214711808778	"9.92489423752785e-10"
J	4433294264912744663	"2.526710102679274e-12"
J	4947558340030890973	"5.963921798584587e+22"
J	1273819654551941305	"1.594844156519312e-223"
J	4881940329242878247	"2325469593923112400"
J	1878621796775583751	"4.28451620473507e-183"
J	8304851777491366287	"1.4648518195418824e+247"
J	13062577777966214442	"-4.927649376428511e-52"
J	3868765390828068507	"4.440992091314742e-50"
J	1161070019735037447	"4.6616753294859307e-231"
J	1214033159329436533	"1.6563352707200693e-227"
J	4741899886890403782	"1027188125.1350029"
J	8266194058955064055	"3.997941711240059e+244"
J	6710695257963882460	"4.091492478842474e+140"
J	14128289507945821708	"-81937637571727400000"
J	4454322532071748191	"6.160040167954431e-11"
J	4802639771547303447	"12316735151807.045"
J	13801170613438010202	"-0.011527159092148121"
J	147803010585456761	"8.691081648336518e-299"
J	842086044947332786	"2.1612462553242773e-252"
J	13765197063933571161	"-0.00004540233692415579"
J	13880357592402467677	"-2167.8445018412735"
J	10463613597652881026	"-9.380997839093943e-226"
J	4353628211671638866	"1.1793734399493033e-17"
J	14841282844994322659	"-3.8466071699590405e+67"
J	4423845041282824720	"5.870444698319408e-13"
J	4623048850531581485	"12.184444523241007"
J	13965726061535380842	"-1088909312.9261117"
J	6503542078077391210	"5.829274520022658e+126"
J	13470184257722837831	"-8.196291870395135e-25"
J	13968195368627437078	"-1677638001.1795707"
J	16396756817745948757	"-3.500091632161644e+171"
J	14003036611292385587	"-356992762749.26874"
J	15560734893066863401	"-4.638528972067091e+115"
J	5062570269891957867	"2.830449515193366e+30"
J	8330983541564938837	"8.278205501316697e+248"
"##;

    #[test]
    fn random_operands_match_go() {
        let mut failures = Vec::new();
        for line in GO_RANDOM_SAMPLES.lines() {
            let parts: Vec<&str> = line.split('\t').collect();
            let (got, want) = match parts[0] {
                "F" => {
                    let x = f64::from_bits(parts[2].parse().unwrap());
                    let f = go_unquote(parts[1]);
                    (sprintf(&f, &[Value::Float(x)]), go_unquote(parts[3]))
                }
                "S" => {
                    let arg = Value::from(go_unquote(parts[2]));
                    let json = crate::json::to_json(&arg).unwrap();
                    assert_eq!(json, go_unquote(parts[4]), "{line}");
                    (sprintf(&go_unquote(parts[1]), &[arg]), go_unquote(parts[3]))
                }
                "I" => {
                    let n: i64 = parts[2].parse().unwrap();
                    let f = go_unquote(parts[1]);
                    (sprintf(&f, &[Value::Int64(n)]), go_unquote(parts[3]))
                }
                _ => {
                    let x = f64::from_bits(parts[1].parse().unwrap());
                    (
                        crate::json::to_json(&Value::Float(x)).unwrap(),
                        go_unquote(parts[2]),
                    )
                }
            };
            if got != want {
                failures.push(format!("{line}: got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn shortest_ties_go_to_the_even_neighbour() {
        // Go: fmt.Sprint(1094206311311328.25) and json.Marshal of it.
        assert_eq!(
            sprint(&[Value::Float(1_094_206_311_311_328.2)]),
            "1.0942063113113282e+15"
        );
        assert_eq!(
            Value::Float(1_094_206_311_311_328.2).to_go_string(),
            "1.0942063113113282e+15"
        );
        assert_eq!(
            crate::json::to_json(&Value::Float(1_094_206_311_311_328.2)).unwrap(),
            "1094206311311328.2"
        );
        assert_eq!(
            sprintf(
                "%v|%g",
                &[
                    Value::Float(158_688_314_337_701.62),
                    Value::Float(158_688_314_337_701.62)
                ]
            ),
            "1.5868831433770162e+14|1.5868831433770162e+14"
        );
    }
}
