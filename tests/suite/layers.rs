//! Layers point one way (DESIGN section 1): no module imports one above it,
//! `model/` never imports `tools/`, the domain modules never import the
//! terminal libraries, and `policy/` does no I/O and no async.

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
    let out = files_if_any(module);
    assert!(!out.is_empty(), "src/{module} has no sources");
    out
}

/// The sources of `src/MODULE/` or `src/MODULE.rs`; none when it does not
/// exist (yet).
fn files_if_any(module: &str) -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let dir = src.join(module);
    let file = src.join(format!("{module}.rs"));
    if dir.is_dir() {
        sources(&dir, &mut out);
    }
    if file.is_file() {
        out.push((
            file.display().to_string(),
            std::fs::read_to_string(&file).unwrap(),
        ));
    }
    out
}

/// The crate modules a source names: `crate::NAME` and `crate::{NAME, ..}`.
fn imported(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for part in group.split(',') {
                let name = part.trim().split("::").next().unwrap_or("");
                out.push(name.to_string());
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

/// DESIGN section 1, bottom to top: a module may import only modules of its
/// own rank or below. `policy` imports nothing of the crate (see
/// `policy_is_pure`); `config` reads the mode names and protected patterns
/// from it to validate settings.
///
/// DESIGN's picture leaves some modules out; they rank where what they
/// import puts them: the leaves beside `policy` (`secrets`, `small_file`,
/// `process_guard`), `prompt_history` beside `config` (it reads `home`),
/// `checkpoint` beside `tools` (it reads files as they do), and `eval`
/// beside the front ends (it drives the agent as they do).
const RANKS: &[(&str, u8)] = &[
    ("policy", 0),
    ("home", 0),
    ("controls", 0),
    ("secrets", 0),
    ("small_file", 0),
    ("process_guard", 0),
    ("config", 1),
    ("logging", 1),
    ("sandbox", 1),
    ("prompt_history", 1),
    ("model", 2),
    ("tools", 2),
    ("lsp", 2),
    ("mcp", 2),
    ("session", 2),
    ("checkpoint", 2),
    ("agent", 3),
    ("frontend", 4),
    ("demo", 4),
    ("eval", 4),
];

#[test]
fn every_module_of_the_crate_has_a_rank() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or(l.trim().strip_prefix("mod "))
        })
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert!(modules.len() > 15, "{modules:?}");
    for module in modules {
        assert!(rank(module).is_some(), "src/{module} has no rank in RANKS");
    }
}

/// Walls between modules of one rank: the model services never depend on
/// the tools, MCP or sessions (the judge and asked agents would make a
/// cycle); sessions store history and never run tools.
const SIDEWAYS: &[(&str, &[&str])] = &[
    ("model", &["tools", "mcp", "session"]),
    ("session", &["tools", "mcp"]),
];

fn rank(module: &str) -> Option<u8> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

#[test]
fn no_module_imports_one_above_it() {
    let mut checked = 0;
    for (module, own) in RANKS {
        for (path, text) in files_if_any(module) {
            checked += 1;
            for name in imported(&text) {
                if let Some(theirs) = rank(&name) {
                    assert!(
                        theirs <= *own,
                        "{path} imports crate::{name}, a layer above {module}"
                    );
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} files checked");
}

#[test]
fn no_module_imports_across_a_wall_of_its_layer() {
    for (module, walls) in SIDEWAYS {
        for (path, text) in files(module) {
            for name in imported(&text) {
                assert!(
                    !walls.contains(&name.as_str()),
                    "{path} imports crate::{name}, across the wall beside {module}"
                );
            }
        }
    }
}

#[test]
fn the_import_reader_sees_both_forms() {
    let text = "use crate::tools::Tool;\nuse crate::{agent, model::Item};\n";
    assert_eq!(imported(text), ["tools", "agent", "model"]);
}

#[test]
fn domain_modules_never_import_the_terminal() {
    for module in [
        "policy", "tools", "model", "session", "agent", "config", "sandbox",
    ] {
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
