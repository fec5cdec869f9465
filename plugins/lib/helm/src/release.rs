//! Helm v3 release records, as `helm.sh/helm/v3/pkg/release` and `pkg/storage/driver` write
//! and read them: the release model with its JSON (Go's `encoding/json` field order,
//! omitempty rules, HTML-safe escaping and float format), the storage codec (gzip level 9
//! then base64; the legacy un-gzipped form is read too), the Secret and ConfigMap objects
//! with Helm's system labels, status strings, and `--history-max` pruning.
//!
//! Values (`config`, the chart's `values`) are kept as Go-typed [`Value`]s read with
//! `json.Unmarshal` semantics (every number a `float64`), so a record read and written back
//! is byte for byte what Helm would write. Times are kept as the RFC 3339 text Helm wrote
//! (`""` for Go's zero time). `info.resources` (only filled by `helm status
//! --show-resources`, never stored) is not modelled.
//!
//! Not here: the SQL driver, and user labels' validation against the system labels (the
//! backend refuses them before building a record).

use std::collections::BTreeMap;
use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use capstan_gotmpl::json::{from_json as go_from_json, to_json as go_to_json};
use capstan_gotmpl::value::{Map, Value};

use crate::chart::Chart;

/// Prefix of every record name: `sh.helm.release.v1.<name>.v<revision>`.
pub const STORAGE_PREFIX: &str = "sh.helm.release.v1";
/// The `type` of release Secrets.
pub const SECRET_TYPE: &str = "helm.sh/release.v1";
/// Value of the `owner` label on every record.
pub const OWNER: &str = "helm";
/// Labels the storage drivers own; they never appear in [`Release::labels`].
pub const SYSTEM_LABELS: [&str; 6] = [
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];

/// Why a record could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    /// The stored text is not base64.
    #[error("release data is not base64: {0}")]
    Base64(String),
    /// The gzip stream is corrupt.
    #[error("release data is not a valid gzip stream: {0}")]
    Gzip(String),
    /// The JSON does not parse or has a field of the wrong type.
    #[error("release JSON: {0}")]
    Json(String),
    /// The storage object lacks what a release record has.
    #[error("storage object {name}: {message}")]
    Object {
        /// Object name (or `?`).
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// Lifecycle state of a revision, with Helm's strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// `unknown` (also used for strings Helm does not define).
    #[default]
    Unknown,
    /// `deployed`.
    Deployed,
    /// `uninstalled`.
    Uninstalled,
    /// `superseded`.
    Superseded,
    /// `failed`.
    Failed,
    /// `uninstalling`.
    Uninstalling,
    /// `pending-install`.
    PendingInstall,
    /// `pending-upgrade`.
    PendingUpgrade,
    /// `pending-rollback`.
    PendingRollback,
}

impl Status {
    /// Helm's string for the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Deployed => "deployed",
            Status::Uninstalled => "uninstalled",
            Status::Superseded => "superseded",
            Status::Failed => "failed",
            Status::Uninstalling => "uninstalling",
            Status::PendingInstall => "pending-install",
            Status::PendingUpgrade => "pending-upgrade",
            Status::PendingRollback => "pending-rollback",
        }
    }

    /// Parse Helm's string; anything else is [`Status::Unknown`].
    pub fn parse(text: &str) -> Status {
        match text {
            "deployed" => Status::Deployed,
            "uninstalled" => Status::Uninstalled,
            "superseded" => Status::Superseded,
            "failed" => Status::Failed,
            "uninstalling" => Status::Uninstalling,
            "pending-install" => Status::PendingInstall,
            "pending-upgrade" => Status::PendingUpgrade,
            "pending-rollback" => Status::PendingRollback,
            _ => Status::Unknown,
        }
    }

    /// Helm's `IsPending`: an operation started and did not finish.
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            Status::PendingInstall | Status::PendingUpgrade | Status::PendingRollback
        )
    }
}

/// `release.Info`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info {
    /// RFC 3339 time of the first deployment (`""`: zero).
    pub first_deployed: String,
    /// RFC 3339 time of this revision (`""`: zero).
    pub last_deployed: String,
    /// RFC 3339 time of deletion (`""`: zero; always written).
    pub deleted: String,
    /// What happened.
    pub description: String,
    /// State of the revision.
    pub status: Status,
    /// Rendered NOTES.txt.
    pub notes: String,
}

/// `chart.File`: a name and bytes (base64 in JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChartFile {
    /// Path relative to the chart root.
    pub name: String,
    /// Contents.
    pub data: Vec<u8>,
}

/// `chart.Chart` as stored in a release: subcharts are not serialised by Helm.
#[derive(Debug, Clone, Default)]
pub struct ChartRecord {
    /// `metadata` as a map with Chart.yaml's JSON names (nil: `null`).
    pub metadata: Value,
    /// `lock` (`generated`, `digest`, `dependencies`), nil when the chart has none.
    pub lock: Value,
    /// `templates` (None: Go's nil slice, `null`).
    pub templates: Option<Vec<ChartFile>>,
    /// The chart's default values.
    pub values: Value,
    /// values.schema.json.
    pub schema: Option<Vec<u8>>,
    /// Every other file (None: `null`).
    pub files: Option<Vec<ChartFile>>,
    /// Subcharts. Not part of Helm v3's JSON (v3 does not store them); Helm v2 records do.
    pub subcharts: Vec<ChartRecord>,
    /// values.yaml as written. Not part of Helm v3's JSON; Helm v2 records store it.
    pub raw_values: Option<Vec<u8>>,
}

/// `release.HookExecution`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookExecution {
    /// RFC 3339 start time (`""`: never ran).
    pub started_at: String,
    /// RFC 3339 completion time.
    pub completed_at: String,
    /// `Unknown`, `Running`, `Succeeded`, `Failed` or empty.
    pub phase: String,
}

/// `release.Hook`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookRecord {
    /// Object name.
    pub name: String,
    /// Object kind.
    pub kind: String,
    /// Template path, e.g. `mychart/templates/job.yaml`.
    pub path: String,
    /// The document.
    pub manifest: String,
    /// Events it runs on.
    pub events: Vec<String>,
    /// Last execution.
    pub last_run: HookExecution,
    /// Execution order weight.
    pub weight: i64,
    /// `helm.sh/hook-delete-policy` entries.
    pub delete_policies: Vec<String>,
    /// `helm.sh/hook-output-log-policy` entries.
    pub output_log_policies: Vec<String>,
}

/// `release.Release`.
#[derive(Debug, Clone, Default)]
pub struct Release {
    /// Release name.
    pub name: String,
    /// Status and times.
    pub info: Option<Info>,
    /// The chart, without subcharts.
    pub chart: Option<ChartRecord>,
    /// User-supplied values (not coalesced); nil or an empty map is omitted.
    pub config: Value,
    /// Rendered non-hook manifests.
    pub manifest: String,
    /// Hooks.
    pub hooks: Vec<HookRecord>,
    /// Revision, from 1.
    pub version: u32,
    /// Namespace of the release.
    pub namespace: String,
    /// User labels of the storage object (not in the JSON).
    pub labels: BTreeMap<String, String>,
}

impl Release {
    /// Status of the revision ([`Status::Unknown`] without info).
    pub fn status(&self) -> Status {
        self.info.as_ref().map(|i| i.status).unwrap_or_default()
    }

    /// Name of the storage object of this revision.
    pub fn key(&self) -> String {
        record_name(&self.name, self.version)
    }
}

/// `sh.helm.release.v1.<name>.v<revision>`.
pub fn record_name(name: &str, version: u32) -> String {
    format!("{STORAGE_PREFIX}.{name}.v{version}")
}

// ---------------------------------------------------------------------------------------
// JSON out

/// Writes one JSON object with fields in the order they are added (Go struct order).
struct Object {
    out: String,
    empty: bool,
}

impl Object {
    fn new() -> Object {
        Object {
            out: String::from("{"),
            empty: true,
        }
    }

    fn raw(&mut self, key: &str, json: &str) {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        self.out.push_str(&string_json(key));
        self.out.push(':');
        self.out.push_str(json);
    }

    fn string(&mut self, key: &str, text: &str) {
        self.raw(key, &string_json(text));
    }

    fn string_nonempty(&mut self, key: &str, text: &str) {
        if !text.is_empty() {
            self.string(key, text);
        }
    }

    fn strings_nonempty(&mut self, key: &str, items: &[String]) {
        if !items.is_empty() {
            let parts: Vec<String> = items.iter().map(|s| string_json(s)).collect();
            self.raw(key, &format!("[{}]", parts.join(",")));
        }
    }

    fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

fn string_json(text: &str) -> String {
    // A string never fails to encode.
    go_to_json(&Value::from(text)).unwrap_or_else(|_| String::from("\"\""))
}

fn value_json(value: &Value, what: &str) -> Result<String, ReleaseError> {
    go_to_json(value).map_err(|e| ReleaseError::Json(format!("{what}: {e}")))
}

fn files_json(files: &Option<Vec<ChartFile>>) -> String {
    match files {
        None => "null".into(),
        Some(files) => {
            let parts: Vec<String> = files
                .iter()
                .map(|f| {
                    let mut o = Object::new();
                    o.string("name", &f.name);
                    o.string("data", &B64.encode(&f.data));
                    o.finish()
                })
                .collect();
            format!("[{}]", parts.join(","))
        }
    }
}

const METADATA_ORDER: &[&str] = &[
    "name",
    "home",
    "sources",
    "version",
    "description",
    "keywords",
    "maintainers",
    "icon",
    "apiVersion",
    "condition",
    "tags",
    "appVersion",
    "deprecated",
    "annotations",
    "kubeVersion",
    "dependencies",
    "type",
];
const MAINTAINER_ORDER: &[&str] = &["name", "email", "url"];
const DEPENDENCY_ORDER: &[&str] = &[
    "name",
    "version",
    "repository",
    "condition",
    "tags",
    "enabled",
    "import-values",
    "alias",
];
const LOCK_ORDER: &[&str] = &["generated", "digest", "dependencies"];

/// A map written with `order`'s keys first (struct fields), then any others sorted; the
/// values of `nested` keys are lists of maps written with their own order.
fn ordered_json(
    value: &Value,
    order: &[&str],
    nested: &[(&str, &[&str])],
    what: &str,
) -> Result<String, ReleaseError> {
    let Value::Map(map) = value else {
        return value_json(value, what);
    };
    let map = map.borrow();
    let mut o = Object::new();
    let known = order.iter().copied().filter(|k| map.contains_key(*k));
    let others = map
        .keys()
        .map(String::as_str)
        .filter(|k| !order.contains(k));
    for key in known.chain(others) {
        let Some(field) = map.get(key) else { continue };
        let json = match (nested.iter().find(|(k, _)| *k == key), field) {
            (Some((_, inner)), Value::List(items)) => {
                let parts = items
                    .iter()
                    .map(|item| ordered_json(item, inner, &[], what))
                    .collect::<Result<Vec<_>, _>>()?;
                format!("[{}]", parts.join(","))
            }
            _ => value_json(field, what)?,
        };
        o.raw(key, &json);
    }
    Ok(o.finish())
}

impl ChartRecord {
    /// The record of a loaded chart, as Helm stores it (subcharts left out).
    pub fn from_chart(chart: &Chart) -> ChartRecord {
        let files = |list: &[crate::chart::File]| {
            (!list.is_empty()).then(|| {
                list.iter()
                    .map(|f| ChartFile {
                        name: f.name.clone(),
                        data: f.data.to_vec(),
                    })
                    .collect()
            })
        };
        let lock = match &chart.lock {
            None => Value::Nil,
            Some(lock) => {
                let mut map = Map::new();
                map.insert("generated".into(), Value::from(lock.generated.as_str()));
                map.insert("digest".into(), Value::from(lock.digest.as_str()));
                let deps: Vec<Value> = lock
                    .dependencies
                    .iter()
                    .map(crate::chart::Dependency::to_json_value)
                    .collect();
                map.insert(
                    "dependencies".into(),
                    if deps.is_empty() {
                        Value::Nil
                    } else {
                        Value::from(deps)
                    },
                );
                Value::from(map)
            }
        };
        ChartRecord {
            metadata: chart.metadata.to_json_value(),
            lock,
            templates: files(&chart.templates),
            values: chart.values.clone(),
            schema: chart.schema.clone(),
            files: files(&chart.files),
            subcharts: chart
                .dependencies()
                .iter()
                .map(ChartRecord::from_chart)
                .collect(),
            raw_values: chart.raw_values.clone(),
        }
    }

    /// `metadata.name`.
    pub fn name(&self) -> String {
        self.metadata_field("name")
    }

    /// `metadata.version`.
    pub fn version(&self) -> String {
        self.metadata_field("version")
    }

    /// `metadata.appVersion`.
    pub fn app_version(&self) -> String {
        self.metadata_field("appVersion")
    }

    fn metadata_field(&self, key: &str) -> String {
        match &self.metadata {
            Value::Map(map) => map
                .borrow()
                .get(key)
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn to_json(&self) -> Result<String, ReleaseError> {
        let mut o = Object::new();
        o.raw(
            "metadata",
            &ordered_json(
                &self.metadata,
                METADATA_ORDER,
                &[
                    ("maintainers", MAINTAINER_ORDER),
                    ("dependencies", DEPENDENCY_ORDER),
                ],
                "chart metadata",
            )?,
        );
        o.raw(
            "lock",
            &ordered_json(
                &self.lock,
                LOCK_ORDER,
                &[("dependencies", DEPENDENCY_ORDER)],
                "chart lock",
            )?,
        );
        o.raw("templates", &files_json(&self.templates));
        o.raw("values", &value_json(&self.values, "chart values")?);
        match &self.schema {
            Some(schema) => o.string("schema", &B64.encode(schema)),
            None => o.raw("schema", "null"),
        }
        o.raw("files", &files_json(&self.files));
        Ok(o.finish())
    }
}

fn is_empty_map(value: &Value) -> bool {
    match value {
        Value::Nil => true,
        Value::Map(map) => map.borrow().is_empty(),
        _ => false,
    }
}

impl HookRecord {
    fn to_json(&self) -> String {
        let mut o = Object::new();
        o.string_nonempty("name", &self.name);
        o.string_nonempty("kind", &self.kind);
        o.string_nonempty("path", &self.path);
        o.string_nonempty("manifest", &self.manifest);
        o.strings_nonempty("events", &self.events);
        let mut run = Object::new();
        run.string("started_at", &self.last_run.started_at);
        run.string("completed_at", &self.last_run.completed_at);
        run.string("phase", &self.last_run.phase);
        o.raw("last_run", &run.finish());
        if self.weight != 0 {
            o.raw("weight", &self.weight.to_string());
        }
        o.strings_nonempty("delete_policies", &self.delete_policies);
        o.strings_nonempty("output_log_policies", &self.output_log_policies);
        o.finish()
    }
}

/// The release as `json.Marshal(release)` writes it.
pub fn to_json(release: &Release) -> Result<String, ReleaseError> {
    let mut o = Object::new();
    o.string_nonempty("name", &release.name);
    if let Some(info) = &release.info {
        let mut i = Object::new();
        i.string_nonempty("first_deployed", &info.first_deployed);
        i.string_nonempty("last_deployed", &info.last_deployed);
        i.string("deleted", &info.deleted);
        i.string_nonempty("description", &info.description);
        i.string("status", info.status.as_str());
        i.string_nonempty("notes", &info.notes);
        o.raw("info", &i.finish());
    }
    if let Some(chart) = &release.chart {
        o.raw("chart", &chart.to_json()?);
    }
    if !is_empty_map(&release.config) {
        o.raw("config", &value_json(&release.config, "config")?);
    }
    o.string_nonempty("manifest", &release.manifest);
    if !release.hooks.is_empty() {
        let parts: Vec<String> = release.hooks.iter().map(HookRecord::to_json).collect();
        o.raw("hooks", &format!("[{}]", parts.join(",")));
    }
    if release.version != 0 {
        o.raw("version", &release.version.to_string());
    }
    o.string_nonempty("namespace", &release.namespace);
    Ok(o.finish())
}

// ---------------------------------------------------------------------------------------
// JSON in

fn json_err(message: impl Into<String>) -> ReleaseError {
    ReleaseError::Json(message.into())
}

fn field<'m>(map: &'m Map, key: &str) -> Option<&'m Value> {
    map.get(key).filter(|v| !matches!(v, Value::Nil))
}

fn text(map: &Map, key: &str, what: &str) -> Result<String, ReleaseError> {
    match field(map, key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(_) => Err(json_err(format!("{what}.{key} is not a string"))),
    }
}

fn number(map: &Map, key: &str, what: &str) -> Result<i64, ReleaseError> {
    match field(map, key) {
        None => Ok(0),
        Some(Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
        Some(Value::Int(i) | Value::Int64(i)) => Ok(*i),
        Some(_) => Err(json_err(format!("{what}.{key} is not an integer"))),
    }
}

fn texts(map: &Map, key: &str, what: &str) -> Result<Vec<String>, ReleaseError> {
    match field(map, key) {
        None => Ok(Vec::new()),
        Some(Value::List(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| json_err(format!("{what}.{key} holds a non-string")))
            })
            .collect(),
        Some(_) => Err(json_err(format!("{what}.{key} is not a list"))),
    }
}

fn with_map<T>(
    value: &Value,
    what: &str,
    f: impl FnOnce(&Map) -> Result<T, ReleaseError>,
) -> Result<T, ReleaseError> {
    match value {
        Value::Map(map) => f(&map.borrow()),
        _ => Err(json_err(format!("{what} is not an object"))),
    }
}

fn bytes(map: &Map, key: &str, what: &str) -> Result<Option<Vec<u8>>, ReleaseError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::String(s)) => B64
            .decode(s.as_bytes())
            .map(Some)
            .map_err(|e| json_err(format!("{what}.{key}: {e}"))),
        Some(_) => Err(json_err(format!("{what}.{key} is not a base64 string"))),
    }
}

fn chart_files(map: &Map, key: &str) -> Result<Option<Vec<ChartFile>>, ReleaseError> {
    match field(map, key) {
        None => Ok(None),
        Some(Value::List(items)) => items
            .iter()
            .map(|item| {
                with_map(item, "chart file", |f| {
                    Ok(ChartFile {
                        name: text(f, "name", "chart file")?,
                        data: bytes(f, "data", "chart file")?.unwrap_or_default(),
                    })
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(json_err(format!("chart.{key} is not a list"))),
    }
}

fn chart_from(value: &Value) -> Result<ChartRecord, ReleaseError> {
    with_map(value, "chart", |c| {
        Ok(ChartRecord {
            metadata: field(c, "metadata").cloned().unwrap_or_default(),
            lock: field(c, "lock").cloned().unwrap_or_default(),
            templates: chart_files(c, "templates")?,
            values: field(c, "values").cloned().unwrap_or_default(),
            schema: bytes(c, "schema", "chart")?,
            files: chart_files(c, "files")?,
            subcharts: Vec::new(),
            raw_values: None,
        })
    })
}

fn hook_from(value: &Value) -> Result<HookRecord, ReleaseError> {
    with_map(value, "hook", |h| {
        let last_run = match field(h, "last_run") {
            None => HookExecution::default(),
            Some(run) => with_map(run, "hook.last_run", |r| {
                Ok(HookExecution {
                    started_at: text(r, "started_at", "hook.last_run")?,
                    completed_at: text(r, "completed_at", "hook.last_run")?,
                    phase: text(r, "phase", "hook.last_run")?,
                })
            })?,
        };
        Ok(HookRecord {
            name: text(h, "name", "hook")?,
            kind: text(h, "kind", "hook")?,
            path: text(h, "path", "hook")?,
            manifest: text(h, "manifest", "hook")?,
            events: texts(h, "events", "hook")?,
            last_run,
            weight: number(h, "weight", "hook")?,
            delete_policies: texts(h, "delete_policies", "hook")?,
            output_log_policies: texts(h, "output_log_policies", "hook")?,
        })
    })
}

/// Read a release from `json.Marshal` output (unknown fields, e.g. Helm 4's, ignored).
pub fn from_json(json: &str) -> Result<Release, ReleaseError> {
    let value = go_from_json(json).map_err(|e| json_err(e.to_string()))?;
    with_map(&value, "release", |r| {
        let info = match field(r, "info") {
            None => None,
            Some(info) => Some(with_map(info, "info", |i| {
                Ok(Info {
                    first_deployed: text(i, "first_deployed", "info")?,
                    last_deployed: text(i, "last_deployed", "info")?,
                    deleted: text(i, "deleted", "info")?,
                    description: text(i, "description", "info")?,
                    status: Status::parse(&text(i, "status", "info")?),
                    notes: text(i, "notes", "info")?,
                })
            })?),
        };
        let hooks = match field(r, "hooks") {
            None => Vec::new(),
            Some(Value::List(items)) => items.iter().map(hook_from).collect::<Result<_, _>>()?,
            Some(_) => return Err(json_err("release.hooks is not a list")),
        };
        let version = number(r, "version", "release")?;
        Ok(Release {
            name: text(r, "name", "release")?,
            info,
            chart: field(r, "chart").map(chart_from).transpose()?,
            config: field(r, "config").cloned().unwrap_or_default(),
            manifest: text(r, "manifest", "release")?,
            hooks,
            version: u32::try_from(version)
                .map_err(|_| json_err(format!("release.version {version} is out of range")))?,
            namespace: text(r, "namespace", "release")?,
            labels: BTreeMap::new(),
        })
    })
}

// ---------------------------------------------------------------------------------------
// Codec

/// `encodeRelease`: JSON, gzip at best compression, standard base64.
pub fn encode(release: &Release) -> Result<String, ReleaseError> {
    let json = to_json(release)?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(json.as_bytes())
        .map_err(|e| ReleaseError::Gzip(e.to_string()))?;
    let compressed = gz.finish().map_err(|e| ReleaseError::Gzip(e.to_string()))?;
    Ok(B64.encode(compressed))
}

/// `decodeRelease`: base64, then gunzip when the gzip magic is there (records written
/// before Helm compressed them are plain JSON), then JSON.
pub fn decode(data: &str) -> Result<Release, ReleaseError> {
    let raw = B64
        .decode(data.trim().as_bytes())
        .map_err(|e| ReleaseError::Base64(e.to_string()))?;
    let json = if raw.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| ReleaseError::Gzip(e.to_string()))?;
        out
    } else {
        raw
    };
    let text = String::from_utf8(json).map_err(|e| json_err(e.to_string()))?;
    from_json(&text)
}

// ---------------------------------------------------------------------------------------
// Storage objects

/// Where records are stored (`HELM_DRIVER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Driver {
    /// Secrets of type `helm.sh/release.v1` (Helm's default).
    #[default]
    Secrets,
    /// ConfigMaps.
    ConfigMaps,
}

/// A `HELM_DRIVER` value that names no driver we keep records with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDriver {
    /// The value given.
    pub name: String,
}

impl std::fmt::Display for UnknownDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HELM_DRIVER {:?} is not supported: accepted are \"secret\", \"secrets\" (the \
             default), \"configmap\" and \"configmaps\" (Helm's \"sql\" and \"memory\" \
             drivers keep records outside the cluster and are not supported)",
            self.name
        )
    }
}

impl std::error::Error for UnknownDriver {}

impl Driver {
    /// Kubernetes kind of the storage objects.
    pub fn kind(self) -> &'static str {
        match self {
            Driver::Secrets => "Secret",
            Driver::ConfigMaps => "ConfigMap",
        }
    }

    /// The driver a `HELM_DRIVER` value names, as `Configuration.Init` reads it: `secret`,
    /// `secrets` or empty for Secrets, `configmap` or `configmaps` for ConfigMaps. Helm's
    /// `memory` and `sql` drivers keep records outside the cluster and are refused.
    pub fn from_helm_driver(name: &str) -> Result<Driver, UnknownDriver> {
        match name {
            "" | "secret" | "secrets" => Ok(Driver::Secrets),
            "configmap" | "configmaps" => Ok(Driver::ConfigMaps),
            other => Err(UnknownDriver {
                name: other.to_owned(),
            }),
        }
    }
}

/// Which timestamp label a write sets: `Create` sets `createdAt`, `Update` `modifiedAt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// A new record, created at these Unix seconds.
    Created(u64),
    /// A rewritten record, modified at these Unix seconds.
    Modified(u64),
}

/// Label selector of one release's history (`name=<n>,owner=helm`).
pub fn history_selector(name: &str) -> String {
    format!("name={name},owner={OWNER}")
}

/// The storage object (Kubernetes API JSON) for `release`, as the driver builds it: user
/// labels, then `name`/`owner`/`status`/`version`, then the timestamp label. A Secret's
/// `data.release` is base64 of the encoded text (the API's own base64 around Helm's).
pub fn storage_object(
    driver: Driver,
    release: &Release,
    stamp: Stamp,
) -> Result<serde_json::Value, ReleaseError> {
    let encoded = encode(release)?;
    let mut labels = serde_json::Map::new();
    for (key, value) in &release.labels {
        labels.insert(key.clone(), value.clone().into());
    }
    labels.insert("name".into(), release.name.clone().into());
    labels.insert("owner".into(), OWNER.into());
    labels.insert("status".into(), release.status().as_str().into());
    labels.insert("version".into(), release.version.to_string().into());
    match stamp {
        Stamp::Created(at) => labels.insert("createdAt".into(), at.to_string().into()),
        Stamp::Modified(at) => labels.insert("modifiedAt".into(), at.to_string().into()),
    };
    let metadata = serde_json::json!({
        "name": release.key(),
        "namespace": release.namespace,
        "labels": labels,
    });
    Ok(match driver {
        Driver::Secrets => serde_json::json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": SECRET_TYPE,
            "data": {"release": B64.encode(encoded.as_bytes())},
        }),
        Driver::ConfigMaps => serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata,
            "data": {"release": encoded},
        }),
    })
}

/// Read a release from a Secret or ConfigMap (Kubernetes API JSON); the system labels are
/// left out of [`Release::labels`], as the drivers' `Get` does.
pub fn from_storage_object(object: &serde_json::Value) -> Result<Release, ReleaseError> {
    let name = object
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let fail = |message: String| ReleaseError::Object {
        name: name.clone(),
        message,
    };
    let data = object
        .pointer("/data/release")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| fail("has no data.release".into()))?;
    let encoded = match object.get("kind").and_then(serde_json::Value::as_str) {
        Some("Secret") => {
            let bytes = B64
                .decode(data.as_bytes())
                .map_err(|e| fail(format!("data.release is not base64: {e}")))?;
            String::from_utf8(bytes).map_err(|e| fail(format!("data.release: {e}")))?
        }
        Some("ConfigMap") => data.to_owned(),
        other => return Err(fail(format!("unexpected kind {other:?}"))),
    };
    let mut release = decode(&encoded).map_err(|e| fail(e.to_string()))?;
    if let Some(labels) = object
        .pointer("/metadata/labels")
        .and_then(serde_json::Value::as_object)
    {
        for (key, value) in labels {
            if let Some(value) = value.as_str()
                && !SYSTEM_LABELS.contains(&key.as_str())
            {
                release.labels.insert(key.clone(), value.to_owned());
            }
        }
    }
    Ok(release)
}

// ---------------------------------------------------------------------------------------
// History

/// Revisions `Storage.Create` deletes before writing a new record when `max_history > 0`:
/// the oldest first until `max_history - 1` remain, never the latest `deployed` one.
/// `history` is `(revision, status)` in any order.
pub fn revisions_to_prune(history: &[(u32, Status)], max_history: u32) -> Vec<u32> {
    if max_history == 0 {
        return Vec::new();
    }
    let keep = (max_history - 1) as usize;
    if history.len() <= keep {
        return Vec::new();
    }
    let mut sorted: Vec<(u32, Status)> = history.to_vec();
    sorted.sort_by_key(|(revision, _)| *revision);
    let last_deployed = sorted
        .iter()
        .rev()
        .find(|(_, status)| *status == Status::Deployed)
        .map(|(revision, _)| *revision);
    let mut doomed = Vec::new();
    for (revision, _) in &sorted {
        if sorted.len() - doomed.len() == keep {
            break;
        }
        if Some(*revision) != last_deployed {
            doomed.push(*revision);
        }
    }
    doomed
}

/// Go's `time.Time.MarshalJSON` for a UTC instant: RFC 3339 with nanoseconds, trailing
/// fractional zeros trimmed, `Z`.
pub fn format_time(unix_seconds: i64, nanos: u32) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut out = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    );
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/release");

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
    }

    #[test]
    fn helm_json_round_trips_byte_for_byte() {
        let json = fixture("release.json");
        let release = from_json(&json).unwrap();
        assert_eq!(release.name, "demo");
        assert_eq!(release.version, 2);
        assert_eq!(release.status(), Status::Deployed);
        assert_eq!(release.hooks.len(), 2);
        assert_eq!(release.hooks[0].weight, -5);
        assert_eq!(to_json(&release).unwrap(), json);
    }

    #[test]
    fn reads_helm_secret_and_configmap_and_legacy_form() {
        let json = fixture("release.json");
        for file in ["secret.json", "configmap.json"] {
            let object: serde_json::Value = serde_json::from_str(&fixture(file)).unwrap();
            let release = from_storage_object(&object).unwrap();
            assert_eq!(to_json(&release).unwrap(), json, "{file}");
            assert_eq!(
                release.labels,
                BTreeMap::from([("team".to_string(), "platform".to_string())])
            );
        }
        let legacy = decode(&fixture("legacy.txt")).unwrap();
        assert_eq!(to_json(&legacy).unwrap(), json);
    }

    #[test]
    fn writes_the_secret_helm_writes() {
        let helm: serde_json::Value = serde_json::from_str(&fixture("secret.json")).unwrap();
        let release = from_storage_object(&helm).unwrap();
        let ours =
            storage_object(Driver::Secrets, &release, Stamp::Created(1_767_322_800)).unwrap();
        assert_eq!(ours["metadata"]["labels"], helm["metadata"]["labels"]);
        assert_eq!(ours["metadata"]["name"], helm["metadata"]["name"]);
        assert_eq!(ours["type"], helm["type"]);
        // gzip bytes may differ between implementations; the decoded JSON may not.
        let back = from_storage_object(&ours).unwrap();
        assert_eq!(to_json(&back).unwrap(), fixture("release.json"));
        let helm_cm: serde_json::Value = serde_json::from_str(&fixture("configmap.json")).unwrap();
        let ours_cm =
            storage_object(Driver::ConfigMaps, &release, Stamp::Created(1_767_322_800)).unwrap();
        assert_eq!(ours_cm["metadata"]["labels"], helm_cm["metadata"]["labels"]);
        assert!(ours_cm.get("type").is_none());
    }

    /// Writes our Secret and ConfigMap for the oracle's `read` mode (see the fixtures'
    /// README) when `CAPSTAN_RELEASE_ORACLE_OUT` names a folder.
    #[test]
    fn writes_objects_for_the_oracle() {
        let Ok(out) = std::env::var("CAPSTAN_RELEASE_ORACLE_OUT") else {
            return;
        };
        let mut release = from_json(&fixture("release.json")).unwrap();
        release.labels.insert("team".into(), "platform".into());
        for (driver, file) in [
            (Driver::Secrets, "ours-secret.json"),
            (Driver::ConfigMaps, "ours-configmap.json"),
        ] {
            let object = storage_object(driver, &release, Stamp::Modified(1_767_322_801)).unwrap();
            std::fs::write(format!("{out}/{file}"), object.to_string()).unwrap();
        }
    }

    #[test]
    fn chart_record_of_a_loaded_chart_matches_helm() {
        let chart = crate::load::load(format!("{FIXTURES}/chart")).unwrap();
        let ours = ChartRecord::from_chart(&chart).to_json().unwrap();
        let helm: serde_json::Value = serde_json::from_str(&fixture("release.json")).unwrap();
        let helm_chart = serde_json::to_string(&helm["chart"]).unwrap();
        let ours_value: serde_json::Value = serde_json::from_str(&ours).unwrap();
        assert_eq!(ours_value, helm["chart"], "{ours}\n{helm_chart}");
        // Same bytes too, apart from serde_json's own escaping of the Helm side.
        let helm_record = from_json(&fixture("release.json")).unwrap().chart.unwrap();
        assert_eq!(ours, helm_record.to_json().unwrap());
    }

    #[test]
    fn empty_release_fields_follow_omitempty() {
        let release = Release {
            name: "a".into(),
            info: Some(Info::default()),
            config: Value::new_map(),
            version: 1,
            ..Release::default()
        };
        assert_eq!(
            to_json(&release).unwrap(),
            r#"{"name":"a","info":{"deleted":"","status":"unknown"},"version":1}"#
        );
    }

    #[test]
    fn helm_driver_names() {
        for (name, driver) in [
            ("", Driver::Secrets),
            ("secret", Driver::Secrets),
            ("secrets", Driver::Secrets),
            ("configmap", Driver::ConfigMaps),
            ("configmaps", Driver::ConfigMaps),
        ] {
            assert_eq!(Driver::from_helm_driver(name), Ok(driver), "{name}");
        }
        let error = Driver::from_helm_driver("ConfigMap")
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"ConfigMap\""), "{error}");
        assert!(error.contains("\"configmaps\""), "{error}");
        let error = Driver::from_helm_driver("sql").unwrap_err().to_string();
        assert!(
            error.starts_with("HELM_DRIVER \"sql\" is not supported"),
            "{error}"
        );
        assert!(error.contains("\"memory\" drivers"), "{error}");
        assert!(Driver::from_helm_driver("memory").is_err());
    }

    #[test]
    fn prunes_like_helm_and_keeps_the_last_deployed() {
        use Status::*;
        let history = [(1, Superseded), (2, Superseded), (3, Deployed), (4, Failed)];
        assert_eq!(revisions_to_prune(&history, 0), Vec::<u32>::new());
        assert_eq!(revisions_to_prune(&history, 10), Vec::<u32>::new());
        assert_eq!(revisions_to_prune(&history, 3), vec![1, 2]);
        assert_eq!(revisions_to_prune(&history, 1), vec![1, 2, 4]);
        let none_deployed = [(2, Failed), (1, Superseded)];
        assert_eq!(revisions_to_prune(&none_deployed, 1), vec![1, 2]);
    }

    #[test]
    fn status_strings() {
        for s in [
            "unknown",
            "deployed",
            "uninstalled",
            "superseded",
            "failed",
            "uninstalling",
            "pending-install",
            "pending-upgrade",
            "pending-rollback",
        ] {
            assert_eq!(Status::parse(s).as_str(), s);
        }
        assert!(Status::PendingUpgrade.is_pending());
        assert!(!Status::Failed.is_pending());
    }

    #[test]
    fn formats_times_as_go_does() {
        assert_eq!(format_time(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_time(1_767_323_045, 123_456_000),
            "2026-01-02T03:04:05.123456Z"
        );
        assert_eq!(
            format_time(951_782_400, 500_000_000),
            "2000-02-29T00:00:00.5Z"
        );
    }

    #[test]
    fn corrupt_data_is_an_error() {
        assert!(matches!(decode("%%%"), Err(ReleaseError::Base64(_))));
        assert!(matches!(
            decode(&B64.encode([0x1f, 0x8b, 0x08, 0, 1])),
            Err(ReleaseError::Gzip(_))
        ));
        assert!(matches!(
            decode(&B64.encode("[]")),
            Err(ReleaseError::Json(_))
        ));
    }
}
