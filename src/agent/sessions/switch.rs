//! Putting the run's requests on a model: the service's settings with that
//! model, its window (a local server asked, as at start), the profile the
//! window chooses unless the settings name one (its tools and system
//! prompt with it), a provider built for it. Prepared first, where
//! anything can fail, then committed at once, so a refused switch changes
//! nothing. Also follows the session in use: a session goes back to the
//! model its file last recorded, a new one starts on the settings'.

use crate::config::{ModelSettings, ProfileChoice};
use crate::model::{Provider, ProviderConfig};
use crate::session::ModelChoice;

use super::super::events::AgentEvent;
use super::super::model_setup::{SwitchError, window_of};
use super::Agent;

/// A switch ready to commit: nothing of the run has changed yet.
pub(super) struct Prepared {
    choice: ModelChoice,
    settings: ModelSettings,
    source: String,
    profile: ProfileChoice,
    config: ProviderConfig,
    provider: Box<dyn Provider>,
}

impl Agent {
    /// Everything `choice` needs, or why it cannot be used.
    pub(super) async fn prepare(&self, choice: &ModelChoice) -> Result<Prepared, SwitchError> {
        let setup = &self.rt.setup;
        let mut settings = setup.settings_of(choice)?;
        if let Some(refused) = setup.missing_key(choice, &settings) {
            return Err(refused);
        }
        let (window, source) = window_of(&settings).await;
        settings.context_window = window;
        let profile = ProfileChoice::choose(settings.profile, window);
        let mut config = super::super::build::provider_config(&settings);
        config.extras.force_tool_call = profile.is_small();
        let provider = crate::model::build_provider(&config)?;
        Ok(Prepared {
            choice: choice.clone(),
            settings,
            source,
            profile,
            config,
            provider,
        })
    }

    /// Makes `prepared` the run's model; returns the sentence that says so.
    pub(super) fn commit(&mut self, prepared: Prepared) -> String {
        let Prepared {
            choice,
            settings,
            source,
            profile,
            config,
            provider,
        } = prepared;
        let rt = &mut self.rt;
        if profile.profile != rt.profile.profile {
            std::mem::swap(&mut rt.registry, &mut rt.other_profile.registry);
            std::mem::swap(&mut rt.system, &mut rt.other_profile.system);
        }
        let said = format!(
            "Model for this session from now on: {} ({} at {}); context window {} tokens ({source}); profile: {}{}.",
            crate::controls::visible(&choice.spelling()),
            settings.provider,
            crate::model::http::shown_url(&settings.base_url),
            settings.context_window,
            profile.profile.name(),
            if profile.by_window.is_none() {
                " (from settings)"
            } else {
                ""
            }
        );
        rt.provider = provider;
        rt.profile = profile;
        rt.context_window = settings.context_window;
        rt.window_source = Some(source);
        rt.output_reserve = u64::from(settings.max_output_tokens());
        rt.setup.choice = choice;
        rt.setup.active = settings;
        rt.setup.config = config;
        // What the budget learnt of one model's counts says nothing of
        // another's.
        self.current.calibration = Default::default();
        said
    }

    /// The session in use begins (a start, `/new`, `/resume`): the run
    /// follows its model, then the banner says so, then what following
    /// found.
    pub(super) async fn enter_session(&mut self) {
        let said = self.follow_session().await;
        self.banner();
        for event in said {
            self.rt.emit(event);
        }
    }

    /// Puts the run on the model of the session in use (its last `/model`,
    /// else the settings' start model). Returns what to say after the
    /// banner: a session whose model cannot be used now (its preset gone,
    /// its key unset) continues on the settings' model, and says so.
    async fn follow_session(&mut self) -> Vec<AgentEvent> {
        let start = self.rt.setup.start();
        let wanted = self.current.model.clone().unwrap_or_else(|| start.clone());
        if wanted == self.rt.setup.choice {
            return Vec::new();
        }
        let mut said = Vec::new();
        let prepared = match self.prepare(&wanted).await {
            Ok(prepared) => Ok(prepared),
            Err(e) if wanted != start => {
                said.push(AgentEvent::Warning(format!(
                    "Session {} was on {}, which cannot be used now: {e}. It continues on {}, the settings' model.",
                    self.current.id,
                    crate::controls::visible(&wanted.spelling()),
                    crate::controls::visible(&start.spelling()),
                )));
                self.current.model = None;
                if start == self.rt.setup.choice {
                    return said;
                }
                self.prepare(&start).await
            }
            Err(e) => Err(e),
        };
        match prepared {
            Ok(prepared) => said.push(AgentEvent::Notice(self.commit(prepared))),
            Err(e) => said.push(AgentEvent::Error(format!(
                "The session's model could not be set up: {e}"
            ))),
        }
        said
    }
}
