//! A link that breaks and comes back (*Synchronization and Disconnected Operation in WorkToDo*
//! (IC-03-006), §5.3), on the node's actor: the outbox's news of a peer that cannot be reached (or
//! answers again), and any message from it, go to the engine (as a host: that device's users
//! inactive) and the desk (as a device: that host's items disabled); `GET /directory` shows the
//! devices this node cannot reach.

use libp2p::PeerId;
use mobiwf_engine::Input;
use mobiwf_people::DeskInput;

use super::DirectoryView;
use super::actor::{NodeActor, Produced};

impl NodeActor {
    /// A peer became unreachable or answered again (the WorkToDo report, §5.3): as a host, the
    /// users whose device it is are inactive meanwhile; as a device, the items it hosts are
    /// disabled but for those held with their data here.
    pub(super) fn link(
        &mut self,
        now: u64,
        peer: PeerId,
        reachable: bool,
        (effects, desk_effects): &mut Produced,
    ) {
        let changed = if reachable {
            self.unreachable.remove(&peer)
        } else {
            self.unreachable.insert(peer)
        };
        if !changed {
            return;
        }
        tracing::info!(%peer, reachable, "{}", if reachable { "a peer answers again" } else { "a peer cannot be reached" });
        let input = Input::Link {
            peer: mobiwf_proto::NodeId::new(peer.to_string()),
            reachable,
        };
        match self.engine.apply_us(now, input) {
            Ok(applied) => effects.extend(applied),
            Err(e) => tracing::warn!("a link's news: {e}"),
        }
        let input = DeskInput::HostLink {
            host: peer.to_string(),
            reachable,
        };
        match self
            .desk
            .apply(now / 1000, self.engine.directory(), &self.name, input)
        {
            Ok(applied) => desk_effects.extend(applied.effects),
            Err(e) => tracing::warn!("a link's news: {e}"),
        }
    }

    /// The directory version this node holds, its users, and the devices it cannot reach.
    pub(super) fn directory_view(&self) -> DirectoryView {
        let dir = self.engine.directory();
        DirectoryView {
            version: dir.version,
            users: dir
                .users_on(self.name.as_str())
                .map(|u| u.id.clone())
                .collect(),
            devices: dir.devices.keys().cloned().collect(),
            unreachable: dir
                .devices
                .values()
                .filter(|d| dir.unreachable.contains(&d.node))
                .map(|d| d.name.clone())
                .collect(),
        }
    }
}
