//! The tools a run offers the model, by profile: the default profile's
//! table (skill_view only with skills, bash without its way out of the
//! sandbox where nobody could allow it, the trusted executables named, the
//! background-process tools with bash), or the small profile's seven
//! (`tools::small`), and each profile's system prompt. MCP servers' tools
//! are added by the launch either way.
//! Never decides a call: the decision is the same in both profiles.

use std::sync::Arc;

use crate::config::{ProfileChoice, Settings};
use crate::policy::CanAsk;
use crate::tools::registry::Switches;
use crate::tools::{Registry, ToolContext};

/// The built-in tools offered under `profile`.
pub fn tools(
    settings: &Settings,
    profile: ProfileChoice,
    has_skills: bool,
    can_ask: CanAsk,
    shells: &Arc<crate::tools::bash::Shells>,
) -> Registry {
    if profile.is_small() {
        let mut tools = Registry::small(Switches {
            bash: settings.tools.bash,
            edit: settings.tools.edit,
            ..Switches::default()
        });
        if let Some(spec) = super::build::trusted_spec(&tools, settings) {
            tools = tools.with_spec(spec);
        }
        return tools;
    }
    let mut tools = super::build::registry(settings);
    if !has_skills {
        tools = tools.without(crate::tools::skill_view::NAME);
    }
    if can_ask == CanAsk::No
        && settings.sandbox.unsandboxed_in_bypass != crate::sandbox::UnsandboxedInBypass::Run
    {
        // Leaving the sandbox always asks, and nobody can answer: a call
        // that can only be refused is not offered.
        tools = tools.with_spec(crate::tools::bash::Bash::sandbox_only_spec());
    }
    if let Some(spec) = super::build::trusted_spec(&tools, settings) {
        tools = tools.with_spec(spec);
    }
    if settings.tools.bash {
        tools = tools.with_source(Arc::new(crate::tools::shell_tools::ShellTools::new(
            shells.clone(),
        )));
    }
    tools
}

/// The system prompt of a profile (`small`, or the default one): the
/// user's SOUL.md, else the profile's own.
pub fn prompt_for(
    user_soul: Option<String>,
    tool_cx: &ToolContext,
    shell: Option<&str>,
    small: bool,
) -> Result<(String, super::prompt::Loaded), super::error::AgentError> {
    let soul = user_soul.or_else(|| small.then(|| super::prompt::SMALL_SOUL.to_string()));
    super::prompt::system_prompt(soul, &tool_cx.project, &tool_cx.protected, shell, small)
}

/// The profile a switch of window could choose instead of `profile`.
pub fn other_profile(profile: crate::config::ProfileChoice) -> crate::config::ProfileChoice {
    let other = match profile.profile {
        crate::config::Profile::Small => crate::config::Profile::Default,
        crate::config::Profile::Default => crate::config::Profile::Small,
    };
    crate::config::ProfileChoice::choose(Some(other), 0)
}
