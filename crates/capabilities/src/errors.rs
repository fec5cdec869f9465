//! Error values for plugins.

use super::bindings::types::{Error, ErrorCode};

/// An error value for a plugin; `unavailable` and `timeout` are retryable.
pub(crate) fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    let retryable = matches!(code, ErrorCode::Unavailable | ErrorCode::Timeout);
    Error {
        code,
        message: message.into(),
        retryable,
    }
}
