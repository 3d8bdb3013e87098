//! Hostile peers at a daemon's door, for the nemesis's hostile faults: a stranger flooding a
//! mesh port with half-open connections, strangers whose handshakes trickle and never end or
//! who never read, a slow-loris on an HTTP API. They speak from loopback addresses of their
//! own (127.0.0.2 and up; the members speak from 127.0.0.1 or the namespace's link), so the
//! daemon's per-source limits see strangers, as they would ones on other machines. An attack
//! keeps its connections open for the fault's hold, opening again those the daemon closes,
//! and counts both; its connections are closed when it stops.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use mobiwf_chaos::cost::Connections;
use mobiwf_chaos::schedule::FaultKind;
use mobiwf_testkit::flood;

/// How often each connection says its next word, and closed ones are opened again.
const TICK: Duration = Duration::from_millis(250);
/// How long opening one source's missing connections may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// The first hostile source, 127.0.0.2 (127.0.0.1 is the members').
const FIRST_SOURCE: u8 = 2;
/// What a slow handshake on a mesh port trickles: the start of libp2p's protocol negotiation.
const MULTISTREAM: &[u8] = b"/multistream/1.0.0\n/noise\n";
/// What a slow-loris trickles: a request's headers, then one more header that never ends.
const HEADERS: &[u8] = b"GET /health HTTP/1.1\r\nHost: chaos\r\nX-Slow-Loris: ";
/// What a slow reader sends again and again without reading the answers.
const REQUEST: &[u8] = b"GET /nodes HTTP/1.1\r\nHost: chaos\r\n\r\n";

/// How one connection behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manner {
    /// Says nothing (half-open); read, to see when the daemon closed it.
    Silent,
    /// One byte of the text each tick, then one `a` each tick forever (the text never ends);
    /// read, to see when the daemon closed it.
    Trickle(&'static [u8]),
    /// The whole text each tick, never reading the answers (a closed connection shows as a
    /// failed write).
    Unread(&'static [u8]),
}

/// One crowd of an attack's connections: how many, spread over how many sources, how each
/// behaves.
#[derive(Debug, Clone, Copy)]
struct Crowd {
    conns: usize,
    sources: u8,
    manner: Manner,
}

/// Where a hostile fault strikes: a daemon's mesh port or its HTTP API.
pub fn aims_at_api(kind: FaultKind) -> bool {
    kind == FaultKind::SlowLoris
}

/// The crowds a fault of `kind` sends (none for a fault that is no hostile peer).
fn crowds(kind: FaultKind) -> Vec<Crowd> {
    match kind {
        // 32 a source: each at the daemon's cap for one source, together far past the
        // strangers' share of the slots for connections being set up.
        FaultKind::FloodPort => vec![Crowd {
            conns: 384,
            sources: 12,
            manner: Manner::Silent,
        }],
        FaultKind::SlowPeers => vec![
            Crowd {
                conns: 48,
                sources: 2,
                manner: Manner::Trickle(MULTISTREAM),
            },
            Crowd {
                conns: 48,
                sources: 2,
                manner: Manner::Unread(MULTISTREAM),
            },
        ],
        FaultKind::SlowLoris => vec![
            Crowd {
                conns: 48,
                sources: 2,
                manner: Manner::Trickle(HEADERS),
            },
            Crowd {
                conns: 48,
                sources: 2,
                manner: Manner::Unread(REQUEST),
            },
        ],
        _ => Vec::new(),
    }
}

/// The TCP address of a libp2p address `/ip4/A/tcp/P[/p2p/ID]`.
pub fn mesh_port(address: &str) -> anyhow::Result<SocketAddr> {
    let parts: Vec<&str> = address.split('/').collect();
    match parts.as_slice() {
        ["", "ip4", ip, "tcp", port, ..] => Ok(SocketAddr::new(ip.parse()?, port.parse()?)),
        _ => anyhow::bail!("{address} is no /ip4/A/tcp/P address"),
    }
}

/// One connection held.
struct Held {
    stream: TcpStream,
    crowd: usize,
    source: u8,
    said: usize,
}

impl Held {
    /// Says its next word; false when the daemon has closed it.
    fn step(&mut self, manner: Manner) -> bool {
        use std::io::{ErrorKind, Write};
        let wrote = match manner {
            Manner::Silent => Ok(()),
            Manner::Trickle(text) => {
                let byte = text.get(self.said).copied().unwrap_or(b'a');
                self.said += 1;
                (&self.stream).write(&[byte]).map(|_| ())
            }
            Manner::Unread(text) => (&self.stream).write(text).map(|_| ()),
        };
        match wrote {
            Err(e) if e.kind() != ErrorKind::WouldBlock => return false,
            _ => {}
        }
        match manner {
            Manner::Unread(_) => true,
            Manner::Silent | Manner::Trickle(_) => {
                flood::closed(std::slice::from_ref(&self.stream)) == 0
            }
        }
    }
}

/// An attack under way.
pub struct Attack {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<Connections>>,
}

impl Attack {
    /// Starts the crowds of a fault of `kind` at `to`.
    pub fn start(kind: FaultKind, to: SocketAddr) -> Attack {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || hold(&crowds(kind), to, &flag));
        Attack { stop, thread }
    }

    /// Stops it, closing its connections; how many it opened and how many the daemon closed.
    pub fn stop(self) -> anyhow::Result<Connections> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("a hostile peer's thread panicked"))?
    }
}

/// Holds the crowds' connections at `to` until `stop`.
fn hold(crowds: &[Crowd], to: SocketAddr, stop: &AtomicBool) -> anyhow::Result<Connections> {
    // Binding the source before connecting is tokio's (std cannot), on this thread alone.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("a runtime for the hostile peer")?;
    let mut held: Vec<Held> = Vec::new();
    let mut count = Connections::default();
    while !stop.load(Ordering::SeqCst) {
        let mut first_source = FIRST_SOURCE;
        for (c, crowd) in crowds.iter().enumerate() {
            let quota = crowd.conns / usize::from(crowd.sources.max(1));
            for source in first_source..first_source.saturating_add(crowd.sources) {
                let alive = held
                    .iter()
                    .filter(|h| h.crowd == c && h.source == source)
                    .count();
                let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, source));
                let want = quota.saturating_sub(alive);
                if want == 0 {
                    continue;
                }
                let opened = rt.block_on(async {
                    tokio::time::timeout(OPEN_TIMEOUT, flood::open(from, to, want, b"")).await
                });
                // A round the daemon did not accept in time is tried again next tick.
                if let Ok(Ok(streams)) = opened {
                    count.opened += streams.len();
                    held.extend(streams.into_iter().map(|stream| Held {
                        stream,
                        crowd: c,
                        source,
                        said: 0,
                    }));
                }
            }
            first_source = first_source.saturating_add(crowd.sources);
        }
        std::thread::sleep(TICK);
        let before = held.len();
        held.retain_mut(|h| {
            let manner = crowds.get(h.crowd).map_or(Manner::Silent, |c| c.manner);
            h.step(manner)
        });
        count.closed += before - held.len();
    }
    if count.opened == 0 {
        anyhow::bail!("no hostile connection to {to} could be opened");
    }
    Ok(count)
}

#[cfg(test)]
mod tests;
