//! From rendered template files to a release's manifest, as Helm 4 assembles it: NOTES
//! pulled out, files walked in path order, each split into documents on `---` lines (with
//! Helm's regex quirks), each document's head parsed, hooks separated from the rest, both
//! stably sorted by kind install order, and printed as `---\n# Source: <path>\n<doc>\n`.

use std::collections::BTreeMap;

use capstan_gotmpl::value::Value;

/// Kinds in the order Helm installs them; unknown kinds go last, alphabetically.
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The hook events Helm knows (`test-success` is the Helm 2 spelling of `test`).
pub const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// Hook events only Helm 2 knows: `crd-install` CRDs are created before an install.
pub const HELM2_HOOK_EVENTS: &[&str] = &["crd-install"];

/// The fields of a document Helm looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
}

/// A non-hook document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Template path it came from.
    pub path: String,
    /// The document text.
    pub content: String,
    /// Its head.
    pub head: Head,
}

/// A hook document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// Template path it came from.
    pub path: String,
    /// The document text.
    pub manifest: String,
    /// Its head.
    pub head: Head,
    /// Events (lower-cased, `test-success` normalised to `test`).
    pub events: Vec<String>,
    /// `helm.sh/hook-weight` (0 when absent or not a number).
    pub weight: i64,
    /// `helm.sh/hook-delete-policy` entries.
    pub delete_policies: Vec<String>,
    /// `helm.sh/hook-output-log-policy` entries.
    pub output_log_policies: Vec<String>,
}

/// A rendered release, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assembled {
    /// Non-hook documents in install order.
    pub manifests: Vec<Manifest>,
    /// Hooks in install order.
    pub hooks: Vec<Hook>,
    /// Rendered NOTES.txt of the root chart (and of subcharts when asked).
    pub notes: String,
}

/// A document that is not valid YAML or has a head of the wrong shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("YAML parse error on {path}: {message}")]
pub struct OutputError {
    /// Template path.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn is_go_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}')
}

/// Helm 4's `SplitManifests`: leading whitespace trimmed, split on the regex
/// `(?:^|\s*\n)---\s*`, blank pieces dropped, each piece left-trimmed (trailing whitespace
/// kept).
pub fn split_manifests(text: &str) -> Vec<String> {
    let text = text.trim_start();
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut search_from = 0;
    if text.starts_with("---") {
        let mut end = 3;
        while end < bytes.len() && is_go_space(bytes[end] as char) {
            end += 1;
        }
        pieces.push(&text[0..0]);
        piece_start = end;
        search_from = end;
    }
    while let Some(offset) = text[search_from..].find("\n---") {
        let newline = search_from + offset;
        let mut start = newline;
        while start > search_from && is_go_space(bytes[start - 1] as char) {
            start -= 1;
        }
        let mut end = newline + 4;
        while end < bytes.len() && is_go_space(bytes[end] as char) {
            end += 1;
        }
        pieces.push(&text[piece_start..start]);
        piece_start = end;
        search_from = end;
    }
    pieces.push(&text[piece_start..]);
    pieces
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim_start().to_owned())
        .collect()
}

pub(crate) fn head_of(path: &str, doc: &str) -> Result<Head, OutputError> {
    let fail = |message: String| OutputError {
        path: path.to_owned(),
        message,
    };
    let value = capstan_goyaml::from_yaml(doc)
        .map_err(|e| fail(format!("error converting YAML to JSON: {e}")))?;
    let mut head = Head::default();
    let map = match &value {
        Value::Nil => return Ok(head),
        Value::Map(map) => map.borrow(),
        other => {
            return Err(fail(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type util.SimpleHead",
                json_kind(other)
            )));
        }
    };
    let string_field = |value: Option<&Value>, field: &str| -> Result<String, OutputError> {
        match value {
            None | Some(Value::Nil) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.to_string()),
            Some(other) => Err(fail(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {field} of type string",
                json_kind(other)
            ))),
        }
    };
    head.api_version = string_field(map.get("apiVersion"), "SimpleHead.apiVersion")?;
    head.kind = string_field(map.get("kind"), "SimpleHead.kind")?;
    match map.get("metadata") {
        None | Some(Value::Nil) => {}
        Some(Value::Map(metadata)) => {
            let metadata = metadata.borrow();
            head.name = string_field(metadata.get("name"), "SimpleHead.metadata.name")?;
            match metadata.get("annotations") {
                None | Some(Value::Nil) => {}
                Some(Value::Map(annotations)) => {
                    for (key, value) in annotations.borrow().iter() {
                        let text = string_field(
                            Some(value),
                            &format!("SimpleHead.metadata.annotations.{key}"),
                        )?;
                        head.annotations.insert(key.clone(), text);
                    }
                }
                Some(other) => {
                    return Err(fail(format!(
                        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field .metadata.annotations of type map[string]string",
                        json_kind(other)
                    )));
                }
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field SimpleHead.metadata of type struct {{ Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }}",
                json_kind(other)
            )));
        }
    }
    Ok(head)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::List(_) => "array",
        Value::Map(_) => "object",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        _ => "number",
    }
}

fn kind_rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|k| *k == kind)
}

/// Helm's `lessByKind` as a total order usable by a stable sort.
fn compare_kinds(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (kind_rank(a), kind_rank(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn split_list(value: Option<&String>) -> Vec<String> {
    value
        .map(|v| {
            v.split(',')
                .map(|p| p.trim().to_lowercase())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
}

/// Helm's `SortManifests` over rendered files: hooks and manifests in install order. With
/// `helm2`, Helm 2's own hook events ([`HELM2_HOOK_EVENTS`]) are hooks too; Helm 3 skips
/// documents that name them.
pub fn sort_manifests(
    files: &BTreeMap<String, String>,
    helm2: bool,
) -> Result<(Vec<Hook>, Vec<Manifest>), OutputError> {
    let known =
        |event: &str| HOOK_EVENTS.contains(&event) || (helm2 && HELM2_HOOK_EVENTS.contains(&event));
    let mut hooks = Vec::new();
    let mut manifests = Vec::new();
    for (path, content) in files {
        let base = path.rsplit('/').next().unwrap_or(path);
        if base.starts_with('_') || content.trim().is_empty() {
            continue;
        }
        for doc in split_manifests(content) {
            let head = head_of(path, &doc)?;
            let Some(hook_types) = head.annotations.get("helm.sh/hook").cloned() else {
                manifests.push(Manifest {
                    path: path.clone(),
                    content: doc,
                    head,
                });
                continue;
            };
            let events = split_list(Some(&hook_types));
            if events.iter().any(|e| !known(e)) {
                // Helm skips documents with unknown hook types entirely.
                continue;
            }
            let weight = head
                .annotations
                .get("helm.sh/hook-weight")
                .and_then(|w| w.parse::<i64>().ok())
                .unwrap_or(0);
            let delete_policies = split_list(head.annotations.get("helm.sh/hook-delete-policy"));
            let output_log_policies =
                split_list(head.annotations.get("helm.sh/hook-output-log-policy"));
            hooks.push(Hook {
                path: path.clone(),
                manifest: doc,
                events: events
                    .into_iter()
                    .map(|e| {
                        if e == "test-success" {
                            "test".into()
                        } else {
                            e
                        }
                    })
                    .collect(),
                weight,
                delete_policies,
                output_log_policies,
                head,
            });
        }
    }
    manifests.sort_by(|a, b| compare_kinds(&a.head.kind, &b.head.kind));
    hooks.sort_by(|a, b| compare_kinds(&a.head.kind, &b.head.kind));
    Ok((hooks, manifests))
}

/// Pull NOTES out of the rendered files and sort the rest (Helm's `renderResources`);
/// `helm2` as in [`sort_manifests`].
pub fn assemble(
    root_chart_name: &str,
    mut files: BTreeMap<String, String>,
    subchart_notes: bool,
    helm2: bool,
) -> Result<Assembled, OutputError> {
    let root_notes = format!("{root_chart_name}/templates/NOTES.txt");
    let note_paths: Vec<String> = files
        .keys()
        .filter(|k| k.ends_with("NOTES.txt"))
        .cloned()
        .collect();
    let mut notes = String::new();
    for path in note_paths {
        if let Some(text) = files.remove(&path)
            && (subchart_notes || path == root_notes)
        {
            if !notes.is_empty() {
                notes.push('\n');
            }
            notes.push_str(&text);
        }
    }
    let (hooks, manifests) = sort_manifests(&files, helm2)?;
    Ok(Assembled {
        manifests,
        hooks,
        notes,
    })
}

/// The release manifest: every non-hook document with its `# Source:` header.
pub fn manifest_text(manifests: &[Manifest]) -> String {
    let mut out = String::new();
    for m in manifests {
        out.push_str("---\n# Source: ");
        out.push_str(&m.path);
        out.push('\n');
        out.push_str(&m.content);
        out.push('\n');
    }
    out
}

/// Every hook with its `# Source:` header, in the given order.
pub fn hooks_text(hooks: &[Hook]) -> String {
    let mut out = String::new();
    for hook in hooks {
        out.push_str("---\n# Source: ");
        out.push_str(&hook.path);
        out.push('\n');
        out.push_str(&hook.manifest);
        out.push('\n');
    }
    out
}

/// What `helm template` prints: the trimmed manifest, then each hook with its header.
pub fn template_text(assembled: &Assembled, with_hooks: bool) -> String {
    let mut out = manifest_text(&assembled.manifests).trim().to_owned();
    out.push('\n');
    if with_hooks {
        out.push_str(&hooks_text(&assembled.hooks));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_follows_helm_regex() {
        // Expected values are what Go's regexp.Split with Helm 4.2.3's pattern gives.
        assert_eq!(
            split_manifests("---\na: 1\n---\nb: 2\n"),
            ["a: 1", "b: 2\n"]
        );
        assert_eq!(
            split_manifests("\n\na: 1  \n  \n---   \nb: 2"),
            ["a: 1", "b: 2"]
        );
        assert_eq!(split_manifests("a: 1\n---b: 2"), ["a: 1", "b: 2"]);
        assert_eq!(split_manifests("a: 1\n---\n---\n"), ["a: 1", "---\n"]);
        assert_eq!(split_manifests("a: '---'\nb: 2"), ["a: '---'\nb: 2"]);
    }

    #[test]
    fn kind_order_is_helms() {
        let mut kinds = vec!["Zeta", "Deployment", "Alpha", "Service", "Namespace"];
        kinds.sort_by(|a, b| compare_kinds(a, b));
        assert_eq!(
            kinds,
            ["Namespace", "Service", "Deployment", "Alpha", "Zeta"]
        );
    }
}
