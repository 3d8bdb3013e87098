//! The work item copy's lifecycle against its table: the scenarios take every allowed
//! transition (checked with the activity's, in `coverage`), the transition function allows
//! exactly the table, final copies take nothing, and `docs/lifecycles.md` shows the table.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{Hold, Holder, UserId};

use crate::ItemCopy;
use crate::coverage;
use crate::item_lifecycle::{
    Completion, CopyEvent, CopyLife, EventKind, StateKind, TRANSITIONS, Taken, table_markdown,
    transition,
};

/// Every transition of the table was taken by the scenarios, and none outside it.
pub(super) fn check(taken: &BTreeSet<Taken>) {
    let table: BTreeSet<_> = TRANSITIONS.iter().copied().collect();
    let never: Vec<_> = table.difference(taken).collect();
    let outside: Vec<_> = taken.difference(&table).collect();
    assert!(never.is_empty(), "no scenario takes the copy's {never:?}");
    assert!(
        outside.is_empty(),
        "copies took transitions outside the table: {outside:?}"
    );
}

fn user(name: &str) -> UserId {
    UserId::from(name.to_owned())
}

fn holder(name: &str) -> Holder {
    Holder {
        user: user(name),
        hold: Hold::Selected,
        since_ms: 5,
        grantor: None,
    }
}

fn users(names: &[&str]) -> BTreeSet<UserId> {
    names.iter().map(|n| user(n)).collect()
}

fn completion() -> Completion {
    Completion {
        finish: crate::Finish::Succeeded {
            detail: None,
            flag: None,
        },
        written: BTreeMap::new(),
        ended_ms: 9,
    }
}

/// One copy in each state: offered to alice and bob; held by alice; done by alice; closed.
fn copies() -> Vec<ItemCopy> {
    let offered = ItemCopy::offered_to(users(&["alice", "bob"]), 1);
    let mut held = offered.clone();
    held.apply(CopyEvent::Take {
        holder: holder("alice"),
    })
    .expect("take");
    let mut done = held.clone();
    done.apply(CopyEvent::Complete {
        completion: completion(),
    })
    .expect("complete");
    let mut closed = offered.clone();
    closed
        .apply(CopyEvent::Close {
            why: "why".to_owned(),
            at_ms: 9,
        })
        .expect("close");
    coverage::take::<Taken>();
    vec![offered, held, done, closed]
}

/// One event of each kind; `Remove` twice (of the holder alice, of bob), as its data decides
/// where a held copy goes.
fn events() -> Vec<CopyEvent> {
    let to = || users(&["bob"]);
    let remove = |name: &str| CopyEvent::Remove {
        user: user(name),
        to: to(),
        at_ms: 7,
    };
    vec![
        CopyEvent::Offer {
            to: to(),
            at_ms: None,
        },
        CopyEvent::Assign { to: to(), at_ms: 7 },
        CopyEvent::Insert {
            user: user("carol"),
            at_ms: 7,
        },
        remove("alice"),
        remove("bob"),
        CopyEvent::Take {
            holder: holder("bob"),
        },
        CopyEvent::Release { to: to(), at_ms: 7 },
        CopyEvent::Delegate {
            holder: holder("carol"),
        },
        CopyEvent::HandOver {
            holder: holder("ron"),
        },
        CopyEvent::Complete {
            completion: completion(),
        },
        CopyEvent::Close {
            why: "why".to_owned(),
            at_ms: 7,
        },
    ]
}

#[test]
fn the_copy_transition_function_allows_exactly_the_table() {
    let mut reached = BTreeSet::new();
    for from in copies() {
        for event in events() {
            let (f, e): (StateKind, EventKind) = (from.life().kind(), event.kind());
            let rows: Vec<StateKind> = TRANSITIONS
                .iter()
                .filter(|(tf, te, _)| (*tf, *te) == (f, e))
                .map(|(_, _, to)| *to)
                .collect();
            match transition(&from, event) {
                Ok(to) => {
                    let kind = to.life().kind();
                    assert!(
                        rows.contains(&kind),
                        "{f:?} {e:?} gave {kind:?}, table {rows:?}"
                    );
                    reached.insert((f, e, kind));
                }
                Err(refused) => assert!(rows.is_empty(), "{f:?} {e:?} refused: {refused}"),
            }
        }
    }
    let table: BTreeSet<_> = TRANSITIONS.iter().copied().collect();
    assert_eq!(reached, table);
    coverage::take::<Taken>();
}

#[test]
fn a_refused_event_leaves_the_copy_as_it_was() {
    for copy in copies().into_iter().filter(|c| !c.is_open()) {
        for event in events() {
            let mut after = copy.clone();
            assert!(after.apply(event).is_err(), "{copy:?}");
            assert_eq!(after, copy);
        }
    }
    let mut offered = ItemCopy::offered_to(users(&["alice"]), 1);
    let before = offered.clone();
    let complete = CopyEvent::Complete {
        completion: completion(),
    };
    assert!(offered.apply(complete).is_err());
    assert_eq!(offered, before);
    coverage::take::<Taken>();
}

#[test]
fn the_events_keep_the_audience_and_the_offers() {
    let mut copy = ItemCopy::offered_to(users(&["alice", "bob"]), 1);
    copy.apply(CopyEvent::Take {
        holder: holder("alice"),
    })
    .expect("take");
    assert!(copy.offered().is_empty() && copy.held_by(&user("alice")));
    copy.apply(CopyEvent::Remove {
        user: user("alice"),
        to: users(&["bob"]),
        at_ms: 7,
    })
    .expect("remove");
    assert_eq!(
        copy.life(),
        &CopyLife::Offered {
            to: users(&["bob"])
        }
    );
    assert_eq!((copy.audience(), copy.offered_ms()), (&users(&["bob"]), 7));
    copy.apply(CopyEvent::HandOver {
        holder: holder("ron"),
    })
    .expect("hand over");
    assert_eq!(copy.audience(), &users(&["ron"]));
    let mut again = copy.clone();
    let later = Holder {
        since_ms: 50,
        ..holder("ron")
    };
    again
        .apply(CopyEvent::HandOver { holder: later })
        .expect("hand over again");
    assert_eq!(again, copy, "the responsible user keeps their hold");
    coverage::take::<Taken>();
}

#[test]
fn architecture_md_shows_the_copy_table() {
    let text = include_str!("../../../docs/lifecycles.md");
    let table = table_markdown();
    // A header and a row per transition: an empty or cut table would be in any text.
    assert!(table.starts_with("| from | event | to |\n|---|---|---|\n"));
    assert_eq!(table.lines().count(), TRANSITIONS.len() + 2);
    assert!(table.contains("| Held | Complete | Done |\n"));
    assert!(
        text.contains(&table),
        "docs/lifecycles.md's work item copy lifecycle is out of date; its table is:\n{table}"
    );
}
