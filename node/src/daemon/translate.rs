//! What a message from a peer means to the node: a pure translation into an [`Input`] of
//! the partition engine or of the desk (its users' worklists), or the reason the node refuses
//! it (before anything changes).

use libp2p::PeerId;
use mobiwf_engine::Input;
use mobiwf_people::{DeskInput, Directory};
use mobiwf_proto::{Message, NodeId};
use mobiwf_runtime::outbox;

/// Which of the node's two cores a message is for.
pub(super) enum Routed {
    /// The partition engine (partitions, and the work items this node hosts).
    Engine(Input),
    /// The desk (the worklists of the users whose device this node is).
    Desk(DeskInput),
}

/// The core and input `message` from `from` stands for, or why the node refuses it: the
/// engine's messages as [`input_of`] says; the directory and notices only from the controller;
/// a claim from a device (or the controller, for an administrator's action); an item's
/// snapshot only from the item's host.
pub(super) fn route_of(
    from: &PeerId,
    from_controller: bool,
    message: Message,
) -> Result<Routed, String> {
    let kind = message.kind();
    let only_controller = |what: &str| {
        if from_controller {
            Ok(())
        } else {
            Err(format!("only this node's controller sends {what} messages"))
        }
    };
    Ok(match message {
        Message::Directory {
            version,
            document,
            devices,
        } => {
            only_controller(kind)?;
            let directory =
                Directory::parse(version, document, devices).map_err(|e| e.to_string())?;
            tracing::info!(version, "organisation directory received");
            Routed::Engine(Input::Directory(directory))
        }
        message @ Message::Claim { .. } => {
            let sender = (!from_controller).then(|| NodeId::new(from.to_string()));
            Routed::Engine(claim_input(message, sender).ok_or("not a claim")?)
        }
        message @ Message::Item { .. } => {
            if let Message::Item { info, .. } = &message {
                let (host, _) = outbox::peer_of(&info.host)?;
                if host != *from {
                    return Err(format!(
                        "a work item's snapshot comes from its host ({}), not from {from}",
                        info.host
                    ));
                }
            }
            Routed::Desk(DeskInput::from_message(message).ok_or("not an item")?)
        }
        // Matched by the desk against a claim of its own under way (request, item, user).
        message @ Message::Answer { .. } => {
            Routed::Desk(DeskInput::from_message(message).ok_or("not an answer")?)
        }
        message @ Message::Notice { .. } => {
            only_controller(kind)?;
            Routed::Desk(DeskInput::from_message(message).ok_or("not a notice")?)
        }
        other => Routed::Engine(input_of(from, from_controller, other)?),
    })
}

/// Refuses an answer to a claim of this device that does not come from the host the claim
/// was sent to (request numbers are small and guessable: a stranger's answer would end the
/// claim and tell the user done or refused while the real one is on its way).
pub(super) fn answer_from_its_host(
    desk: &mobiwf_people::Desk,
    from: &PeerId,
    input: &DeskInput,
) -> Result<(), String> {
    let DeskInput::Answer { answer, .. } = input else {
        return Ok(());
    };
    let Some(claim) = desk.pending().find(|c| c.request == answer.request) else {
        // Answers no claim under way: the desk ignores it.
        return Ok(());
    };
    match outbox::peer_of(&claim.host) {
        Ok((host, _)) if host == *from => Ok(()),
        _ => Err(format!(
            "an answer to a claim comes from the item's host ({}), not from {from}",
            claim.host
        )),
    }
}

/// The engine input `message` from `from` stands for, or why the node refuses it:
/// only its controller deploys, withdraws, substitutes, controls, asks for compensations and
/// reruns; partners notify; a
/// document whose adjacents cannot be reached is refused before it is deployed (its
/// notifications could never be delivered).
pub(super) fn input_of(
    from: &PeerId,
    from_controller: bool,
    message: Message,
) -> Result<Input, String> {
    let kind = message.kind();
    let controllers_only = matches!(
        message,
        Message::Deploy { .. }
            | Message::Withdraw { .. }
            | Message::Substitute { .. }
            | Message::Control { .. }
            | Message::Completed { .. }
            | Message::Compensate(_)
            | Message::Rerun(_)
    );
    if controllers_only && !from_controller {
        tracing::warn!(peer = %from, kind, "refused a controller's message from a peer that is not our controller");
        return Err(format!("only this node's controller sends {kind} messages"));
    }
    match message {
        Message::Notify { .. } | Message::StateChanged { .. } => {
            let sender = (!from_controller).then(|| NodeId::new(from.to_string()));
            partner_input(message, sender)
        }
        other => controller_input(other),
    }
}

/// A partner's word about an activity it runs (`from`: `None` when the controller relays
/// it); the engine checks the sender runs the activity.
fn partner_input(message: Message, from: Option<NodeId>) -> Result<Input, String> {
    Ok(match message {
        Message::Notify {
            instance,
            activity,
            outcome,
            entered,
            flag,
            routed,
            data,
            // Inline contents and the holder are the daemon's (`data::unpack`), which also
            // fills in the files still missing.
            files: _,
            holder: _,
        } => Input::Notified {
            from,
            instance,
            activity,
            outcome,
            entered,
            flag,
            routed,
            carried: mobiwf_engine::Carried {
                data,
                missing: Vec::new(),
            },
        },
        Message::StateChanged {
            instance,
            activity,
            entered,
        } => Input::StateChanged {
            from,
            instance,
            activity,
            entered,
        },
        other => return Err(format!("a node does not take {} messages", other.kind())),
    })
}

/// What the controller orders.
fn controller_input(message: Message) -> Result<Input, String> {
    Ok(match message {
        Message::Deploy {
            instance,
            partition,
            document,
            responsible,
            hour_ms,
            runs_on,
        } => {
            check_locations(&document)?;
            tracing::info!(%instance, %partition, "partition deployed");
            Input::Deploy {
                instance,
                partition,
                document,
                responsible,
                hour_ms,
                runs_on: runs_on.into_iter().collect(),
            }
        }
        Message::Completed { instance, by } => {
            tracing::info!(%instance, %by, "the instance was completed by its completion activity");
            Input::Completed { instance, by }
        }
        Message::Withdraw {
            instance,
            partition,
            activities,
            reason,
        } => {
            let ids: Vec<u64> = activities.iter().map(|a| a.0).collect();
            tracing::warn!(%instance, %partition, activities = ?ids, %reason, "the controller withdrew activities");
            Input::Withdraw {
                instance,
                activities,
                reason,
            }
        }
        Message::Substitute {
            instance,
            replaced,
            by,
            location,
        } => {
            tracing::info!(%instance, %replaced, %by, %location, "contingency activity runs instead");
            let peer = outbox::peer_of(&location)
                .ok()
                .map(|(peer, _)| NodeId::new(peer.to_string()));
            Input::Substitute {
                instance,
                replaced,
                by,
                peer,
            }
        }
        Message::Control { instance, action } => {
            tracing::info!(%instance, action = action.as_str(), "operator control");
            Input::Control { instance, action }
        }
        Message::Compensate(c) => {
            tracing::info!(instance = %c.instance, activity = %c.activity, "compensation asked for");
            Input::Compensate {
                instance: c.instance,
                partition: c.partition,
                activity: c.activity,
            }
        }
        Message::Rerun(r) => {
            let ids: Vec<u64> = r.activities.iter().map(|a| a.0).collect();
            tracing::info!(instance = %r.instance, partition = %r.partition, activities = ?ids, "operator rerun");
            Input::Rerun {
                instance: r.instance,
                partition: r.partition,
                activities: r.activities,
            }
        }
        other => return Err(format!("a node does not take {} messages", other.kind())),
    })
}

/// The engine input of a claim: `from` is the sending node (a device), none for the
/// controller.
pub(super) fn claim_input(message: Message, from: Option<NodeId>) -> Option<Input> {
    match message {
        Message::Claim {
            instance,
            activity,
            user,
            action,
            request,
            offline_ms,
            offered_ms,
        } => Some(Input::Claim {
            instance,
            activity,
            user,
            action,
            request,
            from,
            offline_ms,
            offered_ms,
            // Filled in by the daemon (`data::unpack`), which keeps the inline contents.
            missing: Vec::new(),
        }),
        _ => None,
    }
}

/// Every adjacent's location must be a full libp2p address, or its notification could never be
/// delivered.
pub fn check_locations(document: &str) -> Result<(), String> {
    let doc = mobiwf_xml_schema::read_partition(document.as_bytes())
        .map_err(|d| d.render("partition document"))?
        .value;
    for act in &doc.activities {
        for adj in &act.adjacents {
            let local = doc.activities.iter().any(|a| a.id == adj.id);
            if !local {
                outbox::peer_of(&adj.location)
                    .map_err(|e| format!("activity {}: adjacent {}: {e}", act.id, adj.id))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_proto::{ActivityId, Control, InstanceId, Outcome, StateSet};

    #[test]
    fn only_the_controller_controls_and_a_node_takes_no_reports() {
        let from = PeerId::random();
        let control = Message::Control {
            instance: InstanceId(1),
            action: Control::Cancel,
        };
        assert_eq!(
            input_of(&from, false, control.clone()).unwrap_err(),
            "only this node's controller sends control messages"
        );
        assert!(input_of(&from, true, control).is_ok());
        let notify = Message::Notify {
            data: Vec::new(),
            files: Vec::new(),
            holder: None,
            instance: InstanceId(1),
            activity: ActivityId(2),
            outcome: Outcome::Released,
            entered: StateSet::EMPTY,
            flag: None,
            routed: None,
        };
        assert!(matches!(
            input_of(&from, false, notify),
            Ok(Input::Notified { .. })
        ));
        assert_eq!(
            input_of(&from, true, Message::Probe).unwrap_err(),
            "a node does not take probe messages"
        );
    }

    #[test]
    fn a_document_with_an_unreachable_adjacent_is_refused() {
        let document = include_str!("../../../examples/paper/partition-1.xml");
        let err = input_of(
            &PeerId::random(),
            true,
            Message::Deploy {
                instance: InstanceId(1),
                partition: mobiwf_proto::PartitionId(1),
                document: document.to_owned(),
                responsible: None,
                hour_ms: None,
                runs_on: Default::default(),
            },
        )
        .unwrap_err();
        assert!(err.contains("is not a multiaddr"), "{err}");
    }

    fn item_from(host: &PeerId) -> Message {
        Message::Item {
            info: mobiwf_proto::ItemInfo {
                instance: InstanceId(1),
                partition: mobiwf_proto::PartitionId(1),
                activity: ActivityId(2),
                name: String::new(),
                description: String::new(),
                kind: "manual".to_owned(),
                priority: 0,
                disconnected: false,
                ready_ms: 0,
                deadline_ms: None,
                host: format!("/ip4/127.0.0.1/tcp/1/p2p/{host}"),
                due: None,
            },
            version: 1,
            offered: Vec::new(),
            holders: Vec::new(),
            status: mobiwf_proto::ItemStatus::Open,
            answer: None,
        }
    }

    #[test]
    fn people_messages_come_from_whom_they_should() {
        let (host, other) = (PeerId::random(), PeerId::random());
        // An item's snapshot only from its host.
        assert!(matches!(
            route_of(&host, false, item_from(&host)),
            Ok(Routed::Desk(_))
        ));
        let err = route_of(&other, false, item_from(&host)).err().unwrap();
        assert!(err.contains("comes from its host"), "{err}");
        // The directory and notices only from the controller.
        let directory = Message::Directory {
            version: 2,
            document: "<organisation/>".to_owned(),
            devices: Vec::new(),
        };
        let err = route_of(&other, false, directory.clone()).err().unwrap();
        assert_eq!(err, "only this node's controller sends directory messages");
        assert!(matches!(
            route_of(&other, true, directory),
            Ok(Routed::Engine(Input::Directory(d))) if d.version == 2
        ));
        let notice = Message::Notice {
            notice: mobiwf_proto::Notice {
                user: "dave".into(),
                instance: InstanceId(1),
                activity: None,
                kind: "ended".to_owned(),
                text: String::new(),
                at_ms: 0,
            },
        };
        let err = route_of(&other, false, notice.clone()).err().unwrap();
        assert_eq!(err, "only this node's controller sends notice messages");
        assert!(matches!(
            route_of(&other, true, notice),
            Ok(Routed::Desk(_))
        ));
        // A claim names its sender, a device, or none for the controller.
        let claim = Message::Claim {
            instance: InstanceId(1),
            activity: ActivityId(2),
            user: "alice".into(),
            action: mobiwf_proto::ItemAction::Select,
            request: 7,
            offline_ms: None,
            offered_ms: None,
        };
        let Ok(Routed::Engine(Input::Claim { from, .. })) = route_of(&other, false, claim.clone())
        else {
            panic!("a claim goes to the engine");
        };
        assert_eq!(from, Some(NodeId::new(other.to_string())));
        let Ok(Routed::Engine(Input::Claim { from, .. })) = route_of(&other, true, claim) else {
            panic!("a claim goes to the engine");
        };
        assert_eq!(from, None);
        // A directory whose document does not load is refused, with its problems.
        let bad = Message::Directory {
            version: 3,
            document: "<organisation><users><user/></users></organisation>".to_owned(),
            devices: Vec::new(),
        };
        let err = route_of(&other, true, bad).err().unwrap();
        assert!(err.contains("does not load"), "{err}");
    }
}
