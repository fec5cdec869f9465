//! Drift detection (Flux's `driftDetection`): when a sync finds the release unchanged and
//! the host's `release-context` asks for it, each object of the deployed revision is
//! compared with the cluster: the live object against what a server-side apply of the
//! release's object would make of it (a dry run), both without server-kept metadata,
//! `status` and the fields the host says to ignore. A missing or differing object is
//! drift; with `correct` it is applied again (ignored fields left out), without a new
//! revision. The drifted objects are reported to the host.

use capstan_helm::release::Release;
use capstan_plugin_sdk::backend::capstan::plugin::kube;
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::release_context::{self, DriftedObject};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ReleaseId};
use serde_json::Value;

use crate::store::{describe, with_context};

/// Most differing fields named per object.
const MAX_PATHS: usize = 8;

/// Check `deployed` for drift if the host asks, and report what drifted.
pub fn check_if_asked(id: &ReleaseId, deployed: &Release) {
    let Some(options) = release_context::drift() else {
        return;
    };
    match check(id, deployed, options.correct) {
        Ok(drifted) => release_context::report_drift(&drifted),
        Err(e) => log(
            Level::Warn,
            &format!("drift check of {}: {}", describe(id), e.message),
        ),
    }
}

fn check(id: &ReleaseId, deployed: &Release, correct: bool) -> Result<Vec<DriftedObject>, Error> {
    let mut drifted = Vec::new();
    for object in crate::sync::manifest_objects(id, &deployed.manifest)? {
        let desired_text = object.body.to_string();
        let ignored = release_context::drift_ignored_paths(&desired_text);
        let what = object.describe();
        let live =
            kube::get(&object.reference).map_err(|e| with_context(e, &format!("read {what}")))?;
        let difference = match live {
            None => Some("missing".to_owned()),
            Some(live) => {
                let dry = kube::apply_dry_run(&desired_text, true)
                    .map_err(|e| with_context(e, &format!("dry-run apply of {what}")))?;
                let paths = differences(
                    &comparable(parse(&live)?, &ignored),
                    &comparable(parse(&dry)?, &ignored),
                );
                (!paths.is_empty()).then(|| paths.join(", "))
            }
        };
        let Some(difference) = difference else {
            continue;
        };
        if correct {
            let mut body = object.body.clone();
            for path in &ignored {
                remove_pointer(&mut body, path);
            }
            kube::apply(&body.to_string(), true)
                .map_err(|e| with_context(e, &format!("correct the drift of {what}")))?;
        }
        log(
            Level::Info,
            &format!(
                "{}: {what} drifted ({difference}){}",
                describe(id),
                if correct { "; put back" } else { "" }
            ),
        );
        drifted.push(DriftedObject {
            object: object.reference.clone(),
            difference,
            corrected: correct,
        });
    }
    Ok(drifted)
}

fn parse(json: &str) -> Result<Value, Error> {
    serde_json::from_str(json)
        .map_err(|e| crate::store::internal(format!("object is not JSON: {e}")))
}

/// `object` without what the API server keeps for itself, `status`, and `ignored`.
fn comparable(mut object: Value, ignored: &[String]) -> Value {
    for path in [
        "/status",
        "/metadata/managedFields",
        "/metadata/resourceVersion",
        "/metadata/generation",
        "/metadata/uid",
        "/metadata/creationTimestamp",
        "/metadata/selfLink",
    ] {
        remove_pointer(&mut object, path);
    }
    for path in ignored {
        remove_pointer(&mut object, path);
    }
    object
}

/// Remove the field at JSON pointer `path` (RFC 6901), if present.
pub fn remove_pointer(value: &mut Value, path: &str) {
    let Some(rest) = path.strip_prefix('/') else {
        return;
    };
    let tokens: Vec<String> = rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, parents)) = tokens.split_last() else {
        return;
    };
    let mut current = value;
    for token in parents {
        current = match current {
            Value::Object(map) => match map.get_mut(token) {
                Some(next) => next,
                None => return,
            },
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get_mut(i))
            {
                Some(next) => next,
                None => return,
            },
            _ => return,
        };
    }
    match current {
        Value::Object(map) => {
            map.remove(last);
        }
        Value::Array(items) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|&i| i < items.len()) {
                items.remove(i);
            }
        }
        _ => {}
    }
}

/// JSON pointers where `live` and `desired` differ (at most [`MAX_PATHS`]).
fn differences(live: &Value, desired: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(live, desired, String::new(), &mut out);
    out
}

fn walk(live: &Value, desired: &Value, path: String, out: &mut Vec<String>) {
    if out.len() >= MAX_PATHS || live == desired {
        return;
    }
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match (live, desired) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child = format!("{path}/{}", escape(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => walk(x, y, child, out),
                    _ => {
                        if out.len() < MAX_PATHS {
                            out.push(child);
                        }
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                walk(x, y, format!("{path}/{i}"), out);
            }
        }
        _ => out.push(if path.is_empty() { "/".into() } else { path }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_changed_fields_and_ignore_server_fields() {
        let live = json!({"metadata": {"name": "a", "resourceVersion": "9", "labels": {"x/y": "1"}},
            "spec": {"replicas": 3, "ports": [{"port": 80}]}, "status": {"ready": 1}});
        let desired = json!({"metadata": {"name": "a", "resourceVersion": "10", "labels": {"x/y": "2"}},
            "spec": {"replicas": 1, "ports": [{"port": 80}]}, "status": {}});
        let none: Vec<String> = Vec::new();
        assert_eq!(
            differences(
                &comparable(live.clone(), &none),
                &comparable(desired.clone(), &none)
            ),
            ["/metadata/labels/x~1y", "/spec/replicas"]
        );
        let ignored = vec![
            "/spec/replicas".to_owned(),
            "/metadata/labels/x~1y".to_owned(),
        ];
        assert!(
            differences(&comparable(live, &ignored), &comparable(desired, &ignored)).is_empty()
        );
    }

    #[test]
    fn pointers_reach_into_lists_and_escape() {
        let mut value = json!({"a": [{"b~c": 1, "d": 2}]});
        remove_pointer(&mut value, "/a/0/b~0c");
        assert_eq!(value, json!({"a": [{"d": 2}]}));
        remove_pointer(&mut value, "/a/5/d");
        remove_pointer(&mut value, "nope");
        assert_eq!(value, json!({"a": [{"d": 2}]}));
    }
}
