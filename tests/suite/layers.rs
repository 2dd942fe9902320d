//! Layers point one way (DESIGN section 1): the domain modules never import
//! the terminal libraries, and `policy/` does no I/O and no async.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), text));
        }
    }
}

fn files(module: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(module),
        &mut out,
    );
    assert!(!out.is_empty(), "src/{module} has no sources");
    out
}

#[test]
fn domain_modules_never_import_the_terminal() {
    for module in ["policy", "tools", "model", "session", "agent", "config"] {
        for (path, text) in files(module) {
            for word in ["ratatui", "crossterm"] {
                assert!(!text.contains(word), "{path} mentions {word}");
            }
            assert!(
                !text.contains("crate::frontend"),
                "{path} imports a front end"
            );
        }
    }
}

#[test]
fn policy_is_pure() {
    for (path, text) in files("policy") {
        for word in [
            "std::fs",
            "std::io",
            "tokio",
            "async ",
            "Instant",
            "SystemTime",
            "std::env",
            "std::process",
        ] {
            assert!(!text.contains(word), "{path} uses {word}");
        }
        for layer in [
            "crate::tools",
            "crate::agent",
            "crate::model",
            "crate::session",
            "crate::config",
        ] {
            assert!(!text.contains(layer), "{path} imports {layer}");
        }
    }
}
