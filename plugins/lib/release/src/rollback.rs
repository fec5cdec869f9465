//! `rollback`, Helm v3's flow (helm-internals §3.6): a new revision `last + 1` copies the
//! chart, values, manifest, hooks and notes of the target revision (the one asked for, or
//! the newest `deployed`/`superseded` revision before the last), is written
//! `pending-rollback` with description `Rollback to N`, then pre-rollback hooks, apply
//! (objects the current revision has and the target lacks are deleted), wait when asked,
//! post-rollback hooks; every `deployed` revision becomes `superseded` and the new one
//! `deployed`. On failure the current revision becomes `superseded` and the new one
//! `failed`, with the cause. History is pruned to `max-history` first, as for upgrades.

use capstan_helm::release::{Info, Release, Status, revisions_to_prune};
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    Error, ErrorCode, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::SyncOptions;

use crate::objects;
use crate::store::{self, describe, with_context};
use crate::sync::{self, Steps};
use crate::wait::Deadline;

/// Roll `id` back to `revision` (or the previous deployed one).
pub fn rollback(
    id: &ReleaseId,
    revision: Option<u32>,
    options: &SyncOptions,
) -> Result<ReleaseInfo, Error> {
    sync::validate_name(&id.name)?;
    let deadline = Deadline::start(options.timeout_seconds);
    let mut history = store::history(id)?;
    if let Some(last) = history.last_mut()
        && last.status().is_pending()
    {
        sync::unlock(id, last)?;
    }
    let Some(current) = history.last() else {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("release {}: not found", describe(id)),
        ));
    };
    let wanted = match revision {
        Some(0) | None => history
            .iter()
            .rev()
            .skip(1)
            .find(|r| matches!(r.status(), Status::Deployed | Status::Superseded))
            .map(|r| r.version)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "release {}: no deployed revision before revision {} to roll back to",
                        describe(id),
                        current.version
                    ),
                )
            })?,
        Some(n) => n,
    };
    let Some(target) = history.iter().find(|r| r.version == wanted) else {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("release {}: release has no {wanted} version", describe(id)),
        ));
    };
    let current_info = current.info.clone().unwrap_or_default();
    let mut record = Release {
        name: id.name.clone(),
        info: Some(Info {
            first_deployed: current_info.first_deployed.clone(),
            last_deployed: store::now_text(),
            deleted: String::new(),
            description: options
                .description
                .clone()
                .unwrap_or_else(|| format!("Rollback to {wanted}")),
            status: Status::PendingRollback,
            notes: target
                .info
                .as_ref()
                .map(|i| i.notes.clone())
                .unwrap_or_default(),
        }),
        chart: target.chart.clone(),
        config: target.config.clone(),
        manifest: target.manifest.clone(),
        hooks: target.hooks.clone(),
        version: current.version + 1,
        namespace: id.namespace.clone(),
        labels: target.labels.clone(),
    };
    let previous = objects::parse_manifest(&current.manifest, &id.namespace)?;
    let objects = sync::manifest_objects(id, &record.manifest)?;
    let statuses: Vec<(u32, Status)> = history.iter().map(|r| (r.version, r.status())).collect();
    let pruned = revisions_to_prune(&statuses, options.max_history);
    for version in &pruned {
        store::delete(id, *version)?;
    }
    store::create(&record)?;
    let steps = Steps {
        events: ("pre-rollback", "post-rollback"),
        hooks: !options.disable_hooks,
        wait: options.wait,
        force: options.force,
        deadline: &deadline,
    };
    let mut created = Vec::new();
    if let Err(error) = steps.run(id, &mut record, &objects, &previous, &mut created) {
        let message = format!("Rollback \"{}\" failed: {}", id.name, error.message);
        let mut old = current.clone();
        if let Some(info) = old.info.as_mut() {
            info.status = Status::Superseded;
        }
        if let Some(info) = record.info.as_mut() {
            info.status = Status::Failed;
            info.description = message.clone();
        }
        if !pruned.contains(&old.version) {
            store::update(&old)?;
        }
        store::update(&record)?;
        return Err(Error {
            message: format!(
                "rollback of {} to revision {wanted} failed: {}; revision {} is recorded failed",
                describe(id),
                error.message,
                record.version
            ),
            ..error
        });
    }
    for other in &history {
        if other.status() == Status::Deployed && !pruned.contains(&other.version) {
            let mut other = other.clone();
            if let Some(info) = other.info.as_mut() {
                info.status = Status::Superseded;
            }
            store::update(&other).map_err(|e| with_context(e, "supersede"))?;
        }
    }
    if let Some(info) = record.info.as_mut() {
        info.status = Status::Deployed;
    }
    store::update(&record)?;
    Ok(store::info(&record))
}
