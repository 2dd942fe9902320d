//! The services a run can talk to: the settings' own (`[model]`, where a
//! new session starts) and the provider presets (`[providers.NAME]`), the
//! one in use, and what a `/model` name means among them. A preset's name
//! comes first: `PRESET` is its model, `PRESET/MODEL` another of its
//! models; any other name is a model of the settings' service. Works out a
//! switch's settings, window and provider configuration; never builds a
//! provider or says anything (`sessions/switch.rs` does).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{DEFAULT_CONTEXT_WINDOW, ModelSettings, ProviderKind, is_loopback_url};
use crate::session::ModelChoice;

/// The services of the run and the one in use.
#[derive(Debug, Clone)]
pub struct ModelSetup {
    /// `[model]`: where a new session starts.
    pub default: ModelSettings,
    /// `[providers.NAME]`.
    pub presets: BTreeMap<String, ModelSettings>,
    /// The model in use.
    pub choice: ModelChoice,
    /// Its service's settings, the model and window in force written in.
    pub active: ModelSettings,
    /// What its provider was built from (the service's list is asked with it).
    pub config: crate::model::ProviderConfig,
    /// The user's settings file, which errors name.
    pub file: Option<PathBuf>,
}

/// Why a switch did not happen; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error(
        "not a model this session can switch to; accepted: {accepted} (a preset's name alone switches to its model; add models to [model] models, or to a [providers.NAME] table's, in {file})"
    )]
    Unknown { accepted: String, file: String },
    #[error(
        "the variable {variable} is not set, so preset {preset}'s requests would go out without an API key; export it (the name comes from [providers.{preset}] api_key_env in {file})"
    )]
    KeyUnset {
        preset: String,
        variable: String,
        file: String,
    },
    #[error("preset {preset} is not defined in {file} any more")]
    NoPreset { preset: String, file: String },
    #[error(transparent)]
    Provider(#[from] crate::model::ModelError),
}

impl ModelSetup {
    /// The user's settings file, as errors name it.
    pub fn file_name(&self) -> String {
        self.file
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_else(|| "your settings".into())
    }

    /// Where a new session starts: the settings' service and model.
    pub fn start(&self) -> ModelChoice {
        ModelChoice::settings(&self.default.model)
    }

    /// A preset's own model, for `/model PRESET`.
    pub fn preset_model(&self, preset: &str) -> Option<ModelChoice> {
        let settings = self.presets.get(preset)?;
        Some(ModelChoice::preset(preset, &settings.model))
    }

    /// What `name` means when it is a preset's (`PRESET` or
    /// `PRESET/MODEL`); `None` for a name of the settings' service.
    pub fn preset_name(&self, name: &str) -> Option<(String, Option<String>)> {
        if self.presets.contains_key(name) {
            return Some((name.to_string(), None));
        }
        let (preset, model) = name.split_once('/')?;
        self.presets
            .contains_key(preset)
            .then(|| (preset.to_string(), Some(model.to_string())))
    }

    /// The settings `choice`'s requests go out with: its service's, with
    /// its model and that model's window (the settings' when they give one,
    /// else the built-in table's for a hosted model, else the default; a
    /// local server is asked later).
    pub fn settings_of(&self, choice: &ModelChoice) -> Result<ModelSettings, SwitchError> {
        let base = match &choice.preset {
            Some(preset) => self
                .presets
                .get(preset)
                .ok_or_else(|| SwitchError::NoPreset {
                    preset: preset.clone(),
                    file: self.file_name(),
                })?,
            None => &self.default,
        };
        let mut settings = base.clone();
        settings.model = choice.model.clone();
        if !settings.context_window_set {
            settings.context_window = (!is_loopback_url(&settings.base_url))
                .then(|| crate::config::windows::known_window(&choice.model))
                .flatten()
                .unwrap_or(DEFAULT_CONTEXT_WINDOW);
        }
        Ok(settings)
    }

    /// A preset's requests would go out without their key: its variable is
    /// unset and the service is not a local one (which needs none).
    pub fn missing_key(
        &self,
        choice: &ModelChoice,
        settings: &ModelSettings,
    ) -> Option<SwitchError> {
        let preset = choice.preset.as_ref()?;
        let needs_key =
            settings.provider != ProviderKind::Scripted && !is_loopback_url(&settings.base_url);
        let set = std::env::var_os(&settings.api_key_env).is_some_and(|v| !v.is_empty());
        (needs_key && !set).then(|| SwitchError::KeyUnset {
            preset: preset.clone(),
            variable: settings.api_key_env.clone(),
            file: self.file_name(),
        })
    }
}

/// The window `settings` serve and where the figure comes from, in the
/// banner's words: a local server's report, else the settings', the
/// built-in table's or mino's default (as `settings_of` chose).
pub async fn window_of(settings: &ModelSettings) -> (u64, String) {
    if let Some(reported) = crate::model::window::for_settings(settings.clone()).await {
        return (reported.tokens, reported.source);
    }
    let known = !is_loopback_url(&settings.base_url)
        && crate::config::windows::known_window(&settings.model).is_some();
    let source = if settings.context_window_set {
        "from settings".to_string()
    } else if known {
        format!("known for {}", settings.model)
    } else {
        "default".to_string()
    };
    (settings.context_window, source)
}

/// A model service's configuration; the key is read from its variable.
pub fn provider_config(m: &ModelSettings) -> crate::model::ProviderConfig {
    crate::model::ProviderConfig {
        kind: m.provider,
        base_url: m.base_url.clone(),
        model: m.model.clone(),
        api_key: std::env::var(&m.api_key_env).ok().filter(|k| !k.is_empty()),
        extras: crate::model::BodyExtras {
            max_output_tokens: Some(m.max_output_tokens()),
            extra_body: m.extra_body.clone(),
            first_request_extra_body: m.first_request_extra_body.clone(),
            compaction_max_output_tokens: m.compaction.max_output_tokens,
            compaction_extra_body: m.compaction.extra_body.clone(),
            force_tool_call: false,
        },
        max_tokens_field: Some(m.max_tokens_field()),
        script: m.script.clone(),
        first_byte_timeout: m.first_byte_timeout(),
        request_timeout: m.request_timeout,
        connect_timeout: Duration::from_secs(10),
        bounds: crate::model::bounds::StreamBounds {
            max_text_bytes: usize::try_from(m.max_response_text_bytes).unwrap_or(usize::MAX),
            max_tool_calls: usize::try_from(m.max_tool_calls).unwrap_or(usize::MAX),
            max_argument_bytes: usize::try_from(m.max_tool_argument_bytes).unwrap_or(usize::MAX),
            stall_min_bytes: usize::try_from(m.stall_min_bytes).unwrap_or(usize::MAX),
        },
        max_retries: m.max_retries,
        backoff: crate::model::config::Backoff::default(),
        strict: false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn setup() -> ModelSetup {
        let mut default = ModelSettings::defaults_for(ProviderKind::OpenAiChat);
        default.base_url = "https://openrouter.ai/api/v1".into();
        default.model = "qwen/qwen3-coder".into();
        let mut local = ModelSettings::defaults_for(ProviderKind::OpenAiChat);
        local.base_url = "http://127.0.0.1:8080/v1".into();
        local.model = "local".into();
        let mut claude = ModelSettings::defaults_for(ProviderKind::Anthropic);
        claude.api_key_env = "MINO_TEST_UNSET_KEY_VARIABLE".into();
        claude.context_window = 9000;
        claude.context_window_set = true;
        let config = crate::model::ProviderConfig::new(ProviderKind::OpenAiChat, "m");
        ModelSetup {
            choice: ModelChoice::settings(&default.model),
            active: default.clone(),
            default,
            presets: BTreeMap::from([("local".into(), local), ("claude".into(), claude)]),
            config,
            file: Some(PathBuf::from("/h/config.toml")),
        }
    }

    #[test]
    fn a_presets_name_comes_first() {
        let s = setup();
        assert_eq!(s.preset_name("local"), Some(("local".into(), None)));
        assert_eq!(
            s.preset_name("claude/claude-haiku-4-5"),
            Some(("claude".into(), Some("claude-haiku-4-5".into())))
        );
        assert_eq!(s.preset_name("qwen/qwen3-coder"), None);
        assert_eq!(s.preset_name("gpt-5"), None);
        assert_eq!(
            s.preset_model("local").map(|c| c.spelling()),
            Some("local/local".into())
        );
        assert_eq!(s.preset_model("nope"), None);
        assert_eq!(s.start().spelling(), "qwen/qwen3-coder");
    }

    #[test]
    fn a_switch_takes_its_services_settings_and_its_models_window() {
        let s = setup();
        let on = |c: ModelChoice| s.settings_of(&c).unwrap();
        let hosted = on(ModelChoice::settings("gpt-5-mini"));
        assert_eq!(hosted.base_url, "https://openrouter.ai/api/v1");
        assert_eq!(hosted.context_window, 400_000);
        assert_eq!(on(ModelChoice::settings("my-tune")).context_window, 128_000);
        let local = on(ModelChoice::preset("local", "gpt-5"));
        assert_eq!(local.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(local.context_window, 128_000, "no table for a local server");
        let claude = on(ModelChoice::preset("claude", "claude-haiku-4-5"));
        assert_eq!(claude.context_window, 9000, "the settings' window wins");
        let gone = s
            .settings_of(&ModelChoice::preset("gone", "m"))
            .unwrap_err();
        assert_eq!(
            gone.to_string(),
            "preset gone is not defined in /h/config.toml any more"
        );
    }

    #[test]
    fn a_preset_without_its_key_is_refused_unless_local() {
        let s = setup();
        let claude = ModelChoice::preset("claude", "claude-haiku-4-5");
        let err = s.missing_key(&claude, &s.settings_of(&claude).unwrap());
        let text = err.unwrap().to_string();
        assert!(
            text.contains("MINO_TEST_UNSET_KEY_VARIABLE is not set"),
            "{text}"
        );
        assert!(text.contains("[providers.claude] api_key_env in /h/config.toml"));
        let local = ModelChoice::preset("local", "local");
        assert!(
            s.missing_key(&local, &s.settings_of(&local).unwrap())
                .is_none()
        );
        let own = ModelChoice::settings("gpt-5");
        assert!(s.missing_key(&own, &s.settings_of(&own).unwrap()).is_none());
    }
}
