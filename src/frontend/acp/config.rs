//! A session's configuration options as an editor shows them: the mode
//! (all five, each with the warning its loosening prints) and the model
//! (what `/model` offers from the settings: the model in use, `[model]`'s
//! models and each provider preset's), and what a chosen value becomes for
//! the agent: the mode selector's choice or `/model NAME`. Pure
//! conversions; the agent does the change, so a name it refuses changes
//! nothing and its error is the answer.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption,
};

use crate::agent::{Command, Input};
use crate::policy::{BashConfinement, Mode};

/// The option ids.
pub const MODE: &str = "mode";
pub const MODEL: &str = "model";

/// What the options are built from: the session's state as the agent last
/// said it.
#[derive(Debug, Clone)]
pub struct Current {
    pub mode: Mode,
    /// The model in use, as `/model` spells it (`PRESET/MODEL` for a
    /// preset's).
    pub model: String,
    /// The names `/model` takes from the settings.
    pub models: Vec<String>,
    pub bash: BashConfinement,
}

/// Both options, with their current values.
pub fn options(current: &Current) -> Vec<SessionConfigOption> {
    let modes: Vec<SessionConfigSelectOption> = Mode::ALL
        .iter()
        .map(|m| {
            SessionConfigSelectOption::new(m.name(), m.name()).description(m.warning(&current.bash))
        })
        .collect();
    let mut names = vec![current.model.clone()];
    for name in &current.models {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    let models: Vec<SessionConfigSelectOption> = names
        .iter()
        .map(|name| SessionConfigSelectOption::new(name.clone(), crate::controls::visible(name)))
        .collect();
    vec![
        SessionConfigOption::select(MODE, "Permission mode", current.mode.name(), modes)
            .category(SessionConfigOptionCategory::Mode)
            .description("What runs without a question in this session; a loosening chosen here is its confirmation.".to_string()),
        SessionConfigOption::select(MODEL, "Model", current.model.clone(), models)
            .category(SessionConfigOptionCategory::Model)
            .description("The model this session's requests go to (as /model switches it; the switch is recorded in the session).".to_string()),
    ]
}

/// Why a chosen value is refused before it reaches the agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown configuration option {0:?}; this agent has {MODE:?} and {MODEL:?}")]
    Unknown(String),
    #[error("configuration option {0:?} takes one of its listed values, not true or false")]
    NotSelect(String),
    #[error(transparent)]
    Mode(#[from] crate::policy::UnknownMode),
}

/// What setting option `id` to `value` asks of the agent.
pub fn input_for(id: &str, value: &SessionConfigOptionValue) -> Result<Input, ConfigError> {
    let Some(value) = value.as_value_id() else {
        return Err(ConfigError::NotSelect(id.to_string()));
    };
    match id {
        MODE => Ok(Input::ChooseMode(value.0.parse::<Mode>()?)),
        MODEL => Ok(Input::Command(Command::Model(Some(value.0.to_string())))),
        other => Err(ConfigError::Unknown(other.to_string())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{SessionConfigKind, SessionConfigSelectOptions};

    fn values(option: &SessionConfigOption) -> (String, Vec<String>) {
        let SessionConfigKind::Select(select) = &option.kind else {
            panic!("not a select")
        };
        let SessionConfigSelectOptions::Ungrouped(options) = &select.options else {
            panic!("grouped")
        };
        (
            select.current_value.0.to_string(),
            options.iter().map(|o| o.value.0.to_string()).collect(),
        )
    }

    #[test]
    fn mode_and_model_options_hold_every_choice_with_the_current_one() {
        let current = Current {
            mode: Mode::AcceptEdits,
            model: "claude/sonnet".into(),
            models: vec!["gpt-5".into(), "claude/sonnet".into(), "claude".into()],
            bash: BashConfinement::Unconfined,
        };
        let options = options(&current);
        assert_eq!(
            values(&options[0]),
            (
                "accept-edits".to_string(),
                vec!["plan", "manual", "accept-edits", "auto", "bypass"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(
            values(&options[1]),
            (
                "claude/sonnet".to_string(),
                vec!["claude/sonnet".to_string(), "gpt-5".into(), "claude".into()]
            )
        );
    }

    #[test]
    fn a_value_becomes_the_selectors_choice_or_a_model_switch() {
        assert_eq!(
            input_for(MODE, &"yolo".into()).unwrap(),
            Input::ChooseMode(Mode::Bypass)
        );
        assert_eq!(
            input_for(MODEL, &"gpt-5".into()).unwrap(),
            Input::Command(Command::Model(Some("gpt-5".into())))
        );
        assert!(matches!(
            input_for(MODE, &"sudo".into()),
            Err(ConfigError::Mode(_))
        ));
        assert!(matches!(
            input_for("effort", &"high".into()),
            Err(ConfigError::Unknown(_))
        ));
        assert!(matches!(
            input_for(MODE, &SessionConfigOptionValue::boolean(true)),
            Err(ConfigError::NotSelect(_))
        ));
    }
}
