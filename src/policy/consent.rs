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
    pub fn key(self) -> char {
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
}

/// What tightens may spread: tools the user said "never" to, for every
/// session of this run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunConsent {
    never: BTreeSet<ToolKey>,
}

impl RunConsent {
    pub fn refuses(&self, tool: &ToolKey) -> bool {
        self.never.contains(tool)
    }

    pub fn never(&mut self, tool: ToolKey) {
        self.never.insert(tool);
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
