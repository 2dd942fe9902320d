//! Reads a hook's answer as Claude Code defines it: exit 0 (its stdout a
//! JSON object or plain text), exit 2 (block, stderr the reason), and the
//! JSON fields `continue`, `stopReason`, `decision`, `reason`,
//! `suppressOutput` and `hookSpecificOutput` (`permissionDecision`,
//! `permissionDecisionReason`, `updatedInput`, `additionalContext`, and
//! PermissionRequest's `decision.behavior` and `decision.message`). Where
//! mino differs,
//! it is stricter: any other exit, a timeout or a broken JSON answer is a
//! failure, which fails closed where the hook decides. Pure: no I/O.

use serde_json::Value;

use super::run::{Outcome, Ran};

/// A hook's answer before it is read for one event.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Exit 0, with its JSON object when stdout held one.
    Spoke(Option<Value>),
    /// Exit 0 with plain text on stdout.
    Plain(String),
    /// Exit 2: block, with stderr as the reason.
    Blocked(String),
    /// The hook failed: it could not run, ran too long, exited otherwise, or
    /// answered with broken JSON. The text says which.
    Failed(String),
}

/// Reads `ran`, a run of the hook named `key`.
pub fn answer(ran: &Ran, key: &str, timeout_secs: u64) -> Answer {
    match &ran.outcome {
        Outcome::Failed(e) => Answer::Failed(format!("the hook {key} could not run: {e}")),
        Outcome::TimedOut => Answer::Failed(format!(
            "the hook {key} did not answer within {timeout_secs} s"
        )),
        Outcome::Exited(Some(0)) => spoke(&ran.stdout, ran.stdout_cut, key),
        Outcome::Exited(Some(2)) => Answer::Blocked(if ran.stderr.is_empty() {
            format!("the hook {key} exited with status 2")
        } else {
            ran.stderr.clone()
        }),
        Outcome::Exited(code) => {
            let status = code.map_or_else(|| "a signal".to_string(), |c| format!("status {c}"));
            Answer::Failed(if ran.stderr.is_empty() {
                format!("the hook {key} exited with {status}")
            } else {
                format!("the hook {key} exited with {status}: {}", ran.stderr)
            })
        }
    }
}

fn spoke(stdout: &str, cut: bool, key: &str) -> Answer {
    let text = stdout.trim();
    if text.is_empty() {
        return Answer::Spoke(None);
    }
    if !text.starts_with('{') {
        return Answer::Plain(text.to_string());
    }
    if cut {
        return Answer::Failed(format!(
            "the hook {key} answered with more than {} bytes",
            super::run::OUTPUT_LIMIT
        ));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Answer::Spoke(Some(value)),
        Ok(_) | Err(_) => Answer::Failed(format!(
            "the hook {key} answered with stdout that starts like JSON but is not a JSON object"
        )),
    }
}

/// A PreToolUse hook's verdict on a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolVerdict {
    /// No opinion: the decision goes on.
    NoOpinion,
    /// `allow` (or the old `approve`): the decision still goes on, since a
    /// hook never loosens it.
    Allow,
    Ask(String),
    Deny(String),
}

impl ToolVerdict {
    /// The word the audit log records.
    pub fn word(&self) -> &'static str {
        match self {
            ToolVerdict::NoOpinion => "none",
            ToolVerdict::Allow => "allow",
            ToolVerdict::Ask(_) => "ask",
            ToolVerdict::Deny(_) => "deny",
        }
    }
}

fn text_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut at = value;
    for key in path {
        at = at.get(key)?;
    }
    at.as_str()
}

/// `continue: false` stops the work: `stopReason`, or a sentence.
fn stopped(value: &Value, key: &str) -> Option<String> {
    (value.get("continue") == Some(&Value::Bool(false))).then(|| {
        text_at(value, &["stopReason"])
            .filter(|r| !r.trim().is_empty())
            .map_or_else(
                || format!("the hook {key} answered continue: false"),
                str::to_string,
            )
    })
}

/// A PreToolUse hook's whole answer: its verdict, and the input it gives
/// the call instead (`updatedInput`, a JSON object in Claude Code's
/// fields), which is prepared and decided anew.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolAnswer {
    pub verdict: ToolVerdict,
    pub updated_input: Option<Value>,
}

/// The PreToolUse answer in `answer`: a denial takes no new input.
pub fn pre_tool_use(answer: Answer, key: &str) -> PreToolAnswer {
    let updated = match &answer {
        Answer::Spoke(Some(value)) => value
            .get("hookSpecificOutput")
            .and_then(|h| h.get("updatedInput"))
            .filter(|v| !v.is_null())
            .cloned(),
        _ => None,
    };
    let verdict = pre_tool_verdict(answer, key);
    match (verdict, updated) {
        (ToolVerdict::Deny(reason), _) => PreToolAnswer {
            verdict: ToolVerdict::Deny(reason),
            updated_input: None,
        },
        (_, Some(input)) if !input.is_object() => PreToolAnswer {
            verdict: ToolVerdict::Deny(format!(
                "the hook {key} answered an updatedInput that is not a JSON object of the tool's fields"
            )),
            updated_input: None,
        },
        (verdict, updated_input) => PreToolAnswer {
            verdict,
            updated_input,
        },
    }
}

fn pre_tool_verdict(answer: Answer, key: &str) -> ToolVerdict {
    let value = match answer {
        Answer::Spoke(Some(value)) => value,
        Answer::Spoke(None) | Answer::Plain(_) => return ToolVerdict::NoOpinion,
        Answer::Blocked(reason) | Answer::Failed(reason) => return ToolVerdict::Deny(reason),
    };
    if let Some(reason) = stopped(&value, key) {
        return ToolVerdict::Deny(reason);
    }
    let reason = |path: &[&str]| {
        text_at(&value, path)
            .filter(|r| !r.trim().is_empty())
            .map_or_else(|| format!("the hook {key} gave no reason"), str::to_string)
    };
    if let Some(decision) = value
        .get("hookSpecificOutput")
        .and_then(|h| h.get("permissionDecision"))
    {
        let why = || reason(&["hookSpecificOutput", "permissionDecisionReason"]);
        return match decision.as_str() {
            Some("allow") => ToolVerdict::Allow,
            Some("ask") => ToolVerdict::Ask(why()),
            Some("deny") => ToolVerdict::Deny(why()),
            _ => ToolVerdict::Deny(format!(
                "the hook {key} answered permissionDecision {decision}, which is not allow, deny or ask"
            )),
        };
    }
    match value.get("decision") {
        None | Some(Value::Null) => ToolVerdict::NoOpinion,
        Some(decision) => match decision.as_str() {
            Some("approve") => ToolVerdict::Allow,
            Some("block") => ToolVerdict::Deny(reason(&["reason"])),
            _ => ToolVerdict::Deny(format!(
                "the hook {key} answered decision {decision}, which is not approve or block"
            )),
        },
    }
}

/// A PermissionRequest hook's answer to a question about to be put to
/// the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionVerdict {
    /// No opinion (or a failure, said as a warning): the person is asked.
    Ask(Option<String>),
    /// `behavior: "allow"`: the call runs once, as if the person allowed it.
    Allow,
    /// `behavior: "deny"` (or exit 2): rejected, with the message for the
    /// model.
    Deny(String),
}

impl PermissionVerdict {
    /// The word the audit log records.
    pub fn word(&self) -> &'static str {
        match self {
            PermissionVerdict::Ask(_) => "none",
            PermissionVerdict::Allow => "allow",
            PermissionVerdict::Deny(_) => "deny",
        }
    }
}

/// The PermissionRequest verdict in `answer`. A hook that fails leaves the
/// question to the person (a warning says why): asking is the closed side
/// here. An allow with an `updatedInput` is not taken, since the call was
/// decided on its input; a PreToolUse hook may change it before that.
pub fn permission_request(answer: Answer, key: &str) -> PermissionVerdict {
    let value = match answer {
        Answer::Spoke(Some(value)) => value,
        Answer::Spoke(None) | Answer::Plain(_) => return PermissionVerdict::Ask(None),
        Answer::Blocked(reason) => return PermissionVerdict::Deny(reason),
        Answer::Failed(reason) => return PermissionVerdict::Ask(Some(reason)),
    };
    if let Some(reason) = stopped(&value, key) {
        return PermissionVerdict::Deny(reason);
    }
    let Some(decision) = value
        .get("hookSpecificOutput")
        .and_then(|h| h.get("decision"))
    else {
        return PermissionVerdict::Ask(None);
    };
    match decision.get("behavior").and_then(Value::as_str) {
        Some("allow") if decision.get("updatedInput").is_some_and(|v| !v.is_null()) => {
            PermissionVerdict::Ask(Some(format!(
                "the hook {key} answered allow with an updatedInput, which mino does not take here (the call was decided on its input; a PreToolUse hook may change it before the decision), so the question is put to you"
            )))
        }
        Some("allow") => PermissionVerdict::Allow,
        Some("deny") => PermissionVerdict::Deny(
            text_at(decision, &["message"])
                .filter(|m| !m.trim().is_empty())
                .map_or_else(|| format!("the hook {key} denied it"), str::to_string),
        ),
        _ => PermissionVerdict::Ask(Some(format!(
            "the hook {key} answered decision.behavior {}, which is not allow or deny, so the question is put to you",
            decision.get("behavior").unwrap_or(&Value::Null)
        ))),
    }
}

/// A UserPromptSubmit hook's verdict on a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptVerdict {
    /// The prompt goes on, with what the hook adds for the model.
    Pass { context: Option<String> },
    /// The prompt is not sent; the reason is shown to the person.
    Block(String),
}

/// The UserPromptSubmit verdict in `answer` (plain stdout is context, as
/// in Claude Code).
pub fn user_prompt_submit(answer: Answer, key: &str) -> PromptVerdict {
    let value = match answer {
        Answer::Spoke(Some(value)) => value,
        Answer::Spoke(None) => return PromptVerdict::Pass { context: None },
        Answer::Plain(text) => {
            return PromptVerdict::Pass {
                context: Some(text),
            };
        }
        Answer::Blocked(reason) | Answer::Failed(reason) => return PromptVerdict::Block(reason),
    };
    if let Some(reason) = stopped(&value, key) {
        return PromptVerdict::Block(reason);
    }
    match value.get("decision") {
        None | Some(Value::Null) => {}
        Some(decision) if decision.as_str() == Some("block") => {
            return PromptVerdict::Block(
                text_at(&value, &["reason"])
                    .filter(|r| !r.trim().is_empty())
                    .map_or_else(|| format!("the hook {key} gave no reason"), str::to_string),
            );
        }
        Some(decision) => {
            return PromptVerdict::Block(format!(
                "the hook {key} answered decision {decision}, which is not block"
            ));
        }
    }
    PromptVerdict::Pass {
        context: additional_context(&value),
    }
}

fn additional_context(value: &Value) -> Option<String> {
    text_at(value, &["hookSpecificOutput", "additionalContext"])
        .filter(|c| !c.trim().is_empty())
        .map(str::to_string)
}

/// What a PostToolUse hook adds for the model (`additionalContext`, and
/// the reason of a `block`, which Claude Code also shows its model: the
/// call has run, so nothing else changes), or why the hook failed.
pub fn post_tool_use(answer: Answer) -> Result<Option<String>, String> {
    match answer {
        Answer::Spoke(Some(value)) => {
            let mut parts: Vec<String> = Vec::new();
            if value.get("decision").and_then(Value::as_str) == Some("block")
                && let Some(reason) = text_at(&value, &["reason"]).filter(|r| !r.trim().is_empty())
            {
                parts.push(reason.to_string());
            }
            parts.extend(additional_context(&value));
            Ok((!parts.is_empty()).then(|| parts.join("\n")))
        }
        Answer::Spoke(None) | Answer::Plain(_) => Ok(None),
        Answer::Blocked(reason) => Ok(Some(reason)),
        Answer::Failed(reason) => Err(reason),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            outcome: Outcome::Exited(Some(code)),
            stdout: stdout.into(),
            stdout_cut: false,
            stderr: stderr.into(),
        }
    }

    fn pre(code: i32, stdout: &str, stderr: &str) -> ToolVerdict {
        pre_tool_use(answer(&ran(code, stdout, stderr), "h", 10), "h").verdict
    }

    #[test]
    fn pre_tool_use_answers_map_onto_what_a_hook_may_do() {
        assert_eq!(pre(0, "", ""), ToolVerdict::NoOpinion);
        assert_eq!(pre(0, "checked\n", ""), ToolVerdict::NoOpinion);
        assert_eq!(pre(2, "", "no rm"), ToolVerdict::Deny("no rm".into()));
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "not here"}});
        assert_eq!(
            pre(0, &deny.to_string(), ""),
            ToolVerdict::Deny("not here".into())
        );
        let allow = json!({"hookSpecificOutput": {"permissionDecision": "allow"}});
        assert_eq!(pre(0, &allow.to_string(), ""), ToolVerdict::Allow);
        let ask = json!({"hookSpecificOutput": {"permissionDecision": "ask",
            "permissionDecisionReason": "check"}});
        assert_eq!(
            pre(0, &ask.to_string(), ""),
            ToolVerdict::Ask("check".into())
        );
        let block = json!({"decision": "block", "reason": "old style"});
        assert_eq!(
            pre(0, &block.to_string(), ""),
            ToolVerdict::Deny("old style".into())
        );
        let stop = json!({"continue": false, "stopReason": "halt", "suppressOutput": true});
        assert_eq!(
            pre(0, &stop.to_string(), ""),
            ToolVerdict::Deny("halt".into())
        );
    }

    #[test]
    fn a_failing_or_unreadable_hook_fails_closed() {
        assert!(matches!(pre(1, "", "boom"), ToolVerdict::Deny(r) if r.contains("boom")));
        assert!(matches!(pre(0, "{not json", ""), ToolVerdict::Deny(_)));
        assert!(matches!(pre(0, "[1]", ""), ToolVerdict::NoOpinion));
        let odd = json!({"hookSpecificOutput": {"permissionDecision": "ALLOW"}});
        assert!(matches!(pre(0, &odd.to_string(), ""), ToolVerdict::Deny(_)));
        let odd = json!({"decision": "yes"});
        assert!(matches!(pre(0, &odd.to_string(), ""), ToolVerdict::Deny(_)));
        let timed_out = Ran {
            outcome: Outcome::TimedOut,
            stdout: String::new(),
            stdout_cut: false,
            stderr: String::new(),
        };
        assert!(matches!(
            pre_tool_use(answer(&timed_out, "h", 3), "h").verdict,
            ToolVerdict::Deny(r) if r.contains("within 3 s")
        ));
        let mut cut = ran(0, "{\"a\": 1}", "");
        cut.stdout_cut = true;
        assert!(matches!(
            pre_tool_use(answer(&cut, "h", 3), "h").verdict,
            ToolVerdict::Deny(_)
        ));
    }

    #[test]
    fn an_updated_input_comes_with_an_allow_or_no_opinion_never_a_denial() {
        let read = |out: Value| pre_tool_use(answer(&ran(0, &out.to_string(), ""), "h", 1), "h");
        let changed = read(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "updatedInput": {"command": "ls -a"}}}));
        assert_eq!(changed.verdict, ToolVerdict::Allow);
        assert_eq!(changed.updated_input, Some(json!({"command": "ls -a"})));
        let bare = read(json!({"hookSpecificOutput": {"updatedInput": {"command": "ls"}}}));
        assert_eq!(bare.verdict, ToolVerdict::NoOpinion);
        assert!(bare.updated_input.is_some());
        let denied = read(json!({"hookSpecificOutput": {"permissionDecision": "deny",
            "permissionDecisionReason": "no", "updatedInput": {"command": "ls"}}}));
        assert_eq!(denied.verdict, ToolVerdict::Deny("no".into()));
        assert_eq!(denied.updated_input, None);
        let odd = read(json!({"hookSpecificOutput": {"updatedInput": "ls"}}));
        assert!(matches!(odd.verdict, ToolVerdict::Deny(r) if r.contains("not a JSON object")));
        assert_eq!(odd.updated_input, None);
    }

    #[test]
    fn a_permission_request_hook_allows_denies_or_leaves_it_to_the_person() {
        let read = |code, out: &str, err: &str| {
            permission_request(answer(&ran(code, out, err), "h", 1), "h")
        };
        let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}});
        assert_eq!(read(0, &allow.to_string(), ""), PermissionVerdict::Allow);
        let deny = json!({"hookSpecificOutput": {"decision": {"behavior": "deny",
            "message": "not on Fridays"}}});
        assert_eq!(
            read(0, &deny.to_string(), ""),
            PermissionVerdict::Deny("not on Fridays".into())
        );
        assert_eq!(read(2, "", "no"), PermissionVerdict::Deny("no".into()));
        assert_eq!(read(0, "", ""), PermissionVerdict::Ask(None));
        assert!(
            matches!(read(1, "", "boom"), PermissionVerdict::Ask(Some(w)) if w.contains("boom"))
        );
        let rewrite = json!({"hookSpecificOutput": {"decision": {"behavior": "allow",
            "updatedInput": {"command": "rm -rf /"}}}});
        assert!(matches!(
            read(0, &rewrite.to_string(), ""),
            PermissionVerdict::Ask(Some(w)) if w.contains("updatedInput")
        ));
        let odd = json!({"hookSpecificOutput": {"decision": {"behavior": "ALLOW"}}});
        assert!(matches!(
            read(0, &odd.to_string(), ""),
            PermissionVerdict::Ask(Some(_))
        ));
    }

    #[test]
    fn prompts_are_blocked_or_given_context() {
        let verdict = |code, out: &str, err: &str| {
            user_prompt_submit(answer(&ran(code, out, err), "h", 1), "h")
        };
        assert_eq!(verdict(0, "", ""), PromptVerdict::Pass { context: None });
        assert_eq!(
            verdict(0, "today is Tuesday", ""),
            PromptVerdict::Pass {
                context: Some("today is Tuesday".into())
            }
        );
        assert_eq!(verdict(2, "", "no"), PromptVerdict::Block("no".into()));
        let block = json!({"decision": "block", "reason": "policy"});
        assert_eq!(
            verdict(0, &block.to_string(), ""),
            PromptVerdict::Block("policy".into())
        );
        let add = json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
            "additionalContext": "ticket 42"}});
        assert_eq!(
            verdict(0, &add.to_string(), ""),
            PromptVerdict::Pass {
                context: Some("ticket 42".into())
            }
        );
        assert!(matches!(verdict(7, "", ""), PromptVerdict::Block(_)));
    }

    #[test]
    fn post_tool_use_only_adds_context() {
        let read = |code, out: &str| post_tool_use(answer(&ran(code, out, "e"), "h", 1));
        assert_eq!(read(0, ""), Ok(None));
        let add = json!({"hookSpecificOutput": {"additionalContext": "lint: ok"}});
        assert_eq!(read(0, &add.to_string()), Ok(Some("lint: ok".into())));
        assert_eq!(read(2, ""), Ok(Some("e".into())));
        assert!(read(1, "").is_err());
    }
}
