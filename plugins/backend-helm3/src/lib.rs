//! `backend-helm3`: the Helm v3 release backend component (world `backend-plugin`).
//!
//! `template` renders a chart exactly as `helm template` does (through `capstan-helm`),
//! from the host's ordered value layers merged by Helm's rules (`values`); `package` turns
//! a chart folder into an archive as `helm package` does.
//! `sync` (install/upgrade), `uninstall`, `status` and `history` keep Helm v3 release records
//! (Secrets or, with `HELM_DRIVER=configmap` in the plugin's WASI env grant, ConfigMaps
//! `sh.helm.release.v1.<name>.v<N>`, all through `store`) that the real `helm` CLI reads, and apply
//! objects through the host's `kube` capability (server-side apply, field manager
//! `capstan`), with hooks and `wait`. `rollback` records a new revision as Helm does, and
//! `plan` says from digests whether `sync` would change anything (a `sync` that would not
//! returns `unchanged` without writing). See `sync` for what is not implemented yet.

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    ChartInput, Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions, ValueLayer,
};

use capstan_release::{package, plan, render, rollback, store, sync, uninstall};

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

struct Helm3;

impl Guest for Helm3 {
    fn sync(request: SyncRequest) -> Result<SyncOutcome, Error> {
        sync::sync(request)
    }
    fn uninstall(
        release: ReleaseId,
        options: UninstallOptions,
    ) -> Result<Option<ReleaseInfo>, Error> {
        uninstall::uninstall(&release, &options)
    }
    fn status(release: ReleaseId) -> Result<Option<ReleaseInfo>, Error> {
        Ok(store::history(&release)?.last().map(store::info))
    }
    fn history(release: ReleaseId, max: u32) -> Result<Vec<ReleaseInfo>, Error> {
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
        rollback::rollback(&release, revision, &options)
    }
    fn plan(request: SyncRequest) -> Result<SyncPlan, Error> {
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

impl capstan_plugin_sdk::backend::exports::capstan::plugin::prepare::Guest for Helm3 {
    fn prepare() {
        render::prepare_instance();
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::chart_template::Guest for Helm3 {
    fn template_chart(
        release: ReleaseId,
        chart: ChartInput,
        values: Vec<ValueLayer>,
        options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        render::template_chart(release, chart, values, options)
    }
}

impl capstan_plugin_sdk::backend::exports::capstan::plugin::folder_template::Guest for Helm3 {
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

impl capstan_plugin_sdk::backend::exports::capstan::plugin::chart_folder::Guest for Helm3 {
    fn rules_file() -> Option<String> {
        package::rules_file()
    }
    fn chart_files(paths: Vec<String>, rules: Option<Vec<u8>>) -> Result<Vec<u32>, Error> {
        package::chart_files(paths, rules)
    }
}

capstan_plugin_sdk::backend::export_backend_plugin!(Helm3);
