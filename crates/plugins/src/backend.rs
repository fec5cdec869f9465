//! Calls into a backend plugin ([`BackendPlugin`]): the `backend` exports and the optional
//! ones (`chart-template`, `folder-template`, `chart-folder`), for components of the current
//! and previous contracts; calls that change a release hold its lock.

use capstan_capabilities::Grants;
use capstan_capabilities::state::CallState;

use crate::bindings::backend::BackendPluginPre;
use crate::bindings::backend::exports::capstan::plugin::backend::{
    ChartFile, ChartInput, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest,
    TemplateOptions, UninstallOptions, ValueLayer,
};
use crate::bindings::types::{ChartArtifact, ReleaseId, ReleaseInfo};
use crate::call::{CallError, CallFailure};
use crate::compat_backend;
use crate::handle::{Handle, plugin_call};

/// `folder-template`'s `unread-file` record (the host's bindings are generated for the
/// `backend-plugin` world, which does not name the optional exports' types).
#[derive(wasmtime::component::ComponentType, wasmtime::component::Lower, Clone, Debug)]
#[component(record)]
pub struct UnreadFile {
    /// Path relative to the chart folder, `/`-separated.
    pub path: String,
    /// Size in bytes when listed.
    pub size: u64,
}

/// Calls into one backend plugin. Each call runs in a fresh instance.
pub struct BackendPlugin {
    pub(crate) pre: BackendPre,
    pub(crate) handle: Handle,
}

/// A backend component of the current contract, or of the previous one with its adapter.
pub(crate) enum BackendPre {
    Current(BackendPluginPre<CallState>),
    V0_1(compat_backend::V0_1Backend),
}

impl BackendPlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// Whether the component imports `interface` (e.g. `capstan:plugin/post-render`) of
    /// any version: features added to 0.2 as imports reach only backends built with them.
    pub fn imports(&self, interface: &str) -> bool {
        self.handle
            .plugin
            .description()
            .imports
            .iter()
            .any(|name| name.split('@').next() == Some(interface))
    }

    /// `grants` with the backend's configured `storageNamespaces` added to its kube access.
    fn with_storage(&self, mut grants: Grants) -> Grants {
        let extra = &self.handle.plugin.config.storage_namespaces;
        if !extra.is_empty()
            && let Some(kube) = &grants.kube
        {
            grants.kube = Some(kube.with_namespaces(extra));
        }
        grants
    }

    /// Run a call that changes `release` while holding the release's lock (the runtime's
    /// [`ReleaseLock`](crate::lock::ReleaseLock), if it has one); without a `kube` grant the
    /// plugin cannot change anything, so there is nothing to lock.
    async fn exclusive<T: Send>(
        &self,
        function: &'static str,
        release: &ReleaseId,
        grants: &Grants,
        call: impl Future<Output = Result<T, CallError>> + Send,
    ) -> Result<T, CallError> {
        let Some(client) = grants.kube.as_ref().map(|k| k.operator_client().clone()) else {
            return call.await;
        };
        let Some(lock) = &self.handle.release_lock else {
            return call.await;
        };
        let mut output = None;
        let work = async {
            output = Some(call.await);
        };
        let held = lock.hold(client, release, function, Box::pin(work)).await;
        match (held, output) {
            (Ok(()), Some(result)) => result,
            (Err(refused), _) => Err(CallError {
                plugin: self.name().to_owned(),
                function,
                cause: CallFailure::Locked(refused.to_string()),
            }),
            (Ok(()), None) => Err(CallError {
                plugin: self.name().to_owned(),
                function,
                cause: CallFailure::Locked(format!(
                    "the release lock of {}/{} ended without running `{function}`",
                    release.namespace, release.name
                )),
            }),
        }
    }

    /// The user's values merged into 0.1's single JSON object by the `compat-helm`
    /// component, run under this backend's limits with no capability.
    async fn merged_values(
        &self,
        adapter: &compat_backend::V0_1Backend,
        function: &'static str,
        values: &[ValueLayer],
    ) -> Result<String, CallError> {
        let layers: Vec<_> = values.iter().map(compat_backend::layer).collect();
        let grants = Grants::default();
        plugin_call!(
            self.handle,
            adapter.services,
            function,
            grants,
            |b, store| async {
                b.capstan_compat_helm_services()
                    .call_merge_values(&mut store, &layers)
                    .await
                    .map(|r| r.map_err(compat_backend::services_error))
            }
        )
    }

    /// `backend.sync`, holding the release's lock.
    pub async fn sync(
        &self,
        request: &SyncRequest,
        grants: Grants,
    ) -> Result<SyncOutcome, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "sync", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_sync(&mut store, request))
                }
                BackendPre::V0_1(adapter) => {
                    let values = self.merged_values(adapter, "sync", &request.values).await?;
                    let old = compat_backend::sync_request(request, values);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "sync",
                        grants,
                        |b, store| async {
                            b.capstan_plugin_backend()
                                .call_sync(&mut store, &old)
                                .await
                                .map(|r| r.map(compat_backend::sync_outcome))
                        }
                    )
                }
            }
        };
        self.exclusive("sync", &request.release, &lock_grants, call)
            .await
    }

    /// `backend.uninstall`, holding the release's lock.
    pub async fn uninstall(
        &self,
        release: &ReleaseId,
        options: UninstallOptions,
        grants: Grants,
    ) -> Result<Option<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "uninstall", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_uninstall(&mut store, release, options))
                }
                BackendPre::V0_1(adapter) => {
                    let old = compat_backend::uninstall_options(&options);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "uninstall",
                        grants,
                        |b, store| b
                            .capstan_plugin_backend()
                            .call_uninstall(&mut store, release, old)
                    )
                }
            }
        };
        self.exclusive("uninstall", release, &lock_grants, call)
            .await
    }

    /// `backend.status`.
    pub async fn status(
        &self,
        release: &ReleaseId,
        grants: Grants,
    ) -> Result<Option<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "status", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_status(&mut store, release))
            }
            BackendPre::V0_1(adapter) => {
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "status",
                    grants,
                    |b, store| b.capstan_plugin_backend().call_status(&mut store, release)
                )
            }
        }
    }

    /// `backend.history`.
    pub async fn history(
        &self,
        release: &ReleaseId,
        max: u32,
        grants: Grants,
    ) -> Result<Vec<ReleaseInfo>, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "history", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_history(&mut store, release, max))
            }
            BackendPre::V0_1(adapter) => {
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "history",
                    grants,
                    |b, store| b
                        .capstan_plugin_backend()
                        .call_history(&mut store, release, max)
                )
            }
        }
    }

    /// `backend.rollback`, holding the release's lock.
    pub async fn rollback(
        &self,
        release: &ReleaseId,
        revision: Option<u32>,
        options: &SyncOptions,
        grants: Grants,
    ) -> Result<ReleaseInfo, CallError> {
        let grants = self.with_storage(grants);
        let lock_grants = grants.clone();
        let call = async move {
            match &self.pre {
                BackendPre::Current(pre) => {
                    plugin_call!(self.handle, pre, "rollback", grants, |b, store| b
                        .capstan_plugin_backend()
                        .call_rollback(&mut store, release, revision, options))
                }
                BackendPre::V0_1(adapter) => {
                    let old = compat_backend::sync_options(options);
                    plugin_call!(
                        self.handle,
                        adapter.backend,
                        "rollback",
                        grants,
                        |b, store| b
                            .capstan_plugin_backend()
                            .call_rollback(&mut store, release, revision, &old)
                    )
                }
            }
        };
        self.exclusive("rollback", release, &lock_grants, call)
            .await
    }

    /// `backend.plan`.
    pub async fn plan(&self, request: &SyncRequest, grants: Grants) -> Result<SyncPlan, CallError> {
        let grants = self.with_storage(grants);
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "plan", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_plan(&mut store, request))
            }
            BackendPre::V0_1(adapter) => {
                let values = self.merged_values(adapter, "plan", &request.values).await?;
                let old = compat_backend::sync_request(request, values);
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "plan",
                    grants,
                    |b, store| async {
                        b.capstan_plugin_backend()
                            .call_plan(&mut store, &old)
                            .await
                            .map(|r| r.map(compat_backend::sync_plan))
                    }
                )
            }
        }
    }

    /// `backend.package`: turn a chart folder or archive into an artifact, by the backend's
    /// engine's rules (for a 0.1 backend, which has no `package`, by `compat-helm`).
    pub async fn package(&self, chart: &ChartInput) -> Result<ChartArtifact, CallError> {
        let grants = Grants::default();
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "package", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_package(&mut store, chart))
            }
            BackendPre::V0_1(adapter) => {
                let input = compat_backend::chart_input(chart);
                plugin_call!(
                    self.handle,
                    adapter.services,
                    "package",
                    grants,
                    |b, store| async {
                        b.capstan_compat_helm_services()
                            .call_package(&mut store, &input)
                            .await
                            .map(|r| {
                                r.map(compat_backend::artifact)
                                    .map_err(compat_backend::services_error)
                            })
                    }
                )
            }
        }
    }

    /// The component's instance-pre and the index of its optional export `interface`
    /// (`capstan:plugin/<interface>` at the component's contract version); `None` for a
    /// component of the previous contract or without the export.
    fn optional_export(
        &self,
        interface: &str,
    ) -> Option<(
        &wasmtime::component::InstancePre<CallState>,
        wasmtime::component::ComponentExportIndex,
    )> {
        let BackendPre::Current(pre) = &self.pre else {
            return None;
        };
        let instance_pre = pre.instance_pre();
        let index = instance_pre.component().get_export_index(
            None,
            format!(
                "capstan:plugin/{interface}@{}",
                self.handle.plugin.wit_version
            ),
        )?;
        Some((instance_pre, index))
    }

    /// `chart-template.template-chart`, the optional export that renders a chart folder or
    /// archive without packaging it first; `None` when the component does not export it
    /// (then `package` and `template` do the same work).
    pub async fn template_chart(
        &self,
        release: &ReleaseId,
        chart: &ChartInput,
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Option<Result<Rendered, CallError>> {
        let (instance_pre, interface) = self.optional_export("chart-template")?;
        let component = instance_pre.component();
        let function = component.get_export_index(Some(&interface), "template-chart")?;
        type Params<'a> = (
            &'a ReleaseId,
            &'a ChartInput,
            &'a [ValueLayer],
            &'a TemplateOptions,
        );
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "template-chart",
            grants,
            |instance, store| async {
                let template_chart = instance
                        .get_typed_func::<Params<'_>, (Result<Rendered, crate::bindings::types::Error>,)>(
                            &mut store, &function,
                        )?;
                let (rendered,) = template_chart
                    .call_async(&mut store, (release, chart, values, options))
                    .await?;
                Ok(rendered)
            }
        ))
    }

    /// Whether the component exports `folder-template` (see [`BackendPlugin::template_folder`]).
    pub fn has_folder_template(&self) -> bool {
        self.optional_export("folder-template").is_some()
    }

    /// `folder-template.template-folder`, the optional export that renders a chart folder
    /// passed in part: `files` read, `unread` listed only, their contents read through the
    /// `folder-files` grant `grants` carries. `None` when the component does not export it.
    pub async fn template_folder(
        &self,
        release: &ReleaseId,
        files: &[ChartFile],
        unread: &[UnreadFile],
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Option<Result<Rendered, CallError>> {
        let (instance_pre, interface) = self.optional_export("folder-template")?;
        let component = instance_pre.component();
        let function = component.get_export_index(Some(&interface), "template-folder")?;
        type Params<'a> = (
            &'a ReleaseId,
            &'a [ChartFile],
            &'a [UnreadFile],
            &'a [ValueLayer],
            &'a TemplateOptions,
        );
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "template-folder",
            grants,
            |instance, store| async {
                let template_folder = instance
                    .get_typed_func::<Params<'_>, (Result<Rendered, crate::bindings::types::Error>,)>(
                        &mut store, &function,
                    )?;
                let (rendered,) = template_folder
                    .call_async(&mut store, (release, files, unread, values, options))
                    .await?;
                Ok(rendered)
            }
        ))
    }

    /// `chart-folder`, the optional export that says which files of a chart folder make up
    /// the chart: `rules-file`, then `chart-files` of `paths` with that file's contents as
    /// `rules` reads them (`None` when the folder has no such file), both on one instance.
    /// `None` when the component does not export it. The indexes are the component's
    /// answer, unchecked.
    pub async fn chart_files(
        &self,
        paths: &[String],
        rules: impl FnOnce(&str) -> Option<Vec<u8>> + Send,
        grants: Grants,
    ) -> Option<Result<Vec<u32>, CallError>> {
        let (instance_pre, interface) = self.optional_export("chart-folder")?;
        let component = instance_pre.component();
        let rules_file = component.get_export_index(Some(&interface), "rules-file")?;
        let chart_files = component.get_export_index(Some(&interface), "chart-files")?;
        type Files = Result<Vec<u32>, crate::bindings::types::Error>;
        Some(plugin_call!(
            self.handle,
            instance_pre,
            "chart-files",
            grants,
            |instance, store| async {
                let (name,) = instance
                    .get_typed_func::<(), (Option<String>,)>(&mut store, &rules_file)?
                    .call_async(&mut store, ())
                    .await?;
                let contents = name.as_deref().and_then(rules);
                let (kept,) = instance
                    .get_typed_func::<(&[String], Option<&[u8]>), (Files,)>(
                        &mut store,
                        &chart_files,
                    )?
                    .call_async(&mut store, (paths, contents.as_deref()))
                    .await?;
                Ok(kept)
            }
        ))
    }

    /// `backend.template`.
    pub async fn template(
        &self,
        release: &ReleaseId,
        chart: &ChartArtifact,
        values: &[ValueLayer],
        options: &TemplateOptions,
        grants: Grants,
    ) -> Result<Rendered, CallError> {
        match &self.pre {
            BackendPre::Current(pre) => {
                plugin_call!(self.handle, pre, "template", grants, |b, store| b
                    .capstan_plugin_backend()
                    .call_template(&mut store, release, chart, values, options))
            }
            BackendPre::V0_1(adapter) => {
                let values = self.merged_values(adapter, "template", values).await?;
                let old = compat_backend::template_options(options);
                plugin_call!(
                    self.handle,
                    adapter.backend,
                    "template",
                    grants,
                    |b, store| async {
                        b.capstan_plugin_backend()
                            .call_template(&mut store, release, chart, &values, &old)
                            .await
                            .map(|r| r.map(compat_backend::rendered))
                    }
                )
            }
        }
    }
}
