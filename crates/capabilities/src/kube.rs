//! The `kube` host interface: unstructured access to the API server, limited to the
//! namespaces and cluster-scoped kinds granted to the current plugin call.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, PropagationPolicy,
};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::bindings::kube::{Host, ObjectRef, Propagation, Readiness};
use super::bindings::types::{Error, ErrorCode, Json};
pub use super::discovery_cache::DiscoveryCache;
use super::errors::error;
use super::{pod_logs, readiness};

/// Field manager used for server-side apply unless the grant says otherwise.
pub const FIELD_MANAGER: &str = "capstan";

/// Kubernetes access for one plugin call.
#[derive(Clone)]
pub struct KubeGrant {
    /// The identity the plugin's calls run as (the operator's, or an impersonated service
    /// account's).
    client: Client,
    /// The operator's own client, for the host's bookkeeping (the release lock).
    operator_client: Client,
    namespaces: Arc<BTreeSet<String>>,
    cluster_kinds: Arc<BTreeSet<String>>,
    field_manager: Arc<str>,
    discovery: Arc<DiscoveryCache>,
    /// Propagation of the release's own objects' deletions in this call, in place of what
    /// the plugin asks (`uninstall.deletionPropagation`); hooks keep the plugin's choice.
    deletion_propagation: Option<Propagation>,
}

impl KubeGrant {
    /// Grant access to namespaced objects in `namespaces` and to cluster-scoped objects of
    /// `cluster_kinds` (written `Kind` for the core group, `Kind.group` otherwise).
    pub fn new(
        client: Client,
        discovery: Arc<DiscoveryCache>,
        namespaces: impl IntoIterator<Item = String>,
        cluster_kinds: impl IntoIterator<Item = String>,
    ) -> Self {
        KubeGrant {
            operator_client: client.clone(),
            client,
            namespaces: Arc::new(namespaces.into_iter().collect()),
            cluster_kinds: Arc::new(cluster_kinds.into_iter().collect()),
            field_manager: Arc::from(FIELD_MANAGER),
            discovery,
            deletion_propagation: None,
        }
    }

    /// The same grant, also reaching namespaced objects in `extra` (a backend's record
    /// storage namespaces, e.g. Helm 2's Tiller namespace).
    pub fn with_namespaces(&self, extra: &[String]) -> KubeGrant {
        if extra.iter().all(|n| self.namespaces.contains(n)) {
            return self.clone();
        }
        let mut namespaces = (*self.namespaces).clone();
        namespaces.extend(extra.iter().cloned());
        KubeGrant {
            namespaces: Arc::new(namespaces),
            ..self.clone()
        }
    }

    /// The same grant, with every call of the plugin made through `client` (one acting as
    /// a service account); the host's own bookkeeping keeps the operator's client.
    pub fn acting_as(mut self, client: Client) -> KubeGrant {
        self.client = client;
        self
    }

    /// The same grant, deleting the release's objects (not its hooks) with `propagation`
    /// whatever the plugin asks (Helm's `uninstall --cascade`).
    pub fn deleting_with(mut self, propagation: Propagation) -> KubeGrant {
        self.deletion_propagation = Some(propagation);
        self
    }

    /// The client the plugin's calls go through, and the cluster's discovery cache.
    pub(crate) fn discovery_client(&self) -> (&Client, &DiscoveryCache) {
        (&self.client, &self.discovery)
    }

    /// The operator's client behind this grant (for the host's own bookkeeping, such as the
    /// release lock; never handed to the plugin).
    pub fn operator_client(&self) -> &Client {
        &self.operator_client
    }

    async fn resource(&self, api_version: &str, kind: &str) -> Result<(ApiResource, bool), Error> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(found) = self.discovery.kind(&key).await {
            return Ok(found);
        }
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        if version.is_empty() || kind.is_empty() {
            return Err(error(
                ErrorCode::InvalidInput,
                format!("invalid apiVersion `{api_version}` or kind `{kind}`"),
            ));
        }
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let (resource, capabilities) = kube::discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(|e| match classify(&e) {
                ErrorCode::NotFound => error(
                    ErrorCode::NotFound,
                    format!("the API server does not serve kind {kind} in {api_version}"),
                ),
                code => error(code, format!("discovery of {kind} in {api_version}: {e}")),
            })?;
        let found = (resource, capabilities.scope == Scope::Namespaced);
        self.discovery.remember_kind(key, found.clone()).await;
        Ok(found)
    }

    /// An API handle for `kind`, after checking the grant.
    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Api<DynamicObject>, Error> {
        let (resource, namespaced) = self.resource(api_version, kind).await?;
        if namespaced {
            let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
                return Err(error(
                    ErrorCode::Denied,
                    format!("{kind} is namespaced; access across all namespaces is not granted"),
                ));
            };
            if !self.namespaces.contains(namespace) {
                return Err(error(
                    ErrorCode::Denied,
                    format!(
                        "namespace `{namespace}` is not granted to this call (granted: {})",
                        list(&self.namespaces)
                    ),
                ));
            }
            Ok(Api::namespaced_with(
                self.client.clone(),
                namespace,
                &resource,
            ))
        } else {
            let qualified = if resource.group.is_empty() {
                kind.to_owned()
            } else {
                format!("{kind}.{}", resource.group)
            };
            if !self.cluster_kinds.contains(&qualified) {
                return Err(error(
                    ErrorCode::Denied,
                    format!("cluster-scoped kind `{qualified}` is not granted to this call"),
                ));
            }
            Ok(Api::all_with(self.client.clone(), &resource))
        }
    }

    async fn api_for_object(&self, object: &Value) -> Result<(Api<DynamicObject>, String), Error> {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let (Some(api_version), Some(kind), Some(name)) =
            (text("/apiVersion"), text("/kind"), text("/metadata/name"))
        else {
            return Err(error(
                ErrorCode::InvalidInput,
                "object needs apiVersion, kind and metadata.name",
            ));
        };
        let api = self
            .api(api_version, kind, text("/metadata/namespace"))
            .await?;
        Ok((api, name.to_owned()))
    }
}

fn list(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

fn classify(e: &kube::Error) -> ErrorCode {
    match e {
        kube::Error::Api(status) => match status.code {
            404 => ErrorCode::NotFound,
            409 => ErrorCode::Conflict,
            401 | 403 => ErrorCode::Denied,
            400 | 422 => ErrorCode::InvalidInput,
            408 | 504 => ErrorCode::Timeout,
            _ => ErrorCode::Unavailable,
        },
        kube::Error::SerdeError(_) => ErrorCode::InvalidInput,
        _ => ErrorCode::Unavailable,
    }
}

fn api_error(action: &str, what: &str, e: kube::Error) -> Error {
    let message = match &e {
        kube::Error::Api(status) => {
            format!("{action} {what}: {} ({})", status.message, status.reason)
        }
        other => format!("{action} {what}: {other}"),
    };
    error(classify(&e), message)
}

fn parse(object: &str) -> Result<Value, Error> {
    serde_json::from_str(object).map_err(|e| {
        error(
            ErrorCode::InvalidInput,
            format!("object is not valid JSON: {e}"),
        )
    })
}

fn to_json(object: &DynamicObject) -> Result<Json, Error> {
    serde_json::to_string(object)
        .map_err(|e| error(ErrorCode::Internal, format!("cannot encode object: {e}")))
}

fn describe(object: &ObjectRef) -> String {
    match &object.namespace {
        Some(namespace) => format!("{} {}/{}", object.kind, namespace, object.name),
        None => format!("{} {}", object.kind, object.name),
    }
}

/// What the `kube` and `discovery` imports see of a call: its Kubernetes grant.
pub struct KubeView<'a> {
    /// The grant, if any.
    pub(crate) grant: Option<&'a KubeGrant>,
}

impl<'a> KubeView<'a> {
    /// The grant, or the refusal of a call without one.
    pub(crate) fn kube(&self) -> Result<&'a KubeGrant, Error> {
        self.grant.ok_or_else(|| {
            error(
                ErrorCode::Denied,
                "Kubernetes access is not granted to this call",
            )
        })
    }
}

impl Host for KubeView<'_> {
    async fn get(&mut self, object: ObjectRef) -> Result<Option<Json>, Error> {
        let grant = self.kube()?;
        let api = grant
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        match api.get_opt(&object.name).await {
            Ok(Some(found)) => Ok(Some(to_json(&found)?)),
            Ok(None) => Ok(None),
            Err(e) => Err(api_error("get", &describe(&object), e)),
        }
    }

    async fn list(
        &mut self,
        api_version: String,
        kind: String,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<Json>, Error> {
        let grant = self.kube()?;
        let api = grant.api(&api_version, &kind, namespace.as_deref()).await?;
        let mut params = ListParams::default();
        if let Some(selector) = &label_selector {
            params = params.labels(selector);
        }
        let found = api
            .list(&params)
            .await
            .map_err(|e| api_error("list", &kind, e))?;
        found.items.iter().map(to_json).collect()
    }

    async fn create(&mut self, object: Json) -> Result<Json, Error> {
        let grant = self.kube()?;
        let value = parse(&object)?;
        let (api, name) = grant.api_for_object(&value).await?;
        let typed: DynamicObject = serde_json::from_value(value)
            .map_err(|e| error(ErrorCode::InvalidInput, format!("object {name}: {e}")))?;
        let created = api
            .create(&PostParams::default(), &typed)
            .await
            .map_err(|e| api_error("create", &name, e))?;
        to_json(&created)
    }

    async fn apply(&mut self, object: Json, force: bool) -> Result<Json, Error> {
        let grant = self.kube()?;
        let value = parse(&object)?;
        let (api, name) = grant.api_for_object(&value).await?;
        let mut params = PatchParams::apply(&grant.field_manager);
        if force {
            params = params.force();
        }
        let applied = api
            .patch(&name, &params, &Patch::Apply(&value))
            .await
            .map_err(|e| api_error("apply", &name, e))?;
        to_json(&applied)
    }

    async fn apply_dry_run(&mut self, object: Json, force: bool) -> Result<Json, Error> {
        let grant = self.kube()?;
        let value = parse(&object)?;
        let (api, name) = grant.api_for_object(&value).await?;
        let mut params = PatchParams::apply(&grant.field_manager).dry_run();
        if force {
            params = params.force();
        }
        let applied = api
            .patch(&name, &params, &Patch::Apply(&value))
            .await
            .map_err(|e| api_error("dry-run apply", &name, e))?;
        to_json(&applied)
    }

    async fn delete(&mut self, object: ObjectRef, propagation: Propagation) -> Result<bool, Error> {
        let grant = self.kube()?;
        let api = grant
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        let propagation = match grant.deletion_propagation {
            Some(policy) if policy != propagation => {
                // Hooks are deleted as the plugin asks, as Helm deletes them.
                let is_hook = match api.get_metadata_opt(&object.name).await {
                    Ok(found) => found.is_some_and(|o| {
                        o.metadata
                            .annotations
                            .is_some_and(|a| a.contains_key("helm.sh/hook"))
                    }),
                    Err(e) => return Err(api_error("read", &describe(&object), e)),
                };
                if is_hook { propagation } else { policy }
            }
            _ => propagation,
        };
        let params = DeleteParams {
            propagation_policy: Some(match propagation {
                Propagation::Background => PropagationPolicy::Background,
                Propagation::Foreground => PropagationPolicy::Foreground,
                Propagation::Orphan => PropagationPolicy::Orphan,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&object.name, &params).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(e) => Err(api_error("delete", &describe(&object), e)),
        }
    }

    async fn wait_ready(
        &mut self,
        objects: Vec<ObjectRef>,
        timeout_ms: u32,
    ) -> Result<Vec<Readiness>, Error> {
        let grant = self.kube()?.clone();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(u64::from(timeout_ms));
        let mut apis = Vec::with_capacity(objects.len());
        for object in &objects {
            apis.push(
                grant
                    .api(
                        &object.api_version,
                        &object.kind,
                        object.namespace.as_deref(),
                    )
                    .await?,
            );
        }
        let client = grant.client.clone();
        let waits = objects.into_iter().zip(apis).map(|(object, api)| {
            let client = client.clone();
            async move {
                let (verdict, latest) = watch_until_ready(api, &object, deadline).await?;
                // A failed hook Pod or Job is reported with what it printed last.
                let message = match (&object.namespace, verdict.failed) {
                    (Some(namespace), true) => {
                        pod_logs::with_logs(
                            &client,
                            &object.kind,
                            namespace,
                            &object.name,
                            latest.as_ref(),
                            verdict.message,
                        )
                        .await
                    }
                    _ => verdict.message,
                };
                Ok(Readiness {
                    object,
                    ready: verdict.ready,
                    message,
                })
            }
        });
        futures::future::join_all(waits).await.into_iter().collect()
    }
}

/// Watch one object (no polling) until it is ready, can never become ready (a failed Job or
/// Pod), or the deadline passes; returns the last verdict either way, with the object as
/// last seen.
async fn watch_until_ready(
    api: Api<DynamicObject>,
    object: &ObjectRef,
    deadline: tokio::time::Instant,
) -> Result<(readiness::Verdict, Option<Value>), Error> {
    let config = watcher::Config::default().fields(&format!("metadata.name={}", object.name));
    let mut stream = std::pin::pin!(watcher::watcher(api, config).default_backoff());
    let mut latest: Option<Value> = None;
    let mut verdict = readiness::judge(&object.kind, None);
    loop {
        let next = match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) | Ok(None) => return Ok((verdict, latest)),
            Ok(Some(event)) => event,
        };
        match next {
            Ok(Event::Apply(found) | Event::InitApply(found))
                if found.name_any() == object.name =>
            {
                latest = serde_json::to_value(&found).ok();
            }
            Ok(Event::Delete(found)) if found.name_any() == object.name => latest = None,
            Ok(Event::Init) => latest = None,
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(object = %describe(object), error = %e, "watch error while waiting; retrying");
                continue;
            }
        }
        verdict = readiness::judge(&object.kind, latest.as_ref());
        if verdict.is_final() {
            return Ok((verdict, latest));
        }
    }
}
