//! The last log lines of a failed Pod or Job, added to the readiness verdict the host gives
//! a backend waiting on it, so that a failed hook is reported with what it printed (in the
//! release's condition and Event), as `kubectl logs` would show it. Read with the identity
//! of the call; when the logs cannot be read (no `pods/log` right, no kubelet, a pod
//! already gone) the verdict says so instead and nothing else changes.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, LogParams};
use kube::{Api, Client};
use serde_json::Value;

/// Lines kept per container.
pub const TAIL_LINES: i64 = 10;
/// Longest text kept per container (bytes), whatever the lines.
const MAX_BYTES: usize = 2048;

/// `message`, followed by the last log lines of the failed `kind` (`Pod` or `Job`) named
/// `name` in `namespace` whose last state is `object`.
pub async fn with_logs(
    client: &Client,
    kind: &str,
    namespace: &str,
    name: &str,
    object: Option<&Value>,
    message: String,
) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let failed_pod = match kind {
        "Pod" => object
            .and_then(|o| serde_json::from_value::<Pod>(o.clone()).ok())
            .or(pods.get_opt(name).await.ok().flatten()),
        "Job" => newest_failed_pod_of_job(&pods, name).await,
        _ => return message,
    };
    // A Job whose pods never ran (e.g. its deadline passed first) has nothing to show.
    let Some(pod) = failed_pod else {
        return message;
    };
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let containers: Vec<String> = pod
        .spec
        .as_ref()
        .map(|spec| spec.containers.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default();
    let mut text = message;
    for container in containers {
        let params = LogParams {
            container: Some(container.clone()),
            tail_lines: Some(TAIL_LINES),
            ..LogParams::default()
        };
        match pods.logs(&pod_name, &params).await {
            Ok(logs) => {
                let logs = tail_bytes(logs.trim_end(), MAX_BYTES);
                if logs.is_empty() {
                    text.push_str(&format!("; pod {pod_name} container {container}: no logs"));
                } else {
                    text.push_str(&format!(
                        "; last log lines of pod {pod_name} container {container}:\n{logs}"
                    ));
                }
            }
            Err(error) => text.push_str(&format!(
                "; logs of pod {pod_name} container {container} unavailable: {}",
                short_error(&error)
            )),
        }
    }
    text
}

/// The most recently created pod of Job `job` whose phase is `Failed`. Pods carry the
/// `batch.kubernetes.io/job-name` label since Kubernetes 1.27, only `job-name` before.
async fn newest_failed_pod_of_job(pods: &Api<Pod>, job: &str) -> Option<Pod> {
    let mut found = Vec::new();
    for label in ["batch.kubernetes.io/job-name", "job-name"] {
        let selector = format!("{label}={job}");
        if let Ok(list) = pods.list(&ListParams::default().labels(&selector)).await {
            found = list.items;
        }
        if !found.is_empty() {
            break;
        }
    }
    found
        .into_iter()
        .filter(|pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))
        .max_by(|a, b| {
            a.metadata
                .creation_timestamp
                .cmp(&b.metadata.creation_timestamp)
        })
}

/// The end of `text`, at most `max` bytes, cut at a line start when possible.
fn tail_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let tail = &text[start..];
    match tail.find('\n') {
        Some(line) => &tail[line + 1..],
        None => tail,
    }
}

fn short_error(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_logs_keep_their_last_whole_lines() {
        let text = "first line\nsecond line\nthird line";
        assert_eq!(tail_bytes(text, 100), text);
        assert_eq!(tail_bytes(text, 15), "third line");
        assert_eq!(tail_bytes("ééé", 3), "é");
    }
}
