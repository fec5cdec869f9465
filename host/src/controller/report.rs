//! How a reconcile tells what happened: the status it writes (conditions, counters), the
//! Events it publishes, and the messages of failed plugin calls.

use kube::api::{Patch, PatchParams};
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::{Api, Resource, ResourceExt};

use super::context::Context;
use super::error::ReconcileError;
use super::queue::Next;
use crate::api::{HelmRelease, HelmReleaseStatus};
use crate::plugins::call::{CallError, CallFailure};

/// The message of a failed plugin call, without the call wrapping when the plugin itself
/// said what is wrong.
pub fn call_message(error: &CallError) -> String {
    match &error.cause {
        CallFailure::Returned { message, .. } | CallFailure::Locked(message) => message.clone(),
        other => format!("plugin `{}` {}: {other}", error.plugin, error.function),
    }
}

/// The time now, as conditions record it (RFC 3339).
pub(crate) fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

/// Status changes of one reconcile, written between actions and at the end.
pub(crate) struct StatusWriter<'a> {
    hr: &'a HelmRelease,
    ctx: &'a Context,
    pub(crate) status: HelmReleaseStatus,
    /// The status as the API server has it after the last write (or as read): a field
    /// emptied since is sent as `null`, which a merge patch needs to remove it.
    written: serde_json::Value,
    generation: Option<i64>,
    now: String,
}

impl<'a> StatusWriter<'a> {
    /// A writer starting from the status `hr` has.
    pub(crate) fn new(hr: &'a HelmRelease, ctx: &'a Context) -> StatusWriter<'a> {
        let status = hr.status.clone().unwrap_or_default();
        StatusWriter {
            hr,
            ctx,
            written: serde_json::to_value(&status).unwrap_or_default(),
            status,
            generation: hr.metadata.generation,
            now: now_rfc3339(),
        }
    }

    /// Take the time again (after a long action), for the transitions set from now on.
    pub(crate) fn tick(&mut self) {
        self.now = now_rfc3339();
    }

    pub(crate) fn set(&mut self, type_: &str, status: bool, reason: &str, message: &str) {
        let (generation, now) = (self.generation, self.now.clone());
        self.status
            .set_condition(type_, status, reason, message, generation, &now);
    }

    /// The condition `type_` is set and true.
    pub(crate) fn is_true(&self, type_: &str) -> bool {
        self.status
            .condition(type_)
            .is_some_and(|c| c.status == "True")
    }

    /// The message of the condition `type_`, if set.
    pub(crate) fn message(&self, type_: &str) -> String {
        self.status
            .condition(type_)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    }

    pub(crate) fn ready(&mut self, ready: bool, reason: &str, message: &str) {
        self.set("Ready", ready, reason, message);
        if ready {
            self.status.remove_condition("Reconciling");
            self.status.remove_condition("Stalled");
        }
    }

    pub(crate) fn stalled(&mut self, reason: &str, message: &str) {
        self.ready(false, reason, message);
        self.set("Stalled", true, reason, message);
        self.status.remove_condition("Reconciling");
    }

    pub(crate) fn reconciling(&mut self, reason: &str, message: &str) {
        self.set("Reconciling", true, reason, message);
        self.status.remove_condition("Stalled");
    }

    /// Patch the status as it stands.
    pub(crate) async fn write(&mut self) -> Result<(), kube::Error> {
        self.status.observed_generation = self.generation;
        self.status.release_name = Some(self.hr.release_name());
        let api: Api<HelmRelease> =
            Api::namespaced(self.ctx.client.clone(), &self.hr.namespace_or_default());
        let status = serde_json::to_value(&self.status).unwrap_or_default();
        // Fields emptied since the last write go as `null`: a merge patch keeps what it
        // does not name.
        let mut patch_status = status.clone();
        if let (Some(fields), Some(before)) =
            (patch_status.as_object_mut(), self.written.as_object())
        {
            for key in before.keys() {
                fields.entry(key.clone()).or_insert(serde_json::Value::Null);
            }
        }
        let patch = serde_json::json!({ "status": patch_status });
        api.patch_status(
            &self.hr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
        self.written = status;
        let (namespace, name) = (self.hr.namespace_or_default(), self.hr.name_any());
        let ready = self.is_true("Ready");
        let stalled = self.is_true("Stalled");
        let metrics = &self.ctx.metrics;
        metrics.set_condition(&namespace, &name, "Ready", ready);
        metrics.set_condition(&namespace, &name, "Stalled", stalled);
        Ok(())
    }
}

/// Publish an Event about `hr` (its note cut to 1000 characters); a failure to publish is
/// logged, never the reconcile's.
pub(crate) async fn publish(
    ctx: &Context,
    hr: &HelmRelease,
    type_: EventType,
    reason: &str,
    note: String,
) {
    let event = KubeEvent {
        type_,
        reason: reason.to_owned(),
        note: Some(note.chars().take(1000).collect()),
        action: reason.to_owned(),
        secondary: None,
    };
    if let Err(error) = ctx.recorder.publish(&event, &hr.object_ref(&())).await {
        tracing::debug!(%error, "cannot publish an event");
    }
}

/// Finish a reconcile by writing the status; a status write failure is retried.
pub(crate) async fn finish(
    mut writer: StatusWriter<'_>,
    action: Next,
) -> Result<Next, ReconcileError> {
    writer.write().await?;
    Ok(action)
}

/// Stall on something the spec gets wrong (`reason`, `message`); the Warning Event is
/// published only when the stall is new or says something else, not on every reconcile.
pub(crate) async fn stall_on_spec(
    ctx: &Context,
    hr: &HelmRelease,
    writer: &mut StatusWriter<'_>,
    reason: &str,
    message: &str,
) {
    let repeated = writer
        .status
        .condition("Stalled")
        .is_some_and(|c| c.status == "True" && c.message == message);
    if !repeated {
        publish(ctx, hr, EventType::Warning, reason, message.to_owned()).await;
    }
    writer.stalled(reason, message);
}
