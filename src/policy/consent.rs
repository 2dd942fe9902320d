//! The four answers to a question and what a session (and the run) remembers
//! of them. Memory lives in this process only; nothing here is ever written.

use std::collections::BTreeSet;

use super::{CallFacts, CallKind, Mode, ToolKey};

/// One answer to a permission question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentAnswer {
    AllowOnce,
    AllowForSession,
    Reject,
    NeverThisRun,
}

impl ConsentAnswer {
    /// The four answers, in the order a question shows them.
    pub const ALL: [ConsentAnswer; 4] = [
        ConsentAnswer::AllowOnce,
        ConsentAnswer::AllowForSession,
        ConsentAnswer::Reject,
        ConsentAnswer::NeverThisRun,
    ];

    /// The letter that gives this answer in every front end.
    pub const fn key(self) -> char {
        match self {
            ConsentAnswer::AllowOnce => 'y',
            ConsentAnswer::AllowForSession => 'a',
            ConsentAnswer::Reject => 'n',
            ConsentAnswer::NeverThisRun => 'v',
        }
    }

    /// The answer a letter gives.
    pub fn from_key(key: char) -> Option<ConsentAnswer> {
        Self::ALL.into_iter().find(|answer| answer.key() == key)
    }

    /// What the answer does, as help says it.
    pub fn label(self) -> &'static str {
        match self {
            ConsentAnswer::AllowOnce => "allow once",
            ConsentAnswer::AllowForSession => "allow this tool for the session",
            ConsentAnswer::Reject => "reject",
            ConsentAnswer::NeverThisRun => "never allow this tool while mino runs",
        }
    }

    /// The next answer in `ALL`, round.
    pub fn next(self) -> ConsentAnswer {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    /// The previous answer in `ALL`, round.
    pub fn prev(self) -> ConsentAnswer {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }

    fn index(self) -> usize {
        match self {
            ConsentAnswer::AllowOnce => 0,
            ConsentAnswer::AllowForSession => 1,
            ConsentAnswer::Reject => 2,
            ConsentAnswer::NeverThisRun => 3,
        }
    }

    pub fn allows(self) -> bool {
        matches!(
            self,
            ConsentAnswer::AllowOnce | ConsentAnswer::AllowForSession
        )
    }

    /// The chat line that says what the answer means for the session.
    pub fn describe(self, tool: &ToolKey) -> String {
        match self {
            ConsentAnswer::AllowOnce => format!("Allowed {tool} once."),
            ConsentAnswer::AllowForSession => format!("Allowed {tool} for this session."),
            ConsentAnswer::Reject => format!("Rejected this {tool} call."),
            ConsentAnswer::NeverThisRun => {
                format!("{tool} will not be allowed again while mino runs.")
            }
        }
    }
}

/// What loosens stays with its session: the tools allowed for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionConsent {
    allowed: BTreeSet<ToolKey>,
    /// Exact command lines allowed for the session (gated bash in auto
    /// mode, and the bypass guard).
    commands: BTreeSet<(ToolKey, String)>,
}

impl SessionConsent {
    pub fn allows(&self, tool: &ToolKey) -> bool {
        self.allowed.contains(tool)
    }

    pub fn allows_command(&self, tool: &ToolKey, command: &str) -> bool {
        self.commands.contains(&(tool.clone(), command.to_string()))
    }

    pub fn allow_command(&mut self, tool: ToolKey, command: &str) {
        self.commands.insert((tool, command.to_string()));
    }

    pub fn allow(&mut self, tool: ToolKey) {
        self.allowed.insert(tool);
    }

    /// What this session allows without asking, tools first, then exact
    /// command lines, each in a stable order.
    pub fn grants(&self) -> Vec<Grant> {
        let tools = self.allowed.iter().map(|tool| Grant {
            scope: GrantScope::Session,
            tool: tool.clone(),
            command: None,
        });
        let commands = self.commands.iter().map(|(tool, command)| Grant {
            scope: GrantScope::Session,
            tool: tool.clone(),
            command: Some(command.clone()),
        });
        tools.chain(commands).collect()
    }

    /// Forgets `grant`; true when the session held it.
    pub fn revoke(&mut self, grant: &Grant) -> bool {
        match &grant.command {
            Some(command) => self.commands.remove(&(grant.tool.clone(), command.clone())),
            None => self.allowed.remove(&grant.tool),
        }
    }
}

/// What holds for every session of this run: tools the user said "never"
/// to, and the saved rules of the settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunConsent {
    never: BTreeSet<ToolKey>,
    rules: std::sync::Arc<super::saved::SavedRules>,
}

impl RunConsent {
    /// A run whose calls the saved `rules` decide first.
    pub fn with_rules(rules: std::sync::Arc<super::saved::SavedRules>) -> Self {
        Self {
            never: BTreeSet::new(),
            rules,
        }
    }

    pub fn rules(&self) -> &super::saved::SavedRules {
        &self.rules
    }

    pub fn refuses(&self, tool: &ToolKey) -> bool {
        self.never.contains(tool)
    }

    pub fn never(&mut self, tool: ToolKey) {
        self.never.insert(tool);
    }

    /// The tools refused for the rest of the run, in a stable order.
    pub fn grants(&self) -> Vec<Grant> {
        self.never
            .iter()
            .map(|tool| Grant {
                scope: GrantScope::Run,
                tool: tool.clone(),
                command: None,
            })
            .collect()
    }

    /// Forgets a "never"; true when the run held it.
    pub fn revoke(&mut self, tool: &ToolKey) -> bool {
        self.never.remove(tool)
    }
}

/// Which memory an answer lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantScope {
    /// "Allow for this session": this session only.
    Session,
    /// "Never": every session of this run.
    Run,
}

/// One remembered answer, as `/permissions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Grant {
    pub scope: GrantScope,
    pub tool: ToolKey,
    /// The exact command line an allowance covers, when it covers only one.
    pub command: Option<String>,
}

impl Grant {
    /// `bash allowed for this session`, `bash: "ls -l" allowed for this
    /// session`, `bash never allowed while mino runs`.
    pub fn describe(&self) -> String {
        match (self.scope, &self.command) {
            (GrantScope::Session, None) => format!("{} allowed for this session", self.tool),
            (GrantScope::Session, Some(command)) => {
                format!("{} {command:?} allowed for this session", self.tool)
            }
            (GrantScope::Run, _) => format!("{} never allowed while mino runs", self.tool),
        }
    }
}

/// Every answer remembered for the session in use and the run: the
/// session's allowances, then the run's refusals.
pub fn grants(session: &SessionConsent, run: &RunConsent) -> Vec<Grant> {
    let mut all = session.grants();
    all.extend(run.grants());
    all
}

/// Forgets `grant` wherever it is held; true when it was.
pub fn revoke(grant: &Grant, session: &mut SessionConsent, run: &mut RunConsent) -> bool {
    match grant.scope {
        GrantScope::Session => session.revoke(grant),
        GrantScope::Run => run.revoke(&grant.tool),
    }
}

/// The exact command line an answer about this call is remembered for,
/// when it is one: a bash call the gate decided on in auto mode, or one the
/// bypass guard stopped in bypass mode.
pub fn command_scoped(facts: &CallFacts, mode: Mode) -> Option<&str> {
    match (&facts.kind, &facts.command) {
        (CallKind::Shell, Some(command))
            if (mode == Mode::Auto && facts.gate.is_some())
                || (mode == Mode::Bypass && facts.guard.is_some()) =>
        {
            Some(command)
        }
        _ => None,
    }
}

/// What a question about one call offers: the answers it may be given,
/// and, when "allow for session" covers one command line only, that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub answers: &'static [ConsentAnswer],
    pub command: Option<String>,
}

/// What a command no checkpoint undoes may be given: once, or not at all.
const ONCE_OR_NOT: [ConsentAnswer; 2] = [ConsentAnswer::AllowOnce, ConsentAnswer::Reject];

impl Offer {
    /// The four answers, "allow for session" covering the tool.
    pub fn all() -> Self {
        Self {
            answers: &ConsentAnswer::ALL,
            command: None,
        }
    }

    /// Whether `answer` was offered; any other answer rejects the call.
    pub fn allows(&self, answer: ConsentAnswer) -> bool {
        self.answers.contains(&answer)
    }

    /// The offered answer after `from` (before it when `back`), round.
    pub fn step(&self, from: ConsentAnswer, back: bool) -> ConsentAnswer {
        let mut at = from;
        for _ in 0..ConsentAnswer::ALL.len() {
            at = if back { at.prev() } else { at.next() };
            if self.allows(at) {
                return at;
            }
        }
        from
    }

    /// What `answer`'s choice says in every front end, for a call of `tool`.
    pub fn label(&self, answer: ConsentAnswer, tool: &str) -> String {
        match (answer, &self.command) {
            (ConsentAnswer::AllowForSession, Some(_)) => {
                "allow this exact command line for this session".into()
            }
            (ConsentAnswer::AllowForSession, None) => format!("allow {tool} for this session"),
            (ConsentAnswer::NeverThisRun, _) => format!("never allow {tool} while mino runs"),
            (other, _) => other.label().into(),
        }
    }
}

/// What the question about this call offers in `mode`: a command the
/// bypass guard stopped (it may change what no checkpoint restores) is
/// allowed once or rejected, never remembered; a command-scoped call's
/// "allow for session" covers its exact command line.
pub fn offer(facts: &CallFacts, mode: Mode) -> Offer {
    if mode == Mode::Bypass && facts.kind == CallKind::Shell && facts.guard.is_some() {
        return Offer {
            answers: &ONCE_OR_NOT,
            command: None,
        };
    }
    Offer {
        answers: &ConsentAnswer::ALL,
        command: command_scoped(facts, mode).map(str::to_string),
    }
}

/// Records `answer` about one prepared call: "allow for session" on a
/// command-scoped call allows only that exact command line.
pub fn remember_call(
    answer: ConsentAnswer,
    facts: &CallFacts,
    mode: Mode,
    session: &mut SessionConsent,
    run: &mut RunConsent,
) {
    match (answer, command_scoped(facts, mode)) {
        (ConsentAnswer::AllowForSession, Some(command)) => {
            session.allow_command(facts.tool.clone(), command);
        }
        _ => remember(answer, &facts.tool, session, run),
    }
}

/// Records `answer` for `tool` in the memory it belongs to.
pub fn remember(
    answer: ConsentAnswer,
    tool: &ToolKey,
    session: &mut SessionConsent,
    run: &mut RunConsent,
) {
    match answer {
        ConsentAnswer::AllowForSession => session.allow(tool.clone()),
        ConsentAnswer::NeverThisRun => run.never(tool.clone()),
        ConsentAnswer::AllowOnce | ConsentAnswer::Reject => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tool: &str) -> ToolKey {
        ToolKey::new(tool)
    }

    #[test]
    fn grants_list_the_session_then_the_run_and_revoke_each() {
        let mut session = SessionConsent::default();
        let mut run = RunConsent::default();
        assert!(grants(&session, &run).is_empty());
        session.allow(key("edit_file"));
        session.allow_command(key("bash"), "ls -l");
        run.never(key("fetch_content"));
        let all = grants(&session, &run);
        let described: Vec<String> = all.iter().map(Grant::describe).collect();
        assert_eq!(
            described,
            vec![
                "edit_file allowed for this session",
                "bash \"ls -l\" allowed for this session",
                "fetch_content never allowed while mino runs",
            ]
        );
        assert!(revoke(&all[1], &mut session, &mut run));
        assert!(!session.allows_command(&key("bash"), "ls -l"));
        assert!(session.allows(&key("edit_file")), "only that one");
        assert!(revoke(&all[2], &mut session, &mut run));
        assert!(!run.refuses(&key("fetch_content")));
        assert!(revoke(&all[0], &mut session, &mut run));
        assert!(!session.allows(&key("edit_file")));
        assert!(grants(&session, &run).is_empty());
        assert!(!revoke(&all[0], &mut session, &mut run), "already gone");
    }
}
