use super::*;

fn id(n: usize) -> ConnectionId {
    ConnectionId::new_unchecked(n)
}

fn v4(last: u8) -> Source {
    Source::V4(Ipv4Addr::new(192, 0, 2, last))
}

#[test]
fn one_source_holds_at_most_its_share_and_gets_a_slot_back_when_one_settles() {
    let mut door = Door::new();
    for n in 0..MAX_PENDING_INCOMING_PER_SOURCE {
        door.admit(id(n), v4(1)).unwrap();
    }
    assert_eq!(door.admit(id(100), v4(1)), Err(Refusal::Source));
    door.admit(id(101), v4(2)).unwrap();
    door.settled(id(0));
    door.settled(id(0));
    door.admit(id(102), v4(1)).unwrap();
    assert_eq!(door.admit(id(103), v4(1)), Err(Refusal::Source));
}

#[test]
fn strangers_together_leave_the_kept_slots_to_known_sources() {
    let mut door = Door::new();
    let known = v4(250);
    door.known(known);
    let total = usize::try_from(MAX_PENDING_INCOMING).unwrap();
    let strangers = total - PENDING_INCOMING_KEPT_FOR_KNOWN;
    for n in 0..strangers {
        let source = v4(u8::try_from(n / MAX_PENDING_INCOMING_PER_SOURCE).unwrap());
        door.admit(id(n), source).unwrap();
    }
    assert_eq!(door.admit(id(1000), v4(200)), Err(Refusal::Strangers));
    for n in 0..MAX_PENDING_INCOMING_PER_SOURCE {
        door.admit(id(2000 + n), known).unwrap();
    }
    // A stranger's slot given back is a stranger's again.
    door.settled(id(0));
    door.admit(id(1001), v4(200)).unwrap();
    assert_eq!(door.admit(id(1002), v4(201)), Err(Refusal::Strangers));
    // A source that completed a handshake is a stranger no more.
    door.known(v4(201));
    door.admit(id(1003), v4(201)).unwrap();
}

#[test]
fn known_sources_past_their_number_forget_the_oldest() {
    let mut door = Door::new();
    for n in 0..=MAX_KNOWN_SOURCES {
        door.known(Source::V6Block(n as u64));
    }
    assert_eq!(door.known.len(), MAX_KNOWN_SOURCES);
    assert!(!door.known.contains_key(&Source::V6Block(0)));
    assert!(
        door.known
            .contains_key(&Source::V6Block(MAX_KNOWN_SOURCES as u64))
    );
}

#[test]
fn a_refused_source_is_logged_once_per_interval_with_the_count_meanwhile() {
    let mut log = RefusalLog::default();
    let now = Instant::now();
    assert_eq!(log.refused(v4(1), now), Say::Source(1));
    for _ in 0..99 {
        assert_eq!(log.refused(v4(1), now), Say::Nothing);
    }
    assert_eq!(log.refused(v4(2), now), Say::Source(1));
    let later = now + REFUSAL_LOG_INTERVAL;
    assert_eq!(log.refused(v4(1), later), Say::Source(100));
    assert_eq!(log.refused(v4(1), later), Say::Nothing);
}

#[test]
fn refusals_from_more_sources_than_are_remembered_are_logged_together() {
    let mut log = RefusalLog::default();
    let now = Instant::now();
    for n in 0..MAX_LOGGED_SOURCES {
        assert_eq!(log.refused(Source::V6Block(n as u64), now), Say::Source(1));
    }
    let many = |n: usize| Source::V6Block((MAX_LOGGED_SOURCES + n) as u64);
    assert_eq!(log.refused(many(0), now), Say::Others(1));
    for n in 1..50 {
        assert_eq!(log.refused(many(n), now), Say::Nothing);
    }
    // Once the interval passed, the remembered sources make room again.
    let later = now + REFUSAL_LOG_INTERVAL;
    assert_eq!(log.refused(many(50), later), Say::Source(1));
}

#[test]
fn a_source_is_an_ipv4_address_or_an_ipv6_block_and_a_relayed_connection_has_none() {
    let of = |text: &str| Source::of(&text.parse::<Multiaddr>().unwrap());
    assert_eq!(of("/ip4/192.0.2.1/tcp/4001"), Some(v4(1)));
    assert_eq!(
        of("/ip6/2001:db8::1/tcp/4001"),
        of("/ip6/2001:db8::ffff:1:2/tcp/5")
    );
    assert_ne!(
        of("/ip6/2001:db8::1/tcp/4001"),
        of("/ip6/2001:db8:0:1::1/tcp/4001")
    );
    assert_eq!(of("/ip6/::ffff:192.0.2.1/tcp/4001"), Some(v4(1)));
    let peer = PeerId::random();
    assert_eq!(of(&format!("/p2p/{peer}")), None);
    assert_eq!(
        of("/ip6/2001:db8::1/tcp/4001").unwrap().to_string(),
        "2001:db8::/64"
    );
}
