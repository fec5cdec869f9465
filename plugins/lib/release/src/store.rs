//! Release records in the cluster, through the host's `kube` capability. Every operation
//! reads and writes records through this module's functions only, which go to the
//! [`RecordStore`] the component chose with [`use_store`] (default: [`Helm3Store`]).
//!
//! [`Helm3Store`] writes exactly what Helm's Secrets or ConfigMaps driver writes (see
//! `capstan_helm::release`), so `helm` reads ours and we read its: Secrets (the default) or
//! ConfigMaps `sh.helm.release.v1.<name>.v<N>` in the release namespace; the driver is
//! `HELM_DRIVER`, read from the environment the plugin's WASI grant gives it
//! (`wasi: {env: {HELM_DRIVER: configmap}}`), as the `helm` CLI reads it. The records live
//! in the release namespace unless the host names a storage namespace
//! (`release-context`, Flux's `storageNamespace`).

use capstan_helm::release::{self, Driver, Release, Stamp, Status};
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::release_context;
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartMetadata, Error, ErrorCode, ReleaseId, ReleaseInfo, ReleaseStatus,
};

/// The storage driver `HELM_DRIVER` names (unset or empty: Secrets, Helm's default).
fn driver() -> Result<Driver, Error> {
    let name = std::env::var("HELM_DRIVER").unwrap_or_default();
    Driver::from_helm_driver(&name).map_err(|e| Error::new(ErrorCode::InvalidInput, e.to_string()))
}

pub fn internal(message: String) -> Error {
    Error::new(ErrorCode::Internal, message)
}

/// Seconds and nanoseconds since the Unix epoch (the WASI wall clock).
pub fn now() -> (i64, u32) {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Err(_) => (0, 0),
    }
}

/// The current time as Helm records it.
pub fn now_text() -> String {
    let (secs, nanos) = now();
    release::format_time(secs, nanos)
}

pub fn now_seconds() -> u64 {
    u64::try_from(now().0).unwrap_or(0)
}

/// Where release records live. Implementations must give Helm's optimistic lock: `create`
/// of an existing revision fails with `conflict`.
pub trait RecordStore: Sync {
    /// Every revision of `id`, oldest first.
    fn history(&self, id: &ReleaseId) -> Result<Vec<Release>, Error>;
    /// Write a new record; `conflict` when the revision exists.
    fn create(&self, record: &Release) -> Result<(), Error>;
    /// Rewrite a record (status changes).
    fn update(&self, record: &Release) -> Result<(), Error>;
    /// Delete the record of one revision (absent is fine).
    fn delete(&self, id: &ReleaseId, version: u32) -> Result<(), Error>;
}

static STORE: std::sync::OnceLock<&'static dyn RecordStore> = std::sync::OnceLock::new();

/// Choose the record store of this component (once, before any operation; later calls
/// are ignored).
pub fn use_store(store: &'static dyn RecordStore) {
    let _ = STORE.set(store);
}

fn store() -> &'static dyn RecordStore {
    *STORE.get_or_init(|| &Helm3Store)
}

/// Every revision of `id`, oldest first.
pub fn history(id: &ReleaseId) -> Result<Vec<Release>, Error> {
    store().history(id)
}

/// Write a new record; fails with `conflict` when the revision exists (another operation
/// got there first — Helm's optimistic lock).
pub fn create(record: &Release) -> Result<(), Error> {
    store().create(record)
}

/// Rewrite a record (status changes), like the driver's unconditional `Update`.
pub fn update(record: &Release) -> Result<(), Error> {
    store().update(record)
}

/// Delete the record of one revision (absent is fine).
pub fn delete(id: &ReleaseId, version: u32) -> Result<(), Error> {
    store().delete(id, version)
}

/// Helm v3's records: Secrets or ConfigMaps in the release namespace (or the storage
/// namespace the host names), by `HELM_DRIVER`.
pub struct Helm3Store;

/// The namespace the records of `id` live in.
pub fn records_namespace(id: &ReleaseId) -> String {
    release_context::storage_namespace().unwrap_or_else(|| id.namespace.clone())
}

/// A storage object moved to the storage namespace, if the host names one.
fn in_records_namespace(mut object: serde_json::Value, id: &ReleaseId) -> serde_json::Value {
    let namespace = records_namespace(id);
    if namespace != id.namespace
        && let Some(metadata) = object.get_mut("metadata").and_then(|m| m.as_object_mut())
    {
        metadata.insert("namespace".into(), serde_json::Value::String(namespace));
    }
    object
}

impl RecordStore for Helm3Store {
    /// Every revision of `id`, oldest first.
    fn history(&self, id: &ReleaseId) -> Result<Vec<Release>, Error> {
        let kind = driver()?.kind();
        let objects = kube::list(
            "v1",
            kind,
            Some(&records_namespace(id)),
            Some(&release::history_selector(&id.name)),
        )
        .map_err(|e| with_context(e, &format!("list release records of {}", describe(id))))?;
        let mut releases = Vec::with_capacity(objects.len());
        for object in objects {
            let mut value: serde_json::Value = serde_json::from_str(&object)
                .map_err(|e| internal(format!("release record is not JSON: {e}")))?;
            // Items of a list carry no kind of their own.
            if let Some(fields) = value.as_object_mut() {
                fields.entry("kind").or_insert_with(|| kind.into());
            }
            let record = release::from_storage_object(&value).map_err(|e| {
                Error::new(
                    ErrorCode::InvalidInput,
                    format!("release {}: {e}", describe(id)),
                )
            })?;
            releases.push(record);
        }
        releases.sort_by_key(|r| r.version);
        if releases.is_empty()
            && let Some(imported) = crate::migrate::import(id)?
        {
            return Ok(imported);
        }
        Ok(releases)
    }

    /// Write a new record; fails with `conflict` when the revision exists (another operation
    /// got there first — Helm's optimistic lock).
    fn create(&self, record: &Release) -> Result<(), Error> {
        let object = release::storage_object(driver()?, record, Stamp::Created(now_seconds()))
            .map_err(|e| internal(e.to_string()))?;
        let object = in_records_namespace(object, &record_id(record));
        kube::create(&object.to_string())
            .map_err(|e| with_context(e, &format!("create release record {}", record.key())))?;
        Ok(())
    }

    /// Rewrite a record (status changes), like the driver's unconditional `Update`.
    fn update(&self, record: &Release) -> Result<(), Error> {
        let object = release::storage_object(driver()?, record, Stamp::Modified(now_seconds()))
            .map_err(|e| internal(e.to_string()))?;
        let object = in_records_namespace(object, &record_id(record));
        kube::apply(&object.to_string(), true)
            .map_err(|e| with_context(e, &format!("update release record {}", record.key())))?;
        Ok(())
    }

    /// Delete the record of one revision (absent is fine).
    fn delete(&self, id: &ReleaseId, version: u32) -> Result<(), Error> {
        let name = release::record_name(&id.name, version);
        kube::delete(
            &ObjectRef {
                api_version: "v1".into(),
                kind: driver()?.kind().into(),
                namespace: Some(records_namespace(id)),
                name: name.clone(),
            },
            Propagation::Background,
        )
        .map_err(|e| with_context(e, &format!("delete release record {name}")))?;
        Ok(())
    }
}

fn record_id(record: &Release) -> ReleaseId {
    ReleaseId {
        name: record.name.clone(),
        namespace: record.namespace.clone(),
    }
}

/// `name` in `namespace`, for messages.
pub fn describe(id: &ReleaseId) -> String {
    format!("{}/{}", id.namespace, id.name)
}

/// Prefix an error's message with what was being done.
pub fn with_context(mut error: Error, step: &str) -> Error {
    error.message = format!("{step}: {}", error.message);
    error
}

fn status_of(status: Status) -> ReleaseStatus {
    match status {
        Status::Unknown => ReleaseStatus::Unknown,
        Status::Deployed => ReleaseStatus::Deployed,
        Status::Uninstalled => ReleaseStatus::Uninstalled,
        Status::Superseded => ReleaseStatus::Superseded,
        Status::Failed => ReleaseStatus::Failed,
        Status::Uninstalling => ReleaseStatus::Uninstalling,
        Status::PendingInstall => ReleaseStatus::PendingInstall,
        Status::PendingUpgrade => ReleaseStatus::PendingUpgrade,
        Status::PendingRollback => ReleaseStatus::PendingRollback,
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// What the WIT contract reports about one revision.
pub fn info(record: &Release) -> ReleaseInfo {
    let chart = record.chart.as_ref();
    let info = record.info.clone().unwrap_or_default();
    ReleaseInfo {
        id: ReleaseId {
            name: record.name.clone(),
            namespace: record.namespace.clone(),
        },
        revision: record.version,
        status: status_of(info.status),
        chart: ChartMetadata {
            name: chart.map(|c| c.name()).unwrap_or_default(),
            version: chart.map(|c| c.version()).unwrap_or_default(),
            app_version: chart.and_then(|c| non_empty(&c.app_version())),
        },
        first_deployed: non_empty(&info.first_deployed),
        last_deployed: non_empty(&info.last_deployed),
        description: info.description,
        notes: non_empty(&info.notes),
    }
}
