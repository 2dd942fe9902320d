//! `/model`: the models a session can switch to (the settings' `[model]
//! models`, the priced ones, and the service's own list where its wire
//! has one) and the switch itself: the next request goes to the same
//! service with the other model, its window from the built-in table
//! unless a settings file or a local server fixed it, and the banner and
//! status bar say so. A name not among them changes nothing and is told
//! what is accepted.

use std::time::Duration;

use super::super::events::{AgentEvent, ModelEntry};
use super::Agent;

/// How long the service's list may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

impl Agent {
    /// `/model` alone lists; `/model NAME` switches.
    pub(super) async fn model(&mut self, name: Option<&str>) {
        let entries = self.model_entries().await;
        let Some(name) = name else {
            self.rt.emit(AgentEvent::Models {
                current: self.model.clone(),
                entries,
            });
            return;
        };
        if !entries.iter().any(|e| e.name == name) {
            let accepted: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            let file = self
                .rt
                .settings_file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "your settings".into());
            self.rt.emit(AgentEvent::Error(format!(
                "/model {}: not a model this session can switch to; accepted: {} (add others to [model] models in {file})",
                crate::controls::visible(name),
                accepted.join(", ")
            )));
            return;
        }
        if name == self.model {
            self.notice(format!("The model is already {name}."));
            return;
        }
        let mut config = self.rt.provider_config.clone();
        config.model = name.to_string();
        let provider = match crate::model::build_provider(&config) {
            Ok(provider) => provider,
            Err(e) => {
                self.rt
                    .emit(AgentEvent::Error(format!("/model {name}: {e}")));
                return;
            }
        };
        self.rt.provider = provider;
        self.rt.provider_config = config;
        if !self.rt.window_fixed {
            self.rt.context_window = crate::config::windows::known_window(name)
                .unwrap_or(crate::config::DEFAULT_CONTEXT_WINDOW);
            self.rt.window_source = None;
        }
        self.model = name.to_string();
        self.notice(format!(
            "Model for this run from now on: {name} (context window {} tokens).",
            self.rt.context_window
        ));
        self.banner();
    }

    /// The models to choose from: the one in use, the settings' list, the
    /// priced ones, then the service's (its list asked once a run).
    async fn model_entries(&mut self) -> Vec<ModelEntry> {
        if self.listed.is_none() {
            let listed =
                crate::model::listing::model_names(&self.rt.provider_config, LIST_TIMEOUT).await;
            self.listed = Some(match listed {
                Ok(names) => names,
                Err(e) => {
                    tracing::info!(error = %e, "the service gave no list of models");
                    Vec::new()
                }
            });
        }
        let choices = &self.rt.choices;
        let mut names: Vec<(String, bool)> = vec![(self.model.clone(), false)];
        let from_settings = choices.models.iter().chain(choices.prices.keys());
        for name in from_settings {
            names.push((name.clone(), false));
        }
        for name in self.listed.iter().flatten() {
            names.push((name.clone(), true));
        }
        let mut entries: Vec<ModelEntry> = Vec::new();
        for (name, from_service) in names {
            if entries.iter().any(|e| e.name == name) {
                continue;
            }
            entries.push(ModelEntry {
                window: crate::config::windows::known_window(&name),
                priced: choices.prices.contains_key(&name),
                from_service,
                name,
            });
        }
        entries
    }
}
