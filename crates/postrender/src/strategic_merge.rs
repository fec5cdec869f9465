//! Strategic merge patches as Kubernetes applies them to its built-in kinds: maps merge
//! key by key (`null` deletes a key), lists of objects with a merge key (containers by
//! `name`, volume mounts by `mountPath`, …) merge item by item, `finalizers` merge as a set,
//! other lists are replaced; the directives `$patch: replace|delete|merge`, `$retainKeys`
//! and `$deleteFromPrimitiveList/<field>` are honoured, `$setElementOrder/<field>` is
//! accepted and ignored. Objects of other API groups (custom resources, whose schema the
//! host does not know) get a JSON merge patch, as Kustomize gives them.
//!
//! Written by hand: no maintained Rust crate implements strategic merge (it is defined by
//! the `patchStrategy`/`patchMergeKey` tags of Kubernetes' Go types); the merge keys below
//! are those tags for the fields charts patch.

use serde_json::{Map, Value};

/// Whether `api_version` is one of Kubernetes' own groups (the core group, an unqualified
/// group such as `apps`, or a `*.k8s.io` group).
pub fn is_builtin(api_version: &str) -> bool {
    match api_version.split_once('/') {
        None => true,
        Some((group, _)) => !group.contains('.') || group.ends_with(".k8s.io"),
    }
}

/// The merge key of a list field, given the map that holds it.
fn merge_key(field: &str, holder: &Map<String, Value>) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "conditions" => "type",
        // A container's ports merge by `containerPort`, a Service's by `port`.
        "ports" if holder.contains_key("image") || holder.contains_key("containerPort") => {
            "containerPort"
        }
        "ports" => "port",
        _ => return None,
    })
}

fn directive(map: &Map<String, Value>) -> Option<&str> {
    map.get("$patch").and_then(Value::as_str)
}

/// Whether a list item carries `$patch: <which>`.
fn item_says(item: &Value, which: &str) -> bool {
    item.as_object()
        .is_some_and(|m| directive(m) == Some(which))
}

/// A patch value without its directives, for where it is put as is.
fn clean(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), clean(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
        other => other.clone(),
    }
}

/// Apply `patch` to `target` (an object of a built-in kind when `builtin`). A top-level
/// `$patch: delete` is not handled here: the caller drops the object.
pub fn apply(target: &mut Value, patch: &Value, builtin: bool) -> Result<(), String> {
    if !builtin {
        json_patch::merge(target, patch);
        return Ok(());
    }
    merge_value(target, patch, "")
}

fn merge_value(target: &mut Value, patch: &Value, path: &str) -> Result<(), String> {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => merge_map(target, patch, path),
        (target, patch) => {
            *target = clean(patch);
            Ok(())
        }
    }
}

fn merge_map(
    target: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    match directive(patch) {
        Some("replace") => {
            *target = patch
                .iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), clean(v)))
                .collect();
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => {
            return Err(format!(
                "{}: unknown $patch directive {other:?}",
                shown(path)
            ));
        }
    }
    if let Some(retain) = patch.get("$retainKeys") {
        let keep: Vec<&str> = retain
            .as_array()
            .ok_or_else(|| format!("{}: $retainKeys must be a list", shown(path)))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        target.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Some(gone)) =
                (target.get_mut(field), value.as_array())
            {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        let child_path = format!("{path}.{key}");
        if value.is_null() {
            target.remove(key);
            continue;
        }
        let key_for_list = match value {
            Value::Array(_) => merge_key(key, target),
            _ => None,
        };
        match (target.get_mut(key), value) {
            (Some(Value::Array(existing)), Value::Array(items)) => {
                if let Some(merge_key) = key_for_list {
                    merge_list(existing, items, merge_key, &child_path)?;
                } else if key == "finalizers" {
                    for item in items {
                        if !existing.contains(item) {
                            existing.push(item.clone());
                        }
                    }
                } else {
                    *existing = items.iter().map(clean).collect();
                }
            }
            (Some(existing @ Value::Object(_)), Value::Object(_)) => {
                merge_value(existing, value, &child_path)?;
            }
            (Some(existing), _) => *existing = without_deleted_items(value),
            (None, _) => {
                target.insert(key.clone(), without_deleted_items(value));
            }
        }
    }
    Ok(())
}

/// A patch list put where the target had none: items asking to be deleted have nothing to
/// delete.
fn without_deleted_items(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| !item_says(i, "delete"))
                .map(clean)
                .collect(),
        ),
        other => clean(other),
    }
}

fn merge_list(
    existing: &mut Vec<Value>,
    items: &[Value],
    key: &str,
    path: &str,
) -> Result<(), String> {
    if items.iter().any(|i| item_says(i, "replace")) {
        *existing = items
            .iter()
            .filter(|i| !item_says(i, "replace"))
            .map(clean)
            .collect();
        return Ok(());
    }
    for item in items {
        let Some(patch_item) = item.as_object() else {
            return Err(format!(
                "{}: items must be objects with {key:?} (merge key)",
                shown(path)
            ));
        };
        let Some(wanted) = patch_item.get(key) else {
            return Err(format!(
                "{}: an item has no {key:?} (merge key)",
                shown(path)
            ));
        };
        let position = existing.iter().position(|e| e.get(key) == Some(wanted));
        match (position, directive(patch_item)) {
            (Some(i), Some("delete")) => {
                existing.remove(i);
            }
            (None, Some("delete")) => {}
            (Some(i), _) => {
                merge_value(&mut existing[i], item, &format!("{path}[{key}={wanted}]"))?
            }
            (None, _) => existing.push(clean(item)),
        }
    }
    Ok(())
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "finalizers": ["a"]},
        "spec": {"replicas": 1, "template": {"spec": {
            "containers": [
                {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                 "ports": [{"containerPort": 80, "name": "http"}]},
                {"name": "sidecar", "image": "side:1"}
            ],
            "tolerations": [{"key": "x"}]
        }}}})
    }

    #[test]
    fn lists_with_merge_keys_merge_item_by_item() {
        let mut target = deployment();
        let patch = json!({"metadata": {"finalizers": ["b"]}, "spec": {"replicas": 3, "template": {"spec": {
            "containers": [
                {"name": "app", "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}, {"name": "A", "$patch": "delete"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "sidecar", "$patch": "delete"},
                {"name": "new", "image": "new:1"}
            ],
            "tolerations": [{"key": "y"}]
        }}}});
        apply(&mut target, &patch, true).unwrap();
        let spec = &target["spec"]["template"]["spec"];
        assert_eq!(target["spec"]["replicas"], 3);
        assert_eq!(target["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(spec["containers"].as_array().unwrap().len(), 2);
        assert_eq!(spec["containers"][0]["image"], "app:1");
        assert_eq!(
            spec["containers"][0]["env"],
            json!([{"name": "B", "value": "two"}, {"name": "C", "value": "3"}])
        );
        assert_eq!(
            spec["containers"][0]["ports"],
            json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}])
        );
        assert_eq!(
            spec["containers"][1],
            json!({"name": "new", "image": "new:1"})
        );
        assert_eq!(spec["tolerations"], json!([{"key": "y"}]));
    }

    #[test]
    fn directives_replace_delete_and_retain() {
        let mut target = deployment();
        let patch = json!({"spec": {"template": {"spec": {"$patch": "replace", "containers": [{"name": "only", "image": "o:1"}]}}},
            "metadata": {"finalizers": null}});
        apply(&mut target, &patch, true).unwrap();
        assert_eq!(
            target["spec"]["template"]["spec"],
            json!({"containers": [{"name": "only", "image": "o:1"}]})
        );
        assert!(target["metadata"].get("finalizers").is_none());
        let mut retained = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        apply(
            &mut retained,
            &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            true,
        )
        .unwrap();
        assert_eq!(retained["spec"]["strategy"], json!({"type": "Recreate"}));
        let refused = apply(
            &mut deployment(),
            &json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
            true,
        )
        .unwrap_err();
        assert_eq!(
            refused,
            ".spec.template.spec.containers: an item has no \"name\" (merge key)"
        );
    }

    #[test]
    fn custom_resources_get_a_json_merge_patch() {
        assert!(!is_builtin("example.com/v1"));
        assert!(is_builtin("networking.k8s.io/v1") && is_builtin("apps/v1") && is_builtin("v1"));
        let mut target =
            json!({"spec": {"items": [{"name": "a"}, {"name": "b"}], "keep": 1, "drop": 2}});
        apply(
            &mut target,
            &json!({"spec": {"items": [{"name": "c"}], "drop": null}}),
            false,
        )
        .unwrap();
        assert_eq!(
            target,
            json!({"spec": {"items": [{"name": "c"}], "keep": 1}})
        );
    }
}
