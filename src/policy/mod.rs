//! THE decision: facts in, `Decision` out. Pure: no I/O, no async, no clock.
//! Everything it needs arrives as facts that the program established itself;
//! nothing the model wrote or read reaches it.

mod consent;
mod decide;
pub mod destination;
mod facts;
pub mod mode;
pub mod protected;
mod root;
pub mod saved;
pub mod shell;
pub mod surfaces;

pub use consent::{
    ConsentAnswer, Grant, GrantScope, Offer, RunConsent, SessionConsent, command_scoped, grants,
    offer, remember, remember_call, revoke,
};
pub use decide::{CanAsk, Decision, DenyCode, PLAN_MODE_REASON, Shown, decide};
pub use facts::{CallFacts, CallKind, GateVerdict, HookVerdict, PathTarget, ToolClaims, ToolKey};
pub use mode::{BashConfinement, MODE_NAMES, Mode, UnknownMode};
pub use protected::{PatternError, ProtectedPaths, Protection};
pub use root::{RootRefused, check_root};
pub use surfaces::{Surface, Surfaces};

/// The key a fetch to a private address is remembered under, apart from
/// `fetch_content`: allowing one does not allow the other.
pub const PRIVATE_FETCH_KEY: &str = "fetch_content (private address)";

/// The sentence every denied result ends with.
pub const DO_NOT_RETRY: &str = "Do not retry or work around this with another tool.";

/// The start of the result the model receives when the user rejects a call
/// with a note; the note follows.
pub const USER_REJECTED_WITH_NOTE: &str = "The user rejected this call: ";

/// The result the model receives when the user rejects a command (the
/// seed's words; `user_rejected` gives every kind's).
pub const USER_REJECTED: &str =
    "The user did not approve this command. Do not retry without a new user request.";

/// The result the model receives when the user rejects a call of `kind`:
/// a write is a change, a fetch a fetch, the rest commands.
pub fn user_rejected(kind: &CallKind) -> &'static str {
    match kind {
        CallKind::FileWrite | CallKind::SurfaceWrite { .. } | CallKind::PlanChange => {
            "The user did not approve this change. Do not retry without a new user request."
        }
        CallKind::Fetch | CallKind::FetchPrivate => {
            "The user did not approve this fetch. Do not retry without a new user request."
        }
        _ => USER_REJECTED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_names_what_was_rejected() {
        assert_eq!(user_rejected(&CallKind::Shell), USER_REJECTED);
        assert!(USER_REJECTED.contains("this command."));
        assert!(user_rejected(&CallKind::FileWrite).contains("did not approve this change."));
        assert!(user_rejected(&CallKind::Fetch).contains("did not approve this fetch."));
        assert!(user_rejected(&CallKind::PlanChange).contains("did not approve this change."));
        for kind in [CallKind::FileWrite, CallKind::Fetch, CallKind::Shell] {
            assert!(user_rejected(&kind).ends_with("Do not retry without a new user request."));
        }
    }
}
