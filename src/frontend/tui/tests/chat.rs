//! The chat's entries: control characters made visible, a resumed
//! session's conversation and a new session's clean chat, a diff left by an
//! accepted edit (collapsed until Ctrl+O), and an asked agent's turn as one
//! nested block.

use insta::assert_snapshot;
use ratatui::style::Color;

use crate::agent::AgentEvent;
use crate::model::ResultStatus;
use crate::policy::{ConsentAnswer, Mode, Shown};
use crate::tools::Field;

use super::*;

#[test]
fn control_characters_are_visible() {
    let mut app = app();
    start_turn(&mut app, "hi", 0);
    agent(
        &mut app,
        AgentEvent::AssistantDelta("clear \u{1b}[2J now\u{7}".into()),
    );
    agent(
        &mut app,
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "bash".into(),
            status: ResultStatus::Completed,
            output: "\u{1b}]52;c;AAAA\u{7}".into(),
        },
    );
    let text = shot(&app, 80, 20);
    assert!(text.contains("clear ␛[2J now␇"), "{text}");
    assert!(text.contains("␛]52;c;AAAA␇"), "{text}");
    assert!(!text.contains('\u{1b}'));
}

#[test]
fn a_resumed_session_shows_its_earlier_conversation() {
    use crate::model::{Item, ToolCall};
    let mut app = app();
    agent(
        &mut app,
        AgentEvent::History(std::sync::Arc::new(vec![
            Item::Summary {
                text: "Earlier we fixed the build.".into(),
            },
            Item::User {
                text: "Summarize notes.md".into(),
            },
            Item::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"notes.md\"}".into(),
                }],
            },
            Item::ToolResult {
                call_id: "c1".into(),
                status: ResultStatus::Completed,
                output: "# Relase notes".into(),
            },
            Item::Assistant {
                text: "It lists the **release** changes.".into(),
                tool_calls: Vec::new(),
            },
        ])),
    );
    let text = shot(&app, 80, 24);
    assert!(text.contains("lossy context"), "{text}");
    assert!(text.contains("> Summarize notes.md"), "{text}");
    assert!(text.contains("read_file notes.md"), "{text}");
    assert!(text.contains("# Relase notes"), "{text}");
    assert!(text.contains("It lists the release changes."), "{text}");
    assert_eq!(
        app.last_answer.as_deref(),
        Some("It lists the **release** changes.")
    );
}

#[test]
fn a_resumed_response_of_ten_thousand_calls_shows_its_refusals_once() {
    use crate::model::{Item, ToolCall};
    let calls: Vec<ToolCall> = (0..10_000)
        .map(|i| ToolCall {
            id: format!("c{i}"),
            name: "read_file".into(),
            arguments: if i < 64 {
                format!("{{\"path\":\"notes/{i}.md\"}}")
            } else {
                String::new()
            },
        })
        .collect();
    let result = |i: usize, output: String| Item::ToolResult {
        call_id: format!("c{i}"),
        status: if i < 64 {
            ResultStatus::Completed
        } else {
            ResultStatus::NotRun
        },
        output,
    };
    let mut items = vec![
        Item::User { text: "go".into() },
        Item::Assistant {
            text: String::new(),
            tool_calls: calls,
        },
    ];
    let refusal = crate::agent::turn::past_bound_refusal(64);
    items.extend((64..10_000).map(|i| result(i, refusal.clone())));
    items.extend((0..64).map(|i| result(i, format!("note {i}"))));
    let mut app = app();
    agent(&mut app, AgentEvent::History(std::sync::Arc::new(items)));
    let text = shot(&app, 100, 16);
    // Only the last 200 items are shown: 136 refusals, as one entry named
    // by its call, before the calls kept.
    app.transcript.to_top(100, 16);
    let top = shot(&app, 100, 16);
    assert!(
        top.contains("read_file (136 calls, each with this result)"),
        "{top}"
    );
    assert_eq!(top.matches("Refused:").count(), 1, "{top}");
    assert!(top.contains("read_file notes/0.md"), "{top}");
    assert!(text.contains("note 63"), "{text}");
}

#[test]
fn clear_clears_the_chat_and_keeps_its_notice() {
    let mut app = app();
    start_turn(&mut app, "before the clear", 0);
    turn_end(&mut app, crate::agent::TurnStop::Completed);
    agent(&mut app, AgentEvent::Cleared);
    agent(
        &mut app,
        AgentEvent::Notice("History cleared. Session a and its mode (manual) are kept.".into()),
    );
    let text = shot(&app, 80, 20);
    assert!(!text.contains("before the clear"), "{text}");
    assert!(text.contains("History cleared."), "{text}");
    assert!(text.contains("mino · notes-demo"), "{text}");
}

#[test]
fn another_session_starts_a_clean_chat() {
    let mut app = app();
    start_turn(&mut app, "from the first session", 0);
    agent(
        &mut app,
        AgentEvent::TurnEnd {
            requests: 1,
            tool_calls: 0,
            stop: crate::agent::TurnStop::Completed,
        },
    );
    agent(
        &mut app,
        AgentEvent::Session {
            id: "b".repeat(32),
            mode: Mode::Manual,
            model: "gpt-5-mini".into(),
            context_window: 128_000,
            window_source: None,
            profile: Default::default(),
        },
    );
    let text = shot(&app, 80, 20);
    assert!(!text.contains("from the first session"), "{text}");
    assert!(
        text.contains(&format!("Session: {}", "b".repeat(32))),
        "{text}"
    );
    assert!(text.contains("mino · notes-demo"), "{text}");
}

#[test]
fn a_tool_name_from_the_model_cannot_drive_the_terminal() {
    let mut app = app();
    start_turn(&mut app, "hi", 0);
    agent(
        &mut app,
        AgentEvent::ToolCall {
            call_id: "c1".into(),
            tool: "evil\u{1b}[2J".into(),
            arguments: "{}".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "evil\u{1b}[2J".into(),
            status: ResultStatus::Error,
            output: "There is no tool named \"evil\\u{1b}[2J\".".into(),
        },
    );
    let text = shot(&app, 80, 20);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("! evil␛[2J"), "{text}");
}

/// An accepted edit leaves its diff in the chat, coloured and collapsed,
/// and the turn's end lists the files it changed.
#[test]
fn diff_entry_after_an_accepted_edit() {
    let mut app = app_in(Mode::Manual);
    start_turn(&mut app, "Fix the typo in the title of notes.md", 1);
    let diff = "--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n-# Relase notes\n+# Release notes\n \n ## 0.10.0\n";
    let (event, mut rx) = consent(
        "edit_file",
        "c1",
        vec![
            Field::named(crate::tools::FieldRole::Path, "notes.md"),
            Field::text("Remove", "# Relase notes").with_role(crate::tools::FieldRole::SaidByDiff),
            Field::text("Insert", "# Release notes").with_role(crate::tools::FieldRole::SaidByDiff),
            Field::diff(diff),
        ],
    );
    agent(&mut app, event);
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::AllowOnce));
    agent(
        &mut app,
        AgentEvent::ToolCall {
            call_id: "c1".into(),
            tool: "edit_file".into(),
            arguments: r#"{"path":"notes.md"}"#.into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::Answered {
            call_id: "c1".into(),
            tool: "edit_file".into(),
            answer: ConsentAnswer::AllowOnce,
            line: "Allowed edit_file once.".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolRunning {
            call_id: "c1".into(),
            tool: "edit_file".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::FileChanged {
            call_id: "c1".into(),
            tool: "edit_file".into(),
            path: "notes.md".into(),
            diff: diff.into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "edit_file".into(),
            status: ResultStatus::Completed,
            output: "Edited notes.md at line 1 (412 bytes, 18 lines).".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::TurnEnd {
            requests: 2,
            tool_calls: 1,
            stop: crate::agent::TurnStop::Completed,
        },
    );
    let terminal = draw(&app, 90, 20);
    let text = screen(terminal.backend().buffer());
    assert_snapshot!(text);
    assert!(text.contains("Changed 1 file: notes.md +1 -1"), "{text}");
    let color_of = |needle: &str| {
        let row = text.lines().position(|l| l.contains(needle)).unwrap();
        let col = text.lines().nth(row).unwrap().find(needle).unwrap();
        let col = text.lines().nth(row).unwrap()[..col].chars().count() as u16;
        terminal.backend().buffer()[(col, row as u16)].fg
    };
    assert_eq!(color_of("+# Release"), Color::Green);
    assert_eq!(color_of("-# Relase"), Color::Red);
}

/// A long change shows its first lines; Ctrl+O shows it whole.
#[test]
fn a_long_diff_is_collapsed_until_ctrl_o() {
    let mut app = app_in(Mode::Bypass);
    start_turn(&mut app, "Write it", 1);
    let mut diff = String::from("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,30 @@\n");
    for i in 0..30 {
        diff.push_str(&format!("+line {i}\n"));
    }
    for event in [
        AgentEvent::ToolRunning {
            call_id: "c1".into(),
            tool: "write_file".into(),
        },
        AgentEvent::FileChanged {
            call_id: "c1".into(),
            tool: "write_file".into(),
            path: "new.txt".into(),
            diff,
        },
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "write_file".into(),
            status: ResultStatus::Completed,
            output: "Wrote new.txt (210 bytes, 30 lines).".into(),
        },
    ] {
        agent(&mut app, event);
    }
    let collapsed = shot(&app, 90, 40);
    assert!(collapsed.contains("+line 6"), "{collapsed}");
    assert!(!collapsed.contains("+line 7"), "{collapsed}");
    assert!(
        collapsed.contains("… 23 more diff lines (Ctrl+O to expand)"),
        "{collapsed}"
    );
    press(&mut app, ctrl('o'));
    let expanded = shot(&app, 90, 60);
    assert!(expanded.contains("+line 29"), "{expanded}");
}

#[test]
fn an_asked_agents_turn_is_one_nested_labelled_block() {
    use crate::agent::asked::AskedEvent;
    let mut app = app();
    let asked = |app: &mut App, event| {
        agent(
            app,
            AgentEvent::Asked {
                agent: "jan".into(),
                event,
            },
        );
    };
    asked(
        &mut app,
        AskedEvent::Started {
            question: "make a file".into(),
        },
    );
    assert!(app.turn_running(), "Esc must reach the asked agent");
    asked(
        &mut app,
        AskedEvent::ToolCall {
            call_id: "j1".into(),
            title: "bash touch a.txt".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::Record {
            call_id: "j1".into(),
            tool: "jan/bash".into(),
            shown: Shown::ForSession,
            fields: vec![Field::text("Command", "touch a.txt")],
        },
    );
    asked(
        &mut app,
        AskedEvent::ToolUpdate {
            call_id: "j1".into(),
            status: Some("completed"),
            text: String::new(),
        },
    );
    asked(&mut app, AskedEvent::Text("Made a.txt.".into()));
    asked(
        &mut app,
        AskedEvent::Ended {
            answer: "Made a.txt.".into(),
            stop: "end_turn".into(),
        },
    );
    assert!(!app.turn_running());
    let screen = shot(&app, 80, 30);
    for line in [
        "┌ asked jan: make a file",
        "│ → bash touch a.txt",
        "│ [Tool: jan/bash, allowed for this session]",
        "│ Command: \"touch a.txt\"",
        "│ [Tool result: completed]",
        "│ Made a.txt.",
        "└ jan ended (end_turn)",
    ] {
        assert!(screen.contains(line), "{line:?} not on screen:\n{screen}");
    }
}

/// A bash call that changed files says which under its record, and the
/// turn's closing line counts them.
#[test]
fn what_bash_changed_is_shown_under_its_call_and_counted_at_the_end() {
    use crate::checkpoint::Change;
    use crate::checkpoint::changes::FileDelta;
    use crate::checkpoint::diffs::FileDiff;
    let mut app = app_in(Mode::Bypass);
    start_turn(&mut app, "Clean up", 1);
    for event in [
        AgentEvent::ToolCall {
            call_id: "c1".into(),
            tool: "bash".into(),
            arguments: r#"{"command":"rm -rf src && printf 'a\nb\n' > new.txt"}"#.into(),
        },
        AgentEvent::ToolRunning {
            call_id: "c1".into(),
            tool: "bash".into(),
        },
        AgentEvent::BashChanged {
            call_id: "c1".into(),
            tool: "bash".into(),
            changes: vec![
                FileDelta {
                    path: "new.txt".into(),
                    change: Change::Added,
                    added: 2,
                    removed: 0,
                },
                FileDelta {
                    path: "src/a.rs".into(),
                    change: Change::Deleted,
                    added: 0,
                    removed: 1,
                },
            ],
            diffs: vec![
                FileDiff {
                    path: "new.txt".into(),
                    diff: "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+alpha\n+beta\n".into(),
                    note: None,
                },
                FileDiff {
                    path: "src/a.rs".into(),
                    diff: String::new(),
                    note: Some("not kept in the checkpoint, so no diff".into()),
                },
            ],
        },
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "bash".into(),
            status: ResultStatus::Completed,
            output: "exit 0".into(),
        },
        AgentEvent::TurnEnd {
            requests: 2,
            tool_calls: 1,
            stop: crate::agent::TurnStop::Completed,
        },
    ] {
        agent(&mut app, event);
    }
    let terminal = draw(&app, 100, 20);
    let text = screen(terminal.backend().buffer());
    assert!(
        text.contains("Changed by bash: new.txt +2 -0, deleted src/a.rs"),
        "{text}"
    );
    assert!(
        text.contains("Changed 2 files: new.txt +2 -0, src/a.rs +0 -1"),
        "{text}"
    );
    let by = text
        .lines()
        .position(|l| l.contains("Changed by bash"))
        .unwrap();
    let call = text
        .lines()
        .position(|l| l.contains("bash rm -rf"))
        .unwrap();
    assert!(by > call, "{text}");
    // The diffs are one Ctrl+O away, and only then on screen.
    assert!(text.contains("(Ctrl+O shows the diffs)"), "{text}");
    assert!(!text.contains("+alpha"), "{text}");
    press(&mut app, ctrl('o'));
    let terminal = draw(&app, 100, 30);
    let text = screen(terminal.backend().buffer());
    assert!(text.contains("+alpha") && text.contains("+beta"), "{text}");
    assert!(
        text.contains("(not kept in the checkpoint, so no diff)"),
        "{text}"
    );
    assert!(!text.contains("(Ctrl+O shows the diffs)"), "{text}");
}
