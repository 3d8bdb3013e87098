//! Worklist administration by an operator: insert a work item on a user's worklist, remove it from
//! one, delegate it from one user to another. The controller checks what it can (the instance is
//! not over, the activity is a people activity placed on a node and not finished, the users are in
//! the directory) and sends the item's host a claim with a request number of its own; the host
//! decides and tells (`ItemEvents`, and an `Item` answering the claim). Selecting, locking,
//! releasing, unlocking and completing are the users' own, on their devices.

use mobiwf_proto::{ActivityId, InstanceId, ItemAction, Message};
use mobiwf_xml_schema::UserId;

use crate::directory::which;
use crate::history::Event;
use crate::recovery::{label, label_text, partition, view};
use crate::{Applied, Book, BookError, Effect, NodeInfo};

impl Book {
    /// An operator inserts, removes or delegates the work item of `activity`.
    pub(crate) fn administer(
        &mut self,
        now_ms: u64,
        instance: InstanceId,
        activity: ActivityId,
        user: UserId,
        action: ItemAction,
    ) -> Result<Applied, BookError> {
        if !matches!(
            action,
            ItemAction::Insert
                | ItemAction::Remove
                | ItemAction::Delegate { .. }
                | ItemAction::Extend { .. }
        ) {
            return Err(BookError::People(format!(
                "'{}' is done by the user on their own device; an operator can insert, remove, \
                 delegate a work item or extend its deadline",
                action.as_str()
            )));
        }
        let node = self.host_of(instance, activity)?;
        self.check_users(&user, &action)?;
        self.last_request += 1;
        self.dirty_people = true;
        let request = self.last_request;
        let inst = self.instance_mut(instance)?;
        let what = Event::Administered {
            activity: label(inst, activity),
            user: user.clone(),
            action: action.clone(),
            request,
        };
        self.history
            .push(instance, now_ms, Some(activity), Some(&node.name), what);
        Ok(Applied {
            effects: vec![Effect::Send {
                to: node.peer,
                addrs: node.addrs,
                message: Message::Claim(mobiwf_proto::Claim {
                    instance,
                    activity,
                    user,
                    action,
                    request,
                    offline_ms: None,
                    // The controller's word is for whatever item there is now.
                    offered_ms: None,
                }),
            }],
            instance: None,
        })
    }

    /// The node that hosts the work item of `activity`: the instance is not over, the
    /// activity is a people activity, not finished, placed on a registered node whose
    /// partition the controller did not give up.
    fn host_of(&self, instance: InstanceId, activity: ActivityId) -> Result<NodeInfo, BookError> {
        let inst = self
            .instances
            .get(&instance)
            .ok_or(BookError::UnknownInstance(instance))?;
        let refuse = |why: String| Err(BookError::People(why));
        if !inst.state().is_live() {
            return refuse(format!(
                "instance {instance} is {}: its work items are closed",
                inst.state().as_str()
            ));
        }
        let Some(a) = view(inst, activity) else {
            return refuse(format!("instance {instance} has no activity {activity}"));
        };
        let name = label_text(inst, activity);
        if a.state().is_final() {
            return refuse(format!(
                "{name} of instance {instance} is {}: its work item is closed",
                a.state().as_str()
            ));
        }
        let people = self
            .definitions
            .get(&instance)
            .and_then(|d| d.activity(activity))
            .is_none_or(|d| d.people.assigned());
        if !people {
            return refuse(format!(
                "{name} of instance {instance} names no <role>, <department> or <team>: it is \
                 on nobody's worklist"
            ));
        }
        let Some(p) = a.partition.and_then(|p| partition(inst, p)) else {
            return refuse(format!(
                "{name} of instance {instance} is not placed on a node yet (a contingency \
                 activity waiting for a partner)"
            ));
        };
        if let Some(why) = p.abandoned() {
            return refuse(format!(
                "the controller gave up on partition {} that runs {name} of instance \
                 {instance} ({why})",
                p.id
            ));
        }
        match self.nodes.get(&p.peer) {
            Some(node) => Ok(node.clone()),
            None => refuse(format!(
                "node {} that runs {name} of instance {instance} is not registered",
                p.node
            )),
        }
    }

    /// The users of an administration are in the directory: the user, and for a
    /// delegation the one who gets the item.
    fn check_users(&self, user: &UserId, action: &ItemAction) -> Result<(), BookError> {
        let mut users = vec![user];
        if let ItemAction::Delegate { to } = action {
            users.push(to);
        }
        let missing: Vec<String> = users
            .into_iter()
            .filter(|u| self.directory.user(u.as_str()).is_none())
            .map(|u| {
                format!(
                    "no user '{u}' in {}; apply an organisation that has them",
                    which(&self.directory)
                )
            })
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(BookError::People(missing.join("\n")))
        }
    }
}
