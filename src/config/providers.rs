//! `[providers.NAME]`: provider presets, the other services `/model` can
//! switch a session to. Each table takes the keys of `[model]`, read and
//! checked by the same code (so its errors name `providers.NAME.KEY`), and
//! starts from its own wire's defaults, never from `[model]`'s values. Only
//! the user's settings define presets (`project.rs` refuses them). Never
//! reads a key's value: only the name of the variable that holds it.

use std::collections::BTreeMap;

use super::error::{ConfigError, KeyPath};
use super::raw::RawModel;
use super::settings::ModelSettings;
use super::source::SourceFile;

/// The presets of the user's file, by name.
pub fn read(
    src: &SourceFile,
    raw: &BTreeMap<String, RawModel>,
) -> Result<BTreeMap<String, ModelSettings>, ConfigError> {
    let mut presets = BTreeMap::new();
    for (name, table) in raw {
        let key = KeyPath::of(&["providers", name]);
        super::validate::check_name(src, &key, name, "a preset name")?;
        let mut model = super::validate::model_settings(src, table, &key)?;
        // A preset that lists models but names none starts on the first.
        if table.model.is_none()
            && let Some(first) = model.choices.models.first()
        {
            model.model = first.clone();
        }
        super::known_window(&mut model);
        presets.insert(name.clone(), model);
    }
    Ok(presets)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::settings::{MaxTokensField, ProviderKind};
    use crate::config::{Profile, Settings};

    fn load(text: &str) -> Result<Settings, ConfigError> {
        let src = SourceFile::parse(Path::new("/h/config.toml"), text.to_string())?;
        let mut settings = Settings::default();
        super::super::validate::apply_user(&mut settings, &src)?;
        Ok(settings)
    }

    #[test]
    fn a_preset_takes_the_model_keys_from_its_own_wire_defaults() {
        let settings = load(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"http://127.0.0.1:1/v1\"\nrequest_timeout_secs = 9\n\
             [providers.claude]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n\
             [providers.local]\nprovider = \"openai-chat\"\nbase_url = \"http://localhost:8080/v1\"\n\
             api_key_env = \"LOCAL_KEY\"\nmodels = [\"qwen3:8b\", \"qwen3:4b\"]\ncontext_window = 8192\n\
             max_tokens_field = \"max_tokens\"\nprofile = \"default\"\n",
        )
        .unwrap();
        let claude = &settings.providers["claude"];
        assert_eq!(claude.provider, ProviderKind::Anthropic);
        assert_eq!(claude.base_url, "https://api.anthropic.com/v1");
        assert_eq!(claude.api_key_env, "ANTHROPIC_API_KEY");
        assert_eq!(claude.context_window, 200_000, "the built-in table's");
        assert_eq!(claude.request_timeout.as_secs(), 60, "not [model]'s 9 s");
        let local = &settings.providers["local"];
        assert_eq!(local.model, "qwen3:8b", "the first of its models");
        assert_eq!(local.choices.models, ["qwen3:8b", "qwen3:4b"]);
        assert_eq!(
            (local.context_window, local.context_window_set),
            (8192, true)
        );
        assert_eq!(local.max_tokens_field, Some(MaxTokensField::MaxTokens));
        assert_eq!(local.profile, Some(Profile::Default));
        assert_eq!(local.api_key_env, "LOCAL_KEY");
        assert_eq!(settings.model.request_timeout.as_secs(), 9);
    }

    #[test]
    fn a_preset_errors_name_its_own_keys() {
        let err = |text: &str| load(text).unwrap_err().to_string();
        let e = err("[providers.x]\nprovider = \"openai-chat\"\napi_key = \"sk-secret-1\"\n");
        assert!(e.contains("/h/config.toml:3: providers.x.api_key"), "{e}");
        assert!(e.contains("api_key_env = \"OPENAI_API_KEY\""), "{e}");
        assert!(!e.contains("sk-secret-1"), "{e}");
        let e = err("[providers.x]\nprovider = \"openai\"\n");
        assert!(e.contains("providers.x.provider: unknown provider"), "{e}");
        let e = err("[providers.x]\nbase_url = \"ftp://h\"\n");
        assert!(e.contains("providers.x.base_url"), "{e}");
        let e = err("[providers.x]\napi_key_env = \"NOT A NAME\"\n");
        assert!(e.contains("providers.x.api_key_env"), "{e}");
        let e = err("[providers.x]\nmodels = [\"a b\"]\n");
        assert!(e.contains("providers.x.models[0]"), "{e}");
        let e = err("[providers.x]\ncontext_window = 0\n");
        assert!(e.contains("providers.x.context_window"), "{e}");
        let e = err("[providers.x]\nmax_tokens_field = \"max\"\n");
        assert!(e.contains("providers.x.max_tokens_field"), "{e}");
        let e = err("[providers.x]\nprofile = \"tiny\"\n");
        assert!(e.contains("providers.x.profile"), "{e}");
        let e = err("[providers.x]\nprovider = \"scripted\"\n");
        assert!(e.contains("providers.x.provider = \"scripted\""), "{e}");
        let e = err("[providers.x]\nmodle = \"m\"\n");
        assert!(e.contains("unknown key `modle`"), "{e}");
        let e = err("[providers.\"a/b\"]\nprovider = \"anthropic\"\n");
        assert!(e.contains("\"a/b\" is not a preset name"), "{e}");
    }
}
