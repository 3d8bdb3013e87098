//! Waiting for an etcd that does not answer: ask again after a growing wait
//! (`mobiwf_cluster::retry`), and say so, with the endpoints and the error, at most every few
//! seconds; never give up on it and never spin. Only the failures etcd may answer otherwise
//! later are waited out ([`LinkError::is_transient`]); any other error is returned.

use std::future::Future;

use mobiwf_cluster::retry::Backoff;

use super::link::{EtcdLink, LinkError};

/// One wait for etcd: what it is for, and its backoff (what was said is the link's).
pub struct Patience {
    what: &'static str,
    backoff: Backoff,
}

impl Patience {
    /// A wait for etcd, to do `what` (said in the log).
    pub fn new(what: &'static str) -> Patience {
        Patience {
            what,
            backoff: Backoff::default(),
        }
    }

    /// A call got through: says that etcd answers again, when it did not.
    pub fn answered(&mut self, link: &EtcdLink) {
        self.backoff.succeeded();
        link.answered();
    }

    /// A call failed with `e`: when etcd may answer later, waits before the next call (saying
    /// so now and then); `e` otherwise.
    pub async fn failed(&mut self, link: &EtcdLink, e: anyhow::Error) -> anyhow::Result<()> {
        if !transient(&e) {
            return Err(e);
        }
        let wait = self.backoff.failed();
        link.complain(self.what, &e, wait);
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

/// Runs `attempt` until it succeeds or fails other than by etcd not answering.
pub async fn patiently<T, F, Fut>(
    link: &EtcdLink,
    what: &'static str,
    mut attempt: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let mut patience = Patience::new(what);
    loop {
        match attempt().await {
            Ok(answer) => {
                patience.answered(link);
                return Ok(answer);
            }
            Err(e) => patience.failed(link, e).await?,
        }
    }
}

/// Whether `e` is etcd not answering (now).
pub fn transient(e: &anyhow::Error) -> bool {
    e.downcast_ref::<LinkError>()
        .is_some_and(LinkError::is_transient)
}

/// Whether `e` came from etcd at all (unreachable, or refusing), rather than from what it
/// holds.
pub fn from_etcd(e: &anyhow::Error) -> bool {
    e.downcast_ref::<LinkError>().is_some()
}
