//! `sync`: install the release when it has no history (or was uninstalled with its history
//! kept), upgrade it otherwise — Helm v3's `install` / `upgrade` flows (helm-internals §3.2,
//! §3.3) over server-side apply.
//!
//! Steps: read the history (a latest record left `pending-*` by an operation that died is
//! marked `failed`, saying so, and the sync proceeds; running operations on one release
//! are serialised by the caller, and two writers of one revision still collide on the
//! record's `create`), render (revision N, `IsInstall`/`IsUpgrade`), prune history to
//! `max-history` (upgrades), write the `pending-install`/`pending-upgrade` record, read every
//! target object first (so a denied namespace or an ownership conflict stops the sync
//! before anything is written), server-side apply every object in Helm's kind order with the
//! ownership label and annotations, delete objects the previous revision had and this one
//! dropped (unless the live object says `helm.sh/resource-policy: keep`), then mark the new
//! record `deployed` and the previous one `superseded`.
//!
//! On failure an `atomic` install removes the objects it created and its record; otherwise
//! the record is left `failed` with the cause (as Helm does). The error names the step and
//! the object.
//!
//! Hooks (`hooks`) run before and after the apply; with `wait` the applied objects are
//! awaited through the host's `wait-ready`, all within `timeout-seconds`.
//!
//! CRDs from `crds/` are handled first, by the request's policy (`crds`); a no-op sync
//! (`plan` finds the deployed revision has the same chart and values) writes nothing and
//! returns `unchanged`; a failed upgrade is rolled back when `rollback-on-failure` asks.
//!
//! With `force`, an object the API server refuses to change in place (immutable fields)
//! is deleted, awaited until gone, and created again.
//!
//! Not implemented yet: `.Capabilities` from
//! the cluster (Helm's defaults are used).

use std::collections::BTreeSet;

use capstan_helm::release::{ChartRecord, HookRecord, Info, Release, Status, revisions_to_prune};
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode, ReleaseId};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    SyncAction, SyncOptions, SyncOutcome, SyncRequest,
};

use crate::crds;
use crate::flavor::{self, Flavor};
use crate::hooks;
use crate::objects::{self, Object};
use crate::plan;
use crate::render::{self, Render};
use crate::rollback;
use crate::store::{self, describe, with_context};
use crate::wait::{self, Deadline};

/// Helm's release name rule (`chartutil.ValidateReleaseName`).
pub fn validate_name(name: &str) -> Result<(), Error> {
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes[0] != b'-'
            && bytes[bytes.len() - 1] != b'-'
    };
    if name.is_empty() || name.len() > 53 || !name.split('.').all(label_ok) {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!(
                "invalid release name {name:?}: must be at most 53 characters of lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
            ),
        ));
    }
    Ok(())
}

fn hook_record(hook: &capstan_helm::output::Hook) -> HookRecord {
    HookRecord {
        name: hook.head.name.clone(),
        kind: hook.head.kind.clone(),
        path: hook.path.clone(),
        manifest: hook.manifest.clone(),
        events: hook.events.clone(),
        weight: hook.weight,
        delete_policies: hook.delete_policies.clone(),
        output_log_policies: hook.output_log_policies.clone(),
        ..HookRecord::default()
    }
}

/// Install or upgrade.
pub fn sync(request: SyncRequest) -> Result<SyncOutcome, Error> {
    let id = &request.release;
    validate_name(&id.name)?;
    let options = &request.options;
    let deadline = Deadline::start(options.timeout_seconds);
    let decision = plan::decide(&request)?;
    if let Some(deployed) = decision.unchanged.filter(|_| !options.upgrade_unchanged) {
        log(
            Level::Info,
            &format!("{}: {}; nothing to do", describe(id), decision.plan.reason),
        );
        crate::drift::check_if_asked(id, &deployed);
        return Ok(SyncOutcome {
            action: SyncAction::Unchanged,
            release: store::info(&deployed),
        });
    }
    let mut history = store::history(id)?;
    if let Some(last) = history.last_mut()
        && last.status().is_pending()
    {
        unlock(id, last)?;
    }
    let last = history.last();
    let install = last.is_none_or(|l| l.status() == Status::Uninstalled);
    let current = if install {
        None
    } else {
        let found = history
            .iter()
            .rev()
            .find(|r| r.status() == Status::Deployed)
            .or_else(|| last.filter(|l| matches!(l.status(), Status::Failed | Status::Superseded)));
        Some(found.ok_or_else(|| {
            Error::new(
                ErrorCode::Conflict,
                format!(
                    "release {}: \"{}\" has no deployed releases",
                    describe(id),
                    id.name
                ),
            )
        })?)
    };
    let revision = last.map_or(1, |l| l.version + 1);
    let rendered = render::render(
        &request.chart,
        render::Request {
            release: id,
            values: &request.values,
            capabilities: crate::live::capabilities()?,
            revision,
            is_upgrade: !install,
            for_record: true,
            lookup: Some(crate::live::lookup()),
            post_render: true,
        },
    )
    .map_err(|e| with_context(e, &format!("render chart {}", request.chart.metadata.name)))?;
    // Helm 2 creates the CRDs of `crd-install` hooks before anything else of an install.
    if install && !options.disable_hooks && flavor::current() == Flavor::Helm2 {
        crds::install_hook_crds(&rendered.assembled.hooks, &id.namespace, &deadline)
            .map_err(|e| with_context(e, &format!("install of {}", describe(id))))?;
    }
    if let Some(chart) = &rendered.chart {
        let policy = if install {
            options.install_crds
        } else {
            options.upgrade_crds
        };
        crds::ensure(chart, &id.namespace, policy, &deadline).map_err(|e| {
            with_context(
                e,
                &format!(
                    "{} of {}: CRDs",
                    if install { "install" } else { "upgrade" },
                    describe(id)
                ),
            )
        })?;
    }
    let now = store::now_text();
    let mut record = new_record(id, &rendered, revision, install, current, &now);
    let target = target_objects(id, &rendered)?;
    let previous = match current {
        Some(c) => objects::parse_manifest(&c.manifest, &id.namespace)?,
        None => Vec::new(),
    };
    if !install && options.max_history > 0 {
        let statuses: Vec<(u32, Status)> =
            history.iter().map(|r| (r.version, r.status())).collect();
        for version in revisions_to_prune(&statuses, options.max_history) {
            store::delete(id, version)?;
        }
    }
    store::create(&record)?;
    log(
        Level::Info,
        &format!(
            "{} {} revision {revision}: {} objects",
            if install { "installing" } else { "upgrading" },
            describe(id),
            target.len()
        ),
    );
    let mut created = Vec::new();
    let steps = Steps {
        events: if install {
            ("pre-install", "post-install")
        } else {
            ("pre-upgrade", "post-upgrade")
        },
        hooks: !options.disable_hooks,
        force: options.force,
        // As in Helm, an atomic install and an upgrade that rolls back on failure wait:
        // readiness is part of success.
        wait: options.wait
            || (install && options.atomic)
            || (!install && options.rollback_on_failure),
        deadline: &deadline,
    };
    match steps.run(id, &mut record, &target, &previous, &mut created) {
        Ok(()) => {
            if let Some(current) = current {
                let mut old = current.clone();
                if let Some(info) = old.info.as_mut() {
                    info.status = Status::Superseded;
                }
                store::update(&old)?;
            }
            if let Some(info) = record.info.as_mut() {
                info.status = Status::Deployed;
                info.description = options.description.clone().unwrap_or_else(|| {
                    if install {
                        "Install complete"
                    } else {
                        "Upgrade complete"
                    }
                    .to_owned()
                });
            }
            store::update(&record)?;
            crate::tests::run_if_asked(&mut record);
            Ok(SyncOutcome {
                action: if install {
                    SyncAction::Installed
                } else {
                    SyncAction::Upgraded
                },
                release: store::info(&record),
            })
        }
        Err(error) => {
            let error = fail(id, &mut record, install, options.atomic, &created, error);
            if install || !options.rollback_on_failure {
                return Err(error);
            }
            Err(roll_back_failed_upgrade(id, options, error))
        }
    }
}

/// `rollback-on-failure`: roll a failed upgrade back to the last deployed revision (Helm's
/// `--atomic` upgrade), within a fresh budget of the same size.
fn roll_back_failed_upgrade(id: &ReleaseId, options: &SyncOptions, error: Error) -> Error {
    let mut again = options.clone();
    again.rollback_on_failure = false;
    again.description = None;
    log(Level::Warn, &format!("{}; rolling back", error.message));
    match rollback::rollback(id, None, &again) {
        Ok(info) => Error {
            message: format!(
                "{}; rolled back (rollback-on-failure): revision {} now deployed",
                error.message, info.revision
            ),
            ..error
        },
        Err(e) => Error {
            message: format!(
                "{}; the rollback (rollback-on-failure) failed too: {}",
                error.message, e.message
            ),
            ..error
        },
    }
}

/// The steps of an install, upgrade or rollback after its pending record is written.
pub struct Steps<'a> {
    /// Hook events before and after the apply.
    pub events: (&'a str, &'a str),
    /// Run hooks.
    pub hooks: bool,
    /// Wait for readiness after the apply.
    pub wait: bool,
    /// Replace objects that cannot be changed in place.
    pub force: bool,
    /// The operation's budget.
    pub deadline: &'a Deadline,
}

impl Steps<'_> {
    /// Pre hooks, apply, wait, post hooks; the error says which step failed.
    pub fn run(
        &self,
        id: &ReleaseId,
        record: &mut Release,
        target: &[Object],
        previous: &[Object],
        created: &mut Vec<ObjectRef>,
    ) -> Result<(), Error> {
        let (pre, post) = self.events;
        if self.hooks {
            hooks::run(record, pre, self.deadline, created)?;
        }
        deploy(
            id,
            target,
            previous,
            created,
            self.force.then_some(self.deadline),
        )?;
        if self.wait {
            let references: Vec<ObjectRef> = target.iter().map(|o| o.reference.clone()).collect();
            wait::ready(&references, self.deadline).map_err(|e| with_context(e, "wait"))?;
        }
        if self.hooks {
            hooks::run(record, post, self.deadline, created)?;
        }
        Ok(())
    }
}

/// A release whose latest record is `pending-*` was left by an operation that died
/// mid-way: mark that record `failed`, saying so, so that this operation can proceed.
pub fn unlock(id: &ReleaseId, last: &mut Release) -> Result<(), Error> {
    let was = last.status();
    if let Some(info) = last.info.as_mut() {
        info.status = Status::Failed;
        info.description = format!(
            "unlocked by capstan: the operation that left this revision {} did not finish",
            was.as_str()
        );
    }
    store::update(last).map_err(|e| {
        with_context(
            e,
            &format!("unlock revision {} of {}", last.version, describe(id)),
        )
    })?;
    log(
        Level::Warn,
        &format!(
            "release {}: revision {} was {}; marked failed and proceeding",
            describe(id),
            last.version,
            was.as_str()
        ),
    );
    Ok(())
}

fn new_record(
    id: &ReleaseId,
    rendered: &Render,
    revision: u32,
    install: bool,
    current: Option<&Release>,
    now: &str,
) -> Release {
    let first_deployed = current
        .and_then(|c| c.info.as_ref())
        .map(|i| i.first_deployed.clone())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| now.to_owned());
    Release {
        name: id.name.clone(),
        info: Some(Info {
            first_deployed,
            last_deployed: now.to_owned(),
            deleted: String::new(),
            description: if install {
                "Initial install underway"
            } else {
                "Preparing upgrade"
            }
            .into(),
            status: if install {
                Status::PendingInstall
            } else {
                Status::PendingUpgrade
            },
            notes: rendered.assembled.notes.clone(),
        }),
        chart: rendered.chart.as_ref().map(ChartRecord::from_chart),
        config: rendered.user_values.clone(),
        manifest: capstan_helm::output::manifest_text(&rendered.assembled.manifests),
        hooks: rendered.assembled.hooks.iter().map(hook_record).collect(),
        version: revision,
        namespace: id.namespace.clone(),
        labels: Default::default(),
    }
}

/// The objects of a rendered manifest, with Helm 3's ownership metadata (Helm 2 writes
/// none).
pub fn manifest_objects(id: &ReleaseId, manifest: &str) -> Result<Vec<Object>, Error> {
    let mut target = objects::parse_manifest(manifest, &id.namespace)?;
    if flavor::current().marks_ownership() {
        for object in &mut target {
            objects::set_ownership(object, &id.name, &id.namespace);
        }
    }
    Ok(target)
}

fn target_objects(id: &ReleaseId, rendered: &Render) -> Result<Vec<Object>, Error> {
    let mut target = Vec::new();
    for manifest in &rendered.assembled.manifests {
        if let Some(mut object) = objects::parse(&manifest.path, &manifest.content, &id.namespace)?
        {
            if flavor::current().marks_ownership() {
                objects::set_ownership(&mut object, &id.name, &id.namespace);
            }
            target.push(object);
        }
    }
    Ok(target)
}

/// Apply `target` over `previous`; `created` collects objects that did not exist before.
/// `force` (the operation's budget) replaces objects that cannot be changed in place.
pub fn deploy(
    id: &ReleaseId,
    target: &[Object],
    previous: &[Object],
    created: &mut Vec<ObjectRef>,
    force: Option<&Deadline>,
) -> Result<(), Error> {
    let previous_ids = objects::by_identity(previous);
    // Read everything first: denied namespaces and ownership conflicts stop us before any
    // write.
    let mut existed = Vec::with_capacity(target.len());
    for object in target {
        let found = objects::live(&object.reference)
            .map_err(|e| with_context(e, "check objects before applying"))?;
        let new_in_release = !previous_ids.contains_key(&object.identity());
        if found.is_some() && new_in_release && flavor::current() == Flavor::Helm2 {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "{} already exists in the cluster and was not defined in the previous release (Helm 2 adopts no object); delete it or remove it from the chart",
                    object.describe()
                ),
            ));
        }
        if let Some(found) = &found
            && new_in_release
            && let Some(why) = objects::ownership_conflict(found, &id.name, &id.namespace)
        {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "{} exists and cannot be imported into the current release: invalid ownership metadata; {why}",
                    object.describe()
                ),
            ));
        }
        existed.push(found.is_some());
    }
    for (object, existed) in target.iter().zip(existed) {
        let step = || format!("apply {} (from {})", object.describe(), object.path);
        match kube::apply(&object.body.to_string(), true) {
            Ok(_) => {}
            // `force`: an object the API server refuses to change in place (immutable
            // fields) is deleted and created again.
            Err(e) if force.is_some() && existed && e.code == ErrorCode::InvalidInput => {
                replace(object, &e, force)
                    .map_err(|e| with_context(e, &format!("{} (replacing it)", step())))?;
            }
            Err(e) => return Err(with_context(e, &step())),
        }
        if !existed {
            created.push(object.reference.clone());
        }
    }
    let target_ids: BTreeSet<_> = target.iter().map(Object::identity).collect();
    for old in previous {
        if target_ids.contains(&old.identity()) {
            continue;
        }
        let Some(found) = objects::live(&old.reference)? else {
            continue;
        };
        if objects::annotation(&found, objects::RESOURCE_POLICY) == Some("keep") {
            log(
                Level::Info,
                &format!("{} kept due to the resource policy", old.describe()),
            );
            continue;
        }
        if let Some(why) = objects::not_ours(&found, &id.name, &id.namespace) {
            log(
                Level::Warn,
                &format!(
                    "{} dropped from the release but not deleted: {why}",
                    old.describe()
                ),
            );
            continue;
        }
        kube::delete(&old.reference, Propagation::Background).map_err(|e| {
            with_context(
                e,
                &format!("delete {} (dropped from the release)", old.describe()),
            )
        })?;
    }
    Ok(())
}

/// Delete `object` (dependents first), wait until it is gone, and create it again.
fn replace(object: &Object, refused: &Error, deadline: Option<&Deadline>) -> Result<(), Error> {
    log(
        Level::Warn,
        &format!(
            "{} cannot be changed in place ({}); replacing it (force)",
            object.describe(),
            refused.message
        ),
    );
    kube::delete(&object.reference, Propagation::Foreground)?;
    if let Some(deadline) = deadline {
        wait::gone(&object.reference, deadline)?;
    }
    kube::create(&object.body.to_string())?;
    Ok(())
}

fn fail(
    id: &ReleaseId,
    record: &mut Release,
    install: bool,
    atomic: bool,
    created: &[ObjectRef],
    error: Error,
) -> Error {
    let verb = if install { "install" } else { "upgrade" };
    if install && atomic {
        let mut problems = Vec::new();
        for reference in created.iter().rev() {
            if let Err(e) = kube::delete(reference, Propagation::Background) {
                problems.push(format!(
                    "delete {}: {}",
                    objects::describe(reference),
                    e.message
                ));
            }
        }
        if let Err(e) = store::delete(id, record.version) {
            problems.push(e.message);
        }
        let cleanup = if problems.is_empty() {
            format!(
                "the atomic install removed the {} objects it created and its release record",
                created.len()
            )
        } else {
            format!(
                "cleaning up the atomic install failed too: {}",
                problems.join("; ")
            )
        };
        return Error {
            message: format!(
                "{verb} of {} failed: {}; {cleanup}",
                describe(id),
                error.message
            ),
            ..error
        };
    }
    if let Some(info) = record.info.as_mut() {
        info.status = Status::Failed;
        info.description = if install {
            format!("Release \"{}\" failed: {}", id.name, error.message)
        } else {
            format!("Upgrade \"{}\" failed: {}", id.name, error.message)
        };
    }
    let recorded = match store::update(record) {
        Ok(()) => format!("revision {} is recorded failed", record.version),
        Err(e) => format!("recording the failure failed too: {}", e.message),
    };
    Error {
        message: format!(
            "{verb} of {} failed: {}; {recorded}",
            describe(id),
            error.message
        ),
        ..error
    }
}
