//! Scenarios of work items on their host: who an item is offered to (methods, policies,
//! on-leave users, nobody then a newer directory), what devices and the controller are
//! sent, and what restarts keep.

use mobiwf_proto::{Hold, ItemAction, ItemAnswer, ItemEvent, ItemStatus, UserId, Verdict};
use mobiwf_xml_schema::{Method, Policy};

use super::people::*;
use super::*;

scenarios! {
fn fcfa_offers_a_role_s_users_on_their_devices_and_the_first_select_wins() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()[..2].to_vec()));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    let views = sent(&fx);
    assert_eq!(devices(&fx), ["N1", "N2"]);
    assert_eq!(views[0].offered, ["alice"]);
    assert_eq!(views[1].offered, ["bob"]);
    assert!(views.iter().all(|v| v.version == 1 && v.host == HOST && v.ready_ms == 1000));
    assert!(views.iter().all(|v| v.status == ItemStatus::Open && v.verdict.is_none()));
    let events = item_events(&fx);
    assert_eq!(events.len(), 1);
    assert_eq!(offered_in(&events[0]), ["alice", "bob"]);
    assert_eq!(state(&e, 1, 3), ActivityState::Ready);

    let fx = claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let alice = sent_to(&fx, "N1").expect("alice's device told");
    assert_eq!(alice.verdict, Some(Verdict::Done));
    assert_eq!(alice.holders, [("alice".to_owned(), Hold::Selected, None)]);
    assert_eq!(alice.version, 2);
    let bob = sent_to(&fx, "N2").expect("bob's device told");
    assert!(bob.offered.is_empty() && bob.holders.is_empty() && bob.verdict.is_none());
    assert_eq!(revoked_in(&item_events(&fx)[0]), ["bob"]);

    let fx = claim(&mut e, 2001, (1, 3), "bob", ItemAction::Select, Some("N2"));
    let v = verdict(&fx);
    assert!(unavailable(&v), "{v:?}");
    assert!(format!("{v:?}").contains("alice"));
    assert_eq!(devices(&fx), ["N2"], "only the claimant is answered");
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { .. }]));
    assert_eq!(holders(&e, 1, 3), [Some(("alice".to_owned(), None))]);
    assert_eq!(item(&e, 1, 3).version, 2, "a refusal changes nothing");
    assert_eq!(state(&e, 1, 3), ActivityState::Running);
}

fn twenty_claims_from_ten_users_make_exactly_one_holder() {
    let users: Vec<_> = (0..10)
        .map(|i| user(&format!("u{i}"), &format!("D{i}"), &[("tech", 0)]))
        .collect();
    let people_3 = mobiwf_xml_schema::People { disconnected: true, ..tech(Method::Fcfa) };
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    // Each user selects and locks, in a shuffled order.
    let mut claims: Vec<(u64, ItemAction)> = (0..10)
        .flat_map(|i| [(i, ItemAction::Select), (i, ItemAction::Lock)])
        .collect();
    let mut seed = 7u64;
    for i in (1..claims.len()).rev() {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        claims.swap(i, usize::try_from(seed >> 33).expect("small") % (i + 1));
    }
    let mut done = Vec::new();
    let mut acted = 0;
    for (n, (i, action)) in claims.into_iter().enumerate() {
        let (name, device) = (format!("u{i}"), format!("D{i}"));
        let fx = claim(&mut e, 2000 + n as u64, (1, 3), &name, action, Some(&device));
        match verdict(&fx) {
            Some(Verdict::Done) => done.push(name),
            v => assert!(
                unavailable(&v) || matches!(v, Some(Verdict::Invalid { .. })),
                "{v:?}"
            ),
        }
        acted += item_events(&fx)
            .iter()
            .flatten()
            .filter(|e| matches!(e, ItemEvent::Acted { .. }))
            .count();
    }
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(acted, 1);
    assert_eq!(holders(&e, 1, 3)[0].as_ref().map(|h| h.0.clone()), Some(done[0].clone()));
}

fn method_all_gives_each_user_a_copy_and_ends_when_every_copy_is_done() {
    let people_3 = tech(Method::All);
    let mut e = host(directory(1, three()[..2].to_vec()));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["alice"], vec!["bob"]]);
    assert_eq!(devices(&fx), ["N1", "N2"]);
    for (n, (who, device)) in [("alice", "N1"), ("bob", "N2")].into_iter().enumerate() {
        let t = 2000 + 10 * n as u64;
        let fx = claim(&mut e, t, (1, 3), who, ItemAction::Select, Some(device));
        assert_eq!(verdict(&fx), Some(Verdict::Done));
        let complete = ItemAction::Complete {
            succeeded: true,
            detail: Some(format!("{who} ok")),
            flag: None,
            data: Default::default(),
        };
        let fx = claim(&mut e, t + 1, (1, 3), who, complete, Some(device));
        assert_eq!(verdict(&fx), Some(Verdict::Done));
        let mine = sent_to(&fx, device).expect("told");
        assert!(matches!(mine.status, ItemStatus::Done { succeeded: true, .. }));
        if n == 0 {
            assert_eq!(state(&e, 1, 3), ActivityState::Running, "bob's copy is open");
            assert!(notifies(&fx).is_empty());
        } else {
            assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
            assert_eq!(notifies(&fx), [("/remote/b".to_owned(), 3, Outcome::Succeeded)]);
            assert_eq!(detail(&e, 1, 3), "alice: alice ok; bob: bob ok");
        }
    }
    assert!(matches!(item(&e, 1, 3).status(), ItemStatus::Done { succeeded: true, .. }));
}

fn priority_offers_it_to_the_user_with_the_highest_role_priority() {
    let people_3 = tech(Method::Priority);
    let users = vec![
        user("alice", "N1", &[("tech", 1)]),
        user("bob", "N2", &[("tech", 5)]),
        user("carol", "N3", &[("tech", 3)]),
    ];
    let mut e = host(directory(1, users));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(devices(&fx), ["N2"]);
    assert_eq!(offered(&e, 1, 3), [vec!["bob"]]);
}

fn least_working_offers_it_to_the_least_loaded_user() {
    let people_3 = tech(Method::LeastWorking);
    let mut e = host(directory(1, three()));
    for instance in 1..=3 {
        deploy_manual(&mut e, 1000, instance, (3, &people_3));
    }
    let firsts: Vec<_> = (1..=3).map(|i| offered(&e, i, 3)[0].clone()).collect();
    assert_eq!(firsts, [vec!["alice"], vec!["bob"], vec!["carol"]]);
    // Bob finishes his: he is the least loaded now.
    claim(&mut e, 2000, (2, 3), "bob", ItemAction::Select, Some("N2"));
    let complete = ItemAction::Complete {
        succeeded: true,
        detail: None,
        flag: None,
        data: Default::default(),
    };
    claim(&mut e, 2001, (2, 3), "bob", complete, Some("N2"));
    deploy_manual(&mut e, 3000, 4, (3, &people_3));
    assert_eq!(offered(&e, 4, 3), [vec!["bob"]]);
}

fn round_robin_takes_the_role_s_users_in_turn_across_restarts() {
    let people_3 = tech(Method::RoundRobin);
    let mut e = host(directory(1, three()));
    let mut disk = Disk::default();
    let mut chosen = Vec::new();
    for instance in 1..=5 {
        let fx = deploy_manual(&mut e, 1000 * instance, instance, (3, &people_3));
        chosen.extend(devices(&fx));
        // A restart after every other item: the token is stored.
        if instance % 2 == 1 {
            e = disk.restart(&mut e);
        }
    }
    assert_eq!(chosen, ["N1", "N2", "N3", "N1", "N2"]);
    assert_eq!(e.tokens().get("tech").map(|u| u.as_str()), Some("bob"));
    let restored = disk.restart(&mut e);
    assert_eq!(restored.tokens(), e.tokens());
}

fn each_fcfa_policy_offers_it_to_the_users_it_names() {
    // fewest-assigned 1: alice already has an item (activity 5, by priority).
    let people_5 = tech(Method::Priority);
    let people_3 = tech_policy(Policy::FewestAssigned(1));
    let mut users = three();
    users[0].roles[0].priority = 9;
    let mut e = host(directory(1, users));
    deploy_manual(&mut e, 1000, 1, (5, &people_5));
    deploy_manual(&mut e, 1000, 2, (3, &people_3));
    assert_eq!(offered(&e, 2, 3), [vec!["bob"]]);

    // fewest-selected 1: alice holds an item; bob and carol hold none.
    let people_5 = tech(Method::Fcfa);
    let people_3 = tech_policy(Policy::FewestSelected(1));
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (5, &people_5));
    claim(&mut e, 1500, (1, 5), "alice", ItemAction::Select, Some("N1"));
    deploy_manual(&mut e, 2000, 2, (3, &people_3));
    assert_eq!(offered(&e, 2, 3), [vec!["bob"]]);

    // fewest-assigned 1 counts held items too: alice holds one.
    let people_4 = tech_policy(Policy::FewestAssigned(1));
    deploy_manual(&mut e, 2500, 3, (4, &people_4));
    assert_eq!(offered(&e, 3, 4), [vec!["carol"]], "bob is offered one, alice holds one");

    // most-frequent 1 and most-recent 1: by the devices' connections.
    let mut dir = directory(2, three());
    for (device, connections, last) in [("N1", 1, 300), ("N2", 5, 100), ("N3", 3, 900)] {
        let entry = dir.devices.get_mut(device).expect("device");
        entry.connections = connections;
        entry.last_connected_ms = last;
    }
    let people_3 = tech_policy(Policy::MostFrequent(1));
    let mut e = host(dir.clone());
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["bob"]]);
    let people_3 = tech_policy(Policy::MostRecent(1));
    let mut e = host(dir);
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["carol"]]);
}

fn users_on_leave_are_never_offered_it() {
    let people_3 = tech(Method::Fcfa);
    let mut users = three();
    users[0] = on_leave(users[0].clone());
    let mut e = host(directory(1, users.clone()));
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(devices(&fx), ["N2", "N3"]);
    assert_eq!(offered(&e, 1, 3), [vec!["bob", "carol"]]);
    // Bob takes it; Carol goes on leave; Bob gives it back: offered to Bob alone.
    claim(&mut e, 2000, (1, 3), "bob", ItemAction::Select, Some("N2"));
    users[2] = on_leave(users[2].clone());
    at(&mut e, 2500, Input::Directory(directory(2, users)));
    let fx = claim(&mut e, 3000, (1, 3), "bob", ItemAction::Release, Some("N2"));
    assert_eq!(offered(&e, 1, 3), [vec!["bob"]]);
    assert_eq!(offered_in(&item_events(&fx)[0]), ["bob"]);
    // Nor can an administrator or a delegation give it to them.
    let fx = claim(&mut e, 3100, (1, 3), "alice", ItemAction::Insert, None);
    assert!(sent(&fx).is_empty(), "the controller's claims are answered in events only");
    assert!(matches!(&item_events(&fx)[0][..], [ItemEvent::Refused { reason, .. }] if reason.contains("on leave")));
    claim(&mut e, 3200, (1, 3), "bob", ItemAction::Select, Some("N2"));
    let to = ItemAction::Delegate { to: UserId::from("carol") };
    let fx = claim(&mut e, 3300, (1, 3), "bob", to, Some("N2"));
    assert!(matches!(verdict(&fx), Some(Verdict::Invalid { reason }) if reason.contains("on leave")));
}

fn users_away_get_no_new_offers_but_keep_theirs_and_only_their_devices_read_the_item() {
    let people_3 = mobiwf_xml_schema::People {
        disconnected: true,
        ..tech(Method::Fcfa)
    };
    let away = |mut dir: mobiwf_people::Directory, user: &str| {
        let device = dir.user(user).and_then(|u| u.device.clone()).expect("a device");
        let entry = dir.devices.get_mut(device.as_str()).expect("registered");
        entry.away.push(UserId::from(user));
        dir
    };
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "bob", "carol"]]);
    // Alice goes away: she keeps her offer (disabled on her device), gets no new one.
    at(&mut e, 1500, Input::Directory(away(directory(2, three()), "alice")));
    assert_eq!(offered(&e, 1, 3), [vec!["alice", "bob", "carol"]]);
    deploy_manual(&mut e, 1600, 2, (3, &people_3));
    assert_eq!(offered(&e, 2, 3), [vec!["bob", "carol"]]);
    // What the item reads is told to the devices of the users it is offered to, only.
    let reads = e.item_reads(InstanceId(2), ActivityId(3), &node_of("N2"));
    assert_eq!(reads, Ok(Vec::new()), "no <reads>: nothing to copy");
    let refused = e.item_reads(InstanceId(2), ActivityId(3), &node_of("N1"));
    assert!(refused.unwrap_err().contains("none of the users"));
    let none = e.item_reads(InstanceId(9), ActivityId(3), &node_of("N2"));
    assert!(none.unwrap_err().contains("no open work item"));
    // Nobody can give her work meanwhile: not an administrator's insert, not a delegation.
    let fx = claim(&mut e, 1700, (2, 3), "bob", ItemAction::Select, Some("N2"));
    assert!(verdict(&fx).is_some());
    let to = ItemAction::Delegate { to: UserId::from("alice") };
    let fx = claim(&mut e, 1800, (2, 3), "bob", to, Some("N2"));
    assert!(matches!(verdict(&fx), Some(Verdict::Invalid { reason }) if reason.contains("disconnected")));
    // An item that may not go offline is not copied.
    deploy_manual(&mut e, 1900, 3, (3, &tech(Method::Fcfa)));
    let refused = e.item_reads(InstanceId(3), ActivityId(3), &node_of("N2"));
    assert!(refused.unwrap_err().contains("<disconnected>"));
}

fn an_item_nobody_can_take_waits_for_a_newer_directory() {
    let people_3 = tech(Method::Fcfa);
    let mut e = Engine::new();
    e.set_location(host_location());
    // No directory at all yet.
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert!(sent(&fx).is_empty());
    let why = match &item_events(&fx)[0][..] {
        [ItemEvent::Unassigned { why }] => why.clone(),
        other => panic!("{other:?}"),
    };
    assert!(why.contains("no organisation directory"), "{why}");
    // A directory without anyone in the role: still nobody, nothing sent.
    let supervisor = vec![user("sam", "N9", &[("supervisor", 0)])];
    let fx = at(&mut e, 1500, Input::Directory(directory(1, supervisor)));
    assert!(fx.is_empty());
    assert!(item(&e, 1, 3).unassigned().is_some());
    // A newer one with Alice: offered to her.
    let fx = at(&mut e, 2000, Input::Directory(directory(3, three()[..1].to_vec())));
    assert_eq!(devices(&fx), ["N1"]);
    assert_eq!(offered_in(&item_events(&fx)[0]), ["alice"]);
    assert_eq!(item(&e, 1, 3).unassigned(), None);
    assert_eq!(item(&e, 1, 3).version, 2);
    // An older directory is ignored.
    let fx = at(&mut e, 2500, Input::Directory(directory(2, three())));
    assert!(fx.is_empty());
    assert_eq!(e.directory().version, 3);
    assert_eq!(offered(&e, 1, 3), [vec!["alice"]]);
}

fn activities_without_people_keep_the_node_wide_worklist() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    // Activity 6 has no people extensions.
    deploy_manual(&mut e, 1000, 2, (6, &mobiwf_xml_schema::People::default()));
    let listed: Vec<_> = e.worklist().iter().map(|w| (w.instance.0, w.activity.0)).collect();
    assert_eq!(listed, [(2, 6)], "the work item is on its users' worklists only");
    assert!(e.item(InstanceId(2), ActivityId(6)).is_none());
    let refused = finished(&mut e, 1, 3, true, Finisher::Person);
    assert!(matches!(refused, Err(Refusal::NotCompletable { reason, .. }) if reason.contains("its holder completes it")));
    finished(&mut e, 2, 6, true, Finisher::Person).expect("anyone completes it");
    assert_eq!(state(&e, 2, 6), ActivityState::Succeeded);
    // A device's claim on what is no work item here is answered, so its user does not wait.
    let fx = claim(&mut e, 4000, (2, 6), "alice", ItemAction::Select, Some("N1"));
    let answered = |fx: &[Effect]| {
        fx.iter()
            .filter_map(|f| match f {
                Effect::Send { to: Target::Partner(to), message: Message::Answer(ItemAnswer { answer, .. }) } => {
                    Some((to.clone(), answer.request, answer.verdict.clone()))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let answers = answered(&fx);
    let [(to, request, Verdict::Invalid { reason })] = &answers[..] else {
        panic!("one invalid verdict: {fx:?}");
    };
    assert_eq!((to.clone(), *request), (location_of("N1"), 4000));
    assert!(reason.contains("no people extensions"), "{reason}");
    let fx = claim(&mut e, 4001, (1, 77), "alice", ItemAction::Select, Some("N1"));
    assert!(matches!(&answered(&fx)[..], [(_, 4001, Verdict::Invalid { .. })]), "{fx:?}");
    // The controller's claim on an activity that is no work item is told in the item events;
    // on an activity this node does not run, and from an unregistered node, refused.
    let fx = claim(&mut e, 4002, (2, 6), "alice", ItemAction::Insert, None);
    assert!(matches!(&item_events(&fx)[..], [events] if matches!(&events[..], [ItemEvent::Refused { .. }])), "{fx:?}");
    let r = try_claim(&mut e, 4003, (1, 77), "alice", ItemAction::Insert, None);
    assert!(matches!(r, Err(Refusal::UnknownActivity { .. })), "{r:?}");
    let r = try_claim(&mut e, 4000, (1, 3), "alice", ItemAction::Select, Some("N7"));
    assert!(matches!(r, Err(Refusal::UnknownDevice { .. })), "{r:?}");
    // A device claims only for its own users.
    let fx = claim(&mut e, 4000, (1, 3), "alice", ItemAction::Select, Some("N2"));
    assert!(matches!(verdict(&fx), Some(Verdict::Forbidden { .. })));
    assert_eq!(devices(&fx), ["N2"]);
}

fn the_item_carries_its_deadline_and_versions_grow_by_one_per_change() {
    let people_3 = mobiwf_xml_schema::People { priority: 7, ..tech(Method::Fcfa) };
    let mut e = host(directory(1, three()[..2].to_vec()));
    let document = manual_doc(1, (3, &people_3), 60);
    let fx = at(&mut e, 1000, Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(1), partition: PartitionId(1), document, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }));
    assert_eq!(sent(&fx)[0].deadline_ms, Some(61_000));
    let info = fx.iter().find_map(|f| match f {
        Effect::Send { message: Message::Item(mobiwf_proto::ItemSnapshot { info, .. }), .. } => Some(info.clone()),
        _ => None,
    });
    let info = info.expect("info");
    assert_eq!((info.priority, info.kind.as_str(), info.name.as_str()), (7, "manual", "N3"));
    let mut versions = vec![item(&e, 1, 3).version];
    for (t, action) in [(2000, ItemAction::Select), (2100, ItemAction::Release), (2200, ItemAction::Select)] {
        let fx = claim(&mut e, t, (1, 3), "bob", action, Some("N2"));
        versions.push(sent_to(&fx, "N2").expect("bob told").version);
    }
    assert_eq!(versions, [1, 2, 3, 4]);
}

fn the_users_of_a_device_this_host_cannot_reach_get_nothing_new_until_it_answers() {
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()[..2].to_vec()));
    at(&mut e, 500, Input::Link { peer: node_of("N2"), reachable: false });
    let fx = deploy_manual(&mut e, 1000, 1, (3, &people_3));
    assert_eq!(devices(&fx), ["N1"], "bob's device cannot be reached: only alice is offered");
    assert_eq!(sent(&fx)[0].offered, ["alice"]);
    // Nobody reachable: the next item is offered to nobody; once N2 answers, bob gets it.
    at(&mut e, 1500, Input::Link { peer: node_of("N1"), reachable: false });
    let fx = deploy_manual(&mut e, 1600, 2, (3, &people_3));
    assert!(devices(&fx).is_empty(), "{fx:?}");
    let fx = at(&mut e, 2000, Input::Link { peer: node_of("N2"), reachable: true });
    let bob = sent_to(&fx, "N2").expect("bob's device told once it answers");
    assert_eq!(bob.offered, ["bob"]);
    // A newer directory does not undo what this host saw of the links.
    at(&mut e, 2600, Input::Directory(directory(2, three()[..2].to_vec())));
    let fx = deploy_manual(&mut e, 3000, 3, (3, &people_3));
    assert_eq!(devices(&fx), ["N2"], "alice is still inactive after the new version");
}
}
