//! Performs one turn's effects: streams requests, saves records, prepares,
//! inspects, asks and runs calls, and feeds the outcomes back into the pure
//! `Turn`. Interrupt (Esc, Ctrl-C) stops the stream or the running tool at
//! once.

use std::collections::VecDeque;

use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::mcp::McpHub;
use crate::model::{Item, Provider, Request, Response, StreamEvent};
use crate::policy::shell::{Outcome, Verdict};
use crate::policy::{
    CallFacts, CallKind, CanAsk, ConsentAnswer, Decision, Mode, RunConsent, ToolKey,
};
use crate::tools::gate::examine;
use crate::tools::{Field, FieldKind, PreparedCall, Registry, ToolContext, ToolStatus};

use super::audit::Audit;
use super::compact::CompactError;
use super::events::{AgentEvent, ConsentRequest, DecisionView};
use super::hook::Hook;
use super::judge::{Judge, judge};
use super::live::LiveSession;
use super::turn::{DecideCx, Effect, Event, Turn, TurnLimits, TurnStop};

/// What a turn needs that outlives it.
pub struct Runtime {
    pub provider: Box<dyn Provider>,
    pub registry: Registry,
    /// The project, limits and protected patterns the tools and the
    /// decision share.
    pub tool_cx: ToolContext,
    pub limits: TurnLimits,
    pub system: String,
    pub can_ask: CanAsk,
    pub hook: Option<Hook>,
    /// The shell gate's judge, when enabled.
    pub judge: Option<Judge>,
    pub context_window: u64,
    pub events: mpsc::UnboundedSender<AgentEvent>,
    /// Where every decision is recorded, when mino's home has one.
    pub audit: Option<Audit>,
    /// The MCP servers of this run, for `/mcp`.
    pub mcp: Option<McpHub>,
    /// The agents this one can ask (`[agents.NAME]`).
    pub agents: std::collections::BTreeMap<String, crate::config::AskedAgent>,
}

impl Runtime {
    pub fn emit(&self, event: AgentEvent) {
        // A front end that has gone away cannot be told anything more.
        let _ = self.events.send(event);
    }
}

/// The call being handled: its id and tool name, and between `Prepare` and
/// `Run` the prepared call itself.
struct InHand {
    call_id: String,
    tool: String,
    prepared: Option<Box<dyn PreparedCall>>,
    /// The shell gate's line, shown in a question and a record.
    gate: Option<Field>,
}

/// Runs one turn for `prompt` and returns why it ended. The turn-end event
/// is emitted before returning.
pub async fn run_turn(
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
    prompt: String,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> TurnStop {
    let mut turn = Turn::new(rt.limits);
    rt.emit(AgentEvent::Prompt(prompt.clone()));
    let first = match session.save(Item::User { text: prompt }) {
        Ok(()) => Event::Begin,
        Err(e) => Event::SaveFailed(e),
    };
    let mut queue: VecDeque<Effect> = feed(&mut turn, first, rt, session, run).into();
    let mut hand: Option<InHand> = None;
    while let Some(effect) = queue.pop_front() {
        let event = match effect {
            Effect::Request => Some(request(rt, session, interrupt).await),
            Effect::Save(item) => Some(save(rt, session, item, hand.as_ref())),
            Effect::AnnounceCall(call) => {
                rt.emit(AgentEvent::ToolCall {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
                hand = Some(InHand {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    prepared: None,
                    gate: None,
                });
                None
            }
            Effect::Prepare(call) => {
                let (event, prepared, gate) = prepare(rt, &call, session.mode, interrupt).await;
                if let Some(hand) = hand.as_mut() {
                    hand.prepared = prepared;
                    hand.gate = gate;
                }
                Some(event)
            }
            Effect::AnnounceDecision(decision) => {
                if let Some(hand) = &hand {
                    announce_decision(rt, session, hand, &decision);
                }
                None
            }
            Effect::Inspect => Some(
                match hand
                    .as_mut()
                    .and_then(|h| h.prepared.as_mut())
                    .map(|p| p.inspect())
                {
                    Some(Ok(())) | None => Event::Inspected,
                    Some(Err(e)) => Event::InspectFailed(e.to_string()),
                },
            ),
            Effect::Ask => Some(ask(rt, question(hand.as_ref()), interrupt).await),
            Effect::AnnounceAnswer(answer) => {
                if let Some(hand) = &hand {
                    let key = hand
                        .prepared
                        .as_ref()
                        .map_or_else(|| ToolKey::new(&hand.tool), |p| p.facts().tool.clone());
                    rt.emit(AgentEvent::Answered {
                        call_id: hand.call_id.clone(),
                        tool: hand.tool.clone(),
                        answer,
                        line: if answer == ConsentAnswer::AllowForSession && hand.gate.is_some() {
                            format!("Allowed this exact {key} command line for this session.")
                        } else {
                            answer.describe(&key)
                        },
                    });
                }
                None
            }
            Effect::Record(shown) => {
                if let Some(hand) = &hand {
                    rt.emit(AgentEvent::Record {
                        call_id: hand.call_id.clone(),
                        tool: hand.tool.clone(),
                        shown,
                        fields: with_gate(
                            hand.prepared
                                .as_ref()
                                .map(|p| p.fields())
                                .unwrap_or_default(),
                            hand.gate.as_ref(),
                        ),
                    });
                }
                None
            }
            Effect::Run => Some(match hand.as_mut() {
                Some(hand) => run_call(rt, hand, interrupt).await,
                None => Event::PrepareFailed("internal error: no prepared call to run".into()),
            }),
            Effect::End(stop) => {
                tracing::info!(
                    session = %session.id,
                    requests = turn.requests(),
                    tool_calls = turn.tool_calls(),
                    stop = stop.as_str(),
                    "turn ended"
                );
                if let Some(message) = stop.message() {
                    match &stop {
                        TurnStop::Interrupted => rt.emit(AgentEvent::Notice(message)),
                        _ => rt.emit(AgentEvent::Error(message)),
                    }
                }
                rt.emit(AgentEvent::TurnEnd {
                    requests: turn.requests(),
                    tool_calls: turn.tool_calls(),
                    stop: stop.clone(),
                });
                return stop;
            }
        };
        if let Some(event) = event {
            queue.extend(feed(&mut turn, event, rt, session, run));
        }
    }
    TurnStop::Completed
}

/// Reports a decision: to the log, the audit log and the front end.
fn announce_decision(rt: &Runtime, session: &LiveSession, hand: &InHand, decision: &Decision) {
    let view = DecisionView::of(decision);
    tracing::info!(
        session = %session.id,
        call = %hand.call_id,
        tool = %hand.tool,
        mode = %session.mode,
        decision = view.decision,
        code = view.code.unwrap_or(""),
        "decision"
    );
    if let Some(audit) = &rt.audit
        && let Err(e) = audit.decision(&session.id, &hand.call_id, &hand.tool, session.mode, &view)
    {
        rt.emit(AgentEvent::Warning(e));
    }
    rt.emit(AgentEvent::Decision {
        call_id: hand.call_id.clone(),
        tool: hand.tool.clone(),
        view,
    });
}

fn feed(
    turn: &mut Turn,
    event: Event,
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
) -> Vec<Effect> {
    let mut cx = DecideCx {
        mode: session.mode,
        protected: &rt.tool_cx.protected,
        session: &mut session.consent,
        run,
        can_ask: rt.can_ask,
    };
    turn.on(event, &mut cx)
}

async fn request(
    rt: &Runtime,
    session: &mut LiveSession,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> Event {
    match super::compact::compact_if_needed(rt, session, interrupt).await {
        Ok(()) => {}
        Err(CompactError::Interrupted) => return Event::Interrupted { partial: None },
        Err(CompactError::Failed(e)) => rt.emit(AgentEvent::Warning(e)),
    }
    if let Some(hub) = &rt.mcp {
        // Servers still starting would be missing from the request's tools.
        tokio::select! {
            _ = interrupt.recv() => return Event::Interrupted { partial: None },
            () = hub.ready() => {}
        }
    }
    let request = Request {
        system: rt.system.clone(),
        items: session.history.clone(),
        tools: rt.registry.specs(),
    };
    let cancel = CancellationToken::new();
    let mut stream = rt.provider.stream(request, cancel.clone());
    let mut response = Response::default();
    loop {
        tokio::select! {
            _ = interrupt.recv() => {
                cancel.cancel();
                if !response.text.is_empty() {
                    rt.emit(AgentEvent::AssistantDone);
                }
                return Event::Interrupted { partial: Some(response) };
            }
            next = stream.next() => match next {
                Some(Ok(StreamEvent::Done)) | None => {
                    if !response.text.is_empty() {
                        rt.emit(AgentEvent::AssistantDone);
                    }
                    if response.usage.input_tokens > 0 {
                        session.input_tokens = response.usage.input_tokens;
                        rt.emit(AgentEvent::Usage {
                            input_tokens: response.usage.input_tokens,
                            context_window: rt.context_window,
                        });
                    }
                    return Event::ModelDone(response);
                }
                Some(Ok(event)) => {
                    if let StreamEvent::TextDelta(text) = &event {
                        rt.emit(AgentEvent::AssistantDelta(text.clone()));
                    }
                    response.apply(&event);
                }
                Some(Err(error)) => {
                    tracing::warn!(session = %session.id, %error, "model request failed");
                    if !response.text.is_empty() {
                        rt.emit(AgentEvent::AssistantDone);
                    }
                    return Event::ModelFailed(error);
                }
            }
        }
    }
}

fn save(rt: &Runtime, session: &mut LiveSession, mut item: Item, hand: Option<&InHand>) -> Event {
    // A call the turn never reached was never announced: announce it, so
    // its result shows with its command or path.
    if let Item::ToolResult { call_id, .. } = &item
        && hand.is_none_or(|hand| hand.call_id != *call_id)
        && let Some(call) = session.tool_call(call_id)
    {
        rt.emit(AgentEvent::ToolCall {
            call_id: call.id,
            tool: call.name,
            arguments: call.arguments,
        });
    }
    // Every secret mino holds leaves a tool result here, before the result
    // is saved, shown or sent.
    if let Item::ToolResult { output, .. } = &mut item {
        *output = rt.tool_cx.secrets.redact_result(output);
    }
    let result = match &item {
        Item::ToolResult {
            call_id,
            status,
            output,
        } => Some(AgentEvent::ToolResult {
            call_id: call_id.clone(),
            tool: match hand {
                Some(hand) if hand.call_id == *call_id => hand.tool.clone(),
                _ => session.tool_name(call_id),
            },
            status: *status,
            output: output.clone(),
        }),
        _ => None,
    };
    match session.save(item) {
        Ok(()) => {
            if let Some(event) = result {
                rt.emit(event);
            }
            Event::Saved
        }
        Err(e) => Event::SaveFailed(e),
    }
}

/// The fields of a call with the shell gate's line before its warning.
fn with_gate(mut fields: Vec<Field>, gate: Option<&Field>) -> Vec<Field> {
    if let Some(gate) = gate {
        let at = fields
            .iter()
            .position(|f| f.kind == crate::tools::FieldKind::Warning)
            .unwrap_or(fields.len());
        fields.insert(at, gate.clone());
    }
    fields
}

/// The shell gate for a bash call: the evidence step on the blocking pool,
/// the classifier, and in auto mode the judge for an eligible request.
/// Sets the facts' verdict (auto mode) and the bypass guard; returns the
/// line a question or a record shows, or `None` when the call was
/// interrupted.
pub(super) async fn gate(
    rt: &Runtime,
    facts: &mut CallFacts,
    mode: Mode,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> Option<Option<Field>> {
    let (CallKind::Shell, Some(command)) = (&facts.kind, facts.command.clone()) else {
        return Some(None);
    };
    let setup = rt.tool_cx.gate.clone();
    let mut verdict = tokio::task::spawn_blocking(move || examine("bash", &command, &setup))
        .await
        .unwrap_or_else(|e| Verdict::internal(format!("the gate's evaluation stopped: {e}")));
    if verdict.catastrophic && rt.tool_cx.gate.guard_bypass {
        facts.guard = Some(verdict.reason.clone());
    }
    match mode {
        Mode::Auto => {}
        Mode::Bypass if facts.guard.is_some() => {
            return Some(Some(Field::text("Bypass guard", verdict.describe())));
        }
        _ => return Some(None),
    }
    if verdict.outcome == Outcome::UnresolvedEligible
        && let (Some(judge_cfg), Some(request)) = (&rt.judge, verdict.judge.clone())
    {
        let cancel = CancellationToken::new();
        tokio::select! {
            biased;
            _ = interrupt.recv() => {
                cancel.cancel();
                return None;
            }
            answer = judge(judge_cfg, &request, cancel.clone()) => match answer {
                Ok(()) => {
                    verdict.outcome = Outcome::AllowFinal;
                    verdict.code = None;
                    verdict.reason = format!(
                        "the judge allowed a closed read-only git {} request",
                        request.operation
                    );
                }
                Err(not) => {
                    verdict.code = Some(not.code);
                    verdict.reason = not.reason;
                }
            },
        }
    }
    tracing::info!(
        outcome = verdict.outcome.as_str(),
        code = verdict.code,
        "shell gate"
    );
    facts.gate = Some(verdict.for_decision());
    Some(Some(Field::text("Shell gate", verdict.describe())))
}

async fn prepare(
    rt: &Runtime,
    call: &crate::model::ToolCall,
    mode: Mode,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> (Event, Option<Box<dyn PreparedCall>>, Option<Field>) {
    let (mut facts, write, prepared) = match prepare_tool(rt, call, interrupt).await {
        (Event::Prepared { facts, write }, Some(prepared)) => (facts, write, prepared),
        (event, prepared) => return (event, prepared, None),
    };
    // A call the hook denies is never judged.
    if let Some(crate::policy::HookVerdict::Deny { .. }) = facts.hook {
        return (Event::Prepared { facts, write }, Some(prepared), None);
    }
    match gate(rt, &mut facts, mode, interrupt).await {
        Some(field) => (Event::Prepared { facts, write }, Some(prepared), field),
        None => (Event::InterruptedBeforeRun, None, None),
    }
}

async fn prepare_tool(
    rt: &Runtime,
    call: &crate::model::ToolCall,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> (Event, Option<Box<dyn PreparedCall>>) {
    let Some(tool) = rt.registry.get(&call.name) else {
        return (
            Event::PrepareFailed(format!(
                "There is no tool named {:?}. Available tools: {}.",
                call.name,
                rt.registry.names().join(", ")
            )),
            None,
        );
    };
    let args: serde_json::Value = if call.arguments.trim().is_empty() {
        serde_json::Value::Object(Default::default())
    } else {
        match serde_json::from_str(&call.arguments) {
            Ok(args) => args,
            Err(e) => {
                return (
                    Event::PrepareFailed(format!(
                        "invalid arguments for {}: the arguments are not valid JSON: {e}",
                        call.name
                    )),
                    None,
                );
            }
        }
    };
    let prepared = match tool.prepare(&args, &rt.tool_cx) {
        Ok(prepared) => prepared,
        Err(e) => return (Event::PrepareFailed(e.to_string()), None),
    };
    let mut facts = prepared.facts().clone();
    if let Some(hook) = &rt.hook {
        tokio::select! {
            biased;
            _ = interrupt.recv() => return (Event::InterruptedBeforeRun, None),
            verdict = hook.check(&call.name, &args, &facts) => facts.hook = Some(verdict),
        }
    }
    let write = matches!(facts.kind, CallKind::FileWrite)
        || (matches!(facts.kind, CallKind::Fetch | CallKind::FetchPrivate)
            && !facts.targets.is_empty());
    // The hook's verdict joins the facts the decision reads.
    (Event::Prepared { facts, write }, Some(prepared))
}

/// What a question shows, taken from the call in hand before waiting.
struct Question {
    call_id: String,
    tool: ToolKey,
    fields: Vec<crate::tools::Field>,
}

fn question(hand: Option<&InHand>) -> Option<Question> {
    let hand = hand?;
    let prepared = hand.prepared.as_ref()?;
    Some(Question {
        call_id: hand.call_id.clone(),
        tool: prepared.facts().tool.clone(),
        fields: with_gate(prepared.fields(), hand.gate.as_ref()),
    })
}

async fn ask(
    rt: &Runtime,
    question: Option<Question>,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> Event {
    let Some(question) = question else {
        return Event::Answered(ConsentAnswer::Reject);
    };
    let (reply, answer) = oneshot::channel();
    rt.emit(AgentEvent::Consent(ConsentRequest {
        call_id: question.call_id,
        tool: question.tool,
        fields: question.fields,
        reply,
    }));
    tokio::select! {
        _ = interrupt.recv() => Event::Interrupted { partial: None },
        answer = answer => Event::Answered(answer.unwrap_or(ConsentAnswer::Reject)),
    }
}

async fn run_call(
    rt: &Runtime,
    hand: &mut InHand,
    interrupt: &mut mpsc::UnboundedReceiver<()>,
) -> Event {
    // An interrupt pressed while the call was prepared or inspected stops
    // it before it starts.
    if interrupt.try_recv().is_ok() {
        return Event::InterruptedBeforeRun;
    }
    let Some(prepared) = hand.prepared.take() else {
        return Event::PrepareFailed("internal error: the call was not prepared".into());
    };
    let change = applied_change(&prepared.fields());
    rt.emit(AgentEvent::ToolRunning {
        call_id: hand.call_id.clone(),
        tool: hand.tool.clone(),
    });
    let cancel = CancellationToken::new();
    let mut running = prepared.run(cancel.clone());
    tokio::select! {
        biased;
        _ = interrupt.recv() => {
            cancel.cancel();
            // The tool stops at once (a killed process group, a dropped
            // request); wait for it so nothing outlives the turn.
            let _ = running.await;
            Event::Interrupted { partial: None }
        }
        outcome = &mut running => {
            if outcome.status == ToolStatus::Completed
                && let Some((path, diff)) = change
            {
                rt.emit(AgentEvent::FileChanged {
                    call_id: hand.call_id.clone(),
                    tool: hand.tool.clone(),
                    path,
                    diff,
                });
            }
            Event::Ran(outcome)
        }
    }
}

/// The path and diff of a write the call would apply, from its fields.
fn applied_change(fields: &[Field]) -> Option<(String, String)> {
    let diff = fields.iter().find(|f| f.kind == FieldKind::Diff)?;
    let path = fields
        .iter()
        .find(|f| f.kind == FieldKind::Text && f.label == "Path")?;
    Some((path.value.clone(), diff.value.clone()))
}
