//! A running call's output in its block: the last lines as they arrive,
//! each update replacing the one before, a line redrawn with carriage
//! returns shown as it last stands, the result replacing it all, and
//! output that comes after the result ignored.

use super::*;

fn running(app: &mut App) {
    start_turn(app, "Run it", 1);
    agent(
        app,
        AgentEvent::ToolCall {
            call_id: "c1".into(),
            tool: "bash".into(),
            arguments: r#"{"command":"make"}"#.into(),
        },
    );
    agent(
        app,
        AgentEvent::ToolRunning {
            call_id: "c1".into(),
            tool: "bash".into(),
        },
    );
}

fn output(app: &mut App, text: &str) {
    agent(
        app,
        AgentEvent::ToolOutput {
            call_id: "c1".into(),
            tool: "bash".into(),
            output: text.into(),
        },
    );
}

#[test]
fn the_last_lines_show_while_the_command_runs() {
    let mut app = app_in(Mode::Bypass);
    running(&mut app);
    output(&mut app, "compiling one\n");
    let shot1 = shot(&app, 80, 20);
    assert!(shot1.contains("… bash make"), "{shot1}");
    assert!(shot1.contains("compiling one"), "{shot1}");
    let many: String = (1..=30).map(|i| format!("step {i}\n")).collect();
    output(&mut app, &many);
    let shot2 = shot(&app, 80, 30);
    assert!(!shot2.contains("compiling one"), "replaced: {shot2}");
    assert!(shot2.contains("step 30"), "{shot2}");
    assert!(shot2.contains("step 23"), "{shot2}");
    let has_line = |shot: &str, line: &str| shot.lines().any(|l| l.trim() == line);
    assert!(!has_line(&shot2, "step 22"), "{shot2}");
    // Ctrl+O shows every line the agent sent.
    press(&mut app, ctrl('o'));
    let expanded = shot(&app, 80, 60);
    assert!(has_line(&expanded, "step 1"), "{expanded}");
}

#[test]
fn a_line_redrawn_with_carriage_returns_shows_its_last_state() {
    let mut app = app_in(Mode::Bypass);
    running(&mut app);
    output(&mut app, "downloading\n 10%\r 50%\r 90%");
    let text = shot(&app, 80, 20);
    assert!(text.contains(" 90%"), "{text}");
    assert!(!text.contains("10%") && !text.contains("␍"), "{text}");
}

#[test]
fn the_result_replaces_the_live_lines_and_later_output_is_ignored() {
    let mut app = app_in(Mode::Bypass);
    running(&mut app);
    output(&mut app, "partial line\n");
    agent(
        &mut app,
        AgentEvent::ToolResult {
            call_id: "c1".into(),
            tool: "bash".into(),
            status: ResultStatus::Interrupted,
            output:
                "Interrupted by the user; the command's process group was killed.\npartial line"
                    .into(),
        },
    );
    output(&mut app, "late\n");
    let text = shot(&app, 100, 20);
    assert!(text.contains("■ bash make  (interrupted)"), "{text}");
    assert!(text.contains("partial line"), "{text}");
    assert!(!text.contains("late"), "{text}");
}

#[test]
fn control_characters_in_live_output_cannot_drive_the_terminal() {
    let mut app = app_in(Mode::Bypass);
    running(&mut app);
    output(&mut app, "\u{1b}[2Jwiped?\n");
    let text = shot(&app, 80, 20);
    assert!(text.contains("␛[2Jwiped?"), "{text}");
}
