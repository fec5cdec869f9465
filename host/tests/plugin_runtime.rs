//! Component tests: the host loads the real compiled test plugins (`make plugins`) and
//! proves the sandbox holds — deadlines, memory limits, traps, wrong files and worlds —
//! and that the host keeps serving normal calls after each failure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use capstan::capabilities::Grants;
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::bindings::source::exports::capstan::plugin::source::SourceRequest;
use capstan::plugins::cache::CacheOutcome;
use capstan::plugins::call::CallFailure;
use capstan::plugins::{LoadError, PluginRuntime};

#[path = "../../tests/support/probe.rs"]
mod probe_support;
use probe_support::probe;

fn plugin_file(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/plugins")
        .join(format!("{name}.wasm"));
    assert!(
        path.is_file(),
        "{} is missing: run `make plugins` first",
        path.display()
    );
    path
}

fn entry(name: &str, file: &str, world: PluginWorld, limits: PluginLimits) -> PluginConfig {
    PluginConfig {
        name: name.into(),
        world,
        path: plugin_file(file),
        limits,
        wasi: WasiGrants::default(),
        kinds: Vec::new(),
        allowed_hosts: None,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    }
}

fn request(url: &str) -> SourceRequest {
    SourceRequest {
        kind: "test".into(),
        spec: serde_json::json!({ "url": url }).to_string(),
    }
}

fn runtime(cache: &Path) -> PluginRuntime {
    PluginRuntime::new(cache, None).expect("runtime")
}

const SHORT: PluginLimits = PluginLimits {
    memory_mib: 32,
    timeout_ms: 300,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn looping_plugin_is_stopped_at_its_deadline_and_the_next_call_succeeds() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    runtime
        .load(&entry(
            "spin",
            "test-spin-forever",
            PluginWorld::Source,
            SHORT,
        ))
        .unwrap();
    let plugin = runtime.source("spin").unwrap();

    let started = Instant::now();
    let error = plugin
        .resolve(&request("spin"), Grants::default())
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(matches!(error.cause, CallFailure::Deadline(_)), "{error}");
    assert_eq!(error.plugin, "spin");
    assert_eq!(error.function, "resolve");
    assert!(
        error.to_string().contains("deadline of 300 ms exceeded"),
        "{error}"
    );
    // The cause above is what shows the deadline stopped the call (the plugin loops
    // forever). The bound only catches a call left running far past its deadline: a
    // loaded 2-core machine can delay the epoch ticker and the task by whole seconds, so
    // it is generous.
    let limit = Duration::from_millis(SHORT.timeout_ms) + Duration::from_secs(10);
    assert!(
        elapsed <= limit,
        "stopped after {elapsed:?}, allowed {limit:?}"
    );

    let revision = plugin
        .resolve(&request("ok"), Grants::default())
        .await
        .unwrap();
    assert_eq!(revision.id, "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_call_does_not_block_other_calls() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let limits = PluginLimits {
        memory_mib: 32,
        timeout_ms: 2_000,
    };
    runtime
        .load(&entry(
            "spin",
            "test-spin-forever",
            PluginWorld::Source,
            limits,
        ))
        .unwrap();
    let plugin = std::sync::Arc::new(runtime.source("spin").unwrap());
    // Two looping calls occupy both workers' time slices; a normal call must still finish
    // long before their deadline because busy guests yield every epoch tick.
    let spinning: Vec<_> = (0..2)
        .map(|_| {
            let plugin = plugin.clone();
            tokio::spawn(async move { plugin.resolve(&request("spin"), Grants::default()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    plugin
        .resolve(&request("ok"), Grants::default())
        .await
        .unwrap();
    // The normal call finished while the looping calls were still running: it did not
    // wait behind them.
    let still_looping = spinning.iter().filter(|task| !task.is_finished()).count();
    assert_eq!(
        still_looping, 2,
        "the normal call waited for the looping calls to end"
    );
    for task in spinning {
        assert!(matches!(
            task.await.unwrap().unwrap_err().cause,
            CallFailure::Deadline(_)
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocating_plugin_fails_with_memory_limit_and_the_next_call_succeeds() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let limits = PluginLimits {
        memory_mib: 16,
        timeout_ms: 10_000,
    };
    runtime
        .load(&entry(
            "hoard",
            "test-allocate-forever",
            PluginWorld::Source,
            limits,
        ))
        .unwrap();
    let plugin = runtime.source("hoard").unwrap();

    let error = plugin
        .resolve(&request("hoard"), Grants::default())
        .await
        .unwrap_err();
    assert_eq!(
        error.cause,
        CallFailure::MemoryLimit { limit_mib: 16 },
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("memory limit of 16 MiB exceeded"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("plugin `hoard` failed in `resolve`"),
        "{error}"
    );

    assert_eq!(
        plugin
            .resolve(&request("ok"), Grants::default())
            .await
            .unwrap()
            .id,
        "ok"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_share_one_memory_budget_and_give_it_back() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    runtime.set_memory_budget_mib(24);
    let limits = PluginLimits {
        memory_mib: 256,
        timeout_ms: 10_000,
    };
    runtime
        .load(&entry(
            "hoard",
            "test-allocate-forever",
            PluginWorld::Source,
            limits,
        ))
        .unwrap();
    let plugin = runtime.source("hoard").unwrap();
    // Four calls at once, each growing without end: each stops at the shared budget (its
    // own limit is far above), not at 4 × 256 MiB.
    let hoard = request("hoard");
    let calls = (0..4).map(|_| plugin.resolve(&hoard, Grants::default()));
    for result in futures::future::join_all(calls).await {
        let error = result.unwrap_err();
        let CallFailure::MemoryBudget {
            budget_mib,
            wanted_mib,
            others_mib,
        } = error.cause
        else {
            panic!("not the budget: {error}")
        };
        assert_eq!(budget_mib, 24, "{error}");
        // What this call wanted plus what the others held passes the budget.
        assert!(
            wanted_mib + others_mib > 24 && wanted_mib <= 24 + 1,
            "{error}"
        );
        assert!(error.retryable(), "{error}");
        assert!(
            error.to_string().contains(&format!(
                "growing to {wanted_mib} MiB would pass the plugins' shared memory budget of 24 MiB ({others_mib} MiB held by other calls in flight)"
            )),
            "{error}"
        );
    }
    // Every reservation was given back with its store.
    assert_eq!(runtime.memory_budget().in_use(), 0);
    assert_eq!(
        plugin
            .resolve(&request("ok"), Grants::default())
            .await
            .unwrap()
            .id,
        "ok"
    );
    assert_eq!(runtime.memory_budget().in_use(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trapping_plugin_error_names_plugin_and_function_and_the_next_call_succeeds() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    runtime
        .load(&entry(
            "trapper",
            "test-trap",
            PluginWorld::Source,
            PluginLimits::default(),
        ))
        .unwrap();
    let plugin = runtime.source("trapper").unwrap();

    let error = plugin
        .resolve(&request("trap"), Grants::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&error.cause, CallFailure::Trap(text) if text.contains("unreachable")),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("plugin `trapper` failed in `resolve`: trapped"),
        "{error}"
    );

    assert_eq!(
        plugin
            .resolve(&request("ok"), Grants::default())
            .await
            .unwrap()
            .id,
        "ok"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_returned_by_a_plugin_are_values_with_their_code() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    runtime
        .load(&entry(
            "helm3",
            "backend-helm3",
            PluginWorld::Backend,
            PluginLimits::default(),
        ))
        .unwrap();
    let backend = runtime.backend("helm3").unwrap();
    let release = capstan::plugins::bindings::types::ReleaseId {
        name: "r".into(),
        namespace: "ns".into(),
    };
    // Without a Kubernetes grant, reading the release records is refused by the host; the
    // component returns that as an error value with the `denied` code.
    let error = backend
        .status(&release, Grants::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error.cause,
            CallFailure::Returned { code: capstan::plugins::bindings::types::ErrorCode::Denied, message, .. }
                if message.contains("not granted")
        ),
        "{error}"
    );
    assert!(!error.retryable());
}

#[test]
fn files_that_are_not_components_are_refused_naming_the_file() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let text = cache.path().join("notes.wasm");
    std::fs::write(&text, "not wasm at all").unwrap();
    let core = cache.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    for (file, found) in [
        (&text, "no WebAssembly header"),
        (&core, "a core WebAssembly module"),
    ] {
        let config = PluginConfig {
            name: "bad".into(),
            world: PluginWorld::Source,
            path: file.clone(),
            limits: PluginLimits::default(),
            wasi: WasiGrants::default(),
            kinds: Vec::new(),
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
        };
        let error = runtime.load(&config).map(|_| ()).unwrap_err();
        assert!(matches!(error, LoadError::NotComponent { .. }), "{error}");
        let text = error.to_string();
        assert!(text.contains(&file.display().to_string()), "{text}");
        assert!(text.contains(found), "{text}");
        assert!(
            text.contains("expected a component exporting capstan:plugin/source@0.2.x"),
            "{text}"
        );
    }
}

#[test]
fn wrong_world_is_refused_naming_the_file_and_what_was_expected() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let error = runtime
        .load(&entry(
            "greeter",
            "test-wrong-world",
            PluginWorld::Backend,
            PluginLimits::default(),
        ))
        .map(|_| ())
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, LoadError::WrongWorld { .. }), "{text}");
    assert!(text.contains("test-wrong-world.wasm"), "{text}");
    assert!(text.contains("is not a `backend-plugin` component: expected an export of capstan:plugin/backend@0.2.x, but it exports greet"), "{text}");

    // A real source plugin configured as a backend is refused the same way.
    let error = runtime
        .load(&entry(
            "git",
            "source-git",
            PluginWorld::Backend,
            PluginLimits::default(),
        ))
        .map(|_| ())
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("but it exports capstan:plugin/source@0.2.0"),
        "{error}"
    );
}

#[test]
fn one_bad_plugin_does_not_stop_the_others_and_the_second_start_uses_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let configs = vec![
        entry(
            "git",
            "source-git",
            PluginWorld::Source,
            PluginLimits::default(),
        ),
        entry(
            "greeter",
            "test-wrong-world",
            PluginWorld::Source,
            PluginLimits::default(),
        ),
        entry(
            "helm3",
            "backend-helm3",
            PluginWorld::Backend,
            PluginLimits::default(),
        ),
    ];
    let first = runtime(cache.path()).load_all(&configs);
    assert_eq!(
        first.loaded.iter().map(|p| p.name()).collect::<Vec<_>>(),
        ["git", "helm3"]
    );
    assert_eq!(first.failed.len(), 1);
    assert!(
        first
            .loaded
            .iter()
            .all(|p| p.cache_outcome() == CacheOutcome::Compiled)
    );

    let second = runtime(cache.path()).load_all(&configs);
    assert_eq!(second.loaded.len(), 2);
    assert!(
        second
            .loaded
            .iter()
            .all(|p| p.cache_outcome() == CacheOutcome::Hit)
    );
}

#[test]
fn a_corrupt_cache_entry_is_recompiled() {
    let cache = tempfile::tempdir().unwrap();
    let config = entry(
        "git",
        "source-git",
        PluginWorld::Source,
        PluginLimits::default(),
    );
    runtime(cache.path()).load(&config).unwrap();
    let mut corrupted = 0;
    for file in std::fs::read_dir(cache.path()).unwrap() {
        let path = file.unwrap().path();
        if path.extension().is_some_and(|x| x == "cwasm") {
            std::fs::write(path, b"garbage").unwrap();
            corrupted += 1;
        }
    }
    assert_eq!(corrupted, 1);
    let plugin = runtime(cache.path()).load(&config).unwrap();
    assert_eq!(plugin.cache_outcome(), CacheOutcome::Compiled);
    // The remembered digest of the unchanged plugin file still leads to the same entry.
    let plugin = runtime(cache.path()).load(&config).unwrap();
    assert_eq!(plugin.cache_outcome(), CacheOutcome::Hit);
}

#[test]
fn the_example_configuration_loads_every_plugin() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/capstan.example.yaml");
    let config = capstan::config::Config::load(&path).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let report = runtime(cache.path()).load_all(&config.plugins);
    assert!(
        report.failed.is_empty(),
        "{:?}",
        report
            .failed
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let names: Vec<_> = report.loaded.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["git", "helm-repo", "oci", "helm3", "helm2"]);
    assert_eq!(config.backends.default.as_deref(), Some("helm3"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_instance_slots_wait_for_a_slot_instead_of_failing() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    runtime
        .load(&entry(
            "spin",
            "test-spin-forever",
            PluginWorld::Source,
            PluginLimits {
                memory_mib: 32,
                timeout_ms: 10_000,
            },
        ))
        .unwrap();
    let quick = PluginLimits {
        memory_mib: 32,
        timeout_ms: 60_000,
    };
    runtime
        .load(&entry(
            "quick",
            "test-spin-forever",
            PluginWorld::Source,
            quick,
        ))
        .unwrap();
    let spin = std::sync::Arc::new(runtime.source("spin").unwrap());
    let quick = std::sync::Arc::new(runtime.source("quick").unwrap());
    // Fill every instance slot with a looping call (a 10 s deadline leaves time for all 256
    // to start even on a loaded 2-core machine)...
    let spinning: Vec<_> = (0..capstan::plugins::MAX_CONCURRENT_CALLS)
        .map(|_| {
            let spin = spin.clone();
            tokio::spawn(async move { spin.resolve(&request("spin"), Grants::default()).await })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while runtime.calls_in_flight() < capstan::plugins::MAX_CONCURRENT_CALLS as usize {
        assert!(
            Instant::now() < deadline,
            "slots never filled: {}",
            runtime.calls_in_flight()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // ...then normal calls must wait for a slot and succeed, not fail for want of one.
    let waiting: Vec<_> = (0..16)
        .map(|_| {
            let quick = quick.clone();
            tokio::spawn(async move { quick.resolve(&request("ok"), Grants::default()).await })
        })
        .collect();
    for task in waiting {
        assert_eq!(task.await.unwrap().unwrap().id, "ok");
    }
    for task in spinning {
        let error = task.await.unwrap().unwrap_err();
        assert!(matches!(error.cause, CallFailure::Deadline(_)), "{error}");
    }
}

/// The host-probe component loaded as a backend, with room for the `crypto` calls.
fn crypto_probe(cache: &Path) -> PluginRuntime {
    let mut runtime = runtime(cache);
    let limits = PluginLimits {
        memory_mib: 64,
        timeout_ms: 30_000,
    };
    runtime
        .load(&entry(
            "probe",
            "test-host-probe",
            PluginWorld::Backend,
            limits,
        ))
        .unwrap();
    runtime
}

/// The `crypto` import signs and hashes for a component: the signature of a host key
/// verifies under its public key, a key that is not DER is refused as invalid input, the
/// bcrypt hash verifies for the password and no other, and a cost above 12 is refused; a
/// hash started and finished later is as good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crypto_import_signs_and_hashes_for_a_component() {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::signature::Verifier;
    let cache = tempfile::tempdir().unwrap();
    let runtime = crypto_probe(cache.path());
    let instructions = serde_json::json!({
        "rsaSignBits": 2048,
        "bcrypt": {"password": "s3cret", "cost": 4, "refusedCost": 13},
    });
    let report = probe(&runtime, instructions, Grants::default()).await;
    let unhex = |text: &serde_json::Value| -> Vec<u8> {
        let text = text.as_str().unwrap_or_default();
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    };
    let signed = &report["rsa-sign"]["ok"];
    let key = rsa::RsaPrivateKey::from_pkcs1_der(&unhex(&signed["key"])).expect("{report:#}");
    let verifying = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key.to_public_key());
    let signature =
        rsa::pkcs1v15::Signature::try_from(unhex(&signed["signature"]).as_slice()).unwrap();
    verifying
        .verify(b"probe", &signature)
        .expect("the host's signature verifies");
    let garbage = &report["rsa-sign-garbage"];
    assert_eq!(garbage["error"], "InvalidInput", "{report:#}");
    assert!(
        garbage["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not an RSA private key"),
        "{report:#}"
    );
    let hash = report["bcrypt"]["ok"].as_str().expect("a hash");
    assert!(hash.starts_with("$2a$04$"), "{hash}");
    assert!(bcrypt::verify("s3cret", hash).unwrap());
    assert!(!bcrypt::verify("other", hash).unwrap());
    let refused = &report["bcrypt-refused"];
    assert_eq!(refused["error"], "InvalidInput", "{report:#}");
    assert_eq!(
        refused["message"], "bcrypt-hash: cost 13 is not from 4 to 12",
        "{report:#}"
    );
    // Started ahead (`bcrypt-hash-start`) and finished: a hash of the same password; a
    // handle is finished once; no more than four run at once in a call.
    let started = &report["bcrypt-started"];
    let hash = started["finished"]["ok"].as_str().expect("{report:#}");
    assert!(hash.starts_with("$2a$04$"), "{hash}");
    assert!(bcrypt::verify("s3cret", hash).unwrap());
    assert_eq!(started["again"]["error"], "NotFound", "{report:#}");
    let fifth = &report["bcrypt-fifth-start"];
    assert_eq!(fifth["error"], "InvalidInput", "{report:#}");
    assert!(
        fifth["message"]
            .as_str()
            .unwrap_or_default()
            .contains("4 hashes are already running"),
        "{report:#}"
    );
}

/// The `crypto` import: a component gets a real RSA key of the size it asks for, generated
/// natively by the host, and an invalid size is refused as invalid input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crypto_import_generates_rsa_keys_for_a_component() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = crypto_probe(cache.path());
    let instructions = serde_json::json!({"rsaKeyBits": [2048, 4096, 1000, 1023, 8192]});
    let report = probe(&runtime, instructions, Grants::default()).await;
    // PKCS#1 RSAPrivateKey: a SEQUENCE with a two-byte long-form length (30 82 ..); nine
    // integers, the modulus `bits` long and the others about half of it.
    for (bits, range) in [(2048, 1150..1250), (4096, 2300..2400)] {
        let key = &report[format!("rsa-key-{bits}")]["ok"];
        let length = key["length"].as_u64().unwrap_or_default();
        assert!(range.contains(&length), "{bits}: {report:#}");
        assert!(
            key["head"].as_str().unwrap_or_default().starts_with("3082"),
            "{report:#}"
        );
    }
    for bits in [1000, 1023, 8192] {
        let refused = &report[format!("rsa-key-{bits}")];
        assert_eq!(refused["error"], "InvalidInput", "{report:#}");
        let message = refused["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(
                "{bits} bits is not an even size from 1024 to 4096"
            )),
            "{message}"
        );
    }
}

#[test]
fn a_component_of_an_unknown_major_version_is_refused_naming_both_versions() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let error = runtime
        .load(&entry(
            "future",
            "test-future-major",
            PluginWorld::Source,
            PluginLimits::default(),
        ))
        .map(|_| ())
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, LoadError::WrongWorld { .. }), "{text}");
    assert!(text.starts_with("plugin `future`: "), "{text}");
    assert!(text.contains("test-future-major.wasm"), "{text}");
    assert!(
        text.contains(
            "it implements capstan:plugin@1.0.0; this host supports capstan:plugin@0.2.x"
        ),
        "{text}"
    );
}

#[test]
fn a_previous_contract_source_component_needs_its_kinds_named() {
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/source-git-0.1.1.wasm");
    let config = |kinds: &[&str]| PluginConfig {
        name: "old-git".into(),
        world: PluginWorld::Source,
        path: fixture.clone(),
        limits: PluginLimits::default(),
        wasi: WasiGrants::default(),
        kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
        allowed_hosts: None,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    };
    let error = runtime.load(&config(&[])).map(|_| ()).unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, LoadError::Previous { .. }), "{text}");
    assert!(text.contains("implements capstan:plugin@0.1.1"), "{text}");
    assert!(text.contains("name them in the plugin's `kinds`"), "{text}");
    let error = runtime.load(&config(&["oci"])).map(|_| ()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("kind `oci` cannot be served by a 0.1 component"),
        "{error}"
    );
    let loaded = runtime.load(&config(&["git"])).unwrap();
    assert_eq!(loaded.wit_version(), "0.1.1");
    // A current component must not name kinds: it declares them.
    let current = PluginConfig {
        path: plugin_file("source-git"),
        ..config(&["git"])
    };
    let error = runtime.load(&current).map(|_| ()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`kinds` is only for 0.1 source components"),
        "{error}"
    );
}

/// The 0.1.1 `backend-helm3` fixture (`tests/fixtures/README.md`), unpacked into `dir`.
fn previous_backend_fixture(dir: &Path) -> PathBuf {
    use std::io::Read;
    let packed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/backend-helm3-0.1.1.wasm.gz");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&packed).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let path = dir.join("backend-helm3-0.1.1.wasm");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A small chart folder as `capstan template` hands it to a backend.
fn shop_chart_input()
-> capstan::plugins::bindings::backend::exports::capstan::plugin::backend::ChartInput {
    use capstan::plugins::bindings::backend::exports::capstan::plugin::backend::{
        ChartFile, ChartInput,
    };
    let file = |path: &str, text: &str| ChartFile {
        path: path.into(),
        contents: text.as_bytes().to_vec(),
    };
    ChartInput::Folder(vec![
        file("Chart.yaml", "apiVersion: v2\nname: shop\nversion: 0.3.0\n"),
        file(
            "values.yaml",
            "replicas: 1\nratio: 0.5\nimage: {repository: shop, tag: stable}\n",
        ),
        file(
            "templates/deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n        - name: shop\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n          args: [{{ .Values.ratio | quote }}, {{ .Values.large | quote }}]\n",
        ),
        file(
            "templates/NOTES.txt",
            "{{ .Release.Name }} in {{ .Release.Namespace }}\n",
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_contract_backend_serves_through_compat_helm_as_the_current_one_does() {
    use capstan::plugins::bindings::backend::exports::capstan::plugin::backend::{
        TemplateOptions, ValueLayer, ValuesDocument,
    };
    use capstan::plugins::bindings::types::ReleaseId;
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let limits = PluginLimits {
        memory_mib: 512,
        timeout_ms: 30_000,
    };
    let old = PluginConfig {
        path: previous_backend_fixture(dir.path()),
        compat_helm: Some(plugin_file("compat-helm")),
        ..entry("old-helm3", "backend-helm3", PluginWorld::Backend, limits)
    };

    // Without its compat-helm component a 0.1 backend is refused, naming what is missing.
    let missing = PluginConfig {
        compat_helm: Some(dir.path().join("no-such-compat-helm.wasm")),
        ..old.clone()
    };
    let error = runtime.load(&missing).map(|_| ()).unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, LoadError::Previous { .. }), "{text}");
    assert!(text.contains("implements capstan:plugin@0.1.1"), "{text}");
    assert!(text.contains("no-such-compat-helm.wasm"), "{text}");

    let loaded = runtime.load(&old).unwrap();
    assert_eq!(loaded.wit_version(), "0.1.1");
    runtime
        .load(&entry(
            "helm3",
            "backend-helm3",
            PluginWorld::Backend,
            limits,
        ))
        .unwrap();
    let previous = runtime.backend("old-helm3").unwrap();
    let current = runtime.backend("helm3").unwrap();
    // Imports added within 0.2 reach only backends built with them: the operator refuses
    // post-rendering, tests, drift checks and storage namespaces for the others by this.
    for interface in [
        "capstan:plugin/post-render",
        "capstan:plugin/release-context",
        "capstan:plugin/discovery",
    ] {
        assert!(current.imports(interface), "{interface}");
        assert!(!previous.imports(interface), "{interface}");
    }

    // 0.1 has no `package`: compat-helm packages, to the byte as the current backend does.
    let chart = previous.package(&shop_chart_input()).await.unwrap();
    let reference = current.package(&shop_chart_input()).await.unwrap();
    assert_eq!(chart.metadata.name, "shop");
    assert_eq!(chart.digest, reference.digest);

    // 0.1 takes values merged: compat-helm merges the layers; the rendering must be the
    // current backend's for every kind of layer.
    let layers = vec![
        ValueLayer::Document(ValuesDocument {
            origin: "spec.values".into(),
            content: "replicas: 3\nimage: {tag: v2}\n".into(),
            optional: false,
        }),
        ValueLayer::Document(ValuesDocument {
            origin: "valuesFrom[0] (ConfigMap ns/broken, key values.yaml)".into(),
            content: "a: [".into(),
            optional: true,
        }),
        ValueLayer::Set("large=1e6,ratio=0.25".into()),
        ValueLayer::SetString("image.repository=registry.local/shop".into()),
    ];
    let release = ReleaseId {
        name: "corner".into(),
        namespace: "town".into(),
    };
    let options = TemplateOptions {
        kube_version: None,
        api_versions: Vec::new(),
        is_upgrade: false,
    };
    let rendered = previous
        .template(&release, &chart, &layers, &options, Grants::default())
        .await
        .unwrap();
    let expected = current
        .template(&release, &chart, &layers, &options, Grants::default())
        .await
        .unwrap();
    assert_eq!(rendered.manifest, expected.manifest);
    assert_eq!(rendered.notes, expected.notes);
    assert!(
        rendered.manifest.contains("replicas: 3"),
        "{}",
        rendered.manifest
    );
    assert!(
        rendered.manifest.contains("registry.local/shop:v2"),
        "{}",
        rendered.manifest
    );

    // A bad layer fails the call with its origin named, before the 0.1 backend runs.
    let bad = vec![ValueLayer::Document(ValuesDocument {
        origin: "valuesFrom[2] (Secret ns/s, key values.yaml)".into(),
        content: "a: [".into(),
        optional: false,
    })];
    let error = previous
        .template(&release, &chart, &bad, &options, Grants::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error.cause, CallFailure::Returned { .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("valuesFrom[2] (Secret ns/s, key values.yaml)"),
        "{error}"
    );
}

/// A backend exporting `prepare` is compiled from a pre-initialised copy, a source without
/// it as it is; instances of the prepared form still draw fresh random values (nothing of a
/// generator is kept), and a chart schema (whose validators `prepare` built) still refuses
/// bad values with Helm's words.
#[tokio::test]
async fn a_backend_exporting_prepare_is_compiled_pre_initialised_and_stays_random() {
    use capstan::plugins::bindings::backend::exports::capstan::plugin::backend::{
        ChartFile, ChartInput, TemplateOptions, ValueLayer,
    };
    use capstan::plugins::bindings::types::ReleaseId;
    let cache = tempfile::tempdir().unwrap();
    let mut runtime = runtime(cache.path());
    let limits = PluginLimits {
        memory_mib: 512,
        timeout_ms: 60_000,
    };
    let loaded = runtime
        .load(&entry(
            "helm3",
            "backend-helm3",
            PluginWorld::Backend,
            limits,
        ))
        .unwrap();
    assert!(loaded.prepared(), "the Helm backend exports `prepare`");
    let source = runtime
        .load(&entry("git", "source-git", PluginWorld::Source, limits))
        .unwrap();
    assert!(!source.prepared(), "source-git exports no `prepare`");
    // From the cache the next time: nothing to prepare.
    let mut again = self::runtime(cache.path());
    let reloaded = again
        .load(&entry(
            "helm3",
            "backend-helm3",
            PluginWorld::Backend,
            limits,
        ))
        .unwrap();
    assert!(!reloaded.prepared());
    assert_eq!(reloaded.cache_outcome(), CacheOutcome::Hit);

    let backend = runtime.backend("helm3").unwrap();
    let file = |path: &str, text: &str| ChartFile {
        path: path.into(),
        contents: text.as_bytes().to_vec(),
    };
    let chart = backend
        .package(&ChartInput::Folder(vec![
            file("Chart.yaml", "apiVersion: v2\nname: dice\nversion: 1.0.0\n"),
            file("values.yaml", "size: 3\n"),
            file(
                "values.schema.json",
                r#"{"$schema": "http://json-schema.org/schema#", "type": "object", "properties": {"size": {"type": "integer"}}}"#,
            ),
            file(
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dice\ndata:\n  roll: {{ randAlphaNum 24 | quote }}\n  size: {{ .Values.size | quote }}\n",
            ),
        ]))
        .await
        .unwrap();
    let release = ReleaseId {
        name: "dice".into(),
        namespace: "table".into(),
    };
    let options = TemplateOptions {
        kube_version: None,
        api_versions: Vec::new(),
        is_upgrade: false,
    };
    let roll = |manifest: &str| {
        manifest
            .lines()
            .find(|line| line.trim_start().starts_with("roll:"))
            .unwrap_or_default()
            .to_owned()
    };
    let first = backend
        .template(&release, &chart, &[], &options, Grants::default())
        .await
        .unwrap();
    let second = backend
        .template(&release, &chart, &[], &options, Grants::default())
        .await
        .unwrap();
    assert!(first.manifest.contains("size: \"3\""), "{}", first.manifest);
    assert_eq!(roll(&first.manifest).len(), "  roll: \"\"".len() + 24);
    assert_ne!(roll(&first.manifest), roll(&second.manifest));

    let bad = vec![ValueLayer::Set("size=big".into())];
    let error = backend
        .template(&release, &chart, &bad, &options, Grants::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("values don't meet the specifications of the schema(s)"),
        "{error}"
    );
    assert!(
        error.contains("at '/size': got string, want integer"),
        "{error}"
    );
}
