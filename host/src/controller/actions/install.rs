//! The install action: create the target namespace when asked (`install.createNamespace`),
//! then install the release through the backend ([`sync`](super::sync)).

use kube::Api;
use kube::runtime::events::EventType;

use super::Outcome;
use super::sync::{Prepared, run_sync};
use crate::api::{HelmRelease, ReleaseAction};
use crate::controller::context::Context;
use crate::controller::error::ReconcileError;
use crate::controller::observe::Observed;
use crate::controller::queue::{Next, backoff};
use crate::controller::remote::RemoteCluster;
use crate::controller::report::{StatusWriter, publish};

/// Install `observed`'s release.
pub(crate) async fn install(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    prepared: Prepared,
) -> Result<Outcome, ReconcileError> {
    if hr.spec.install.as_ref().is_some_and(|i| i.create_namespace)
        && let Err(message) = create_namespace(
            ctx,
            hr,
            observed.remote.as_deref(),
            &observed.release.namespace,
        )
        .await
    {
        writer.ready(false, "InstallFailed", &message);
        writer.reconciling("InstallFailed", "retrying");
        publish(ctx, hr, EventType::Warning, "InstallFailed", message).await;
        return Ok(Outcome::Done(Next::Requeue(backoff(1))));
    }
    run_sync(hr, ctx, writer, observed, prepared, ReleaseAction::Install).await
}

/// `install.createNamespace`: create the target namespace, as the release's identity, unless
/// it exists (Helm's `--create-namespace`; the namespace is not part of the release).
async fn create_namespace(
    ctx: &Context,
    hr: &HelmRelease,
    remote: Option<&RemoteCluster>,
    namespace: &str,
) -> Result<(), String> {
    let client = ctx.client_in_target(hr, remote)?;
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let object = k8s_openapi::api::core::v1::Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(namespace.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&kube::api::PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(response)) if response.code == 409 => Ok(()),
        Err(error) => Err(format!(
            "install.createNamespace: cannot create namespace {namespace}: {error}"
        )),
    }
}
