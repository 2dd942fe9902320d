//! The session's permission mode and remembered answers: `/mode` (a
//! loosening waits for its yes), an editor's mode selector, `/permissions`
//! and revoking one of them.

use crate::policy::{BashConfinement, CanAsk, Mode, grants, revoke};

use super::super::events::AgentEvent;
use super::Agent;

impl Agent {
    /// Tells the front end what is remembered now; `listed` for
    /// `/permissions`.
    pub(super) fn permissions(&self, listed: bool) {
        self.rt.emit(AgentEvent::Permissions {
            grants: grants(&self.current.consent, &self.run),
            listed,
        });
    }

    /// `/permissions N`: forgets the Nth remembered answer, so the tool's
    /// next call is decided (and asked) again.
    pub(super) fn revoke(&mut self, n: usize) {
        let all = grants(&self.current.consent, &self.run);
        let Some(grant) = n.checked_sub(1).and_then(|i| all.get(i)) else {
            let count = all.len();
            self.rt.emit(AgentEvent::Error(if count == 0 {
                format!("/permissions {n}: nothing is remembered; there is nothing to revoke.")
            } else {
                format!("/permissions {n}: there are {count} remembered answers; give a number from 1 to {count}, as /permissions lists them.")
            }));
            return;
        };
        if revoke(grant, &mut self.current.consent, &mut self.run) {
            self.notice(format!(
                "Revoked: {}. The next such call is decided again.",
                grant.describe()
            ));
        }
        self.permissions(false);
    }

    /// How this run's Bash commands are confined, for the mode question.
    fn confinement(&self) -> BashConfinement {
        self.rt.tool_cx.sandbox.sandbox.confinement()
    }

    pub(super) fn switch_mode(&mut self, to: Mode) {
        let from = self.current.mode;
        if !from.is_loosening(to) {
            self.current.mode = to;
            self.notice(format!("Permission mode for this session: {to}."));
            self.rt.emit(AgentEvent::ModeChanged(to));
            return;
        }
        if self.rt.can_ask == CanAsk::No {
            self.notice(to.warning(&self.confinement()));
            self.rt.emit(AgentEvent::Error(
                "Denied: changing the permission mode requires an interactive terminal.".into(),
            ));
            return;
        }
        self.pending_mode = Some(to);
        self.rt.emit(AgentEvent::ConfirmMode {
            from,
            to,
            warning: to.warning(&self.confinement()),
        });
    }

    /// A mode chosen in an editor's selector: applied as a confirmed
    /// switch, with the same notice and event.
    pub fn choose_mode(&mut self, to: Mode) {
        self.pending_mode = Some(to);
        self.confirm_mode(to, true);
    }

    /// The answer to `Switch to this mode? [y/N]`.
    pub fn confirm_mode(&mut self, to: Mode, yes: bool) {
        let pending = self.pending_mode.take();
        if yes && pending == Some(to) {
            self.current.mode = to;
            self.notice(format!("Permission mode for this session: {to}."));
            self.rt.emit(AgentEvent::ModeChanged(to));
            if to == Mode::Auto {
                self.offer_trust();
            }
        } else {
            self.notice(format!(
                "Permission mode for this session unchanged: {}.",
                self.current.mode
            ));
        }
    }
}
