//! Semi-automatic items: the select refused on another operating system, which applications
//! run when, what their end means, and what a disconnection takes along.

use mobiwf_proto::{
    DataValue, Datum, Hold, InstanceId, ItemAction, ItemApplication, ItemInfo, ItemStatus, UserId,
    Verdict, Written,
};
use mobiwf_xml_schema::{Application, ApplicationId, DataKind};

use super::*;
use crate::desk::{AppEnd, DeviceProfile};

fn editor(os: Option<&str>, size_kib: u64) -> ItemApplication {
    ItemApplication {
        application: Application {
            id: ApplicationId::new("editor"),
            command: "editor".to_owned(),
            size_kib,
            os: os.map(str::to_owned),
        },
        writes: vec![("reading".to_owned(), DataKind::Number)],
    }
}

/// A semi-automatic item of `instance` whose application is `app`.
fn semi(instance: u64, app: ItemApplication) -> ItemInfo {
    let mut item = info(instance, 1);
    item.kind = "semiAutomatic".to_owned();
    item.application = Some(Box::new(app));
    item
}

/// A linux device N2 with `installed` applications.
fn device(installed: &[&str]) -> Fixture {
    let mut f = Fixture::new();
    f.desk.set_device(DeviceProfile {
        os: "linux".to_owned(),
        installed: installed.iter().map(|n| ApplicationId::new(*n)).collect(),
    });
    f
}

fn copied(f: &mut Fixture, instance: u64) {
    let data = vec![Datum {
        name: "site".to_owned(),
        value: DataValue::String("north".to_owned()),
        by: mobiwf_proto::Writer::Input,
        at_us: 0,
        pass: Default::default(),
    }];
    f.apply(DeskInput::Copied {
        instance: InstanceId(instance),
        activity: ActivityId(1),
        data,
        held: Vec::new(),
    })
    .unwrap();
}

fn selected(f: &mut Fixture, item: &ItemInfo, version: u64) {
    let held = holder("alice", Hold::Selected, 5, None);
    f.item(snap(item, version, &[], vec![held], ItemStatus::Open));
}

fn ended(item: &ItemInfo, end: AppEnd) -> DeskInput {
    DeskInput::ApplicationEnded {
        key: (item.instance, item.activity),
        user: UserId::new("alice"),
        end,
    }
}

#[test]
fn a_select_is_refused_here_when_the_application_is_for_another_os() {
    let mut f = device(&[]);
    let mut mac = semi(1, editor(Some("macos"), 10));
    mac.disconnected = true;
    f.item(snap(&mac, 1, &["alice"], vec![], ItemStatus::Open));
    let applied = f.apply(claim("alice", &mac, ItemAction::Select)).unwrap();
    let Some(Verdict::Invalid { reason }) = applied.verdict() else {
        panic!("{applied:?}");
    };
    assert!(
        reason.contains("runs on macos, and this device runs linux"),
        "{reason}"
    );
    assert!(applied.sent_to().is_none(), "nothing goes to the host");
    // Its own os, or none said, goes to the host; so does a lock (it starts nothing).
    let linux = semi(2, editor(Some("linux"), 10));
    let any = semi(3, editor(None, 10));
    for item in [&linux, &any] {
        f.item(snap(item, 1, &["alice"], vec![], ItemStatus::Open));
        let applied = f.apply(claim("alice", item, ItemAction::Select)).unwrap();
        assert!(applied.sent_to().is_some(), "{applied:?}");
    }
    let applied = f.apply(claim("alice", &mac, ItemAction::Lock)).unwrap();
    assert!(applied.sent_to().is_some(), "{applied:?}");
}

#[test]
fn an_application_runs_once_its_item_is_selected_here_and_its_inputs_are_copied() {
    let mut f = device(&[]);
    let item = semi(1, editor(None, 10));
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    copied(&mut f, 1);
    assert!(f.desk.to_launch().is_empty(), "only offered");
    selected(&mut f, &item, 2);
    let launch = f.desk.to_launch();
    assert_eq!(launch.len(), 1);
    assert_eq!(launch[0].user.as_str(), "alice");
    assert_eq!(launch[0].application.application.id.as_str(), "editor");
    // Not before its inputs are here.
    let mut g = device(&[]);
    selected(&mut g, &item, 1);
    assert!(g.desk.to_launch().is_empty());
    // A paused item starts nothing until it is resumed; its application stopped by the
    // pause runs again then (its end while paused counts for nothing).
    let mut paused = item.clone();
    paused.paused_ms = Some(5);
    selected(&mut f, &paused, 3);
    assert!(f.desk.to_launch().is_empty(), "paused");
    let stopped = f
        .apply(ended(&item, AppEnd::Failed("killed".to_owned())))
        .unwrap();
    assert!(stopped.sent_to().is_none(), "{stopped:?}");
    selected(&mut f, &item, 4);
    assert_eq!(f.desk.to_launch().len(), 1, "resumed");
    // A new snapshot keeps what the desk knows; the item done by hand runs nothing.
    f.item(snap(&item, 5, &[], vec![], done("alice")));
    assert!(f.desk.to_launch().is_empty());
}

#[test]
fn exit_0_completes_the_item_as_the_user_with_what_it_wrote_once() {
    let mut f = device(&[]);
    let item = semi(1, editor(None, 10));
    selected(&mut f, &item, 1);
    copied(&mut f, 1);
    let mut data = Written::default();
    data.values
        .insert("reading".to_owned(), DataValue::Number("42".to_owned()));
    let applied = f
        .apply(ended(&item, AppEnd::Succeeded(data.clone())))
        .unwrap();
    let [DeskEffect::Send { claim, .. }] = applied.effects.as_slice() else {
        panic!("{applied:?}");
    };
    assert_eq!(claim.user.as_str(), "alice");
    let ItemAction::Complete {
        succeeded: true,
        detail: Some(detail),
        data: sent,
        ..
    } = &claim.action
    else {
        panic!("{claim:?}");
    };
    assert_eq!(sent, &data);
    assert_eq!(detail, "completed by application editor");
    // Under way, then answered: it never runs again, also after the host refused it.
    assert!(f.desk.to_launch().is_empty());
    let request = claim.request;
    let still = snap(
        &item,
        2,
        &[],
        vec![holder("alice", Hold::Selected, 5, None)],
        ItemStatus::Open,
    );
    let refused = Verdict::Invalid {
        reason: "reading is not a number".to_owned(),
    };
    f.item(answering(still, "alice", request, refused));
    assert!(f.desk.to_launch().is_empty());
    let again = f.apply(ended(&item, AppEnd::Succeeded(data))).unwrap();
    assert!(again.effects.is_empty(), "{again:?}");
}

#[test]
fn another_end_tells_the_user_and_leaves_the_item_selected() {
    let mut f = device(&[]);
    let item = semi(1, editor(None, 10));
    selected(&mut f, &item, 1);
    copied(&mut f, 1);
    let applied = f
        .apply(ended(
            &item,
            AppEnd::Failed("exited with status 3".to_owned()),
        ))
        .unwrap();
    assert!(applied.effects.is_empty());
    let told: Vec<_> = f
        .told("alice")
        .into_iter()
        .filter(|(kind, _)| kind == "application_failed")
        .collect();
    assert_eq!(told.len(), 1);
    assert!(
        told[0].1.contains("application editor of activity 1"),
        "{told:?}"
    );
    assert!(told[0].1.contains("exited with status 3"), "{told:?}");
    assert!(f.desk.to_launch().is_empty());
    let held = f.desk.item(InstanceId(1), ActivityId(1)).unwrap();
    assert_eq!(held.holder("alice").unwrap().hold, Hold::Selected);
    // She completes it by hand: that goes to the host as any completion.
    let applied = f.apply(claim("alice", &item, completion())).unwrap();
    assert!(applied.sent_to().is_some());
}

#[test]
fn an_end_after_the_user_let_go_of_the_item_is_ignored() {
    let mut f = device(&[]);
    let item = semi(1, editor(None, 10));
    selected(&mut f, &item, 1);
    f.item(snap(&item, 2, &["alice"], vec![], ItemStatus::Open));
    let applied = f
        .apply(ended(&item, AppEnd::Succeeded(Written::default())))
        .unwrap();
    assert!(applied.effects.is_empty());
    assert!(
        f.told("alice")
            .iter()
            .all(|(kind, _)| kind != "application_failed")
    );
    let failed = f
        .apply(ended(&item, AppEnd::Failed("killed".to_owned())))
        .unwrap();
    assert!(failed.effects.is_empty());
    assert!(
        f.told("alice")
            .iter()
            .all(|(kind, _)| kind != "application_failed")
    );
}

#[test]
fn a_disconnection_takes_the_applications_of_locked_items_not_installed() {
    let mut f = device(&["viewer"]);
    let mut viewer = editor(None, 700);
    viewer.application.id = ApplicationId::new("viewer");
    let locked = |i: &ItemInfo, f: &mut Fixture| {
        let held = holder("alice", Hold::Locked, 5, None);
        f.item(snap(i, 1, &[], vec![held], ItemStatus::Open));
    };
    let with = |mut i: ItemInfo| {
        i.disconnected = true;
        i
    };
    locked(&with(semi(1, editor(None, 2048))), &mut f);
    locked(&with(semi(2, editor(None, 2048))), &mut f);
    locked(&with(semi(3, viewer)), &mut f);
    locked(&with(info(4, 1)), &mut f);
    // Offered only, or someone else's: not taken.
    let other = with(semi(5, editor(None, 9)));
    f.item(snap(&other, 1, &["alice"], vec![], ItemStatus::Open));
    let take = f.desk.applications_to_take("alice");
    assert_eq!(take.len(), 1, "{take:?}");
    assert_eq!(take[0].name.as_str(), "editor");
    assert_eq!(take[0].size_kib, 2048);
    assert!(f.desk.applications_to_take("bob").is_empty());
}
