//! What the agent said, applied to the TUI's state: chat entries, the status
//! bar, questions opened and closed, pickers for lists that were asked for.
//! Mirrors the line front end's handling of the same events. It never
//! decides: a question is queued as it came and answered only by the user.

use crate::frontend::tui::app::YesNo;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::agent::asked::AskedEvent;
use crate::agent::{AgentEvent, TurnStop};
use crate::controls::visible;
use crate::frontend::text;
use crate::frontend::text::record_lines;
use crate::session::SessionSummary;

use super::app::{Activity, App, ModeQuestion, Picker, PickerItem, PickerKind, RunningTurn};
use super::arming::Arming;
use super::format;
use super::msg::Action;
use super::transcript::{AskedBlock, EntryKind, ToolEntry};
use super::view::diff::diff_counts;

/// One-line summaries of calls announced but not yet shown, by call id.
pub type CallSummaries = HashMap<String, String>;

/// Applies one agent event.
pub fn apply(app: &mut App, event: AgentEvent) -> Vec<Action> {
    let actions = apply_event(app, event);
    // A question whose turn was interrupted is dropped by the agent: close it.
    app.consents.prune_closed(app.now, app.typing_key());
    app.questions.prune_closed(app.now, app.typing_key());
    actions
}

fn set_activity(app: &mut App, activity: Activity) {
    if let Some(turn) = app.turn.as_mut() {
        turn.activity = activity;
    }
}

fn apply_event(app: &mut App, event: AgentEvent) -> Vec<Action> {
    match event {
        AgentEvent::Session {
            id,
            mode,
            model,
            context_window,
            window_source,
            profile,
        } => {
            // Another session (/new, /resume): the chat shows that one.
            if !app.status.session_id.is_empty() && app.status.session_id != id {
                app.transcript.restart();
                app.calls.clear();
                app.last_answer = None;
                app.plan_offer = false;
                app.plan = crate::session::Plan::default();
            }
            app.transcript.push(EntryKind::Banner(text::banner(
                &id,
                mode,
                &model,
                context_window,
                window_source.as_deref(),
                profile,
            )));
            if app.status.session_id != id {
                app.session_saved = false;
                app.places.forget();
                // The same session again (a `/model` switch) keeps its use.
                app.status.input_tokens = 0;
            }
            app.status.session_id = id;
            app.status.mode = mode;
            app.status.model = model;
            app.status.context_window = context_window;
        }
        AgentEvent::History(items) => {
            app.session_saved = true;
            super::replay::history(app, &items);
        }
        AgentEvent::Notice(line) => app.transcript.push(EntryKind::Notice(line)),
        AgentEvent::McpStatus(status) => app.status.mcp = text::mcp_status(&status),
        AgentEvent::ServerQuestion(question) => app.questions.push(question, app.now, app.last_key),
        AgentEvent::McpServers(list) => app
            .transcript
            .push(EntryKind::Notice(text::mcp_servers(&list))),
        AgentEvent::Warning(line) | AgentEvent::TurnNotice { message: line, .. } => {
            app.transcript.push(EntryKind::Warning(line))
        }
        AgentEvent::Error(line) => app.transcript.push(EntryKind::Error(line)),
        AgentEvent::Prompt(prompt) => {
            app.session_saved = true;
            app.plan_offer = false;
            app.transcript.push(EntryKind::User(prompt));
            app.turn = Some(RunningTurn {
                started: app.now,
                activity: Activity::Thinking,
            });
        }
        AgentEvent::AssistantDelta(delta) => {
            app.transcript.append_assistant(&delta);
            set_activity(app, Activity::Streaming);
        }
        AgentEvent::AssistantDone => {
            if let Some(answer) = app.transcript.finish_assistant() {
                app.last_answer = Some(answer);
            }
            set_activity(app, Activity::Thinking);
        }
        AgentEvent::ToolCall {
            call_id, arguments, ..
        }
        | AgentEvent::ToolCallRewritten {
            call_id, arguments, ..
        } => {
            app.calls.insert(call_id, format::call_summary(&arguments));
        }
        AgentEvent::Decision { .. } => {}
        AgentEvent::Record {
            tool,
            shown,
            fields,
            ..
        } => {
            let lines = if tool.contains('/') {
                // An asked agent's call: its block shows the whole record.
                record_lines(&tool, &shown, &fields)
            } else {
                super::records::lines(&mut app.places, &tool, &shown, &fields)
            };
            if !lines.is_empty() && !into_asked(app, &tool, &lines) {
                app.transcript.push(EntryKind::Record { lines, shown });
            }
        }
        AgentEvent::Consent(request) => {
            let typing = app.typing_key();
            app.consents.push(request, app.now, typing)
        }
        AgentEvent::Answered {
            answer,
            line,
            tool,
            call_id,
        } => {
            let taken = into_asked(app, &tool, std::slice::from_ref(&line));
            if !taken && answer == crate::policy::ConsentAnswer::Reject {
                // One line: the call's own, saying what the person said.
                let index = tool_entry(app, &call_id, &tool);
                app.transcript.edit(index, |kind| {
                    if let EntryKind::Tool(entry) = kind {
                        entry.rejection = Some(line);
                    }
                });
            } else if !taken {
                app.transcript.push(EntryKind::Answer {
                    text: line,
                    allowed: answer.allows(),
                });
            }
        }
        AgentEvent::ToolRunning { call_id, tool } => {
            tool_entry(app, &call_id, &tool);
            // The status bar names what bash runs (shortened).
            let what = match app.calls.get(&call_id) {
                Some(summary) if tool == "bash" && !summary.is_empty() => {
                    format!("bash: {}", format::one_line(summary, 40))
                }
                _ => tool,
            };
            set_activity(
                app,
                Activity::Running {
                    what,
                    since: app.now,
                },
            );
        }
        AgentEvent::ToolOutput {
            call_id,
            tool,
            output,
        } => {
            let index = tool_entry(app, &call_id, &tool);
            app.transcript.edit(index, |kind| {
                if let EntryKind::Tool(entry) = kind {
                    entry.show_live(&output);
                }
            });
        }
        AgentEvent::ToolResult {
            call_id,
            tool,
            status,
            output,
        } => {
            let index = tool_entry(app, &call_id, &tool);
            app.calls.remove(&call_id);
            app.transcript.edit(index, |kind| {
                if let EntryKind::Tool(entry) = kind {
                    entry.finish(status, &output);
                }
            });
            set_activity(app, Activity::Thinking);
        }
        AgentEvent::FileChanged {
            call_id,
            tool,
            path,
            diff,
        } => {
            let index = tool_entry(app, &call_id, &tool);
            let (added, removed) = diff_counts(&diff);
            app.transcript.edit(index, |kind| {
                if let EntryKind::Tool(entry) = kind {
                    entry.diff = Some(diff);
                }
            });
            match app.changed.iter_mut().find(|(p, ..)| *p == path) {
                Some(change) => {
                    change.1 += added;
                    change.2 += removed;
                }
                None => app.changed.push((path, added, removed)),
            }
        }
        AgentEvent::BashChanged {
            call_id,
            tool,
            changes,
            diffs,
        } => {
            let index = tool_entry(app, &call_id, &tool);
            let line = crate::controls::visible(&crate::checkpoint::changes::line(&changes));
            app.transcript.edit(index, |kind| {
                if let EntryKind::Tool(entry) = kind {
                    entry.changed_by = Some(line);
                    entry.changed_diffs = diffs;
                }
            });
            for delta in changes {
                match app.changed.iter_mut().find(|(p, ..)| *p == delta.path) {
                    Some(change) => {
                        change.1 += delta.added;
                        change.2 += delta.removed;
                    }
                    None => app.changed.push((delta.path, delta.added, delta.removed)),
                }
            }
        }
        AgentEvent::ModelNames(names) => app.model_names = names,
        AgentEvent::McpCatalog(catalog) => app.mcp_catalog = catalog,
        AgentEvent::Models { current, entries } => {
            for entry in &entries {
                if !app.model_names.contains(&entry.name) {
                    app.model_names.push(entry.name.clone());
                }
            }
            let items: Vec<PickerItem> = entries
                .iter()
                .map(|entry| PickerItem {
                    label: crate::controls::visible(&entry.name),
                    detail: crate::frontend::text::model_detail(entry),
                    value: entry.name.clone(),
                    current: entry.name == current,
                })
                .collect();
            app.picker = Some(Picker {
                kind: PickerKind::Model,
                title: "Model for this session (Enter switches)".into(),
                selected: items.iter().position(|i| i.current).unwrap_or(0),
                items,
            });
        }
        AgentEvent::SessionDiff { changes, diffs } => {
            app.transcript.push(EntryKind::Diff {
                line: crate::frontend::text::session_diff_line(&changes),
                diffs,
            });
        }
        AgentEvent::TurnEnd { stop, .. } => {
            if !app.changed.is_empty() {
                let line = changed_files(&std::mem::take(&mut app.changed));
                app.transcript.push(EntryKind::Notice(line));
            }
            app.turn = None;
            // The turn may have added files: `@` lists them again.
            app.files_requested = false;
            if let Some(answer) = app.transcript.finish_assistant() {
                app.last_answer = Some(answer);
            }
            super::plan_offer::after_turn(app, &stop);
            return super::composer::turn_ended(app, stop == TurnStop::Interrupted);
        }
        AgentEvent::Usage {
            input_tokens,
            context_window,
            ..
        } => {
            if input_tokens > 0 {
                app.status.input_tokens = input_tokens;
            }
            app.status.context_window = context_window;
            if let Some(turn) = app.turn.as_mut()
                && matches!(turn.activity, Activity::Retrying { .. })
            {
                turn.activity = Activity::Thinking;
            }
        }
        AgentEvent::Spent {
            input_tokens,
            output_tokens,
            cost_usd,
        } => {
            app.status.tokens_used = input_tokens.saturating_add(output_tokens);
            app.status.cost_usd = cost_usd;
        }
        AgentEvent::Retrying { delay, reason } => {
            let at = app.now + delay;
            set_activity(app, Activity::Retrying { at, reason });
        }
        AgentEvent::ModeChanged(mode) => {
            app.status.mode = mode;
            // Out of plan mode by other means: the offer is moot.
            if mode != crate::policy::Mode::Plan {
                app.plan_offer = false;
            }
        }
        AgentEvent::ConfirmMode { from, to, warning } => {
            app.mode_question = Some(ModeQuestion {
                ask: YesNo::Mode { from, to, warning },
                arming: Arming::new(app.now, app.last_key),
                scroll: 0,
            });
        }
        AgentEvent::ConfirmRule { toml, file, ask } => {
            app.mode_question = Some(ModeQuestion {
                ask: YesNo::Rule { toml, file, ask },
                arming: Arming::new(app.now, app.last_key),
                scroll: 0,
            });
        }
        AgentEvent::Sessions { list, all } => sessions(app, list, all),
        AgentEvent::OtherProject { id, project, here } => other_project(app, id, project, &here),
        AgentEvent::Permissions { grants, listed } => {
            if listed {
                grant_picker(app, &grants);
            }
            app.status.grants = grants;
        }
        AgentEvent::Plan(plan) => app.plan = plan,
        AgentEvent::Quit => return vec![Action::Quit],
        AgentEvent::Idle => {}
        AgentEvent::Cleared => {
            // The screen shows what the model will see: nothing before this.
            app.transcript.restart();
            app.calls.clear();
            app.last_answer = None;
        }
        AgentEvent::Asked { agent, event } => asked(app, agent, event),
        AgentEvent::RewindPrompts(prompts) => super::rewind::prompts(app, &prompts),
        AgentEvent::RewindOffer(offer) => super::rewind::offered(app, offer),
        AgentEvent::Rewound { line, prompt } => super::rewind::done(app, line, prompt),
    }
    Vec::new()
}

/// `Changed 2 files: notes.md +1 -1, new.txt +3 -0`.
pub fn changed_files(changed: &[(String, usize, usize)]) -> String {
    let s = if changed.len() == 1 { "" } else { "s" };
    let list: Vec<String> = changed
        .iter()
        .map(|(path, added, removed)| format!("{} +{added} -{removed}", visible(path)))
        .collect();
    format!("Changed {} file{s}: {}", changed.len(), list.join(", "))
}

/// Lines about an asked agent's call (`NAME/tool`) go into its open block.
fn into_asked(app: &mut App, tool: &str, lines: &[String]) -> bool {
    let Some(index) = app.transcript.open_asked() else {
        return false;
    };
    let mut taken = false;
    app.transcript.edit(index, |kind| {
        if let EntryKind::Asked(block) = kind
            && tool.starts_with(&format!("{}/", block.agent))
        {
            block.lines.extend(lines.iter().cloned());
            taken = true;
        }
    });
    taken
}

/// An asked agent's turn, as one nested block that grows.
fn asked(app: &mut App, agent: String, event: AskedEvent) {
    if let AskedEvent::Started { question } = event {
        app.transcript.push(EntryKind::Asked(AskedBlock {
            agent,
            question,
            lines: Vec::new(),
            answer: String::new(),
            stop: None,
        }));
        // Esc and Ctrl-C stop the asked agent as they stop a turn.
        app.turn = Some(RunningTurn {
            started: app.now,
            activity: Activity::Thinking,
        });
        return;
    }
    let Some(index) = app.transcript.open_asked() else {
        return;
    };
    if matches!(event, AskedEvent::Ended { .. }) {
        app.turn = None;
    }
    app.transcript.edit(index, |kind| {
        let EntryKind::Asked(block) = kind else {
            return;
        };
        match event {
            AskedEvent::Started { .. } => {}
            AskedEvent::Text(text) => block.answer.push_str(&text),
            AskedEvent::ToolCall { title, .. } => block.lines.push(format!("→ {title}")),
            AskedEvent::ToolUpdate { status, text, .. } => {
                if let Some(status @ ("completed" | "failed")) = status {
                    block.lines.push(format!("[Tool result: {status}]"));
                }
                block.lines.extend(text.lines().take(4).map(str::to_string));
            }
            AskedEvent::Ended { stop, .. } => block.stop = Some(stop),
        }
    });
}

/// The chat entry of a call, made when it does not exist yet.
fn tool_entry(app: &mut App, call_id: &str, tool: &str) -> usize {
    let summary = app.calls.get(call_id).cloned().unwrap_or_default();
    app.transcript
        .tool_entry(call_id, || ToolEntry::new(tool, summary))
}

/// `/permissions`: a picker whose Enter revokes, or a line when nothing
/// is remembered.
fn grant_picker(app: &mut App, grants: &[crate::policy::Grant]) {
    if grants.is_empty() {
        app.transcript
            .push(EntryKind::Notice(text::permissions(grants)));
        return;
    }
    let items = grants
        .iter()
        .enumerate()
        .map(|(i, grant)| PickerItem {
            label: format!("{}.", i + 1),
            detail: visible(&grant.describe()),
            value: (i + 1).to_string(),
            current: false,
        })
        .collect();
    app.picker = Some(Picker {
        kind: PickerKind::Grant,
        title: "Permissions: Enter revokes, Esc keeps".into(),
        items,
        selected: 0,
    });
}

/// `/resume` of another project's session: switch there, or stay here.
fn other_project(app: &mut App, id: String, project: PathBuf, here: &Path) {
    let short = id.get(..8).unwrap_or(&id).to_string();
    let dir = visible(&project.display().to_string());
    let items = vec![
        PickerItem {
            label: "switch".into(),
            detail: format!("work in {dir} (its settings are read again) and continue there"),
            value: "switch".into(),
            current: false,
        },
        PickerItem {
            label: "stay".into(),
            detail: format!(
                "continue it here, in {}",
                visible(&here.display().to_string())
            ),
            value: "stay".into(),
            current: false,
        },
    ];
    app.picker = Some(Picker {
        kind: PickerKind::Project { id, dir: project },
        title: format!("Session {short} was started in {dir}"),
        items,
        selected: 0,
    });
}

/// A session list: a picker when `/resume` asked for it, else lines.
fn sessions(app: &mut App, list: Vec<SessionSummary>, all: bool) {
    let for_resume = std::mem::take(&mut app.sessions_for_resume);
    if list.is_empty() || !for_resume {
        app.transcript
            .push(EntryKind::Notice(text::sessions(&list, all)));
        return;
    }
    if for_resume {
        let items = list
            .iter()
            .map(|s| PickerItem {
                label: s.id.short().to_string(),
                detail: format!(
                    "{}  {}",
                    text::date(s.started),
                    format::one_line(s.first_prompt.as_deref().unwrap_or(""), 60)
                ),
                value: s.id.to_string(),
                current: s.id.as_str() == app.status.session_id,
            })
            .collect();
        app.picker = Some(Picker {
            kind: PickerKind::Session,
            title: "Resume a session".into(),
            items,
            selected: 0,
        });
    }
}
