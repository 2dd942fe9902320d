//! The release link order (`build/startup.order`, see `build.rs`) was made
//! for this very Cargo.toml and Cargo.lock: its names carry hashes of the
//! crates' metadata, and a change of either moves nearly all of them, which
//! would leave the release binary's code spread out again without a word.

use sha2::{Digest, Sha256};
use std::path::Path;

#[test]
fn the_link_order_was_made_for_this_manifest_and_lock_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let order = std::fs::read_to_string(root.join("build/startup.order")).unwrap();
    for name in ["Cargo.toml", "Cargo.lock"] {
        let bytes = std::fs::read(root.join(name)).unwrap();
        let line = format!("# {name} sha256 {}", hex::encode(Sha256::digest(&bytes)));
        assert!(
            order.lines().any(|l| l == line),
            "build/startup.order was made for another {name}: run scripts/link-order \
             (it needs valgrind) and commit the list it writes"
        );
    }
    let names: Vec<&str> = order
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(names.len() > 1000, "{} names", names.len());
    assert!(
        names.iter().any(|n| n.contains("4mino4main")),
        "no mino::main"
    );
    for name in names {
        assert!(!name.contains(char::is_whitespace), "{name:?}");
    }
}
