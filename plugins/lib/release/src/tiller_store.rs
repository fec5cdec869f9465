//! Helm v2 release records as Tiller keeps them, written and read without Tiller: a
//! ConfigMap (or, with `TILLER_STORAGE=secret`, a Secret) `<release>.v<N>` in Tiller's
//! namespace (`TILLER_NAMESPACE`, default `kube-system`), both read from the environment the
//! plugin's WASI grant gives it, as Tiller reads its flags. The lifecycle works on Helm v3's
//! model; records are converted at this boundary (`capstan_helm::tiller`).
//!
//! Helm 2 release names are unique in the cluster: every operation starts by reading the
//! name's history here, and a history that belongs to another namespace refuses the
//! operation before anything is written. A release that already has Helm 3 records is
//! refused too: Helm 3 -> Helm 2 is not a supported move (Helm 2 cannot hold what Helm 3
//! records, and the objects carry Helm 3's ownership).

use crate::store::{RecordStore, describe, internal, now_seconds, with_context};
use capstan_helm::release::Release;
use capstan_helm::tiller::{self, Stamp};
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef, Propagation};
use capstan_plugin_sdk::backend::capstan::plugin::release_context;
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode, ReleaseId};

/// Tiller's records.
pub struct TillerStore;

/// Where records live and in what kind of object.
struct Location {
    namespace: String,
    secret: bool,
}

fn location() -> Result<Location, Error> {
    let namespace = std::env::var("TILLER_NAMESPACE")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| tiller::DEFAULT_NAMESPACE.to_owned());
    if let Some(asked) = release_context::storage_namespace() {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!(
                "storageNamespace {asked}: Helm 2 keeps the records of every release in Tiller's namespace ({namespace}, TILLER_NAMESPACE), not per release"
            ),
        ));
    }
    let secret = match std::env::var("TILLER_STORAGE").unwrap_or_default().as_str() {
        "" | "configmap" => false,
        "secret" => true,
        other => {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!("TILLER_STORAGE `{other}` is not `configmap` or `secret`"),
            ));
        }
    };
    Ok(Location { namespace, secret })
}

impl Location {
    fn kind(&self) -> &'static str {
        if self.secret { "Secret" } else { "ConfigMap" }
    }
}

/// Refuse to keep Helm 2 records for a release that has Helm 3 records (in Secrets or
/// ConfigMaps of its namespace).
fn refuse_helm3_releases(id: &ReleaseId) -> Result<(), Error> {
    for kind in ["Secret", "ConfigMap"] {
        let found = kube::list(
            "v1",
            kind,
            Some(&id.namespace),
            Some(&capstan_helm::release::history_selector(&id.name)),
        )
        .map_err(|e| with_context(e, &format!("look for Helm 3 records of {}", describe(id))))?;
        if !found.is_empty() {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "release {} is managed by Helm 3 ({} release records in {kind}s); moving a release from Helm 3 back to Helm 2 is not supported (Helm 2 cannot represent its records and would not own its objects), so nothing was changed",
                    describe(id),
                    found.len()
                ),
            ));
        }
    }
    Ok(())
}

impl TillerStore {
    /// Every Tiller record named `id.name`, whatever its namespace, oldest first.
    pub fn records(&self, id: &ReleaseId) -> Result<Vec<tiller::release::Release>, Error> {
        let at = location()?;
        let objects = kube::list(
            "v1",
            at.kind(),
            Some(&at.namespace),
            Some(&tiller::history_selector(&id.name)),
        )
        .map_err(|e| {
            with_context(
                e,
                &format!("list Helm 2 records of `{}` in {}", id.name, at.namespace),
            )
        })?;
        let mut records = Vec::with_capacity(objects.len());
        for object in objects {
            let mut value: serde_json::Value = serde_json::from_str(&object)
                .map_err(|e| internal(format!("release record is not JSON: {e}")))?;
            if let Some(fields) = value.as_object_mut() {
                fields.entry("kind").or_insert_with(|| at.kind().into());
            }
            records.push(tiller::from_storage_object(&value).map_err(|e| {
                Error::new(
                    ErrorCode::InvalidInput,
                    format!("Helm 2 release `{}` in {}: {e}", id.name, at.namespace),
                )
            })?);
        }
        records.sort_by_key(|r| r.version);
        Ok(records)
    }
}

impl RecordStore for TillerStore {
    fn history(&self, id: &ReleaseId) -> Result<Vec<Release>, Error> {
        let records = self.records(id)?;
        if let Some(other) = records.iter().find(|r| r.namespace != id.namespace) {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "release name `{}` is in use by a Helm 2 release in namespace `{}` (Helm 2 release names are unique in the cluster); nothing was changed",
                    id.name, other.namespace
                ),
            ));
        }
        if records.is_empty() {
            refuse_helm3_releases(id)?;
        }
        Ok(records.iter().map(tiller::to_v3).collect())
    }

    fn create(&self, record: &Release) -> Result<(), Error> {
        let at = location()?;
        let object = tiller::storage_object(
            &tiller::from_v3(record),
            &at.namespace,
            at.secret,
            Stamp::Created(now_seconds()),
            None,
        );
        kube::create(&object.to_string()).map_err(|e| {
            with_context(
                e,
                &format!(
                    "create Helm 2 record {}",
                    tiller::record_name(&record.name, record.version)
                ),
            )
        })?;
        Ok(())
    }

    fn update(&self, record: &Release) -> Result<(), Error> {
        let at = location()?;
        // Tiller's update rewrites the labels with MODIFIED_AT only.
        let object = tiller::storage_object(
            &tiller::from_v3(record),
            &at.namespace,
            at.secret,
            Stamp::Modified(now_seconds()),
            None,
        );
        kube::apply(&object.to_string(), true).map_err(|e| {
            with_context(
                e,
                &format!(
                    "update Helm 2 record {}",
                    tiller::record_name(&record.name, record.version)
                ),
            )
        })?;
        Ok(())
    }

    fn delete(&self, id: &ReleaseId, version: u32) -> Result<(), Error> {
        let at = location()?;
        let name = tiller::record_name(&id.name, version);
        kube::delete(
            &ObjectRef {
                api_version: "v1".into(),
                kind: at.kind().into(),
                namespace: Some(at.namespace.clone()),
                name: name.clone(),
            },
            Propagation::Background,
        )
        .map_err(|e| {
            with_context(
                e,
                &format!("delete Helm 2 record {name} of {}", describe(id)),
            )
        })?;
        Ok(())
    }
}
