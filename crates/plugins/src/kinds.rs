//! The source kinds a source plugin declares ([`DeclaredKind`]): each kind's spec schema and
//! what calls about it may use.

use serde_json::Value;

/// HTTP access a kind derives from one field of its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAccess {
    /// JSON Pointer of the field holding the URL.
    pub url_field: String,
    /// JSON Pointer of a boolean field allowing plain `http`.
    pub insecure_field: Option<String>,
    /// Whether the host adds the Secret's credentials to requests to that origin.
    pub send_credentials: bool,
    /// Path, relative to the URL, of a document shared (cached) between calls.
    pub shared_document: Option<String>,
}

/// What calls about one kind may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindCapabilities {
    /// JSON Pointer of the field holding a git repository URL the host mirrors.
    pub git_url_field: Option<String>,
    /// HTTP origins derived from spec fields.
    pub http: Vec<HttpAccess>,
    /// Keys of the credentials Secret the plugin may read.
    pub secret_keys: Vec<String>,
}

/// One kind as its plugin declared it.
#[derive(Debug, Clone)]
pub struct DeclaredKind {
    /// Kind name.
    pub name: String,
    /// One line about the kind.
    pub summary: String,
    /// The spec's JSON Schema.
    pub schema: Value,
    /// What calls about the kind may use.
    pub capabilities: KindCapabilities,
}
