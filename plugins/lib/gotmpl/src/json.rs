//! JSON as Go's `encoding/json` writes and reads it for template values.
