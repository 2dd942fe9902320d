//! Builds a running agent from validated settings: the project, the tools
//! that exist, the model service, the session store, the system prompt.
//! Every failure is a sentence naming what is at fault.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::config::Settings;
use crate::home::Home;
use crate::model::{ProviderConfig, build_provider};
use crate::policy::CanAsk;
use crate::session::SessionStore;
use crate::tools::registry::Switches;
use crate::tools::{Project, Registry, ToolContext};

use super::audit::Audit;
use super::driver::Runtime;
use super::hook::Hook;
use super::prompt::system_prompt;
use super::sessions::Agent;
use super::task::{AgentHandle, spawn};
use super::turn::Limits;

/// How long a preToolCall hook may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The tool context for `project` under `settings`.
pub fn tool_context(settings: &Settings, project: Project) -> ToolContext {
    let mut cx = ToolContext::new(project);
    cx.protected = Arc::new(settings.protected());
    cx.bash_timeout = settings.limits.bash_timeout;
    cx.bash_output_limit = settings.limits.bash_output_bytes;
    cx.hidden_env = vec![settings.model.api_key_env.clone()];
    cx
}

/// The tools that exist under `settings`.
pub fn registry(settings: &Settings) -> Registry {
    Registry::new(Switches {
        bash: settings.tools.bash,
        edit: settings.tools.edit,
        fetch: settings.tools.fetch,
    })
}

/// The preToolCall hook, when the user's settings name one.
pub fn hook(settings: &Settings) -> Option<Hook> {
    settings.pre_tool_call.as_ref().map(|argv| Hook {
        argv: argv.clone(),
        timeout: HOOK_TIMEOUT,
    })
}

/// The model service's configuration; the key is read from its variable.
pub fn provider_config(settings: &Settings) -> ProviderConfig {
    let m = &settings.model;
    ProviderConfig {
        kind: m.provider,
        base_url: m.base_url.clone(),
        model: m.model.clone(),
        api_key: std::env::var(&m.api_key_env).ok().filter(|k| !k.is_empty()),
        extra_body: m.extra_body.clone(),
        script: m.script.clone(),
        request_timeout: m.request_timeout,
        connect_timeout: Duration::from_secs(10),
        max_retries: m.max_retries,
    }
}

/// Everything needed to start the agent.
pub struct Launch<'a> {
    pub home: &'a Home,
    pub settings: &'a Settings,
    pub project_dir: &'a Path,
    pub can_ask: CanAsk,
    pub resume: Option<&'a str>,
}

/// Builds and starts the agent on its own task.
pub fn launch(launch: Launch<'_>) -> Result<AgentHandle, String> {
    let Launch {
        home,
        settings,
        project_dir,
        can_ask,
        resume,
    } = launch;
    let project = Project::new(project_dir).map_err(|e| {
        format!(
            "the project directory {} cannot be used: {e}",
            project_dir.display()
        )
    })?;
    let user_soul = std::fs::read_to_string(home.soul_file()).ok();
    let system = system_prompt(user_soul, &project);
    let project_name = project.root().display().to_string();
    let provider = build_provider(&provider_config(settings)).map_err(|e| e.to_string())?;
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let rt = Runtime {
        provider,
        registry: registry(settings),
        protected: settings.protected(),
        tool_cx: tool_context(settings, project),
        limits: Limits {
            requests: settings.limits.turn_requests,
            tool_calls: settings.limits.turn_tool_calls,
        },
        system,
        can_ask,
        hook: hook(settings),
        context_window: settings.model.context_window,
        events: events_tx,
        audit: Some(Audit::open(&home.audit_log())?),
    };
    let store = SessionStore::new(home.sessions_dir());
    let agent = Agent::start(
        rt,
        store,
        settings.start_mode,
        project_name,
        settings.model.model.clone(),
        resume,
    )?;
    Ok(spawn(agent, events_rx))
}
