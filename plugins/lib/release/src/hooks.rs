//! Helm hooks (helm-internals §3.4, `execHook`): the hooks of one event run in order of
//! weight, then name; each is created (an old copy is first deleted per
//! `before-hook-creation`, the default policy), Jobs and Pods are awaited until they
//! complete (a failed Job or Pod fails the hook, naming it), other kinds are done once
//! created. A failed hook is deleted per `hook-failed` and the hooks before it per
//! `hook-succeeded`; when all succeed they are deleted per `hook-succeeded`, last first.
//! Each hook's last run (start, completion, phase) is kept in the release record, as Helm
//! does, so `helm get hooks` and `helm status` show them. Hook objects carry no ownership
//! metadata: they are not release resources.

use capstan_helm::release::{HookRecord, Release};
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode};

use crate::objects;
use crate::store::{self, with_context};
use crate::wait::{self, Deadline};

const BEFORE_CREATION: &str = "before-hook-creation";
const SUCCEEDED: &str = "hook-succeeded";
const FAILED: &str = "hook-failed";

/// Run the hooks of `event` of `record`, updating their last run in the record (which is
/// written when each hook starts). `created` collects the hook objects this run created.
pub fn run(
    record: &mut Release,
    event: &str,
    deadline: &Deadline,
    created: &mut Vec<ObjectRef>,
) -> Result<(), Error> {
    let batch = order(&record.hooks, event);
    for (position, &index) in batch.iter().enumerate() {
        if record.hooks[index].delete_policies.is_empty() {
            record.hooks[index].delete_policies = vec![BEFORE_CREATION.to_owned()];
        }
        let object = hook_object(&record.hooks[index], &record.namespace)?;
        delete_by_policy(&record.hooks[index], &object, BEFORE_CREATION, deadline)?;
        record.hooks[index].last_run.started_at = store::now_text();
        record.hooks[index].last_run.completed_at = String::new();
        record.hooks[index].last_run.phase = "Running".into();
        store::update(record)?;
        record.hooks[index].last_run.phase = "Unknown".into();
        log(
            Level::Info,
            &format!("running {event} hook {}", object.describe()),
        );
        let outcome = execute(&record.hooks[index], &object, deadline, created);
        record.hooks[index].last_run.completed_at = store::now_text();
        match outcome {
            Ok(()) => record.hooks[index].last_run.phase = "Succeeded".into(),
            Err(error) => {
                record.hooks[index].last_run.phase = "Failed".into();
                if let Err(e) = delete_by_policy(&record.hooks[index], &object, FAILED, deadline) {
                    log(
                        Level::Warn,
                        &format!("deleting failed hook {}: {}", object.describe(), e.message),
                    );
                }
                for &earlier in &batch[..position] {
                    let hook = &record.hooks[earlier];
                    let earlier_object = hook_object(hook, &record.namespace)?;
                    delete_by_policy(hook, &earlier_object, SUCCEEDED, deadline)?;
                }
                return Err(Error {
                    message: format!(
                        "{event} hook {} ({}) failed: {}",
                        object.describe(),
                        record.hooks[index].path,
                        error.message
                    ),
                    ..error
                });
            }
        }
    }
    for &index in batch.iter().rev() {
        let hook = &record.hooks[index];
        let object = hook_object(hook, &record.namespace)?;
        delete_by_policy(hook, &object, SUCCEEDED, deadline)?;
    }
    Ok(())
}

/// Indexes of the hooks of `event`, in execution order: weight, then name; hooks come in
/// kind order and the sort is stable.
fn order(hooks: &[HookRecord], event: &str) -> Vec<usize> {
    let mut batch: Vec<usize> = (0..hooks.len())
        .filter(|&i| hooks[i].events.iter().any(|e| e == event))
        .collect();
    batch.sort_by(|&a, &b| {
        let (x, y) = (&hooks[a], &hooks[b]);
        (x.weight, &x.name).cmp(&(y.weight, &y.name))
    });
    batch
}

fn hook_object(hook: &HookRecord, namespace: &str) -> Result<objects::Object, Error> {
    objects::parse(&hook.path, &hook.manifest, namespace)?.ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidInput,
            format!("hook {} has no object", hook.path),
        )
    })
}

/// Create the hook's object and, for Jobs and Pods, wait until it completes.
fn execute(
    hook: &HookRecord,
    object: &objects::Object,
    deadline: &Deadline,
    created: &mut Vec<ObjectRef>,
) -> Result<(), Error> {
    kube::create(&object.body.to_string())
        .map_err(|e| with_context(e, &format!("create {}", object.describe())))?;
    created.push(object.reference.clone());
    if matches!(hook.kind.as_str(), "Job" | "Pod") {
        wait::ready(std::slice::from_ref(&object.reference), deadline)?;
    }
    if hook.kind == "Pod" {
        wait::pod_completed(&object.reference, deadline)?;
    }
    Ok(())
}

/// Delete the hook's object (and wait until it is gone) when it has `policy`. CRDs are
/// never deleted.
fn delete_by_policy(
    hook: &HookRecord,
    object: &objects::Object,
    policy: &str,
    deadline: &Deadline,
) -> Result<(), Error> {
    if hook.kind == "CustomResourceDefinition" || !hook.delete_policies.iter().any(|p| p == policy)
    {
        return Ok(());
    }
    let existed = kube::delete(&object.reference, Propagation::Background)
        .map_err(|e| with_context(e, &format!("delete hook {} ({policy})", object.describe())))?;
    if existed {
        wait::gone(&object.reference, deadline)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(name: &str, kind: &str, events: &[&str], weight: i64) -> HookRecord {
        HookRecord {
            name: name.into(),
            kind: kind.into(),
            events: events.iter().map(|e| (*e).to_owned()).collect(),
            weight,
            ..HookRecord::default()
        }
    }

    #[test]
    fn hooks_run_by_weight_then_name_keeping_kind_order() {
        let hooks = [
            hook("b", "ServiceAccount", &["pre-install"], 0),
            hook("b", "Job", &["pre-install", "pre-upgrade"], 0),
            hook("a", "Job", &["pre-install"], 0),
            hook("z", "Job", &["pre-install"], -1),
            hook("c", "Job", &["post-install"], -5),
        ];
        let names: Vec<_> = order(&hooks, "pre-install")
            .into_iter()
            .map(|i| (hooks[i].name.as_str(), hooks[i].kind.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("z", "Job"),
                ("a", "Job"),
                ("b", "ServiceAccount"),
                ("b", "Job")
            ]
        );
        assert_eq!(order(&hooks, "pre-upgrade"), [1]);
        assert!(order(&hooks, "pre-delete").is_empty());
    }
}
