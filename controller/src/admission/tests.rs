//! The admission limiter driven through its inputs: random histories, the adaptive limit's table,
//! the fixed and off policies, and a deterministic model of the soak past capacity.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;

use super::*;

fn ms(n: u64) -> Millis {
    Millis(n)
}

/// Admits one submission; panics when it is shed.
fn admit(a: &mut Admission, now: u64) -> Ticket {
    match a.apply(ms(now), Input::Arrive) {
        Decision::Admit(ticket) => ticket,
        other => panic!("expected an admission, got {other:?}"),
    }
}

/// The admitted submission of `ticket` was stored as `instance`.
fn store(a: &mut Admission, now: u64, ticket: Ticket, instance: InstanceId) {
    let stored = Some(instance);
    a.apply(ms(now), Input::Answered { ticket, stored });
}

/// Instances held under way (stored, never settled), numbered from `next`: three quarters
/// of the limit now, those held before let go (the book said it was idle).
fn fill(a: &mut Admission, now: u64, next: &mut u64) {
    a.apply(ms(now), Input::Idle);
    while a.under_way(ms(now)) < a.limit() * 3 / 4 {
        let ticket = admit(a, now);
        *next += 1;
        store(a, now, ticket, InstanceId(*next));
    }
}

/// Runs `rounds` instances one after another, each taking `took` ms, with three quarters of
/// the limit in use (`busy`: the limit moves) or nothing else; the limit afterwards.
fn run(a: &mut Admission, start: u64, rounds: u64, took: u64, busy: bool) -> usize {
    let mut held = (1 << 40) + start * 1000;
    for i in 0..rounds {
        let now = start + i * 10;
        if busy {
            fill(a, now, &mut held);
        }
        let ticket = admit(a, now);
        let instance = InstanceId(start + i);
        store(a, now, ticket, instance);
        a.apply(ms(now + took), Input::Settled { instance });
    }
    a.limit()
}

/// Instances admitted every 2 ms, the limit in use, whose end-to-end times climb by `step`
/// ms each from `first` (a queue building); the limit afterwards.
fn climb(a: &mut Admission, start: u64, rounds: u64, first: u64, step: u64) -> usize {
    let mut held = (1 << 41) + start * 1000;
    for i in 0..rounds {
        let now = start + 2 * i;
        fill(a, now, &mut held);
        let ticket = admit(a, now);
        let instance = InstanceId(1_000_000 + start + i);
        store(a, now, ticket, instance);
        a.apply(ms(now + first + step * i), Input::Settled { instance });
    }
    a.limit()
}

#[test]
fn an_idle_system_admits() {
    for policy in [Policy::Adaptive, Policy::Fixed(1), Policy::Off] {
        let mut a = Admission::new(policy);
        admit(&mut a, 0);
    }
}

#[test]
fn past_a_fixed_limit_submissions_are_shed_with_the_limit_and_a_retry() {
    let mut a = Admission::new(Policy::Fixed(3));
    let t0 = admit(&mut a, 0);
    store(&mut a, 0, t0, InstanceId(1));
    let t1 = admit(&mut a, 0);
    let _t2 = admit(&mut a, 0);
    // One stored and not settled, two admitted but not answered: three under way.
    let shed = a.apply(ms(0), Input::Arrive);
    let Decision::Shed(shed) = shed else {
        panic!("expected a shed, got {shed:?}");
    };
    assert_eq!((shed.under_way, shed.limit), (3, 3));
    assert_eq!(shed.policy, Policy::Fixed(3));
    assert_eq!(shed.retry_after, Duration::from_secs(1));
    // A refused submission frees its slot.
    a.apply(
        ms(1),
        Input::Answered {
            ticket: t1,
            stored: None,
        },
    );
    let t3 = admit(&mut a, 1);
    store(&mut a, 1, t3, InstanceId(3));
    // A fixed limit counts an instance until it settles, however long it takes.
    assert_eq!(a.under_way(ms(100_000_000)), 3);
    a.apply(
        ms(100_000_000),
        Input::Settled {
            instance: InstanceId(1),
        },
    );
    assert_eq!(a.under_way(ms(100_000_000)), 2);
    // That one took 100,000 s: at most MAX_RETRY_AFTER.
    assert_eq!(retry_after(&mut a, 100_000_000), MAX_RETRY_AFTER);
}

#[test]
fn off_never_sheds() {
    let mut a = Admission::new(Policy::Off);
    for n in 0..100_000 {
        let ticket = admit(&mut a, 0);
        store(&mut a, 0, ticket, InstanceId(n));
    }
}

/// Under the adaptive limit an instance under way for longer than `MIN_WAITING_AFTER` (it
/// waits on a person) no longer counts: a thousand of them do not shut the door.
#[test]
fn instances_that_wait_for_long_stop_counting() {
    let mut a = Admission::new(Policy::Adaptive);
    for n in 0..MIN_ADMISSION_LIMIT as u64 {
        let ticket = admit(&mut a, 0);
        store(&mut a, 0, ticket, InstanceId(n));
    }
    let waiting = u64::try_from(MIN_WAITING_AFTER.as_millis()).unwrap();
    assert_eq!(a.under_way(ms(waiting)), MIN_ADMISSION_LIMIT);
    assert_eq!(a.under_way(ms(waiting + 1)), 0);
    admit(&mut a, waiting + 1);
    // One settling later gives no sample: nothing changes.
    a.apply(
        ms(waiting + 2),
        Input::Settled {
            instance: InstanceId(0),
        },
    );
    assert_eq!(a.under_way(ms(waiting + 2)), 1);
}

/// A word of a settled instance missed: once the book holds none unsettled, none counts.
#[test]
fn an_idle_book_mends_a_missed_settlement() {
    let mut a = Admission::new(Policy::Fixed(1));
    let ticket = admit(&mut a, 0);
    store(&mut a, 0, ticket, InstanceId(1));
    assert!(matches!(a.apply(ms(1), Input::Arrive), Decision::Shed(_)));
    a.apply(ms(2), Input::Idle);
    admit(&mut a, 2);
}

/// An instance reported settled before its submission's answer came back is never counted.
#[test]
fn an_instance_settled_before_its_answer_is_not_counted() {
    let mut a = Admission::new(Policy::Fixed(1));
    let ticket = admit(&mut a, 0);
    a.apply(
        ms(1),
        Input::Settled {
            instance: InstanceId(7),
        },
    );
    store(&mut a, 2, ticket, InstanceId(7));
    assert_eq!(a.under_way(ms(2)), 0);
    admit(&mut a, 2);
}

/// Each row: a steady load (end-to-end ms, instances kept under way), then what happens to
/// the adaptive limit.
#[test]
fn the_adaptive_limit_follows_latency() {
    // Flat latency with the limit in use: it grows.
    let mut a = Admission::new(Policy::Adaptive);
    let grown = run(&mut a, 0, 200, 50, true);
    assert!(grown > 2 * INITIAL_ADMISSION_LIMIT, "grew to {grown}");
    // Flat latency but less than half of it in use: no evidence, it stays.
    let mut a = Admission::new(Policy::Adaptive);
    assert_eq!(run(&mut a, 0, 200, 50, false), INITIAL_ADMISSION_LIMIT);
    // Latency jumping with less than half in use (a closed loop starting): it stays.
    assert_eq!(
        run(&mut a, 10_000, 50, 5_000, false),
        INITIAL_ADMISSION_LIMIT
    );
    // Latency jumping well past the long-run average with the limit in use: it shrinks;
    // climbing on, down to the floor.
    let mut a = Admission::new(Policy::Adaptive);
    run(&mut a, 0, 100, 50, false);
    let shrunk = run(&mut a, 10_000, 50, 5_000, true);
    assert!(shrunk < INITIAL_ADMISSION_LIMIT, "shrank to {shrunk}");
    let floor = climb(&mut a, 20_000, 10_000, 5_000, 1);
    assert_eq!(floor, MIN_ADMISSION_LIMIT);
    // The retry follows the recent latency (about 15 s by the end of the climb).
    assert_eq!(retry_after(&mut a, 40_000), Duration::from_secs(15));
}

/// The `Retry-After` of a submission shed at `now`, once the limit is filled.
fn retry_after(a: &mut Admission, now: u64) -> Duration {
    let mut next = 1 << 42;
    loop {
        match a.apply(ms(now), Input::Arrive) {
            Decision::Admit(ticket) => {
                next += 1;
                store(a, now, ticket, InstanceId(next));
            }
            Decision::Shed(shed) => return shed.retry_after,
            Decision::Noted => panic!("an arrival is decided"),
        }
    }
}

/// One step of a random history.
#[derive(Debug, Clone)]
enum Step {
    Arrive,
    Answer {
        stored: bool,
    },
    Settle(usize),
    Wait(u64),
    /// The book says it holds nothing unsettled.
    Idle,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Arrive),
        any::<bool>().prop_map(|stored| Step::Answer { stored }),
        (0usize..64).prop_map(Step::Settle),
        (0u64..120_000).prop_map(Step::Wait),
        Just(Step::Idle),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Adaptive),
        (1usize..500).prop_map(Policy::Fixed),
        Just(Policy::Off),
    ]
}

proptest! {
    /// Whatever came before: a submission is admitted exactly when fewer than the limit are
    /// under way, so an idle system (nothing unsettled, every ticket answered) always admits;
    /// the adaptive limit stays within its floor and ceiling; every admission is counted until
    /// it is answered, and a shed one is not counted at all.
    #[test]
    fn admission_is_exactly_the_limit(
        policy in policy(),
        steps in prop::collection::vec(step(), 0..300),
    ) {
        let mut a = Admission::new(policy);
        let (mut now, mut next_id) = (0u64, 0u64);
        let mut tickets: Vec<Ticket> = Vec::new();
        let mut stored: Vec<InstanceId> = Vec::new();
        for s in steps {
            match s {
                Step::Arrive => {
                    let limit = a.limit();
                    let under_way = a.under_way(ms(now));
                    match a.apply(ms(now), Input::Arrive) {
                        Decision::Admit(t) => {
                            prop_assert!(under_way < limit);
                            tickets.push(t);
                        }
                        Decision::Shed(shed) => {
                            prop_assert!(under_way >= limit);
                            prop_assert_eq!((shed.under_way, shed.limit), (under_way, limit));
                            prop_assert!(shed.retry_after >= Duration::from_secs(1));
                            prop_assert!(shed.retry_after <= MAX_RETRY_AFTER);
                        }
                        Decision::Noted => prop_assert!(false, "an arrival is decided"),
                    }
                }
                Step::Answer { stored: kept } => {
                    if let Some(ticket) = tickets.pop() {
                        let instance = kept.then(|| { next_id += 1; InstanceId(next_id) });
                        stored.extend(instance);
                        a.apply(ms(now), Input::Answered { ticket, stored: instance });
                    }
                }
                Step::Settle(i) => {
                    if !stored.is_empty() {
                        let instance = stored.remove(i % stored.len());
                        a.apply(ms(now), Input::Settled { instance });
                    }
                }
                Step::Wait(dt) => now += dt,
                Step::Idle => {
                    stored.clear();
                    a.apply(ms(now), Input::Idle);
                }
            }
            prop_assert_eq!(a.pending(), tickets.len());
            let counted = a.under_way(ms(now));
            if policy == Policy::Adaptive {
                // Those waiting for long may have stopped counting.
                prop_assert!(counted <= tickets.len() + stored.len());
                prop_assert!((MIN_ADMISSION_LIMIT..=MAX_ADMISSION_LIMIT).contains(&a.limit()));
            } else {
                prop_assert_eq!(counted, tickets.len() + stored.len());
            }
        }
        for ticket in tickets.drain(..) {
            a.apply(ms(now), Input::Answered { ticket, stored: None });
        }
        for instance in stored.drain(..) {
            a.apply(ms(now), Input::Settled { instance });
        }
        prop_assert_eq!((a.pending(), a.under_way(ms(now))), (0, 0));
        let idle = a.apply(ms(now), Input::Arrive);
        prop_assert!(matches!(idle, Decision::Admit(_)), "idle, yet {:?}", idle);
    }
}

/// What an open-loop overload did: instances finished in the last minute, submissions shed,
/// instances under way at the end, the mean end-to-end ms in the last minute.
#[derive(Debug)]
struct Overload {
    finished_last_minute: u64,
    shed: u64,
    under_way_at_end: usize,
    mean_ms_last_minute: u64,
}

/// A FIFO server that finishes one instance every 2 ms (500 a second), each 40 ms after it
/// starts, offered 550 submissions a second for `seconds`, behind `policy`.
fn overload(policy: Policy, seconds: u64) -> Overload {
    use std::collections::VecDeque;
    let mut a = Admission::new(policy);
    let mut queue: VecDeque<(InstanceId, u64, u64)> = VecDeque::new();
    let (mut next_free, mut shed, mut finished, mut total_ms) = (0u64, 0u64, 0u64, 0u64);
    let end_us = seconds * 1_000_000;
    let last_minute = end_us.saturating_sub(60_000_000);
    let mut k = 0u64;
    loop {
        let t = k * 1_000_000 / 550;
        if t >= end_us {
            break;
        }
        while let Some(&(instance, at, done)) = queue.front() {
            if done > t {
                break;
            }
            queue.pop_front();
            a.apply(ms(done / 1000), Input::Settled { instance });
            if done >= last_minute {
                finished += 1;
                total_ms += (done - at) / 1000;
            }
        }
        match a.apply(ms(t / 1000), Input::Arrive) {
            Decision::Admit(ticket) => {
                let instance = InstanceId(k);
                a.apply(
                    ms(t / 1000),
                    Input::Answered {
                        ticket,
                        stored: Some(instance),
                    },
                );
                next_free = next_free.max(t) + 2_000;
                queue.push_back((instance, t, next_free + 40_000));
            }
            _ => shed += 1,
        }
        k += 1;
    }
    Overload {
        finished_last_minute: finished,
        shed,
        under_way_at_end: queue.len(),
        mean_ms_last_minute: total_ms / finished.max(1),
    }
}

/// The soak's overload, as a model on simulated time (deterministic, no clock): offered 10%
/// more than it can finish for four minutes, the server behind the adaptive limit finishes as
/// many in the last minute as without it, sheds about the excess, and keeps the queue, and so
/// the end-to-end time, near what an unqueued instance takes (42 ms) instead of letting it
/// grow without bound.
#[test]
fn past_capacity_the_limit_holds_throughput_and_sheds_the_rest() {
    let unlimited = overload(Policy::Off, 240);
    let limited = overload(Policy::Adaptive, 240);
    let both = format!("off: {unlimited:?}\nadaptive: {limited:?}");
    assert_eq!(unlimited.finished_last_minute, 30_000, "{both}");
    assert_eq!(limited.finished_last_minute, 30_000, "{both}");
    assert!(
        unlimited.under_way_at_end > 10_000 && unlimited.mean_ms_last_minute > 10_000,
        "{both}"
    );
    // 550 - 500 a second for 240 s: 12,000 too many.
    assert!((10_800..=13_200).contains(&limited.shed), "{both}");
    assert!(limited.under_way_at_end < 200, "{both}");
    assert!(limited.mean_ms_last_minute < 4 * 42, "{both}");
}
