//! Helm 4 Wasm getter plugins (`getter/v1` on `extism/v1`) served as source kinds: the
//! real `mirror-getter` example (built with the Extism Rust PDK, `make helm4-plugins`),
//! loaded from its folder as Helm distributes it, against a real HTTP server on 127.0.0.1
//! (`tests/support/helm_repo_server.py`). Expected digests and sizes come from the files
//! on disk; the server's log tells which requests reached it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[path = "../../tests/support/egress.rs"]
mod egress_support;
#[path = "../../tests/support/repo_server.rs"]
mod repo_server;

use capstan::capabilities::Grants;
use capstan::capabilities::credentials::CredentialsGrant;
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::bindings::source::exports::capstan::plugin::source::SourceRequest;
use capstan::plugins::{PluginRuntime, SourcePlugin};
use capstan::sources::catalog::SourceCatalog;
use repo_server::RepoServer;
use sha2::{Digest, Sha256};

fn plugin_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins/helm4/mirror-getter");
    assert!(
        dir.join("plugin.wasm").is_file(),
        "{} is missing: run `make helm4-plugins`",
        dir.display()
    );
    dir
}

fn config(name: &str, path: PathBuf, allowed_hosts: Option<Vec<String>>) -> PluginConfig {
    PluginConfig {
        name: name.into(),
        world: PluginWorld::Source,
        path,
        limits: PluginLimits::default(),
        wasi: WasiGrants::default(),
        kinds: Vec::new(),
        allowed_hosts,
        storage_namespaces: Vec::new(),
        compat_helm: None,
    }
}

/// A chart archive `name-version.tgz` in `dir`, made with tar and gzip here.
fn chart_archive(dir: &Path, name: &str, version: &str) -> PathBuf {
    let path = dir.join(format!("{name}-{version}.tgz"));
    let file = std::fs::File::create(&path).unwrap();
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        file,
        flate2::Compression::default(),
    ));
    let files = [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"2.0\"\n"),
        ),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n".into(),
        ),
    ];
    for (file, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, format!("{name}/{file}"), text.as_bytes())
            .unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap();
    path
}

fn request(url: &str) -> SourceRequest {
    SourceRequest {
        kind: "mirror".into(),
        spec: serde_json::json!({ "url": url }).to_string(),
    }
}

fn credentials(username: &str, password: &str) -> Grants {
    let secret: BTreeMap<String, Vec<u8>> = [
        ("username".to_owned(), username.as_bytes().to_vec()),
        ("password".to_owned(), password.as_bytes().to_vec()),
    ]
    .into();
    Grants {
        credentials: Some(CredentialsGrant::new(
            ["username".to_owned(), "password".to_owned()],
            Some(&secret),
        )),
        ..Grants::default()
    }
}

struct Fixture {
    work: tempfile::TempDir,
    served: PathBuf,
    runtime: PluginRuntime,
}

impl Fixture {
    fn new() -> Fixture {
        let work = tempfile::tempdir().unwrap();
        let served = work.path().join("served/charts");
        std::fs::create_dir_all(&served).unwrap();
        let mut runtime = PluginRuntime::new(work.path().join("compiled"), None).unwrap();
        runtime.set_egress(egress_support::loopback_and_local_paths());
        Fixture {
            work,
            served,
            runtime,
        }
    }

    fn server(&self, auth: Option<(&str, &str)>) -> RepoServer {
        RepoServer::start(
            &self.served.join(".."),
            self.work
                .path()
                .join(format!("access-{}.log", auth.is_some())),
            auth,
        )
    }

    fn load(&mut self, config: &PluginConfig) -> Arc<SourcePlugin> {
        self.runtime.load(config).unwrap();
        Arc::new(self.runtime.source(&config.name).unwrap())
    }

    /// A copy of the example plugin folder with `edit` applied to its plugin.yaml.
    fn edited_plugin(&self, folder: &str, edit: impl Fn(String) -> String) -> PathBuf {
        let dir = self.work.path().join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let yaml = std::fs::read_to_string(plugin_dir().join("plugin.yaml")).unwrap();
        std::fs::write(dir.join("plugin.yaml"), edit(yaml)).unwrap();
        std::fs::copy(plugin_dir().join("plugin.wasm"), dir.join("plugin.wasm")).unwrap();
        dir
    }
}

#[tokio::test]
async fn a_helm4_getter_folder_serves_its_protocol_as_a_validated_source_kind() {
    let mut fixture = Fixture::new();
    let archive = chart_archive(&fixture.served, "web", "1.4.0");
    let bytes = std::fs::read(&archive).unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    let server = fixture.server(None);
    let plugin = fixture.load(&config("mirror", plugin_dir(), None));
    let loaded = fixture.runtime.plugins().next().unwrap();
    assert!(
        loaded
            .wit_version()
            .contains("getter/v1 extism/v1 (mirror-getter 0.1.0)"),
        "{}",
        loaded.wit_version()
    );

    let kinds = plugin.declared_kinds().await.unwrap();
    assert_eq!(kinds.len(), 1);
    assert_eq!(kinds[0].name, "mirror");
    let catalog =
        SourceCatalog::build(vec![(Arc::clone(&plugin), kinds)], &BTreeMap::new()).unwrap();
    let refused = catalog
        .route(
            "mirror",
            &serde_json::json!({"url": server.url("charts/web-1.4.0.tgz")}),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(refused.contains("at /url:"), "{refused}");
    assert!(refused.contains("/properties/url/pattern"), "{refused}");

    let url = format!("mirror://127.0.0.1:{}/charts/web-1.4.0.tgz", server.port);
    catalog
        .route("mirror", &serde_json::json!({ "url": url }))
        .map(|_| ())
        .unwrap();
    let revision = plugin
        .resolve(&request(&url), Grants::default())
        .await
        .unwrap();
    assert_eq!(revision.content_id, digest);
    assert_eq!(revision.id, format!("1.4.0@{digest}"));
    let artifact = plugin
        .fetch(&request(&url), &revision, Grants::default())
        .await
        .unwrap();
    assert_eq!(artifact.archive, bytes);
    assert_eq!(artifact.digest, digest);
    assert_eq!(artifact.metadata.name, "web");
    assert_eq!(artifact.metadata.version, "1.4.0");
    assert_eq!(artifact.metadata.app_version.as_deref(), Some("2.0"));
    // The fetch used the download of the resolve: one request reached the server.
    assert_eq!(
        server.requests("/charts/"),
        ["GET /charts/web-1.4.0.tgz 200 noauth"]
    );

    // A missing file: the plugin's own error message, naming the URL and status.
    let missing = format!("mirror://127.0.0.1:{}/charts/web-9.9.9.tgz", server.port);
    let error = plugin
        .resolve(&request(&missing), Grants::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("web-9.9.9.tgz answered HTTP 404"), "{error}");
    assert!(error.contains("plugin `mirror`"), "{error}");
}

#[tokio::test]
async fn credentials_from_the_secret_reach_the_getter_as_helms_username_and_password() {
    let mut fixture = Fixture::new();
    chart_archive(&fixture.served, "web", "1.0.0");
    let server = fixture.server(Some(("reader", "s3cret")));
    let plugin = fixture.load(&config("mirror", plugin_dir(), None));
    let url = format!("mirror://127.0.0.1:{}/charts/web-1.0.0.tgz", server.port);
    let error = plugin
        .resolve(&request(&url), Grants::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("answered HTTP 401"), "{error}");
    let error = plugin
        .resolve(&request(&url), credentials("reader", "wrong"))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("answered HTTP 401"), "{error}");
    assert!(
        !error.contains("wrong"),
        "the password is not echoed: {error}"
    );
    let revision = plugin
        .resolve(&request(&url), credentials("reader", "s3cret"))
        .await
        .unwrap();
    assert!(revision.id.starts_with("1.0.0@sha256:"), "{}", revision.id);
    assert_eq!(
        server.requests("/charts/"),
        [
            "GET /charts/web-1.0.0.tgz 401 noauth",
            "GET /charts/web-1.0.0.tgz 401 auth",
            "GET /charts/web-1.0.0.tgz 200 auth",
        ]
    );
}

#[tokio::test]
async fn http_reaches_only_the_allowed_hosts_and_helms_response_cap_holds() {
    let mut fixture = Fixture::new();
    let archive = chart_archive(&fixture.served, "web", "1.0.0");
    let size = std::fs::metadata(&archive).unwrap().len();
    let server = fixture.server(None);
    let url = format!("mirror://127.0.0.1:{}/charts/web-1.0.0.tgz", server.port);

    // The operator's list replaces the plugin's: 127.0.0.1 is no longer reachable.
    let narrowed = fixture.load(&config(
        "narrowed",
        plugin_dir(),
        Some(vec!["charts.example.com".into(), "*.corp.example".into()]),
    ));
    let error = narrowed
        .resolve(&request(&url), Grants::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!("host `127.0.0.1:{}` is not allowed", server.port)),
        "{error}"
    );
    assert!(
        error.contains("charts.example.com, *.corp.example"),
        "{error}"
    );

    // Helm's meaning of maxHttpResponseBytes: a body past it fails the call.
    let capped_dir = fixture.edited_plugin("capped", |yaml| {
        yaml.replace(
            "maxHttpResponseBytes: 52428800",
            &format!("maxHttpResponseBytes: {}", size - 1),
        )
    });
    let capped = fixture.load(&config("capped", capped_dir, None));
    let error = capped
        .resolve(&request(&url), Grants::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with(&format!(
            "trapped: http_request GET http://127.0.0.1:{}/charts/web-1.0.0.tgz failed: HTTP response body size exceeds limit: {} bytes",
            server.port,
            size - 1
        )),
        "{error}"
    );
    assert!(
        server.requests("/charts/").len() <= 1,
        "only the capped request reached the server"
    );
}

#[test]
fn folders_that_cannot_be_served_are_refused_naming_the_file_and_field() {
    let mut fixture = Fixture::new();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            fixture.edited_plugin("renderer", |y| y.replace("getter/v1", "postrenderer/v1")),
            // A post-renderer's `config` has no fields (Helm's `ConfigPostRendererV1`).
            "config: unknown field `protocols`",
        ),
        (
            fixture.edited_plugin("subprocess", |y| {
                y.replace("runtime: extism/v1", "runtime: subprocess")
            }),
            "runtime `subprocess` cannot be sandboxed",
        ),
        (
            fixture.edited_plugin("entry", |y| format!("{y}  entryFuncName: main_entry\n")),
            "exports no function `main_entry`",
        ),
        (
            fixture.edited_plugin("host-functions", |y| {
                format!("{y}  hostFunctions: [cache_get]\n")
            }),
            "host function `cache_get` is not provided",
        ),
        (
            fixture.edited_plugin("hosts", |y| y.replace("\"*.internal\"", "\"a/b\"")),
            "runtimeConfig.allowedHosts: `a/b`",
        ),
    ];
    // A component where Helm expects a core module.
    let component_dir = fixture.edited_plugin("component", |y| y);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugins/source-git.wasm"),
        component_dir.join("plugin.wasm"),
    )
    .unwrap();
    let mut cases = cases;
    cases.push((component_dir, "is not a core WebAssembly module"));
    for (dir, expected) in cases {
        let error = fixture
            .runtime
            .load(&config("bad", dir.clone(), None))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{expected:?} not in {error:?}");
        assert!(
            error.contains(&dir.display().to_string()),
            "names the file: {error}"
        );
    }
    let backend = PluginConfig {
        world: PluginWorld::Backend,
        ..config("as-backend", plugin_dir(), None)
    };
    let error = fixture
        .runtime
        .load(&backend)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("a Helm 4 `getter/v1` plugin must be configured with `world: source`, not `world: backend`"),
        "{error}"
    );
}

/// A plugin folder whose plugin.wasm is the module `wat`, with `runtime` appended to a
/// getter plugin.yaml's `runtimeConfig`.
fn hostile_plugin(work: &Path, name: &str, wat: &str, runtime: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("plugin.yaml"),
        format!(
            "apiVersion: v1\ntype: getter/v1\nname: {name}\nversion: 0.0.1\nruntime: extism/v1\nconfig:\n  protocols: [hostile]\nruntimeConfig:\n{runtime}"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("plugin.wasm"), wat::parse_str(wat).unwrap()).unwrap();
    dir
}

#[tokio::test]
async fn hostile_extism_plugins_stop_at_the_deadline_and_memory_limits_and_errors_name_them() {
    let mut fixture = Fixture::new();
    let work = fixture.work.path().to_owned();
    let hostile_request = SourceRequest {
        kind: "hostile".into(),
        spec: serde_json::json!({"url": "hostile://h/x.tgz"}).to_string(),
    };
    let cases = [
        (
            "spin",
            r#"(module (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32) (loop $l (br $l)) (i32.const 0)))"#,
            "  timeout: 300\n",
            "deadline of 300 ms exceeded",
        ),
        (
            "grow",
            r#"(module (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32)
                   (loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
                   unreachable))"#,
            "  memory: {maxPages: 64}\n",
            "memory limit of 4 MiB exceeded",
        ),
        (
            "arena",
            r#"(module (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
                 (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32)
                   (if (i64.eqz (call $alloc (i64.const 1073741824))) (then unreachable))
                   (i32.const 0)))"#,
            "  memory: {maxPages: 64}\n",
            "memory limit of 4 MiB exceeded",
        ),
        (
            "error",
            r#"(module
                 (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
                 (import "extism:host/env" "store_u64" (func $store (param i64 i64)))
                 (import "extism:host/env" "error_set" (func $error (param i64)))
                 (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32) (local $h i64)
                   (local.set $h (call $alloc (i64.const 8)))
                   (call $store (local.get $h) (i64.const 0x6365707320646162))
                   (call $error (local.get $h))
                   (i32.const 1)))"#,
            "",
            "failed in `get`: bad spec",
        ),
        (
            "silent",
            r#"(module (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32) (i32.const 7)))"#,
            "",
            "`helm_plugin_main` returned 7 without an error message",
        ),
        (
            "no-http",
            r#"(module
                 (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
                 (import "extism:host/env" "http_request" (func $http (param i64 i64) (result i64)))
                 (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32)
                   (drop (call $http (call $alloc (i64.const 2)) (i64.const 0)))
                   (i32.const 0)))"#,
            "",
            "http_request: request is not valid",
        ),
        (
            "unknown-import",
            r#"(module (import "extism:host/user" "kv_get" (func (param i64) (result i64)))
                 (memory (export "memory") 1)
                 (func (export "helm_plugin_main") (result i32) (i32.const 0)))"#,
            "",
            "",
        ),
    ];
    for (name, wat, runtime, expected) in cases {
        let dir = hostile_plugin(&work, name, wat, runtime);
        if name == "unknown-import" {
            let error = fixture
                .runtime
                .load(&config(name, dir, None))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("cannot be linked") && error.contains("extism:host/user"),
                "{error}"
            );
            continue;
        }
        let plugin = fixture.load(&config(name, dir, None));
        let error = plugin
            .resolve(&hostile_request, Grants::default())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(expected),
            "{name}: {expected:?} not in {error:?}"
        );
    }
    // The runtime is still usable after every failure above.
    let ok = fixture.load(&config("mirror", plugin_dir(), None));
    assert_eq!(ok.declared_kinds().await.unwrap()[0].name, "mirror");
}
