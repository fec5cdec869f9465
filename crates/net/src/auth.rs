//! Credentials the host adds to requests: basic auth, never printed.

use std::fmt;

use http::header::HeaderValue;

/// Username and password sent with basic auth. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BasicAuth(<redacted>)")
    }
}

impl BasicAuth {
    /// The `Authorization` header value (marked sensitive).
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.username, self.password));
        let mut value = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}
