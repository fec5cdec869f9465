//! CRDs from the chart's `crds/` folders (root chart, then enabled subcharts; Helm's
//! `CRDObjects`), handled before anything else of an install or upgrade by policy:
//! `skip` leaves them alone, `create` creates missing ones and never changes existing
//! ones (Helm's behaviour), `create-replace` also brings existing ones to the chart's
//! definition (server-side apply, forced). Created or replaced CRDs are awaited until
//! `Established` (at most 60 s, as Helm, within the operation's budget). CRDs are not part
//! of the release manifest and are never deleted. They are cluster-scoped: the call's
//! grant must allow `CustomResourceDefinition.apiextensions.k8s.io`.

use std::time::Duration;

use capstan_helm::chart::Chart;
use capstan_helm::output::split_manifests;
use capstan_plugin_sdk::backend::capstan::plugin::kube;
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::Error;
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::CrdPolicy;

use crate::objects;
use crate::store::with_context;
use crate::wait::{self, Deadline};

/// Longest wait for CRDs to become established (Helm's 60 s).
const ESTABLISH_BUDGET: Duration = Duration::from_secs(60);

/// Apply `policy` to the CRDs of `chart`; returns how many were created or replaced.
pub fn ensure(
    chart: &Chart,
    namespace: &str,
    policy: CrdPolicy,
    deadline: &Deadline,
) -> Result<usize, Error> {
    if matches!(policy, CrdPolicy::Skip) {
        return Ok(0);
    }
    let mut changed = Vec::new();
    for (path, file) in chart.crd_objects() {
        let text = String::from_utf8_lossy(&file.data);
        for document in split_manifests(&text) {
            let Some(crd) = objects::parse(&path, &document, namespace)? else {
                continue;
            };
            let step = |verb: &str| format!("{verb} CRD {} (from {path})", crd.describe());
            let exists = kube::get(&crd.reference)
                .map_err(|e| with_context(e, &step("read")))?
                .is_some();
            match (exists, policy) {
                (false, _) => {
                    kube::create(&crd.body.to_string())
                        .map_err(|e| with_context(e, &step("create")))?;
                    log(Level::Info, &step("created"));
                }
                (true, CrdPolicy::CreateReplace) => {
                    kube::apply(&crd.body.to_string(), true)
                        .map_err(|e| with_context(e, &step("replace")))?;
                    log(Level::Info, &step("replaced"));
                }
                (true, _) => {
                    log(Level::Debug, &step("kept existing"));
                    continue;
                }
            }
            changed.push(crd.reference);
        }
    }
    let budget =
        Deadline::start(u32::try_from(ESTABLISH_BUDGET.as_secs()).unwrap_or(60)).earliest(deadline);
    wait::ready(&changed, &budget).map_err(|e| with_context(e, "wait for CRDs"))?;
    Ok(changed.len())
}

/// Helm 2's `crd-install` hooks of an install: each such document (a CRD) is created when
/// missing, before anything else of the install, and awaited until `Established`. Existing
/// ones are kept (Helm 2 failed on them, which `--no-crd-hook` worked around). Like CRDs of
/// `crds/`, they are never deleted. Returns how many were created.
pub fn install_hook_crds(
    hooks: &[capstan_helm::output::Hook],
    namespace: &str,
    deadline: &Deadline,
) -> Result<usize, Error> {
    let mut created = Vec::new();
    for hook in hooks
        .iter()
        .filter(|h| h.events.iter().any(|e| e == "crd-install"))
    {
        let Some(crd) = objects::parse(&hook.path, &hook.manifest, namespace)? else {
            continue;
        };
        let step = |verb: &str| {
            format!(
                "{verb} crd-install hook {} (from {})",
                crd.describe(),
                hook.path
            )
        };
        let exists = kube::get(&crd.reference)
            .map_err(|e| with_context(e, &step("read")))?
            .is_some();
        if exists {
            log(Level::Debug, &step("kept existing"));
            continue;
        }
        kube::create(&crd.body.to_string()).map_err(|e| with_context(e, &step("create")))?;
        log(Level::Info, &step("created"));
        created.push(crd.reference);
    }
    let budget =
        Deadline::start(u32::try_from(ESTABLISH_BUDGET.as_secs()).unwrap_or(60)).earliest(deadline);
    wait::ready(&created, &budget).map_err(|e| with_context(e, "wait for crd-install CRDs"))?;
    Ok(created.len())
}
