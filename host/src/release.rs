//! `capstan release sync|plan|rollback|uninstall|status|history`: drive a release backend component
//! without the operator. The host reads values and the chart as `capstan template` does
//! (`crate::template`; the backend merges and packages), connects to the cluster from the usual kubeconfig,
//! and grants the component Kubernetes access to the release namespace only (plus the
//! cluster-scoped kinds named with `--allow-cluster-kind`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use crate::capabilities::Grants;
use crate::capabilities::kube::{DiscoveryCache, KubeGrant};
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    CrdPolicy, SyncAction, SyncOptions, SyncRequest, UninstallOptions,
};
use crate::plugins::bindings::types::{ReleaseId, ReleaseInfo, ReleaseStatus};

/// What every release command needs.
#[derive(clap::Args, Debug, Clone)]
pub struct Target {
    /// Release name.
    #[arg(long)]
    pub name: String,
    /// Release namespace (where the records and the objects live).
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Cluster-scoped kinds the backend may touch (`Kind` or `Kind.group`); repeatable.
    #[arg(long = "allow-cluster-kind")]
    pub cluster_kinds: Vec<String>,
}

impl Target {
    /// The release id.
    pub fn id(&self) -> ReleaseId {
        ReleaseId {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
        }
    }

    /// Kubernetes access for one call: the release namespace and the allowed kinds.
    pub async fn grants(&self) -> anyhow::Result<Grants> {
        let client = kube::Client::try_default()
            .await
            .context("cannot connect to the cluster (KUBECONFIG)")?;
        Ok(Grants {
            kube: Some(KubeGrant::new(
                client,
                Arc::new(DiscoveryCache::default()),
                [self.namespace.clone()],
                self.cluster_kinds.iter().cloned(),
            )),
            git: None,
            http: None,
            credentials: None,
            post_render: None,
            release_context: None,
            folder_files: None,
        })
    }
}

/// `capstan release sync`.
#[derive(clap::Args, Debug, Clone)]
pub struct SyncArgs {
    /// Which release.
    #[command(flatten)]
    pub target: Target,
    /// Chart folder or chart archive (`.tgz`).
    #[arg(long)]
    pub chart: PathBuf,
    /// Values file (YAML); repeat to merge several, later ones win.
    #[arg(short = 'f', long = "values")]
    pub values: Vec<PathBuf>,
    /// Set values on the command line (`a.b=c`); repeatable.
    #[arg(long)]
    pub set: Vec<String>,
    /// Like `--set`, but every value is a string.
    #[arg(long)]
    pub set_string: Vec<String>,
    /// Wait for the release's resources to become ready.
    #[arg(long)]
    pub wait: bool,
    /// Budget for the whole operation, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u32,
    /// On a failed install, remove everything the install created.
    #[arg(long)]
    pub atomic: bool,
    /// On a failed upgrade, roll back to the last deployed revision.
    #[arg(long)]
    pub rollback_on_failure: bool,
    /// Replace (delete and create) objects that cannot be changed in place.
    #[arg(long)]
    pub force: bool,
    /// CRDs of the chart's `crds/` on install: `skip`, `create` or `create-replace`.
    #[arg(long, default_value = "create", value_parser = crd_policy)]
    pub install_crds: CrdPolicy,
    /// CRDs of the chart's `crds/` on upgrade: `skip`, `create` or `create-replace`.
    #[arg(long, default_value = "skip", value_parser = crd_policy)]
    pub upgrade_crds: CrdPolicy,
    /// Revisions to keep (0: all).
    #[arg(long, default_value_t = 10)]
    pub max_history: u32,
    /// Do not run hooks.
    #[arg(long)]
    pub no_hooks: bool,
    /// Description recorded on the new revision.
    #[arg(long)]
    pub description: Option<String>,
    /// Upgrade even when chart and values match the deployed revision (a new revision is
    /// recorded); without it such a sync changes nothing.
    #[arg(long)]
    pub upgrade_unchanged: bool,
}

fn crd_policy(text: &str) -> Result<CrdPolicy, String> {
    match text {
        "skip" => Ok(CrdPolicy::Skip),
        "create" => Ok(CrdPolicy::Create),
        "create-replace" => Ok(CrdPolicy::CreateReplace),
        other => Err(format!(
            "`{other}`: expected skip, create or create-replace"
        )),
    }
}

/// `capstan release uninstall`.
#[derive(clap::Args, Debug, Clone)]
pub struct UninstallArgs {
    /// Which release.
    #[command(flatten)]
    pub target: Target,
    /// Keep the release records, marked `uninstalled`.
    #[arg(long)]
    pub keep_history: bool,
    /// Do not run hooks.
    #[arg(long)]
    pub no_hooks: bool,
    /// Wait until the deleted objects are gone.
    #[arg(long)]
    pub wait: bool,
    /// Budget in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u32,
}

/// `capstan release rollback`.
#[derive(clap::Args, Debug, Clone)]
pub struct RollbackArgs {
    /// Which release.
    #[command(flatten)]
    pub target: Target,
    /// Revision to roll back to (default: the previous deployed revision).
    #[arg(long)]
    pub revision: Option<u32>,
    /// Revisions to keep (0: all).
    #[arg(long, default_value_t = 10)]
    pub max_history: u32,
    /// Wait for the release's resources to become ready.
    #[arg(long)]
    pub wait: bool,
    /// Budget for the whole operation, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u32,
    /// Do not run hooks.
    #[arg(long)]
    pub no_hooks: bool,
}

/// `capstan release history`.
#[derive(clap::Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Which release.
    #[command(flatten)]
    pub target: Target,
    /// At most this many revisions (0: all).
    #[arg(long, default_value_t = 256)]
    pub max: u32,
}

/// `capstan release migrate`.
#[derive(clap::Args, Debug, Clone)]
pub struct MigrateArgs {
    /// Which release.
    #[command(flatten)]
    pub target: Target,
    /// Where the release comes from: only Helm 2 (`helm2`, Tiller's records) can be moved.
    #[arg(long, default_value = "helm2")]
    pub from: String,
    /// The Helm 3 backend plugin to move it to (default: `--backend`, else the
    /// configuration's default backend).
    #[arg(long)]
    pub to: Option<String>,
    /// Keep Tiller's records (default: delete them once the Helm 3 records are written).
    #[arg(long)]
    pub keep_v2_records: bool,
    /// Show the history that would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Tiller's namespace (where its records are).
    #[arg(long, default_value = "kube-system")]
    pub tiller_namespace: String,
}

impl MigrateArgs {
    /// What the Helm 3 backend is told to do with Tiller records
    /// (`CAPSTAN_IMPORT_HELM2`).
    pub fn import_mode(&self) -> &'static str {
        if self.dry_run {
            "preview"
        } else if self.keep_v2_records {
            "copy"
        } else {
            "move"
        }
    }
}

/// Move a Helm 2 release to the Helm 3 backend `backend` (loaded with the import mode of
/// `args`): the backend converts and writes on its first read of the release.
pub async fn migrate(backend: &BackendPlugin, args: &MigrateArgs) -> anyhow::Result<()> {
    if args.from != "helm2" {
        anyhow::bail!(
            "--from {}: only Helm 2 releases (`helm2`) can be moved; Helm 3 -> Helm 2 is not supported",
            args.from
        );
    }
    let id = args.target.id();
    let revisions = backend.history(&id, 0, args.target.grants().await?).await?;
    if revisions.is_empty() {
        anyhow::bail!(
            "release {}/{}: no Helm 3 records and no Tiller records of it in {} for that namespace",
            id.namespace,
            id.name,
            args.tiller_namespace
        );
    }
    let verb = if args.dry_run { "would have" } else { "has" };
    println!(
        "release {}/{} {verb} Helm 3 history of {} revisions:",
        id.namespace,
        id.name,
        revisions.len()
    );
    println!("REVISION\tSTATUS\tCHART\tUPDATED\tDESCRIPTION");
    for info in revisions.iter().rev() {
        println!("{}", history_line(info));
    }
    Ok(())
}

/// Helm's name of a release status (`deployed`, `pending-install`, ...).
pub fn status_text(status: ReleaseStatus) -> &'static str {
    match status {
        ReleaseStatus::Unknown => "unknown",
        ReleaseStatus::Deployed => "deployed",
        ReleaseStatus::Uninstalled => "uninstalled",
        ReleaseStatus::Superseded => "superseded",
        ReleaseStatus::Failed => "failed",
        ReleaseStatus::Uninstalling => "uninstalling",
        ReleaseStatus::PendingInstall => "pending-install",
        ReleaseStatus::PendingUpgrade => "pending-upgrade",
        ReleaseStatus::PendingRollback => "pending-rollback",
    }
}

/// One line per revision, like `helm history`.
pub fn history_line(info: &ReleaseInfo) -> String {
    format!(
        "{}\t{}\t{}-{}\t{}\t{}",
        info.revision,
        status_text(info.status),
        info.chart.name,
        info.chart.version,
        info.last_deployed.as_deref().unwrap_or("-"),
        info.description
    )
}

async fn sync_request(backend: &BackendPlugin, args: &SyncArgs) -> anyhow::Result<SyncRequest> {
    let values = crate::template::value_layers(&crate::template::ValueFlags {
        files: args.values.clone(),
        set: args.set.clone(),
        set_string: args.set_string.clone(),
        ..crate::template::ValueFlags::default()
    })?;
    let chart = crate::template::chart_artifact(backend, &args.chart).await?;
    Ok(SyncRequest {
        release: args.target.id(),
        chart,
        values,
        options: SyncOptions {
            wait: args.wait,
            timeout_seconds: args.timeout,
            atomic: args.atomic,
            rollback_on_failure: args.rollback_on_failure,
            max_history: args.max_history,
            force: args.force,
            install_crds: args.install_crds,
            upgrade_crds: args.upgrade_crds,
            disable_hooks: args.no_hooks,
            description: args.description.clone(),
            upgrade_unchanged: args.upgrade_unchanged,
        },
    })
}

/// Say whether `sync` with the same arguments would change anything.
pub async fn plan(backend: &BackendPlugin, args: &SyncArgs) -> anyhow::Result<()> {
    let request = sync_request(backend, args).await?;
    let plan = backend.plan(&request, args.target.grants().await?).await?;
    println!(
        "release {}/{}: {}: {}",
        args.target.namespace,
        args.target.name,
        if plan.changes {
            "changes"
        } else {
            "no changes"
        },
        plan.reason
    );
    Ok(())
}

/// Roll back; prints the new revision.
pub async fn rollback(backend: &BackendPlugin, args: &RollbackArgs) -> anyhow::Result<()> {
    let options = SyncOptions {
        wait: args.wait,
        timeout_seconds: args.timeout,
        atomic: false,
        rollback_on_failure: false,
        max_history: args.max_history,
        force: false,
        install_crds: CrdPolicy::Skip,
        upgrade_crds: CrdPolicy::Skip,
        disable_hooks: args.no_hooks,
        description: None,
        upgrade_unchanged: false,
    };
    let info = backend
        .rollback(
            &args.target.id(),
            args.revision,
            &options,
            args.target.grants().await?,
        )
        .await?;
    println!(
        "release {}/{} rolled back: revision {} {} ({})",
        args.target.namespace,
        args.target.name,
        info.revision,
        status_text(info.status),
        info.description
    );
    Ok(())
}

/// Install or upgrade; prints what happened.
pub async fn sync(backend: &BackendPlugin, args: &SyncArgs) -> anyhow::Result<()> {
    let request = sync_request(backend, args).await?;
    let outcome = backend.sync(&request, args.target.grants().await?).await?;
    let action = match outcome.action {
        SyncAction::Installed => "installed",
        SyncAction::Upgraded => "upgraded",
        SyncAction::Unchanged => "unchanged",
    };
    println!(
        "release {}/{} {action}: revision {} {}",
        args.target.namespace,
        args.target.name,
        outcome.release.revision,
        status_text(outcome.release.status)
    );
    if let Some(notes) = &outcome.release.notes {
        println!("NOTES:\n{notes}");
    }
    Ok(())
}

/// Uninstall; prints what happened.
pub async fn uninstall(backend: &BackendPlugin, args: &UninstallArgs) -> anyhow::Result<()> {
    let options = UninstallOptions {
        keep_history: args.keep_history,
        wait: args.wait,
        timeout_seconds: args.timeout,
        disable_hooks: args.no_hooks,
    };
    let id = args.target.id();
    match backend
        .uninstall(&id, options, args.target.grants().await?)
        .await?
    {
        Some(_) => println!("release \"{}\" uninstalled", id.name),
        None => anyhow::bail!("release {}/{}: not found", id.namespace, id.name),
    }
    Ok(())
}

/// Print the current revision.
pub async fn status(backend: &BackendPlugin, target: &Target) -> anyhow::Result<()> {
    let id = target.id();
    let Some(info) = backend.status(&id, target.grants().await?).await? else {
        anyhow::bail!("release {}/{}: not found", id.namespace, id.name);
    };
    println!("NAME: {}", info.id.name);
    println!("NAMESPACE: {}", info.id.namespace);
    println!("REVISION: {}", info.revision);
    println!("STATUS: {}", status_text(info.status));
    println!("CHART: {}-{}", info.chart.name, info.chart.version);
    println!(
        "LAST DEPLOYED: {}",
        info.last_deployed.as_deref().unwrap_or("-")
    );
    println!("DESCRIPTION: {}", info.description);
    Ok(())
}

/// Print the revisions, newest last (as `helm history`).
pub async fn history(backend: &BackendPlugin, args: &HistoryArgs) -> anyhow::Result<()> {
    let id = args.target.id();
    let revisions = backend
        .history(&id, args.max, args.target.grants().await?)
        .await?;
    if revisions.is_empty() {
        anyhow::bail!("release {}/{}: not found", id.namespace, id.name);
    }
    println!("REVISION\tSTATUS\tCHART\tUPDATED\tDESCRIPTION");
    for info in revisions.iter().rev() {
        println!("{}", history_line(info));
    }
    Ok(())
}
