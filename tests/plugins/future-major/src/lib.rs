//! Test component exporting `capstan:plugin/source@1.0.0`, a contract major version the
//! host does not serve; the host must refuse it at load, naming both versions.

wit_bindgen::generate!({ world: "source-plugin", path: "wit" });

struct Future;

impl exports::capstan::plugin::source::Guest for Future {
    fn resolve(spec: String) -> String {
        spec
    }
}

export!(Future);
