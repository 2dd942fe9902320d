//! Builds a running agent from validated settings: the project, the tools
//! that exist, the model service, the session store, the system prompt.
//! Every failure is a sentence naming what is at fault.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{CliOverrides, EnvOverrides, Settings};
use crate::home::Home;
use crate::model::{ProviderConfig, build_provider};
use crate::policy::shell::{Rules, Trusted};
use crate::policy::{CanAsk, ProtectedPaths, ToolKey};
use crate::sandbox::{Planner, Sandbox, Support};
use crate::secrets::{HeldSecrets, Secrets};
use crate::session::SessionStore;
use crate::small_file::{Links, read_text};
use crate::tools::gate::GateSetup;
use crate::tools::registry::Switches;
use crate::tools::{Project, Registry, ToolContext};

use super::audit::Audit;
use super::driver::Runtime;
use super::error::AgentError;
use super::events::AgentEvent;
use super::hooks::Hooks;
use super::judge::Judge;
use super::prompt::shell_sentence;
use super::sessions::Agent;
use super::task::{AgentHandle, spawn};
use super::turn::TurnLimits;

/// The largest `SOUL.md` accepted.
const SOUL_LIMIT: u64 = 256 * 1024;

/// The tool context for `project` under `settings`.
pub fn tool_context(settings: &Settings, project: Project) -> ToolContext {
    tool_context_with(settings, project, Arc::new(settings.protected()))
}

/// `tool_context` with the protected paths compiled already.
fn tool_context_with(
    settings: &Settings,
    project: Project,
    protected: Arc<ProtectedPaths>,
) -> ToolContext {
    let mut cx = ToolContext::new(project);
    cx.protected = protected;
    cx.bash_timeout = settings.limits.bash_timeout;
    cx.bash_output_limit = settings.limits.bash_output_bytes;
    cx.shells = Arc::new(crate::tools::bash::Shells::new(
        settings.limits.background_shells,
    ));
    // Every service's key variable, the presets' too: a command never
    // sees one, and a value is redacted wherever it shows.
    cx.hidden_env = key_variables(settings);
    let mut secrets = Secrets::new();
    for variable in &cx.hidden_env {
        if let Ok(key) = std::env::var(variable) {
            secrets.add(variable, &key);
        }
    }
    // Every MCP credential joins them.
    for (name, value) in crate::mcp::credentials(&settings.mcp_servers) {
        secrets.add(&name, &value);
    }
    // The project's own secrets (env files, keys, remote URLs, history)
    // and those of the home's credential stores are read on the blocking
    // pool, off the first frame's path; every redaction waits for them.
    let root = cx.project.root().to_path_buf();
    let protected = cx.protected.clone();
    let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
    let cache = settings
        .mino_home
        .as_deref()
        .map(|h| super::history_secrets::Cache::new(h, &settings.protected_patterns));
    // The OAuth tokens of remote MCP servers kept in mino's home.
    let tokens = settings
        .mino_home
        .as_deref()
        .map(crate::mcp::oauth::TokenDir::new);
    cx.secrets = HeldSecrets::loading(secrets, move || {
        let mut values = super::secret_values::project_values(&root, &protected, cache.as_ref());
        if let Some(home) = home {
            values.extend(super::home_secrets::home_values(&home));
        }
        for token in tokens.iter().flat_map(|dir| dir.values()) {
            values.push(("an OAuth token of an MCP server".to_string(), token));
        }
        values
    });
    cx.gate = Arc::new(gate_setup(settings, cx.project.root()));
    cx.bash_guard = std::env::current_exe().ok();
    cx.fetch_private_hosts_allowed = settings.tools.fetch_private_hosts_allowed;
    // A variable an MCP server's env refers to is that server's credential.
    cx.hidden_env
        .extend(crate::mcp::referenced_variables(&settings.mcp_servers));
    cx
}

/// The variables holding the keys of `[model]` and of every preset.
pub(super) fn key_variables(settings: &Settings) -> Vec<String> {
    let mut names = vec![settings.model.api_key_env.clone()];
    for preset in settings.providers.values() {
        if !names.contains(&preset.api_key_env) {
            names.push(preset.api_key_env.clone());
        }
    }
    names
}

/// The shell gate's rules under `settings` for a project at `project_root`.
pub fn gate_setup(settings: &Settings, project_root: &Path) -> GateSetup {
    let gate = &settings.shell_gate;
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let mut rules = Rules::new(settings.protected());
    rules.trusted = gate
        .trusted_executables
        .iter()
        .map(|t| Trusted {
            path: text(&t.path),
            sha256: t.sha256.clone(),
        })
        .collect();
    rules.git = gate.git.as_deref().map(text);
    rules.mino_home = settings.mino_home.as_deref().map(text);
    rules.home = directories::BaseDirs::new().map(|dirs| text(dirs.home_dir()));
    rules.project_root = Some(text(project_root));
    GateSetup {
        rules,
        guard_bypass: gate.guard_bypass,
    }
}

/// The judge, when the user's settings enable it: its own provider, built
/// with no retries, and its deadline.
pub fn judge(settings: &Settings) -> Result<Option<Judge>, AgentError> {
    let judge = settings.shell_gate.judge;
    if !judge.enabled {
        return Ok(None);
    }
    let mut config = provider_config(&settings.model);
    config.max_retries = 0;
    config.request_timeout = judge.timeout;
    config.strict = true;
    let provider = build_provider(&config).map_err(AgentError::Judge)?;
    Ok(Some(Judge {
        provider,
        timeout: judge.timeout,
    }))
}

/// The sandbox bash runs in under `settings`, for the project at
/// `project_root`: probes what this machine supports (by starting the mino
/// binary as the sandbox helper) unless the sandbox is off.
pub fn sandbox_planner(
    settings: &Settings,
    home: &Home,
    project_root: &Path,
    protected: Arc<ProtectedPaths>,
) -> (Planner, Support) {
    let helper = std::env::current_exe().unwrap_or_default();
    let (sandbox, support) = if settings.sandbox.enabled {
        let support = Support::probe_once(&helper);
        let sandbox = Sandbox::choose(settings.sandbox.clone(), &support, helper);
        (sandbox, support)
    } else {
        (Sandbox::off(settings.sandbox.clone()), Support::default())
    };
    let user_home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let planner = Planner::new(
        sandbox,
        project_root.to_path_buf(),
        user_home,
        Some(home.root().to_path_buf()),
        protected,
    );
    (planner, support)
}

/// The tools that exist under `settings`.
pub fn registry(settings: &Settings) -> Registry {
    Registry::new(Switches {
        bash: settings.tools.bash,
        edit: settings.tools.edit,
        fetch: settings.tools.fetch,
        plan: settings.tools.plan,
        lsp: settings.tools.lsp,
    })
}

/// The user's hooks, run in the project at `project_root`.
pub fn hooks(settings: &Settings, project_root: &Path) -> Hooks {
    Hooks::new(&settings.hooks, project_root)
}

pub use super::model_setup::provider_config;

/// A remote service without its key answers 401 at the first request; say
/// so at the start instead. Local servers (Ollama, llama.cpp) need none.
fn missing_key(settings: &Settings, config: &ProviderConfig, file: &Path) -> Option<String> {
    if config.api_key.is_some() || config.kind == crate::config::ProviderKind::Scripted {
        return None;
    }
    if crate::config::is_loopback_url(&config.base_url) {
        return None;
    }
    Some(format!(
        "the variable {} is not set, so requests to {} go out without an API key (set it, or name another variable with api_key_env in the [model] table of {})",
        settings.model.api_key_env,
        crate::model::http::shown_url(&config.base_url),
        file.display()
    ))
}

/// Everything needed to start the agent.
pub struct Launch<'a> {
    pub home: &'a Home,
    pub settings: &'a Settings,
    pub project_dir: &'a Path,
    pub can_ask: CanAsk,
    pub resume: Option<&'a str>,
    /// The editor driving this agent (ACP), whose buffers file tools use.
    pub editor: crate::tools::editor::Editor,
    /// MCP servers wait for `McpHub::begin` (the full screen's first frame).
    pub defer_mcp: bool,
    /// Whether a person sees this start's notices (the banner), so that a
    /// changed instruction file is named until one has.
    pub notices: super::instructions_seen::Shown,
    /// Tools this run has refused already ("never" holds for every session
    /// of the run, in every project it moves to).
    pub never: Vec<ToolKey>,
}

/// What it takes to start the agent again in another project directory
/// (the full screen's "switch" for a session of another project): the
/// settings are read again for that directory, as at start.
#[derive(Debug, Clone)]
pub struct Relaunch {
    pub home: Home,
    pub user_file: PathBuf,
    pub env: EnvOverrides,
    pub overrides: CliOverrides,
    pub can_ask: CanAsk,
}

/// Why the agent could not start again in another directory.
#[derive(Debug, thiserror::Error)]
pub enum RelaunchError {
    #[error(transparent)]
    Settings(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

impl Relaunch {
    /// Starts the agent in `project_dir` under that directory's settings,
    /// resuming `resume` (a new session without one), with this run's
    /// "never" answers.
    pub async fn launch(
        &self,
        project_dir: &Path,
        resume: Option<&str>,
        never: Vec<ToolKey>,
    ) -> Result<(AgentHandle, crate::config::UiSettings), RelaunchError> {
        let settings = Settings::load_with_user_file(
            &self.home,
            &self.user_file,
            project_dir,
            &self.env,
            &self.overrides,
        )?;
        let handle = launch(Launch {
            home: &self.home,
            settings: &settings,
            project_dir,
            can_ask: self.can_ask,
            resume,
            editor: None,
            // The full screen has drawn already: the servers start at once.
            defer_mcp: false,
            notices: super::instructions_seen::Shown::ToAPerson,
            never,
        })
        .await?;
        Ok((handle, settings.ui))
    }
}

/// The bash spec naming the trusted executables, when the settings trust
/// any (`tools::bash::trusting`).
pub(crate) fn trusted_spec(
    tools: &Registry,
    settings: &Settings,
) -> Option<crate::model::ToolSpec> {
    let paths: Vec<String> = settings
        .shell_gate
        .trusted_executables
        .iter()
        .map(|t| t.path.display().to_string())
        .collect();
    bash_spec_trusting(tools, &paths)
}

/// `tools`' bash spec naming `paths`; `None` for none.
pub(crate) fn bash_spec_trusting(
    tools: &Registry,
    paths: &[String],
) -> Option<crate::model::ToolSpec> {
    let spec = tools
        .specs()
        .into_iter()
        .find(|s| s.name == crate::tools::bash::NAME)?;
    (!paths.is_empty()).then(|| crate::tools::bash::trusting(spec, paths))
}

/// Builds and starts the agent on its own task.
pub async fn launch(launch: Launch<'_>) -> Result<AgentHandle, AgentError> {
    let Launch {
        home,
        settings,
        project_dir,
        can_ask,
        resume,
        editor,
        defer_mcp,
        notices,
        never,
    } = launch;
    crate::logging::startup_step("launch");
    let window = tokio::spawn(crate::model::window::for_settings(settings.model.clone()));
    let project = Project::new(project_dir).map_err(|source| AgentError::Project {
        path: project_dir.to_path_buf(),
        source,
    })?;
    let protected = Arc::new(settings.protected());
    // The root is judged like any path before anything is read in it:
    // every front end (--cd, the current directory, ACP's cwd, an asked
    // agent's) starts here.
    let mino_home = home
        .root()
        .canonicalize()
        .unwrap_or_else(|_| home.root().to_path_buf());
    crate::policy::check_root(project.root(), &mino_home, &protected)?;
    // What takes a process (git for the hooks directory, the sandbox's
    // probe, once per run) runs on the blocking pool meanwhile.
    let root = project.root().to_path_buf();
    let hooks = tokio::task::spawn_blocking(move || hooks_dir(&root));
    let probe = settings.sandbox.enabled.then(|| {
        tokio::task::spawn_blocking(|| {
            let helper = std::env::current_exe().unwrap_or_default();
            Support::probe_once(&helper)
        })
    });
    let user_soul =
        read_text(&home.soul_file(), SOUL_LIMIT, Links::Follow).map_err(AgentError::Soul)?;
    crate::logging::startup_step("SOUL.md");
    let mut tool_cx = tool_context_with(settings, project, protected);
    crate::logging::startup_step("the tools' context");
    tool_cx.editor = editor;
    if settings.tools.bash && tool_cx.bash_guard.is_none() {
        return Err(AgentError::NoOwnBinary);
    }
    let hooks = hooks.await.ok().flatten();
    crate::logging::startup_step("git's hooks directory");
    let surfaces = crate::policy::Surfaces::new(hooks.as_deref());
    if let Some(probe) = probe {
        // Found now, so the planner below takes the cached answer.
        let _ = probe.await;
        crate::logging::startup_step("the sandbox's probe");
    }
    let (planner, _) = sandbox_planner(
        settings,
        home,
        tool_cx.project.root(),
        tool_cx.protected.clone(),
    );
    let planner = planner.with_surfaces(surfaces.clone());
    let sandbox_warning = planner.sandbox.degraded.clone();
    let sandbox_badge = planner.sandbox.badge();
    let confinement = planner.sandbox.confinement();
    tool_cx.sandbox = Arc::new(planner);
    tool_cx.surfaces = surfaces.clone();
    if settings.tools.lsp {
        tool_cx.lsp = Some(Arc::new(crate::lsp::LspHub::new(
            settings.lsp.clone(),
            tool_cx.project.root().to_path_buf(),
            crate::lsp::Launch {
                sandbox: Arc::clone(&tool_cx.sandbox),
                guard: tool_cx.bash_guard.clone(),
                hidden_env: tool_cx.hidden_env.clone(),
            },
        )));
    }
    let shell = settings.tools.bash.then(|| shell_sentence(&confinement));
    let (context_window, window_source) = match window.await.ok().flatten() {
        Some(reported) => (reported.tokens, Some(reported.source)),
        None => (settings.model.context_window, None),
    };
    crate::logging::startup_step("the model's window");
    let profile = crate::config::ProfileChoice::choose(settings.model.profile, context_window);
    let (system, loaded) = super::offered::prompt_for(
        user_soul.clone(),
        &tool_cx,
        shell.as_deref(),
        profile.is_small(),
    )?;
    let project_name = tool_cx.project.root().display().to_string();
    let mut config = provider_config(&settings.model);
    config.extras.force_tool_call = profile.is_small();
    let provider = build_provider(&config)?;
    crate::logging::startup_step("the provider");
    let (events_tx, events_rx) = super::events::channel();
    // A host outside allowed_domains is asked about mid-call, here.
    let hosts = super::host_question::HostQuestions::new(events_tx.clone(), can_ask);
    tool_cx
        .sandbox
        .set_host_asker(Some(Arc::new(super::host_question::Asker(hosts))));
    for warning in &settings.warnings {
        let _ = events_tx.send(AgentEvent::Warning(warning.clone()));
    }
    if let Some(warning) = missing_key(settings, &config, &home.config_file()) {
        let _ = events_tx.send(AgentEvent::Warning(warning));
    }
    if let Some(notice) = loaded.notice() {
        let _ = events_tx.send(AgentEvent::Notice(notice));
    }
    for changed in super::instructions_seen::changes(
        &home.instructions_dir(),
        tool_cx.project.root(),
        &loaded.files,
        notices,
    ) {
        let _ = events_tx.send(AgentEvent::Notice(changed));
    }
    let mcp = super::mcp_start::start_mcp(settings, &tool_cx, &events_tx, defer_mcp);
    let offer = |profile: crate::config::ProfileChoice, has_skills: bool| {
        let tools = super::offered::tools(settings, profile, has_skills, can_ask, &tool_cx.shells);
        match &mcp {
            Some(hub) => tools.with_source(Arc::new(hub.clone())),
            None => tools,
        }
    };
    let tools = offer(profile, !loaded.skills.is_empty());
    // The other profile's, for a /model switch whose window chooses it.
    let other = super::offered::other_profile(profile);
    let (other_system, other_loaded) =
        super::offered::prompt_for(user_soul, &tool_cx, shell.as_deref(), other.is_small())?;
    let other_profile = super::runtime::ProfileTools {
        registry: offer(other, !other_loaded.skills.is_empty()),
        system: other_system,
    };
    if let Some(warning) = sandbox_warning {
        let _ = events_tx.send(super::events::AgentEvent::Warning(warning));
    }
    let secrets = tool_cx.secrets.clone();
    let project_files =
        crate::tools::search::ProjectFiles::new(tool_cx.project.clone(), tool_cx.protected.clone());
    let checkpoints = Arc::new(
        crate::checkpoint::Checkpoints::in_home(
            home.root(),
            tool_cx.project.root().to_path_buf(),
            tool_cx.protected.clone(),
        )
        .with_secrets(tool_cx.secrets.clone())
        .with_retention(settings.checkpoints),
    );
    let user_hooks = self::hooks(settings, tool_cx.project.root());
    let rt = Runtime {
        profile,
        checkpoints: Some(checkpoints),
        window_source,
        provider,
        registry: tools,
        tool_cx,
        limits: TurnLimits {
            requests: settings.limits.turn_requests,
            tool_calls: settings.limits.turn_tool_calls,
        },
        system,
        can_ask,
        hooks: user_hooks,
        judge: judge(settings)?,
        context_window,
        output_reserve: u64::from(settings.model.max_output_tokens()),
        events: events_tx,
        audit: Some(Audit::open(&home.audit_log())?),
        mcp: mcp.clone(),
        agents: settings.agents.clone(),
        surfaces,
        settings_file: settings.user_file.clone(),
        setup: super::model_setup::ModelSetup {
            default: settings.model.clone(),
            presets: settings.providers.clone(),
            choice: crate::session::ModelChoice::settings(&settings.model.model),
            active: crate::config::ModelSettings {
                context_window,
                ..settings.model.clone()
            },
            config: config.clone(),
            file: settings.user_file.clone(),
        },
        other_profile,
    };
    crate::logging::startup_step("the runtime");
    let store = SessionStore::new(home.sessions_dir());
    let mut run = crate::policy::RunConsent::with_rules(settings.rules.clone());
    for tool in never {
        run.never(tool);
    }
    let agent = Agent::start(rt, store, settings.start_mode, project_name, resume, run).await?;
    crate::logging::startup_step("the agent started");
    let mut handle = spawn(agent, events_rx);
    handle.mcp = mcp;
    handle.sandbox_badge = sandbox_badge;
    handle.confinement = confinement;
    handle.project_files = Some(project_files);
    handle.secrets = secrets;
    Ok(handle)
}

/// The project-relative directory git runs hooks from (`core.hooksPath`
/// when set), as git itself resolves it; `None` outside a repository or
/// when the directory is outside the project.
fn hooks_dir(root: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--git-path", "hooks"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let said = String::from_utf8(out.stdout).ok()?;
    let path = root.join(said.trim_end_matches(['\n', '\r']));
    let mut parts: Vec<std::path::Component<'_>> = Vec::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let path: std::path::PathBuf = parts.iter().collect();
    let relative = path.strip_prefix(root).ok()?;
    Some(relative.to_str()?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_is_said_for_remote_services_only() {
        let mut settings = Settings::default();
        settings.model.base_url = "https://api.openai.com/v1".into();
        let mut config = provider_config(&settings.model);
        config.api_key = None;
        let warning = missing_key(&settings, &config, Path::new("/h/config.toml")).unwrap();
        assert!(warning.contains("OPENAI_API_KEY"), "{warning}");
        assert!(
            warning.contains("[model] table of /h/config.toml"),
            "{warning}"
        );
        config.base_url = "http://127.0.0.1:11434/v1".into();
        assert_eq!(
            missing_key(&settings, &config, Path::new("/h/config.toml")),
            None
        );
        config.base_url = "https://api.openai.com/v1".into();
        config.api_key = Some("k".into());
        assert_eq!(
            missing_key(&settings, &config, Path::new("/h/config.toml")),
            None
        );
    }
}
