//! The bypass guard through `mino policy check --mode bypass`, as a live
//! call meets it: what no checkpoint can undo asks (every push but a plain
//! fast-forward one, unreadable commands that may reach a destructive
//! program, the project root or its `.git` as a whole), and ordinary work
//! runs without a question.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

struct Setup {
    home: TempDir,
    project: TempDir,
}

fn setup() -> Setup {
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::write(project.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    Setup { home, project }
}

/// The decision on `command` in bypass mode, and its reason.
fn decide(s: &Setup, command: &str) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["policy", "check", "--mode", "bypass", "--tool", "bash"])
        .args(["--command", command])
        .arg("--cd")
        .arg(s.project.path())
        .env("MINO_HOME", s.home.path())
        .env_remove("AGENT_YOLO")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{command:?}: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["decision"].as_str().unwrap().to_string(), v.to_string())
}

fn expect(s: &Setup, want: &str, commands: &[String]) {
    let wrong: Vec<String> = commands
        .iter()
        .filter_map(|c| {
            let (decision, all) = decide(s, c);
            (decision != want).then(|| format!("{c:?}: {all}"))
        })
        .collect();
    assert!(wrong.is_empty(), "not {want}:\n{}", wrong.join("\n"));
}

fn owned(commands: &[&str]) -> Vec<String> {
    commands.iter().map(|c| c.to_string()).collect()
}

#[test]
fn plain_pushes_and_ordinary_work_run_in_bypass() {
    let s = setup();
    expect(
        &s,
        "allow",
        &owned(&[
            "git push",
            "git push origin main",
            "git push -u origin feature",
            "git push origin HEAD:main",
            "echo $HOME",
            "for f in *.rs; do wc -l $f; done",
            "rm -rf build",
            "find . -name '*.o' -delete",
        ]),
    );
}

#[test]
fn pushes_no_checkpoint_undoes_ask_in_bypass() {
    let s = setup();
    expect(
        &s,
        "ask",
        &owned(&[
            "git push --force-w origin main",
            "git push --forc origin main",
            "git push --fo origin main",
            "git push -uf origin main",
            "git push origin +HEAD:main",
            "git push origin +x",
            "git push origin :release",
            "git push -d origin release",
            "git push --del origin release",
            "git push --mirr origin",
            "git push --all -f",
            "git push --tags --force",
            "git push --force-with-lease origin main",
            "git push --force-if-includes origin main",
            "git push --prune origin",
            "git push 'origin' '--force'",
            "git push \"-f\" origin main",
            "git push --force= origin main",
            "\\git push -f",
            "/usr/bin/git push -f",
            "command git push -f",
            "exec git push -f",
            "nice git push -f",
            "timeout 5 git push -f",
            "git -c alias.p=\"push --force\" p",
            "git -c remote.origin.mirror=true push",
            "git --config-env=remote.origin.push=X push",
            "git p origin main",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.mirror GIT_CONFIG_VALUE_0=true git push",
            "env GIT_CONFIG_COUNT=1 git push",
            "sh -c 'git push -f origin main'",
            "bash -c 'git push origin :release'",
        ]),
    );
}

#[test]
fn unreadable_commands_that_may_destroy_ask_in_bypass() {
    let s = setup();
    expect(
        &s,
        "ask",
        &owned(&[
            "x=~; rm -rf \"$x\"",
            "rm -rf \"${HOME:?}\"",
            "$X -rf build",
            "eval \"$CMD\"",
            "ls | xargs rm",
            "find . -exec rm {} +",
            "for f in *; do rm -rf $f; done",
            "f() { rm -rf \"$1\"; }; f .",
            "bash <<EOF\nrm -rf build\nEOF",
            "dd if=/dev/zero of=//dev/sda",
            "echo x > /dev/vda",
            "mke2fs /dev/sdb",
            "chmod --rec 000 ~",
        ]),
    );
}

#[test]
fn the_project_root_and_its_git_as_a_whole_ask_in_bypass() {
    let s = setup();
    let name = s
        .project
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let mut commands = owned(&[
        "rm -rf .",
        "rm -rf ./",
        "rm -rf \"$PWD\"",
        "rm -rf .git",
        "rm -rf .git/*",
        "rm -rf .g?t",
        "find . -delete",
        ": > .git/HEAD",
    ]);
    commands.push(format!("rm -rf ../{name}"));
    commands.push(format!("rm --r --forc ../{name}"));
    commands.push(format!("rm -rf {}", s.project.path().display()));
    expect(&s, "ask", &commands);
    // The question says why, with the gate's code.
    let (_, all) = decide(&s, "git push --mirr origin");
    assert!(all.contains("--mirror"), "{all}");
}
