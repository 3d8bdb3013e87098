//! What a message from a peer means to the node: a translation into an input of the
//! partition engine or of the desk (its users' worklists), or the reason the node refuses it
//! (before anything changes). Who may send what is decided here: only the controller
//! deploys, withdraws, substitutes, controls, pauses, asks for compensations and reruns, answers
//! requests for task classes (grants and refusals), and sends the directory and notices; partners
//! notify and start a loop's passes; an item's snapshot comes only from its host,
//! and an answer to a claim only from the host the claim went to.

use mobiwf_engine::{Changed, Claimed, Input, Missing, Notified, Passed, Refusal};
use mobiwf_people::{DeskInput, Directory};
use mobiwf_proto::{Claim, ItemAnswer, Message, NewPass, NodeId, Notify, Substitute};

use crate::{NodeCore, NodeInput};

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
        match route_of(from, from_controller, message)? {
            Route::Desk(input) => {
                self.answer_from_its_host(from, &input)?;
                Ok(NodeInput::Desk(input))
            }
            Route::Engine(input) => Ok(NodeInput::Engine(input)),
            // The words that name files get what the daemon could not keep.
            Route::Notified(notify, sender) => Ok(NodeInput::Engine(Input::Notified(Notified {
                from: sender,
                notify,
                missing,
            }))),
            Route::Claim(claim, sender) => Ok(NodeInput::Engine(Input::Claim(Claimed {
                claim,
                from: sender,
                missing,
            }))),
            Route::NewPass(new_pass, sender) => Ok(NodeInput::Engine(Input::NewPass(Passed {
                from: sender,
                new_pass,
                missing,
            }))),
        }
    }

    /// Refuses an answer to a claim of this device that does not come from the host the
    /// claim was sent to (request numbers are small and guessable: a stranger's answer would
    /// end the claim and tell the user done or refused while the real one is on its way).
    fn answer_from_its_host(&self, from: &NodeId, input: &DeskInput) -> Result<(), String> {
        let DeskInput::Answer(ItemAnswer { answer, .. }) = input else {
            return Ok(());
        };
        let Some(claim) = self.desk.pending().find(|c| c.request == answer.request) else {
            // Answers no claim under way: the desk ignores it.
            return Ok(());
        };
        match claim.host.peer() {
            Some(host) if host == from => Ok(()),
            _ => Err(format!(
                "an answer to a claim comes from the item's host ({}), not from {from}",
                claim.host
            )),
        }
    }
}

/// Where a message goes: an input of the desk or of the engine, or one of the engine's words
/// that name files (a notification, a completion claim), which still wait for what the daemon
/// could not keep. `Option<NodeId>`: the sending node, none for the controller.
enum Route {
    Desk(DeskInput),
    Engine(Input),
    Notified(Notify, Option<NodeId>),
    Claim(Claim, Option<NodeId>),
    NewPass(NewPass, Option<NodeId>),
}

/// The core and input `message` from `from` stands for, or why the node refuses it. Only the
/// controller orders (deploys, withdraws, substitutes, controls, completes, asks for
/// compensations and reruns); a document whose adjacents cannot be reached is refused by the
/// engine, on the document it parses (`Engine::set_read_location`).
fn route_of(from: &NodeId, from_controller: bool, message: Message) -> Result<Route, String> {
    let kind = message.kind();
    let only_controller = || {
        if from_controller {
            Ok(())
        } else {
            Err(format!("only this node's controller sends {kind} messages"))
        }
    };
    let order = |input: Input| only_controller().map(|()| Route::Engine(input));
    let sender = (!from_controller).then(|| from.clone());
    Ok(match message {
        // The engine checks the adjacents' locations on the document it parses
        // (`Engine::set_read_location`).
        Message::Deploy(deploy) => order(Input::Deploy(deploy))?,
        Message::Completed(completed) => order(Input::Completed(completed))?,
        Message::Withdraw(withdraw) => order(Input::Withdraw(withdraw))?,
        Message::Substitute(substitute) => order(substituted(substitute))?,
        Message::Control(control) => order(Input::Control(control))?,
        Message::Compensate(compensate) => order(Input::Compensate(compensate))?,
        Message::Rerun(rerun) => order(Input::Rerun(rerun))?,
        // The synchronization manager's answers: only this node's controller holds it.
        Message::SyncGranted(granted) => order(Input::SyncGranted(granted))?,
        Message::SyncRefused(refused) => order(Input::SyncRefused(refused))?,
        Message::Pause(pause) => order(Input::Pause(pause))?,
        Message::Directory(sent) => {
            only_controller()?;
            let directory = Directory::parse(sent).map_err(|e| e.to_string())?;
            Route::Engine(Input::Directory(directory))
        }
        Message::Notice(tell) => {
            only_controller()?;
            Route::Desk(DeskInput::Notice(tell.notice))
        }
        Message::Claim(claim) => Route::Claim(claim, sender),
        Message::Notify(notify) => Route::Notified(notify, sender),
        Message::NewPass(new_pass) => Route::NewPass(new_pass, sender),
        Message::StateChanged(change) => Route::Engine(Input::StateChanged(Changed {
            from: sender,
            change,
        })),
        Message::Item(snapshot) => {
            let host = snapshot.info.host.named_peer().map_err(|e| e.to_string())?;
            if host != from {
                return Err(format!(
                    "a work item's snapshot comes from its host ({}), not from {from}",
                    snapshot.info.host
                ));
            }
            Route::Desk(DeskInput::Item(Box::new(snapshot)))
        }
        // Matched by the desk against a claim of its own under way (request, item, user).
        Message::Answer(answered) => Route::Desk(DeskInput::Answer(answered)),
        // What nodes tell the controller, and the questions the daemon answers at once.
        Message::Register(_)
        | Message::Report(_)
        | Message::PartitionResult(_)
        | Message::Overdue(_)
        | Message::ItemEvents(_)
        | Message::Presence(_)
        | Message::Compensated(_)
        | Message::Locate(_)
        | Message::BeginSync(_)
        | Message::EndSync(_)
        | Message::PauseReport(_)
        | Message::Probe(_)
        | Message::Fetch(_)
        | Message::ReadData(_)
        | Message::ItemData(_) => return Err(format!("a node does not take {kind} messages")),
    })
}

/// The engine's input for a substitution: the peer at the stand-in's location is the one
/// whose word about it is taken (none when the location names no peer).
fn substituted(substitute: Substitute) -> Input {
    Input::Substitute {
        instance: substitute.instance,
        replaced: substitute.replaced,
        by: substitute.by,
        peer: substitute.location.peer().cloned(),
    }
}
