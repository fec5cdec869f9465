//! Go's `fmt` formatting of template values: `Sprint`, `Sprintln` and `Sprintf` with Go's
//! verbs and flags.
//!
//! PLACEHOLDER BODIES: the signatures are the contract; the Go-exact implementation is
//! being written.

use crate::value::Value;

/// Go's `fmt.Sprint`: operands formatted with `%v`, a space between two operands when
/// neither is a string.
pub fn sprint(args: &[Value]) -> String {
    args.iter().map(Value::to_go_string).collect()
}

/// Go's `fmt.Sprintln`: operands with `%v`, always space-separated, then a newline.
pub fn sprintln(args: &[Value]) -> String {
    let mut out: Vec<String> = args.iter().map(Value::to_go_string).collect();
    out.push(String::new());
    out.join(" ").trim_end().to_owned() + "\n"
}

/// Go's `fmt.Sprintf` with every verb and flag Go supports for these types, including the
/// `%!v(MISSING)`/`%!(EXTRA ...)` error notations.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let _ = args;
    format.to_owned()
}

/// Go's `strconv.Quote` (what `%q` does for strings).
pub fn quote(s: &str) -> String {
    format!("{s:?}")
}
