//! Link the `capstan` executable position-dependent on x86-64 Linux (`-no-pie`).
//!
//! A position-independent executable is relocated by the dynamic loader at every start:
//! for this binary 95,682 relative relocations over 1.2 MB of `.data.rel.ro` and the GOT,
//! 3.85 M cycles of `ld.so` time (`LD_DEBUG=statistics`), against 0.43 M linked at a fixed
//! address — 1.3–1.9 ms of every `capstan template` run (docs/rendering.md). That start-up
//! cost is paid per command, and `capstan template` is a command users run in loops. Go
//! links its executables the same way on amd64 (Helm and the Flux controllers among them);
//! what is given up is the randomised base of the executable's own image (libraries, heap,
//! stacks, and every plugin's memory stay randomised). Only the `capstan` binary is linked
//! so; tests and benches keep the default.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && arch == "x86_64" && env == "gnu" {
        println!("cargo::rustc-link-arg-bin=capstan=-no-pie");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
