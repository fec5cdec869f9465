//! Cost of one plugin call as the operator makes it: a fresh `Store` and instance from the
//! plugin's `InstancePre`, one trivial export call, the store dropped. The reference in the
//! same run is the bare `Store` + WASI context creation (no instance), so the ratio shows
//! what instantiation and the call add. Also measures loading a component from the
//! compiled cache. Needs `make plugins`.

use std::path::Path;

use capstan::capabilities::Grants;
use capstan::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};
use capstan::plugins::PluginRuntime;
use capstan::plugins::bindings::source::exports::capstan::plugin::source::{
    GitRef, GitSource, SourceRequest, SourceSpec,
};
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
        spec: SourceSpec::Git(GitSource {
            url: "ok".into(),
            reference: GitRef::Branch("main".into()),
            path: String::new(),
        }),
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
    group.finish();

    let mut group = c.benchmark_group("plugin_load");
    let source = config("source-git.wasm");
    group.bench_function("from_compiled_cache", |b| {
        b.iter(|| {
            let mut fresh = PluginRuntime::new(cache.path(), None).expect("runtime");
            std::hint::black_box(fresh.load(&source).expect("load"));
        })
    });
    group.finish();
}

criterion_group!(benches, plugin_call);
criterion_main!(benches);
