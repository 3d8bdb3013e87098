//! Scenarios of work-item deadlines on their host (`<deadline>`, `items::deadline`): the
//! thresholds that apply (only those shorter than the deadline, and 0), who is told (the
//! holder, else everyone offered; the responsible through the controller's event), the
//! hand-over to the responsible user 24 hours before (a selected item, a locked one, method
//! `all`), a late result of the former holder refused and recorded, and restarts that fire
//! nothing twice. An hour is 100 ms here (`--hour-ms 100`).

use mobiwf_proto::{ItemAction, ItemEvent, ItemStatus, UserId, Verdict};
use mobiwf_xml_schema::{Method, People};

use super::people::*;
use super::*;

/// An hour, in ms, in these scenarios.
pub(super) const HOUR: u64 = 100;

/// Alice (N1) and Bob (N2) of role tech, and Ron (N9), responsible, of no role.
pub(super) fn org() -> mobiwf_people::Directory {
    let mut users = three()[..2].to_vec();
    users.push(user("ron", "N9", &[]));
    directory(1, users)
}

/// Role tech with a deadline of `hours`.
pub(super) fn due_in(hours: u32, method: Method) -> People {
    People {
        deadline: Some(hours),
        disconnected: true,
        ..tech(method)
    }
}

/// Deploys manual activity 3 of `instance` with `people` at `now_ms`, Ron responsible (when
/// `responsible`), an hour of [`HOUR`] ms.
pub(super) fn deploy_due(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    people: &People,
    responsible: bool,
) -> Vec<Effect> {
    at(
        e,
        now_ms,
        deployment(instance, people, responsible, Some(HOUR)),
    )
}

/// The deployment of instance `instance`'s manual activity 3 for `people`, with ron
/// responsible or nobody, and the hour length it names.
fn deployment(instance: u64, people: &People, responsible: bool, hour_ms: Option<u64>) -> Input {
    Input::Deploy(mobiwf_proto::Deploy {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        document: manual_doc(instance, (3, people), 0),
        responsible: responsible.then(|| UserId::from("ron")),
        hour_ms,
        inputs: Default::default(),
        runs_on: Vec::new(),
    })
}

/// The deadline events sent to the controller: (hours left, users told).
pub(super) fn deadlines(fx: &[Effect]) -> Vec<(u32, Vec<String>)> {
    item_events(fx)
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            ItemEvent::Deadline { hours_left, told } => {
                Some((hours_left, told.iter().map(|u| u.to_string()).collect()))
            }
            _ => None,
        })
        .collect()
}

/// The hand-overs sent to the controller: (from, to).
fn hand_overs(fx: &[Effect]) -> Vec<(Vec<String>, String)> {
    item_events(fx)
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            ItemEvent::HandedOver { from, to } => {
                Some((from.iter().map(|u| u.to_string()).collect(), to.to_string()))
            }
            _ => None,
        })
        .collect()
}

/// The thresholds passed, as the snapshots sent say.
fn passed_sent(fx: &[Effect]) -> Vec<Vec<u32>> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::Send {
                message: Message::Item(mobiwf_proto::ItemSnapshot { info, .. }),
                ..
            } => info.due.as_ref().map(|d| d.passed.clone()),
            _ => None,
        })
        .collect()
}

scenarios! {
fn an_item_nobody_can_be_offered_is_said_unassigned_once_as_its_thresholds_pass() {
    let mut e = host(directory(1, vec![user("ron", "N9", &[])]));
    let fx = deploy_due(&mut e, 1000, 1, &due_in(20, Method::Fcfa), false);
    let unassigned = |fx: &[Effect]| {
        item_events(fx)
            .into_iter()
            .flatten()
            .filter(|e| matches!(e, ItemEvent::Unassigned { .. }))
            .count()
    };
    assert_eq!(unassigned(&fx), 1);
    let fx = tick(&mut e, 1000 + 8 * HOUR);
    assert_eq!(deadlines(&fx).len(), 1, "12 hours left");
    assert_eq!(unassigned(&fx), 0, "said already");
}

fn an_item_nobody_was_offered_passes_to_the_responsible_user_at_24_hours_left() {
    let mut e = host(directory(1, vec![user("ron", "N9", &[])]));
    deploy_due(&mut e, 1000, 1, &due_in(30, Method::Fcfa), true);
    assert!(item(&e, 1, 3).unassigned().is_some());
    let version = item(&e, 1, 3).version;
    let fx = tick(&mut e, 1000 + 6 * HOUR);
    assert_eq!(hand_overs(&fx), [(vec![], "ron".to_owned())]);
    assert_eq!(holders(&e, 1, 3), [Some(("ron".to_owned(), None))]);
    assert_eq!(state(&e, 1, 3), ActivityState::Running, "taken up: it starts");
    assert_eq!(item(&e, 1, 3).version, version + 1, "devices take the newer version");
}

fn a_deployment_that_names_no_hour_length_uses_the_nodes_then_an_hour() {
    for (node_hour_ms, hour_ms) in [(Some(50), 50), (None, 3_600_000)] {
        let mut e = host(org());
        if let Some(ms) = node_hour_ms {
            e.set_hour_ms(ms);
        }
        at(&mut e, 1000, deployment(1, &due_in(20, Method::Fcfa), false, None));
        let due = item(&e, 1, 3).due.expect("a deadline");
        assert_eq!((due.hour_ms, due.at_ms), (hour_ms, 1000 + 20 * hour_ms));
    }
}

fn a_short_deadline_warns_the_offered_then_the_holder_at_12_6_and_0_hours_left() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(20, Method::Fcfa), true);
    let due = item(&e, 1, 3).due.expect("a deadline");
    assert_eq!((due.hours, due.at_ms, due.hour_ms), (20, 1000 + 20 * HOUR, HOUR));
    // 48 and 24 hours left do not apply to a deadline of 20 hours.
    assert_eq!(e.next_deadline(), Some(1000 + 8 * HOUR));
    assert!(deadlines(&tick(&mut e, 1000 + 8 * HOUR - 1)).is_empty());

    let fx = tick(&mut e, 1000 + 8 * HOUR);
    assert_eq!(deadlines(&fx), [(12, vec!["alice".to_owned(), "bob".to_owned()])]);
    assert_eq!(devices(&fx), ["N1", "N2"], "each device offered it is told");
    assert_eq!(passed_sent(&fx), [vec![12], vec![12]]);
    assert_eq!(e.next_deadline(), Some(1000 + 14 * HOUR));

    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = tick(&mut e, 1000 + 14 * HOUR + 5);
    assert_eq!(deadlines(&fx), [(6, vec!["alice".to_owned()])], "the holder only");
    assert_eq!(devices(&fx), ["N1"]);
    let fx = tick(&mut e, 1000 + 20 * HOUR);
    assert_eq!(deadlines(&fx), [(0, vec!["alice".to_owned()])]);
    assert!(hand_overs(&fx).is_empty(), "no hand-over for a deadline under 24 hours");
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 1000 + 40 * HOUR).is_empty(), "each threshold once");
    assert_eq!(item(&e, 1, 3).due.expect("due").passed, [12, 6, 0]);
}

fn a_selected_item_passes_to_the_responsible_at_24_hours_left_and_the_late_result_is_ignored() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(72, Method::Fcfa), true);
    let fx = tick(&mut e, 1000 + 24 * HOUR);
    assert_eq!(deadlines(&fx), [(48, vec!["alice".to_owned(), "bob".to_owned()])]);
    claim(&mut e, 4000, (1, 3), "alice", ItemAction::Select, Some("N1"));

    let fx = tick(&mut e, 1000 + 48 * HOUR);
    assert_eq!(deadlines(&fx), [(24, vec!["alice".to_owned()])]);
    assert_eq!(hand_overs(&fx), [(vec!["alice".to_owned()], "ron".to_owned())]);
    assert_eq!(holders(&e, 1, 3), [Some(("ron".to_owned(), None))]);
    let alice = sent_to(&fx, "N1").expect("alice's device told");
    assert!(alice.holders.is_empty() && alice.offered.is_empty());
    let ron = sent_to(&fx, "N9").expect("ron's device told");
    assert_eq!(ron.holders.len(), 1);
    assert_eq!(state(&e, 1, 3), ActivityState::Running);

    let done = ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() };
    let fx = claim(&mut e, 6000, (1, 3), "alice", done.clone(), Some("N1"));
    let v = verdict(&fx);
    assert!(format!("{v:?}").contains("recorded and ignored"), "{v:?}");
    assert!(unavailable(&v));
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { user, .. }] if user.as_str() == "alice"));
    assert!(item(&e, 1, 3).is_open(), "her result changed nothing");

    let fx = claim(&mut e, 6100, (1, 3), "ron", done, Some("N9"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
    assert_eq!(e.next_deadline(), None, "a done item has no thresholds left");
}

fn a_user_the_item_was_taken_from_works_on_it_again_once_given_it_back() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(72, Method::Fcfa), true);
    claim(&mut e, 4000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = tick(&mut e, 1000 + 48 * HOUR);
    assert_eq!(hand_overs(&fx), [(vec!["alice".to_owned()], "ron".to_owned())]);
    // Bob never had it: his select is refused as any other, not as a result taken from him.
    let fx = claim(&mut e, 6000, (1, 3), "bob", ItemAction::Select, Some("N2"));
    let v = verdict(&fx);
    assert!(unavailable(&v) && !format!("{v:?}").contains("recorded and ignored"), "{v:?}");
    let back = ItemAction::Delegate { to: UserId::from("alice") };
    assert_eq!(verdict(&claim(&mut e, 6100, (1, 3), "ron", back, Some("N9"))), Some(Verdict::Done));
    let done = ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() };
    assert_eq!(verdict(&claim(&mut e, 6200, (1, 3), "alice", done, Some("N1"))), Some(Verdict::Done));
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
}

fn a_responsible_user_whose_device_registers_after_the_hand_over_is_sent_the_item() {
    // Ron's device N9 has not registered when the item passes to him: nothing can tell it.
    let mut unregistered = org();
    unregistered.devices.retain(|name, _| name.as_str() != "N9");
    let mut e = host(unregistered);
    deploy_due(&mut e, 1000, 1, &due_in(30, Method::Fcfa), true);
    claim(&mut e, 1100, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = tick(&mut e, 1000 + 6 * HOUR);
    assert_eq!(hand_overs(&fx), [(vec!["alice".to_owned()], "ron".to_owned())]);
    assert!(sent_to(&fx, "N9").is_none(), "no device of ron's to tell");
    // Once it registers (the directory's next version names it), it is sent the item he holds.
    let mut registered = org();
    registered.version = 2;
    let fx = at(&mut e, 1700, Input::Directory(registered.clone()));
    let ron = sent_to(&fx, "N9").expect("ron's device told once it registered");
    assert_eq!(ron.holders, [("ron".to_owned(), mobiwf_proto::Hold::Selected, None)]);
    // A version that changes no one's device tells nobody again.
    registered.version = 3;
    let fx = at(&mut e, 1800, Input::Directory(registered));
    assert!(sent_to(&fx, "N9").is_none(), "{fx:?}");
}

fn a_locked_item_is_handed_over_once_across_restarts() {
    let mut e = host(org());
    let mut disk = Disk::default();
    deploy_due(&mut e, 1000, 1, &due_in(30, Method::Fcfa), true);
    claim(&mut e, 1100, (1, 3), "bob", ItemAction::Lock, Some("N2"));
    let mut e = disk.restart(&mut e);
    assert_eq!(e.next_deadline(), Some(1000 + 6 * HOUR), "restored from the stored item");

    let fx = tick(&mut e, 1000 + 6 * HOUR);
    assert_eq!(hand_overs(&fx), [(vec!["bob".to_owned()], "ron".to_owned())]);
    let mut e = disk.restart(&mut e);
    let fx = tick(&mut e, 1000 + 6 * HOUR + 1);
    assert!(deadlines(&fx).is_empty() && hand_overs(&fx).is_empty(), "nothing fires twice");
    assert_eq!(holders(&e, 1, 3), [Some(("ron".to_owned(), None))]);

    let fx = tick(&mut e, 1000 + 18 * HOUR);
    assert_eq!(deadlines(&fx), [(12, vec!["ron".to_owned()])], "the holder now");
    let fx = claim(&mut e, 3000, (1, 3), "bob", ItemAction::Unlock, Some("N2"));
    assert!(unavailable(&verdict(&fx)));
}

fn method_all_copies_close_and_the_responsible_gets_one() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(25, Method::All), true);
    claim(&mut e, 1100, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = tick(&mut e, 1000 + HOUR);
    assert_eq!(hand_overs(&fx), [(vec!["alice".to_owned(), "bob".to_owned()], "ron".to_owned())]);
    let copies = item(&e, 1, 3).copies;
    assert_eq!(copies.iter().filter(|c| c.is_open()).count(), 1);
    assert!(copies.iter().filter(|c| !c.is_open()).all(|c| matches!(&c.status(), ItemStatus::Closed { why } if why.contains("responsible"))));
    assert_eq!(holders(&e, 1, 3).last(), Some(&Some(("ron".to_owned(), None))));
}

fn without_a_responsible_user_the_notices_come_and_nothing_is_handed_over() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(30, Method::Fcfa), false);
    let fx = tick(&mut e, 1000 + 6 * HOUR);
    assert_eq!(deadlines(&fx), [(24, vec!["alice".to_owned(), "bob".to_owned()])]);
    assert!(hand_overs(&fx).is_empty());
    assert_eq!(offered(&e, 1, 3), [vec!["alice".to_owned(), "bob".to_owned()]]);
}

fn an_extended_deadline_tells_again_what_is_ahead_and_nothing_behind() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(20, Method::Fcfa), true);
    tick(&mut e, 1000 + 20 * HOUR);
    assert_eq!(item(&e, 1, 3).due.expect("due").passed, [12, 6, 0]);
    let extend = ItemAction::Extend { hours: 10 };
    let fx = claim(&mut e, 3100, (1, 3), "alice", extend.clone(), Some("N1"));
    assert!(matches!(verdict(&fx), Some(Verdict::Forbidden { .. })), "not alice's to extend");
    let fx = claim(&mut e, 3100, (1, 3), "ron", extend, None);
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Acted { .. }]));
    let due = item(&e, 1, 3).due.expect("due");
    assert_eq!((due.hours, due.at_ms), (30, 4000));
    // 24 hours left on the new deadline is behind now: no late hand-over.
    assert_eq!(due.passed, [24, 12]);
    assert_eq!(e.next_deadline(), Some(3400));
    let fx = tick(&mut e, 4000);
    assert_eq!(deadlines(&fx), [(6, vec!["alice".to_owned(), "bob".to_owned()]), (0, vec!["alice".to_owned(), "bob".to_owned()])]);
    assert!(hand_overs(&fx).is_empty());
    let fx = claim(&mut e, 4100, (1, 3), "ron", ItemAction::Extend { hours: 0 }, None);
    assert!(item_events(&fx)[0].iter().any(|e| matches!(e, ItemEvent::Refused { .. })));
    // At most MAX_DEADLINE_HOURS at a time.
    let most = mobiwf_xml_schema::limits::MAX_DEADLINE_HOURS;
    let fx = claim(&mut e, 4200, (1, 3), "ron", ItemAction::Extend { hours: most + 1 }, None);
    assert!(item_events(&fx)[0].iter().any(|e| matches!(e, ItemEvent::Refused { .. })));
    let fx = claim(&mut e, 4300, (1, 3), "ron", ItemAction::Extend { hours: most }, None);
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Acted { .. }]));
    assert_eq!(item(&e, 1, 3).due.expect("due").hours, 30 + most);
}
}
