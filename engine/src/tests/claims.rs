//! Scenarios of users' claims on work items: release and unlock offer it again, lock needs
//! `<disconnected>`, only the holder completes (and the activity then ends as any other),
//! delegation, an administrator's insert and remove (of the holder or of anyone else), items closed when their activity ends
//! otherwise, and holders kept across restarts.

use mobiwf_proto::{Hold, ItemAction, ItemEvent, ItemStatus, UserId, Verdict};
use mobiwf_xml_schema::{Method, People};

use super::people::*;
use super::*;

fn complete(succeeded: bool, detail: &str) -> ItemAction {
    ItemAction::Complete {
        succeeded,
        detail: Some(detail.to_owned()),
        flag: None,
        data: Default::default(),
    }
}

fn delegate(to: &str) -> ItemAction {
    ItemAction::Delegate {
        to: UserId::from(to),
    }
}

fn forbidden(v: &Option<Verdict>) -> bool {
    matches!(v, Some(Verdict::Forbidden { .. }))
}

fn invalid(v: &Option<Verdict>, words: &str) -> bool {
    matches!(v, Some(Verdict::Invalid { reason }) if reason.contains(words))
}

scenarios! {
fn a_release_offers_it_again_to_its_users() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "bob", ItemAction::Release, Some("N2"));
    assert!(forbidden(&verdict(&fx)), "only the holder releases");
    let fx = claim(&mut e, 2200, (1, 3), "alice", ItemAction::Unlock, Some("N1"));
    assert!(invalid(&verdict(&fx), "release it instead"));
    let fx = claim(&mut e, 2300, (1, 3), "alice", ItemAction::Release, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(devices(&fx), ["N1", "N2", "N3"]);
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "bob", "carol"]]);
    assert_eq!(holders(&e, 1, 3), [None]);
    let events = &item_events(&fx)[0];
    assert!(matches!(&events[0], ItemEvent::Acted { action: ItemAction::Release, .. }));
    assert_eq!(offered_in(events), ["alice", "bob", "carol"]);
    let fx = claim(&mut e, 2400, (1, 3), "bob", ItemAction::Select, Some("N2"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
}

fn a_lock_needs_disconnected_and_is_given_back_by_an_unlock() {
    let people_3 = tech(Method::Fcfa);
    let people_5 = People { disconnected: true, ..tech(Method::Fcfa) };
    let mut e = host(directory(1, three()[..2].to_vec()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let fx = claim(&mut e, 2000, (1, 3), "alice", ItemAction::Lock, Some("N1"));
    assert!(invalid(&verdict(&fx), "disconnected"));
    assert_eq!(holders(&e, 1, 3), [None]);

    deploy_manual(&mut e, 1000, 2, (5, &people_5));
    let fx = claim(&mut e, 2000, (2, 5), "alice", ItemAction::Lock, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    let mine = sent_to(&fx, "N1").expect("told");
    assert_eq!(mine.holders, [("alice".to_owned(), Hold::Locked, None)]);
    let fx = claim(&mut e, 2001, (2, 5), "alice", ItemAction::Lock, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done), "a repeat is done");
    assert!(item_events(&fx).is_empty(), "and changes nothing");
    let fx = claim(&mut e, 2002, (2, 5), "bob", ItemAction::Select, Some("N2"));
    assert!(unavailable(&verdict(&fx)));
    assert!(format!("{:?}", verdict(&fx)).contains("alice locked it"));
    let fx = claim(&mut e, 2003, (2, 5), "alice", ItemAction::Release, Some("N1"));
    assert!(invalid(&verdict(&fx), "unlock it instead"));
    let fx = claim(&mut e, 2004, (2, 5), "alice", ItemAction::Unlock, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(offered(&e, 2, 5), [vec!["alice", "bob"]]);
}

fn only_the_holder_completes_and_the_activity_then_ends_as_any_other() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let fx = claim(&mut e, 1500, (1, 3), "alice", complete(true, "done"), Some("N1"));
    assert!(invalid(&verdict(&fx), "select"), "complete before select");
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "bob", complete(true, "mine"), Some("N2"));
    assert!(forbidden(&verdict(&fx)));
    assert_eq!(state(&e, 1, 3), ActivityState::Running);

    let fx = claim(&mut e, 3000, (1, 3), "alice", complete(true, "fixed"), Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    let alice = sent_to(&fx, "N1").expect("told");
    assert_eq!(alice.status, ItemStatus::Done { by: UserId::from("alice"), succeeded: true });
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
    assert_eq!(detail(&e, 1, 3), "fixed");
    assert_eq!(notifies(&fx), [("/remote/b".to_owned(), 3, Outcome::Succeeded)]);
    assert_eq!(executes(&fx), [(43, 0)], "the local successor starts");
    // Later claims: no longer available.
    let fx = claim(&mut e, 3100, (1, 3), "bob", ItemAction::Select, Some("N2"));
    assert!(unavailable(&verdict(&fx)));
    assert!(format!("{:?}", verdict(&fx)).contains("alice completed it"));
    // Another user's completion is not taken for a repeat of hers.
    let fx = claim(&mut e, 3150, (1, 3), "bob", complete(true, "fixed"), Some("N2"));
    assert!(unavailable(&verdict(&fx)), "{:?}", verdict(&fx));
    // Her own again: the same completion (a retry) is done; another outcome is not taken.
    let fx = claim(&mut e, 3200, (1, 3), "alice", complete(true, "fixed"), Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    let fx = claim(&mut e, 3300, (1, 3), "alice", complete(false, "broke"), Some("N1"));
    assert!(forbidden(&verdict(&fx)), "{:?}", verdict(&fx));
    assert!(format!("{:?}", verdict(&fx)).contains("already as succeeded"));
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
}

fn a_claim_on_an_earlier_offer_of_the_item_is_no_longer_available() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let ready = sent_to(&fx, "N1").expect("offered").ready_ms;
    let on = |offered_ms: u64, now_ms: u64| Input::Claim(crate::Claimed { claim: mobiwf_proto::Claim { instance: InstanceId(1), activity: ActivityId(3), user: UserId::from("alice"), action: ItemAction::Select, request: now_ms, offline_ms: None, offered_ms: Some(offered_ms) }, from: Some(node_of("N1")), missing: Vec::new() });
    // Made on an offer before this one (its activity ran again since): not this item.
    let fx = e.apply(2000, on(ready - 1, 2000)).expect("taken");
    assert!(unavailable(&verdict(&fx)), "{:?}", verdict(&fx));
    assert!(format!("{:?}", verdict(&fx)).contains("offered again"));
    assert_eq!(holders(&e, 1, 3), [None]);
    // On this offer: taken.
    let fx = e.apply(2100, on(ready, 2100)).expect("taken");
    assert_eq!(verdict(&fx), Some(Verdict::Done));
}

fn a_failed_completion_fails_the_activity_naming_who_and_why() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "bob", ItemAction::Select, Some("N2"));
    let fx = claim(&mut e, 3000, (1, 3), "bob", complete(false, "the pump is broken"), Some("N2"));
    assert_eq!(state(&e, 1, 3), ActivityState::Failed);
    assert_eq!(detail(&e, 1, 3), "bob failed it: the pump is broken");
    assert_eq!(notifies(&fx), [("/remote/b".to_owned(), 3, Outcome::Blocked)]);
    assert_eq!(state(&e, 1, 43), ActivityState::Cancelled);
    assert!(matches!(item(&e, 1, 3).status(), ItemStatus::Done { succeeded: false, .. }));
}

fn delegation_records_its_grantor_and_only_the_holder_an_administrator_or_the_controller_may() {
    let people_3 = tech(Method::Fcfa);
    let mut users = three();
    users.push(user("dave", "N4", &[("administrator", 0)]));
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "carol", delegate("carol"), Some("N3"));
    assert!(forbidden(&verdict(&fx)));
    let fx = claim(&mut e, 2200, (1, 3), "alice", delegate("zed"), Some("N1"));
    assert!(invalid(&verdict(&fx), "no user zed"));

    let fx = claim(&mut e, 2300, (1, 3), "alice", delegate("bob"), Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(holders(&e, 1, 3), [Some(("bob".to_owned(), Some("alice".to_owned())))]);
    let bob = sent_to(&fx, "N2").expect("bob told");
    assert_eq!(bob.holders, [("bob".to_owned(), Hold::Selected, Some("alice".to_owned()))]);
    assert!(sent_to(&fx, "N1").expect("alice told").holders.is_empty());
    assert_eq!(revoked_in(&item_events(&fx)[0]), ["alice"]);

    let fx = claim(&mut e, 2400, (1, 3), "dave", delegate("carol"), Some("N4"));
    assert_eq!(verdict(&fx), Some(Verdict::Done), "an administrator may");
    assert_eq!(holders(&e, 1, 3), [Some(("carol".to_owned(), Some("dave".to_owned())))]);
    let fx = claim(&mut e, 2500, (1, 3), "ops", delegate("alice"), None);
    assert!(verdict(&fx).is_none(), "the controller is answered in events");
    assert_eq!(holders(&e, 1, 3), [Some(("alice".to_owned(), Some("ops".to_owned())))]);
    // Released, it goes back to everyone it was offered or given to.
    claim(&mut e, 2600, (1, 3), "alice", ItemAction::Release, Some("N1"));
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "bob", "carol"]]);
}

fn method_all_copies_are_delegated_only_to_users_without_one() {
    let people_3 = tech(Method::All);
    let mut users = three();
    users.push(user("dave", "N4", &[("ops", 1)]));
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "alice", delegate("bob"), Some("N1"));
    assert!(invalid(&verdict(&fx), "already has a copy"));
    let fx = claim(&mut e, 2200, (1, 3), "ops", delegate("bob"), None);
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { .. }]));
    // Not even to a user without a copy: the controller holds none to hand on.
    let fx = claim(&mut e, 2300, (1, 3), "ops", delegate("dave"), None);
    assert!(
        matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { reason, .. }] if reason.contains("of their own"))
    );
    assert_eq!(holders(&e, 1, 3)[0], Some(("alice".to_owned(), None)));
    assert_eq!(item(&e, 1, 3).copies.len(), 3);
    // Its holder hands it to a user without a copy, who may hand it back: the copy was hers.
    let fx = claim(&mut e, 2400, (1, 3), "alice", delegate("dave"), Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    let fx = claim(&mut e, 2500, (1, 3), "dave", delegate("alice"), Some("N4"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(holders(&e, 1, 3)[0], Some(("alice".to_owned(), Some("dave".to_owned()))));
}

fn a_completion_by_a_user_it_is_not_offered_to_is_forbidden() {
    let people_3 = tech(Method::Fcfa);
    let mut users = three();
    users.push(user("dave", "N4", &[("ops", 1)]));
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let fx = claim(&mut e, 1500, (1, 3), "dave", complete(true, "done"), Some("N4"));
    assert!(forbidden(&verdict(&fx)), "{:?}", verdict(&fx));
    assert!(format!("{:?}", verdict(&fx)).contains("not offered to you"));
}

fn an_administrator_inserts_and_removes_users() {
    let people_3 = tech(Method::Fcfa);
    let mut users = three();
    users.push(user("erin", "N5", &[("other", 0)]));
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let fx = claim(&mut e, 2000, (1, 3), "bob", ItemAction::Insert, Some("N2"));
    assert!(forbidden(&verdict(&fx)), "bob is no administrator");
    let fx = claim(&mut e, 2100, (1, 3), "erin", ItemAction::Insert, None);
    assert_eq!(devices(&fx), ["N1", "N2", "N3", "N5"]);
    assert_eq!(sent_to(&fx, "N5").expect("erin told").offered, ["erin"]);
    let events = &item_events(&fx)[0];
    assert!(matches!(&events[0], ItemEvent::Acted { action: ItemAction::Insert, .. }));
    assert_eq!(offered_in(events), ["erin"]);

    let fx = claim(&mut e, 2200, (1, 3), "bob", ItemAction::Remove, None);
    assert!(sent_to(&fx, "N2").expect("bob told").offered.is_empty());
    assert_eq!(revoked_in(&item_events(&fx)[0]), ["bob"]);
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "carol", "erin"]]);

    // Removing the holder ends the hold: offered again to the others.
    claim(&mut e, 2300, (1, 3), "alice", ItemAction::Select, Some("N1"));
    claim(&mut e, 2400, (1, 3), "alice", ItemAction::Remove, None);
    assert_eq!(holders(&e, 1, 3), [None]);
    assert_eq!(offered(&e, 1, 3), [vec!["carol", "erin"]]);
    // Removing everyone leaves it to nobody, until someone is inserted.
    claim(&mut e, 2500, (1, 3), "carol", ItemAction::Remove, None);
    let fx = claim(&mut e, 2600, (1, 3), "erin", ItemAction::Remove, None);
    assert!(item_events(&fx)[0].iter().any(|e| matches!(e, ItemEvent::Unassigned { .. })));
    assert!(item(&e, 1, 3).unassigned().is_some());
    let fx = claim(&mut e, 2700, (1, 3), "erin", ItemAction::Remove, None);
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { reason, .. }] if reason.contains("not on erin's worklist")));
    claim(&mut e, 2800, (1, 3), "bob", ItemAction::Insert, None);
    assert_eq!(offered(&e, 1, 3), [vec!["bob"]]);
    assert_eq!(item(&e, 1, 3).unassigned(), None);
}

fn removing_a_user_while_another_holds_it_keeps_the_hold_and_takes_them_off_the_audience() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "bob", ItemAction::Remove, None);
    assert!(matches!(&item_events(&fx)[0][0], ItemEvent::Acted { action: ItemAction::Remove, .. }));
    assert_eq!(holders(&e, 1, 3), [Some(("alice".to_owned(), None))]);
    // Given back, it goes to the rest of its audience: not to bob.
    claim(&mut e, 2200, (1, 3), "alice", ItemAction::Release, Some("N1"));
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "carol"]]);
    let fx = claim(&mut e, 2300, (1, 3), "bob", ItemAction::Select, Some("N2"));
    assert!(forbidden(&verdict(&fx)), "bob was taken off it");
}

fn an_insert_of_a_user_on_the_list_changes_nothing_and_one_of_a_user_off_it_is_kept_for_later() {
    let people_3 = tech(Method::Fcfa);
    let mut users = three();
    users.push(user("erin", "N5", &[("other", 0)]));
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let version = item(&e, 1, 3).version;
    let fx = claim(&mut e, 2000, (1, 3), "alice", ItemAction::Insert, None);
    assert!(item_events(&fx).iter().all(Vec::is_empty), "{:?}", item_events(&fx));
    assert_eq!(item(&e, 1, 3).version, version, "offered to her already");
    // Inserted while someone holds it: offered to her once it is given back.
    claim(&mut e, 2100, (1, 3), "bob", ItemAction::Select, Some("N2"));
    let fx = claim(&mut e, 2200, (1, 3), "erin", ItemAction::Insert, None);
    assert!(matches!(&item_events(&fx)[0][0], ItemEvent::Acted { .. }));
    claim(&mut e, 2300, (1, 3), "bob", ItemAction::Release, Some("N2"));
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "bob", "carol", "erin"]]);
}

fn an_item_nobody_could_be_offered_is_inserted_or_delegated_into_its_first_copy() {
    let people_3 = tech(Method::Fcfa);
    let users = vec![user("erin", "N5", &[("other", 0)]), user("fred", "N6", &[("other", 0)])];
    let mut e = host(directory(1, users.clone()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert!(item(&e, 1, 3).copies.is_empty(), "nobody plays the role");
    claim(&mut e, 2000, (1, 3), "erin", ItemAction::Insert, None);
    assert_eq!(offered(&e, 1, 3), [vec!["erin"]]);

    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "ops", delegate("fred"), None);
    assert_eq!(holders(&e, 1, 3), [Some(("fred".to_owned(), Some("ops".to_owned())))]);
}

fn a_completion_without_words_leaves_the_activity_without_a_detail() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let done = ItemAction::Complete {
        succeeded: true,
        detail: None,
        flag: None,
        data: Default::default(),
    };
    claim(&mut e, 2100, (1, 3), "alice", done, Some("N1"));
    let record = e.record(InstanceId(1), ActivityId(3)).expect("record");
    assert_eq!((record.state, record.detail), (ActivityState::Succeeded, None));
}

fn a_method_all_copy_done_is_shown_done_to_its_device_and_not_revoked() {
    let people_3 = tech(Method::All);
    let mut e = host(directory(1, three()));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(sent_to(&fx, "N1").expect("offered").deadline_ms, None, "no timeOut");
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 2100, (1, 3), "alice", complete(true, "ok"), Some("N1"));
    assert_eq!(state(&e, 1, 3), ActivityState::Running, "the others' copies are open");
    let alice = sent_to(&fx, "N1").expect("alice told");
    assert_eq!(alice.status, ItemStatus::Done { by: UserId::from("alice"), succeeded: true });
    assert!(revoked_in(&item_events(&fx)[0]).is_empty(), "done, not taken from her");
}

fn a_removal_closes_only_that_users_copy_of_method_all() {
    let people_3 = tech(Method::All);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "carol", ItemAction::Remove, None);
    let open: Vec<bool> = item(&e, 1, 3).copies.iter().map(|c| c.is_open()).collect();
    assert_eq!(open, [true, true, false]);
    assert_eq!(offered(&e, 1, 3), [vec!["alice"], vec!["bob"], vec![]]);
}

fn removing_every_copy_of_method_all_leaves_it_waiting_for_an_insert() {
    let people_3 = tech(Method::All);
    let mut e = host(directory(1, three()[..2].to_vec()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    claim(&mut e, 2100, (1, 3), "alice", complete(true, "ok"), Some("N1"));
    let fx = claim(&mut e, 2200, (1, 3), "bob", ItemAction::Remove, None);
    // Alice's copy was done, Bob's removed: done by Alice, succeeded.
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
    assert_eq!(notifies(&fx), [("/remote/b".to_owned(), 3, Outcome::Succeeded)]);

    let mut e = host(directory(1, three()[..2].to_vec()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Remove, None);
    claim(&mut e, 2100, (1, 3), "bob", ItemAction::Remove, None);
    // Nobody does it now: it waits, unassigned, as with the other methods.
    assert_eq!(state(&e, 1, 3), ActivityState::Ready);
    assert!(item(&e, 1, 3).unassigned().is_some());
    // A newer directory offers it to nobody the administrator took it off.
    at(&mut e, 2200, Input::Directory(directory(2, three()[..2].to_vec())));
    assert!(item(&e, 1, 3).unassigned().is_some());
    // An insert gives bob a copy again; once he did it, the activity ends.
    claim(&mut e, 2300, (1, 3), "bob", ItemAction::Insert, None);
    claim(&mut e, 2400, (1, 3), "bob", ItemAction::Select, Some("N2"));
    claim(&mut e, 2500, (1, 3), "bob", complete(true, "ok"), Some("N2"));
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
}

fn items_are_closed_when_their_activity_ends_otherwise() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()[..2].to_vec()));
    // Cancelled by an operator while Alice holds it: her device is told.
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = control(&mut e, 3000, 1, Control::Cancel);
    assert_eq!(state(&e, 1, 3), ActivityState::Cancelled);
    assert_eq!(devices(&fx), ["N1"]);
    let closed = sent_to(&fx, "N1").expect("told");
    assert_eq!(closed.status, ItemStatus::Closed { why: CANCELLED.to_owned() });
    assert!(closed.holders.is_empty());
    assert_eq!(revoked_in(&item_events(&fx)[0]), ["alice"]);
    let fx = claim(&mut e, 3100, (1, 3), "alice", complete(true, "late"), Some("N1"));
    assert!(unavailable(&verdict(&fx)));

    // Withdrawn while offered to both: both told.
    deploy_manual(&mut e, 1000, 2, (3, &people_3));
    let fx = withdraw(&mut e, 3000, 2, &[3], "too slow");
    assert_eq!(devices(&fx), ["N1", "N2"]);
    assert!(sent(&fx).iter().all(|s| matches!(&s.status, ItemStatus::Closed { why } if why.contains("too slow"))));

    // Timed out.
    let document = manual_doc(3, (3, &people_3), 10);
    at(&mut e, 1000, Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(3), partition: PartitionId(1), document, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }));
    let fx = tick(&mut e, 11_000);
    assert_eq!(state(&e, 3, 3), ActivityState::Failed);
    assert!(sent(&fx).iter().all(|s| matches!(&s.status, ItemStatus::Closed { why } if why.contains("timeOut"))));
    assert_eq!(devices(&fx), ["N1", "N2"]);
    assert!(!item(&e, 3, 3).is_open());
}

fn a_restart_keeps_holders_offers_and_the_directory() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(4, three()));
    let mut disk = Disk::default();
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    deploy_manual(&mut e, 1000, 2, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let mut e2 = disk.restart(&mut e);
    assert_eq!(e2.items().collect::<Vec<_>>(), e.items().collect::<Vec<_>>());
    assert_eq!(e2.directory(), e.directory());
    let fx = claim(&mut e2, 3000, (1, 3), "bob", ItemAction::Select, Some("N2"));
    assert!(unavailable(&verdict(&fx)));
    let fx = claim(&mut e2, 3100, (1, 3), "alice", complete(true, "ok"), Some("N1"));
    assert_eq!(state(&e2, 1, 3), ActivityState::Succeeded);
    assert_eq!(notifies(&fx).len(), 1);
    assert_eq!(offered(&e2, 2, 3), [vec!["alice", "bob", "carol"]]);
    assert_eq!(item(&e2, 1, 3).version, 3);
}

fn users_who_go_on_leave_lose_their_offers_and_the_item_finds_others() {
    let people_3 = tech(Method::Priority);
    let mut users = three();
    users[0].roles[0].priority = 5; // alice first
    let mut e = host(directory(1, users.clone()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["alice"]]);
    users[0] = on_leave(users[0].clone());
    let fx = at(&mut e, 2000, Input::Directory(directory(2, users)));
    assert_eq!(offered(&e, 1, 3), [vec!["bob"]], "the next by priority (ties by id)");
    assert_eq!(devices(&fx), ["N1", "N2"], "alice's device loses it, bob's gets it");
    // A held copy stays with its holder whoever goes on leave.
    let fx = claim(&mut e, 2100, (1, 3), "bob", ItemAction::Select, Some("N2"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    let mut users = three();
    users[1] = on_leave(users[1].clone());
    at(&mut e, 2200, Input::Directory(directory(3, users)));
    assert_eq!(holders(&e, 1, 3), [Some(("bob".to_owned(), None))]);
}

fn a_method_all_item_whose_copies_were_all_taken_off_goes_to_a_user_of_a_newer_directory() {
    let people_3 = tech(Method::All);
    let mut e = host(directory(1, three()[..2].to_vec()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Remove, None);
    claim(&mut e, 2100, (1, 3), "bob", ItemAction::Remove, None);
    assert!(item(&e, 1, 3).unassigned().is_some());
    at(&mut e, 2200, Input::Directory(directory(2, three())));
    assert_eq!(offered(&e, 1, 3), [vec![], vec![], vec!["carol"]], "not those taken off it");
    assert_eq!(item(&e, 1, 3).unassigned(), None);
}

fn an_item_whose_chosen_users_were_all_taken_off_says_so() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    for (at_ms, user) in [(2000, "alice"), (2100, "bob")] {
        claim(&mut e, at_ms, (1, 3), user, ItemAction::Remove, None);
    }
    // Carol, the last one offered it, goes on leave: the others were taken off it.
    let mut users = three();
    users[2] = on_leave(users[2].clone());
    at(&mut e, 2300, Input::Directory(directory(2, users)));
    let why = item(&e, 1, 3).unassigned().unwrap_or_default().to_owned();
    assert!(why.contains("taken off it by an administrator"), "{why}");
}

fn a_user_an_administrator_took_off_an_item_is_not_offered_it_again() {
    let people_3 = tech(Method::Priority);
    let mut users = three();
    users[0].roles[0].priority = 5;
    let mut e = host(directory(1, users.clone()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["alice"]]);
    let fx = claim(&mut e, 2000, (1, 3), "alice", ItemAction::Remove, None);
    assert!(item_events(&fx).iter().flatten().any(|ev| matches!(ev, ItemEvent::Acted { action: ItemAction::Remove, .. })));
    assert!(offered(&e, 1, 3).iter().all(|o| o.is_empty()));
    // Every new directory version assigns open items again: alice stays off it.
    at(&mut e, 3000, Input::Directory(directory(2, users.clone())));
    assert!(offered(&e, 1, 3).iter().all(|o| !o.contains(&"alice".to_owned())), "{:?}", offered(&e, 1, 3));
    assert!(item(&e, 1, 3).unassigned().is_some());
    // An insert puts her back.
    claim(&mut e, 4000, (1, 3), "alice", ItemAction::Insert, None);
    assert_eq!(offered(&e, 1, 3), [vec!["alice"]]);
    assert!(item(&e, 1, 3).removed().is_empty());
}
}

const CANCELLED: &str = mobiwf_proto::CANCELLED_BY_OPERATOR;
