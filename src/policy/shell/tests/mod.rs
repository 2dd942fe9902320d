//! Table tests of the gate: the fixtures every table shares, and the
//! checks of the code table itself; the tables are in the files beside.

use super::*;
use crate::policy::ProtectedPaths;

mod bypasses;
mod guard;
mod in_decide;
mod levels;
mod properties;
mod repository;
mod undo;

const GIT: &str = "/usr/bin/git";
const DIGEST: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn rules() -> Rules {
    let mut rules = Rules::new(ProtectedPaths::builtin());
    for path in [
        GIT,
        "/usr/bin/ls",
        "/usr/bin/cat",
        "/usr/bin/sed",
        "/usr/bin/find",
        "/usr/bin/env",
        "/usr/bin/grep",
        "C:\\Windows\\git.exe",
    ] {
        rules.trusted.push(Trusted {
            path: path.into(),
            sha256: None,
        });
    }
    rules.mino_home = Some("/home/u/.mino".into());
    rules.home = Some("/home/u".into());
    rules.project_root = Some("/home/u/project".into());
    rules
}

/// A repository whose own configuration is inert.
fn clean_repository() -> Option<RepositoryEvidence> {
    Some(RepositoryEvidence::Read {
        config: Vec::new(),
        submodules: false,
        index_hook: false,
    })
}

fn good(path: &str) -> Evidence {
    Evidence {
        path: path.into(),
        file: FileEvidence::Regular {
            mode: 0o100755,
            owner: 0,
            user: 1000,
            sha256: Some(DIGEST.into()),
        },
        repository: clean_repository(),
    }
}

/// Classifies with good evidence for whatever the gate asks about.
fn check(shell: &str, command: &str) -> Verdict {
    let rules = rules();
    let evidence = executable_to_examine(shell, command, &rules).map(|p| good(&p));
    classify(shell, command, &rules, evidence.as_ref())
}

fn code(shell: &str, command: &str) -> &'static str {
    check(shell, command).code.unwrap_or("ALLOW")
}

fn table(shell: &str, rows: &[(&str, &str)]) {
    for (command, want) in rows {
        assert_eq!(code(shell, command), *want, "{shell}: {command:?}");
    }
}

#[test]
fn every_code_is_in_the_table_once() {
    let mut names: Vec<&str> = CODES.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CODES.len());
    assert!(CODES.windows(2).all(|w| w[0].level <= w[1].level));
}

#[test]
fn the_readme_lists_every_code() {
    let readme = include_str!("../../../../README.md");
    for code in CODES {
        let row = format!("| `{}` | {} |", code.name, code.outcome.as_str());
        assert!(
            readme.contains(&row),
            "README lacks the row for {}",
            code.name
        );
    }
}
