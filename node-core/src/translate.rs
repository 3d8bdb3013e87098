//! What a message from a peer means to the node: a translation into an input of the
//! partition engine or of the desk (its users' worklists), or the reason the node refuses it
//! (before anything changes). Who may send what is decided here: only the controller
//! deploys, withdraws, substitutes, controls, asks for compensations and reruns, and sends
//! the directory and notices; partners notify; an item's snapshot comes only from its host,
//! and an answer to a claim only from the host the claim went to.

use mobiwf_engine::{Input, Missing, Refusal};
use mobiwf_people::{DeskInput, Directory};
use mobiwf_proto::{Message, NodeId};

use crate::{NodeCore, NodeInput, PeerOf};

/// Why the node does not take a message now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotTaken {
    /// Refused, with the reason the sender is told.
    Refused(String),
    /// Not now (the sender tries again), and why.
    Later(String),
}

impl From<Refusal> for NotTaken {
    fn from(refusal: Refusal) -> NotTaken {
        match refusal {
            // No room now for a word about an instance not deployed here yet: the sender
            // tries again, by when the deployment may have come.
            Refusal::TooEarly { .. } => NotTaken::Later(refusal.to_string()),
            r => NotTaken::Refused(r.to_string()),
        }
    }
}

impl From<String> for NotTaken {
    fn from(reason: String) -> NotTaken {
        NotTaken::Refused(reason)
    }
}

impl std::fmt::Display for NotTaken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotTaken::Refused(why) | NotTaken::Later(why) => f.write_str(why),
        }
    }
}

impl NodeCore {
    /// The input `message` from `from` stands for, or why the node refuses it. `missing`:
    /// the files the message names that are not on this node (the daemon kept its inline
    /// contents first), or why its contents were refused.
    pub fn accept(
        &self,
        from: &NodeId,
        message: Message,
        missing: Result<Vec<Missing>, String>,
    ) -> Result<NodeInput, NotTaken> {
        // Contents the daemon could not take refuse the message, whatever it is.
        let missing = missing?;
        let from_controller = *from == self.who.controller;
        let peer_of = self.who.peer_of;
        let mut input = match route_of(peer_of, from, from_controller, message)? {
            NodeInput::Desk(input) => {
                self.answer_from_its_host(from, &input)?;
                return Ok(NodeInput::Desk(input));
            }
            NodeInput::Engine(input) => input,
            other => return Ok(other),
        };
        match &mut input {
            Input::Notified { carried, .. } => carried.missing = missing,
            Input::Claim { missing: m, .. } => *m = missing,
            _ => {}
        }
        Ok(NodeInput::Engine(input))
    }

    /// Refuses an answer to a claim of this device that does not come from the host the
    /// claim was sent to (request numbers are small and guessable: a stranger's answer would
    /// end the claim and tell the user done or refused while the real one is on its way).
    fn answer_from_its_host(&self, from: &NodeId, input: &DeskInput) -> Result<(), String> {
        let DeskInput::Answer { answer, .. } = input else {
            return Ok(());
        };
        let Some(claim) = self.desk.pending().find(|c| c.request == answer.request) else {
            // Answers no claim under way: the desk ignores it.
            return Ok(());
        };
        match (self.who.peer_of)(&claim.host) {
            Ok(host) if host == *from => Ok(()),
            _ => Err(format!(
                "an answer to a claim comes from the item's host ({}), not from {from}",
                claim.host
            )),
        }
    }
}

/// The core and input `message` from `from` stands for, or why the node refuses it.
fn route_of(
    peer_of: PeerOf,
    from: &NodeId,
    from_controller: bool,
    message: Message,
) -> Result<NodeInput, String> {
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
            NodeInput::Engine(Input::Directory(directory))
        }
        message @ Message::Claim { .. } => {
            let sender = (!from_controller).then(|| from.clone());
            NodeInput::Engine(claim_input(message, sender).ok_or("not a claim")?)
        }
        message @ Message::Item { .. } => {
            if let Message::Item { info, .. } = &message {
                let host = peer_of(&info.host)?;
                if host != *from {
                    return Err(format!(
                        "a work item's snapshot comes from its host ({}), not from {from}",
                        info.host
                    ));
                }
            }
            NodeInput::Desk(DeskInput::from_message(message).ok_or("not an item")?)
        }
        // Matched by the desk against a claim of its own under way (request, item, user).
        message @ Message::Answer { .. } => {
            NodeInput::Desk(DeskInput::from_message(message).ok_or("not an answer")?)
        }
        message @ Message::Notice { .. } => {
            only_controller(kind)?;
            NodeInput::Desk(DeskInput::from_message(message).ok_or("not a notice")?)
        }
        other => NodeInput::Engine(input_of(peer_of, from, from_controller, other)?),
    })
}

/// The engine input `message` from `from` stands for, or why the node refuses it: only its
/// controller deploys, withdraws, substitutes, controls, asks for compensations and reruns;
/// partners notify; a document whose adjacents cannot be reached is refused before it is
/// deployed (its notifications could never be delivered).
fn input_of(
    peer_of: PeerOf,
    from: &NodeId,
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
        return Err(format!("only this node's controller sends {kind} messages"));
    }
    match message {
        Message::Notify { .. } | Message::StateChanged { .. } => {
            let sender = (!from_controller).then(|| from.clone());
            partner_input(message, sender)
        }
        other => controller_input(peer_of, other),
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
            // Inline contents and the holder are the daemon's, which keeps the contents and
            // says which files are still missing.
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
fn controller_input(peer_of: PeerOf, message: Message) -> Result<Input, String> {
    Ok(match message {
        Message::Deploy {
            instance,
            partition,
            document,
            responsible,
            hour_ms,
            runs_on,
        } => {
            check_locations(peer_of, &document)?;
            Input::Deploy {
                instance,
                partition,
                document,
                responsible,
                hour_ms,
                runs_on: runs_on.into_iter().collect(),
            }
        }
        Message::Completed { instance, by } => Input::Completed { instance, by },
        Message::Withdraw {
            instance,
            partition: _,
            activities,
            reason,
        } => Input::Withdraw {
            instance,
            activities,
            reason,
        },
        Message::Substitute {
            instance,
            replaced,
            by,
            location,
        } => Input::Substitute {
            instance,
            replaced,
            by,
            peer: peer_of(&location).ok(),
        },
        Message::Control { instance, action } => Input::Control { instance, action },
        Message::Compensate(c) => Input::Compensate {
            instance: c.instance,
            partition: c.partition,
            activity: c.activity,
        },
        Message::Rerun(r) => Input::Rerun {
            instance: r.instance,
            partition: r.partition,
            activities: r.activities,
        },
        other => return Err(format!("a node does not take {} messages", other.kind())),
    })
}

/// The engine input of a claim: `from` is the sending node (a device), none for the
/// controller.
pub(crate) fn claim_input(message: Message, from: Option<NodeId>) -> Option<Input> {
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
            // Filled in by `NodeCore::accept` from what the daemon kept.
            missing: Vec::new(),
        }),
        _ => None,
    }
}

/// Every adjacent's location must be a full libp2p address, or its notification could never be
/// delivered.
pub fn check_locations(peer_of: PeerOf, document: &str) -> Result<(), String> {
    let doc = mobiwf_xml_schema::read_partition(document.as_bytes())
        .map_err(|d| d.render("partition document"))?
        .value;
    for act in &doc.activities {
        for adj in &act.adjacents {
            let local = doc.activities.iter().any(|a| a.id == adj.id);
            if !local {
                peer_of(&adj.location)
                    .map_err(|e| format!("activity {}: adjacent {}: {e}", act.id, adj.id))?;
            }
        }
    }
    Ok(())
}
