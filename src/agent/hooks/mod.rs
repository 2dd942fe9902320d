//! The user's hooks at run time, in Claude Code's format: which commands an
//! event selects, the JSON each reads on stdin (`session_id`, `cwd`, `permission_mode`, `hook_event_name` and the
//! event's own fields), and what their answers mean for mino. PreToolUse
//! hands the decision one verdict (it can deny, never allow: DESIGN section
//! 2, step 3) or a new input, which is prepared and decided anew;
//! PermissionRequest may answer a question for the person (only where a
//! person would be asked); UserPromptSubmit may block a prompt or add context;
//! PostToolUse may add context; the other events are only told. Every
//! verdict of a deciding hook is written to the audit log. Never decides a
//! call itself.

pub mod answer;
pub mod input;
pub mod legacy;
pub mod run;
pub mod turn;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::JoinHandle;

use serde_json::{Map, Value, json};

use crate::config::{HookCommand, HookEvent, HookSettings};
use crate::policy::{CallFacts, HookVerdict, Mode};
use crate::secrets::HeldSecrets;

use super::audit::Audit;
use super::events::AgentEvent;
use answer::{PermissionVerdict, PromptVerdict, ToolVerdict};

/// What the PreToolUse hooks made of a call: their verdict, or the input
/// the hook at `at` gave the call instead, for the call to be prepared
/// anew and the hooks after it to see.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolOutcome {
    Verdict(HookVerdict),
    Rewrite {
        at: usize,
        /// The new arguments, in mino's fields.
        arguments: Value,
        key: String,
    },
}

/// The configured hooks, for one project.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    settings: HookSettings,
    legacy: Option<legacy::Hook>,
    project: PathBuf,
    /// Told hooks still running, so leaving can let them finish.
    told: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

/// The session an event belongs to, and where its verdicts are recorded.
pub struct HookCx<'a> {
    pub session: &'a str,
    pub mode: Mode,
    pub audit: Option<&'a Audit>,
}

/// Claude Code's name for a mode (`permission_mode`).
fn permission_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Plan => "plan",
        Mode::Manual => "default",
        Mode::AcceptEdits => "acceptEdits",
        Mode::Auto => "auto",
        Mode::Bypass => "bypassPermissions",
    }
}

/// A call a PostToolUse hook is told about.
#[derive(Debug, Clone)]
pub struct ToolUse {
    pub call_id: String,
    /// mino's name for the tool, and Claude Code's.
    pub names: [String; 2],
    pub input: Value,
}

impl Hooks {
    /// The hooks of `settings` for the project at `project`; the legacy
    /// argv keeps mino's old 10 s.
    pub fn new(settings: &HookSettings, project: &Path) -> Self {
        Self {
            settings: settings.clone(),
            legacy: settings.legacy.as_ref().map(|argv| legacy::Hook {
                argv: argv.clone(),
                timeout: legacy::TIMEOUT,
            }),
            project: project.to_path_buf(),
            told: Arc::default(),
        }
    }

    /// Waits for the told hooks still running (each within its timeout).
    pub async fn settle(&self) {
        let running: Vec<JoinHandle<()>> = {
            let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::take(&mut *told)
        };
        for handle in running {
            let _ = handle.await;
        }
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.settings.has(event)
    }

    /// The fields every event carries.
    fn event(&self, cx: &HookCx<'_>, event: HookEvent) -> Map<String, Value> {
        let mut map = Map::new();
        // No `transcript_path`: mino's session file is not Claude Code's
        // transcript, and a script that parsed it as one would misread it.
        map.insert("session_id".into(), json!(cx.session));
        map.insert("cwd".into(), json!(self.project));
        map.insert("permission_mode".into(), json!(permission_mode(cx.mode)));
        map.insert("hook_event_name".into(), json!(event.name()));
        map
    }

    async fn run(&self, hook: &HookCommand, input: &Map<String, Value>) -> answer::Answer {
        let ran = run::run(
            hook,
            &self.project,
            &Value::Object(input.clone()).to_string(),
        )
        .await;
        answer::answer(&ran, &hook.key, hook.timeout.as_secs())
    }

    /// The tool call's names and input as a hook reads them.
    pub fn tool_use(&self, call_id: &str, tool: &str, args: &Value, facts: &CallFacts) -> ToolUse {
        ToolUse {
            call_id: call_id.to_string(),
            names: [tool.to_string(), input::claude_name(tool, facts)],
            input: input::claude_input(tool, args, facts, &self.project),
        }
    }

    /// The PreToolUse hooks' outcome on one prepared call, running the
    /// hooks from the `from`th on (the legacy argv first, on every input):
    /// `None` when no hook is configured. The first denial ends it;
    /// an `updatedInput` ends it too, so the call is prepared again with
    /// it; an `allow` lets the decision go on (a hook never loosens it),
    /// and so does no opinion.
    pub async fn pre_tool_use(
        &self,
        cx: &HookCx<'_>,
        (call_id, tool): (&str, &str),
        args: &Value,
        facts: &CallFacts,
        from: usize,
    ) -> Option<PreToolOutcome> {
        if !self.has(HookEvent::PreToolUse) {
            return None;
        }
        let audit = |key: String, word: &'static str| {
            record(cx, HookEvent::PreToolUse, Some((call_id, tool)), key, word)
        };
        if let Some(hook) = &self.legacy {
            let verdict = hook.check(tool, args, facts).await;
            let word = match verdict {
                HookVerdict::Continue => "none",
                HookVerdict::Deny { .. } => "deny",
            };
            audit("hooks.pre_tool_call".into(), word).await;
            if let HookVerdict::Deny { .. } = verdict {
                return Some(PreToolOutcome::Verdict(verdict));
            }
        }
        let call = self.tool_use(call_id, tool, args, facts);
        let names = [call.names[0].as_str(), call.names[1].as_str()];
        let mut input = self.event(cx, HookEvent::PreToolUse);
        input.insert("tool_name".into(), json!(call.names[1]));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call_id));
        let hooks = self.settings.commands(HookEvent::PreToolUse, Some(&names));
        for (at, hook) in hooks.into_iter().enumerate().skip(from) {
            let answer = answer::pre_tool_use(self.run(hook, &input).await, &hook.key);
            audit(hook.key.clone(), answer.verdict.word()).await;
            match answer.verdict {
                ToolVerdict::Deny(reason) => {
                    return Some(PreToolOutcome::Verdict(HookVerdict::Deny { reason }));
                }
                ToolVerdict::Ask(reason) => {
                    return Some(PreToolOutcome::Verdict(HookVerdict::Deny {
                        reason: format!(
                            "{reason} (the hook {} answered ask; a mino hook can deny a call or leave it to the decision, never put it to the user, so it is denied)",
                            hook.key
                        ),
                    }));
                }
                ToolVerdict::Allow | ToolVerdict::NoOpinion => {}
            }
            if let Some(updated) = answer.updated_input {
                let arguments = input::mino_input(tool, &updated);
                if &arguments != args {
                    audit(hook.key.clone(), "updatedInput").await;
                    return Some(PreToolOutcome::Rewrite {
                        at,
                        arguments,
                        key: hook.key.clone(),
                    });
                }
            }
        }
        Some(PreToolOutcome::Verdict(HookVerdict::Continue))
    }

    /// The PermissionRequest hooks' answer to a question about `call`
    /// that is about to be put to the person: the first allow or denial
    /// ends it; failures come back as warnings and leave it to the person.
    pub async fn permission_request(
        &self,
        cx: &HookCx<'_>,
        call: &ToolUse,
    ) -> (PermissionVerdict, Vec<String>) {
        let names = [call.names[0].as_str(), call.names[1].as_str()];
        let mut input = self.event(cx, HookEvent::PermissionRequest);
        input.insert("tool_name".into(), json!(call.names[1]));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call.call_id));
        let mut warnings = Vec::new();
        for hook in self
            .settings
            .commands(HookEvent::PermissionRequest, Some(&names))
        {
            let verdict = answer::permission_request(self.run(hook, &input).await, &hook.key);
            record(
                cx,
                HookEvent::PermissionRequest,
                Some((&call.call_id, &call.names[0])),
                hook.key.clone(),
                verdict.word(),
            )
            .await;
            match verdict {
                PermissionVerdict::Ask(Some(warning)) => warnings.push(warning),
                PermissionVerdict::Ask(None) => {}
                decided => return (decided, warnings),
            }
        }
        (PermissionVerdict::Ask(None), warnings)
    }

    /// What PostToolUse hooks add for the model about `call`, which ran and
    /// returned `response` (already redacted); and each failure, as a
    /// warning. The call's result and decision stay as they are.
    pub async fn post_tool_use(
        &self,
        cx: &HookCx<'_>,
        call: &ToolUse,
        response: &str,
    ) -> (Vec<String>, Vec<String>) {
        let names = [call.names[0].as_str(), call.names[1].as_str()];
        let mut input = self.event(cx, HookEvent::PostToolUse);
        input.insert("tool_name".into(), json!(call.names[1]));
        input.insert("tool_input".into(), call.input.clone());
        input.insert("tool_use_id".into(), json!(call.call_id));
        input.insert("tool_response".into(), json!(response));
        let (mut context, mut warnings) = (Vec::new(), Vec::new());
        for hook in self.settings.commands(HookEvent::PostToolUse, Some(&names)) {
            match answer::post_tool_use(self.run(hook, &input).await) {
                Ok(Some(text)) => context.push(text),
                Ok(None) => {}
                Err(problem) => warnings.push(problem),
            }
        }
        (context, warnings)
    }

    /// The UserPromptSubmit verdict on `prompt`: the first block ends it;
    /// otherwise every hook's context, in order.
    pub async fn user_prompt_submit(&self, cx: &HookCx<'_>, prompt: &str) -> PromptVerdict {
        let mut input = self.event(cx, HookEvent::UserPromptSubmit);
        input.insert("prompt".into(), json!(prompt));
        let mut context: Vec<String> = Vec::new();
        for hook in self.settings.commands(HookEvent::UserPromptSubmit, None) {
            let verdict = answer::user_prompt_submit(self.run(hook, &input).await, &hook.key);
            let word = match verdict {
                PromptVerdict::Block(_) => "block",
                PromptVerdict::Pass { .. } => "pass",
            };
            record(
                cx,
                HookEvent::UserPromptSubmit,
                None,
                hook.key.clone(),
                word,
            )
            .await;
            match verdict {
                PromptVerdict::Block(reason) => return PromptVerdict::Block(reason),
                PromptVerdict::Pass {
                    context: Some(text),
                } => context.push(text),
                PromptVerdict::Pass { context: None } => {}
            }
        }
        PromptVerdict::Pass {
            context: (!context.is_empty()).then(|| context.join("\n")),
        }
    }

    /// Tells `event`'s hooks (those whose matcher selects `subject`, when
    /// the event has one) with the event's own `fields`, on a task of its
    /// own: nothing waits for it but `settle` when mino leaves. A hook that
    /// fails is a warning on `events`; none blocks anything.
    pub fn tell(
        &self,
        cx: &HookCx<'_>,
        event: HookEvent,
        subject: Option<&str>,
        fields: Map<String, Value>,
        (events, secrets): (super::events::EventSender, HeldSecrets),
    ) {
        if !self.has(event) {
            return;
        }
        let subject: Option<Vec<&str>> = subject.map(|s| vec![s]);
        let hooks: Vec<HookCommand> = self
            .settings
            .commands(event, subject.as_deref())
            .into_iter()
            .cloned()
            .collect();
        if hooks.is_empty() {
            return;
        }
        let mut input = self.event(cx, event);
        input.extend(fields);
        let this = self.clone();
        let handle = tokio::spawn(async move {
            for hook in &hooks {
                if let answer::Answer::Failed(problem) = this.run(hook, &input).await {
                    // A hook's stderr is outside words: redacted first.
                    let problem = secrets.redact(&problem).await;
                    let _ = events.send(AgentEvent::Warning(format!(
                        "{} hook: {problem}",
                        event.name()
                    )));
                }
            }
        });
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        told.retain(|h| !h.is_finished());
        told.push(handle);
    }
}

/// Writes one verdict to the audit log. A log that cannot be written is
/// said by the decision line that follows (it fails the same way).
async fn record(
    cx: &HookCx<'_>,
    event: HookEvent,
    call: Option<(&str, &str)>,
    key: String,
    verdict: &'static str,
) {
    if let Some(audit) = cx.audit {
        let _ = audit
            .hook(cx.session, event.name(), call, &key, verdict)
            .await;
    }
}
