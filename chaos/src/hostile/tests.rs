#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::time::Instant;

use super::*;

/// How long a bounded wait may take before the test fails (never expected to be reached).
const PATIENCE: Duration = Duration::from_secs(60);

/// Accepts until `n` connections came (at most [`PATIENCE`]), each with its source.
fn accept(listener: &TcpListener, n: usize, into: &mut Vec<(TcpStream, IpAddr)>) {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + PATIENCE;
    while into.len() < n {
        match listener.accept() {
            Ok((stream, from)) => into.push((stream, from.ip())),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "only {} of {n} came", into.len());
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

fn per_source(accepted: &[(TcpStream, IpAddr)]) -> BTreeMap<IpAddr, usize> {
    let mut by = BTreeMap::new();
    for (_, ip) in accepted {
        *by.entry(*ip).or_insert(0) += 1;
    }
    by
}

fn source(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// Reads `stream` until it has given `n` bytes (at most [`PATIENCE`]).
fn read_at_least(stream: &mut TcpStream, n: usize) -> Vec<u8> {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < n {
        let k = stream.read(&mut buf).unwrap();
        assert!(k > 0, "closed after {got:?}");
        got.extend_from_slice(&buf[..k]);
    }
    got
}

#[test]
fn the_mesh_port_of_a_libp2p_address() {
    let at = mesh_port("/ip4/10.1.2.1/tcp/4001/p2p/12D3KooWabc").unwrap();
    assert_eq!(at, "10.1.2.1:4001".parse().unwrap());
    assert!(mesh_port("/dns4/example.org/tcp/1").is_err());
}

#[test]
fn a_flood_holds_hundreds_from_sources_of_its_own_and_opens_again_those_closed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let attack = Attack::start(FaultKind::FloodPort, listener.local_addr().unwrap());
    let mut accepted = Vec::new();
    accept(&listener, 384, &mut accepted);
    let by = per_source(&accepted);
    assert_eq!(by.len(), 12, "{by:?}");
    assert!(by.values().all(|n| *n == 32), "{by:?}");
    assert!(!by.contains_key(&source(1)), "a member's source: {by:?}");
    // The flood says nothing.
    let (first, _) = &accepted[0];
    first.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 16];
    let silent = (&*first).read(&mut buf);
    assert!(
        matches!(&silent, Err(e) if e.kind() == ErrorKind::WouldBlock),
        "{silent:?}"
    );
    // The daemon closes ten of them: the flood opens ten more, from the same source.
    let closed_from = accepted[0].1;
    let mut dropped = 0;
    accepted.retain(|(_, ip)| {
        let drop = *ip == closed_from && dropped < 10;
        dropped += usize::from(drop);
        !drop
    });
    let mut again = Vec::new();
    accept(&listener, 10, &mut again);
    assert!(again.iter().all(|(_, ip)| *ip == closed_from), "{again:?}");
    let count = attack.stop().unwrap();
    assert!(count.opened >= 394, "{count:?}");
    assert!(count.closed >= 10, "{count:?}");
    // Stopped: every connection it held is closed.
    accepted.extend(again);
    let held: Vec<TcpStream> = accepted.into_iter().map(|(s, _)| s).collect();
    for s in &held {
        s.set_nonblocking(true).unwrap();
    }
    let deadline = Instant::now() + PATIENCE;
    while flood::closed(&held) < held.len() {
        assert!(Instant::now() < deadline, "connections left open");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Checks an attack of two crowds (sources 2, 3 trickling `trickled`, sources 4, 5 sending
/// `repeated` and never reading).
fn trickles_and_never_reads(kind: FaultKind, trickled: &[u8], repeated: &[u8]) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let attack = Attack::start(kind, listener.local_addr().unwrap());
    let mut accepted = Vec::new();
    accept(&listener, 96, &mut accepted);
    let by = per_source(&accepted);
    let want: BTreeMap<IpAddr, usize> = (2..=5).map(|n| (source(n), 24)).collect();
    assert_eq!(by, want);
    let mut trickler = None;
    let mut deaf = None;
    for (stream, ip) in accepted.iter_mut() {
        match ip {
            IpAddr::V4(v4) if v4.octets()[3] <= 3 => trickler = Some(stream),
            _ => deaf = Some(stream),
        }
    }
    // A trickler's words are its text's beginning, or the text and a header that never ends.
    let got = read_at_least(trickler.unwrap(), 3);
    let (head, tail) = got.split_at(got.len().min(trickled.len()));
    assert!(trickled.starts_with(head), "{got:?}");
    assert!(tail.iter().all(|b| *b == b'a'), "{got:?}");
    // The deaf one sends its text again and again, and never reads: what is written to it
    // fills the buffers between, then blocks.
    let deaf = deaf.unwrap();
    let got = read_at_least(deaf, repeated.len() * 2);
    assert!(
        got.chunks(repeated.len()).all(|c| repeated.starts_with(c)),
        "{got:?}"
    );
    deaf.set_nonblocking(true).unwrap();
    let chunk = [0u8; 65_536];
    let mut written = 0usize;
    let blocked = loop {
        match deaf.write(&chunk) {
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break true,
            Err(e) => panic!("write: {e}"),
        }
        if written > 256 << 20 {
            break false;
        }
    };
    assert!(
        blocked,
        "{written} bytes written to a peer that never reads"
    );
    let count = attack.stop().unwrap();
    assert!(count.opened >= 96, "{count:?}");
}

#[test]
fn slow_peers_trickle_a_handshake_that_never_ends_or_never_read() {
    trickles_and_never_reads(FaultKind::SlowPeers, MULTISTREAM, MULTISTREAM);
}

#[test]
fn a_slow_loris_trickles_headers_that_never_end_or_never_reads_the_answers() {
    trickles_and_never_reads(FaultKind::SlowLoris, HEADERS, REQUEST);
}

#[test]
fn only_hostile_kinds_send_peers_and_only_the_slow_loris_at_an_api() {
    for kind in FaultKind::ALL {
        assert_eq!(!crowds(kind).is_empty(), kind.is_hostile(), "{kind}");
        assert_eq!(aims_at_api(kind), kind == FaultKind::SlowLoris, "{kind}");
    }
}
