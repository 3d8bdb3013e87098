//! Instance data: what an activity writes is kept per instance, carried to the partners whose
//! activities read it (only the names their adjacents carry), and given to the commands that read
//! it; of two writes the later wins whatever the order they arrive in; a file not held yet is
//! fetched while its readers stay synchronizing; what a person or a command writes is checked
//! against `<writes>` and the declared types.

use super::*;
use mobiwf_proto::{DataValue, Datum, FileRef, Location, Writer};
use mobiwf_xml_schema::DataKind;

const DECLS: &str = r#"<data><value name="reading" type="number"/><value name="note" type="string"/><file name="photo"/></data>"#;

/// 1 (manual, writes reading and note) → 2 (command, reads reading, writes photo) → remote 3
/// on /remote/b, which reads photo and reading (its adjacent carries both, not note).
fn chain(instance: u64) -> String {
    format!(
        r#"<workflow id="{instance}"><activities>
        <activity id="1"><nameActivity>A</nameActivity><kind>manual</kind>
          <writes>reading note</writes>
          <adjacents><adjacent id="2"><ip>local</ip></adjacent></adjacents></activity>
        <activity id="2"><nameActivity>B</nameActivity><responseImmediate>1</responseImmediate>
          <command>measure</command><reads>reading</reads><writes>photo</writes>
          <preconditions><precondition id="1"><local>1</local></precondition></preconditions>
          <adjacents><adjacent id="3"><ip>/remote/b</ip><carries>reading photo</carries></adjacent></adjacents></activity>
        </activities>{DECLS}</workflow>"#
    )
}

/// Remote 1 writes; 2 here reads reading and photo, and is a command.
fn reader(instance: u64) -> String {
    format!(
        r#"<workflow id="{instance}"><activities>
        <activity id="2"><nameActivity>C</nameActivity><command>use</command>
          <reads>reading photo</reads>
          <preconditions><precondition id="1"><local>0</local></precondition></preconditions>
        </activity></activities>{DECLS}</workflow>"#
    )
}

fn photo() -> FileRef {
    FileRef {
        sha256: "ab".repeat(32),
        size: 5_000_000,
    }
}

fn datum(name: &str, value: DataValue, by: u64, at_us: u64) -> Datum {
    Datum {
        name: name.into(),
        value,
        by: Writer::Activity(ActivityId(by)),
        at_us,
        pass: Default::default(),
    }
}

fn number(n: &str) -> DataValue {
    DataValue::Number(n.into())
}

fn person_ends(
    e: &mut Engine,
    instance: u64,
    written: Vec<(&str, DataValue)>,
) -> Result<Vec<Effect>, Refusal> {
    e.apply(3000, finished((instance, 1), Finisher::Person, written))
}

/// Activity `activity` of `instance` succeeded, by `by`, writing `written`.
fn finished(
    (instance, activity): (u64, u64),
    by: Finisher,
    written: Vec<(&str, DataValue)>,
) -> Input {
    Input::Finished(crate::Ended {
        instance: InstanceId(instance),
        activity: ActivityId(activity),
        finish: crate::Finish::Succeeded {
            detail: None,
            flag: None,
        },
        by,
        attempt: 0,
        written: written
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect(),
    })
}

/// Activity `activity`'s command succeeded, leaving `written`.
fn command_wrote(
    e: &mut Engine,
    now_ms: u64,
    (instance, activity): (u64, u64),
    written: Vec<(&str, DataValue)>,
) -> Vec<Effect> {
    at(
        e,
        now_ms,
        finished((instance, activity), Finisher::Command, written),
    )
}

/// What the notification to a partner carries.
fn carried_in(effects: &[Effect]) -> Vec<Datum> {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Send {
                message: Message::Notify(mobiwf_proto::Notify { data, .. }),
                ..
            } => Some(data.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn notified_with(e: &mut Engine, now_ms: u64, instance: u64, carried: Carried) -> Vec<Effect> {
    let input = Input::Notified(crate::Notified {
        from: None,
        notify: mobiwf_proto::Notify {
            pass: Default::default(),
            rerun: 0,
            instance: InstanceId(instance),
            activity: ActivityId(1),
            outcome: Outcome::Succeeded,
            entered: StateSet::EMPTY,
            flag: None,
            routed: None,
            data: carried.data,
            files: Vec::new(),
            holder: None,
        },
        missing: carried.missing,
    });
    at(e, now_ms, input)
}

scenarios! {
    fn a_persons_values_reach_the_command_and_the_partner_gets_only_what_it_reads() {
        let mut e = Engine::new();
        deploy(&mut e, 1, 1, &chain(1));
        let fx = person_ends(
            &mut e,
            1,
            vec![("reading", DataValue::String("42".into())), ("note", DataValue::String("ok".into()))],
        )
        .expect("completed");
        let Some(Effect::Execute { reads, writes, .. }) =
            fx.iter().find(|f| matches!(f, Effect::Execute { .. }))
        else {
            panic!("no execute: {fx:?}");
        };
        // The person's text for a number name is kept as a number, stamped with the end.
        assert_eq!(reads, &vec![datum("reading", number("42"), 1, 3_000_000)]);
        assert_eq!(writes, &vec![("photo".to_owned(), DataKind::File)]);

        let report = FileRef { sha256: "cd".repeat(32), size: 10 };
        let fx = command_wrote(&mut e, 4000, (1, 2), vec![("photo", DataValue::File(report.clone()))]);
        let carried = carried_in(&fx);
        assert_eq!(
            carried,
            vec![
                datum("photo", DataValue::File(report), 2, 4_000_000),
                datum("reading", number("42"), 1, 3_000_000),
            ],
            "the adjacent carries photo and reading, never note"
        );
        let holder = fx.iter().find_map(|f| match f {
            Effect::Send { message: Message::Notify(mobiwf_proto::Notify { holder, .. }), .. } => Some(holder.clone()),
            _ => None,
        });
        assert_eq!(holder, Some(Some(Location::default())), "a file names its holder (this node)");
        // Each instance its own: another instance knows nothing.
        assert!(e.data(InstanceId(2)).is_empty());
        assert_eq!(e.data(InstanceId(1)).len(), 3);
    }

    fn data_free_notifications_carry_nothing() {
        let mut e = Engine::new();
        deploy(&mut e, 1, 1, &chain(1));
        person_ends(&mut e, 1, Vec::new()).expect("completed");
        let fx = ended(&mut e, 4000, 1, 2, true, 0);
        let notify = fx.iter().find_map(|f| match f {
            Effect::Send { message: m @ Message::Notify(_), .. } => Some(m.clone()),
            _ => None,
        });
        let json = serde_json::to_string(&notify.expect("a notification")).expect("json");
        assert!(!json.contains("data") && !json.contains("holder") && !json.contains("files"), "{json}");
    }

    fn the_later_write_wins_whatever_the_order_of_arrival() {
        let mut e = Engine::new();
        let newer = datum("reading", number("2"), 1, 20);
        let older = datum("reading", number("1"), 5, 10);
        let input = |d: &Datum| Carried { data: vec![d.clone()], missing: Vec::new() };
        notified_with(&mut e, 1000, 1, input(&newer));
        // The older write comes later with another activity's word: it loses.
        let late = { let carried: crate::Carried = input(&older); Input::Notified(crate::Notified { from: None, notify: mobiwf_proto::Notify { pass: Default::default(), rerun: 0, instance: InstanceId(1), activity: ActivityId(5), outcome: Outcome::Succeeded, entered: StateSet::EMPTY, flag: None, routed: None, data: carried.data, files: Vec::new(), holder: None }, missing: carried.missing }) };
        at(&mut e, 1002, late);
        assert_eq!(e.data(InstanceId(1)), vec![newer]);
    }

    fn a_reader_waits_synchronizing_until_its_file_is_fetched() {
        let mut e = Engine::new();
        deploy(&mut e, 7, 2, &reader(7));
        let carried = Carried {
            data: vec![
                datum("photo", DataValue::File(photo()), 1, 10),
                datum("reading", number("42"), 1, 10),
            ],
            missing: vec![Missing { file: photo(), holder: Location::lenient("/remote/a") }],
        };
        let fx = notified_with(&mut e, 2000, 7, carried);
        assert_eq!(
            fx.iter().filter(|f| matches!(f, Effect::Fetch { .. })).collect::<Vec<_>>(),
            vec![&Effect::Fetch { instance: InstanceId(7), file: photo(), from: Location::lenient("/remote/a") }]
        );
        assert!(executes(&fx).is_empty(), "{fx:?}");
        assert_eq!(state(&e, 7, 2), ActivityState::Synchronizing);
        // A restart asks for the fetch again.
        let restored = Engine::restore(e.runs().cloned().collect(), vec![(InstanceId(7), e.known(InstanceId(7)).cloned().expect("known"))]);
        assert!(restored.resume().iter().any(|f| matches!(f, Effect::Fetch { .. })));

        let fx = at(&mut e, 3000, Input::Fetched { instance: InstanceId(7), file: photo() });
        assert_eq!(executes(&fx), vec![(2, 0)]);
        assert_eq!(state(&e, 7, 2), ActivityState::Running);
        assert!(e.known(InstanceId(7)).expect("known").missing.is_empty());
    }

    fn a_reader_of_a_task_class_starts_once_granted_and_its_file_is_here_in_either_order() {
        for grant_first in [true, false] {
            let mut e = Engine::new();
            let d = reader(7).replace("<command>use</command>", "<command>use</command><class>press</class>");
            deploy(&mut e, 7, 2, &d);
            let carried = Carried {
                data: vec![datum("photo", DataValue::File(photo()), 1, 10)],
                missing: vec![Missing { file: photo(), holder: Location::lenient("/remote/a") }],
            };
            let fx = notified_with(&mut e, 2000, 7, carried);
            assert!(fx.iter().any(|f| matches!(f, Effect::Send { message: Message::BeginSync(_), .. })), "{fx:?}");
            let ticket = mobiwf_proto::SyncTicket { instance: InstanceId(7), partition: PartitionId(2), activity: ActivityId(2), round: 0 };
            let grant = Input::SyncGranted(mobiwf_proto::SyncGranted { ticket, lease_ms: 5000 });
            let fetched = Input::Fetched { instance: InstanceId(7), file: photo() };
            let (first, second) = if grant_first { (grant, fetched) } else { (fetched, grant) };
            assert!(executes(&at(&mut e, 3000, first)).is_empty());
            assert_eq!(state(&e, 7, 2), ActivityState::Synchronizing);
            assert_eq!(executes(&at(&mut e, 3100, second)), vec![(2, 0)]);
        }
    }

    fn a_reader_waiting_for_its_file_is_cancelled_or_withdrawn_like_any_other() {
        for (cancel, ends) in [(true, ActivityState::Cancelled), (false, ActivityState::Failed)] {
            let mut e = Engine::new();
            deploy(&mut e, 7, 2, &reader(7));
            let carried = Carried {
                data: vec![datum("photo", DataValue::File(photo()), 1, 10)],
                missing: vec![Missing { file: photo(), holder: Location::lenient("/remote/a") }],
            };
            notified_with(&mut e, 2000, 7, carried);
            assert_eq!(state(&e, 7, 2), ActivityState::Synchronizing);
            let fx = if cancel {
                control(&mut e, 3000, 7, Control::Cancel)
            } else {
                withdraw(&mut e, 3000, 7, &[2], "its partner did not answer")
            };
            assert_eq!(state(&e, 7, 2), ends, "{fx:?}");
            // The file that comes late starts nothing.
            let fx = at(&mut e, 4000, Input::Fetched { instance: InstanceId(7), file: photo() });
            assert!(executes(&fx).is_empty(), "{fx:?}");
        }
    }

    fn what_a_person_writes_is_checked_and_a_refusal_changes_nothing() {
        let mut e = Engine::new();
        deploy(&mut e, 1, 1, &chain(1));
        for (written, says) in [
            (vec![("reading", DataValue::String("forty".into()))], "is a number"),
            (vec![("photo", DataValue::String("x".into()))], "does not write `photo`"),
            (vec![("nope", DataValue::String("x".into()))], "does not write `nope`"),
            (vec![("note", DataValue::File(photo()))], "not a file"),
        ] {
            let refusal = person_ends(&mut e, 1, written).expect_err("refused");
            assert!(refusal.to_string().contains(says), "{refusal}");
            // The person's input is wrong, not the moment: the API answers 400, not 409.
            assert!(
                matches!(refusal, Refusal::InvalidCompletion { .. }),
                "{refusal:?}"
            );
            assert_eq!(state(&e, 1, 1), ActivityState::Ready);
        }
        assert!(e.data(InstanceId(1)).is_empty());
    }

    fn a_persons_completion_writes_its_values_when_the_item_ends_the_copy_done_last_winning() {
        use super::people::{directory, host, location_of, node_of, tech, three, verdict, with_extensions};
        use mobiwf_proto::{ItemAction, Verdict};
        let doc = format!(
            r#"<workflow id="1"><activities>
            <activity id="1"><nameActivity>A</nameActivity><kind>manual</kind>
              <writes>reading photo</writes></activity>
            </activities>{DECLS}</workflow>"#
        );
        let doc = with_extensions(&doc, &[(1, &tech(mobiwf_xml_schema::Method::All))]);
        let mut e = host(directory(1, three()[..2].to_vec()));
        deploy(&mut e, 1, 1, &doc);
        let act = |e: &mut Engine, now_ms, user: &str, action, missing: Vec<crate::data::Missing>| {
            let device = if user == "alice" { "N1" } else { "N2" };
            let input = Input::Claim(crate::Claimed { claim: mobiwf_proto::Claim { instance: InstanceId(1), activity: ActivityId(1), user: user.into(), action, request: now_ms, offline_ms: None, offered_ms: None }, from: Some(node_of(device)), missing });
            e.apply(now_ms, input).expect("claim taken")
        };
        let complete = |values: Vec<(&str, DataValue)>| ItemAction::Complete {
            succeeded: true,
            detail: None,
            flag: None,
            data: mobiwf_proto::data::Written {
                values: values.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
                ..Default::default()
            },
        };
        act(&mut e, 2000, "alice", ItemAction::Select, Vec::new());
        act(&mut e, 2000, "bob", ItemAction::Select, Vec::new());
        let fx = act(&mut e, 2100, "alice", complete(vec![("reading", DataValue::String("forty".into()))]), Vec::new());
        assert!(
            matches!(verdict(&fx), Some(Verdict::Invalid { reason }) if reason.contains("is a number")),
            "{:?}",
            verdict(&fx)
        );
        let fx = act(&mut e, 2200, "alice", complete(vec![("reading", DataValue::String("41".into()))]), Vec::new());
        assert_eq!(verdict(&fx), Some(Verdict::Done));
        assert!(e.data(InstanceId(1)).is_empty(), "written when the item ends");
        // Bob's photo did not come with his claim: it is fetched from his device.
        let missing = crate::data::Missing { file: photo(), holder: location_of("N2") };
        let values = vec![("reading", DataValue::String("42".into())), ("photo", DataValue::File(photo()))];
        let fx = act(&mut e, 2300, "bob", complete(values), vec![missing]);
        assert_eq!(state(&e, 1, 1), ActivityState::Succeeded);
        let fetched: Vec<_> = fx
            .iter()
            .filter_map(|f| match f {
                Effect::Fetch { file, from, .. } => Some((file.clone(), from.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(fetched, [(photo(), location_of("N2"))]);
        let data = e.data(InstanceId(1));
        let values: Vec<_> = data.iter().map(|d| (d.name.as_str(), d.value.clone())).collect();
        assert_eq!(values, [("photo", DataValue::File(photo())), ("reading", number("42"))]);
    }

    fn an_instance_holds_at_most_max_instance_value_bytes_of_values() {
        use mobiwf_proto::data::{MAX_INSTANCE_VALUE_BYTES, MAX_VALUE_BYTES};
        let mut e = Engine::new();
        deploy(&mut e, 1, 1, &chain(1));
        let full = MAX_INSTANCE_VALUE_BYTES / MAX_VALUE_BYTES;
        let data = (0..full)
            .map(|i| datum(&format!("v{i}"), DataValue::String("x".repeat(MAX_VALUE_BYTES)), 9, 1))
            .collect();
        let input = { let carried: crate::Carried = Carried { data, missing: Vec::new() }; Input::Notified(crate::Notified { from: None, notify: mobiwf_proto::Notify { pass: Default::default(), rerun: 0, instance: InstanceId(1), activity: ActivityId(9), outcome: Outcome::Succeeded, entered: StateSet::EMPTY, flag: None, routed: None, data: carried.data, files: Vec::new(), holder: None }, missing: carried.missing }) };
        at(&mut e, 2000, input);
        let refusal = person_ends(&mut e, 1, vec![("note", DataValue::String("one more".into()))])
            .expect_err("over the limit");
        assert!(refusal.to_string().contains("MAX_INSTANCE_VALUE_BYTES"), "{refusal}");
        assert_eq!(state(&e, 1, 1), ActivityState::Ready);
    }

    fn a_compensation_finds_what_its_activity_read_and_wrote() {
        let mut e = Engine::new();
        let doc = chain(1).replace(
            "<command>measure</command>",
            "<command>measure</command><compensation>undo</compensation>",
        );
        deploy(&mut e, 1, 1, &doc);
        person_ends(&mut e, 1, vec![("reading", DataValue::String("42".into()))]).expect("done");
        let report = FileRef { sha256: "cd".repeat(32), size: 10 };
        command_wrote(&mut e, 4000, (1, 2), vec![("photo", DataValue::File(report.clone()))]);
        let input = Input::Compensate(mobiwf_proto::Compensate { instance: InstanceId(1), partition: PartitionId(1), activity: ActivityId(2) });
        let fx = at(&mut e, 5000, input);
        let Some(Effect::Compensate { reads, .. }) =
            fx.iter().find(|f| matches!(f, Effect::Compensate { .. }))
        else {
            panic!("no compensation: {fx:?}");
        };
        let names: Vec<&str> = reads.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["photo", "reading"]);
    }

    fn a_command_that_writes_a_bad_number_fails() {
        let mut e = Engine::new();
        let doc = format!(
            r#"<workflow id="3"><activities><activity id="1"><nameActivity>A</nameActivity>
            <command>m</command><writes>reading</writes></activity></activities>{DECLS}</workflow>"#
        );
        deploy(&mut e, 3, 1, &doc);
        command_wrote(&mut e, 2000, (3, 1), vec![("reading", DataValue::Number("4 2".into()))]);
        assert_eq!(state(&e, 3, 1), ActivityState::Failed);
        assert!(detail(&e, 3, 1).contains("its command wrote data it may not"), "{}", detail(&e, 3, 1));
        assert!(e.data(InstanceId(3)).is_empty());
    }
}
