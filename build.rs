//! Link options of the `toolgate` binary.
//!
//! On Linux with glibc the binary is linked at a fixed address (`-no-pie`).
//! A hook is a new process per tool call, and a position-independent
//! executable makes the dynamic loader apply some 17 000 relocations
//! (vtables and tables of pointers, most of them in dependencies) and copy
//! the pages they touch on every start: about a third of the start-up of a
//! hook that answers from a precompiled image. The libraries, the heap and
//! the stack are still placed at random addresses; only the binary's own
//! code and data are not. Set `TOOLGATE_PIE=1` while building to link a
//! position-independent executable anyway. A static build
//! (`-C target-feature=+crt-static`) is left to rustc, which links it as a
//! static position-independent executable: no dynamic loader at all.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLGATE_PIE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let pie = var("TOOLGATE_PIE");
    // A static build (`-C target-feature=+crt-static`) has no dynamic
    // loader to spare: rustc links it as a static PIE, which `-no-pie`
    // would break.
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && pie != "1"
        && !static_crt
    {
        println!("cargo:rustc-link-arg-bin=toolgate=-no-pie");
    }
}
