//! A stranger's half-open connections: TCP connections to a mesh port from a source address of
//! the stranger's own (127.0.0.2 and up: Linux answers the whole of 127.0.0.0/8, and the
//! members speak from 127.0.0.1), on which nothing (or garbage) is said, and the count of
//! those the other side has closed. What the runtime's tests and the end-to-end flood test
//! hold a node to.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};

/// Opens `n` TCP connections from `from` to `to`, writing `garbage` on each (nothing: a
/// half-open connection that never starts its handshake); they are non-blocking, for
/// [`closed`]. Binding the source before connecting is what std cannot do, hence tokio.
pub async fn open(
    from: IpAddr,
    to: SocketAddr,
    n: usize,
    garbage: &[u8],
) -> std::io::Result<Vec<TcpStream>> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let socket = match from {
            IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.bind(SocketAddr::new(from, 0))?;
        let stream = socket.connect(to).await?.into_std()?;
        stream.set_nonblocking(true)?;
        if !garbage.is_empty() {
            let _ = (&stream).write_all(garbage);
        }
        held.push(stream);
    }
    Ok(held)
}

/// How many of `held` (non-blocking) the other side has closed (a read says end of file or
/// reset).
pub fn closed(held: &[TcpStream]) -> usize {
    let mut buf = [0u8; 256];
    held.iter()
        .filter(|s| {
            loop {
                match (&mut &**s).read(&mut buf) {
                    Ok(0) => break true,
                    Ok(_) => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            }
        })
        .count()
}
