//! Cost of one plugin call as the operator makes it: a fresh `Store` and instance from the
//! plugin's `InstancePre`, one trivial export call, the store dropped. The reference in the
//! same run is the bare `Store` + WASI context creation (no instance), so the ratio shows
//! what instantiation and the call add. Also measures loading a component from the
//! compiled cache, a fresh instance plus `describe`, and the JSON Schema validation the host
//! runs on a spec before any source call. Needs `make plugins`.

use std::path::Path;

#[path = "../../tests/support/egress.rs"]
mod egress_support;
#[path = "../../tests/support/repo_server.rs"]
mod repo_server;

use capstan::capabilities::Grants;
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::plugins::bindings::source::exports::capstan::plugin::source::SourceRequest;
use criterion::{Criterion, criterion_group, criterion_main};

fn config(file: &str) -> PluginConfig {
    PluginConfig {
        name: "bench".into(),
        world: PluginWorld::Source,
        path: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/plugins")
            .join(file),
        limits: PluginLimits::default(),
        wasi: WasiGrants::default(),
        kinds: Vec::new(),
        allowed_hosts: None,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    }
}

fn plugin_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let cache = tempfile::tempdir().expect("tempdir");
    let mut plugins = PluginRuntime::new(cache.path(), None).expect("runtime");
    plugins
        .load(&config("test-spin-forever.wasm"))
        .expect("load");
    let plugin = plugins.source("bench").expect("source plugin");
    let request = SourceRequest {
        kind: "test-spin-forever".into(),
        spec: r#"{"url":"ok"}"#.into(),
    };

    let mut group = c.benchmark_group("plugin_call");
    let engine = plugins.engine().clone();
    group.bench_function("reference_store_and_wasi_ctx_only", |b| {
        b.iter(|| {
            let ctx = wasmtime_wasi::WasiCtxBuilder::new().build();
            let store =
                wasmtime::Store::new(&engine, (ctx, wasmtime::component::ResourceTable::new()));
            std::hint::black_box(store);
        })
    });
    group.bench_function("fresh_instance_and_trivial_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let revision = plugin
                .resolve(&request, Grants::default())
                .await
                .expect("call");
            std::hint::black_box(revision);
        })
    });
    group.bench_function("fresh_instance_and_describe", |b| {
        b.to_async(&runtime).iter(|| async {
            let info = plugin.describe().await.expect("describe");
            std::hint::black_box(info);
        })
    });
    // Spec validation as the host does it before every source call: the `helm-repository`
    // kind's schema (compiled once) against a typical spec.
    plugins
        .load(&PluginConfig {
            name: "helm-repo".into(),
            ..config("source-helm-repo.wasm")
        })
        .expect("load helm-repo");
    let (catalog, failures) = runtime.block_on(capstan::sources::catalog::describe_all(
        vec![plugins.source("helm-repo").expect("helm-repo")],
        &Default::default(),
    ));
    assert!(failures.is_empty(), "{failures:?}");
    let catalog = catalog.expect("catalog");
    let spec = serde_json::json!({
        "url": "https://charts.example.com/stable",
        "chart": "podinfo",
        "version": ">=6.0.0 <7"
    });
    group.bench_function("spec_schema_validation", |b| {
        b.iter(|| {
            let routed = catalog.route("helm-repository", &spec).expect("valid");
            std::hint::black_box(routed.declared.name.len());
        })
    });
    // The backend world: a fresh instance of the product `backend-helm3` (a 6.6 MB
    // component) and one `status` call, answered by the component after its one host call
    // (`kube.list` of the release records) is refused by the empty grant.
    plugins.load(&backend_config()).expect("load helm3");
    let backend = plugins.backend("helm3").expect("backend plugin");
    let release = capstan::plugins::bindings::types::ReleaseId {
        name: "bench".into(),
        namespace: "default".into(),
    };
    group.bench_function("backend_fresh_instance_and_status_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let refused = backend.status(&release, Grants::default()).await;
            std::hint::black_box(refused.is_err());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("plugin_load");
    let source = config("source-git.wasm");
    group.bench_function("from_compiled_cache", |b| {
        b.iter(|| {
            let mut fresh = PluginRuntime::new(cache.path(), None).expect("runtime");
            std::hint::black_box(fresh.load(&source).expect("load"));
        })
    });
    // What the operator loads at start: every product component, from the compiled cache.
    let product = [
        config("source-git.wasm"),
        PluginConfig {
            name: "helm-repo".into(),
            ..config("source-helm-repo.wasm")
        },
        PluginConfig {
            name: "oci".into(),
            ..config("source-oci.wasm")
        },
        backend_config(),
        PluginConfig {
            name: "helm2".into(),
            ..backend_config_of("backend-helm2.wasm")
        },
    ];
    {
        // Fill the compiled cache first.
        let mut warm = PluginRuntime::new(cache.path(), None).expect("runtime");
        for plugin in &product {
            warm.load(plugin).expect("load");
        }
    }
    group.bench_function("all_product_plugins_from_compiled_cache", |b| {
        b.iter(|| {
            let mut fresh = PluginRuntime::new(cache.path(), None).expect("runtime");
            for plugin in &product {
                std::hint::black_box(fresh.load(plugin).expect("load"));
            }
        })
    });
    group.finish();
}

fn backend_config_of(file: &str) -> PluginConfig {
    PluginConfig {
        world: PluginWorld::Backend,
        ..config(file)
    }
}

fn backend_config() -> PluginConfig {
    PluginConfig {
        name: "helm3".into(),
        ..backend_config_of("backend-helm3.wasm")
    }
}

/// `resolve` of one git source through the current `source-git` and through the 0.1.1
/// `source-git` fixture (the compat adapter), side by side on the same mirror.
fn contract_versions(c: &mut Criterion) {
    use capstan::capabilities::git::GitGrant;
    use capstan::sources::MirrorKey;
    use capstan::sources::mirrors::MirrorStore;
    use std::process::Command;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let work = tempfile::tempdir().expect("tempdir");
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join("chart/templates")).expect("mkdir");
    std::fs::write(
        repo.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: bench\nversion: 1.0.0\n",
    )
    .expect("write");
    std::fs::write(repo.join("chart/templates/cm.yaml"), "kind: ConfigMap\n").expect("write");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "c",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .expect("git");
        assert!(status.success());
    }
    let url = format!("file://{}", repo.display());
    let mirrors = std::sync::Arc::new(MirrorStore::new(
        work.path().join("mirrors"),
        std::time::Duration::from_secs(60),
    ));
    let key = MirrorKey {
        url: url.clone(),
        credentials: None,
    };
    runtime
        .block_on(mirrors.fetch(&key, None, egress_support::loopback_and_local_paths()))
        .expect("mirror");
    let grants = || Grants {
        git: Some(GitGrant::new(url.clone(), mirrors.path_of(&key))),
        ..Grants::default()
    };
    let mut plugins = PluginRuntime::new(work.path().join("compiled"), None).expect("runtime");
    plugins
        .load(&PluginConfig {
            name: "git-0.2".into(),
            ..config("source-git.wasm")
        })
        .expect("load 0.2");
    plugins
        .load(&PluginConfig {
            name: "git-0.1.1".into(),
            path: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/source-git-0.1.1.wasm"),
            kinds: vec!["git".into()],
            allowed_hosts: None,
            storage_namespaces: Vec::new(),
            compat_helm: None,
            ..config("source-git.wasm")
        })
        .expect("load 0.1.1");
    let request = SourceRequest {
        kind: "git".into(),
        spec: serde_json::json!({"url": url, "ref": "main", "path": "chart"}).to_string(),
    };
    let mut group = c.benchmark_group("contract");
    for name in ["git-0.2", "git-0.1.1"] {
        let plugin = plugins.source(name).expect("plugin");
        group.bench_function(format!("resolve_{name}"), |b| {
            b.to_async(&runtime).iter(|| async {
                let revision = plugin.resolve(&request, grants()).await.expect("resolve");
                std::hint::black_box(revision);
            })
        });
    }
    group.finish();
}

/// `template` of a small chart with two value layers through the current `backend-helm3`
/// and through the 0.1.1 `backend-helm3` fixture, whose adapter first has `compat-helm`
/// merge the layers (a second fresh instance per call): the ratio is what serving a 0.1
/// backend costs.
fn contract_backends(c: &mut Criterion) {
    use capstan::plugins::bindings::backend::exports::capstan::plugin::backend::{
        ChartFile, ChartInput, TemplateOptions, ValueLayer, ValuesDocument,
    };
    use capstan::plugins::bindings::types::ReleaseId;
    use std::io::Read;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let work = tempfile::tempdir().expect("tempdir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/backend-helm3-0.1.1.wasm.gz");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&fixture).expect("fixture"))
        .read_to_end(&mut bytes)
        .expect("gunzip");
    let old = work.path().join("backend-helm3-0.1.1.wasm");
    std::fs::write(&old, bytes).expect("write");
    let plugins_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins");
    let backend = |name: &str, path: &Path| PluginConfig {
        name: name.into(),
        world: PluginWorld::Backend,
        path: path.to_owned(),
        compat_helm: Some(plugins_dir.join("compat-helm.wasm")),
        ..config("backend-helm3.wasm")
    };
    let mut plugins = PluginRuntime::new(work.path().join("compiled"), None).expect("runtime");
    plugins
        .load(&backend(
            "helm3-0.2",
            &plugins_dir.join("backend-helm3.wasm"),
        ))
        .expect("load 0.2");
    plugins
        .load(&backend("helm3-0.1.1", &old))
        .expect("load 0.1.1");
    let file = |path: &str, text: &str| ChartFile {
        path: path.into(),
        contents: text.as_bytes().to_vec(),
    };
    let chart = ChartInput::Folder(vec![
        file(
            "Chart.yaml",
            "apiVersion: v2\nname: bench\nversion: 1.0.0\n",
        ),
        file("values.yaml", "replicas: 1\nimage: {tag: stable}\n"),
        file(
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  tag: {{ .Values.image.tag }}\n",
        ),
    ]);
    let current = plugins.backend("helm3-0.2").expect("backend");
    let artifact = runtime.block_on(current.package(&chart)).expect("package");
    let layers = vec![
        ValueLayer::Document(ValuesDocument {
            origin: "spec.values".into(),
            content: "replicas: 3\n".into(),
            optional: false,
        }),
        ValueLayer::Set("image.tag=v2".into()),
    ];
    let release = ReleaseId {
        name: "bench".into(),
        namespace: "default".into(),
    };
    let options = TemplateOptions {
        kube_version: None,
        api_versions: Vec::new(),
        is_upgrade: false,
    };
    let mut group = c.benchmark_group("contract");
    for name in ["helm3-0.2", "helm3-0.1.1"] {
        let plugin = plugins.backend(name).expect("plugin");
        group.bench_function(format!("template_{name}"), |b| {
            b.to_async(&runtime).iter(|| async {
                let rendered = plugin
                    .template(&release, &artifact, &layers, &options, Grants::default())
                    .await
                    .expect("template");
                std::hint::black_box(rendered);
            })
        });
    }
    group.finish();
}

/// A Helm 4 getter (`mirror-getter`, Extism ABI) downloading a small chart from a local
/// HTTP server, against the reference of the host fetching the same URL itself through the
/// same HTTP capability: the ratio is what running the plugin adds (fresh instance, kernel
/// memory, JSON in and base64 out, reading Chart.yaml). Needs `make helm4-plugins`.
fn helm4_getter(c: &mut Criterion) {
    use capstan::capabilities::http::{HostPattern, HttpGrant, request};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let work = tempfile::tempdir().expect("tempdir");
    let served = work.path().join("served");
    std::fs::create_dir_all(&served).expect("served");
    std::fs::create_dir_all(served.join("web")).expect("chart dir");
    std::fs::write(
        served.join("web/Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    )
    .expect("Chart.yaml");
    let chart = std::process::Command::new("tar")
        .args(["-czf", "web-1.0.0.tgz", "web"])
        .current_dir(&served)
        .status();
    assert!(chart.is_ok_and(|s| s.success()), "tar");
    let server = repo_server::RepoServer::start(&served, work.path().join("access.log"), None);
    let mut plugins = PluginRuntime::new(work.path().join("compiled"), None).expect("runtime");
    plugins.set_egress(egress_support::loopback_and_local_paths());
    plugins
        .load(&PluginConfig {
            name: "mirror".into(),
            path: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/plugins/helm4/mirror-getter"),
            ..config("unused")
        })
        .expect("load mirror-getter");
    let plugin = plugins.source("mirror").expect("mirror");
    let getter_request = SourceRequest {
        kind: "mirror".into(),
        spec: serde_json::json!({
            "url": format!("mirror://127.0.0.1:{}/web-1.0.0.tgz", server.port)
        })
        .to_string(),
    };
    let grant = HttpGrant::empty()
        .with_egress(egress_support::loopback_and_local_paths())
        .with_hosts([HostPattern::parse("127.0.0.1").expect("host")]);
    let url = server.url("web-1.0.0.tgz");
    let mut group = c.benchmark_group("helm4_getter");
    group.bench_function("reference_host_http_get", |b| {
        b.to_async(&runtime).iter(|| async {
            let get = http::Request::get(url.as_str())
                .body(bytes::Bytes::new())
                .expect("request");
            let response = request(&grant, get).await.expect("get");
            std::hint::black_box(response);
        })
    });
    group.bench_function("fresh_instance_and_getter_resolve", |b| {
        b.to_async(&runtime).iter(|| async {
            let revision = plugin
                .resolve(&getter_request, Grants::default())
                .await
                .expect("resolve");
            std::hint::black_box(revision);
        })
    });
    group.finish();
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Memory per call in flight (not a timing; printed once): `N` calls of the spinning test
/// component held at once (each until its 1.5 s deadline), the process's resident memory
/// sampled meanwhile; the growth over the idle process divided by `N`. This is the floor
/// of a call: its `Store`, instance, stacks and the pages the guest touched.
fn concurrent_call_memory(_c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let cache = tempfile::tempdir().expect("tempdir");
    let mut plugins = PluginRuntime::new(cache.path(), None).expect("runtime");
    plugins
        .load(&PluginConfig {
            limits: PluginLimits {
                memory_mib: 64,
                timeout_ms: 1500,
            },
            ..config("test-spin-forever.wasm")
        })
        .expect("load");
    let plugin = std::sync::Arc::new(plugins.source("bench").expect("source plugin"));
    let request = SourceRequest {
        kind: "test-spin-forever".into(),
        spec: r#"{"url":"spin"}"#.into(),
    };
    for calls in [8usize, 32, 128] {
        let idle = rss_kib();
        let peak = runtime.block_on(async {
            let mut tasks = Vec::new();
            for _ in 0..calls {
                let (plugin, request) = (std::sync::Arc::clone(&plugin), request.clone());
                tasks.push(tokio::spawn(async move {
                    plugin.resolve(&request, Grants::default()).await.is_err()
                }));
            }
            let mut peak = idle;
            for _ in 0..20 {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                peak = peak.max(rss_kib());
            }
            for task in tasks {
                assert!(task.await.expect("join"), "the spinning call must time out");
            }
            peak
        });
        println!(
            "concurrent_call_memory: {calls} calls in flight: +{} KiB resident, {} KiB per call",
            peak.saturating_sub(idle),
            peak.saturating_sub(idle) / calls as u64
        );
    }
}

criterion_group!(
    benches,
    plugin_call,
    concurrent_call_memory,
    contract_versions,
    contract_backends,
    helm4_getter
);
criterion_main!(benches);
