//! Go's `fmt` formatting of template values: `Sprint`, `Sprintln` and `Sprintf` with Go's
//! verbs and flags.
