//! Saved rules through the built binary: `policy check` and `rules check`
//! with a user's `[[rules]]`, the refusals at load (a project's allow rule,
//! an example that disagrees), and a `-p` turn against a loopback model
//! service whose bash call a rule allows in manual mode, said in its record.

use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

use super::sandbox::{Setup, bash};
use crate::support::llm::text;
use crate::support::stream::of_type;

const RULES: &str = r#"
[[rules]]
tool = "bash"
command = ["cargo", "test"]
decision = "allow"
match = ["cargo test -p x"]
not_match = ["cargo test; rm -rf x", "cargo testx"]

[[rules]]
tool = "bash"
command = ["cargo", "fmt"]
decision = "allow"

[[rules]]
tool = "bash"
command = ["rm"]
decision = "deny"
reason = "deleting is done by hand"
"#;

struct World {
    home: TempDir,
    project: TempDir,
}

fn world(user: &str) -> World {
    let w = World {
        home: TempDir::new().unwrap(),
        project: TempDir::new().unwrap(),
    };
    std::fs::write(w.home.path().join("config.toml"), user).unwrap();
    w
}

fn mino(w: &World, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(args)
        .arg("--cd")
        .arg(w.project.path())
        .env("MINO_HOME", w.home.path())
        .env_remove("AGENT_YOLO")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn decision(w: &World, mode: &str, command: &str) -> Value {
    let (code, out, err) = mino(
        w,
        &[
            "policy",
            "check",
            "--mode",
            mode,
            "--tool",
            "bash",
            "--command",
            command,
        ],
    );
    assert_eq!(code, 0, "{command}: {err}");
    let mut v: Value = serde_json::from_str(&out).unwrap();
    v.as_object_mut().unwrap().remove("gate");
    v
}

#[test]
fn a_command_rule_allows_its_command_and_leaves_the_rest_as_it_was() {
    let ruled = world(RULES);
    let plain = world("");
    let v = decision(&ruled, "manual", "cargo test -p x");
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["rule"], "rule 1 (cargo test)");
    for command in [
        "cargo test; rm -rf x",
        "cargo test && curl x | sh",
        "cargo test $(id)",
        "cargo testx",
        "/tmp/cargo test",
    ] {
        for mode in ["manual", "auto"] {
            let with = decision(&ruled, mode, command);
            if command.contains("rm -rf") {
                assert_eq!(with["code"], "MINO_DENY_RULE", "{command}: {with}");
                continue;
            }
            assert_eq!(with, decision(&plain, mode, command), "{mode}: {command}");
        }
    }
    let both = decision(&ruled, "manual", "cargo fmt && cargo test");
    assert_eq!(both["rule"], "rules 1, 2 (cargo test; cargo fmt)", "{both}");
    let denied = decision(&ruled, "bypass", "ls && rm -rf target");
    assert_eq!(denied["code"], "MINO_DENY_RULE", "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .unwrap()
            .contains("deleting is done by hand")
    );
}

#[test]
fn rules_check_names_the_rule_or_the_example_at_fault() {
    let w = world(RULES);
    let (code, out, _) = mino(&w, &["rules", "check"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rules"].as_array().unwrap().len(), 3);
    let (_, out, _) = mino(
        &w,
        &[
            "rules",
            "check",
            "--tool",
            "bash",
            "--command",
            "cargo test",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["rule"].as_u64(), v["decision"].as_str()),
        (Some(1), Some("allow"))
    );

    let bad = world(&format!(
        "{RULES}\n[[rules]]\ntool = \"bash\"\ncommand = [\"npm\", \"run\"]\ndecision = \"allow\"\nnot_match = [\"npm run build\"]\n"
    ));
    let (code, _, err) = mino(&bad, &["rules", "check"]);
    assert_eq!(code, 2);
    assert!(err.contains("rules[3].not_match[0]"), "{err}");
    assert!(
        err.contains("\"npm run build\" matches rule 4 (npm run)"),
        "{err}"
    );
    // Nothing else starts either.
    let (code, _, err) = mino(
        &bad,
        &[
            "policy",
            "check",
            "--mode",
            "manual",
            "--tool",
            "read_file",
            "--path",
            "x",
        ],
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_project_may_ask_and_deny_but_never_allow() {
    let w = world("");
    std::fs::create_dir(w.project.path().join(".mino")).unwrap();
    let project_file = w.project.path().join(".mino/config.toml");
    std::fs::write(
        &project_file,
        "[[rules]]\ntool = \"bash\"\ncommand = [\"make\"]\ndecision = \"allow\"\n",
    )
    .unwrap();
    let (code, _, err) = mino(&w, &["rules", "check"]);
    assert_eq!(code, 2);
    assert!(err.contains(".mino/config.toml:4"), "{err}");
    assert!(
        err.contains("rules[0].decision = \"allow\" would loosen"),
        "{err}"
    );
    std::fs::write(
        &project_file,
        "[[rules]]\ntool = \"bash\"\ncommand = [\"make\"]\ndecision = \"ask\"\n",
    )
    .unwrap();
    let v = decision(&w, "bypass", "make all");
    assert_eq!(v["decision"], "ask", "{v}");
}

#[tokio::test]
async fn a_rule_allows_a_bash_call_in_manual_and_its_record_says_so() {
    let tail = "[sandbox]\nenabled = false\n[[rules]]\ntool = \"bash\"\ncommand = [\"echo\"]\ndecision = \"allow\"\n";
    let b = Setup::new(vec![bash("echo ruled && echo twice"), text("done")], tail).await;
    let mut command = b.command(&["-p", "go", "--output-format", "stream-json"]);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let events = crate::support::stream::records(&out.stdout);
    let decisions = of_type(&events, "decision");
    assert_eq!(decisions.len(), 1, "{events:?}");
    assert_eq!(decisions[0]["decision"], "allow");
    assert_eq!(decisions[0]["rule"], "rule 1 (echo)");
    let results = of_type(&events, "tool_result");
    assert!(
        results[0]["output"]
            .as_str()
            .unwrap()
            .contains("ruled\ntwice"),
        "{results:?}"
    );

    // The same turn without the rule: nobody can answer -p.
    let b = b
        .with_replies(
            vec![bash("echo ruled && echo twice"), text("done")],
            "[sandbox]\nenabled = false\n",
        )
        .await;
    let mut command = b.command(&["-p", "go", "--output-format", "stream-json"]);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let events = crate::support::stream::records(&out.stdout);
    assert_eq!(
        of_type(&events, "decision")[0]["code"],
        "MINO_DENY_NOBODY_TO_ASK"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answer_is_saved_as_a_rule_after_a_yes() {
    use super::line_mode::Line;
    use crate::support::llm::tool;
    use crate::support::world::World;
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "write_file",
                serde_json::json!({"path": "x.txt", "content": "x"}),
            ),
            text("written"),
        ],
        "",
    )
    .await;
    let config = world.home.path().join("config.toml");
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("write it");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("a");
    pty.expect("written");
    let before = std::fs::read_to_string(&config).unwrap();

    pty.send_line("/permissions save 2");
    pty.expect("there is 1 remembered answer; give 1");
    pty.send_line("/permissions save 1");
    let shown = pty.expect("? [y/N]").replace("\r\n", "\n");
    assert!(
        shown.contains("[[rules]]\ntool = \"write_file\"\ndecision = \"allow\""),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("Append this rule to {}", config.display())),
        "{shown}"
    );
    pty.send_line("n");
    pty.expect("Nothing was saved");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);

    pty.send_line("/permissions save 1");
    pty.expect("? [y/N]");
    pty.send_line("y");
    pty.expect("Saved the rule to");
    pty.send_line("/quit");
    pty.wait();
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.starts_with(&before), "{after}");
    assert!(
        after.ends_with("[[rules]]\ntool = \"write_file\"\ndecision = \"allow\"\n"),
        "{after}"
    );
    // The next start reads it as rule 1.
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args([
            "rules",
            "check",
            "--tool",
            "write_file",
            "--path",
            "y.txt",
            "--cd",
            &project,
        ])
        .env("MINO_HOME", &home)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["rule"].as_u64(), v["decision"].as_str()),
        (Some(1), Some("allow")),
        "{v}"
    );
}

#[test]
fn a_deny_rule_for_a_host_holds_for_its_other_spellings_and_hidden_commands() {
    let w = world(
        "[[rules]]\ntool = \"fetch_content\"\nurl = \"https://evil.example/\"\ndecision = \"deny\"\n\n[[rules]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"deny\"\n",
    );
    for url in [
        "https://evil.example/x",
        "https://EVIL.example./x",
        "https://a@evil.example:443/x",
    ] {
        let (code, out, err) = mino(
            &w,
            &[
                "policy",
                "check",
                "--mode",
                "bypass",
                "--tool",
                "fetch_content",
                "--url",
                url,
            ],
        );
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["code"], "MINO_DENY_RULE", "{url}: {v}");
    }
    for command in [
        "sh -c 'git push'",
        "/usr/bin/git push",
        "FOO=1 env git push -f",
        "echo $(git push)",
    ] {
        assert_eq!(
            decision(&w, "bypass", command)["code"],
            "MINO_DENY_RULE",
            "{command}"
        );
    }
}
