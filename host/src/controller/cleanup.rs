//! Deleting a HelmRelease: the finalizer uninstalls its release first (`uninstall.*`
//! options), unless another HelmRelease manages it, and gives up after the configured
//! deadline so that a release that can never be uninstalled does not keep its namespace.

use std::time::Instant;

use kube::runtime::events::EventType;

use super::context::Context;
use super::error::ReconcileError;
use super::observe::{key_of, release_id};
use super::options::timeout_seconds;
use super::queue::Next;
use super::report::{call_message, publish};
use crate::api::{DeletionPropagation, HelmRelease};
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::UninstallOptions;
use crate::plugins::bindings::kube::Propagation;

/// [`uninstall`], given up once the deletion is older than the configured deadline: the
/// finalizer is then removed with an `UninstallAbandoned` Warning naming the last error,
/// so a release whose uninstall can never succeed (its backend gone, its namespace
/// forbidden) does not keep its HelmRelease — and the namespace holding it — forever.
/// The deletion's age is taken from the API server's `deletionTimestamp` against this
/// host's clock; a skew of seconds does not matter against a deadline of minutes.
pub(crate) async fn cleanup(hr: &HelmRelease, ctx: &Context) -> Result<Next, ReconcileError> {
    let error = match uninstall(hr, ctx).await {
        Ok(next) => return Ok(next),
        Err(error) => error,
    };
    let age = hr.metadata.deletion_timestamp.as_ref().and_then(|t| {
        std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::from(t.0))
            .ok()
    });
    match (ctx.options.uninstall_deadline, age) {
        (Some(deadline), Some(age)) if age >= deadline => {
            let message = format!(
                "{error}; still failing {}s after the HelmRelease was deleted (deadline {}s, --uninstall-deadline): the finalizer is removed, and the release's objects and records may be left in the cluster",
                age.as_secs(),
                deadline.as_secs()
            );
            tracing::warn!("{message}");
            publish(ctx, hr, EventType::Warning, "UninstallAbandoned", message).await;
            Ok(Next::AwaitChange)
        }
        _ => Err(error),
    }
}

#[tracing::instrument(name = "uninstall", skip_all, fields(helmrelease = %key_of(hr)))]
async fn uninstall(hr: &HelmRelease, ctx: &Context) -> Result<Next, ReconcileError> {
    let started = Instant::now();
    let release = release_id(hr);
    let key = key_of(hr);
    let failed = |message: String| ReconcileError::Uninstall {
        release: format!("{}/{}", release.namespace, release.name),
        message,
    };
    let (_, backend) = match ctx.backend_for(hr) {
        Ok(found) => found,
        Err(message) => return Err(failed(message)),
    };
    let remote = ctx
        .remotes
        .for_release(&ctx.client, hr)
        .await
        .map_err(failed)?;
    let cluster_id = remote.as_ref().map_or("", |cluster| cluster.id.as_str());
    if let Err(owner) = ctx.claims.claim(cluster_id, &release, &key) {
        // Another HelmRelease manages this release: deleting this one must not remove it.
        publish(
            ctx,
            hr,
            EventType::Warning,
            "UninstallSkipped",
            format!(
                "release {}/{} is managed by HelmRelease {owner}; not uninstalled",
                release.namespace, release.name
            ),
        )
        .await;
        return Ok(Next::AwaitChange);
    }
    let uninstall = hr.spec.uninstall.clone().unwrap_or_default();
    let options = UninstallOptions {
        keep_history: uninstall.keep_history,
        wait: uninstall.wait,
        timeout_seconds: uninstall
            .timeout
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or_else(|| timeout_seconds(hr)),
        disable_hooks: uninstall.disable_hooks,
    };
    let mut grants = ctx
        .grants_for(hr, &release, remote.as_deref())
        .map_err(failed)?;
    if let Some(policy) = uninstall.deletion_propagation {
        grants.kube = grants.kube.map(|kube| {
            kube.deleting_with(match policy {
                DeletionPropagation::Background => Propagation::Background,
                DeletionPropagation::Foreground => Propagation::Foreground,
                DeletionPropagation::Orphan => Propagation::Orphan,
            })
        });
    }
    ctx.metrics.actions.inc();
    match backend.uninstall(&release, options, grants).await {
        Ok(removed) => {
            ctx.claims.release(&key);
            ctx.metrics.observe("uninstall", true, started.elapsed());
            ctx.metrics.forget(&key.namespace, &key.name);
            if removed.is_some() {
                publish(
                    ctx,
                    hr,
                    EventType::Normal,
                    "UninstallSucceeded",
                    format!("release {}/{} uninstalled", release.namespace, release.name),
                )
                .await;
            }
            Ok(Next::AwaitChange)
        }
        Err(error) => {
            ctx.metrics.observe("uninstall", false, started.elapsed());
            let message = call_message(&error);
            publish(
                ctx,
                hr,
                EventType::Warning,
                "UninstallFailed",
                message.clone(),
            )
            .await;
            Err(failed(message))
        }
    }
}
