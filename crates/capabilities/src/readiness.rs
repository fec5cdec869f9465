//! Whether a Kubernetes object is ready, judged from its JSON the way Helm's `--wait` does
//! for the kinds it knows (and "exists" for every other kind). A Job that failed or a Pod
//! whose phase is `Failed` can never become ready: such verdicts are final, so a wait ends
//! at once instead of running into its timeout.

use serde_json::Value;

/// Readiness of one object: ready or not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the object is ready.
    pub ready: bool,
    /// A sentence saying why.
    pub message: String,
    /// The object can never become ready (a failed Job or Pod): waiting longer is useless.
    pub failed: bool,
}

impl Verdict {
    fn ready(message: impl Into<String>) -> Self {
        Verdict {
            ready: true,
            message: message.into(),
            failed: false,
        }
    }
    fn waiting(message: impl Into<String>) -> Self {
        Verdict {
            ready: false,
            message: message.into(),
            failed: false,
        }
    }
    fn failed(message: impl Into<String>) -> Self {
        Verdict {
            ready: false,
            message: message.into(),
            failed: true,
        }
    }
    /// Whether waiting is over: ready, or never going to be.
    pub fn is_final(&self) -> bool {
        self.ready || self.failed
    }
}

fn int(value: &Value, pointer: &str) -> i64 {
    value.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn true_condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| {
            conditions
                .iter()
                .find(|c| c["type"] == kind && c["status"] == "True")
        })
}

fn condition_true(object: &Value, kind: &str) -> bool {
    true_condition(object, kind).is_some()
}

/// `reason: message` of a condition, as far as it has them.
fn explain(condition: &Value) -> String {
    let text = |key: &str| condition[key].as_str().filter(|t| !t.is_empty());
    match (text("reason"), text("message")) {
        (Some(r), Some(m)) => format!("{r}: {m}"),
        (Some(t), None) | (None, Some(t)) => t.to_owned(),
        (None, None) => "no reason given".to_owned(),
    }
}

/// Judge an object of `kind` (None when it does not exist).
pub fn judge(kind: &str, object: Option<&Value>) -> Verdict {
    let Some(object) = object else {
        return Verdict::waiting("does not exist");
    };
    let generation = int(object, "/metadata/generation");
    let observed = int(object, "/status/observedGeneration");
    let stale = observed < generation
        && (object.pointer("/status/observedGeneration").is_some()
            || matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet"));
    match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" => {
            if stale {
                return Verdict::waiting(format!("generation {generation} not observed yet"));
            }
            let wanted = object
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let ready = int(object, "/status/readyReplicas");
            let updated = if kind == "ReplicaSet" {
                ready
            } else {
                int(object, "/status/updatedReplicas")
            };
            // Pods of older revisions still counted: the rollout is not over, and ready
            // replicas may be old ones (Helm judges the new ReplicaSet alone).
            let total = int(object, "/status/replicas");
            if updated < wanted {
                Verdict::waiting(format!("{updated} of {wanted} replicas updated"))
            } else if kind == "Deployment" && total > updated {
                Verdict::waiting(format!(
                    "rollout in progress: {} old replicas pending termination",
                    total - updated
                ))
            } else if ready < wanted {
                Verdict::waiting(format!("{ready} of {wanted} replicas ready"))
            } else {
                Verdict::ready(format!("{ready} of {wanted} replicas ready"))
            }
        }
        "DaemonSet" => {
            if stale {
                return Verdict::waiting(format!("generation {generation} not observed yet"));
            }
            let wanted = int(object, "/status/desiredNumberScheduled");
            let ready = int(object, "/status/numberReady");
            if ready < wanted {
                Verdict::waiting(format!("{ready} of {wanted} pods ready"))
            } else {
                Verdict::ready(format!("{ready} of {wanted} pods ready"))
            }
        }
        "Pod" => {
            if object.pointer("/status/phase") == Some(&Value::from("Failed")) {
                let reason = object
                    .pointer("/status/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                return Verdict::failed(format!("pod failed ({reason})"));
            }
            if condition_true(object, "Ready")
                || object.pointer("/status/phase") == Some(&Value::from("Succeeded"))
            {
                Verdict::ready("pod ready")
            } else {
                Verdict::waiting("pod not ready")
            }
        }
        "Job" => {
            if let Some(failed) = true_condition(object, "Failed") {
                Verdict::failed(format!("job failed: {}", explain(failed)))
            } else if condition_true(object, "Complete") {
                Verdict::ready("job complete")
            } else {
                Verdict::waiting("job not complete")
            }
        }
        "PersistentVolumeClaim" => match object.pointer("/status/phase").and_then(Value::as_str) {
            Some("Bound") => Verdict::ready("claim bound"),
            phase => Verdict::waiting(format!("claim {}", phase.unwrap_or("pending"))),
        },
        "Service" => {
            let is_lb = object.pointer("/spec/type") == Some(&Value::from("LoadBalancer"));
            let ingress = object
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .is_some_and(|i| !i.is_empty());
            if is_lb && !ingress {
                Verdict::waiting("load balancer has no ingress yet")
            } else {
                Verdict::ready("service exists")
            }
        }
        "CustomResourceDefinition" => {
            if condition_true(object, "Established") {
                Verdict::ready("established")
            } else {
                Verdict::waiting("not established yet")
            }
        }
        _ => Verdict::ready("exists"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployments_need_observed_generation_and_ready_replicas() {
        let mut deployment = json!({
            "metadata": {"generation": 2},
            "spec": {"replicas": 3},
            "status": {"observedGeneration": 1, "updatedReplicas": 3, "readyReplicas": 3}
        });
        assert!(!judge("Deployment", Some(&deployment)).ready);
        deployment["status"]["observedGeneration"] = json!(2);
        deployment["status"]["readyReplicas"] = json!(2);
        assert_eq!(
            judge("Deployment", Some(&deployment)).message,
            "2 of 3 replicas ready"
        );
        deployment["status"]["readyReplicas"] = json!(3);
        assert!(judge("Deployment", Some(&deployment)).ready);
        // A rollout whose new pods are not ready yet while old ones still serve.
        deployment["status"]["replicas"] = json!(4);
        deployment["status"]["updatedReplicas"] = json!(3);
        assert!(!judge("Deployment", Some(&deployment)).ready);
    }

    #[test]
    fn jobs_crds_pvcs_and_missing_objects() {
        let job = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert!(judge("Job", Some(&job)).ready);
        let failed = json!({"status": {"conditions": [
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "Job was active longer than specified deadline"}
        ]}});
        let verdict = judge("Job", Some(&failed));
        assert!(verdict.failed && !verdict.ready, "{verdict:?}");
        assert!(verdict.message.contains("DeadlineExceeded"), "{verdict:?}");
        let crd = json!({"status": {"conditions": [{"type": "Established", "status": "False"}]}});
        assert!(!judge("CustomResourceDefinition", Some(&crd)).ready);
        let pvc = json!({"status": {"phase": "Pending"}});
        assert_eq!(
            judge("PersistentVolumeClaim", Some(&pvc)).message,
            "claim Pending"
        );
        assert!(!judge("ConfigMap", None).ready);
        assert!(judge("ConfigMap", Some(&json!({}))).ready);
    }
}
