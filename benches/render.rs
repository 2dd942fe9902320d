//! Rendering benchmarks for the TUI: one 120x40 frame of a 10,000-message
//! transcript (user prompts, markdown answers with code, tool results,
//! record lines) drawn on ratatui's `TestBackend` through the real view,
//! first with every entry's layout cache empty and then in the steady
//! state; and one more streamed delta into a long answer, then a frame.
//! The state is built through the TUI's own `update`, as the agent's
//! events would build it.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use mino::agent::{AgentEvent, TurnStop};
use mino::frontend::tui::app::App;
use mino::frontend::tui::msg::Msg;
use mino::frontend::tui::transcript::EntryKind;
use mino::frontend::tui::{update, view};
use mino::model::ResultStatus;
use mino::policy::{Mode, Shown};
use mino::tools::Field;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const MESSAGES: usize = 10_000;

fn agent(app: &mut App, event: AgentEvent) {
    let _ = update::update(app, Msg::Agent(event));
}

/// A markdown answer of about `words` words: a heading, prose with
/// emphasis and inline code, a list, and a fenced code block.
fn answer(n: usize, words: usize) -> String {
    let mut out = format!("## Step {n}\n\n");
    let prose = [
        "The",
        "change",
        "keeps",
        "**one",
        "decision**",
        "per",
        "call;",
        "the",
        "`policy`",
        "module",
        "stays",
        "pure",
        "and",
        "*every*",
        "path",
        "is",
        "checked",
        "first.",
    ];
    let mut written = 0;
    while written < words {
        for word in prose.iter().take(words - written) {
            out.push_str(word);
            out.push(' ');
            written += 1;
        }
        out.push_str("\n\n");
        if written % 54 == 0 {
            out.push_str("- read the note\n- refuse `.env`\n- ask before `curl`\n\n");
            out.push_str("```rust\nfn decide(call: &Call) -> Decision {\n    if call.protected() {\n        return Decision::Deny;\n    }\n    Decision::Ask\n}\n```\n\n");
        }
    }
    out
}

/// Tool output of `lines` lines.
fn output(n: usize, lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "src/file_{n}_{i}.rs:{}: let value = compute({i}, {n});",
                i * 7
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A state whose transcript holds `messages` entries: exchanges of a
/// prompt, an answer, a record line (every other exchange) and a tool
/// result, ending idle and following the bottom.
fn long_session(messages: usize) -> App {
    let mut app = App::new("bench", Instant::now());
    agent(
        &mut app,
        AgentEvent::Session {
            id: "3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f".into(),
            mode: Mode::Bypass,
            model: "mock".into(),
            context_window: 128_000,
            window_source: None,
            profile: Default::default(),
        },
    );
    let mut n = 0;
    while app.transcript.len() < messages {
        n += 1;
        agent(
            &mut app,
            AgentEvent::Prompt(format!(
                "Please look at part {n} of the project and fix what is wrong."
            )),
        );
        agent(
            &mut app,
            AgentEvent::AssistantDelta(answer(n, 40 + (n % 5) * 30)),
        );
        agent(&mut app, AgentEvent::AssistantDone);
        let call_id = format!("call_{n}");
        let command = format!("grep -rn value src/part_{n}");
        agent(
            &mut app,
            AgentEvent::ToolCall {
                call_id: call_id.clone(),
                tool: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            },
        );
        if n % 2 == 0 {
            agent(
                &mut app,
                AgentEvent::Record {
                    call_id: call_id.clone(),
                    tool: "bash".into(),
                    shown: Shown::ByMode(Mode::Bypass),
                    fields: vec![
                        Field::text("Command", &command),
                        Field::text("Working directory", "/home/u/project"),
                    ],
                },
            );
        }
        agent(
            &mut app,
            AgentEvent::ToolRunning {
                call_id: call_id.clone(),
                tool: "bash".into(),
            },
        );
        agent(
            &mut app,
            AgentEvent::ToolResult {
                call_id,
                tool: "bash".into(),
                status: ResultStatus::Completed,
                output: output(n, 3 + n % 40),
            },
        );
        agent(
            &mut app,
            AgentEvent::TurnEnd {
                requests: 2,
                tool_calls: 1,
                stop: TurnStop::Completed,
            },
        );
    }
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap_or_else(|e| panic!("{e}"))
}

fn draw(terminal: &mut Terminal<TestBackend>, app: &App) {
    if let Err(e) = terminal.draw(|frame| view::draw(app, frame)) {
        panic!("draw failed: {e}");
    }
}

/// Drops every entry's layout cache (an edit that changes nothing), as in a
/// transcript nothing has drawn yet.
fn forget_layout(app: &mut App) {
    for i in 0..app.transcript.len() {
        app.transcript.edit(i, |_| {});
    }
}

fn frames(c: &mut Criterion) {
    let mut app = long_session(MESSAGES);
    assert!(app.transcript.len() >= MESSAGES);
    let mut group = c.benchmark_group("frame_10k_messages_120x40");
    group.bench_function("first", |b| {
        // Only the frame is timed: a fresh terminal and empty caches each time.
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                forget_layout(&mut app);
                let mut terminal = terminal();
                let start = Instant::now();
                draw(&mut terminal, black_box(&app));
                spent += start.elapsed();
            }
            spent
        });
    });
    group.bench_function("steady", |b| {
        let mut terminal = terminal();
        draw(&mut terminal, &app);
        b.iter(|| draw(&mut terminal, black_box(&app)));
    });
    group.finish();
}

fn streaming(c: &mut Criterion) {
    let mut app = long_session(MESSAGES);
    agent(&mut app, AgentEvent::Prompt("write a long answer".into()));
    let base = answer(0, 1_000);
    agent(&mut app, AgentEvent::AssistantDelta(base.clone()));
    let last = app.transcript.len() - 1;
    let mut terminal = terminal();
    draw(&mut terminal, &app);
    c.bench_function("stream_one_delta_then_frame_10k_messages_120x40", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for i in 0..iters {
                if i % 500 == 0 {
                    // Back to a 1,000-word answer, untimed, so the answer
                    // does not grow without bound.
                    app.transcript.edit(last, |kind| {
                        if let EntryKind::Assistant { text, .. } = kind {
                            text.truncate(base.len());
                        }
                    });
                    draw(&mut terminal, &app);
                }
                let start = Instant::now();
                agent(
                    &mut app,
                    AgentEvent::AssistantDelta(black_box("word ").into()),
                );
                draw(&mut terminal, &app);
                spent += start.elapsed();
            }
            spent
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = frames, streaming
}
criterion_main!(benches);
