//! What the node's outbox tells its actor, beside delivering: peers that became unreachable
//! or answer again, and users' claims their hosts refused outright (taken from the outbox by
//! the actor, which removes them with the desk's answer in one group).

use mobiwf_runtime::daemon::{self, Base};
use mobiwf_runtime::outbox;
use tokio::sync::mpsc;

use super::Event;

/// Where the node's outbox tells what its actor acts on: peers gone and back, and claims their
/// hosts refused outright.
pub(super) struct OutboxNews {
    pub(super) link: mpsc::UnboundedSender<outbox::LinkNews>,
    pub(super) refused: outbox::DeliveredTo,
}

/// The receiving ends of [`OutboxNews`].
pub(super) struct OutboxTold {
    link: mpsc::UnboundedReceiver<outbox::LinkNews>,
    refused: mpsc::UnboundedReceiver<outbox::Delivered>,
}

impl OutboxNews {
    pub(super) fn channels() -> (OutboxNews, OutboxTold) {
        let (link, link_rx) = mpsc::unbounded_channel();
        let (to, refused_rx) = mpsc::unbounded_channel();
        let refused = outbox::DeliveredTo {
            to,
            takes: refused_claim,
        };
        let told = OutboxTold {
            link: link_rx,
            refused: refused_rx,
        };
        (OutboxNews { link, refused }, told)
    }
}

impl OutboxTold {
    /// Hands what the outbox tells to the actor, as events.
    pub(super) fn forward(self, base: &mut Base<Event>) {
        let events = base.events.clone();
        base.tasks
            .push(daemon::forward(self.link, events.clone(), Event::Link));
        base.tasks
            .push(daemon::forward(self.refused, events, Event::Refused));
    }
}

/// Which answers the actor takes from the outbox: a claim refused outright, whose user waits
/// for an answer the host will never send. The outbox removes every other entry itself.
pub(super) fn refused_claim(sent: &outbox::Outgoing, reply: &mobiwf_proto::Reply) -> bool {
    matches!(sent.envelope.message, mobiwf_proto::Message::Claim(_))
        && matches!(reply, mobiwf_proto::Reply::Refused { .. })
}
