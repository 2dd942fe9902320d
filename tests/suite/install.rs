//! What a packaged mino prints about itself: the short and long version,
//! completion scripts a real bash loads, and the manual page, all from the
//! built binary.

use std::process::{Command, Output};

fn mino(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(args)
        .env("MINO_HOME", home.path().join("never-made"))
        .output()
        .unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = mino(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_short_version_is_one_line_and_the_long_one_names_each_part() {
    let short = format!("mino {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(stdout(&["--version"]), short);
    assert_eq!(stdout(&["-V"]), short);
    assert_eq!(stdout(&["version"]), short);
    let long = stdout(&["-vV"]);
    assert_eq!(long, stdout(&["version", "--verbose"]));
    assert!(long.starts_with(&short), "{long}");
    let keys: Vec<&str> = long
        .lines()
        .skip(1)
        .map(|l| l.split_once(": ").unwrap().0)
        .collect();
    assert_eq!(
        keys,
        ["wires", "mcp", "acp", "sandbox", "build", "features"]
    );
    assert!(long.contains("wires: openai-responses, openai-chat, anthropic, scripted"));
    assert!(
        long.contains("mcp: 2026-07-28 (server/discover), else 2025-11-25"),
        "{long}"
    );
    // -v alone says what it needs.
    let out = mino(&["-v"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--version"));
}

#[test]
fn bash_loads_the_completions_and_completes_a_subcommand() {
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), stdout(&["completions", "bash"])).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1" && complete -p mino && COMP_WORDS=(mino comp) && COMP_CWORD=1 && _mino mino comp mino && echo "reply: ${COMPREPLY[*]}""#,
        )
        .arg("bash")
        .arg(script.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-F _mino mino"), "{text}");
    assert!(text.contains("reply: completions"), "{text}");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        assert!(
            stdout(&["completions", shell]).contains("completions"),
            "{shell}"
        );
    }
    let out = mino(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash, elvish, fish, powershell, zsh"));
}

#[test]
fn the_manual_page_lists_every_subcommand_and_flag() {
    let page = stdout(&["man"]);
    assert!(
        page.contains(".TH mino 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    for word in [
        "acp",
        "policy",
        "sandbox",
        "gate",
        "rewind",
        "eval",
        "version",
        "completions",
        "man",
    ] {
        assert!(page.contains(&format!("mino\\-{word}(1)")), "{word}");
    }
    // Each page it names exists with --dir.
    let dir = tempfile::tempdir().unwrap();
    stdout(&["man", "--dir", dir.path().to_str().unwrap()]);
    for page in [
        "mino.1",
        "mino-eval.1",
        "mino-policy-check.1",
        "mino-completions.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.contains(".TH mino"), "{page}");
    }
    let out = mino(&["man", "--dir", "/proc/version/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("man --dir /proc/version/x"));
    for flag in ["\\-\\-demo", "\\-\\-print", "\\-\\-mode", "\\-\\-resume"] {
        assert!(page.contains(flag), "{flag}");
    }
}
