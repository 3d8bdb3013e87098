//! Which owner of the controllers' book the node takes messages from (`NodeCore::admit`): none
//! is asked of a message without an epoch; the controller's epoch is taken at or above the one
//! known for its shard and refused below it; a partner's epoch is refused.

use mobiwf_proto::{Epoch, ShardEpoch, ShardId};

use crate::fixtures::*;
use crate::{Heard, NotTaken};

fn at(shard: u32, epoch: i64) -> Option<ShardEpoch> {
    Some(ShardEpoch {
        shard: ShardId(shard),
        epoch: Epoch(epoch),
    })
}

fn refused(result: Result<Heard, NotTaken>) -> String {
    match result {
        Err(NotTaken::Refused(why)) => why,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_node_that_never_heard_an_epoch_takes_every_message_as_before() {
    let mut core = node();
    assert_eq!(core.admit(&controller(), None), Ok(Heard::Unstamped));
    assert_eq!(core.admit(&partner(), None), Ok(Heard::Unstamped));
    // 0 is no epoch: a controller outside a cluster.
    assert_eq!(core.admit(&controller(), at(0, 0)), Ok(Heard::Unstamped));
    assert_eq!(core.known_epoch(ShardId(0)), None);
}

#[test]
fn the_first_epoch_is_known_then_a_newer_one_replaces_it_and_an_older_one_is_refused() {
    let mut core = node();
    assert_eq!(
        core.admit(&controller(), at(0, 7)),
        Ok(Heard::Newer {
            now: at(0, 7).unwrap(),
            was: None
        })
    );
    assert_eq!(core.admit(&controller(), at(0, 7)), Ok(Heard::Current));
    // The shard was taken over: the new owner's epoch is known from now on.
    assert_eq!(
        core.admit(&controller(), at(0, 12)),
        Ok(Heard::Newer {
            now: at(0, 12).unwrap(),
            was: Some(Epoch(7))
        })
    );
    // The owner before it runs again: every message of its is refused, saying why.
    let why = refused(core.admit(&controller(), at(0, 7)));
    assert!(why.contains("epoch 7 is older than epoch 12"), "{why}");
    assert_eq!(core.known_epoch(ShardId(0)), Some(Epoch(12)));
    // Another shard has epochs of its own.
    assert!(matches!(
        core.admit(&controller(), at(1, 3)),
        Ok(Heard::Newer { was: None, .. })
    ));
    // A message without an epoch is still judged as before.
    assert_eq!(core.admit(&controller(), None), Ok(Heard::Unstamped));
}

#[test]
fn only_the_controller_sends_an_epoch() {
    let mut core = node();
    let why = refused(core.admit(&partner(), at(0, 9)));
    assert!(why.contains("only this node's controller"), "{why}");
    assert_eq!(
        core.known_epoch(ShardId(0)),
        None,
        "a partner raises nothing"
    );
}

#[test]
fn the_epochs_the_store_held_are_known_after_a_restart() {
    let mut core = node().with_epochs(&[at(0, 12).unwrap(), at(2, 4).unwrap()]);
    assert_eq!(core.known_epoch(ShardId(0)), Some(Epoch(12)));
    assert_eq!(core.known_epoch(ShardId(2)), Some(Epoch(4)));
    assert!(refused(core.admit(&controller(), at(0, 11))).contains("older"));
    assert_eq!(core.admit(&controller(), at(0, 12)), Ok(Heard::Current));
}
