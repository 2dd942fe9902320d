//! Build script: the release binary's code layout. The functions a start,
//! a streamed answer, a resume and the demo run (`build/startup.order`,
//! written by `scripts/link-order`) are linked first and together. The
//! kernel maps a program's code in 64 KiB runs around each page touched, so
//! the same code spread over the whole binary was most of an idle mino's
//! memory (RSS after start 15.4 against 9.5 MiB laid out).
//!
//! Only for the release build of the `mino` binary for x86_64 Linux linked
//! by Rust's own LLD (the default there since Rust 1.90, when the toolchain
//! ships it): the option is LLD's. A name the binary no longer has is
//! skipped, so a stale list costs the layout, never the build.
//! `MINO_LINK_ORDER=0` leaves the layout to the linker.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build/startup.order");
    println!("cargo::rerun-if-env-changed=MINO_LINK_ORDER");
    let var = |key: &str| env::var(key).unwrap_or_default();
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("build/startup.order");
    let wanted = var("MINO_LINK_ORDER") != "0"
        && var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && order.is_file();
    if wanted && rust_lld_links() {
        println!(
            "cargo::rustc-link-arg-bin=mino=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=mino=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the link is Rust's default one through its own LLD: no linker
/// of the person's choosing, and a toolchain that ships LLD (a toolchain
/// built without it, as some distributions do, links with the system's
/// linker, which may not know the option).
fn rust_lld_links() -> bool {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let chosen = env::var_os("RUSTC_LINKER").is_some()
        || flags.contains("linker")
        || flags.contains("fuse-ld")
        || flags.contains("link-self-contained");
    if chosen {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).args(["--print", "sysroot"]).output() else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&out.stdout);
    Path::new(sysroot.trim())
        .join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld/ld.lld")
        .is_file()
}
