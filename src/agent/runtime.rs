//! What a turn needs that outlives it: the provider, the tools and their
//! context, the limits, the prompt, the event channel and the run's
//! settings the agent acts on. Built once by `build.rs`.

use crate::mcp::McpHub;
use crate::model::{Item, Provider};
use crate::policy::CanAsk;
use crate::tools::{Registry, ToolContext};

use super::audit::Audit;
use super::budget::{self, Budget};
use super::events::AgentEvent;
use super::hooks::Hooks;
use super::judge::Judge;
use super::live::LiveSession;
use super::turn::TurnLimits;

/// What a profile offers the model: its tools and its system prompt.
pub struct ProfileTools {
    pub registry: Registry,
    pub system: String,
}

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
    /// The user's hooks (Claude Code's events, and the legacy argv).
    pub hooks: Hooks,
    /// The shell gate's judge, when enabled.
    pub judge: Option<Judge>,
    pub context_window: u64,
    /// Where `context_window` came from when the server reported it.
    pub window_source: Option<String>,
    /// `[model] profile` in force, and whether the window chose it.
    pub profile: crate::config::ProfileChoice,
    /// Tokens of the window kept for the answer (`[model]
    /// max_output_tokens` in force).
    pub output_reserve: u64,
    pub events: super::events::EventSender,
    /// Where every decision is recorded, when mino's home has one.
    pub audit: Option<Audit>,
    /// The MCP servers of this run, for `/mcp`.
    pub mcp: Option<McpHub>,
    /// The agents this one can ask (`[agents.NAME]`).
    pub agents: std::collections::BTreeMap<String, crate::config::AskedAgent>,
    /// The execution surfaces of this project: a file write there asks in
    /// every mode.
    pub surfaces: crate::policy::Surfaces,
    /// The project's checkpoints, when mino's home keeps them.
    pub checkpoints: Option<std::sync::Arc<crate::checkpoint::Checkpoints>>,
    /// The user's settings file, where `/permissions save N` appends.
    pub settings_file: Option<std::path::PathBuf>,
    /// The services `/model` switches between and the one in use.
    pub setup: super::model_setup::ModelSetup,
    /// The tools and system prompt of the profile not in use, for a switch
    /// whose window chooses it.
    pub other_profile: ProfileTools,
}

impl Runtime {
    /// The context budget with `session`'s calibration.
    pub fn budget(&self, session: &LiveSession) -> Budget {
        Budget::new(self.context_window, self.output_reserve).with(session.calibration)
    }

    /// The estimated tokens of a request with `history`: system prompt,
    /// tool schemas and every item.
    pub fn estimate(&self, history: &[Item]) -> u64 {
        budget::fixed_tokens(&self.system, &self.registry.specs())
            + history.iter().map(budget::item_tokens).sum::<u64>()
    }

    /// Tells front ends what `session` spent so far.
    pub fn emit_spent(&self, session: &LiveSession) {
        self.emit(AgentEvent::Spent {
            input_tokens: session.spent.input_tokens,
            output_tokens: session.spent.output_tokens,
            cost_usd: session.spent.cost_usd(),
        });
    }

    /// The price of the model in use, when the settings give one.
    pub fn price(&self) -> Option<&crate::config::Price> {
        self.setup.active.choices.prices.get(self.provider.model())
    }

    pub fn emit(&self, event: AgentEvent) {
        // Errors, turn notices and an asked agent's words leave redacted,
        // as tool results do (waiting here, in the rare case the values
        // are still being read).
        let event = if event.carries_outside_words() {
            event.redacted(&self.tool_cx.secrets.now())
        } else {
            event
        };
        // A front end that has gone away cannot be told anything more.
        let _ = self.events.send(event);
    }
}
