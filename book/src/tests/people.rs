//! The people side: the organisation directory and its versions, the responsible user and the
//! people a submission names, notices, work item events, and worklist administration.

use mobiwf_proto::{
    Answer, DeviceEntry, DirectoryVersion, Hold, Holder, ItemAction, ItemEvent, ItemEvents,
    ItemInfo, ItemStatus, Location, Presence, Report, Verdict,
};
use mobiwf_xml_schema::{Basis, People, UserId};

use super::*;

/// The `Directory` messages among the effects: (to, version, document, device names).
fn directories(applied: &Applied) -> Vec<(String, u64, String, Vec<String>)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Directory(DirectoryVersion {
                version,
                document,
                devices,
            }) => Some((
                to,
                version,
                document,
                devices.iter().map(|d| d.name.to_string()).collect(),
            )),
            _ => None,
        })
        .collect()
}

/// Three nodes (P1 = peerA, P2 = peerB, spare = peerC) and the staff organisation, applied
/// as version 4 (three registrations before it).
fn staffed() -> Book {
    let mut b = three_nodes();
    apply_org(&mut b, T0 - 1, &staff()).expect("organisation");
    assert_eq!(b.directory().version, 4);
    b
}

fn users(ids: &[&str]) -> Vec<UserId> {
    ids.iter().map(|u| (*u).into()).collect()
}

fn item_events(b: &mut Book, peer: &str, activity: u64, at_ms: u64, events: Vec<ItemEvent>) {
    let message = Message::ItemEvents(ItemEvents {
        pass: None,
        instance: InstanceId(1),
        activity: ActivityId(activity),
        at_ms,
        events,
    });
    from_node(b, at_ms, peer, message);
}

fn admin(
    b: &mut Book,
    instance: u64,
    activity: u64,
    user: &str,
    action: ItemAction,
) -> Result<Applied, BookError> {
    b.apply(
        T0 + 5000,
        Input::Worklist {
            instance: InstanceId(instance),
            activity: ActivityId(activity),
            user: user.into(),
            action,
        },
    )
}

fn claim(activity: u64, user: &str, action: ItemAction, request: u64) -> Message {
    Message::Claim(mobiwf_proto::Claim {
        instance: InstanceId(1),
        activity: ActivityId(activity),
        user: user.into(),
        action,
        request,
        offline_ms: None,
        offered_ms: None,
    })
}

scenarios! {
    fn an_organisation_applied_is_the_next_version_and_goes_to_every_node() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        assert_eq!(b.directory().version, 2, "one version per registration");
        assert!(b.directory().document.is_empty());
        let applied = apply_org(&mut b, T0, &staff()).expect("organisation");
        assert_eq!(b.directory().version, 3);
        assert_eq!(b.directory().org, staff());
        let first = org_doc(&staff());
        let both = vec!["P1".to_owned(), "P2".to_owned()];
        assert_eq!(
            directories(&applied),
            vec![
                ("peerA".to_owned(), 3, first.clone(), both.clone()),
                ("peerB".to_owned(), 3, first.clone(), both.clone()),
            ]
        );
        let devices: Vec<DeviceEntry> = b.directory().devices.values().cloned().collect();
        assert!(sent(&applied).iter().all(|(_, m)| matches!(
            m,
            Message::Directory(DirectoryVersion { devices: d, .. }) if *d == devices
        )));
        let mut second = staff();
        second.users.retain(|u| u.id.as_str() != "dan");
        let applied = apply_org(&mut b, T0 + 1, &second).expect("organisation");
        assert_eq!(b.directory().version, 4);
        assert_eq!(b.directory().org, second);
        let second = org_doc(&second);
        assert_ne!(second, first);
        assert_eq!(b.directory().document, second);
        assert_eq!(
            directories(&applied),
            vec![
                ("peerA".to_owned(), 4, second.clone(), both.clone()),
                ("peerB".to_owned(), 4, second, both),
            ]
        );
    }

    fn a_registration_updates_its_device_and_the_directory_goes_to_every_node() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2])]);
        let applied = b
            .apply(2, Input::Register(node("peerB", "P2", &[1])))
            .expect("register");
        assert!(sent(&applied).is_empty(), "no organisation yet: nothing to tell");
        assert_eq!(b.directory().version, 2);
        apply_org(&mut b, T0, &staff()).expect("organisation");
        assert!(b.directory().device_of("dan").is_none(), "tab has not registered");
        let applied = b
            .apply(T0 + 5, Input::Register(node("peerC", "tab", &[1])))
            .expect("register");
        assert_eq!(b.directory().version, 4);
        let three: Vec<String> = ["P1", "P2", "tab"].map(str::to_owned).to_vec();
        assert_eq!(
            directories(&applied),
            ["peerA", "peerB", "peerC"]
                .map(|p| (p.to_owned(), 4, org_doc(&staff()), three.clone()))
                .to_vec()
        );
        let tab = DeviceEntry {
            name: NodeName::new("tab"),
            node: NodeId::new("peerC"),
            location: Location::parse(addr("peerC")).unwrap(),
            connections: 1,
            last_connected_ms: T0 + 5,
            away: Vec::new(),
            presence_seq: 0,
        };
        assert_eq!(b.directory().device_of("dan"), Some(&tab));
        // Again, later: counted, and the time is the latest.
        b.apply(T0 + 9, Input::Register(node("peerA", "P1", &[1, 2])))
            .expect("register");
        let p1 = &b.directory().devices[&NodeName::new("P1")];
        assert_eq!((p1.connections, p1.last_connected_ms), (2, T0 + 9));
        assert_eq!(b.directory().version, 5);
        // Renamed: its old name leaves the directory.
        b.apply(T0 + 10, Input::Register(node("peerA", "P9", &[1, 2])))
            .expect("register");
        let names: Vec<&str> = b.directory().devices.keys().map(NodeName::as_str).collect();
        assert_eq!(names, ["P2", "P9", "tab"]);
        // An older registration changes nothing.
        let old = NodeInfo {
            seq: 0,
            ..node("peerA", "P1", &[1])
        };
        let applied = b.apply(T0 + 11, Input::Register(old)).expect("register");
        assert!(applied.effects.is_empty());
        assert_eq!(b.directory().version, 6);
    }

    fn a_device_says_its_user_is_away_and_back_and_is_not_watched_meanwhile() {
        let mut b = staffed();
        // ann's partition runs on P1 (peerA), her device: it is watched.
        let xml = with_people(&chain(-1), &[(1, role("tech"))]);
        submit_for(&mut b, &xml, "ann").expect("submit");
        let watched = |b: &Book| -> Vec<String> {
            b.watched().iter().map(|w| w.peer.to_string()).collect()
        };
        let presence = |away: &[&str], seq: u64| Message::Presence(Presence { away: users(away), seq });
        assert!(watched(&b).contains(&"peerA".to_owned()));
        let applied = from_node(&mut b, T0 + 1, "peerA", presence(&["ann"], 1));
        assert_eq!(b.directory().version, 5);
        assert!(b.directory().is_away("ann"));
        assert_eq!(directories(&applied).len(), 3, "every node hears of it");
        assert!(!watched(&b).contains(&"peerA".to_owned()), "away: not suspected");
        // Said twice: nothing new.
        let again = from_node(&mut b, T0 + 2, "peerA", presence(&["ann"], 2));
        assert!(again.effects.is_empty());
        assert_eq!(b.directory().version, 5);
        // A registration again does not bring her back; her device's word does, and a word
        // older than it, arriving late, changes nothing.
        b.apply(T0 + 3, Input::Register(node("peerA", "P1", &[1, 2])))
            .expect("register");
        assert!(b.directory().is_away("ann"));
        from_node(&mut b, T0 + 4, "peerA", presence(&[], 4));
        assert!(!b.directory().is_away("ann"));
        let late = from_node(&mut b, T0 + 5, "peerA", presence(&["ann"], 3));
        assert!(late.effects.is_empty());
        assert!(!b.directory().is_away("ann"));
        assert!(watched(&b).contains(&"peerA".to_owned()));
        // Only her own device speaks for her; the book keeps it across a restore.
        let err = b
            .apply(
                T0 + 6,
                Input::FromNode { peer: NodeId::new("peerB"), message: presence(&["ann"], 9) },
            )
            .unwrap_err();
        assert!(err.to_string().contains("whose device it is not"), "{err}");
        from_node(&mut b, T0 + 7, "peerA", presence(&["ann"], 5));
        let restored = restore::rebuilt(b.take_changes());
        assert_eq!(restored.directory(), b.directory());
        // A new organisation where ann's device is another drops the mark nobody could clear.
        let mut moved = staff();
        moved.users.iter_mut().filter(|u| u.id.as_str() == "ann").for_each(|u| {
            u.device = Some("P2".to_owned());
        });
        apply_org(&mut b, T0 + 8, &moved).expect("organisation");
        assert!(!b.directory().is_away("ann"));
        assert!(b.directory().devices.values().all(|d| d.away.is_empty()));
    }

    fn a_book_restored_keeps_its_directory_its_request_number_and_responsible_users() {
        let mut b = staffed();
        let xml = with_people(&chain(-1), &[(1, role("tech")), (2, role("tech"))]);
        submit_for(&mut b, &xml, "ann").expect("submit");
        admin(&mut b, 1, 1, "bob", ItemAction::Insert).expect("insert");
        let restored = restore::rebuilt(b.take_changes());
        assert_eq!(restored.directory(), b.directory());
        assert_eq!(restored.people_record(), b.people_record());
        assert_eq!(restored.last_request, 1);
        let inst = restored.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.responsible, Some("ann".into()));
        assert_eq!(Some(inst), b.instance(InstanceId(1)));
    }

    fn the_responsible_user_must_be_in_the_directory() {
        let mut b = three_nodes();
        let err = submit_for(&mut b, &chain(-1), "ann").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no user 'ann' in the organisation directory (version 3; no organisation applied \
             yet); apply an organisation that has them, or leave --responsible out"
        );
        apply_org(&mut b, T0, &staff()).expect("organisation");
        let err = submit_for(&mut b, &chain(-1), "zed").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no user 'zed' in the organisation directory (version 4); apply an organisation \
             that has them, or leave --responsible out"
        );
        assert!(b.instance(InstanceId(1)).is_none());
        assert!(b.take_changes().instances.is_empty(), "nothing changed");
        submit_for(&mut b, &chain(-1), "ann").expect("submit");
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.responsible, Some("ann".into()));
        let json = serde_json::to_string(inst).expect("ser");
        assert!(json.contains(r#""responsible":"ann""#), "{json}");
        submit(&mut b, &chain(-1)).expect("submit");
        let json = serde_json::to_string(b.instance(InstanceId(2)).expect("instance"))
            .expect("ser");
        assert!(!json.contains("responsible") && !json.contains("items"), "{json}");
        // Instances stored before: no such fields.
        let inst: Instance = serde_json::from_str(&json).expect("de");
        assert_eq!(inst.responsible, None);
        assert!(inst.items.is_empty());
    }

    fn roles_departments_and_teams_the_directory_lacks_are_refused_at_submission_all_at_once() {
        let mut b = staffed();
        let xml = wf(
            &[act(1, -1, &[]), act(2, -1, &[1]), act(3, -1, &[2])],
            &[(1, 1, 0, &[1, 2, 3])],
        );
        let red_team = People {
            department: Some("ops".into()),
            team: Some("red".into()),
            basis: Basis::Team,
            ..People::default()
        };
        let xml = with_people(&xml, &[(1, role("tech")), (2, role("chef")), (3, red_team)]);
        let err = submit_for(&mut b, &xml, "zed").unwrap_err();
        assert_eq!(
            err.to_string().lines().collect::<Vec<_>>(),
            [
                "no user 'zed' in the organisation directory (version 4); apply an \
                 organisation that has them, or leave --responsible out",
                "activity 2 needs role 'chef', which the organisation directory (version 4) \
                 does not have; apply an organisation that has it, or change the activity's \
                 <role>",
                "activity 3 needs team 'red', which the organisation directory (version 4) \
                 does not have; apply an organisation that has it, or change the activity's \
                 <team>",
            ]
        );
        assert!(b.instance(InstanceId(1)).is_none());
        let mut org = staff();
        org.roles.push(mobiwf_xml_schema::Role {
            id: "chef".into(),
            name: String::new(),
        });
        org.teams.push(mobiwf_xml_schema::Team {
            id: "red".into(),
            name: String::new(),
            parent: Some("blue".into()),
        });
        apply_org(&mut b, T0, &org).expect("organisation");
        submit(&mut b, &xml).expect("every name is in the directory now");
    }

    fn notices_tell_the_responsible_user_of_the_start_each_failure_and_the_end_once() {
        let mut b = staffed();
        let applied = submit_for(&mut b, &chain(-1), "ann").expect("submit");
        let name = "instance 1 (workflow 77: test)";
        assert_eq!(
            notices(&applied),
            vec![(
                "peerA".to_owned(),
                "started".to_owned(),
                None,
                format!("{name} started; you are responsible for it")
            )]
        );
        let applied = report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        let noticed = (
            "peerA".to_owned(),
            "failed".to_owned(),
            Some(1),
            "N1 (1) of instance 1 failed: exit status 1".to_owned(),
        );
        assert_eq!(notices(&applied), vec![noticed]);
        let applied = report_failure(&mut b, T0 + 1100, 1, 1, "peerA");
        assert!(notices(&applied).is_empty(), "the same failure again");
        let blocked = ActivityRecord {
            detail: Some("precondition 1 failed".to_owned()),
            ..record(2, ActivityState::Cancelled)
        };
        let applied = partition_result(&mut b, T0 + 2000, 2, vec![blocked.clone()]);
        assert_eq!(
            notices(&applied),
            vec![(
                "peerA".to_owned(),
                "failed".to_owned(),
                Some(2),
                "N2 (2) of instance 1 was cancelled: precondition 1 failed".to_owned()
            )]
        );
        assert!(notices(&partition_result(&mut b, T0 + 2100, 2, vec![blocked])).is_empty());
        let applied = partition_result(&mut b, T0 + 3000, 1, vec![failed(1, "exit status 1")]);
        assert_eq!(state_of(&b), InstanceState::Failed);
        assert_eq!(
            notices(&applied),
            vec![(
                "peerA".to_owned(),
                "ended".to_owned(),
                None,
                format!("{name} failed: N1 (1) on P1 failed: exit status 1")
            )]
        );
        let again = partition_result(&mut b, T0 + 3100, 1, vec![failed(1, "exit status 1")]);
        assert!(notices(&again).is_empty(), "it ended once");
        let mut plain = staffed();
        submit(&mut plain, &chain(-1)).expect("submit");
        let applied = report_failure(&mut plain, T0 + 1000, 1, 1, "peerA");
        assert!(notices(&applied).is_empty(), "no responsible user, no notice");
    }

    fn an_operators_cancel_is_noticed_once_as_the_end() {
        let mut b = staffed();
        submit_for(&mut b, &chain(-1), "bob").expect("submit");
        let applied = b
            .apply(
                T0 + 1000,
                Input::Control {
                    instance: InstanceId(1),
                    action: Control::Cancel,
                },
            )
            .expect("cancel");
        assert_eq!(
            notices(&applied),
            vec![(
                "peerB".to_owned(),
                "ended".to_owned(),
                None,
                "instance 1 (workflow 77: test) was cancelled: cancelled by an operator"
                    .to_owned()
            )]
        );
        let by_operator = ActivityRecord {
            detail: Some(CANCELLED_BY_OPERATOR.to_owned()),
            ..record(1, ActivityState::Cancelled)
        };
        let applied = partition_result(&mut b, T0 + 2000, 1, vec![by_operator]);
        assert!(notices(&applied).is_empty());
        let applied = partition_result(&mut b, T0 + 2000, 2, vec![failed(2, "exit status 3")]);
        assert!(notices(&applied).is_empty(), "failed before the cancel reached it");
    }

    fn a_user_without_a_registered_device_has_notices_recorded_in_the_history_instead() {
        let mut b = staffed();
        let applied = submit_for(&mut b, &chain(-1), "dan").expect("submit");
        assert!(notices(&applied).is_empty());
        let unregistered = "device 'tab' of user 'dan' has not registered with the controller";
        let undelivered = |notice: &str, text: &str| Event::NoticeUndelivered {
            user: "dan".into(),
            notice: notice.to_owned(),
            text: text.to_owned(),
            why: unregistered.to_owned(),
        };
        assert!(story(&b).contains(&undelivered(
            "started",
            "instance 1 (workflow 77: test) started; you are responsible for it"
        )));
        // A failure the controller decides is noticed too.
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert!(notices(&applied).is_empty());
        assert!(story(&b).contains(&undelivered(
            "failed",
            &format!("N1 (1) of instance 1 failed: {WHY}")
        )));
        // Once tab registers, the notices go to it.
        b.apply(T0 + 1500, Input::Register(node("peerD", "tab", &[])))
            .expect("register");
        let blocked = ActivityRecord {
            detail: Some("precondition 1 failed".to_owned()),
            ..record(2, ActivityState::Cancelled)
        };
        let applied = partition_result(&mut b, T0 + 2000, 2, vec![blocked]);
        let kinds: Vec<(String, String)> = notices(&applied)
            .into_iter()
            .map(|(to, kind, _, _)| (to, kind))
            .collect();
        assert_eq!(
            kinds,
            [("peerD", "failed"), ("peerD", "ended")]
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .to_vec()
        );
        // A user without a device at all.
        submit_for(&mut b, &chain(-1), "cid").expect("submit");
        let events = b.history(InstanceId(2)).expect("history");
        assert!(events.iter().any(|e| e.what
            == Event::NoticeUndelivered {
                user: "cid".into(),
                notice: "started".to_owned(),
                text: "instance 2 (workflow 77: test) started; you are responsible for it"
                    .to_owned(),
                why: "user 'cid' has no device in the organisation directory (version 5)"
                    .to_owned(),
            }));
    }

    fn an_organisation_that_leaves_out_a_responsible_user_of_a_live_instance_is_refused() {
        let mut b = staffed();
        submit_for(&mut b, &chain(-1), "ann").expect("submit");
        let mut without_ann = staff();
        without_ann.users.retain(|u| u.id.as_str() != "ann");
        let err = apply_org(&mut b, T0 + 1, &without_ann).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the organisation document leaves out user 'ann', the responsible user of \
             unfinished instance 1; keep them in the document until it is over, or cancel it"
        );
        assert_eq!(b.directory().version, 4, "nothing changed");
        assert_eq!(b.directory().document, org_doc(&staff()));
        b.apply(
            T0 + 2,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Cancel,
            },
        )
        .expect("cancel");
        apply_org(&mut b, T0 + 3, &without_ann).expect("instance 1 is over");
        assert_eq!(b.directory().version, 5);
    }

    fn item_events_go_into_the_history_and_the_items_summary() {
        let mut b = staffed();
        let xml = with_people(&chain(-1), &[(1, role("tech")), (2, role("tech"))]);
        submit(&mut b, &xml).expect("submit");
        let summary = |b: &Book| {
            b.instance(InstanceId(1)).expect("instance").items[&ActivityId(1)].clone()
        };
        let refused_first = ItemEvent::Refused {
            user: "ann".into(),
            action: "complete".to_owned(),
            reason: "ann does not hold it".to_owned(),
        };
        item_events(&mut b, "peerB", 2, T0 + 50, vec![refused_first]);
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert!(inst.items.is_empty(), "a refusal makes no item");
        item_events(&mut b, "peerA", 1, T0 + 100, vec![ItemEvent::Unassigned {
            why: "nobody in role tech".to_owned(),
        }]);
        assert_eq!(summary(&b).unassigned.as_deref(), Some("nobody in role tech"));
        let offered = ItemEvent::Offered { users: users(&["bob", "ann"]) };
        item_events(&mut b, "peerA", 1, T0 + 150, vec![offered]);
        assert_eq!(
            summary(&b),
            ItemSummary {
                offered: users(&["ann", "bob"]),
                last_change_ms: T0 + 150,
                ..ItemSummary::default()
            }
        );
        assert_eq!(activity(&b, 1).state(), ActivityState::Ready, "offered: ready");
        let select = ItemEvent::Acted { user: "ann".into(), action: ItemAction::Select, offline_ms: None };
        let revoke = ItemEvent::Revoked { users: users(&["bob"]) };
        item_events(&mut b, "peerA", 1, T0 + 200, vec![select, revoke]);
        let ann = Holder {
            user: "ann".into(),
            hold: Hold::Selected,
            since_ms: T0 + 200,
            grantor: None,
        };
        assert_eq!(
            summary(&b),
            ItemSummary {
                holders: vec![ann],
                last_change_ms: T0 + 200,
                ..ItemSummary::default()
            }
        );
        assert_eq!(activity(&b, 1).state(), ActivityState::Running, "selected: running");
        let refused = ItemEvent::Refused {
            user: "bob".into(),
            action: "select".to_owned(),
            reason: "no longer available".to_owned(),
        };
        item_events(&mut b, "peerA", 1, T0 + 300, vec![refused]);
        assert_eq!(summary(&b).last_change_ms, T0 + 200, "a refusal changes nothing");
        let delegate = ItemAction::Delegate { to: "bob".into() };
        let delegated = ItemEvent::Acted { user: "ann".into(), action: delegate.clone(), offline_ms: None };
        item_events(&mut b, "peerA", 1, T0 + 400, vec![delegated]);
        let bob = Holder {
            user: "bob".into(),
            hold: Hold::Selected,
            since_ms: T0 + 400,
            grantor: Some("ann".into()),
        };
        assert_eq!(summary(&b).holders, vec![bob]);
        let complete = ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() };
        let done = ItemEvent::Acted { user: "bob".into(), action: complete, offline_ms: None };
        item_events(&mut b, "peerA", 1, T0 + 500, vec![done]);
        assert_eq!(
            summary(&b),
            ItemSummary {
                done_by: users(&["bob"]),
                last_change_ms: T0 + 500,
                ..ItemSummary::default()
            }
        );
        let n1 = l(1);
        let items: Vec<Event> = story(&b)
            .into_iter()
            .filter(|e| !matches!(e, Event::Submitted { .. }))
            .skip(1)
            .collect();
        assert_eq!(
            items,
            vec![
                Event::ItemUnassigned {
                    activity: n1.clone(),
                    why: "nobody in role tech".to_owned(),
                },
                Event::ItemOffered { activity: n1.clone(), users: users(&["bob", "ann"]) },
                Event::ItemActed {
                    activity: n1.clone(),
                    user: "ann".into(),
                    action: ItemAction::Select,
                    offline_ms: None,
                },
                Event::ItemRevoked { activity: n1.clone(), users: users(&["bob"]) },
                Event::ItemRefused {
                    activity: n1.clone(),
                    user: "bob".into(),
                    action: "select".to_owned(),
                    reason: "no longer available".to_owned(),
                },
                Event::ItemActed { activity: n1.clone(), user: "ann".into(), action: delegate, offline_ms: None },
                Event::ItemActed {
                    activity: n1,
                    user: "bob".into(),
                    action: ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() },
                    offline_ms: None,
                },
            ]
        );
        let events = b.history(InstanceId(1)).expect("history");
        assert!(events.iter().skip(2).all(|e| e.activity == Some(ActivityId(1))
            && e.partner == Some(NodeName::new("P1"))));
        // Stored and read back the same.
        let inst = b.instance(InstanceId(1)).expect("instance");
        let json = serde_json::to_string(inst).expect("ser");
        assert!(json.contains(r#""items":{"1":"#), "{json}");
        assert_eq!(&serde_json::from_str::<Instance>(&json).expect("de"), inst);
        // Only the activity's host speaks of it; an unknown instance is ignored.
        let wrong = Input::FromNode {
            peer: NodeId::new("peerB"),
            message: Message::ItemEvents(ItemEvents {
                pass: None,
                instance: InstanceId(1),
                activity: ActivityId(1),
                at_ms: T0,
                events: vec![],
            }),
        };
        let err = b.apply(T0 + 600, wrong).unwrap_err();
        assert!(matches!(err, BookError::NotYours { .. }), "{err}");
        b.take_changes();
        let unknown = Message::ItemEvents(ItemEvents {
            pass: None,
            instance: InstanceId(9),
            activity: ActivityId(1),
            at_ms: T0,
            events: vec![ItemEvent::Revoked { users: users(&["ann"]) }],
        });
        let applied = from_node(&mut b, T0 + 700, "peerA", unknown);
        assert!(applied.effects.is_empty());
        let changes = b.take_changes();
        assert!(changes.instances.is_empty() && changes.history.is_empty());
    }

    fn an_operators_worklist_administration_goes_to_the_items_host_as_a_claim() {
        let mut b = staffed();
        let people = [(1, role("tech")), (2, role("tech")), (9, role("tech"))];
        let xml = with_people(&chain(9), &people);
        submit(&mut b, &xml).expect("submit");
        let applied = admin(&mut b, 1, 2, "ann", ItemAction::Insert).expect("insert");
        assert_eq!(
            sent(&applied),
            vec![("peerB".to_owned(), claim(2, "ann", ItemAction::Insert, 1))]
        );
        let delegate = ItemAction::Delegate { to: "bob".into() };
        let applied = admin(&mut b, 1, 1, "ann", delegate.clone()).expect("delegate");
        assert_eq!(
            sent(&applied),
            vec![("peerA".to_owned(), claim(1, "ann", delegate, 2))]
        );
        let applied = admin(&mut b, 1, 1, "bob", ItemAction::Remove).expect("remove");
        assert_eq!(
            sent(&applied),
            vec![("peerA".to_owned(), claim(1, "bob", ItemAction::Remove, 3))]
        );
        assert!(story(&b).contains(&Event::Administered {
            activity: l(2),
            user: "ann".into(),
            action: ItemAction::Insert,
            request: 1,
        }));
        assert_eq!(b.take_changes().people.map(|p| p.last_request), Some(3));
        let refused = |b: &mut Book, instance, activity, user, action| {
            let err = admin(b, instance, activity, user, action).unwrap_err();
            assert!(b.take_changes().people.is_none(), "nothing changed");
            err.to_string()
        };
        for action in [
            ItemAction::Select,
            ItemAction::Release,
            ItemAction::Lock,
            ItemAction::Unlock,
            ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() },
        ] {
            let verb = action.as_str();
            assert_eq!(
                refused(&mut b, 1, 1, "ann", action),
                format!(
                    "'{verb}' is done by the user on their own device; an operator can \
                     insert, remove, delegate a work item or extend its deadline"
                )
            );
        }
        assert_eq!(refused(&mut b, 7, 1, "ann", ItemAction::Insert), "no instance 7");
        assert_eq!(
            refused(&mut b, 1, 5, "ann", ItemAction::Insert),
            "instance 1 has no activity 5"
        );
        assert_eq!(
            refused(&mut b, 1, 9, "ann", ItemAction::Insert),
            "N9 (9) of instance 1 is not placed on a node yet (a contingency activity \
             waiting for a partner)"
        );
        assert_eq!(
            refused(&mut b, 1, 1, "zed", ItemAction::Insert),
            "no user 'zed' in the organisation directory (version 4); apply an organisation \
             that has them"
        );
        let to_zed = ItemAction::Delegate { to: "zed".into() };
        assert_eq!(
            refused(&mut b, 1, 1, "ann", to_zed),
            "no user 'zed' in the organisation directory (version 4); apply an organisation \
             that has them"
        );
        submit(&mut b, &chain(-1)).expect("a definition without people");
        assert_eq!(
            refused(&mut b, 2, 1, "ann", ItemAction::Insert),
            "N1 (1) of instance 2 names no <role>, <department> or <team>: it is on nobody's \
             worklist"
        );
        from_node(&mut b, T0 + 6000, "peerB", Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(2),
            record: record(2, ActivityState::Succeeded),
        }));
        assert_eq!(
            refused(&mut b, 1, 2, "ann", ItemAction::Insert),
            "N2 (2) of instance 1 is succeeded: its work item is closed"
        );
        b.apply(
            T0 + 7000,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Cancel,
            },
        )
        .expect("cancel");
        assert_eq!(
            refused(&mut b, 1, 1, "ann", ItemAction::Insert),
            "instance 1 is cancelled: its work items are closed"
        );
        let applied = admin(&mut b, 2, 2, "ann", ItemAction::Remove);
        assert!(applied.is_err(), "instance 2 has no people either");
        let mut c = staffed();
        submit(&mut c, &xml).expect("submit");
        admin(&mut c, 1, 1, "ann", ItemAction::Insert).expect("insert");
        assert_eq!(c.last_request, 1, "the request numbers are the book's own");
    }

    fn a_hosts_answer_to_an_operators_claim_is_recorded() {
        let mut b = staffed();
        let xml = with_people(&chain(-1), &[(1, role("tech")), (2, role("tech"))]);
        submit(&mut b, &xml).expect("submit");
        admin(&mut b, 1, 2, "cid", ItemAction::Insert).expect("insert");
        let info = ItemInfo {
            pass: Default::default(),
            instance: InstanceId(1),
            partition: PartitionId(2),
            activity: ActivityId(2),
            name: "N2".to_owned(),
            description: "d".to_owned(),
            kind: "manual".to_owned(),
            priority: 0,
            disconnected: false,
            ready_ms: T0,
            deadline_ms: None,
            host: Location::parse(addr("peerB")).unwrap(),
            due: None,
            application: None,
            paused_ms: None,
        };
        let verdict = Verdict::Forbidden {
            reason: "cid has no registered device".to_owned(),
        };
        let item = |answer| Message::Item(mobiwf_proto::ItemSnapshot {
            info: info.clone(),
            version: 2,
            offered: vec![],
            holders: vec![],
            status: ItemStatus::Open,
            answer,
        });
        let answer = Answer {
            user: "cid".into(),
            request: 1,
            verdict: verdict.clone(),
        };
        let before = story(&b).len();
        from_node(&mut b, T0 + 100, "peerB", item(None));
        assert_eq!(story(&b).len(), before, "no answer: nothing to keep");
        from_node(&mut b, T0 + 200, "peerB", item(Some(answer.clone())));
        assert_eq!(
            story(&b).last(),
            Some(&Event::AdminAnswered {
                activity: l(2),
                user: "cid".into(),
                request: 1,
                verdict,
            })
        );
        let wrong = Input::FromNode {
            peer: NodeId::new("peerA"),
            message: item(Some(answer)),
        };
        assert!(matches!(
            b.apply(T0 + 300, wrong),
            Err(BookError::NotYours { .. })
        ));
    }

    fn deadlines_and_hand_overs_are_recorded_and_the_responsible_user_is_told() {
        let mut b = staffed().with_hour_ms(100);
        let due = People { deadline: Some(30), ..role("tech") };
        let xml = with_people(&chain(-1), &[(1, due), (2, role("tech"))]);
        let applied = submit_for(&mut b, &xml, "ann").expect("submit");
        let deploys: Vec<(Option<UserId>, Option<u64>)> = sent(&applied)
            .into_iter()
            .filter_map(|(_, m)| match m {
                Message::Deploy(mobiwf_proto::Deploy { responsible, hour_ms, .. }) => Some((responsible, hour_ms)),
                _ => None,
            })
            .collect();
        assert!(deploys.contains(&(Some("ann".into()), Some(100))), "{deploys:?}");
        assert!(deploys.contains(&(Some("ann".into()), None)), "no deadline there: {deploys:?}");

        let offered = ItemEvent::Offered { users: users(&["bob"]) };
        item_events(&mut b, "peerA", 1, T0 + 100, vec![offered]);
        let warned = ItemEvent::Deadline { hours_left: 24, told: users(&["bob"]) };
        let handed = ItemEvent::HandedOver { from: users(&["bob"]), to: "ann".into() };
        let message = Message::ItemEvents(ItemEvents {
            pass: None,
            instance: InstanceId(1),
            activity: ActivityId(1),
            at_ms: T0 + 700,
            events: vec![warned, handed],
        });
        let applied = from_node(&mut b, T0 + 700, "peerA", message);
        let kinds: Vec<String> = notices(&applied).into_iter().map(|n| n.1).collect();
        assert_eq!(kinds, ["deadline", "handed_over"]);
        let summary = b.instance(InstanceId(1)).expect("instance").items[&ActivityId(1)].clone();
        assert!(summary.offered.is_empty());
        assert_eq!(summary.holders.iter().map(|h| h.user.as_str()).collect::<Vec<_>>(), ["ann"]);
        let history: Vec<String> = b
            .history(InstanceId(1))
            .unwrap_or_default()
            .iter()
            .map(|e| format!("{:?}", e.what))
            .collect();
        assert!(history.iter().any(|e| e.contains("ItemDeadline")), "{history:#?}");
        assert!(history.iter().any(|e| e.contains("ItemHandedOver")), "{history:#?}");

        // As the holder, her device tells her; at 0 she is told to decide.
        let six = ItemEvent::Deadline { hours_left: 6, told: users(&["ann"]) };
        let zero = ItemEvent::Deadline { hours_left: 0, told: users(&["ann"]) };
        let message = Message::ItemEvents(ItemEvents {
            pass: None,
            instance: InstanceId(1),
            activity: ActivityId(1),
            at_ms: T0 + 2500,
            events: vec![six, zero],
        });
        let applied = from_node(&mut b, T0 + 2500, "peerA", message);
        let kinds: Vec<String> = notices(&applied).into_iter().map(|n| n.1).collect();
        assert_eq!(kinds, ["deadline_reached"]);
    }
}
