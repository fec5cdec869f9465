//! Kustomize's patch target selector: group, version, kind, name and namespace as anchored
//! regular expressions (`^(?:…)$`), and label and annotation selectors in Kubernetes'
//! syntax (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`).

use regex::Regex;
use serde_json::Value;

use capstan_api::PatchTarget;

/// One requirement of a label (or annotation) selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl Requirement {
    fn matches(&self, map: Option<&serde_json::Map<String, Value>>) -> bool {
        let get = |key: &str| map.and_then(|m| m.get(key)).and_then(Value::as_str);
        match self {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        }
    }
}

/// Split at commas outside parentheses.
fn requirements_text(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn set_values(text: &str, whole: &str) -> Result<Vec<String>, String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| {
            format!("selector {whole:?}: expected a list in parentheses, found {text:?}")
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect())
}

fn parse_requirements(text: &str) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    for part in requirements_text(text) {
        let requirement = if let Some(key) = part.strip_prefix('!') {
            Requirement::DoesNotExist(key.trim().to_owned())
        } else if let Some((key, value)) = part.split_once("!=") {
            Requirement::NotEquals(key.trim().to_owned(), value.trim().to_owned())
        } else if let Some((key, value)) = part.split_once("==") {
            Requirement::Equals(key.trim().to_owned(), value.trim().to_owned())
        } else if let Some((key, value)) = part.split_once('=') {
            Requirement::Equals(key.trim().to_owned(), value.trim().to_owned())
        } else if let Some((key, values)) = part.split_once(" notin ") {
            Requirement::NotIn(key.trim().to_owned(), set_values(values, text)?)
        } else if let Some((key, values)) = part.split_once(" in ") {
            Requirement::In(key.trim().to_owned(), set_values(values, text)?)
        } else if part.contains(char::is_whitespace) || part.contains(['(', ')']) {
            return Err(format!("selector {text:?}: cannot read {part:?}"));
        } else {
            Requirement::Exists(part.to_owned())
        };
        out.push(requirement);
    }
    Ok(out)
}

fn anchored(field: &str, pattern: &Option<String>) -> Result<Option<Regex>, String> {
    match pattern.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(p) => Regex::new(&format!("^(?:{p})$"))
            .map(Some)
            .map_err(|e| format!("target.{field} {p:?} is not a regular expression: {e}")),
    }
}

/// A compiled patch target.
#[derive(Debug)]
pub struct Selector {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `group` and `version` of an object's `apiVersion` (`v1` is the core group).
pub fn group_version(object: &Value) -> (&str, &str) {
    let api_version = text(object, "/apiVersion");
    api_version.split_once('/').unwrap_or(("", api_version))
}

impl Selector {
    /// Compile `target`; an invalid pattern or selector names the field.
    pub fn new(target: &PatchTarget) -> Result<Self, String> {
        Ok(Selector {
            group: anchored("group", &target.group)?,
            version: anchored("version", &target.version)?,
            kind: anchored("kind", &target.kind)?,
            name: anchored("name", &target.name)?,
            namespace: anchored("namespace", &target.namespace)?,
            labels: match &target.label_selector {
                Some(s) => {
                    parse_requirements(s).map_err(|e| format!("target.labelSelector: {e}"))?
                }
                None => Vec::new(),
            },
            annotations: match &target.annotation_selector {
                Some(s) => {
                    parse_requirements(s).map_err(|e| format!("target.annotationSelector: {e}"))?
                }
                None => Vec::new(),
            },
        })
    }

    /// Whether `object` is selected.
    pub fn matches(&self, object: &Value) -> bool {
        let (group, version) = group_version(object);
        let is = |pattern: &Option<Regex>, value: &str| {
            pattern.as_ref().is_none_or(|p| p.is_match(value))
        };
        let metadata = |key: &str| {
            object
                .get("metadata")
                .and_then(|m| m.get(key))
                .and_then(Value::as_object)
        };
        is(&self.group, group)
            && is(&self.version, version)
            && is(&self.kind, text(object, "/kind"))
            && is(&self.name, text(object, "/metadata/name"))
            && is(&self.namespace, text(object, "/metadata/namespace"))
            && self.labels.iter().all(|r| r.matches(metadata("labels")))
            && self
                .annotations
                .iter()
                .all(|r| r.matches(metadata("annotations")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels}})
    }

    #[test]
    fn names_and_kinds_are_anchored_regular_expressions() {
        let selector = Selector::new(&PatchTarget {
            kind: Some("Deploy.*".into()),
            name: Some("web|api".into()),
            group: Some("apps".into()),
            ..PatchTarget::default()
        })
        .unwrap();
        assert!(selector.matches(&deployment("web", json!({}))));
        assert!(selector.matches(&deployment("api", json!({}))));
        assert!(!selector.matches(&deployment("web-2", json!({}))));
        assert!(!selector.matches(
            &json!({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "web"}})
        ));
    }

    #[test]
    fn label_selectors_follow_kubernetes_syntax() {
        let select = |s: &str| {
            Selector::new(&PatchTarget {
                label_selector: Some(s.into()),
                ..PatchTarget::default()
            })
            .unwrap()
        };
        let web = deployment("w", json!({"app": "web", "tier": "front"}));
        assert!(select("app=web,tier in (front, back)").matches(&web));
        assert!(select("app==web,!legacy").matches(&web));
        assert!(!select("app!=web").matches(&web));
        assert!(!select("tier notin (front)").matches(&web));
        assert!(select("tier").matches(&web));
        assert!(!select("legacy").matches(&web));
        let refused = Selector::new(&PatchTarget {
            label_selector: Some("app in web".into()),
            ..PatchTarget::default()
        })
        .unwrap_err();
        assert!(refused.contains("target.labelSelector"), "{refused}");
        let bad_regex = Selector::new(&PatchTarget {
            name: Some("(".into()),
            ..PatchTarget::default()
        })
        .unwrap_err();
        assert!(bad_regex.starts_with("target.name \"(\""), "{bad_regex}");
    }
}
