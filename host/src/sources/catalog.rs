//! The source catalog: which source kinds exist and which plugin serves each. The host
//! knows no kind of its own; it learns them from each source plugin's `describe` when the
//! plugin is loaded, compiles each kind's JSON Schema once, and routes a release's
//! `(kind, spec)` to the plugin that declared the kind. Two plugins declaring one kind is
//! an error at start-up unless the configuration's `sources.kinds` picks one.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::plugins::SourcePlugin;
pub use crate::plugins::kinds::{DeclaredKind, HttpAccess, KindCapabilities};

/// A spec that breaks its kind's schema: every violation, each with the JSON path of the
/// offending value and the schema rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct SpecViolations {
    /// The kind whose schema was broken.
    pub kind: String,
    /// `(instance path, schema rule, message)`, in the validator's order.
    pub violations: Vec<Violation>,
}

/// One schema violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer of the offending value inside the spec (`""` for the spec itself).
    pub path: String,
    /// JSON Pointer of the schema keyword broken, e.g. `/properties/url/pattern`.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

impl SpecViolations {
    fn describe(&self) -> String {
        let parts: Vec<String> = self
            .violations
            .iter()
            .map(|v| {
                let at = if v.path.is_empty() { "/" } else { &v.path };
                format!("at {at}: {} (rule {})", v.message, v.rule)
            })
            .collect();
        format!(
            "spec of source kind `{}` is invalid: {}",
            self.kind,
            parts.join("; ")
        )
    }
}

/// A kind, its compiled schema and the plugin serving it.
pub struct KindEntry {
    /// The declaration.
    pub declared: DeclaredKind,
    /// The plugin that declared it.
    pub plugin: Arc<SourcePlugin>,
    validator: jsonschema::Validator,
}

impl KindEntry {
    /// Check `spec` against the kind's schema.
    pub fn validate(&self, spec: &Value) -> Result<(), SpecViolations> {
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(spec)
            .take(8)
            .map(|error| Violation {
                path: error.instance_path().as_str().to_owned(),
                rule: error.schema_path().as_str().to_owned(),
                message: error.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(SpecViolations {
                kind: self.declared.name.clone(),
                violations,
            })
        }
    }
}

/// Why the catalog cannot be built. Each names the plugins and kinds involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// Two plugins declare the same kind and the configuration picks neither.
    #[error(
        "source kind `{kind}` is declared by plugins `{first}` and `{second}`; choose one in the configuration's `sources.kinds` (e.g. `{kind}: {first}`)"
    )]
    Conflict {
        /// The kind.
        kind: String,
        /// One plugin.
        first: String,
        /// The other.
        second: String,
    },
    /// A kind's declaration is unusable.
    #[error("plugin `{plugin}` declares source kind `{kind}` badly: {message}")]
    BadDeclaration {
        /// The plugin.
        plugin: String,
        /// The kind.
        kind: String,
        /// What is wrong.
        message: String,
    },
    /// The configuration routes a kind to a plugin that does not declare it.
    #[error(
        "sources.kinds routes `{kind}` to plugin `{plugin}`, which does not declare it (it declares: {declared})"
    )]
    BadRoute {
        /// The kind.
        kind: String,
        /// The plugin named.
        plugin: String,
        /// What it declares.
        declared: String,
    },
}

/// Why a release's source cannot be routed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// No loaded plugin declares the kind.
    #[error("no source plugin serves kind `{kind}` (kinds served: {served})")]
    UnknownKind {
        /// The kind asked for.
        kind: String,
        /// Kinds the catalog has.
        served: String,
    },
    /// The spec breaks the kind's schema.
    #[error(transparent)]
    Invalid(#[from] SpecViolations),
}

/// Kinds by name.
#[derive(Default)]
pub struct SourceCatalog {
    kinds: BTreeMap<String, KindEntry>,
}

/// A kind name: lowercase ASCII letters, digits and `-`, starting with a letter.
fn valid_kind_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn valid_pointer(pointer: &str) -> bool {
    pointer.is_empty() || pointer.starts_with('/')
}

impl SourceCatalog {
    /// Build the catalog from each plugin's declared kinds; `routes` (kind → plugin name,
    /// from the configuration) settles kinds declared by more than one plugin.
    pub fn build(
        plugins: Vec<(Arc<SourcePlugin>, Vec<DeclaredKind>)>,
        routes: &BTreeMap<String, String>,
    ) -> Result<SourceCatalog, CatalogError> {
        let mut kinds: BTreeMap<String, KindEntry> = BTreeMap::new();
        for (plugin, declared) in &plugins {
            for kind in declared {
                let bad = |message: String| CatalogError::BadDeclaration {
                    plugin: plugin.name().to_owned(),
                    kind: kind.name.clone(),
                    message,
                };
                if !valid_kind_name(&kind.name) {
                    return Err(bad(
                        "a kind name is lowercase letters, digits and `-`, starting with a letter"
                            .into(),
                    ));
                }
                let capabilities = &kind.capabilities;
                let pointers = capabilities
                    .git_url_field
                    .iter()
                    .chain(capabilities.http.iter().map(|h| &h.url_field))
                    .chain(
                        capabilities
                            .http
                            .iter()
                            .filter_map(|h| h.insecure_field.as_ref()),
                    );
                for pointer in pointers {
                    if !valid_pointer(pointer) {
                        return Err(bad(format!(
                            "`{pointer}` is not a JSON Pointer (it must start with `/`)"
                        )));
                    }
                }
                let validator = jsonschema::draft202012::new(&kind.schema)
                    .map_err(|e| bad(format!("its spec schema does not compile: {e}")))?;
                if let Some(existing) = kinds.get(&kind.name) {
                    match routes.get(&kind.name) {
                        Some(chosen) if chosen == plugin.name() => {}
                        Some(_) => continue,
                        None => {
                            return Err(CatalogError::Conflict {
                                kind: kind.name.clone(),
                                first: existing.plugin.name().to_owned(),
                                second: plugin.name().to_owned(),
                            });
                        }
                    }
                } else if routes
                    .get(&kind.name)
                    .is_some_and(|chosen| chosen != plugin.name())
                {
                    continue;
                }
                kinds.insert(
                    kind.name.clone(),
                    KindEntry {
                        declared: kind.clone(),
                        plugin: Arc::clone(plugin),
                        validator,
                    },
                );
            }
        }
        for (kind, plugin) in routes {
            if kinds.get(kind).is_none_or(|e| e.plugin.name() != plugin) {
                let declared = plugins
                    .iter()
                    .find(|(p, _)| p.name() == plugin)
                    .map(|(_, kinds)| {
                        kinds
                            .iter()
                            .map(|k| k.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_else(|| "nothing: no such source plugin is loaded".into());
                return Err(CatalogError::BadRoute {
                    kind: kind.clone(),
                    plugin: plugin.clone(),
                    declared,
                });
            }
        }
        Ok(SourceCatalog { kinds })
    }

    /// The entry serving `kind`.
    pub fn kind(&self, kind: &str) -> Result<&KindEntry, RouteError> {
        self.kinds.get(kind).ok_or_else(|| RouteError::UnknownKind {
            kind: kind.to_owned(),
            served: self.names(),
        })
    }

    /// Route `(kind, spec)`: the entry serving the kind, once the spec passed its schema.
    pub fn route(&self, kind: &str, spec: &Value) -> Result<&KindEntry, RouteError> {
        let entry = self.kind(kind)?;
        entry.validate(spec)?;
        Ok(entry)
    }

    /// Every kind served, by name.
    pub fn kinds(&self) -> impl Iterator<Item = &KindEntry> {
        self.kinds.values()
    }

    /// The kind names, comma-separated (for messages).
    pub fn names(&self) -> String {
        if self.kinds.is_empty() {
            return "none".into();
        }
        self.kinds.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// Ask every plugin what it serves and build the catalog. A plugin whose `describe` fails
/// (traps, runs out of time, declares garbage) is left out and its failure returned, so
/// one broken plugin does not stop the others; conflicting declarations stop the build.
pub async fn describe_all(
    plugins: Vec<SourcePlugin>,
    routes: &BTreeMap<String, String>,
) -> (Result<SourceCatalog, CatalogError>, Vec<String>) {
    let mut declared = Vec::new();
    let mut failures = Vec::new();
    for plugin in plugins {
        match plugin.declared_kinds().await {
            Ok(kinds) => declared.push((Arc::new(plugin), kinds)),
            Err(message) => failures.push(message),
        }
    }
    (SourceCatalog::build(declared, routes), failures)
}

/// The string at `pointer` in `spec`, if there is one.
pub fn text_at<'a>(spec: &'a Value, pointer: &str) -> Option<&'a str> {
    spec.pointer(pointer).and_then(Value::as_str)
}

/// The URLs an HTTP access field grants: a string is one URL, an array of strings a list of
/// them, an absent field none. `None` when the field holds anything else.
pub fn urls_at<'a>(spec: &'a Value, pointer: &str) -> Option<Vec<&'a str>> {
    match spec.pointer(pointer) {
        None => Some(Vec::new()),
        Some(Value::String(url)) => Some(vec![url.as_str()]),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// Whether the boolean at `pointer` in `spec` is true.
pub fn flag_at(spec: &Value, pointer: Option<&str>) -> bool {
    pointer
        .and_then(|p| spec.pointer(p))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_and_pointers_are_checked() {
        assert!(valid_kind_name("oci"));
        assert!(valid_kind_name("helm-repository"));
        assert!(valid_kind_name("s3-v2"));
        assert!(!valid_kind_name("OCI"));
        assert!(!valid_kind_name("2fa"));
        assert!(!valid_kind_name(""));
        assert!(valid_pointer("/url"));
        assert!(!valid_pointer("url"));
    }

    #[test]
    fn violations_name_the_path_and_the_rule() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["url"],
            "properties": {"url": {"type": "string", "pattern": "^https://"}},
            "additionalProperties": false
        });
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let spec = serde_json::json!({"url": "ftp://x", "extra": 1});
        let violations: Vec<Violation> = validator
            .iter_errors(&spec)
            .map(|error| Violation {
                path: error.instance_path().as_str().to_owned(),
                rule: error.schema_path().as_str().to_owned(),
                message: error.to_string(),
            })
            .collect();
        let error = SpecViolations {
            kind: "example".into(),
            violations,
        };
        let text = error.to_string();
        assert!(text.contains("at /url:"), "{text}");
        assert!(text.contains("/properties/url/pattern"), "{text}");
        assert!(text.contains("additionalProperties"), "{text}");
        assert!(
            text.starts_with("spec of source kind `example` is invalid"),
            "{text}"
        );
    }

    #[test]
    fn pointers_read_text_and_flags() {
        let spec = serde_json::json!({"url": "oci://r/x", "insecure": true});
        assert_eq!(text_at(&spec, "/url"), Some("oci://r/x"));
        assert_eq!(text_at(&spec, "/missing"), None);
        assert!(flag_at(&spec, Some("/insecure")));
        assert!(!flag_at(&spec, None));
    }

    #[test]
    fn url_fields_hold_one_url_a_list_or_nothing() {
        let spec = serde_json::json!({
            "url": "https://a",
            "more": ["https://b", "http://c"],
            "none": [],
            "mixed": ["https://d", 1],
            "number": 7
        });
        assert_eq!(urls_at(&spec, "/url"), Some(vec!["https://a"]));
        assert_eq!(urls_at(&spec, "/more"), Some(vec!["https://b", "http://c"]));
        assert_eq!(urls_at(&spec, "/none"), Some(vec![]));
        assert_eq!(urls_at(&spec, "/absent"), Some(vec![]));
        assert_eq!(urls_at(&spec, "/mixed"), None);
        assert_eq!(urls_at(&spec, "/number"), None);
    }
}
