//! What a HelmRelease's spec asks of the backend's actions: the sync, rollback and
//! remediation options of Helm Operator's and Flux v2's fields, and the digests that tell
//! whether the release must change.

use sha2::{Digest, Sha256};

use super::remote::RemoteCluster;
use crate::api::{
    CrdsPolicy, DEFAULT_MAX_HISTORY, DEFAULT_TIMEOUT_SECONDS, HelmRelease, RemediationStrategy,
};
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    CrdPolicy, SyncOptions,
};
use crate::plugins::bindings::types::ReleaseId;

/// The operation budget: `spec.timeout`, 300 s by default.
pub(crate) fn timeout_seconds(hr: &HelmRelease) -> u32 {
    hr.spec
        .timeout
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
        .clamp(1, i64::from(u32::MAX)) as u32
}

/// `upgrade.remediation.strategy`, when set.
pub(crate) fn upgrade_strategy(hr: &HelmRelease) -> Option<RemediationStrategy> {
    hr.spec
        .upgrade
        .as_ref()
        .and_then(|u| u.remediation.as_ref())
        .and_then(|r| r.strategy)
}

/// A `crds` policy of the spec as the backend contract names it.
pub(crate) fn crd_policy(policy: CrdsPolicy) -> CrdPolicy {
    match policy {
        CrdsPolicy::Skip => CrdPolicy::Skip,
        CrdsPolicy::Create => CrdPolicy::Create,
        CrdsPolicy::CreateReplace => CrdPolicy::CreateReplace,
    }
}

/// The options of a sync that installs (`installing`) or upgrades the release: Helm
/// Operator's top-level fields, refined by Flux v2's `install` and `upgrade` sections.
pub(crate) fn sync_options(hr: &HelmRelease, installing: bool) -> SyncOptions {
    let spec = &hr.spec;
    let install = spec.install.clone().unwrap_or_default();
    let upgrade = spec.upgrade.clone().unwrap_or_default();
    let rollback_enabled = spec.rollback.as_ref().is_some_and(|r| r.enable);
    let disable_wait = if installing {
        install.disable_wait
    } else {
        upgrade.disable_wait
    };
    SyncOptions {
        wait: spec.wait.unwrap_or(rollback_enabled) && !disable_wait,
        timeout_seconds: timeout_seconds(hr),
        atomic: true,
        // A failed upgrade is rolled back by the host, with `rollback.*`'s own options
        // ([`rollback_options`]), not within the sync with the upgrade's.
        rollback_on_failure: false,
        max_history: spec
            .max_history
            .unwrap_or(DEFAULT_MAX_HISTORY)
            .clamp(0, i64::from(u32::MAX)) as u32,
        force: !installing && (spec.force_upgrade || upgrade.force),
        install_crds: match install.crds {
            Some(policy) => crd_policy(policy),
            None if spec.skip_crds => CrdPolicy::Skip,
            None => CrdPolicy::Create,
        },
        upgrade_crds: upgrade.crds.map_or(CrdPolicy::Skip, crd_policy),
        disable_hooks: if installing {
            install.disable_hooks
        } else {
            upgrade.disable_hooks
        },
        description: None,
        upgrade_unchanged: false,
    }
}

/// Whether a failed upgrade is rolled back: `upgrade.remediation.strategy`, else
/// `rollback.enable`.
pub(crate) fn rolls_back(hr: &HelmRelease) -> bool {
    match upgrade_strategy(hr) {
        Some(RemediationStrategy::Rollback) => true,
        Some(RemediationStrategy::Uninstall) => false,
        None => hr.spec.rollback.as_ref().is_some_and(|r| r.enable),
    }
}

/// The options of the rollback of a failed upgrade: `rollback.{timeout, wait, force,
/// disableHooks}` (Helm Operator's; `recreate` is accepted and has no effect: Helm 4
/// removed `rollback --recreate-pods`), the history limit of the release.
pub(crate) fn rollback_options(hr: &HelmRelease) -> SyncOptions {
    let rollback = hr.spec.rollback.clone().unwrap_or_default();
    SyncOptions {
        wait: rollback.wait,
        timeout_seconds: rollback.timeout.map_or_else(
            || timeout_seconds(hr),
            |t| t.clamp(1, i64::from(u32::MAX)) as u32,
        ),
        atomic: false,
        rollback_on_failure: false,
        max_history: sync_options(hr, false).max_history,
        force: rollback.force,
        install_crds: CrdPolicy::Skip,
        upgrade_crds: CrdPolicy::Skip,
        disable_hooks: rollback.disable_hooks,
        description: None,
        upgrade_unchanged: false,
    }
}

/// What the digest covers of the options: both actions' (a change of an install-only
/// option after the install is still a change of the spec), and the target cluster.
pub(crate) fn options_text(hr: &HelmRelease, remote: Option<&RemoteCluster>) -> String {
    let mut text = format!(
        "install {:?}; upgrade {:?}; rollback {}: {:?}; create namespace {}; cluster {}",
        sync_options(hr, true),
        sync_options(hr, false),
        rolls_back(hr),
        rollback_options(hr),
        hr.spec.install.as_ref().is_some_and(|i| i.create_namespace),
        remote.map_or("", |cluster| cluster.id.as_str())
    );
    // Post-rendering counts only when asked for, so that releases without it keep the
    // digest they had before it existed (no upgrade of every release on a new operator).
    let spec = &hr.spec;
    if let Some(namespace) = spec.storage_namespace.as_deref().filter(|n| !n.is_empty()) {
        text.push_str(&format!("; storage namespace {namespace}"));
    }
    let common = spec
        .common_metadata
        .as_ref()
        .filter(|m| !m.labels.is_empty() || !m.annotations.is_empty());
    if !spec.post_renderers.is_empty() || common.is_some() {
        text.push_str(&format!(
            "; post-render {:?} {:?} {:?}",
            spec.post_renderers,
            common,
            spec.post_render_strategy.unwrap_or_default()
        ));
    }
    text
}

/// Digest of everything that decides what `sync` would produce: the chart archive, the
/// value layers (see [`super::values::layers_text`]), the options, the backend and the
/// release identity.
pub fn desired_digest(
    chart_digest: &str,
    values_text: &str,
    options: &str,
    backend: &str,
    release: &ReleaseId,
) -> String {
    let mut hasher = Sha256::new();
    for part in [
        chart_digest,
        values_text,
        options,
        backend,
        &release.namespace,
        &release.name,
    ] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// `sha256:<hex>` of `text`.
pub(crate) fn sha256_text(text: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// Retries a failed install (`installing`) or upgrade is allowed before the release stalls;
/// `None`: forever. With a `remediation` block, Flux v2's meaning: `retries` default 0, -1
/// forever. Without one, the Flux Helm Operator's: retried forever with backoff.
pub(crate) fn retries_allowed(hr: &HelmRelease, installing: bool) -> Option<i64> {
    let remediation = if installing {
        hr.spec
            .install
            .as_ref()
            .and_then(|i| i.remediation.as_ref())
    } else {
        hr.spec
            .upgrade
            .as_ref()
            .and_then(|u| u.remediation.as_ref())
    };
    let retries = remediation?.retries.unwrap_or(0);
    (retries >= 0).then_some(retries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remediation_retries_mean_what_flux_and_the_helm_operator_meant() {
        use crate::api::Remediation;
        let with = |remediation: Option<Remediation>| {
            let mut hr = HelmRelease::new("r", crate::api::HelmReleaseSpec::default());
            hr.spec.upgrade = Some(crate::api::UpgradeSpec {
                remediation: remediation.clone(),
                ..Default::default()
            });
            hr.spec.install = Some(crate::api::InstallSpec {
                remediation,
                ..Default::default()
            });
            (retries_allowed(&hr, true), retries_allowed(&hr, false))
        };
        // No remediation block: the Helm Operator retried forever.
        assert_eq!(with(None), (None, None));
        // A block without `retries`: Flux's default of 0.
        assert_eq!(with(Some(Remediation::default())), (Some(0), Some(0)));
        let retries = |n| {
            Some(Remediation {
                retries: Some(n),
                ..Remediation::default()
            })
        };
        assert_eq!(with(retries(3)), (Some(3), Some(3)));
        assert_eq!(with(retries(-1)), (None, None));
    }

    #[test]
    fn digest_changes_with_each_input() {
        let release = ReleaseId {
            name: "r".into(),
            namespace: "n".into(),
        };
        let hr = HelmRelease::new("a", crate::api::HelmReleaseSpec::default());
        let options = options_text(&hr, None);
        let base = desired_digest("sha256:a", "{}", &options, "helm3", &release);
        assert_eq!(
            base,
            desired_digest("sha256:a", "{}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:b", "{}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:a", "{\"a\":1}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:a", "{}", &options, "helm2", &release)
        );
        // Option-only changes, of either action, count.
        let changed = |edit: fn(&mut HelmRelease)| {
            let mut changed = hr.clone();
            edit(&mut changed);
            desired_digest(
                "sha256:a",
                "{}",
                &options_text(&changed, None),
                "helm3",
                &release,
            )
        };
        assert_ne!(base, changed(|h| h.spec.wait = Some(true)));
        assert_ne!(
            base,
            changed(|h| h.spec.upgrade.get_or_insert_default().force = true)
        );
        assert_ne!(
            base,
            changed(|h| h.spec.install.get_or_insert_default().create_namespace = true)
        );
        assert_ne!(
            base,
            changed(
                |h| h.spec.upgrade.get_or_insert_default().crds = Some(CrdsPolicy::CreateReplace)
            )
        );
    }

    #[test]
    fn install_and_upgrade_sections_refine_the_top_level_fields() {
        let mut hr = HelmRelease::new("a", crate::api::HelmReleaseSpec::default());
        hr.spec.wait = Some(true);
        hr.spec.skip_crds = true;
        let install = sync_options(&hr, true);
        assert!(install.wait);
        assert_eq!(install.install_crds, CrdPolicy::Skip);
        assert_eq!(install.upgrade_crds, CrdPolicy::Skip);
        let sections = hr.spec.install.get_or_insert_default();
        sections.crds = Some(CrdsPolicy::CreateReplace);
        sections.disable_wait = true;
        sections.disable_hooks = true;
        let upgrade = hr.spec.upgrade.get_or_insert_default();
        upgrade.crds = Some(CrdsPolicy::Create);
        upgrade.force = true;
        let (install, upgrade) = (sync_options(&hr, true), sync_options(&hr, false));
        assert!(!install.wait && install.disable_hooks && !install.force);
        assert_eq!(install.install_crds, CrdPolicy::CreateReplace);
        assert!(upgrade.wait && !upgrade.disable_hooks && upgrade.force);
        assert_eq!(upgrade.upgrade_crds, CrdPolicy::Create);
    }
}
