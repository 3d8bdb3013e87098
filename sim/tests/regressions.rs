//! Seeds that found bugs, kept as regression tests. A seed's world depends on the simulator's
//! own version (what it draws, in which order), so each was checked against the simulator at
//! the commit that added it: with the bug back, it failed there as it says.
//!
//! A bug found and not fixed yet is kept as an ignored test (saying where, and why it is not
//! fixed), which `cargo test -p mobiwf-sim -- --ignored` runs; none is open today.

fn passes(seed: u64) {
    let outcome = mobiwf_sim::run(seed, false);
    assert!(
        outcome.passed(),
        "seed {seed}: {}\n{}",
        outcome.violations.join("; "),
        outcome.trace.join("\n")
    );
}

/// An operator's resumption overtook its interrupt on the way to a node (the outbox assumes
/// no order): the node took the interrupt last and kept the instance interrupted for good
/// while the controller had it running. Fixed by numbering the controls
/// (`ControlInstance::order`, `Known::control_order`).
#[test]
fn a_resumption_that_overtook_its_interrupt_leaves_nothing_interrupted() {
    passes(130);
}

/// A node moved and registered again while the controller was down; the controller, started
/// again with an empty address book, kept delivering its outbox's entries to the address they
/// were staged with, and the idle node never connected to it. Fixed by the controller telling
/// its mesh every registered node's address at start (`learn_registered`).
#[test]
fn a_restarted_controller_reaches_a_node_that_moved_meanwhile() {
    passes(16528);
}

/// The synchronization manager grants a class to a waiter whose node is suspected, and ends
/// that hold at the next input because its node is suspected ("the grant's lease ran out
/// there"), while the grant is on its way: the node takes it, runs under it, and a
/// conflicting request is granted beside it. Fixed in `book/src/sync/fence.rs`: a suspected
/// node's hold ends no sooner than the lease and two watchdog periods after its grant.
#[test]
fn a_grant_to_a_suspected_node_does_not_free_its_class() {
    passes(47);
}

/// A loop's body activity on a partition the controller gave up: the controller decided its
/// pass (failed, its successors released), the loop ran on into a new pass on the other
/// partner, and the given-up partition's node, which heard of the new pass while its own first
/// pass still ran, left the new pass for good once the withdrawal ended the first (or, the
/// withdrawal first, failed the new pass at once: the withdrawal named the activity, not its
/// pass); the loop's end waited for it forever. Fixed in the engine and the book: a withdrawal
/// names the pass the controller decided (`Withdraw::passes`), and a body activity that ends
/// its pass after a later one began begins that pass (`catch_up_passes`).
#[test]
fn a_loop_through_a_given_up_partition_still_ends() {
    passes(3683);
}

/// The same loop through a given-up partition, the instance interrupted before the give-up:
/// the operator's resumption went to every partner but the given-up partition's node, whose
/// later pass of the loop waited interrupted forever. Fixed in the book: operators' controls
/// reach a partition given up on too.
#[test]
fn a_resumption_reaches_a_given_up_partition_s_later_pass() {
    passes(9683);
}

/// A grant that waited in the controller's outbox while its node was cut off: the controller
/// suspected the node, ended the hold (its lease, counted from the grant, ran out there) and
/// granted a conflicting request elsewhere; the link healed, the node answered probes again,
/// and the stale grant arrived: the node ran it, its lease counted from the round trips after
/// the suspicion, beside the conflicting activity. Fixed on the node: it keeps the silences
/// between its round trips, and a grant whose lease ran out at any instant since its request
/// was asked is released and asked for again (`RoundTrips::lapsed_at`).
#[test]
fn a_stale_grant_delivered_after_a_suspicion_does_not_run() {
    passes(6323);
}

/// The responsible user got a work item at its deadline's hand-over while their device had not
/// registered (the host's directory named no device of theirs); the device registered later,
/// the host took the new directory and told it nothing of the item it held, so it never showed
/// on their worklist and the instance waited for good. Fixed in the engine: a new directory
/// that names a device for a user of an open item sends that device the item
/// (`Engine::tell_new_devices`).
#[test]
fn a_hand_over_to_a_user_whose_device_registers_later_reaches_their_worklist() {
    passes(1456);
}

/// An operator paused a manual activity before its start; its partition was given up, its
/// predecessor there failed (contingency -1), and its cancellation was refused (the book's
/// table had no paused-to-cancelled decision): it stayed paused, and its successor on another
/// partition waited for good. Fixed in the book's activity table
/// (`book/src/lifecycle/tables.rs`: paused, decided, cancelled).
#[test]
fn a_paused_activity_of_a_given_up_partition_is_cancelled_and_its_successors_hear_it() {
    passes(7318);
}

/// An operator's rerun of a failed activity (A2 on P1) named the cancelled join after it (A4
/// on P2) and its successor (A5 on P1); P1's rerun waited for P2's acknowledgement, P2
/// stopped answering and its partition was given up, and the controller decided A4 failed and
/// told P1 (a notify) in the same breath as it sent P1 its rerun. The notify arrived first
/// (the outbox keeps no order); P1's rerun then forgot what it had heard of A4, as a rerun
/// does for the activities it names, and A5 waited for A4 for good. Fixed in the book: the
/// controller's word on an activity a rerun names waits, stored with the pending rerun, until
/// the node it goes to acknowledged its reruns (`book/src/rerun.rs`: `hold_back`, `release`).
#[test]
fn a_given_up_partitions_decided_end_reaches_a_rerun_node_after_its_rerun() {
    passes(18699);
}

/// An operator paused a running activity with `--kill`; its node wrote the pause (the activity
/// paused, its try killed) and crashed right after the write, before it killed the command,
/// whose process outlives its daemon. Started again, the node asked again only for running
/// tries, not for the kill of a try paused with a kill, so the command ran on, and the
/// operator's resumption started the next try beside it (here two commands of the
/// self-conflicting class `press` at once). Fixed in the engine: a restart asks again for the
/// kill of a try a pause killed (`Engine::resume`).
#[test]
fn a_pause_s_kill_lost_in_a_crash_is_asked_for_again_at_the_restart() {
    passes(38205);
}

/// An operator paused a loop's body activity (A2 on P2) while P2 was down: the pause waited in
/// the controller's outbox, and the resumption was refused (not paused yet). P2's partition
/// was given up, the loop ran on, and once back P2 began the next pass of A2, then took the
/// pause, which paused that pass (a pause names no pass: the book may not have heard of the
/// pass under way). The controller heard of it, but refused every resumption: the activity
/// was "not placed on a registered node that runs it", its partition given up; the loop
/// waited for good. Fixed in the book: an operator's pause or resumption goes to the node
/// its activity's partition was placed on even when that partition was given up
/// (`book/src/pause.rs`, `recovery::placed_on`), as an instance's controls do.
#[test]
fn a_loop_s_later_pass_paused_on_a_given_up_partition_is_resumed() {
    passes(47364);
}

/// A user paused their item's activity (A2 on P1), resumed it, released it, and the
/// operator's pause, delayed, paused it again on P1; P1's words reached the controller out of
/// order (the outbox keeps none), the resumption last: the book had A2 going while P1 had it
/// paused, so it refused the operator's resumption ("not paused") and P1 refused the user's
/// select ("paused"), for good. Fixed in the book: a node's word on a pause or resumption
/// said before the latest one applied moves nothing (`ActivityView::pause_word_ms`,
/// `book/src/pause.rs`).
#[test]
fn a_resumption_overtaken_by_the_next_pause_leaves_the_activity_paused_in_the_book() {
    passes(55394);
}

/// An operator interrupted an instance (to resume it a few seconds later); its people's
/// activity failed meanwhile, the instance failed, and the operator reran it. The interrupt
/// reached the node after the rerun, which had ended the interruption the instance failed
/// under: the node had the instance interrupted for good, the controller had it running and
/// refused the resumption. Fixed by numbering the rerun after the controls given before it
/// (`Rerun::controls`): the node takes no control numbered so far after its rerun
/// (`Engine::rerun`).
#[test]
fn an_interrupt_that_arrives_after_a_rerun_leaves_nothing_interrupted() {
    passes(65728);
}

/// A fan-out whose A2 (P2) and A3 (P1) both failed, its join A4 (P1) and A5 (P2) cancelled:
/// the operator reran A2, with A4 and A5. P1, sent its rerun first, put A4 back and cancelled
/// it again at once (A3, not rerun, still failed) and told P2; that notify overtook P2's own
/// rerun, which then forgot what it had heard of A4, and A5 waited for A4 for good. Fixed by
/// numbering the reruns (`Rerun::rerun`, `Instance::reruns`): a node's notifies carry the
/// latest rerun it applied (`Notify::rerun`), an end said after a rerun replaces one heard
/// from before it, and a node's rerun forgets only the ends said before it
/// (`engine/src/notify.rs`, `Engine::rerun`).
#[test]
fn a_rerun_s_end_decided_at_once_elsewhere_does_not_overtake_the_rerun() {
    passes(65177);
}

/// A loop (A1 on P2, A2 on P1, A3 on P3 looping back to A2) whose P1 and P2 stopped answering
/// together: the controller gave both partitions up and decided A2 failed, then A1 (failed,
/// blocking), but told A1's end only to the nodes of live partitions; A2's contingency 0
/// released A3, which ran and asked for another pass of A2. P1, back, began A2's second pass
/// (a withdrawal ends only the pass it names), which waited for good for A1's end: P2 never
/// said it, and the controller did not tell a partition given up. Fixed in the book: an end
/// the controller decides (or relays, hub routing; or a stand-in's adjacency) goes to the
/// node a successor's partition was placed on, given up or not, while a loop's later pass of
/// that successor may still begin there (`recovery::awaiting_on`); the pass hears A1 blocked
/// and is cancelled, the loop and the instance end.
#[test]
fn a_loop_s_later_pass_on_a_given_up_partition_hears_its_predecessor_s_end() {
    passes(74136);
}

/// The same loop (A1 on P1, A2 on P2 with contingency 0, A3 on P3 looping back to A2) after
/// the fix for 74,136: the controller gave P2's partition up (A2 decided failed, which released
/// A3), then P1's (A1 failed, blocking), and told A1's end to P2, as a later pass of A2 may
/// begin there. P2, back, still had A2's first pass waiting (its withdrawal came later): it
/// heard A1 blocked and cancelled it. A3 ran and asked for A2's second pass, and P2 did not
/// begin it: a loop's next pass began only an activity that succeeded or failed, not one
/// cancelled, so A3's second pass waited for good. A regression of that fix, which brought the
/// word that cancels the pass. Fixed in the engine: a cancelled activity of the body begins
/// the next pass too (`passes::ended_its_pass`, the lifecycle's `Cancelled` takes `NewPass`),
/// unless an operator's cancel or a completion ended the instance; the pass hears A1 blocked
/// again and is cancelled in pass 2, and the loop and the instance end.
#[test]
fn a_loop_s_head_cancelled_on_a_given_up_partition_begins_the_next_pass() {
    passes(34820);
}
