//! Helm v2 (Tiller) release records: the `hapi.release` / `hapi.chart` protobuf messages,
//! the record encoding (`base64(gzip(protobuf))` in a ConfigMap or Secret named
//! `<release>.v<N>` in Tiller's namespace, labelled `NAME`, `OWNER=TILLER`, `STATUS`,
//! `VERSION`, `CREATED_AT` / `MODIFIED_AT`), a chart as Tiller stores it (subcharts
//! included, other files as `Any{type_url: path}`), and the conversion of a v2 record into a
//! v3 release with helm-2to3's mapping.
//!
//! The messages are declared here with `prost`'s derives from the `.proto` files of Helm
//! 2.17 (`_proto/hapi/**`): field numbers and types are the wire contract; there is no
//! `protoc` step.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use base64::Engine as _;
use capstan_gotmpl::value::{Map, Value};
use prost::Message as _;

use crate::chart::Chart;
use crate::release::{ChartFile, ChartRecord, HookExecution, HookRecord, Info, Release, Status};

/// `google.protobuf` well-known types as Helm 2 uses them.
pub mod protobuf {
    /// `google.protobuf.Timestamp`.
    #[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
    pub struct Timestamp {
        /// Seconds since the Unix epoch.
        #[prost(int64, tag = "1")]
        pub seconds: i64,
        /// Nanoseconds within the second.
        #[prost(int32, tag = "2")]
        pub nanos: i32,
    }

    /// `google.protobuf.Any`: Tiller stores chart files as `{type_url: path, value: bytes}`.
    #[derive(Clone, PartialEq, Eq, prost::Message)]
    pub struct Any {
        /// The file's path in the chart.
        #[prost(string, tag = "1")]
        pub type_url: String,
        /// The file's bytes.
        #[prost(bytes = "vec", tag = "2")]
        pub value: Vec<u8>,
    }
}

/// `hapi.chart`.
pub mod chart {
    use std::collections::BTreeMap;

    use super::protobuf::Any;

    /// `hapi.chart.Chart`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Chart {
        /// Chart.yaml.
        #[prost(message, optional, tag = "1")]
        pub metadata: Option<Metadata>,
        /// `templates/**`.
        #[prost(message, repeated, tag = "2")]
        pub templates: Vec<Template>,
        /// Subcharts (stored, unlike Helm 3).
        #[prost(message, repeated, tag = "3")]
        pub dependencies: Vec<Chart>,
        /// values.yaml (raw YAML).
        #[prost(message, optional, tag = "4")]
        pub values: Option<Config>,
        /// Every other file.
        #[prost(message, repeated, tag = "5")]
        pub files: Vec<Any>,
    }

    /// `hapi.chart.Config`: values as raw YAML.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Config {
        /// YAML text.
        #[prost(string, tag = "1")]
        pub raw: String,
        /// Unused by Helm 2.
        #[prost(btree_map = "string, message", tag = "2")]
        pub values: BTreeMap<String, Value>,
    }

    /// `hapi.chart.Value`.
    #[derive(Clone, PartialEq, Eq, prost::Message)]
    pub struct Value {
        /// The value.
        #[prost(string, tag = "1")]
        pub value: String,
    }

    /// `hapi.chart.Template`.
    #[derive(Clone, PartialEq, Eq, prost::Message)]
    pub struct Template {
        /// Path, e.g. `templates/deployment.yaml`.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Contents.
        #[prost(bytes = "vec", tag = "2")]
        pub data: Vec<u8>,
    }

    /// `hapi.chart.Maintainer`.
    #[derive(Clone, PartialEq, Eq, prost::Message)]
    pub struct Maintainer {
        /// Name.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Email.
        #[prost(string, tag = "2")]
        pub email: String,
        /// URL.
        #[prost(string, tag = "3")]
        pub url: String,
    }

    /// `hapi.chart.Metadata` (Chart.yaml of an `apiVersion: v1` chart).
    #[derive(Clone, PartialEq, Eq, prost::Message)]
    pub struct Metadata {
        /// `name`.
        #[prost(string, tag = "1")]
        pub name: String,
        /// `home`.
        #[prost(string, tag = "2")]
        pub home: String,
        /// `sources`.
        #[prost(string, repeated, tag = "3")]
        pub sources: Vec<String>,
        /// `version`.
        #[prost(string, tag = "4")]
        pub version: String,
        /// `description`.
        #[prost(string, tag = "5")]
        pub description: String,
        /// `keywords`.
        #[prost(string, repeated, tag = "6")]
        pub keywords: Vec<String>,
        /// `maintainers`.
        #[prost(message, repeated, tag = "7")]
        pub maintainers: Vec<Maintainer>,
        /// `engine` (`gotpl`).
        #[prost(string, tag = "8")]
        pub engine: String,
        /// `icon`.
        #[prost(string, tag = "9")]
        pub icon: String,
        /// `apiVersion`.
        #[prost(string, tag = "10")]
        pub api_version: String,
        /// `condition`.
        #[prost(string, tag = "11")]
        pub condition: String,
        /// `tags`.
        #[prost(string, tag = "12")]
        pub tags: String,
        /// `appVersion`.
        #[prost(string, tag = "13")]
        pub app_version: String,
        /// `deprecated`.
        #[prost(bool, tag = "14")]
        pub deprecated: bool,
        /// `tillerVersion`.
        #[prost(string, tag = "15")]
        pub tiller_version: String,
        /// `annotations`.
        #[prost(btree_map = "string, string", tag = "16")]
        pub annotations: BTreeMap<String, String>,
        /// `kubeVersion`.
        #[prost(string, tag = "17")]
        pub kube_version: String,
    }
}

/// `hapi.release`.
pub mod release {
    use super::chart::{Chart, Config};
    use super::protobuf::Timestamp;

    /// `hapi.release.Status.Code`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Code {
        /// Unknown.
        Unknown = 0,
        /// Deployed.
        Deployed = 1,
        /// Deleted (kept with `helm delete` without `--purge`).
        Deleted = 2,
        /// Superseded.
        Superseded = 3,
        /// Failed.
        Failed = 4,
        /// Deleting.
        Deleting = 5,
        /// Pending install.
        PendingInstall = 6,
        /// Pending upgrade.
        PendingUpgrade = 7,
        /// Pending rollback.
        PendingRollback = 8,
    }

    impl Code {
        /// The label value Tiller writes (`DEPLOYED`, `PENDING_UPGRADE`, ...).
        pub fn label(self) -> &'static str {
            match self {
                Code::Unknown => "UNKNOWN",
                Code::Deployed => "DEPLOYED",
                Code::Deleted => "DELETED",
                Code::Superseded => "SUPERSEDED",
                Code::Failed => "FAILED",
                Code::Deleting => "DELETING",
                Code::PendingInstall => "PENDING_INSTALL",
                Code::PendingUpgrade => "PENDING_UPGRADE",
                Code::PendingRollback => "PENDING_ROLLBACK",
            }
        }
    }

    /// `hapi.release.Status`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Status {
        /// `code`.
        #[prost(enumeration = "Code", tag = "1")]
        pub code: i32,
        /// `resources` (as `kubectl get` printed them).
        #[prost(string, tag = "3")]
        pub resources: String,
        /// Rendered NOTES.txt.
        #[prost(string, tag = "4")]
        pub notes: String,
        /// The last `helm test` run.
        #[prost(message, optional, tag = "5")]
        pub last_test_suite_run: Option<TestSuite>,
    }

    /// `hapi.release.TestSuite`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TestSuite {
        /// Start.
        #[prost(message, optional, tag = "1")]
        pub started_at: Option<Timestamp>,
        /// End.
        #[prost(message, optional, tag = "2")]
        pub completed_at: Option<Timestamp>,
        /// Results.
        #[prost(message, repeated, tag = "3")]
        pub results: Vec<TestRun>,
    }

    /// `hapi.release.TestRun.Status`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum TestRunStatus {
        /// Unknown.
        Unknown = 0,
        /// Passed.
        Success = 1,
        /// Failed.
        Failure = 2,
        /// Running.
        Running = 3,
    }

    /// `hapi.release.TestRun`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TestRun {
        /// Test hook name.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Outcome.
        #[prost(enumeration = "TestRunStatus", tag = "2")]
        pub status: i32,
        /// Details.
        #[prost(string, tag = "3")]
        pub info: String,
        /// Start.
        #[prost(message, optional, tag = "4")]
        pub started_at: Option<Timestamp>,
        /// End.
        #[prost(message, optional, tag = "5")]
        pub completed_at: Option<Timestamp>,
    }

    /// `hapi.release.Info`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Info {
        /// Status.
        #[prost(message, optional, tag = "1")]
        pub status: Option<Status>,
        /// First deployment of the release.
        #[prost(message, optional, tag = "2")]
        pub first_deployed: Option<Timestamp>,
        /// This revision's deployment.
        #[prost(message, optional, tag = "3")]
        pub last_deployed: Option<Timestamp>,
        /// Deletion time.
        #[prost(message, optional, tag = "4")]
        pub deleted: Option<Timestamp>,
        /// What happened (proto field `Description`).
        #[prost(string, tag = "5")]
        pub description: String,
    }

    /// `hapi.release.Hook.Event`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Event {
        /// Unknown.
        Unknown = 0,
        /// `pre-install`.
        PreInstall = 1,
        /// `post-install`.
        PostInstall = 2,
        /// `pre-delete`.
        PreDelete = 3,
        /// `post-delete`.
        PostDelete = 4,
        /// `pre-upgrade`.
        PreUpgrade = 5,
        /// `post-upgrade`.
        PostUpgrade = 6,
        /// `pre-rollback`.
        PreRollback = 7,
        /// `post-rollback`.
        PostRollback = 8,
        /// `test-success`.
        ReleaseTestSuccess = 9,
        /// `test-failure`.
        ReleaseTestFailure = 10,
        /// `crd-install`.
        CrdInstall = 11,
    }

    impl Event {
        /// The `helm.sh/hook` annotation value of the event.
        pub fn annotation(self) -> &'static str {
            match self {
                Event::Unknown => "unknown",
                Event::PreInstall => "pre-install",
                Event::PostInstall => "post-install",
                Event::PreDelete => "pre-delete",
                Event::PostDelete => "post-delete",
                Event::PreUpgrade => "pre-upgrade",
                Event::PostUpgrade => "post-upgrade",
                Event::PreRollback => "pre-rollback",
                Event::PostRollback => "post-rollback",
                Event::ReleaseTestSuccess => "test-success",
                Event::ReleaseTestFailure => "test-failure",
                Event::CrdInstall => "crd-install",
            }
        }

        /// The event of a `helm.sh/hook` annotation value (Helm 2's names; `test` is
        /// Helm 3's name of `test-success`).
        pub fn from_annotation(text: &str) -> Option<Event> {
            let all = [
                Event::PreInstall,
                Event::PostInstall,
                Event::PreDelete,
                Event::PostDelete,
                Event::PreUpgrade,
                Event::PostUpgrade,
                Event::PreRollback,
                Event::PostRollback,
                Event::ReleaseTestSuccess,
                Event::ReleaseTestFailure,
                Event::CrdInstall,
            ];
            match text.trim() {
                "test" => Some(Event::ReleaseTestSuccess),
                other => all.into_iter().find(|e| e.annotation() == other),
            }
        }
    }

    /// `hapi.release.Hook.DeletePolicy`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DeletePolicy {
        /// `hook-succeeded`.
        Succeeded = 0,
        /// `hook-failed`.
        Failed = 1,
        /// `before-hook-creation`.
        BeforeHookCreation = 2,
    }

    impl DeletePolicy {
        /// The `helm.sh/hook-delete-policy` value.
        pub fn annotation(self) -> &'static str {
            match self {
                DeletePolicy::Succeeded => "hook-succeeded",
                DeletePolicy::Failed => "hook-failed",
                DeletePolicy::BeforeHookCreation => "before-hook-creation",
            }
        }
    }

    /// `hapi.release.Hook`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Hook {
        /// Object name.
        #[prost(string, tag = "1")]
        pub name: String,
        /// Object kind.
        #[prost(string, tag = "2")]
        pub kind: String,
        /// Template path.
        #[prost(string, tag = "3")]
        pub path: String,
        /// The document.
        #[prost(string, tag = "4")]
        pub manifest: String,
        /// Events it runs on.
        #[prost(enumeration = "Event", repeated, tag = "5")]
        pub events: Vec<i32>,
        /// Last run.
        #[prost(message, optional, tag = "6")]
        pub last_run: Option<Timestamp>,
        /// Weight.
        #[prost(int32, tag = "7")]
        pub weight: i32,
        /// Delete policies.
        #[prost(enumeration = "DeletePolicy", repeated, tag = "8")]
        pub delete_policies: Vec<i32>,
        /// Seconds to wait for deletion.
        #[prost(int64, tag = "9")]
        pub delete_timeout: i64,
    }

    /// `hapi.release.Release`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Release {
        /// Release name (unique in the cluster).
        #[prost(string, tag = "1")]
        pub name: String,
        /// Status and times.
        #[prost(message, optional, tag = "2")]
        pub info: Option<Info>,
        /// The chart with its subcharts.
        #[prost(message, optional, tag = "3")]
        pub chart: Option<Chart>,
        /// User-supplied values (raw YAML).
        #[prost(message, optional, tag = "4")]
        pub config: Option<Config>,
        /// Rendered non-hook manifests.
        #[prost(string, tag = "5")]
        pub manifest: String,
        /// Hooks.
        #[prost(message, repeated, tag = "6")]
        pub hooks: Vec<Hook>,
        /// Revision, from 1.
        #[prost(int32, tag = "7")]
        pub version: i32,
        /// Namespace the release's objects live in.
        #[prost(string, tag = "8")]
        pub namespace: String,
    }

    impl Release {
        /// The status code (unknown numbers read as `Unknown`).
        pub fn code(&self) -> Code {
            self.info
                .as_ref()
                .and_then(|i| i.status.as_ref())
                .and_then(|s| Code::try_from(s.code).ok())
                .unwrap_or(Code::Unknown)
        }
    }
}

/// Why a Tiller record cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// `data.release` is not base64.
    #[error("release data is not base64: {0}")]
    Base64(String),
    /// The gzip stream is broken.
    #[error("release data is not valid gzip: {0}")]
    Gzip(String),
    /// The protobuf message is broken.
    #[error("release data is not a hapi.release.Release message: {0}")]
    Protobuf(String),
    /// The storage object lacks what Tiller always writes.
    #[error("release record: {0}")]
    Object(String),
}

/// Tiller's default namespace for its records.
pub const DEFAULT_NAMESPACE: &str = "kube-system";

/// `<name>.v<revision>`.
pub fn record_name(name: &str, version: u32) -> String {
    format!("{name}.v{version}")
}

/// The label selector of every record of `name`.
pub fn history_selector(name: &str) -> String {
    format!("NAME={name},OWNER=TILLER")
}

/// The label selector of every Tiller record.
pub const ALL_RECORDS_SELECTOR: &str = "OWNER=TILLER";

/// `data.release` of a record: `base64(gzip(protobuf))`, gzip at best compression as Tiller
/// writes it.
pub fn encode(release: &release::Release) -> String {
    let bytes = release.encode_to_vec();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let compressed = gzip
        .write_all(&bytes)
        .and_then(|()| gzip.finish())
        .unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(compressed)
}

/// Read `data.release`; gunzips only when the gzip magic is present, as Tiller does.
pub fn decode(data: &str) -> Result<release::Release, RecordError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim().as_bytes())
        .map_err(|e| RecordError::Base64(e.to_string()))?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| RecordError::Gzip(e.to_string()))?;
        out
    } else {
        bytes
    };
    release::Release::decode(bytes.as_slice()).map_err(|e| RecordError::Protobuf(e.to_string()))
}

/// Which time label a write sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// `CREATED_AT` (a new record).
    Created(u64),
    /// `MODIFIED_AT` (an update).
    Modified(u64),
}

/// The ConfigMap (or, with `secret`, the Opaque Secret) Tiller writes for `release` in
/// `namespace`. A Secret's data is base64 once more, as the Kubernetes API requires.
pub fn storage_object(
    release: &release::Release,
    namespace: &str,
    secret: bool,
    stamp: Stamp,
    created_at: Option<u64>,
) -> serde_json::Value {
    let mut labels = serde_json::Map::new();
    labels.insert("NAME".into(), release.name.clone().into());
    labels.insert("OWNER".into(), "TILLER".into());
    labels.insert("STATUS".into(), release.code().label().into());
    labels.insert("VERSION".into(), release.version.to_string().into());
    match stamp {
        Stamp::Created(at) => {
            labels.insert("CREATED_AT".into(), at.to_string().into());
        }
        Stamp::Modified(at) => {
            if let Some(created) = created_at {
                labels.insert("CREATED_AT".into(), created.to_string().into());
            }
            labels.insert("MODIFIED_AT".into(), at.to_string().into());
        }
    }
    let data = encode(release);
    let metadata = serde_json::json!({
        "name": record_name(&release.name, release.version.max(0) as u32),
        "namespace": namespace,
        "labels": labels,
    });
    if secret {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": metadata,
            "data": {"release": base64::engine::general_purpose::STANDARD.encode(data)},
        })
    } else {
        serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": metadata,
            "data": {"release": data},
        })
    }
}

/// The release of a stored ConfigMap or Secret (JSON as the API returns it).
pub fn from_storage_object(object: &serde_json::Value) -> Result<release::Release, RecordError> {
    let data = object
        .pointer("/data/release")
        .and_then(|v| v.as_str())
        .ok_or_else(|| RecordError::Object("no data.release".into()))?;
    let is_secret = object.get("kind").and_then(|k| k.as_str()) == Some("Secret");
    if is_secret {
        let inner = base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|e| RecordError::Base64(e.to_string()))?;
        let inner = String::from_utf8(inner).map_err(|e| RecordError::Base64(e.to_string()))?;
        decode(&inner)
    } else {
        decode(data)
    }
}

/// The `CREATED_AT` label of a stored record, if any.
pub fn created_at(object: &serde_json::Value) -> Option<u64> {
    object
        .pointer("/metadata/labels/CREATED_AT")
        .and_then(|v| v.as_str())
        .and_then(|v| v.parse().ok())
}

/// A loaded chart as Tiller stores it: Chart.yaml as `Metadata`, `templates/**`, values.yaml
/// raw, every other file as `Any{type_url: path}`, and subcharts under `dependencies`.
pub fn chart_of(chart: &Chart) -> chart::Chart {
    let meta = &chart.metadata;
    let metadata = chart::Metadata {
        name: meta.name.clone(),
        home: meta.home.clone(),
        sources: meta.sources.clone(),
        version: meta.version.clone(),
        description: meta.description.clone(),
        keywords: meta.keywords.clone(),
        maintainers: meta
            .maintainers
            .iter()
            .map(|m| chart::Maintainer {
                name: m.name.clone(),
                email: m.email.clone(),
                url: m.url.clone(),
            })
            .collect(),
        engine: "gotpl".into(),
        icon: meta.icon.clone(),
        api_version: meta.api_version.clone(),
        condition: meta.condition.clone(),
        tags: meta.tags.clone(),
        app_version: meta.app_version.clone(),
        deprecated: meta.deprecated,
        tiller_version: String::new(),
        annotations: meta.annotations.clone(),
        kube_version: meta.kube_version.clone(),
    };
    let raw_values = chart
        .raw_values
        .as_ref()
        .map(|raw| String::from_utf8_lossy(raw).into_owned())
        .unwrap_or_default();
    chart::Chart {
        metadata: Some(metadata),
        templates: chart
            .templates
            .iter()
            .map(|t| chart::Template {
                name: t.name.clone(),
                data: t.data.to_vec(),
            })
            .collect(),
        dependencies: chart.dependencies().iter().map(chart_of).collect(),
        values: Some(chart::Config {
            raw: raw_values,
            values: BTreeMap::new(),
        }),
        files: chart
            .files
            .iter()
            .map(|f| protobuf::Any {
                type_url: f.name.clone(),
                value: f.data.to_vec(),
            })
            .collect(),
    }
}

/// RFC 3339 text of a timestamp as Helm 3 records it (`""` for none).
fn time_text(stamp: Option<&protobuf::Timestamp>) -> String {
    match stamp {
        Some(t) if t.seconds != 0 || t.nanos != 0 => {
            crate::release::format_time(t.seconds, u32::try_from(t.nanos).unwrap_or(0))
        }
        _ => String::new(),
    }
}

/// helm-2to3's status mapping: the enum name lowercased with dashes, `deleted` →
/// `uninstalled`, `deleting` → `uninstalling`.
pub fn status_v3(code: release::Code) -> Status {
    use release::Code;
    match code {
        Code::Unknown => Status::Unknown,
        Code::Deployed => Status::Deployed,
        Code::Deleted => Status::Uninstalled,
        Code::Superseded => Status::Superseded,
        Code::Failed => Status::Failed,
        Code::Deleting => Status::Uninstalling,
        Code::PendingInstall => Status::PendingInstall,
        Code::PendingUpgrade => Status::PendingUpgrade,
        Code::PendingRollback => Status::PendingRollback,
    }
}

fn yaml_value(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::new_map();
    }
    capstan_goyaml::from_yaml_map(raw).unwrap_or_else(|_| Value::new_map())
}

/// A v2 record as a Helm 3 release, by helm-2to3's mapping: same name, namespace and
/// revision; status, notes and hook events renamed; the chart without subcharts (v3 does
/// not store them), its files named by `type_url`, values and config parsed from raw YAML.
pub fn to_v3(v2: &release::Release) -> Release {
    let info = v2.info.clone().unwrap_or_default();
    let status = info.status.clone().unwrap_or_default();
    let code = release::Code::try_from(status.code).unwrap_or(release::Code::Unknown);
    let test_runs: BTreeMap<String, (release::TestRunStatus, String, String)> = status
        .last_test_suite_run
        .iter()
        .flat_map(|suite| suite.results.iter())
        .map(|run| {
            (
                run.name.clone(),
                (
                    release::TestRunStatus::try_from(run.status)
                        .unwrap_or(release::TestRunStatus::Unknown),
                    time_text(run.started_at.as_ref()),
                    time_text(run.completed_at.as_ref()),
                ),
            )
        })
        .collect();
    let hooks =
        v2.hooks
            .iter()
            .map(|hook| {
                let events: Vec<String> =
                    hook.events
                        .iter()
                        .filter_map(|e| release::Event::try_from(*e).ok())
                        .map(|e| match e {
                            release::Event::ReleaseTestSuccess
                            | release::Event::ReleaseTestFailure => "test".to_owned(),
                            other => other.annotation().to_owned(),
                        })
                        .collect();
                let last_run = match test_runs.get(&hook.name) {
                    Some((outcome, started, completed)) => HookExecution {
                        started_at: started.clone(),
                        completed_at: completed.clone(),
                        phase: match outcome {
                            release::TestRunStatus::Success => "Succeeded".into(),
                            release::TestRunStatus::Failure => "Failed".into(),
                            _ => String::new(),
                        },
                    },
                    None => HookExecution::default(),
                };
                HookRecord {
                    name: hook.name.clone(),
                    kind: hook.kind.clone(),
                    path: hook.path.clone(),
                    manifest: hook.manifest.clone(),
                    events,
                    last_run,
                    weight: i64::from(hook.weight),
                    delete_policies: hook
                        .delete_policies
                        .iter()
                        .filter_map(|p| release::DeletePolicy::try_from(*p).ok())
                        .map(|p| p.annotation().to_owned())
                        .collect(),
                    output_log_policies: Vec::new(),
                }
            })
            .collect();
    let chart = v2.chart.as_ref().map(chart_v3);
    Release {
        name: v2.name.clone(),
        info: Some(Info {
            first_deployed: time_text(info.first_deployed.as_ref()),
            last_deployed: time_text(info.last_deployed.as_ref()),
            deleted: time_text(info.deleted.as_ref()),
            description: info.description.clone(),
            status: status_v3(code),
            notes: status.notes.clone(),
        }),
        chart,
        config: yaml_value(v2.config.as_ref().map_or("", |c| c.raw.as_str())),
        manifest: v2.manifest.clone(),
        hooks,
        version: u32::try_from(v2.version).unwrap_or(0),
        namespace: v2.namespace.clone(),
        labels: BTreeMap::new(),
    }
}

/// The v3 record of a v2 chart (`type: application`, no dependencies, files by path).
fn chart_v3(chart: &chart::Chart) -> ChartRecord {
    let meta = chart.metadata.clone().unwrap_or_default();
    let mut map = Map::new();
    let text = |s: &str| Value::from(s);
    let list = |items: &[String]| {
        if items.is_empty() {
            Value::Nil
        } else {
            Value::from(
                items
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            )
        }
    };
    map.insert("name".into(), text(&meta.name));
    if !meta.home.is_empty() {
        map.insert("home".into(), text(&meta.home));
    }
    if !meta.sources.is_empty() {
        map.insert("sources".into(), list(&meta.sources));
    }
    map.insert("version".into(), text(&meta.version));
    if !meta.description.is_empty() {
        map.insert("description".into(), text(&meta.description));
    }
    if !meta.keywords.is_empty() {
        map.insert("keywords".into(), list(&meta.keywords));
    }
    if !meta.maintainers.is_empty() {
        let people: Vec<Value> = meta
            .maintainers
            .iter()
            .map(|m| {
                let mut person = Map::new();
                person.insert("name".into(), text(&m.name));
                if !m.email.is_empty() {
                    person.insert("email".into(), text(&m.email));
                }
                if !m.url.is_empty() {
                    person.insert("url".into(), text(&m.url));
                }
                Value::from(person)
            })
            .collect();
        map.insert("maintainers".into(), Value::from(people));
    }
    if !meta.icon.is_empty() {
        map.insert("icon".into(), text(&meta.icon));
    }
    map.insert("apiVersion".into(), text(&meta.api_version));
    if !meta.condition.is_empty() {
        map.insert("condition".into(), text(&meta.condition));
    }
    if !meta.tags.is_empty() {
        map.insert("tags".into(), text(&meta.tags));
    }
    if !meta.app_version.is_empty() {
        map.insert("appVersion".into(), text(&meta.app_version));
    }
    if meta.deprecated {
        map.insert("deprecated".into(), Value::from(true));
    }
    if !meta.annotations.is_empty() {
        let mut annotations = Map::new();
        for (k, v) in &meta.annotations {
            annotations.insert(k.clone(), text(v));
        }
        map.insert("annotations".into(), Value::from(annotations));
    }
    if !meta.kube_version.is_empty() {
        map.insert("kubeVersion".into(), text(&meta.kube_version));
    }
    map.insert("type".into(), text("application"));
    let files = |list: Vec<ChartFile>| (!list.is_empty()).then_some(list);
    ChartRecord {
        metadata: Value::from(map),
        lock: Value::Nil,
        templates: files(
            chart
                .templates
                .iter()
                .map(|t| ChartFile {
                    name: t.name.clone(),
                    data: t.data.to_vec(),
                })
                .collect(),
        ),
        values: yaml_value(chart.values.as_ref().map_or("", |c| c.raw.as_str())),
        schema: None,
        files: files(
            chart
                .files
                .iter()
                .map(|f| ChartFile {
                    name: f.type_url.clone(),
                    data: f.value.clone(),
                })
                .collect(),
        ),
        subcharts: chart.dependencies.iter().map(chart_v3).collect(),
        raw_values: chart.values.as_ref().map(|c| c.raw.clone().into_bytes()),
    }
}

/// Seconds and nanoseconds of an RFC 3339 time as Helm records them
/// (`2006-01-02T15:04:05.999999999Z07:00`); `None` for `""` or text that is not one.
pub fn parse_time(text: &str) -> Option<protobuf::Timestamp> {
    let text = text.trim();
    if text.is_empty() || text.len() < 20 {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let rest = &text[19..];
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(after) => {
            let digits = after.find(|c: char| !c.is_ascii_digit())?;
            (&after[..digits], &after[digits..])
        }
        None => ("", rest),
    };
    let nanos: i32 = if fraction.is_empty() {
        0
    } else {
        format!("{:0<9}", &fraction[..fraction.len().min(9)])
            .parse()
            .ok()?
    };
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hours: i64 = zone.get(1..3)?.parse().ok()?;
            let minutes: i64 = zone.get(4..6)?.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    // Days from the civil date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(protobuf::Timestamp {
        seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offset,
        nanos,
    })
}

/// helm-2to3's status mapping, reversed.
pub fn status_v2(status: Status) -> release::Code {
    use release::Code;
    match status {
        Status::Unknown => Code::Unknown,
        Status::Deployed => Code::Deployed,
        Status::Uninstalled => Code::Deleted,
        Status::Superseded => Code::Superseded,
        Status::Failed => Code::Failed,
        Status::Uninstalling => Code::Deleting,
        Status::PendingInstall => Code::PendingInstall,
        Status::PendingUpgrade => Code::PendingUpgrade,
        Status::PendingRollback => Code::PendingRollback,
    }
}

fn metadata_text(map: &Value, key: &str) -> String {
    match map {
        Value::Map(m) => m
            .borrow()
            .get(key)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn metadata_list(map: &Value, key: &str) -> Vec<String> {
    match map {
        Value::Map(m) => match m.borrow().get(key) {
            Some(Value::List(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A v3 chart record as Tiller stores a chart (the inverse of helm-2to3's chart mapping;
/// subcharts and values.yaml's text come from the record when it was made from a loaded
/// chart).
pub fn chart_v2(record: &ChartRecord) -> chart::Chart {
    let m = &record.metadata;
    let maintainers = match m {
        Value::Map(map) => match map.borrow().get("maintainers") {
            Some(Value::List(people)) => people
                .iter()
                .map(|p| chart::Maintainer {
                    name: metadata_text(p, "name"),
                    email: metadata_text(p, "email"),
                    url: metadata_text(p, "url"),
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let annotations = match m {
        Value::Map(map) => match map.borrow().get("annotations") {
            Some(Value::Map(a)) => a
                .borrow()
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect(),
            _ => BTreeMap::new(),
        },
        _ => BTreeMap::new(),
    };
    let deprecated = matches!(m, Value::Map(map) if matches!(map.borrow().get("deprecated"), Some(Value::Bool(true))));
    let raw_values = match &record.raw_values {
        Some(raw) => String::from_utf8_lossy(raw).into_owned(),
        None => match &record.values {
            Value::Map(map) if map.borrow().is_empty() => String::new(),
            Value::Nil => String::new(),
            other => capstan_goyaml::to_yaml(other).unwrap_or_default(),
        },
    };
    chart::Chart {
        metadata: Some(chart::Metadata {
            name: metadata_text(m, "name"),
            home: metadata_text(m, "home"),
            sources: metadata_list(m, "sources"),
            version: metadata_text(m, "version"),
            description: metadata_text(m, "description"),
            keywords: metadata_list(m, "keywords"),
            maintainers,
            engine: "gotpl".into(),
            icon: metadata_text(m, "icon"),
            api_version: metadata_text(m, "apiVersion"),
            condition: metadata_text(m, "condition"),
            tags: metadata_text(m, "tags"),
            app_version: metadata_text(m, "appVersion"),
            deprecated,
            tiller_version: metadata_text(m, "tillerVersion"),
            annotations,
            kube_version: metadata_text(m, "kubeVersion"),
        }),
        templates: record
            .templates
            .iter()
            .flatten()
            .map(|t| chart::Template {
                name: t.name.clone(),
                data: t.data.to_vec(),
            })
            .collect(),
        dependencies: record.subcharts.iter().map(chart_v2).collect(),
        values: Some(chart::Config {
            raw: raw_values,
            values: BTreeMap::new(),
        }),
        files: record
            .files
            .iter()
            .flatten()
            .map(|f| protobuf::Any {
                type_url: f.name.clone(),
                value: f.data.to_vec(),
            })
            .collect(),
    }
}

/// What a Helm 2 record holds of a revision's input, as bytes to compare revisions by: the
/// chart as Tiller stores it (subcharts, values.yaml text, files) and the user's values as
/// YAML. Two inputs that Helm 2 would record identically give the same bytes.
pub fn input_fingerprint(chart: Option<&ChartRecord>, config: &Value) -> Vec<u8> {
    let mut bytes = chart
        .map(|c| chart_v2(c).encode_to_vec())
        .unwrap_or_default();
    bytes.extend_from_slice(b"\n--- config\n");
    bytes.extend_from_slice(config_yaml(config).as_bytes());
    bytes
}

/// [`input_fingerprint`] of what a Helm 3 record keeps of a Helm 2 revision: no subcharts
/// and values.yaml as parsed (Helm 3 stores neither the subcharts nor the text). Used to
/// compare a request with a revision converted from Helm 2.
pub fn converted_input_fingerprint(chart: Option<&ChartRecord>, config: &Value) -> Vec<u8> {
    let stripped = chart.map(|c| ChartRecord {
        subcharts: Vec::new(),
        raw_values: None,
        ..c.clone()
    });
    input_fingerprint(stripped.as_ref(), config)
}

/// User values as Helm 2 records them (`""` for none).
fn config_yaml(config: &Value) -> String {
    match config {
        Value::Map(map) if map.borrow().is_empty() => String::new(),
        Value::Nil => String::new(),
        other => capstan_goyaml::to_yaml(other).unwrap_or_default(),
    }
}

/// A v3 release as a Tiller record (the inverse of [`to_v3`]): statuses and hook events
/// mapped back, times parsed, values emitted as YAML.
pub fn from_v3(v3: &Release) -> release::Release {
    let info = v3.info.clone().unwrap_or_default();
    let config_raw = config_yaml(&v3.config);
    let hooks = v3
        .hooks
        .iter()
        .map(|hook| release::Hook {
            name: hook.name.clone(),
            kind: hook.kind.clone(),
            path: hook.path.clone(),
            manifest: hook.manifest.clone(),
            events: hook
                .events
                .iter()
                .filter_map(|e| release::Event::from_annotation(e))
                .map(|e| e as i32)
                .collect(),
            last_run: parse_time(&hook.last_run.started_at),
            weight: i32::try_from(hook.weight).unwrap_or(0),
            delete_policies: hook
                .delete_policies
                .iter()
                .filter_map(|p| match p.as_str() {
                    "hook-succeeded" => Some(release::DeletePolicy::Succeeded as i32),
                    "hook-failed" => Some(release::DeletePolicy::Failed as i32),
                    "before-hook-creation" => {
                        Some(release::DeletePolicy::BeforeHookCreation as i32)
                    }
                    _ => None,
                })
                .collect(),
            delete_timeout: 0,
        })
        .collect();
    release::Release {
        name: v3.name.clone(),
        info: Some(release::Info {
            status: Some(release::Status {
                code: status_v2(info.status) as i32,
                resources: String::new(),
                notes: info.notes.clone(),
                last_test_suite_run: None,
            }),
            first_deployed: parse_time(&info.first_deployed),
            last_deployed: parse_time(&info.last_deployed),
            deleted: parse_time(&info.deleted),
            description: info.description.clone(),
        }),
        chart: v3.chart.as_ref().map(chart_v2),
        config: Some(chart::Config {
            raw: config_raw,
            values: BTreeMap::new(),
        }),
        manifest: v3.manifest.clone(),
        hooks,
        version: i32::try_from(v3.version).unwrap_or(i32::MAX),
        namespace: v3.namespace.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> release::Release {
        release::Release {
            name: "demo".into(),
            info: Some(release::Info {
                status: Some(release::Status {
                    code: release::Code::Deployed as i32,
                    notes: "hello".into(),
                    ..Default::default()
                }),
                first_deployed: Some(protobuf::Timestamp {
                    seconds: 1_600_000_000,
                    nanos: 5,
                }),
                last_deployed: Some(protobuf::Timestamp {
                    seconds: 1_600_000_100,
                    nanos: 0,
                }),
                deleted: None,
                description: "Install complete".into(),
            }),
            chart: Some(chart::Chart {
                metadata: Some(chart::Metadata {
                    name: "web".into(),
                    version: "1.2.3".into(),
                    api_version: "v1".into(),
                    engine: "gotpl".into(),
                    ..Default::default()
                }),
                templates: vec![chart::Template {
                    name: "templates/cm.yaml".into(),
                    data: b"kind: ConfigMap".to_vec(),
                }],
                dependencies: vec![chart::Chart {
                    metadata: Some(chart::Metadata {
                        name: "sub".into(),
                        version: "0.1.0".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                values: Some(chart::Config {
                    raw: "replicas: 1\n".into(),
                    values: BTreeMap::new(),
                }),
                files: vec![protobuf::Any {
                    type_url: "README.md".into(),
                    value: b"# web".to_vec(),
                }],
            }),
            config: Some(chart::Config {
                raw: "replicas: 3\n".into(),
                values: BTreeMap::new(),
            }),
            manifest: "---\nkind: ConfigMap\n".into(),
            hooks: vec![release::Hook {
                name: "migrate".into(),
                kind: "Job".into(),
                events: vec![
                    release::Event::PreInstall as i32,
                    release::Event::CrdInstall as i32,
                ],
                weight: -5,
                delete_policies: vec![release::DeletePolicy::BeforeHookCreation as i32],
                ..Default::default()
            }],
            version: 3,
            namespace: "apps".into(),
        }
    }

    #[test]
    fn records_round_trip_through_tillers_encoding() {
        let release = sample();
        let data = encode(&release);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data)
            .unwrap();
        assert_eq!(&bytes[..3], &[0x1f, 0x8b, 0x08], "gzip, as Tiller writes");
        assert_eq!(decode(&data).unwrap(), release);
        // Uncompressed data (older Tillers) reads too.
        let plain = base64::engine::general_purpose::STANDARD.encode(release.encode_to_vec());
        assert_eq!(decode(&plain).unwrap(), release);
        assert!(matches!(decode("%%%"), Err(RecordError::Base64(_))));
    }

    #[test]
    fn storage_objects_carry_tillers_name_and_labels() {
        let release = sample();
        let object = storage_object(&release, "kube-system", false, Stamp::Created(42), None);
        assert_eq!(object["metadata"]["name"], "demo.v3");
        assert_eq!(object["metadata"]["namespace"], "kube-system");
        let labels = &object["metadata"]["labels"];
        assert_eq!(labels["NAME"], "demo");
        assert_eq!(labels["OWNER"], "TILLER");
        assert_eq!(labels["STATUS"], "DEPLOYED");
        assert_eq!(labels["VERSION"], "3");
        assert_eq!(labels["CREATED_AT"], "42");
        assert_eq!(from_storage_object(&object).unwrap(), release);
        let secret = storage_object(&release, "kube-system", true, Stamp::Modified(50), Some(42));
        assert_eq!(secret["kind"], "Secret");
        assert_eq!(secret["metadata"]["labels"]["MODIFIED_AT"], "50");
        assert_eq!(created_at(&secret), Some(42));
        assert_eq!(from_storage_object(&secret).unwrap(), release);
    }

    #[test]
    fn v2_records_convert_with_helm_2to3s_mapping() {
        let v3 = to_v3(&sample());
        assert_eq!((v3.name.as_str(), v3.version), ("demo", 3));
        assert_eq!(v3.namespace, "apps");
        let info = v3.info.unwrap();
        assert_eq!(info.status, Status::Deployed);
        assert_eq!(info.notes, "hello");
        assert_eq!(info.first_deployed, "2020-09-13T12:26:40.000000005Z");
        assert_eq!(info.deleted, "");
        assert_eq!(v3.hooks[0].events, ["pre-install", "crd-install"]);
        assert_eq!(v3.hooks[0].delete_policies, ["before-hook-creation"]);
        assert_eq!(v3.hooks[0].weight, -5);
        let chart = v3.chart.unwrap();
        assert_eq!(chart.name(), "web");
        assert_eq!(chart.version(), "1.2.3");
        assert_eq!(chart.files.unwrap()[0].name, "README.md");
        assert_eq!(
            capstan_goyaml::to_yaml(&v3.config).unwrap(),
            "replicas: 3\n"
        );
        assert_eq!(status_v3(release::Code::Deleted), Status::Uninstalled);
        assert_eq!(status_v3(release::Code::Deleting), Status::Uninstalling);
    }

    #[test]
    fn times_parse_as_helm_writes_them() {
        for (seconds, nanos) in [(0, 1), (1_600_000_000, 5), (1_767_225_600, 120_000_000)] {
            let text = crate::release::format_time(seconds, nanos);
            assert_eq!(
                parse_time(&text),
                Some(protobuf::Timestamp {
                    seconds,
                    nanos: nanos as i32
                }),
                "{text}"
            );
        }
        assert_eq!(
            parse_time("2020-09-13T14:26:40+02:00").map(|t| t.seconds),
            Some(1_600_000_000)
        );
        assert_eq!(parse_time(""), None);
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn v3_to_v2_and_back_keeps_what_both_formats_hold() {
        let original = sample();
        let back = from_v3(&to_v3(&original));
        assert_eq!(back.name, original.name);
        assert_eq!(back.version, original.version);
        assert_eq!(back.namespace, original.namespace);
        assert_eq!(back.manifest, original.manifest);
        assert_eq!(back.info, original.info);
        assert_eq!(back.hooks[0].events, original.hooks[0].events);
        assert_eq!(
            back.hooks[0].delete_policies,
            original.hooks[0].delete_policies
        );
        assert_eq!(back.config.as_ref().unwrap().raw, "replicas: 3\n");
        let chart = back.chart.unwrap();
        let was = original.chart.unwrap();
        assert_eq!(chart.metadata.as_ref().unwrap().name, "web");
        assert_eq!(chart.templates, was.templates);
        assert_eq!(chart.files, was.files);
        assert_eq!(chart.values, was.values);
        assert_eq!(
            chart.dependencies.len(),
            1,
            "subcharts survive the round trip"
        );
    }

    /// The record real Tiller 2.17.0 wrote for `helm install --name demo` (captured by
    /// `tests/cluster/helm2`), against the JSON Tiller's own codec decoded from it.
    #[test]
    fn a_record_real_tiller_wrote_reads_back_exactly() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../tests/cluster/helm2/testdata");
        let object: serde_json::Value = serde_yaml_ng::from_str(
            &std::fs::read_to_string(dir.join("tiller-record-demo.v1.yaml")).unwrap(),
        )
        .unwrap();
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("tiller-record-demo.v1.json")).unwrap(),
        )
        .unwrap();
        let ours = from_storage_object(&object).unwrap();
        let b64 = |v: &serde_json::Value| {
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap_or(""))
                .unwrap()
        };
        let time = |t: Option<&protobuf::Timestamp>| serde_json::json!({"seconds": t.unwrap().seconds, "nanos": t.unwrap().nanos});
        assert_eq!(ours.name, expected["name"]);
        assert_eq!(ours.namespace, expected["namespace"]);
        assert_eq!(i64::from(ours.version), expected["version"]);
        let info = ours.info.as_ref().unwrap();
        let status = info.status.as_ref().unwrap();
        assert_eq!(i64::from(status.code), expected["info"]["status"]["code"]);
        assert_eq!(status.notes, expected["info"]["status"]["notes"]);
        assert_eq!(info.description, expected["info"]["Description"]);
        assert_eq!(
            time(info.first_deployed.as_ref()),
            expected["info"]["first_deployed"]
        );
        assert_eq!(
            time(info.last_deployed.as_ref()),
            expected["info"]["last_deployed"]
        );
        assert_eq!(ours.manifest, expected["manifest"]);
        assert_eq!(ours.config.as_ref().unwrap().raw, expected["config"]["raw"]);
        let chart = ours.chart.as_ref().unwrap();
        let meta = chart.metadata.as_ref().unwrap();
        let want = &expected["chart"]["metadata"];
        assert_eq!(meta.name, want["name"]);
        assert_eq!(meta.version, want["version"]);
        assert_eq!(meta.description, want["description"]);
        assert_eq!(meta.api_version, want["apiVersion"]);
        assert_eq!(meta.app_version, want["appVersion"]);
        assert_eq!(
            chart.values.as_ref().unwrap().raw,
            expected["chart"]["values"]["raw"]
        );
        let templates = expected["chart"]["templates"].as_array().unwrap();
        assert_eq!(chart.templates.len(), templates.len());
        for (got, want) in chart.templates.iter().zip(templates) {
            assert_eq!(got.name, want["name"]);
            assert_eq!(got.data, b64(&want["data"]));
        }
        let files = expected["chart"]["files"].as_array().unwrap();
        assert_eq!(chart.files.len(), files.len());
        for (got, want) in chart.files.iter().zip(files) {
            assert_eq!(got.type_url, want["type_url"]);
            assert_eq!(got.value, b64(&want["value"]));
        }
        let hooks = expected["hooks"].as_array().unwrap();
        assert_eq!(ours.hooks.len(), hooks.len());
        for (got, want) in ours.hooks.iter().zip(hooks) {
            assert_eq!(got.name, want["name"]);
            assert_eq!(got.kind, want["kind"]);
            assert_eq!(got.path, want["path"]);
            assert_eq!(got.manifest, want["manifest"]);
            let events: Vec<i64> = got.events.iter().map(|e| i64::from(*e)).collect();
            assert_eq!(serde_json::json!(events), want["events"]);
        }
        // Written back by us, it reads the same.
        assert_eq!(decode(&encode(&ours)).unwrap(), ours);
        // And converts for Helm 3 as helm-2to3 would.
        let v3 = to_v3(&ours);
        assert_eq!(v3.hooks[0].events, ["test"]);
        assert_eq!(v3.info.unwrap().status, Status::Deployed);
        assert_eq!(
            capstan_goyaml::to_yaml(&v3.config).unwrap(),
            "greeting: bonjour\n"
        );
    }

    #[test]
    fn hook_annotations_name_helm_2_events() {
        assert_eq!(
            release::Event::from_annotation("crd-install"),
            Some(release::Event::CrdInstall)
        );
        assert_eq!(
            release::Event::from_annotation(" test "),
            Some(release::Event::ReleaseTestSuccess)
        );
        assert_eq!(release::Event::from_annotation("pre-sync"), None);
    }
}
