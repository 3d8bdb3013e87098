//! What a work item reads, for the device of a user it is offered to or held by: the device
//! copies it while connected, so that its user can work the item without the network
//! (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §5.2; *WorkToDo: um
//! sistema de gerenciamento de workflows para ambientes de comunicação sem fio*, §3.3.3). Asked
//! with `Message::ItemData`, answered at once, never stored. The same copy gives an item's
//! application (semi-automatic activities) its inputs on the device that runs it.

use mobiwf_proto::{ActivityId, Datum, InstanceId, NodeId};

use crate::Engine;

impl Engine {
    /// The known values of the activity's `<reads>`, for `device`: refused (with the reason)
    /// when no work item of the activity is open here, when none of the users it is offered to
    /// or held by has `device` as their device, or when it may not be taken offline.
    pub fn item_reads(
        &self,
        instance: InstanceId,
        activity: ActivityId,
        device: &NodeId,
    ) -> Result<Vec<Datum>, String> {
        let label = format!("activity {activity} of instance {instance}");
        let Some(item) = self
            .host
            .items
            .get(&(instance, activity))
            .filter(|i| i.is_open())
        else {
            return Err(format!("no open work item for {label} on this host"));
        };
        let dir = &self.host.directory;
        let involved = item.involved();
        let theirs = involved
            .offered
            .iter()
            .chain(&involved.held)
            .any(|u| dir.device_of(u.as_str()).is_some_and(|d| &d.node == device));
        if !theirs {
            return Err(format!(
                "{label} is offered to and held by none of the users of node {device}"
            ));
        }
        let Some(act) = self
            .runs
            .get(&item.run_key())
            .and_then(|r| r.activity(activity))
        else {
            return Err(format!("{label} is not in a partition run here"));
        };
        if !act.people.disconnected && act.application.is_none() {
            return Err(format!(
                "{label} may not be taken offline (no <disconnected>) and starts no \
                 application: nothing to copy"
            ));
        }
        Ok(self.reads_of(instance, act))
    }
}
