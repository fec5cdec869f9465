//! `uninstall`, Helm v3's flow (helm-internals §3.5): mark the last record `uninstalling`,
//! delete the manifest's objects in uninstall order (objects annotated
//! `helm.sh/resource-policy` are left alone), then either delete every record (default) or
//! keep them with the last one `uninstalled` (`keep-history`). CRDs are never deleted.
//!
//! Not implemented yet: delete hooks (refused unless hooks are disabled), `wait` for the
//! objects to be gone.

use capstan_helm::release::Status;
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    Error, ErrorCode, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::UninstallOptions;

use crate::objects;
use crate::store::{self, describe, with_context};

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
    if options.wait {
        return Err(Error::new(
            ErrorCode::Unsupported,
            "backend-helm3: `wait` on uninstall is not implemented in this build",
        ));
    }
    let delete_hooks: Vec<&str> = last
        .hooks
        .iter()
        .filter(|h| {
            h.events
                .iter()
                .any(|e| e == "pre-delete" || e == "post-delete")
        })
        .map(|h| h.path.as_str())
        .collect();
    if !delete_hooks.is_empty() && !options.disable_hooks {
        return Err(Error::new(
            ErrorCode::Unsupported,
            format!(
                "backend-helm3: hooks are not implemented in this build; the release has delete hooks ({}); disable hooks to proceed without them",
                delete_hooks.join(", ")
            ),
        ));
    }
    let mut record = last.clone();
    if let Some(info) = record.info.as_mut() {
        info.status = Status::Uninstalling;
        info.deleted = store::now_text();
        info.description = "Deletion in progress (or silently failed)".into();
    }
    store::update(&record)?;
    let mut targets = objects::parse_manifest(&record.manifest, &id.namespace)?;
    objects::sort_for_uninstall(&mut targets);
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
        kube::delete(&object.reference, Propagation::Background).map_err(|e| {
            with_context(
                e,
                &format!("uninstall {}: delete {}", describe(id), object.describe()),
            )
        })?;
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
