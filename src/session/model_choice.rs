//! The model a session is on: the settings' own service (`[model]`) or a
//! provider preset (`[providers.NAME]`), and the model's name there. A
//! `/model` switch is recorded as a `model` line, and the last one says
//! where a resumed session goes back to. Owns the record and its spelling
//! (`MODEL`, or `PRESET/MODEL`); never checks that a preset still exists.

use serde::{Deserialize, Serialize};

/// Where a session's requests go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoice {
    /// The model's name as its service spells it.
    pub model: String,
    /// A `[providers.NAME]` preset; none is the settings' `[model]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
}

impl ModelChoice {
    /// The settings' own service with `model`.
    pub fn settings(model: &str) -> Self {
        Self {
            model: model.to_string(),
            preset: None,
        }
    }

    /// `model` of the preset `preset`.
    pub fn preset(preset: &str, model: &str) -> Self {
        Self {
            model: model.to_string(),
            preset: Some(preset.to_string()),
        }
    }

    /// How `/model`, the picker, the banner and the status bar write it:
    /// `MODEL` on the settings' service, `PRESET/MODEL` on a preset.
    pub fn spelling(&self) -> String {
        match &self.preset {
            Some(preset) => format!("{preset}/{}", self.model),
            None => self.model.clone(),
        }
    }
}

/// The model the last `model` record of `records` chose, if any.
pub fn last_model(records: &[super::LogEntry]) -> Option<ModelChoice> {
    records.iter().rev().find_map(|record| match record {
        super::LogEntry::Model(choice) => Some(choice.clone()),
        _ => None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::session::LogEntry;

    #[test]
    fn a_model_record_has_its_documented_shape_and_the_last_one_holds() {
        let on_preset = LogEntry::Model(ModelChoice::preset("local", "qwen3:8b"));
        let text = serde_json::to_string(&on_preset).unwrap();
        assert_eq!(
            text,
            r#"{"type":"model","model":"qwen3:8b","preset":"local"}"#
        );
        assert_eq!(serde_json::from_str::<LogEntry>(&text).unwrap(), on_preset);
        let back = LogEntry::Model(ModelChoice::settings("gpt-5"));
        let text = serde_json::to_string(&back).unwrap();
        assert_eq!(text, r#"{"type":"model","model":"gpt-5"}"#);
        assert_eq!(serde_json::from_str::<LogEntry>(&text).unwrap(), back);
        assert_eq!(last_model(&[LogEntry::Clear]), None);
        assert_eq!(
            last_model(&[on_preset.clone(), LogEntry::Clear]),
            Some(ModelChoice::preset("local", "qwen3:8b"))
        );
        assert_eq!(
            last_model(&[on_preset, back]).map(|c| c.spelling()),
            Some("gpt-5".to_string())
        );
        assert_eq!(
            ModelChoice::preset("or", "openai/gpt-5").spelling(),
            "or/openai/gpt-5"
        );
        assert!(serde_json::from_str::<LogEntry>(r#"{"type":"model"}"#).is_err());
    }
}
