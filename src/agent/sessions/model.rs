//! `/model`: the models a session can switch to and the switch itself.
//! The list holds the model in use, then the settings' service (`[model]
//! models`, the priced ones, the service's own list where its wire has
//! one), then each provider preset's (`PRESET/MODEL`, the same sources).
//! `/model NAME` takes a name of that list, or a preset's name alone for
//! its model; the switch is recorded in the session's file (so a resumed
//! session comes back to it) and the banner and status bar say so. A name
//! not among them changes nothing and is told what is accepted.

use std::time::Duration;

use crate::config::{ModelSettings, is_loopback_url};
use crate::session::{LogEntry, ModelChoice};

use super::super::events::{AgentEvent, ModelEntry};
use super::super::model_setup::SwitchError;
use super::Agent;

/// How long a service's list may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

impl Agent {
    /// `/model` alone lists; `/model NAME` switches.
    pub(super) async fn model(&mut self, name: Option<&str>) {
        let current = self.rt.setup.choice.spelling();
        let Some(name) = name else {
            self.list_services().await;
            let entries = self.model_entries();
            self.rt.emit(AgentEvent::Models { current, entries });
            return;
        };
        let refused = |e: SwitchError| {
            AgentEvent::Error(format!("/model {}: {e}", crate::controls::visible(name)))
        };
        // The services are asked for their lists only for a name the
        // settings do not give.
        let choice = match self.resolve(name, &self.model_entries()) {
            Ok(choice) => choice,
            Err(_) => {
                self.list_services().await;
                match self.resolve(name, &self.model_entries()) {
                    Ok(choice) => choice,
                    Err(e) => return self.rt.emit(refused(e)),
                }
            }
        };
        if choice == self.rt.setup.choice {
            self.notice(format!(
                "The model is already {}.",
                crate::controls::visible(&current)
            ));
            return;
        }
        let prepared = match self.prepare(&choice).await {
            Ok(prepared) => prepared,
            Err(e) => return self.rt.emit(refused(e)),
        };
        // On disk before it holds: a resumed session comes back to it.
        if let Err(e) = self
            .current
            .append_entry(LogEntry::Model(choice.clone()))
            .await
        {
            self.rt.emit(AgentEvent::Error(format!(
                "/model {}: the switch could not be recorded in the session's file, so nothing changed: {e}",
                crate::controls::visible(name)
            )));
            return;
        }
        self.current.model = Some(choice);
        let said = self.commit(prepared);
        self.notice(said);
        self.banner();
    }

    /// Tells the front end the names `/model` takes from the settings.
    pub(super) fn model_names(&self) {
        let mut names: Vec<String> = self.model_entries().into_iter().map(|e| e.name).collect();
        names.extend(self.rt.setup.presets.keys().cloned());
        self.rt.emit(AgentEvent::ModelNames(names));
    }

    /// What `name` switches to: a preset's name alone is its model; any
    /// other name must be one of `entries`.
    fn resolve(&self, name: &str, entries: &[ModelEntry]) -> Result<ModelChoice, SwitchError> {
        let setup = &self.rt.setup;
        if let Some(choice) = setup.preset_model(name) {
            return Ok(choice);
        }
        if entries.iter().any(|e| e.name == name) {
            return Ok(match setup.preset_name(name) {
                Some((preset, Some(model))) => ModelChoice::preset(&preset, &model),
                _ => ModelChoice::settings(name),
            });
        }
        let mut accepted: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
        accepted.extend(setup.presets.keys().cloned());
        Err(SwitchError::Unknown {
            accepted: crate::controls::visible(&accepted.join(", ")),
            file: setup.file_name(),
        })
    }

    /// The models to choose from: the one in use, then each service's
    /// (the settings' first), with the lists the services gave so far.
    fn model_entries(&self) -> Vec<ModelEntry> {
        let setup = &self.rt.setup;
        let mut entries: Vec<ModelEntry> = Vec::new();
        let current = &setup.choice;
        let in_use = setup
            .settings_of(current)
            .unwrap_or_else(|_| setup.active.clone());
        push_entry(&mut entries, current, &in_use, false);
        let services = std::iter::once((None, &setup.default)).chain(
            setup
                .presets
                .iter()
                .map(|(name, settings)| (Some(name.as_str()), settings)),
        );
        for (preset, settings) in services {
            let choice = |model: &str| match preset {
                Some(preset) => ModelChoice::preset(preset, model),
                None => ModelChoice::settings(model),
            };
            let from_settings = std::iter::once(&settings.model)
                .chain(&settings.choices.models)
                .chain(settings.choices.prices.keys());
            for model in from_settings {
                push_entry(&mut entries, &choice(model), settings, false);
            }
            let listed = self.listed.get(&preset.map(str::to_string));
            for model in listed.into_iter().flatten() {
                // A name that would read as a preset's is that preset's.
                if preset.is_some() || setup.preset_name(model).is_none() {
                    push_entry(&mut entries, &choice(model), settings, true);
                }
            }
        }
        entries
    }

    /// Asks each service not asked yet in this run for its list, all at
    /// once; a service that gives none is noted in the log.
    async fn list_services(&mut self) {
        let setup = &self.rt.setup;
        let mut asked = Vec::new();
        let services = std::iter::once((None, &setup.default)).chain(
            setup
                .presets
                .iter()
                .map(|(name, settings)| (Some(name.clone()), settings)),
        );
        for (preset, settings) in services {
            if self.listed.contains_key(&preset) {
                continue;
            }
            let config = super::super::build::provider_config(settings);
            asked.push(async move {
                let names = crate::model::listing::model_names(&config, LIST_TIMEOUT).await;
                (preset, names)
            });
        }
        for (preset, names) in futures_util::future::join_all(asked).await {
            let names = names.unwrap_or_else(|e| {
                tracing::info!(error = %e, preset = ?preset, "the service gave no list of models");
                Vec::new()
            });
            self.listed.insert(preset, names);
        }
    }
}

/// Adds `choice` of a service with `settings` to `entries`, once.
fn push_entry(
    entries: &mut Vec<ModelEntry>,
    choice: &ModelChoice,
    settings: &ModelSettings,
    from_service: bool,
) {
    let name = choice.spelling();
    if entries.iter().any(|e| e.name == name) {
        return;
    }
    let window = if settings.context_window_set {
        Some(settings.context_window)
    } else if is_loopback_url(&settings.base_url) {
        None
    } else {
        crate::config::windows::known_window(&choice.model)
    };
    entries.push(ModelEntry {
        window,
        priced: settings.choices.prices.contains_key(&choice.model),
        from_service,
        name,
    });
}
