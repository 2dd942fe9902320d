//! Hosts outside `[sandbox] allowed_domains`, asked about mid-call: the
//! sandbox's proxy holds a command's connection to such a host and asks
//! here. The verdict is policy's (`host_verdict`: the session's answer for
//! that host, else a question where someone can answer, else a refusal);
//! the question goes to the front end as any permission does, in the same
//! four-answer dialog ("bash wants to reach HOST:PORT"), one at a time, and
//! "allow for session" and "never" are remembered per host. Every verdict
//! is told to the front end as a notice, so a connection let through is
//! seen. Private addresses stay refused by the proxy whatever is answered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use super::events::{AgentEvent, ConsentRequest};
use crate::policy::destination::{HostVerdict, host_verdict};
use crate::policy::{CanAsk, ConsentAnswer, Offer, ToolKey};
use crate::tools::Field;
use crate::tools::FieldRole;

/// The proxy's asker for one agent run.
#[derive(Debug)]
pub struct HostQuestions {
    events: super::events::EventSender,
    can_ask: CanAsk,
    /// `host:port` → the answer that holds for the session.
    remembered: Mutex<HashMap<String, ConsentAnswer>>,
    /// One question at a time: a second connection to the same host waits
    /// for the first answer instead of opening a second dialog.
    one_at_a_time: tokio::sync::Mutex<u64>,
}

impl HostQuestions {
    pub fn new(events: super::events::EventSender, can_ask: CanAsk) -> Arc<Self> {
        Arc::new(Self {
            events,
            can_ask,
            remembered: Mutex::new(HashMap::new()),
            one_at_a_time: tokio::sync::Mutex::new(0),
        })
    }

    fn remembered(&self, destination: &str) -> Option<ConsentAnswer> {
        self.remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(destination)
            .copied()
    }

    async fn decide(self: Arc<Self>, destination: String) -> bool {
        let mut asked = self.one_at_a_time.lock().await;
        let verdict = host_verdict(self.remembered(&destination), self.can_ask);
        let allowed = match verdict {
            HostVerdict::Allow => return true,
            HostVerdict::Deny => false,
            HostVerdict::Ask => {
                *asked += 1;
                let (reply, answer) = oneshot::channel();
                let _ = self.events.send(AgentEvent::Consent(ConsentRequest {
                    call_id: format!("host-{}", *asked),
                    tool: ToolKey::new(&destination),
                    fields: vec![
                        Field::named(FieldRole::Host, destination.clone()),
                        Field::warning(
                            "A command wants to reach a host outside [sandbox] allowed_domains. \
                             Allowing it lets connections to this host through the sandbox's \
                             proxy; private addresses stay refused.",
                        ),
                    ],
                    offer: Offer::all(),
                    reply,
                }));
                let answer = answer.await.map_or(ConsentAnswer::Reject, |r| r.answer);
                if matches!(
                    answer,
                    ConsentAnswer::AllowForSession | ConsentAnswer::NeverThisRun
                ) {
                    self.remembered
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(destination.clone(), answer);
                }
                answer.allows()
            }
        };
        let said = if allowed {
            format!(
                "The sandbox's proxy let a command reach {destination}, outside allowed_domains."
            )
        } else {
            format!("The sandbox's proxy refused {destination}: it is outside allowed_domains.")
        };
        let _ = self.events.send(AgentEvent::Notice(said));
        allowed
    }
}

/// The asker a shared handle gives the proxy.
#[derive(Debug)]
pub struct Asker(pub Arc<HostQuestions>);

impl crate::sandbox::proxy::HostAsk for Asker {
    fn ask(&self, host: &str, port: u16) -> BoxFuture<'static, bool> {
        let destination = format!("{}:{port}", host.to_ascii_lowercase());
        Box::pin(Arc::clone(&self.0).decide(destination))
    }
}
