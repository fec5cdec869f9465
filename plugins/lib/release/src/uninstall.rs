//! `uninstall`, Helm v3's flow (helm-internals §3.5): mark the last record `uninstalling`,
//! delete the manifest's objects in uninstall order (objects annotated
//! `helm.sh/resource-policy` are left alone, and so are objects whose Helm ownership
//! metadata no longer names this release), then either delete every record (default) or
//! keep them with the last one `uninstalled` (`keep-history`). CRDs are never deleted.
//!
//! `pre-delete` hooks run before the deletions and `post-delete` hooks after them (and
//! after `wait` for the deleted objects to be gone), within `timeout-seconds`.

use capstan_helm::release::Status;
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    Error, ErrorCode, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::UninstallOptions;

use crate::hooks;
use crate::objects;
use crate::store::{self, describe, with_context};
use crate::wait::{self, Deadline};

/// Remove the release; None when it does not exist.
pub fn uninstall(id: &ReleaseId, options: &UninstallOptions) -> Result<Option<ReleaseInfo>, Error> {
    let history = store::history(id)?;
    let Some(last) = history.last() else {
        return Ok(None);
    };
    if last.status() == Status::Uninstalled {
        if options.keep_history {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!("release {}: already deleted", describe(id)),
            ));
        }
        for record in &history {
            store::delete(id, record.version)?;
        }
        return Ok(Some(store::info(last)));
    }
    let deadline = Deadline::start(options.timeout_seconds);
    let mut record = last.clone();
    if let Some(info) = record.info.as_mut() {
        info.status = Status::Uninstalling;
        info.deleted = store::now_text();
        info.description = "Deletion in progress (or silently failed)".into();
    }
    let mut hook_objects = Vec::new();
    if !options.disable_hooks {
        hooks::run(&mut record, "pre-delete", &deadline, &mut hook_objects)
            .map_err(|e| with_context(e, &format!("uninstall {}", describe(id))))?;
    }
    store::update(&record)?;
    let mut targets = objects::parse_manifest(&record.manifest, &id.namespace)?;
    objects::sort_for_uninstall(&mut targets);
    let mut kept = Vec::new();
    for object in &targets {
        if let Some(policy) = object.annotation(objects::RESOURCE_POLICY) {
            log(
                Level::Info,
                &format!(
                    "{} kept due to the resource policy ({policy})",
                    object.describe()
                ),
            );
            continue;
        }
        // Only what is still the release's: an object someone else has taken over (its
        // ownership metadata names another release, or none) is left alone.
        let found = objects::live(&object.reference)
            .map_err(|e| with_context(e, &format!("uninstall {}", describe(id))))?;
        let Some(found) = found else {
            continue;
        };
        if let Some(why) = objects::not_ours(&found, &id.name, &id.namespace) {
            log(
                Level::Warn,
                &format!("{} not deleted: {why}", object.describe()),
            );
            kept.push(object.identity());
            continue;
        }
        kube::delete(&object.reference, Propagation::Background).map_err(|e| {
            with_context(
                e,
                &format!("uninstall {}: delete {}", describe(id), object.describe()),
            )
        })?;
    }
    if options.wait {
        for object in &targets {
            if object.annotation(objects::RESOURCE_POLICY).is_none()
                && !kept.contains(&object.identity())
            {
                wait::gone(&object.reference, &deadline)
                    .map_err(|e| with_context(e, &format!("uninstall {}", describe(id))))?;
            }
        }
    }
    if !options.disable_hooks {
        hooks::run(&mut record, "post-delete", &deadline, &mut hook_objects)
            .map_err(|e| with_context(e, &format!("uninstall {}", describe(id))))?;
    }
    if let Some(info) = record.info.as_mut() {
        info.status = Status::Uninstalled;
        info.description = "Uninstallation complete".into();
    }
    if options.keep_history {
        for other in &history {
            if other.version != record.version && other.status() == Status::Deployed {
                let mut other = other.clone();
                if let Some(info) = other.info.as_mut() {
                    info.status = Status::Superseded;
                }
                store::update(&other)?;
            }
        }
        store::update(&record)?;
    } else {
        for other in &history {
            store::delete(id, other.version)?;
        }
    }
    Ok(Some(store::info(&record)))
}
