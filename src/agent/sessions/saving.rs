//! What the agent writes into the user's settings, each only after a yes
//! to the exact text shown: a remembered answer as a `[[rules]]` entry
//! (`/permissions save N`), and on auto mode's first day the common
//! read-only tools as trusted executables (`first_trust`). The whole file
//! is checked to load first and written atomically; a trust takes effect
//! for this run too.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::save_rule::{appended, rule_for, write};
use crate::policy::shell::Trusted;
use crate::policy::{CanAsk, Grant, grants};

use super::super::events::AgentEvent;
use super::super::first_trust;
use super::Agent;

/// Settings text waiting for its yes.
#[derive(Debug, Clone)]
pub(super) enum Append {
    /// A remembered answer, as a rule.
    Rule(Grant, PathBuf),
    /// Tools to trust: (path, SHA-256).
    Trust(Vec<(PathBuf, String)>, PathBuf),
}

impl Append {
    fn file(&self) -> &PathBuf {
        match self {
            Append::Rule(_, file) | Append::Trust(_, file) => file,
        }
    }

    /// The text to append, made again from what was offered.
    fn text(&self) -> Result<String, String> {
        match self {
            Append::Rule(grant, _) => rule_for(grant),
            Append::Trust(found, _) => Ok(first_trust::toml(found)),
        }
    }
}

impl Agent {
    /// `/permissions save N`: shows the rule the Nth remembered answer
    /// would be, checked to load with the rest of the user's settings, and
    /// asks before appending it.
    pub(super) fn offer_rule(&mut self, n: usize) {
        let all = grants(&self.current.consent, &self.run);
        let Some(grant) = n.checked_sub(1).and_then(|i| all.get(i)) else {
            let count = all.len();
            self.rt.emit(AgentEvent::Error(match count {
                0 => format!("/permissions save {n}: nothing is remembered; there is nothing to save."),
                1 => format!("/permissions save {n}: there is 1 remembered answer; give 1, as /permissions lists it."),
                _ => format!("/permissions save {n}: there are {count} remembered answers; give a number from 1 to {count}, as /permissions lists them."),
            }));
            return;
        };
        let Some(file) = self.rt.settings_file.clone() else {
            self.rt.emit(AgentEvent::Error(format!(
                "/permissions save {n}: this run has no user settings file to save a rule in."
            )));
            return;
        };
        let append = Append::Rule(grant.clone(), file);
        if let Err(why) = self.offer(append, |file| {
            format!("Append this rule to {}? [y/N]", file.display())
        }) {
            self.rt
                .emit(AgentEvent::Error(format!("/permissions save {n}: {why}")));
        }
    }

    /// After the run's first switch to auto with nothing trusted: the
    /// read-only tools found here, offered for the user's settings. Silent
    /// when there is nothing to offer or nobody to ask.
    pub(super) fn offer_trust(&mut self) {
        if std::mem::replace(&mut self.trust_offered, true)
            || !self.rt.tool_cx.gate.rules.trusted.is_empty()
            || self.rt.can_ask == CanAsk::No
        {
            return;
        }
        let Some(file) = self.rt.settings_file.clone() else {
            return;
        };
        let found = first_trust::candidates();
        if found.is_empty() {
            return;
        }
        let _ = self.offer(Append::Trust(found, file), |file| {
            format!(
                "Nothing is trusted yet, so auto mode asks about every command. Trust these read-only tools (a command of one of them, written with its path, runs without a question when the gate can read it) and append them to {}? [y/N]",
                file.display()
            )
        });
    }

    fn offer(&mut self, append: Append, ask: impl Fn(&PathBuf) -> String) -> Result<(), String> {
        let text = append.text()?;
        appended(append.file(), &text)?;
        let file = append.file().clone();
        self.pending_append = Some(append);
        self.rt.emit(AgentEvent::ConfirmRule {
            toml: text,
            ask: ask(&file),
            file,
        });
        Ok(())
    }

    /// The answer to `Append … to FILE? [y/N]`: the file is read again,
    /// the text appended, the whole checked and written atomically.
    pub async fn confirm_rule(&mut self, yes: bool) {
        let Some(append) = self.pending_append.take() else {
            return;
        };
        let file = append.file().clone();
        if !yes {
            self.notice(format!(
                "Nothing was saved; {} is unchanged.",
                file.display()
            ));
            return;
        }
        let job = append.clone();
        let saved = tokio::task::spawn_blocking(move || {
            let text = job.text().and_then(|t| appended(job.file(), &t))?;
            write(job.file(), &text).map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        let written = match saved {
            Ok(written) => written,
            Err(why) => {
                self.rt.emit(AgentEvent::Error(format!(
                    "Nothing was saved; {} is unchanged: {why}",
                    file.display()
                )));
                return;
            }
        };
        match append {
            Append::Rule(..) => self.notice(format!(
                "Saved the rule to {}; it decides from mino's next start (this session's answer holds until then).",
                written.display()
            )),
            Append::Trust(found, _) => {
                self.trust_now(&found);
                self.notice(format!(
                    "Trusted {} tools in {}; auto mode runs their plain read-only commands from now on.",
                    found.len(),
                    written.display()
                ));
            }
        }
    }

    /// The gate and the bash tool's description take the trust for this
    /// run at once, as the next start would from the settings.
    fn trust_now(&mut self, found: &[(PathBuf, String)]) {
        let mut setup = (*self.rt.tool_cx.gate).clone();
        setup
            .rules
            .trusted
            .extend(found.iter().map(|(path, digest)| Trusted {
                path: path.display().to_string(),
                sha256: Some(digest.clone()),
            }));
        let paths: Vec<String> = setup.rules.trusted.iter().map(|t| t.path.clone()).collect();
        self.rt.tool_cx.gate = Arc::new(setup);
        // Both profiles' tools: a switch of model may bring the other.
        let rt = &mut self.rt;
        for registry in [&mut rt.registry, &mut rt.other_profile.registry] {
            if let Some(spec) = super::super::build::bash_spec_trusting(registry, &paths) {
                registry.set_spec(spec);
            }
        }
    }
}
