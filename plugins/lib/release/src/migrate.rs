//! Moving a release from Helm 2 to Helm 3 in place, as `helm 2to3 convert` does, by the
//! Helm 3 store on first sight: when a release has no Helm 3 record but has Tiller records
//! in its namespace, and `CAPSTAN_IMPORT_HELM2` (from the plugin's WASI env grant) allows
//! it, its history is converted with helm-2to3's mapping (same revision numbers), written
//! as Helm 3 records, its live objects are given Helm 3's ownership metadata by applying
//! the last revision's own manifest (no object recreated, no spec changed; Deployments get
//! the label only, since an annotation change is a new generation for them), and the
//! Tiller records are deleted (`move`) or kept (`copy`). `preview` converts without writing.
//!
//! Swapping a release's backend from helm2 to helm3 in the configuration therefore moves
//! it on the next reconcile; `capstan release migrate` does the same by hand.

use capstan_helm::release::Release;
use capstan_plugin_sdk::backend::capstan::plugin::kube;
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode, ReleaseId};

use crate::store::{Helm3Store, RecordStore, describe, with_context};
use crate::tiller_store::TillerStore;

/// Label on Helm 3 records converted from Helm 2 records.
pub const MIGRATED_LABEL: &str = "capstan.dev/migrated-from";

/// The environment variable choosing the [`Mode`].
pub const MODE_ENV: &str = "CAPSTAN_IMPORT_HELM2";

/// What the Helm 3 store does with a release that only has Tiller records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nothing: the release is not installed as far as Helm 3 knows (the default).
    Off,
    /// Show the converted history, write nothing.
    Preview,
    /// Write Helm 3 records and adopt the objects; keep the Tiller records.
    Copy,
    /// Write Helm 3 records and adopt the objects; delete the Tiller records.
    Move,
}

/// The mode `CAPSTAN_IMPORT_HELM2` names.
pub fn mode() -> Result<Mode, Error> {
    match std::env::var(MODE_ENV).unwrap_or_default().as_str() {
        "" | "off" => Ok(Mode::Off),
        "preview" => Ok(Mode::Preview),
        "copy" => Ok(Mode::Copy),
        "move" => Ok(Mode::Move),
        other => Err(Error::new(
            ErrorCode::InvalidInput,
            format!("{MODE_ENV} `{other}` is not one of off, preview, copy, move"),
        )),
    }
}

/// The Helm 3 history of `id` made from its Tiller records (written unless previewing), or
/// `None` when the mode is off or there is nothing to convert.
pub fn import(id: &ReleaseId) -> Result<Option<Vec<Release>>, Error> {
    let mode = mode()?;
    if mode == Mode::Off {
        return Ok(None);
    }
    let records: Vec<_> = TillerStore
        .records(id)?
        .into_iter()
        .filter(|r| r.namespace == id.namespace)
        .collect();
    if records.is_empty() {
        return Ok(None);
    }
    let history: Vec<Release> = records
        .iter()
        .map(|record| {
            let mut converted = capstan_helm::tiller::to_v3(record);
            converted
                .labels
                .insert(MIGRATED_LABEL.into(), "helm2".into());
            converted
        })
        .collect();
    if mode == Mode::Preview {
        return Ok(Some(history));
    }
    for record in &history {
        match Helm3Store.create(record) {
            Ok(()) => {}
            // Another operation converted it first: use what it wrote.
            Err(e) if e.code == ErrorCode::Conflict => {
                return Helm3Store.history(id).map(Some);
            }
            Err(e) => return Err(with_context(e, "write the converted Helm 3 records")),
        }
    }
    adopt(id, &history)?;
    if mode == Mode::Move {
        for record in &records {
            let version = u32::try_from(record.version).unwrap_or(0);
            TillerStore.delete(id, version)?;
        }
    }
    let (first, last) = (
        history.first().map_or(0, |r| r.version),
        history.last().map_or(0, |r| r.version),
    );
    log(
        Level::Info,
        &format!(
            "moved release {} from Helm 2 to Helm 3: revisions {first}..{last}{}",
            describe(id),
            if mode == Mode::Copy {
                " (Tiller records kept)"
            } else {
                ""
            }
        ),
    );
    Ok(Some(history))
}

/// Give the release's live objects Helm 3's ownership metadata: apply the last revision's
/// manifest as it stands (with the metadata), only to objects that exist. The same spec is
/// applied again, so nothing is recreated, no workload rolls and no Deployment gets a new
/// generation.
fn adopt(id: &ReleaseId, history: &[Release]) -> Result<(), Error> {
    let Some(last) = history.last() else {
        return Ok(());
    };
    let objects = crate::sync::manifest_objects(id, &last.manifest)?;
    for mut object in objects {
        // The API server counts an annotation change of a Deployment as a new generation
        // (a rollout in the eyes of every tool watching it): Deployments get the label now
        // and the annotations with their next real change, which Helm 3 allows for objects
        // of the release's own manifest.
        if object.body["kind"] == "Deployment"
            && let Some(annotations) = object
                .body
                .pointer_mut("/metadata/annotations")
                .and_then(serde_json::Value::as_object_mut)
        {
            annotations.remove(crate::objects::RELEASE_NAME);
            annotations.remove(crate::objects::RELEASE_NAMESPACE);
        }
        let exists = kube::get(&object.reference)
            .map_err(|e| with_context(e, &format!("get {}", object.describe())))?
            .is_some();
        if !exists {
            continue;
        }
        kube::apply(&object.body.to_string(), true)
            .map_err(|e| with_context(e, &format!("adopt {} into Helm 3", object.describe())))?;
    }
    Ok(())
}
