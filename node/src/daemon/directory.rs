//! What `GET /directory` shows: the organisation directory's version as this node holds it,
//! the users whose device it is, the devices it knows, and those it cannot reach.

use super::DirectoryView;
use super::actor::NodeActor;

impl NodeActor {
    /// The directory version this node holds, its users, and the devices it cannot reach.
    pub(super) fn directory_view(&self) -> DirectoryView {
        let dir = self.core.engine().directory();
        DirectoryView {
            version: dir.version,
            users: dir
                .users_on(self.core.identity().name.as_str())
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
