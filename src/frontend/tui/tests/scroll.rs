//! The chat pane: scrolling and following, "new output below", reflow on
//! resize, collapsed and expanded results, a huge result and a long
//! transcript staying cheap.

use std::time::Instant;

use crossterm::event::{Event, MouseEvent, MouseEventKind};

use crate::agent::AgentEvent;
use crate::model::ResultStatus;

use super::super::transcript::Scroll;
use super::super::view::chat::NEW_OUTPUT;
use super::*;

fn notices(app: &mut App, n: usize) {
    for i in 0..n {
        agent(app, AgentEvent::Notice(format!("line {i}")));
    }
}

#[test]
fn page_up_anchors_and_new_output_says_so() {
    let mut app = app();
    notices(&mut app, 60);
    let bottom = shot(&app, 60, 20);
    assert!(bottom.contains("line 59"));
    press(&mut app, key(KeyCode::PageUp));
    assert!(matches!(app.transcript.scroll(), Scroll::Anchored { .. }));
    let up = shot(&app, 60, 20);
    assert!(!up.contains("line 59"), "{up}");
    // Output that arrives now does not move the view, and is announced.
    agent(&mut app, AgentEvent::Notice("fresh".into()));
    let still = shot(&app, 60, 20);
    assert_eq!(
        up.lines().take(10).collect::<Vec<_>>(),
        still.lines().take(10).collect::<Vec<_>>()
    );
    assert!(still.contains(NEW_OUTPUT.trim()), "{still}");
    // End (on an empty input) follows again.
    press(&mut app, key(KeyCode::End));
    let end = shot(&app, 60, 20);
    assert!(end.contains("fresh") && !end.contains(NEW_OUTPUT.trim()));
}

#[test]
fn wheel_and_page_down_return_to_following() {
    let mut app = app();
    notices(&mut app, 60);
    shot(&app, 60, 20);
    let wheel = |kind| {
        Event::Mouse(MouseEvent {
            kind,
            column: 0,
            row: 0,
            modifiers: KeyModifiers::NONE,
        })
    };
    let msg = keymap::map(&app, &wheel(MouseEventKind::ScrollUp)).unwrap();
    update(&mut app, msg);
    assert!(matches!(app.transcript.scroll(), Scroll::Anchored { .. }));
    let msg = keymap::map(&app, &wheel(MouseEventKind::ScrollDown)).unwrap();
    update(&mut app, msg);
    assert_eq!(app.transcript.scroll(), Scroll::Follow);
    press(&mut app, key(KeyCode::Home));
    assert_eq!(
        app.transcript.scroll(),
        Scroll::Anchored { entry: 0, line: 0 }
    );
    assert!(shot(&app, 60, 20).contains("mino · notes-demo"));
    for _ in 0..10 {
        press(&mut app, key(KeyCode::PageDown));
    }
    assert_eq!(app.transcript.scroll(), Scroll::Follow);
}

#[test]
fn short_transcripts_do_not_scroll() {
    let mut app = app();
    shot(&app, 80, 30);
    press(&mut app, key(KeyCode::PageUp));
    assert_eq!(app.transcript.scroll(), Scroll::Follow);
}

#[test]
fn wrapping_reflows_on_resize() {
    let mut app = app();
    let long = "word ".repeat(40);
    agent(&mut app, AgentEvent::Notice(long.trim().to_string()));
    let wide = shot(&app, 120, 20);
    let narrow = shot(&app, 40, 20);
    let rows = |s: &str| s.lines().filter(|l| l.contains("word")).count();
    assert!(rows(&narrow) > rows(&wide));
    assert!(narrow.lines().all(|l| l.chars().count() <= 40));
}

fn big_result(app: &mut App, output: String) {
    let command = r#"{"command":"cat big"}"#;
    finished_call(app, "c1", "bash", command, ResultStatus::Completed, output);
}

#[test]
fn results_collapse_and_ctrl_o_expands() {
    let mut app = app();
    let output: Vec<String> = (1..=12).map(|i| format!("out {i}")).collect();
    big_result(&mut app, output.join("\n"));
    let collapsed = shot(&app, 80, 30);
    assert!(collapsed.contains("out 4") && !collapsed.contains("out 5"));
    assert!(
        collapsed.contains("8 more lines (Ctrl+O to expand)"),
        "{collapsed}"
    );
    press(&mut app, ctrl('o'));
    let expanded = shot(&app, 80, 30);
    assert!(expanded.contains("out 12"), "{expanded}");
    press(&mut app, ctrl('o'));
    assert!(!shot(&app, 80, 30).contains("out 12"));
}

#[test]
fn a_ten_megabyte_line_stays_responsive() {
    let mut app = app();
    let started = Instant::now();
    big_result(&mut app, "y".repeat(10 << 20));
    let screen = shot(&app, 120, 40);
    assert!(screen.contains("yyyy"));
    press(&mut app, ctrl('o'));
    shot(&app, 120, 40);
    press(&mut app, key(KeyCode::PageUp));
    shot(&app, 120, 40);
    // Generous for a debug build on a shared machine; the point is that
    // nothing is proportional to the 10 MB.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn a_long_transcript_lays_out_only_what_shows() {
    let mut app = app();
    for i in 0..10_000 {
        agent(&mut app, AgentEvent::Prompt(format!("prompt {i}")));
        agent(&mut app, AgentEvent::AssistantDelta(format!("answer {i}")));
        agent(&mut app, AgentEvent::AssistantDone);
    }
    let started = Instant::now();
    let screen = shot(&app, 120, 40);
    let first = started.elapsed();
    assert!(screen.contains("answer 9999"));
    assert!(first.as_millis() < 500, "{first:?}");
}
