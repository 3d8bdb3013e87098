//! The command-line options of the mesh's per-peer limits on inbound requests: both daemons
//! take them (`mobiwf-node run`, `mobiwf-controller serve`), so they live with the limits.

use super::InboundLimits;
use super::limits::{MAX_INBOUND_IN_FLIGHT_PER_PEER, MAX_INBOUND_PER_PEER_PER_SEC};

/// How much one peer may ask of this daemon at once; past it, its requests are shed (left
/// unanswered: a partner's outbox tries again) and counted in `mobiwf_inbound_shed_total`.
#[derive(Debug, Clone, clap::Args)]
pub struct InboundArgs {
    /// The most messages of one peer waiting here for an answer at once.
    #[arg(long, value_name = "N", default_value_t = MAX_INBOUND_IN_FLIGHT_PER_PEER,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub inbound_in_flight_per_peer: u32,
    /// The most messages a second from one peer (sustained; a burst of as many is let in).
    #[arg(long, value_name = "N", default_value_t = MAX_INBOUND_PER_PEER_PER_SEC,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub inbound_per_peer_per_sec: u32,
}

impl InboundArgs {
    /// The limits these options give.
    pub fn limits(&self) -> InboundLimits {
        InboundLimits {
            in_flight_per_peer: self.inbound_in_flight_per_peer,
            per_peer_per_sec: self.inbound_per_peer_per_sec,
        }
    }
}
