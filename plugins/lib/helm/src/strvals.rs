//! `--set`, `--set-string`, `--set-json`, `--set-file` and `--set-literal` parsing as
//! Helm's `pkg/strvals` does it: `a.b=c,d[0]=e,f={x,y}` into nested maps and lists, `\`
//! escaping the next character, at most 30 levels of names and index 65536, Helm's error
//! texts (including the "unable to parse key: interface conversion: ..." Helm recovers
//! from a failed type assertion), and `--set`'s typing: `true`/`false` bools, `null`
//! nil, integers not starting with `0` as int64 (and `0` itself), everything else a
//! string. `--set-json` values are JSON (numbers float64); `--set-literal` takes the rest
//! of the text verbatim.

use std::rc::Rc;

use capstan_gotmpl::value::{Map, MapRef, Value};

/// Deepest `a.b.c...` name accepted (`MaxNestedNameLevel`).
pub const MAX_NESTED_NAME_LEVEL: usize = 30;
/// Largest list index accepted (`MaxIndex`).
pub const MAX_INDEX: i64 = 65536;
/// Deepest `a[0][0]...` list nesting accepted. Helm has no such limit; this one only
/// keeps absurd input from exhausting the stack.
pub const MAX_LIST_NESTING: usize = 256;

/// A `--set` parse error, worded as Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrvalsError(pub String);

/// Reads a `--set-file` value: given the text after `=`, returns the value to store.
pub type FileReader<'r> = &'r mut dyn FnMut(&str) -> Result<Value, String>;

/// Internal control flow: Go's `io.EOF`, `ErrNotList`, an error, or a panic that Helm's
/// `recover` in the nearest `key` turns into "unable to parse key: ...".
enum Stop {
    Eof,
    NotList,
    Error(String),
    Panic(String),
}

impl Stop {
    fn message(self) -> String {
        match self {
            Stop::Eof => "EOF".into(),
            Stop::NotList => "not a list".into(),
            Stop::Error(m) | Stop::Panic(m) => m,
        }
    }
}

enum Mode<'r> {
    Typed,
    Strings,
    Json,
    Literal,
    File(FileReader<'r>),
}

struct Parser<'r> {
    text: Vec<char>,
    position: usize,
    mode: Mode<'r>,
    list_depth: usize,
}

/// Go's `%q` for a string.
fn go_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The panic Go raises for a failed `x.(T)` on an `interface{}`.
fn conversion_panic(found: &Value, wanted: &str) -> Stop {
    let found = match found {
        Value::Nil => "nil".to_owned(),
        other => other.type_name(),
    };
    Stop::Panic(format!(
        "interface conversion: interface {{}} is {found}, not {wanted}"
    ))
}

const LIST_TYPE: &str = "[]interface {}";
const MAP_TYPE: &str = "map[string]interface {}";

/// Helm's `typedVal`.
fn typed_value(text: &str, strings_only: bool) -> Value {
    if strings_only {
        return Value::from(text);
    }
    if text.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if text == "0" {
        return Value::Int64(0);
    }
    if !text.is_empty()
        && !text.starts_with('0')
        && let Ok(number) = parse_go_int(text)
    {
        return Value::Int64(number);
    }
    Value::from(text)
}

/// Go's `strconv.ParseInt(s, 10, 64)` (an optional sign, then decimal digits).
fn parse_go_int(text: &str) -> Result<i64, ()> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    text.parse::<i64>().map_err(|_| ())
}

/// Go's `strconv.Atoi` with its error text.
fn go_atoi(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(text)
        ));
    }
    text.parse::<i64>().map_err(|_| {
        format!(
            "strconv.Atoi: parsing {}: value out of range",
            go_quote(text)
        )
    })
}

fn json_to_value(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::from(s),
        serde_json::Value::Array(items) => {
            Value::from(items.into_iter().map(json_to_value).collect::<Vec<_>>())
        }
        serde_json::Value::Object(fields) => Value::from(
            fields
                .into_iter()
                .map(|(k, v)| (k, json_to_value(v)))
                .collect::<Map>(),
        ),
    }
}

fn set(data: &MapRef, key: &str, value: Value) {
    if !key.is_empty() {
        data.borrow_mut().insert(key.to_owned(), value);
    }
}

/// Go's `setIndex`.
fn set_index(mut list: Vec<Value>, index: i64, value: Value) -> (Vec<Value>, Option<Stop>) {
    if index < 0 {
        return (
            list,
            Some(Stop::Error(format!("negative {index} index not allowed"))),
        );
    }
    if index > MAX_INDEX {
        return (
            list,
            Some(Stop::Error(format!(
                "index of {index} is greater than maximum supported index of {MAX_INDEX}"
            ))),
        );
    }
    let index = index as usize;
    if list.len() <= index {
        list.resize(index + 1, Value::Nil);
    }
    list[index] = value;
    (list, None)
}

/// What `listItem` gives back: the list (Go may return nil) and an error, or a panic.
type ListOutcome = Result<(Option<Vec<Value>>, Option<Stop>), Stop>;

impl Parser<'_> {
    fn read(&mut self) -> Option<char> {
        let c = self.text.get(self.position).copied();
        if c.is_some() {
            self.position += 1;
        }
        c
    }

    fn unread(&mut self) {
        self.position = self.position.saturating_sub(1);
    }

    fn literal(&self) -> bool {
        matches!(self.mode, Mode::Literal)
    }

    /// Go's `runesUntil`: the runes up to a stop rune (escapes resolved, except for
    /// literals), that rune, or `None` at the end.
    fn runes_until(&mut self, stops: &[char]) -> (String, Option<char>) {
        let mut out = String::new();
        loop {
            match self.read() {
                None => return (out, None),
                Some(c) if stops.contains(&c) => return (out, Some(c)),
                Some('\\') if !self.literal() => match self.read() {
                    None => return (out, None),
                    Some(next) => out.push(next),
                },
                Some(c) => out.push(c),
            }
        }
    }

    fn parse(&mut self, data: &MapRef) -> Result<(), StrvalsError> {
        loop {
            match self.key(data, 0) {
                Ok(()) => continue,
                Err(Stop::Eof) => return Ok(()),
                Err(other) => return Err(StrvalsError(other.message())),
            }
        }
    }

    /// Go's `key`, with its `recover`.
    fn key(&mut self, data: &MapRef, level: usize) -> Result<(), Stop> {
        match self.key_inner(data, level) {
            Err(Stop::Panic(message)) => {
                Err(Stop::Error(format!("unable to parse key: {message}")))
            }
            other => other,
        }
    }

    fn key_inner(&mut self, data: &MapRef, mut level: usize) -> Result<(), Stop> {
        let stops: &[char] = if self.literal() {
            &['=', '[', '.']
        } else {
            &['=', '[', ',', '.']
        };
        let (key, last) = self.runes_until(stops);
        let Some(last) = last else {
            if key.is_empty() {
                return Err(Stop::Eof);
            }
            return Err(Stop::Error(format!("key {} has no value", go_quote(&key))));
        };
        match last {
            '[' => {
                let index = self
                    .key_index()
                    .map_err(|e| Stop::Error(format!("error parsing index: {e}")))?;
                let existing = data.borrow().get(&key).cloned();
                let list = match existing {
                    None => Vec::new(),
                    Some(Value::List(items)) => items.as_ref().clone(),
                    Some(other) => return Err(conversion_panic(&other, LIST_TYPE)),
                };
                let (list, error) = self.list_item(list, index, level)?;
                set(data, &key, list.map_or(Value::Nil, Value::from));
                error.map_or(Ok(()), Err)
            }
            '=' => match self.mode {
                Mode::Literal => {
                    let (rest, _) = self.runes_until(&[]);
                    set(data, &key, Value::from(rest));
                    Ok(())
                }
                Mode::Json => {
                    let value = self.json_value()?;
                    set(data, &key, value);
                    Ok(())
                }
                _ => match self.value_list() {
                    Ok(list) => {
                        set(data, &key, Value::from(list));
                        Ok(())
                    }
                    Err(Stop::Eof) => {
                        set(data, &key, Value::from(""));
                        Err(Stop::Eof)
                    }
                    Err(Stop::NotList) => {
                        let (text, _) = self.runes_until(&[',']);
                        let (value, error) = match self.read_value(&text) {
                            Ok(value) => (value, None),
                            Err(error) => (Value::Nil, Some(error)),
                        };
                        set(data, &key, value);
                        error.map_or(Ok(()), Err)
                    }
                    Err(other) => Err(other),
                },
            },
            ',' => {
                set(data, &key, Value::from(""));
                Err(Stop::Error(format!(
                    "key {} has no value (cannot end with ,)",
                    go_quote(&key)
                )))
            }
            _ => {
                level += 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(Stop::Error(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    )));
                }
                let existing = data.borrow().get(&key).cloned();
                let inner = match existing {
                    None => Rc::new(std::cell::RefCell::new(Map::new())),
                    Some(Value::Map(map)) => map,
                    Some(other) => return Err(conversion_panic(&other, MAP_TYPE)),
                };
                let result = self.key(&inner, level);
                let empty = inner.borrow().is_empty();
                if result.is_ok() && empty {
                    return Err(Stop::Error(format!(
                        "key map {} has no value",
                        go_quote(&key)
                    )));
                }
                if !empty {
                    set(data, &key, Value::Map(inner));
                }
                result
            }
        }
    }

    /// The value of `text` (the runes after `=`) in the current mode.
    fn read_value(&mut self, text: &str) -> Result<Value, Stop> {
        match &mut self.mode {
            Mode::Typed => Ok(typed_value(text, false)),
            Mode::Strings | Mode::Json | Mode::Literal => Ok(typed_value(text, true)),
            Mode::File(reader) => reader(text).map_err(Stop::Error),
        }
    }

    fn key_index(&mut self) -> Result<i64, String> {
        let (text, last) = self.runes_until(&[']']);
        if last.is_none() {
            return Err("EOF".into());
        }
        go_atoi(&text)
    }

    /// Go's `emptyVal`: true at the end or at a `,` (consumed), after spaces.
    fn empty_value(&mut self) -> bool {
        loop {
            match self.read() {
                None | Some(',') => return true,
                Some(c) if c.is_whitespace() => {}
                Some(_) => {
                    self.unread();
                    return false;
                }
            }
        }
    }

    /// A `--set-json` value: empty means null; otherwise one JSON value, then a `,`.
    fn json_value(&mut self) -> Result<Value, Stop> {
        if self.empty_value() {
            return Ok(Value::Nil);
        }
        let rest: String = self.text[self.position..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<serde_json::Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            Some(Err(error)) => return Err(Stop::Error(error.to_string())),
            None => return Err(Stop::Error("unexpected EOF".into())),
        };
        let consumed = stream.byte_offset();
        self.position += rest[..consumed].chars().count();
        self.empty_value();
        Ok(json_to_value(value))
    }

    /// Go's `valList`: `{a,b}` as a list; `NotList` (nothing consumed) otherwise.
    fn value_list(&mut self) -> Result<Vec<Value>, Stop> {
        match self.read() {
            None => return Err(Stop::Eof),
            Some('{') => {}
            Some(_) => {
                self.unread();
                return Err(Stop::NotList);
            }
        }
        let mut list = Vec::new();
        loop {
            let (text, last) = self.runes_until(&[',', '}']);
            match last {
                None => return Err(Stop::Error("list must terminate with '}'".into())),
                Some('}') => {
                    if let Some(next) = self.read()
                        && next != ','
                    {
                        self.unread();
                    }
                    list.push(self.read_value(&text)?);
                    return Ok(list);
                }
                Some(_) => list.push(self.read_value(&text)?),
            }
        }
    }

    /// Go's `listItem`.
    fn list_item(&mut self, list: Vec<Value>, index: i64, level: usize) -> ListOutcome {
        if index < 0 {
            return Ok((
                Some(list),
                Some(Stop::Error(format!("negative {index} index not allowed"))),
            ));
        }
        let (key, last) = self.runes_until(&['[', '.', '=']);
        if !key.is_empty() {
            return Ok((
                Some(list),
                Some(Stop::Error(format!(
                    "unexpected data at end of array index: {}",
                    go_quote(&key)
                ))),
            ));
        }
        let Some(last) = last else {
            return Ok((Some(list), Some(Stop::Eof)));
        };
        let done = |(list, error): (Vec<Value>, Option<Stop>)| Ok((Some(list), error));
        match last {
            '=' => match self.mode {
                Mode::Literal => {
                    let (rest, _) = self.runes_until(&[]);
                    done(set_index(list, index, Value::from(rest)))
                }
                Mode::Json => match self.json_value() {
                    Ok(value) => done(set_index(list, index, value)),
                    Err(error) => Ok((Some(list), Some(error))),
                },
                _ => match self.value_list() {
                    Ok(values) => done(set_index(list, index, Value::from(values))),
                    Err(Stop::Eof) => done(set_index(list, index, Value::from(""))),
                    Err(Stop::NotList) => {
                        let (text, _) = self.runes_until(&[',']);
                        match self.read_value(&text) {
                            Ok(value) => done(set_index(list, index, value)),
                            Err(error) => Ok((Some(list), Some(error))),
                        }
                    }
                    Err(other) => Ok((Some(list), Some(other))),
                },
            },
            '[' => {
                let next_index = match self.key_index() {
                    Ok(i) => i,
                    Err(e) => {
                        return Ok((
                            Some(list),
                            Some(Stop::Error(format!("error parsing index: {e}"))),
                        ));
                    }
                };
                let current = match list.get(index as usize) {
                    None | Some(Value::Nil) => Vec::new(),
                    Some(Value::List(items)) => items.as_ref().clone(),
                    Some(other) => return Err(conversion_panic(other, LIST_TYPE)),
                };
                if self.list_depth >= MAX_LIST_NESTING {
                    return Ok((
                        Some(list),
                        Some(Stop::Error(format!(
                            "list nesting is deeper than the supported {MAX_LIST_NESTING} levels"
                        ))),
                    ));
                }
                self.list_depth += 1;
                let nested = self.list_item(current, next_index, level);
                self.list_depth -= 1;
                let (inner, error) = nested?;
                if let Some(error) = error {
                    return Ok((Some(list), Some(error)));
                }
                done(set_index(
                    list,
                    index,
                    inner.map_or(Value::Nil, Value::from),
                ))
            }
            _ => {
                let mut list = list;
                let inner = match list.get(index as usize) {
                    None => Rc::new(std::cell::RefCell::new(Map::new())),
                    Some(Value::Map(map)) => map.clone(),
                    Some(_) => {
                        let fresh = Rc::new(std::cell::RefCell::new(Map::new()));
                        list[index as usize] = Value::Map(fresh.clone());
                        fresh
                    }
                };
                if let Err(error) = self.key(&inner, level) {
                    return Ok((Some(list), Some(error)));
                }
                done(set_index(list, index, Value::Map(inner)))
            }
        }
    }
}

fn run_into(text: &str, dest: &Value, mode: Mode<'_>) -> Result<(), StrvalsError> {
    match dest {
        Value::Map(map) => run(text, map, mode),
        other => Err(StrvalsError(format!(
            "cannot parse values into a {}",
            other.type_name()
        ))),
    }
}

fn run(text: &str, dest: &MapRef, mode: Mode<'_>) -> Result<(), StrvalsError> {
    Parser {
        text: text.chars().collect(),
        position: 0,
        mode,
        list_depth: 0,
    }
    .parse(dest)
}

fn fresh() -> MapRef {
    Rc::new(std::cell::RefCell::new(Map::new()))
}

/// Helm's `strvals.Parse` (`--set`): a new map.
pub fn parse(text: &str) -> Result<Value, StrvalsError> {
    let dest = fresh();
    run(text, &dest, Mode::Typed)?;
    Ok(Value::Map(dest))
}

/// Helm's `ParseString` (`--set-string`): every value a string.
pub fn parse_string(text: &str) -> Result<Value, StrvalsError> {
    let dest = fresh();
    run(text, &dest, Mode::Strings)?;
    Ok(Value::Map(dest))
}

/// Helm's `ParseLiteral` (`--set-literal`).
pub fn parse_literal(text: &str) -> Result<Value, StrvalsError> {
    let dest = fresh();
    run(text, &dest, Mode::Literal)?;
    Ok(Value::Map(dest))
}

/// Helm's `ParseInto` (`--set` into existing values, a map; changes made before an error
/// stay).
pub fn parse_into(text: &str, dest: &Value) -> Result<(), StrvalsError> {
    run_into(text, dest, Mode::Typed)
}

/// Helm's `ParseIntoString` (`--set-string`).
pub fn parse_into_string(text: &str, dest: &Value) -> Result<(), StrvalsError> {
    run_into(text, dest, Mode::Strings)
}

/// Helm's `ParseJSON` (`--set-json`).
pub fn parse_json_into(text: &str, dest: &Value) -> Result<(), StrvalsError> {
    run_into(text, dest, Mode::Json)
}

/// Helm's `ParseLiteralInto` (`--set-literal`).
pub fn parse_literal_into(text: &str, dest: &Value) -> Result<(), StrvalsError> {
    run_into(text, dest, Mode::Literal)
}

/// Helm's `ParseIntoFile` (`--set-file`): `reader` turns each value (a path) into the
/// value stored.
pub fn parse_into_file(
    text: &str,
    dest: &Value,
    reader: FileReader<'_>,
) -> Result<(), StrvalsError> {
    run_into(text, dest, Mode::File(reader))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Result<String, String> {
        parse(text).map(|v| v.to_go_string()).map_err(|e| e.0)
    }

    #[test]
    fn parse_set_like_helm() {
        // Helm pkg/strvals/parser_test.go TestParseSet (expected maps as Go prints them).
        let ok = [
            (
                "name1=null,f=false,t=true",
                "map[f:false name1:<nil> t:true]",
            ),
            ("name1=value1", "map[name1:value1]"),
            (
                "name1=value1,name2=value2",
                "map[name1:value1 name2:value2]",
            ),
            (
                "name1=value1,name2=value2,",
                "map[name1:value1 name2:value2]",
            ),
            ("name1=,name2=value2", "map[name1: name2:value2]"),
            ("leading_zeros=00009", "map[leading_zeros:00009]"),
            ("zero_int=0", "map[zero_int:0]"),
            ("long_int=1234567890", "map[long_int:1234567890]"),
            ("boolean=true", "map[boolean:true]"),
            ("is_null=null", "map[is_null:<nil>]"),
            (
                "name1=one\\,two,name2=three\\,four",
                "map[name1:one,two name2:three,four]",
            ),
            (
                "name1=one\\=two,name2=three\\=four",
                "map[name1:one=two name2:three=four]",
            ),
            (
                "name1=one two three,name2=three two one",
                "map[name1:one two three name2:three two one]",
            ),
            ("outer.inner=value", "map[outer:map[inner:value]]"),
            (
                "outer.middle.inner=value",
                "map[outer:map[middle:map[inner:value]]]",
            ),
            (
                "outer.inner1=value,outer.inner2=value2",
                "map[outer:map[inner1:value inner2:value2]]",
            ),
            (
                "outer.inner1=value,outer.middle.inner=value",
                "map[outer:map[inner1:value middle:map[inner:value]]]",
            ),
            ("name1.name2=", "map[name1:map[name2:]]"),
            ("name1={value1,value2}", "map[name1:[value1 value2]]"),
            (
                "name1={value1,value2},name2={value1,value2}",
                "map[name1:[value1 value2] name2:[value1 value2]]",
            ),
            ("name1={1021,902}", "map[name1:[1021 902]]"),
            (
                "name1.name2={value1,value2}",
                "map[name1:map[name2:[value1 value2]]]",
            ),
            ("list[0]=foo", "map[list:[foo]]"),
            ("list[0].foo=bar", "map[list:[map[foo:bar]]]"),
            (
                "list[0].foo=bar,list[0].hello=world",
                "map[list:[map[foo:bar hello:world]]]",
            ),
            ("list[0]=foo,list[1]=bar", "map[list:[foo bar]]"),
            ("list[0]=foo,list[1]=bar,", "map[list:[foo bar]]"),
            ("list[0]=foo,list[3]=bar", "map[list:[foo <nil> <nil> bar]]"),
            ("noval[0]", "map[noval:[]]"),
            ("noval[0]=", "map[noval:[]]"),
            ("nested[0][0]=1", "map[nested:[[1]]]"),
            ("nested[1][1]=1", "map[nested:[<nil> [<nil> 1]]]"),
            (
                "name1.name2[0].foo=bar,name1.name2[1].foo=bar",
                "map[name1:map[name2:[map[foo:bar] map[foo:bar]]]]",
            ),
            (
                "name1.name2[1].foo=bar,name1.name2[0].foo=bar",
                "map[name1:map[name2:[map[foo:bar] map[foo:bar]]]]",
            ),
            (
                "name1.name2[1].foo=bar",
                "map[name1:map[name2:[<nil> map[foo:bar]]]]",
            ),
        ];
        for (input, expected) in ok {
            assert_eq!(shown(input).as_deref(), Ok(expected), "{input}");
        }
        let failing = [
            "name1=value1,,,,name2=value2,",
            "name1,name2=",
            "name1,name2=value2",
            "name1,name2=value2\\",
            "name1,name2",
            "name1.name2",
            "name1.name2,name1.name3",
            "name1.=name2",
            "name1.,name2",
            "name1={1021,902",
            "list[0].foo=bar,list[-30].hello=world",
            "list[0]=foo,list[-20]=bar",
            "illegal[0]name.foo=bar",
            "]={}].",
        ];
        for input in failing {
            assert!(shown(input).is_err(), "{input} should fail");
        }
    }

    #[test]
    fn types_follow_typed_val() {
        let parsed = parse("a=1234567890,b=0,c=00009,d=1.5,e=TRUE,f=Null,g=-3").unwrap();
        let Value::Map(map) = parsed else { panic!() };
        let map = map.borrow();
        assert!(matches!(map["a"], Value::Int64(1234567890)));
        assert!(matches!(map["b"], Value::Int64(0)));
        assert_eq!(map["c"].as_str(), Some("00009"));
        assert_eq!(map["d"].as_str(), Some("1.5"));
        assert!(matches!(map["e"], Value::Bool(true)));
        assert!(map["f"].is_nil());
        assert!(matches!(map["g"], Value::Int64(-3)));
    }

    #[test]
    fn noval_with_equals_gives_an_empty_string_item() {
        // TestParseSet: "noval[0]=" gives [""], printed by Go as "[]".
        let Value::Map(map) = parse("noval[0]=").unwrap() else {
            panic!()
        };
        let list = map.borrow()["noval"].clone();
        let Value::List(items) = list else { panic!() };
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_str(), Some(""));
    }

    #[test]
    fn parse_string_keeps_strings() {
        // Helm TestParseSet (testsString).
        for (input, expected) in [
            ("long_int_string=1234567890", "1234567890"),
            ("boolean=true", "true"),
            ("is_null=null", "null"),
            ("zero=0", "0"),
        ] {
            let Value::Map(map) = parse_string(input).unwrap() else {
                panic!()
            };
            let value = map.borrow().values().next().cloned().unwrap();
            assert_eq!(value.as_str(), Some(expected));
        }
    }

    #[test]
    fn parse_into_like_helm() {
        // Helm TestParseInto.
        let dest = fresh();
        let mut outer = Map::new();
        outer.insert("inner1".into(), Value::from("overwrite"));
        outer.insert("inner2".into(), Value::from("value2"));
        dest.borrow_mut().insert("outer".into(), Value::from(outer));
        parse_into(
            "outer.inner1=value1,outer.inner3=value3,outer.inner4=4",
            &Value::Map(dest.clone()),
        )
        .unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[outer:map[inner1:value1 inner2:value2 inner3:value3 inner4:4]]"
        );
        let dest = fresh();
        parse_into("listOuter[0][0].type=listValue", &Value::Map(dest.clone())).unwrap();
        parse_into("listOuter[0][0].status=alive", &Value::Map(dest.clone())).unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[listOuter:[[map[status:alive type:listValue]]]]"
        );
        let dest = fresh();
        parse_into("listOuter[0][0].type=listValue", &Value::Map(dest.clone())).unwrap();
        parse_into("listOuter[1][0].status=alive", &Value::Map(dest.clone())).unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[listOuter:[[map[type:listValue]] [map[status:alive]]]]"
        );
    }

    #[test]
    fn parse_into_string_like_helm() {
        // Helm TestParseIntoString.
        let dest = fresh();
        let mut outer = Map::new();
        outer.insert("inner1".into(), Value::from("overwrite"));
        outer.insert("inner2".into(), Value::from("value2"));
        dest.borrow_mut().insert("outer".into(), Value::from(outer));
        parse_into_string("outer.inner1=1,outer.inner3=3", &Value::Map(dest.clone())).unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[outer:map[inner1:1 inner2:value2 inner3:3]]"
        );
    }

    #[test]
    fn parse_json_like_helm() {
        // Helm TestParseJSON.
        let start = || {
            let dest = fresh();
            let mut outer = Map::new();
            outer.insert("inner1".into(), Value::from("overwrite"));
            outer.insert("inner2".into(), Value::from("value2"));
            dest.borrow_mut().insert("outer".into(), Value::from(outer));
            dest
        };
        let dest = start();
        parse_json_into(
            "outer.inner1=\"1\",outer.inner3=3,outer.inner4=true,outer.inner5=\"true\"",
            &Value::Map(dest.clone()),
        )
        .unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[outer:map[inner1:1 inner2:value2 inner3:3 inner4:true inner5:true]]"
        );
        let dest = start();
        parse_json_into(
            "outer.inner1={\"a\":\"1\",\"b\":2,\"c\":[1,2,3]},outer.inner3=[\"new value 1\",\"new value 2\"],outer.inner4={\"aa\":\"1\",\"bb\":2,\"cc\":[1,2,3]},outer.inner5=[{\"A\":\"1\",\"B\":2,\"C\":[1,2,3]}]",
            &Value::Map(dest.clone()),
        )
        .unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[outer:map[inner1:map[a:1 b:2 c:[1 2 3]] inner2:value2 inner3:[new value 1 new value 2] inner4:map[aa:1 bb:2 cc:[1 2 3]] inner5:[map[A:1 B:2 C:[1 2 3]]]]]"
        );
        let dest = start();
        parse_json_into(
            "outer.inner1=,outer.inner3={\"aa\":\"1\",\"bb\":2,\"cc\":[1,2,3]},outer.inner3.cc[1]=null",
            &Value::Map(dest.clone()),
        )
        .unwrap();
        assert_eq!(
            Value::Map(dest).to_go_string(),
            "map[outer:map[inner1:<nil> inner2:value2 inner3:map[aa:1 bb:2 cc:[1 <nil> 3]]]]"
        );
        assert!(
            parse_json_into(
                "outer.inner1={\"a\":\"1\",\"b\":2,\"c\":[1,2,3]},outer.inner3=[\"new value 1\",\"new value 2\"],outer.inner4={\"aa\":\"1\",\"bb\":2,\"cc\":[1,2,3]},outer.inner5={\"A\":\"1\",\"B\":2,\"C\":[1,2,3]}]",
                &Value::Map(fresh())
            )
            .is_err()
        );
    }

    #[test]
    fn parse_file_uses_the_reader() {
        // Helm TestParseIntoFile.
        let dest = fresh();
        let mut reader = |path: &str| -> Result<Value, String> {
            assert_eq!(path, "path1");
            Ok(Value::from("value1"))
        };
        parse_into_file("name1=path1", &Value::Map(dest.clone()), &mut reader).unwrap();
        assert_eq!(Value::Map(dest).to_go_string(), "map[name1:value1]");
    }

    #[test]
    fn nesting_limit() {
        // Helm TestParseSetNestedLevels.
        let mut key = String::new();
        for i in 1..=MAX_NESTED_NAME_LEVEL + 2 {
            key.push_str(&format!("name{i}"));
            if i <= MAX_NESTED_NAME_LEVEL + 1 {
                key.push('.');
            }
        }
        assert_eq!(
            shown(&format!("{key}=value")).unwrap_err(),
            "value name nested level is greater than maximum supported nested level of 30"
        );
    }

    #[test]
    fn absurd_list_nesting_is_refused_not_a_stack_overflow() {
        let deep = format!("a{}=1", "[0]".repeat(100_000));
        assert_eq!(
            shown(&deep).unwrap_err(),
            "list nesting is deeper than the supported 256 levels"
        );
        let fine = format!("a{}=1", "[0]".repeat(50));
        assert!(shown(&fine).is_ok());
    }

    #[test]
    fn error_texts() {
        assert_eq!(
            shown("name1,name2").unwrap_err(),
            "key \"name1\" has no value (cannot end with ,)"
        );
        assert_eq!(shown("name1").unwrap_err(), "key \"name1\" has no value");
        assert_eq!(
            shown("name1.name2").unwrap_err(),
            "key \"name2\" has no value"
        );
        assert_eq!(
            shown("name1.=name2").unwrap_err(),
            "key map \"name1\" has no value"
        );
        assert_eq!(
            shown("a=x,a[0]=y").unwrap_err(),
            "unable to parse key: interface conversion: interface {} is string, not []interface {}"
        );
        assert_eq!(
            shown("a=null,a.b=y").unwrap_err(),
            "unable to parse key: interface conversion: interface {} is nil, not map[string]interface {}"
        );
        assert_eq!(
            shown("a[x]=1").unwrap_err(),
            "error parsing index: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            shown("a[65537]=1").unwrap_err(),
            "index of 65537 is greater than maximum supported index of 65536"
        );
    }

    #[test]
    fn literal_like_helm() {
        // Helm pkg/strvals/literal_parser_test.go TestParseLiteral.
        let ok = [
            ("name=", "map[name:]"),
            ("name=value", "map[name:value]"),
            (
                "long_int_string=1234567890",
                "map[long_int_string:1234567890]",
            ),
            ("boolean=true", "map[boolean:true]"),
            ("is_null=null", "map[is_null:null]"),
            ("zero=0", "map[zero:0]"),
            ("name1=null,name2=value2", "map[name1:null,name2=value2]"),
            ("name1=value,,,tail", "map[name1:value,,,tail]"),
            ("leading_zeros=00009", "map[leading_zeros:00009]"),
            ("name=one two three", "map[name:one two three]"),
            ("outer.inner=value", "map[outer:map[inner:value]]"),
            (
                "outer.middle.inner=value",
                "map[outer:map[middle:map[inner:value]]]",
            ),
            ("name1.name2=", "map[name1:map[name2:]]"),
            ("name1={value1,value2}", "map[name1:{value1,value2}]"),
            ("list[0]=foo", "map[list:[foo]]"),
            ("list[3]=bar", "map[list:[<nil> <nil> <nil> bar]]"),
        ];
        for (input, expected) in ok {
            assert_eq!(
                parse_literal(input).unwrap().to_go_string(),
                expected,
                "{input}"
            );
            let Value::Map(map) = parse_literal(input).unwrap() else {
                panic!()
            };
            assert!(
                map.borrow()
                    .values()
                    .all(|v| !matches!(v, Value::Int64(_) | Value::Bool(_)))
            );
        }
        for input in [
            "name",
            "name1.name2",
            "name1.=name2",
            "name1.,name2",
            "list[-30].hello=world",
        ] {
            assert!(parse_literal(input).is_err(), "{input} should fail");
        }
    }
}
