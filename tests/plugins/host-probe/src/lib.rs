//! Test component that calls every host import (`log`, `kube`, `git`, `crypto`,
//! `folder-files`) and reports
//! what each returned. Its `template` export takes the probe's instructions as its first
//! value layer (a JSON document):
//!
//! ```json
//! {"namespace": "ns", "deniedNamespace": "kube-system", "waitDeployment": "web",
//!  "gitUrl": "file:///…", "gitRef": "main", "gitPath": "chart", "deniedGitUrl": "file:///other",
//!  "rsaKeyBits": [2048, 1000], "rsaSignBits": 2048, "bcrypt": {"password": "pw", "cost": 4, "refusedCost": 13},
//!  "folderFile": {"granted": "README.md", "denied": "secret.txt"}}
//! ```
//!
//! and returns a JSON report in `manifest`: one entry per step with its outcome.

wit_bindgen::generate!({ world: "host-probe", path: "wit", generate_all });

use capstan::plugin::types::{ChartArtifact, Error, ErrorCode, ReleaseId, ReleaseInfo};
use capstan::plugin::{crypto, folder_files, git, kube, log};
use exports::capstan::plugin::backend::{
    ChartInput, Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions, ValueLayer,
};
use serde_json::{Value, json};

fn unsupported() -> Error {
    Error {
        code: ErrorCode::Unsupported,
        message: "host-probe only implements template".into(),
        retryable: false,
    }
}

fn outcome<T: std::fmt::Debug>(result: &Result<T, Error>) -> Value {
    match result {
        Ok(value) => json!({"ok": format!("{value:?}")}),
        Err(error) => {
            json!({"error": format!("{:?}", error.code).trim_start_matches("ErrorCode::"), "message": error.message})
        }
    }
}

fn value_or_message<T: serde::Serialize>(result: Result<T, String>) -> Value {
    match result {
        Ok(value) => json!({"ok": value}),
        Err(message) => json!({"error": message}),
    }
}

fn config_map(namespace: &str, data: &str) -> String {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "probe", "namespace": namespace, "labels": {"capstan.dev/probe": "yes"}},
        "data": {"value": data},
    })
    .to_string()
}

fn probe_kube(instructions: &Value, report: &mut serde_json::Map<String, Value>) {
    let Some(namespace) = instructions["namespace"].as_str() else {
        return;
    };
    let reference = kube::ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(namespace.into()),
        name: "probe".into(),
    };
    report.insert(
        "create".into(),
        outcome(&kube::create(&config_map(namespace, "created"))),
    );
    report.insert(
        "create-again".into(),
        outcome(&kube::create(&config_map(namespace, "again"))),
    );
    let applied = kube::apply(&config_map(namespace, "applied"), true);
    report.insert("apply".into(), outcome(&applied.map(|_| ())));
    let got = kube::get(&reference);
    let value = got
        .as_ref()
        .ok()
        .and_then(|o| o.as_ref())
        .and_then(|s| serde_json::from_str::<Value>(s).ok());
    report.insert(
        "get-data".into(),
        value
            .map(|v| v["data"]["value"].clone())
            .unwrap_or(Value::Null),
    );
    let listed = kube::list(
        "v1",
        "ConfigMap",
        Some(namespace),
        Some("capstan.dev/probe=yes"),
    );
    report.insert(
        "list-count".into(),
        json!(listed.as_ref().map(|l| l.len()).unwrap_or(usize::MAX)),
    );
    report.insert(
        "delete".into(),
        outcome(&kube::delete(&reference, kube::Propagation::Background)),
    );
    report.insert(
        "delete-again".into(),
        outcome(&kube::delete(&reference, kube::Propagation::Background)),
    );
    report.insert(
        "get-after-delete".into(),
        outcome(&kube::get(&reference).map(|o| o.is_some())),
    );
    if let Some(denied) = instructions["deniedNamespace"].as_str() {
        let outside = kube::ObjectRef {
            namespace: Some(denied.into()),
            ..reference.clone()
        };
        report.insert("get-denied".into(), outcome(&kube::get(&outside)));
        report.insert(
            "list-all-namespaces".into(),
            outcome(&kube::list("v1", "ConfigMap", None, None).map(|l| l.len())),
        );
    }
    if let Some(deployment) = instructions["waitDeployment"].as_str() {
        let target = kube::ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some(namespace.into()),
            name: deployment.into(),
        };
        let waited = kube::wait_ready(&[target], 60_000);
        report.insert(
            "wait-ready".into(),
            match waited {
                Ok(states) => json!(
                    states
                        .iter()
                        .map(|s| json!({"ready": s.ready, "message": s.message}))
                        .collect::<Vec<_>>()
                ),
                Err(error) => {
                    json!({"error": format!("{:?}", error.code), "message": error.message})
                }
            },
        );
    }
}

fn probe_git(instructions: &Value, report: &mut serde_json::Map<String, Value>) {
    let Some(url) = instructions["gitUrl"].as_str() else {
        return;
    };
    let reference = instructions["gitRef"].as_str().unwrap_or("HEAD");
    let path = instructions["gitPath"].as_str().unwrap_or("");
    match git::open(url) {
        Err(error) => {
            report.insert("git-open".into(), outcome::<()>(&Err(error)));
        }
        Ok(repository) => {
            let commit = repository.resolve(reference);
            report.insert(
                "git-resolve".into(),
                value_or_message(commit.as_ref().map_err(|e| e.message.clone())),
            );
            let tags = repository.tags();
            report.insert(
                "git-tags".into(),
                value_or_message(
                    tags.map(|t| t.into_iter().map(|t| t.name).collect::<Vec<_>>())
                        .map_err(|e| e.message),
                ),
            );
            if let Ok(commit) = commit {
                report.insert(
                    "git-tree-id".into(),
                    value_or_message(repository.tree_id(&commit, path).map_err(|e| e.message)),
                );
                let files = repository.read_tree(&commit, path).map(|files| {
                    files
                        .into_iter()
                        .map(|f| json!({"path": f.path, "size": f.contents.len(), "executable": f.executable}))
                        .collect::<Vec<_>>()
                });
                report.insert(
                    "git-files".into(),
                    value_or_message(files.map_err(|e| e.message)),
                );
                report.insert(
                    "git-bad-ref".into(),
                    outcome(&repository.resolve("no-such-ref")),
                );
            }
        }
    }
    if let Some(denied) = instructions["deniedGitUrl"].as_str() {
        report.insert(
            "git-open-denied".into(),
            outcome(&git::open(denied).map(|_| ())),
        );
    }
}

/// `rsa-key-BITS`: the DER length and its first four bytes (hex), or the error.
fn probe_crypto(instructions: &Value, report: &mut serde_json::Map<String, Value>) {
    let Some(sizes) = instructions["rsaKeyBits"].as_array() else {
        return;
    };
    for bits in sizes.iter().filter_map(Value::as_u64) {
        let generated = crypto::generate_rsa_key(bits as u32).map(|der| {
            let head: String = der.iter().take(4).map(|b| format!("{b:02x}")).collect();
            json!({"length": der.len(), "head": head})
        });
        let entry = match generated {
            Ok(value) => json!({"ok": value}),
            Err(_) => outcome(&generated),
        };
        report.insert(format!("rsa-key-{bits}"), entry);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `rsa-sign`: a key of `rsaSignBits` from the host, and the host's signature of `probe`
/// with it (both hex), or the error; `rsa-sign-garbage`: signing with a key that is not
/// DER. `bcrypt`: the host's hash of the password at the cost, or the error.
fn probe_signing(instructions: &Value, report: &mut serde_json::Map<String, Value>) {
    if let Some(bits) = instructions["rsaSignBits"].as_u64() {
        let signed = crypto::generate_rsa_key(bits as u32).and_then(|key| {
            crypto::sign_rsa_sha256(&key, b"probe")
                .map(|signature| json!({"key": hex(&key), "signature": hex(&signature)}))
        });
        let entry = match signed {
            Ok(value) => json!({"ok": value}),
            Err(_) => outcome(&signed),
        };
        report.insert("rsa-sign".into(), entry);
        let garbage = crypto::sign_rsa_sha256(b"not a key", b"probe");
        report.insert("rsa-sign-garbage".into(), outcome(&garbage));
    }
    if let Some(password) = instructions["bcrypt"]["password"].as_str() {
        let cost = instructions["bcrypt"]["cost"].as_u64().unwrap_or(10) as u32;
        let hashed = crypto::bcrypt_hash(password, cost);
        let entry = match &hashed {
            Ok(hash) => json!({"ok": hash}),
            Err(_) => outcome(&hashed),
        };
        report.insert("bcrypt".into(), entry);
        if let Some(cost) = instructions["bcrypt"]["refusedCost"].as_u64() {
            let refused = crypto::bcrypt_hash(password, cost as u32);
            report.insert("bcrypt-refused".into(), outcome(&refused));
        }
        // Started and left running, then finished: the same hash; a handle is finished
        // once; a fifth running hash is refused.
        let started = crypto::bcrypt_hash_start(password, cost);
        let entry = match &started {
            Ok(handle) => {
                let finished = crypto::bcrypt_hash_finish(*handle);
                let again = crypto::bcrypt_hash_finish(*handle);
                json!({"finished": value_or_message(finished.map_err(|e| e.message)), "again": outcome(&again)})
            }
            Err(_) => outcome(&started),
        };
        report.insert("bcrypt-started".into(), entry);
        let running: Vec<_> = (0..5)
            .map(|_| crypto::bcrypt_hash_start(password, cost))
            .collect();
        report.insert("bcrypt-fifth-start".into(), outcome(&running[4]));
        for handle in running.into_iter().flatten() {
            let _ = crypto::bcrypt_hash_finish(handle);
        }
    }
}

/// `folder-file`: the granted unread file's contents (as text), or the error;
/// `folder-file-denied`: reading a file the call did not list.
fn probe_folder_files(instructions: &Value, report: &mut serde_json::Map<String, Value>) {
    if let Some(path) = instructions["folderFile"]["granted"].as_str() {
        let read = folder_files::read_file(path);
        let entry = match &read {
            Ok(contents) => json!({"ok": String::from_utf8_lossy(contents)}),
            Err(_) => outcome(&read),
        };
        report.insert("folder-file".into(), entry);
    }
    if let Some(path) = instructions["folderFile"]["denied"].as_str() {
        report.insert(
            "folder-file-denied".into(),
            outcome(&folder_files::read_file(path)),
        );
    }
}

struct Probe;

impl Guest for Probe {
    fn template(
        release: ReleaseId,
        _chart: ChartArtifact,
        values: Vec<ValueLayer>,
        _options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        let text = match values.first() {
            Some(ValueLayer::Document(document)) => document.content.clone(),
            _ => "{}".to_owned(),
        };
        let instructions: Value = serde_json::from_str(&text).map_err(|e| Error {
            code: ErrorCode::InvalidInput,
            message: e.to_string(),
            retryable: false,
        })?;
        log::log(
            log::Level::Info,
            &format!("host-probe: probing for release {}", release.name),
        );
        let mut report = serde_json::Map::new();
        report.insert("log".into(), json!("sent"));
        probe_kube(&instructions, &mut report);
        probe_git(&instructions, &mut report);
        probe_crypto(&instructions, &mut report);
        probe_signing(&instructions, &mut report);
        probe_folder_files(&instructions, &mut report);
        Ok(Rendered {
            manifest: Value::Object(report).to_string(),
            hooks: String::new(),
            notes: None,
        })
    }
    fn package(_chart: ChartInput) -> Result<ChartArtifact, Error> {
        Err(unsupported())
    }
    fn sync(_request: SyncRequest) -> Result<SyncOutcome, Error> {
        Err(unsupported())
    }
    fn uninstall(
        _release: ReleaseId,
        _options: UninstallOptions,
    ) -> Result<Option<ReleaseInfo>, Error> {
        Err(unsupported())
    }
    fn status(_release: ReleaseId) -> Result<Option<ReleaseInfo>, Error> {
        Err(unsupported())
    }
    fn history(_release: ReleaseId, _max: u32) -> Result<Vec<ReleaseInfo>, Error> {
        Err(unsupported())
    }
    fn rollback(
        _release: ReleaseId,
        _revision: Option<u32>,
        _options: SyncOptions,
    ) -> Result<ReleaseInfo, Error> {
        Err(unsupported())
    }
    fn plan(_request: SyncRequest) -> Result<SyncPlan, Error> {
        Err(unsupported())
    }
}

export!(Probe);
