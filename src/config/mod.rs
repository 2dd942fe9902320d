//! Settings, in two stages (STYLE rule 9): raw serde structs as read from the
//! files, then one validated `Settings` built before anything uses it. Owns
//! the layering, lowest first: built-in defaults, the user's `config.toml`,
//! the project's `.mino/config.toml` (which can only tighten), the
//! environment (`AGENT_YOLO`), the command line. Never starts anything on an
//! invalid file, and never writes a settings file.

mod error;
mod hooks;
mod limits;
mod locate;
mod lsp;
mod mcp;
pub mod models;
pub mod profile;
mod project;
mod providers;
pub mod raw;
mod rules;
mod sandbox;
pub mod save_rule;
mod settings;
mod source;
mod ui;
mod validate;
pub mod windows;

use std::fs;
use std::path::{Path, PathBuf};

pub use error::{ConfigError, KeyPath, Segment};
pub use hooks::{
    DEFAULT_HOOK_TIMEOUT, HOOK_EVENTS, HookCommand, HookEvent, HookGroup, HookSettings, Matcher,
};
pub use limits::Retention;
pub use lsp::{LspServer, LspSettings};
pub use mcp::env_value;
pub use models::{ModelChoices, Price};
pub use profile::{PROFILE_NAMES, Profile, ProfileChoice};
pub use rules::url_parts;
pub use settings::{
    AskedAgent, DEFAULT_BACKGROUND_SHELLS, DEFAULT_CONTEXT_WINDOW, EnvValue, JudgeSettings,
    LimitSettings, MAX_TOKENS_FIELD_NAMES, MaxTokensField, McpServer, ModelSettings,
    PROVIDER_NAMES, ProviderKind, Settings, ShellGateSettings, ToolSwitches, TrustedExecutable,
    UnknownProvider, is_loopback_url,
};
pub use ui::{Notify, UiSettings};

use crate::home::Home;
use crate::policy::{MODE_NAMES, Mode};
use crate::small_file::Links;
use source::SourceFile;
use validate::{BASE_URL_ACCEPTED, MODEL_ACCEPTED, SCRIPT_ACCEPTED, check_base_url, check_model};

/// The variable that starts sessions in bypass (or forces manual).
pub const AGENT_YOLO: &str = "AGENT_YOLO";

const AGENT_YOLO_ACCEPTED: &str =
    "1, true or yes (start in bypass); 0, false or no (start in manual)";

/// The project's settings file, relative to the project directory.
pub const PROJECT_FILE: &str = ".mino/config.toml";

/// What the environment says, read once (or given by a test).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvOverrides {
    /// `AGENT_YOLO`, as set.
    pub agent_yolo: Option<String>,
}

impl EnvOverrides {
    /// Reads the process environment.
    /// An empty `AGENT_YOLO` counts as unset, as shells and launchers
    /// often export empty variables.
    pub fn from_process() -> Self {
        Self {
            agent_yolo: std::env::var_os(AGENT_YOLO)
                .filter(|v| !v.is_empty())
                .map(|v| v.to_string_lossy().into_owned()),
        }
    }

    /// The start mode `AGENT_YOLO` forces, if set.
    fn start_mode(&self) -> Result<Option<Mode>, ConfigError> {
        let Some(value) = &self.agent_yolo else {
            return Ok(None);
        };
        let is = |names: &[&str]| names.iter().any(|n| value.eq_ignore_ascii_case(n));
        if is(&["1", "true", "yes"]) {
            Ok(Some(Mode::Bypass))
        } else if is(&["0", "false", "no"]) {
            Ok(Some(Mode::Manual))
        } else {
            Err(ConfigError::Environment {
                variable: AGENT_YOLO,
                value: value.clone(),
                accepted: AGENT_YOLO_ACCEPTED,
            })
        }
    }
}

/// What the command line overrides; the CLI fills it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliOverrides {
    /// `--mode NAME`.
    pub mode: Option<Mode>,
    /// `--yolo`.
    pub yolo: bool,
    /// `--provider NAME`.
    pub provider: Option<String>,
    /// `--base-url URL`.
    pub base_url: Option<String>,
    /// `--model NAME`.
    pub model: Option<String>,
    /// A script for the scripted provider, given by the program itself
    /// (`--demo`), not by a settings file.
    pub script: Option<PathBuf>,
}

impl Settings {
    /// Loads and validates every layer. The first error stops it; a missing
    /// file is simply absent.
    pub fn load(
        home: &Home,
        project_dir: &Path,
        env: &EnvOverrides,
        cli: &CliOverrides,
    ) -> Result<Settings, ConfigError> {
        Self::load_with_user_file(home, &home.config_file(), project_dir, env, cli)
    }

    /// As `load`, with `user_file` in place of the home's `config.toml`: an
    /// asked agent runs on its own settings file.
    pub fn load_with_user_file(
        home: &Home,
        user_file: &Path,
        project_dir: &Path,
        env: &EnvOverrides,
        cli: &CliOverrides,
    ) -> Result<Settings, ConfigError> {
        let mut settings = Settings::default();
        let user_file = user_file.to_path_buf();
        settings.user_file = Some(user_file.clone());
        // The user's own file may be a link (dotfiles); the project's may not.
        let user = SourceFile::read(&user_file, Links::Follow)?;
        if let Some(src) = &user {
            validate::apply_user(&mut settings, src)?;
            settings.sources.push(src.path.clone());
        }
        let project_file = project_dir.join(PROJECT_FILE);
        let project = if same_file(&project_file, &user_file) {
            None
        } else {
            SourceFile::read(&project_file, Links::Refuse)?
        };
        if let Some(src) = project {
            project::apply_project(&mut settings, &src, &user_file)?;
            settings.sources.push(src.path.clone());
        }
        if let Some(mode) = env.start_mode()? {
            settings.start_mode = mode;
        }
        apply_cli(&mut settings, cli)?;
        known_window(&mut settings.model);
        settings.mino_home = Some(home.root().to_path_buf());
        // A tool server given a path inside the home (sessions, the log,
        // settings) is never sent it.
        let mut absolute = vec![home.root().to_string_lossy().into_owned()];
        if let Ok(canonical) = std::fs::canonicalize(home.root()) {
            absolute.push(canonical.to_string_lossy().into_owned());
        }
        if let Some(dirs) = directories::BaseDirs::new()
            && let Ok(rest) = home.root().strip_prefix(dirs.home_dir())
        {
            absolute.push(format!("~/{}", rest.to_string_lossy()));
        }
        settings.protected = settings.protected.with_mino_home_absolute(&absolute);
        if let Some(relative) = home_inside(home.root(), project_dir) {
            settings.protected = settings.protected.with_mino_home(&relative);
        }
        Ok(settings)
    }
}

/// Where mino's home lies inside the project, as a project-relative path
/// (empty when the project is the home or inside it); `None` when they are
/// apart. Both are compared canonical, so a home reached through a link is
/// found too; a home that does not exist yet is compared as given.
fn home_inside(home: &Path, project_dir: &Path) -> Option<String> {
    let home = fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let project = fs::canonicalize(project_dir).ok()?;
    if project.starts_with(&home) {
        return Some(String::new());
    }
    let rest = home.strip_prefix(&project).ok()?;
    Some(
        rest.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Whether both paths exist and are one file (a home inside the project).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A window no settings file gave is the built-in table's for a
/// well-known hosted model (never for a loopback server: see
/// `config::windows`).
pub(super) fn known_window(model: &mut ModelSettings) {
    if model.context_window_set || is_loopback_url(&model.base_url) {
        return;
    }
    if let Some(tokens) = crate::config::windows::known_window(&model.model) {
        model.context_window = tokens;
    }
}

fn apply_cli(settings: &mut Settings, cli: &CliOverrides) -> Result<(), ConfigError> {
    match (cli.mode, cli.yolo) {
        (Some(mode), true) if mode != Mode::Bypass => {
            return Err(ConfigError::CommandLine {
                flag: "--mode",
                value: mode.name().to_string(),
                problem: "disagrees with --yolo".to_string(),
                accepted: format!(
                    "one of --mode and --yolo, or --mode bypass with --yolo ({MODE_NAMES})"
                ),
            });
        }
        (Some(mode), _) => settings.start_mode = mode,
        (None, true) => settings.start_mode = Mode::Bypass,
        (None, false) => {}
    }
    let model = &mut settings.model;
    if let Some(name) = &cli.provider {
        let provider = name
            .parse::<ProviderKind>()
            .map_err(|e| ConfigError::CommandLine {
                flag: "--provider",
                value: e.given.clone(),
                problem: "unknown provider".to_string(),
                accepted: PROVIDER_NAMES.to_string(),
            })?;
        if provider != model.provider {
            // The file's URL, key variable and model belong to the file's
            // provider; a different provider starts from its own defaults.
            model.provider = provider;
            model.base_url = provider.default_base_url().to_string();
            model.api_key_env = provider.default_api_key_env().to_string();
            model.model = provider.default_model().to_string();
        }
        if let Some(script) = &cli.script {
            model.script = Some(script.clone());
        }
        if provider == ProviderKind::Scripted && model.script.is_none() {
            return Err(ConfigError::CommandLine {
                flag: "--provider",
                value: name.clone(),
                problem: "the scripted provider needs model.script in the user settings"
                    .to_string(),
                accepted: SCRIPT_ACCEPTED.to_string(),
            });
        }
    }
    if let Some(url) = &cli.base_url {
        model.base_url = check_base_url(url).map_err(|problem| ConfigError::CommandLine {
            flag: "--base-url",
            value: url.clone(),
            problem,
            accepted: BASE_URL_ACCEPTED.to_string(),
        })?;
    }
    if let Some(name) = &cli.model {
        model.model = check_model(name).map_err(|problem| ConfigError::CommandLine {
            flag: "--model",
            value: name.clone(),
            problem,
            accepted: MODEL_ACCEPTED.to_string(),
        })?;
    }
    Ok(())
}
