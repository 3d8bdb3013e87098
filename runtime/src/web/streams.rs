//! How many live pages (server-sent event streams) a daemon keeps open: at most so many in
//! all, and at most so many for one session, so that one signed-in browser (or a script with
//! its cookie) cannot take every stream and leave the others none; and how often one stream
//! may render, so that a page whose subject changes a hundred times a second costs a few
//! renders a second, not a hundred (it shows the latest state either way).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The most live pages one session keeps open at once (tabs, and a reconnect overlapping the
/// stream it replaces); one more is refused.
pub const MAX_STREAMS_PER_SESSION: usize = 8;

/// The least time between two renders of one live page: news that comes sooner is shown
/// together with whatever else came meanwhile, at the end of it.
pub const MIN_RENDER_GAP: Duration = Duration::from_millis(200);

/// The live pages a daemon keeps open, in all and by session.
#[derive(Clone)]
pub struct StreamSlots {
    all: Arc<Semaphore>,
    most: usize,
    name: &'static str,
    by_session: Arc<Mutex<HashMap<String, usize>>>,
}

/// One open live page: its place is given back when it is dropped (the stream ended).
pub struct StreamSlot {
    _permit: OwnedSemaphorePermit,
    session: String,
    by_session: Arc<Mutex<HashMap<String, usize>>>,
}

/// Why a live page cannot open now, in words that name the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamsFull {
    /// Every stream of the daemon is taken.
    #[error("{0} live pages are open, the most this daemon keeps ({1}): close one and try again")]
    All(usize, &'static str),
    /// This session has all it may keep.
    #[error(
        "this session has {MAX_STREAMS_PER_SESSION} live pages open \
         (MAX_STREAMS_PER_SESSION): close one of its tabs and try again"
    )]
    Session,
}

impl StreamSlots {
    /// At most `most` live pages in all; `name` is the limit's name in the refusal.
    pub fn new(most: usize, name: &'static str) -> StreamSlots {
        StreamSlots {
            all: Arc::new(Semaphore::new(most)),
            most,
            by_session: Arc::new(Mutex::new(HashMap::new())),
            name,
        }
    }

    /// A place for one more live page of `session` (its id, never its token), or why not.
    pub fn take(&self, session: &str) -> Result<StreamSlot, StreamsFull> {
        let mut by_session = self
            .by_session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let open = by_session.get(session).copied().unwrap_or(0);
        if open >= MAX_STREAMS_PER_SESSION {
            return Err(StreamsFull::Session);
        }
        let permit = self
            .all
            .clone()
            .try_acquire_owned()
            .map_err(|_| StreamsFull::All(self.most, self.name))?;
        by_session.insert(session.to_owned(), open + 1);
        Ok(StreamSlot {
            _permit: permit,
            session: session.to_owned(),
            by_session: self.by_session.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut by_session = self
            .by_session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(open) = by_session.get_mut(&self.session) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                by_session.remove(&self.session);
            }
        }
    }
}

/// When one live page may render next: [`MIN_RENDER_GAP`] after its last render.
#[derive(Debug, Default)]
pub struct RenderPace {
    last: Option<tokio::time::Instant>,
}

impl RenderPace {
    /// Whether a render now would come too soon after the last; if so, waits until it may
    /// (the caller then reads again what it shows, to render the latest).
    pub async fn hold(&mut self) -> bool {
        match self.last {
            Some(last) if tokio::time::Instant::now() < last + MIN_RENDER_GAP => {
                tokio::time::sleep_until(last + MIN_RENDER_GAP).await;
                true
            }
            _ => false,
        }
    }

    /// The page renders now.
    pub fn rendered(&mut self) {
        self.last = Some(tokio::time::Instant::now());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn one_session_cannot_take_every_stream() {
        let slots = StreamSlots::new(10, "MAX_TEST_STREAMS");
        let alice: Vec<StreamSlot> = (0..MAX_STREAMS_PER_SESSION)
            .map(|_| slots.take("alice").unwrap())
            .collect();
        assert_eq!(slots.take("alice").err(), Some(StreamsFull::Session));
        let bob = [slots.take("bob").unwrap(), slots.take("bob").unwrap()];
        let full = slots.take("carol").err().unwrap();
        assert_eq!(full, StreamsFull::All(10, "MAX_TEST_STREAMS"));
        assert!(full.to_string().contains("MAX_TEST_STREAMS"), "{full}");
        drop(bob);
        assert!(slots.take("carol").is_ok(), "bob's places are given back");
        drop(alice);
        let again: Vec<StreamSlot> = (0..MAX_STREAMS_PER_SESSION)
            .map(|_| slots.take("alice").unwrap())
            .collect();
        assert_eq!(again.len(), MAX_STREAMS_PER_SESSION);
    }

    #[tokio::test(start_paused = true)]
    async fn renders_are_paced() {
        let mut pace = RenderPace::default();
        let start = tokio::time::Instant::now();
        assert!(!pace.hold().await, "the first render at once");
        pace.rendered();
        assert!(pace.hold().await, "the next one waits");
        assert_eq!(start.elapsed(), MIN_RENDER_GAP);
        assert!(!pace.hold().await, "then it may");
        pace.rendered();
        tokio::time::sleep(MIN_RENDER_GAP * 3).await;
        assert!(
            !pace.hold().await,
            "news after a quiet while renders at once"
        );
    }
}
