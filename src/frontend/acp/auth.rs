//! Authentication over ACP: the one method mino offers, "the API key from
//! the environment" (the variable `[model] api_key_env` names), and the
//! check behind `authenticate` and a session's start: a model service that
//! needs a key (not a local server, not a script) and whose variable is
//! unset or empty is refused with the variable and the settings file named.
//! mino stores no key of its own (keys live only in the environment), so
//! there is no method that asks for one. Reads the environment; decides no
//! call.

use std::path::Path;

use agent_client_protocol::v1::schema::{AuthMethod, AuthMethodAgent};

use crate::config::{ModelSettings, ProviderKind, is_loopback_url};

/// The method's id.
pub const METHOD: &str = "environment-key";

/// The methods `initialize` advertises; `variable` is the one the settings
/// name, when they could be read.
pub fn methods(variable: Option<&str>) -> Vec<AuthMethod> {
    let which = variable
        .map(|v| {
            format!(
                "the environment variable {v} (named by api_key_env in [model] of mino's settings)"
            )
        })
        .unwrap_or_else(|| {
            "the environment variable that api_key_env in [model] of mino's settings names"
                .to_string()
        });
    vec![AuthMethod::Agent(
        AuthMethodAgent::new(METHOD, "API key from the environment").description(format!(
            "mino sends the model service the key in {which}; set it where the editor starts mino. mino stores no key itself."
        )),
    )]
}

/// Why the model service cannot be used without a key: the sentence an
/// editor shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error(
        "the variable {variable} is not set (or is empty), so requests to {service} would go out without an API key: set it where the editor starts mino, or name another variable with api_key_env in the [model] table of {file}"
    )]
    KeyUnset {
        variable: String,
        service: String,
        file: String,
    },
    #[error("unknown authentication method {0:?}; mino offers {METHOD:?}")]
    UnknownMethod(String),
    #[error("mino's settings could not be read: {0}")]
    Settings(String),
}

/// Whether `model`'s requests have the key they need; `file` is the
/// settings file the error names.
pub fn check(model: &ModelSettings, file: &Path) -> Result<(), AuthError> {
    let needs_key = model.provider != ProviderKind::Scripted && !is_loopback_url(&model.base_url);
    let set = std::env::var_os(&model.api_key_env).is_some_and(|v| !v.is_empty());
    if !needs_key || set {
        return Ok(());
    }
    Err(AuthError::KeyUnset {
        variable: model.api_key_env.clone(),
        service: crate::model::http::shown_url(&model.base_url),
        file: file.display().to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn model(base_url: &str, variable: &str) -> ModelSettings {
        let mut m = ModelSettings::defaults_for(ProviderKind::OpenAiChat);
        m.base_url = base_url.into();
        m.api_key_env = variable.into();
        m
    }

    #[test]
    fn a_remote_service_needs_its_variable_and_a_local_one_none() {
        let file = Path::new("/h/config.toml");
        let unset = "MINO_TEST_AUTH_NEVER_SET";
        let e = check(&model("https://llm.example.invalid/v1", unset), file).unwrap_err();
        let said = e.to_string();
        assert!(said.contains(unset), "{said}");
        assert!(said.contains("/h/config.toml"), "{said}");
        assert!(check(&model("http://127.0.0.1:11434/v1", unset), file).is_ok());
        assert!(check(&model("https://llm.example.invalid/v1", "PATH"), file).is_ok());
    }

    #[test]
    fn the_method_names_the_variable() {
        let methods = methods(Some("OPENAI_API_KEY"));
        assert_eq!(methods.len(), 1);
        assert_eq!(&*methods[0].id().0, METHOD);
        assert!(methods[0].description().unwrap().contains("OPENAI_API_KEY"));
    }
}
