//! Give the component a larger stack than wasm-ld's 1 MiB default: chart templates nest
//! `include` calls deeply, and the template executor recurses per nesting level.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        // 16 MiB; memory limits still bound the whole instance.
        println!("cargo::rustc-link-arg=-zstack-size=16777216");
    }
}
