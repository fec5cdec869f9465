//! `backend-helm2`: the Helm v2 release backend component (world `backend-plugin`), without
//! Tiller: it keeps Tiller-compatible records (`tiller_store`) that Helm 2's `helm` and
//! Tiller read, with the same lifecycle as `backend-helm3` (`capstan-release`: install and
//! upgrade with hooks and `wait`, atomic installs, rollback, uninstall, `plan`). Helm 2's
//! rules that differ: release names are unique in the cluster, and uninstall purges the
//! records unless `keep-history` is asked (then they stay `DELETED`, reserving the name).

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    ChartInput, Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions, ValueLayer,
};
use capstan_release::{flavor, package, plan, render, rollback, store, sync, uninstall};

use capstan_release::tiller_store::TillerStore;

static TILLER: TillerStore = TillerStore;

/// Every call keeps records in Tiller's store, by Helm 2's rules.
fn tiller() {
    store::use_store(&TILLER);
    flavor::use_flavor(flavor::Flavor::Helm2);
}

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

struct Helm2;

impl Guest for Helm2 {
    fn sync(request: SyncRequest) -> Result<SyncOutcome, Error> {
        tiller();
        sync::sync(request)
    }
    fn uninstall(
        release: ReleaseId,
        options: UninstallOptions,
    ) -> Result<Option<ReleaseInfo>, Error> {
        tiller();
        uninstall::uninstall(&release, &options)
    }
    fn status(release: ReleaseId) -> Result<Option<ReleaseInfo>, Error> {
        tiller();
        Ok(store::history(&release)?.last().map(store::info))
    }
    fn history(release: ReleaseId, max: u32) -> Result<Vec<ReleaseInfo>, Error> {
        tiller();
        let records = store::history(&release)?;
        let limit = if max == 0 {
            records.len()
        } else {
            max as usize
        };
        Ok(records.iter().rev().take(limit).map(store::info).collect())
    }
    fn rollback(
        release: ReleaseId,
        revision: Option<u32>,
        options: SyncOptions,
    ) -> Result<ReleaseInfo, Error> {
        tiller();
        rollback::rollback(&release, revision, &options)
    }
    fn plan(request: SyncRequest) -> Result<SyncPlan, Error> {
        tiller();
        Ok(plan::decide(&request)?.plan)
    }
    fn package(chart: ChartInput) -> Result<ChartArtifact, Error> {
        package::package(chart)
    }
    fn template(
        release: ReleaseId,
        chart: ChartArtifact,
        values: Vec<ValueLayer>,
        options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        render::template(release, chart, values, options)
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::prepare::Guest for Helm2 {
    fn prepare() {
        render::prepare_instance();
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::chart_template::Guest for Helm2 {
    fn template_chart(
        release: ReleaseId,
        chart: ChartInput,
        values: Vec<ValueLayer>,
        options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        render::template_chart(release, chart, values, options)
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::folder_template::Guest for Helm2 {
    fn template_folder(
        release: ReleaseId,
        files: Vec<capstan_plugin_sdk::backend::exports::capstan::plugin::backend::ChartFile>,
        unread: Vec<
            capstan_plugin_sdk::backend::exports::capstan::plugin::folder_template::UnreadFile,
        >,
        values: Vec<ValueLayer>,
        options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        render::template_folder(release, files, unread, values, options)
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::chart_folder::Guest for Helm2 {
    fn rules_file() -> Option<String> {
        package::rules_file()
    }
    fn chart_files(paths: Vec<String>, rules: Option<Vec<u8>>) -> Result<Vec<u32>, Error> {
        package::chart_files(paths, rules)
    }
}

capstan_plugin_sdk::backend::export_backend_plugin!(Helm2);
