//! What the daemon writes: a device killed and restarted shows the same worklists, notices
//! and claims under way.

use mobiwf_proto::{ItemAction, ItemStatus, Verdict};

use super::*;
use crate::desk::{DeskRestoreError, Order, PendingClaim};

fn worklists(desk: &Desk) -> Vec<Vec<crate::desk::Entry>> {
    ["alice", "bob", "dave"]
        .iter()
        .flat_map(|u| Order::ALL.map(|o| desk.worklist(u, o)))
        .collect()
}

#[test]
fn a_device_killed_and_restarted_shows_the_same_worklist() {
    let mut f = Fixture::new();
    let (a, b, c) = (info(1, 1), info(2, 1), info(3, 7));
    f.item(snap(&a, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    f.item(snap(&b, 1, &["bob"], vec![], ItemStatus::Open));
    f.item(snap(&c, 1, &["alice"], vec![], ItemStatus::Open));
    let request = f.claim("alice", &a, ItemAction::Select);
    f.item(answering(
        snap(&a, 2, &[], selected("alice", 9), ItemStatus::Open),
        "alice",
        request,
        Verdict::Done,
    ));
    f.apply(claim("bob", &b, ItemAction::Select)).unwrap();
    f.apply(claim("alice", &c, ItemAction::Select)).unwrap();
    f.item(snap(&c, 2, &[], vec![], done("carol")));
    f.apply(DeskInput::Notice(notice("dave", 2, "instance 2 failed", 3)))
        .unwrap();

    // Only what the store holds survives the kill.
    let restarted = Desk::restore(f.store.clone()).unwrap();
    assert_eq!(worklists(&restarted), worklists(&f.desk));
    assert!(!worklists(&f.desk).iter().all(Vec::is_empty));
    for user in ["alice", "bob", "dave"] {
        assert_eq!(restarted.notices(user), f.desk.notices(user));
        assert!(!f.desk.notices(user).is_empty(), "{user}");
    }
    let pending: Vec<&PendingClaim> = f.desk.pending().collect();
    assert_eq!(restarted.pending().collect::<Vec<_>>(), pending);
    assert_eq!(pending.len(), 2);
    assert_eq!(restarted, f.desk);

    // And it goes on where it stopped: the next request number, the next notice.
    let mut live = f.desk.clone();
    let mut again = restarted;
    let next = claim("bob", &a, ItemAction::Select);
    let (x, y) = (
        live.apply(1, &f.dir, &f.me, next.clone()).unwrap(),
        again.apply(1, &f.dir, &f.me, next).unwrap(),
    );
    assert_eq!(x, y);
    assert_eq!(live.take_changes().unwrap(), again.take_changes().unwrap());
}

#[test]
fn nothing_changed_is_nothing_to_write() {
    let mut f = Fixture::new();
    assert!(f.desk.take_changes().unwrap().is_empty());
    f.item(snap(&info(1, 1), 2, &["alice"], vec![], ItemStatus::Open));
    assert!(f.desk.take_changes().unwrap().is_empty());
    // An ignored snapshot writes nothing either.
    f.desk
        .apply(
            1,
            &f.dir,
            &f.me,
            DeskInput::Item(Box::new(snap(
                &info(1, 1),
                1,
                &[],
                vec![],
                ItemStatus::Open,
            ))),
        )
        .unwrap();
    assert!(f.desk.take_changes().unwrap().is_empty());
}

#[test]
fn the_store_keys_name_what_they_hold() {
    let mut f = Fixture::new();
    f.item(snap(&info(12, 3), 1, &["alice"], vec![], ItemStatus::Open));
    let keys: Vec<&str> = f.store.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "desk/item/12/3",
            "desk/meta",
            "desk/notice/00000000000000000001"
        ]
    );
}

#[test]
fn a_damaged_or_foreign_entry_is_refused_with_its_key() {
    let mut f = Fixture::new();
    f.item(snap(&info(12, 3), 1, &["alice"], vec![], ItemStatus::Open));
    let mut damaged = f.store.clone();
    damaged.insert("desk/item/12/3".to_owned(), b"{".to_vec());
    let err: DeskRestoreError = Desk::restore(damaged).unwrap_err();
    assert_eq!(err.key, "desk/item/12/3");
    assert!(err.to_string().contains("damaged"), "{err}");

    let mut moved = f.store.clone();
    let value = moved.remove("desk/item/12/3").unwrap();
    moved.insert("desk/item/12/4".to_owned(), value);
    let err = Desk::restore(moved).unwrap_err();
    assert!(err.reason.contains("activity 3 of instance 12"), "{err}");

    let mut foreign = f.store.clone();
    foreign.insert("desk/other".to_owned(), b"1".to_vec());
    assert_eq!(Desk::restore(foreign).unwrap_err().key, "desk/other");
}

#[test]
fn changes_are_empty_only_without_puts_and_deletes() {
    use crate::desk::DeskChanges;
    assert!(DeskChanges::default().is_empty());
    let put = DeskChanges {
        puts: vec![("desk/meta".to_owned(), b"{}".to_vec())],
        ..DeskChanges::default()
    };
    assert!(!put.is_empty());
    let delete = DeskChanges {
        deletes: vec!["desk/notice/1".to_owned()],
        ..DeskChanges::default()
    };
    assert!(!delete.is_empty());
}

/// A host's address is stored as its text: what older versions wrote loads whatever the text
/// (the empty text, an address naming no peer), and is written back byte for byte.
#[test]
fn host_addresses_older_versions_stored_load_as_they_were() {
    const ITEM: &str = r#"{"info":{"instance":4,"partition":1,"activity":2,"name":"Inspect 4.2","description":"look at the pump","kind":"manual","priority":0,"disconnected":false,"ready_ms":1000,"deadline_ms":null,"host":""},"version":1,"offered":["alice"],"holders":[],"status":{"status":"open"}}"#;
    const CLAIM: &str = r#"{"request":1,"user":"alice","instance":4,"activity":2,"action":{"action":"select"},"host":"/ip4/10.0.0.9/tcp/4001","sent_ms":12000}"#;
    let meta = format!(
        r#"{{"next_request":2,"next_notice":2,"pending":[{CLAIM}],"presence_seq":0,"offsets":{{"12D3KooWHost":-5}}}}"#
    );
    let stored = [
        ("desk/item/4/2".to_owned(), ITEM.as_bytes().to_vec()),
        ("desk/meta".to_owned(), meta.into_bytes()),
    ];
    let desk = Desk::restore(stored).unwrap();
    let item = desk.item(InstanceId(4), ActivityId(2)).unwrap();
    assert_eq!((item.info.host.as_str(), item.info.host.peer()), ("", None));
    assert_eq!(serde_json::to_string(item).unwrap(), ITEM);
    let pending: Vec<&PendingClaim> = desk.pending().collect();
    assert_eq!(pending[0].host.as_str(), "/ip4/10.0.0.9/tcp/4001");
    assert_eq!(pending[0].host.peer(), None);
    assert_eq!(serde_json::to_string(pending[0]).unwrap(), CLAIM);
}
