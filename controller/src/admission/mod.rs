//! Admission control on instance submission, as a pure decision: past its capacity the system
//! holds its throughput by refusing new instances at the door (429) instead of queueing them
//! until every instance is slow. No clock, lock or I/O here: the API's shell
//! (`crate::api_admission`) feeds it what it sees and carries out what it decides.
//!
//! What is limited is the *work under way*: the instances admitted here and not yet settled,
//! and the submissions admitted and not yet answered by the actor. Not every instance the book
//! holds: an instance that waits on a person for hours is under way but loads nothing, and a
//! controller restarted with a thousand of them open must still take new ones. So under the
//! adaptive limit an instance stops counting (and gives no sample) once it has been under way
//! longer than [`MIN_WAITING_AFTER`], or twenty times what instances take, whichever is
//! longer: by then it is waiting, not working. A fixed limit counts every instance admitted
//! here until it settles.
//!
//! The bound adapts from the system's own latency, in the spirit of TCP Vegas and Netflix's
//! Gradient2 concurrency limit: each settled instance admitted here is one sample of its
//! end-to-end time; a short and a long time-weighted average of them are kept, and while the
//! short one stays within [`TOLERANCE`] times the long one (no queue is building) the limit
//! grows by about its square root, and when it grows past that the limit shrinks by their
//! ratio (at most halving). Averages over *time*, not a count of samples, so that a high rate
//! of completions cannot drag the long average up within a second; and while half the limit
//! is in use the long one rises ten times slower (`LONG_SPAN_LOADED`), so that a queue
//! building under sustained overload does not soon pass for what instances take (the creep
//! Gradient2 is known for). The limit stays within [`MIN_ADMISSION_LIMIT`] and
//! [`MAX_ADMISSION_LIMIT`], and moves only while at least half of it is in use: below that
//! the clients, not the limit, decide the load.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use mobiwf_proto::{InstanceId, Millis};

#[cfg(test)]
mod tests;

/// The floor of the adaptive limit: at least this many instances may be under way whatever
/// the latency says (an idle system therefore never refuses one).
pub const MIN_ADMISSION_LIMIT: usize = 32;

/// The ceiling of the adaptive limit: never more instances under way than this.
pub const MAX_ADMISSION_LIMIT: usize = 10_000;

/// The adaptive limit before any instance has settled.
pub const INITIAL_ADMISSION_LIMIT: usize = 256;

/// The longest `Retry-After` a shed submission is told.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// How far the recent latency may exceed the long-run one before the limit shrinks (as
/// Gradient2's `rttTolerance`).
pub const TOLERANCE: f64 = 1.5;

/// How quickly the short average follows new samples (its time constant).
const SHORT_SPAN: Duration = Duration::from_secs(2);

/// How quickly the long average follows new samples (its time constant) while less than half
/// the limit is in use: what an unqueued instance takes.
const LONG_SPAN: Duration = Duration::from_secs(60);

/// How quickly the long average follows samples above it while half the limit or more is in
/// use: slowly, or a queue that builds would soon pass for what instances take (the long
/// average would creep up after the short one and the limit with it).
const LONG_SPAN_LOADED: Duration = Duration::from_secs(600);

/// The least factor the limit is multiplied by at one sample.
const MIN_GRADIENT: f64 = 0.5;

/// How much of a newly computed limit is taken at each sample (the rest is the old one).
const SMOOTHING: f64 = 0.2;

/// The most admitted instances under way kept (the oldest are forgotten first; with the
/// settled ones not yet swept, the list is at most twice as long); above any limit but
/// `off`'s, under which nothing is shed.
const TRACKED_MOST: usize = 2 * MAX_ADMISSION_LIMIT;

/// Under the adaptive limit, an instance under way longer than this (or than twenty times the
/// long average, if longer) is taken to be waiting (on a person, a timer), not working: it no
/// longer counts, nor gives a sample.
pub const MIN_WAITING_AFTER: Duration = Duration::from_secs(60);

/// Under the adaptive limit, how many times the long average an instance may be under way
/// before it counts as waiting (if longer than [`MIN_WAITING_AFTER`]).
const WAITING_PAST_LONG_AVERAGE: f64 = 20.0;

/// How many settled instances of unknown admission are remembered, should one be reported
/// settled before its submission's answer came back (then it is never counted).
const EARLY_SETTLED_MOST: usize = 1024;

/// How the bound is set (`serve --admission-limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Adapts from latency between the floor and the ceiling (`auto`, the default).
    Adaptive,
    /// A fixed number of instances under way (`N`, at least 1).
    Fixed(usize),
    /// Nothing is shed (`off`).
    Off,
}

impl Policy {
    /// `auto`, `off` or a whole number of instances (at least 1).
    pub fn parse(text: &str) -> Result<Policy, String> {
        match text {
            "auto" => Ok(Policy::Adaptive),
            "off" => Ok(Policy::Off),
            number => match number.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(Policy::Fixed(n)),
                _ => Err(format!(
                    "{text:?} is not an admission limit: give `auto` (adapts between \
                     {MIN_ADMISSION_LIMIT} and {MAX_ADMISSION_LIMIT}), `off`, or a number of \
                     instances under way, at least 1"
                )),
            },
        }
    }
}

/// An admitted submission, to be handed back with its answer ([`Input::Answered`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Ticket {
    admitted_at: Millis,
}

/// What the shell tells the limiter.
#[derive(Debug)]
pub enum Input {
    /// A submission asks to come in.
    Arrive,
    /// An admitted submission was answered.
    Answered {
        /// The ticket its admission gave.
        ticket: Ticket,
        /// The instance it was stored as; `None` when it was not (refused, the daemon
        /// stopping, the request dropped).
        stored: Option<InstanceId>,
    },
    /// An instance became settled.
    Settled {
        /// Which.
        instance: InstanceId,
    },
    /// The book holds no instance unsettled: none admitted here is under way either (a word
    /// of a settled instance missed is mended so).
    Idle,
}

/// What the limiter decided.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// Let the submission in; hand the ticket back with its answer.
    Admit(Ticket),
    /// Refuse it: nothing of it is stored.
    Shed(Shed),
    /// Taken into account; nothing to do.
    Noted,
}

/// Why a submission was shed, for its answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shed {
    /// The instances under way when it came (unsettled, and admitted not yet answered).
    pub under_way: usize,
    /// The limit it met.
    pub limit: usize,
    /// How the limit is set.
    pub policy: Policy,
    /// When to submit again: about the time one instance takes now, whole seconds, at least 1
    /// and at most [`MAX_RETRY_AFTER`].
    pub retry_after: Duration,
}

/// The two time-weighted averages of the end-to-end times, in ms.
#[derive(Debug, Clone, Copy)]
struct Averages {
    short: f64,
    long: f64,
    at: Millis,
}

/// The admission limiter: `apply(now, input) -> decision`.
#[derive(Debug)]
pub struct Admission {
    policy: Policy,
    /// The adaptive limit (fractional: it moves by less than one at a sample).
    limit: f64,
    /// Admitted, not yet answered.
    pending: usize,
    /// The instances under way at the last arrival, for the growth rule.
    last_under_way: usize,
    /// Stored instances admitted here and not settled, with when they were admitted.
    admitted: BTreeMap<InstanceId, Millis>,
    /// The same in the order they were stored, to forget the oldest (settled ones are
    /// skipped as they come up).
    order: VecDeque<(Millis, InstanceId)>,
    /// Settled instances not (yet) known here, most recent last.
    early: VecDeque<InstanceId>,
    averages: Option<Averages>,
}

impl Admission {
    /// A limiter set as `policy` says.
    pub fn new(policy: Policy) -> Admission {
        Admission {
            policy,
            limit: INITIAL_ADMISSION_LIMIT as f64,
            pending: 0,
            last_under_way: 0,
            admitted: BTreeMap::new(),
            order: VecDeque::new(),
            early: VecDeque::new(),
            averages: None,
        }
    }

    /// The limit in force now.
    pub fn limit(&self) -> usize {
        match self.policy {
            Policy::Adaptive => self.limit.round() as usize,
            Policy::Fixed(n) => n,
            Policy::Off => usize::MAX,
        }
    }

    /// Submissions admitted and not yet answered.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// The instances under way at `now`: admitted and not answered, or stored and not settled
    /// (nor, under the adaptive limit, waiting).
    pub fn under_way(&mut self, now: Millis) -> usize {
        self.forget_waiting(now);
        self.pending.saturating_add(self.admitted.len())
    }

    /// The one door for every change.
    pub fn apply(&mut self, now: Millis, input: Input) -> Decision {
        match input {
            Input::Arrive => self.arrive(now),
            Input::Idle => {
                self.admitted.clear();
                self.order.clear();
                Decision::Noted
            }
            Input::Answered { ticket, stored } => {
                self.pending = self.pending.saturating_sub(1);
                if let Some(instance) = stored {
                    self.track(instance, ticket.admitted_at);
                }
                Decision::Noted
            }
            Input::Settled { instance } => {
                self.forget_waiting(now);
                match self.admitted.remove(&instance) {
                    Some(at) => self.sample(now, now.since(at)),
                    // Settled before its answer came back (only while answers are owed:
                    // otherwise one forgotten or cleared here, which must not fill the list).
                    None if self.pending > 0 => {
                        self.early.push_back(instance);
                        if self.early.len() > EARLY_SETTLED_MOST {
                            self.early.pop_front();
                        }
                    }
                    None => {}
                }
                Decision::Noted
            }
        }
    }

    fn arrive(&mut self, now: Millis) -> Decision {
        let under_way = self.under_way(now);
        self.last_under_way = under_way;
        let limit = self.limit();
        if under_way < limit {
            self.pending += 1;
            return Decision::Admit(Ticket { admitted_at: now });
        }
        Decision::Shed(Shed {
            under_way,
            limit,
            policy: self.policy,
            retry_after: self.retry_after(),
        })
    }

    fn track(&mut self, instance: InstanceId, at: Millis) {
        if let Some(i) = self.early.iter().position(|e| *e == instance) {
            // Settled before its answer came back: never under way here.
            self.early.remove(i);
            return;
        }
        self.admitted.insert(instance, at);
        self.order.push_back((at, instance));
        // Settled ones at the front are done with.
        while self
            .order
            .front()
            .is_some_and(|(_, i)| !self.admitted.contains_key(i))
        {
            self.forget_oldest();
        }
        if self.order.len() > TRACKED_MOST && self.order.len() >= 2 * self.admitted.len() {
            // Settled ones further back go, in one pass once they are half the list (so the
            // pass is paid for by as many settlements, never once per admission).
            let admitted = &self.admitted;
            self.order.retain(|(_, i)| admitted.contains_key(i));
        }
        // Only past the bound with that many still under way does the oldest go (a lost
        // count of a very old instance, never an unbounded list: at most twice the bound).
        while self.admitted.len() > TRACKED_MOST {
            self.forget_oldest();
        }
    }

    /// Under the adaptive limit, forgets the instances under way so long that they are
    /// waiting, not working.
    fn forget_waiting(&mut self, now: Millis) {
        if self.policy != Policy::Adaptive {
            return;
        }
        let long = self.averages.map_or(0.0, |a| a.long);
        let after =
            Duration::from_millis((WAITING_PAST_LONG_AVERAGE * long) as u64).max(MIN_WAITING_AFTER);
        while let Some(&(at, _)) = self.order.front() {
            if now.since(at) <= Millis(u64::try_from(after.as_millis()).unwrap_or(u64::MAX)) {
                return;
            }
            self.forget_oldest();
        }
    }

    fn forget_oldest(&mut self) {
        if let Some((_, instance)) = self.order.pop_front() {
            self.admitted.remove(&instance);
        }
    }

    /// One instance took `took` end to end: the averages move, and with them the limit.
    fn sample(&mut self, now: Millis, took: Millis) {
        let took = took.as_u64().max(1) as f64;
        let averages = match self.averages {
            None => Averages {
                short: took,
                long: took,
                at: now,
            },
            Some(a) => {
                let dt = now.since(a.at).as_u64() as f64;
                let short = ewma(a.short, took, dt, SHORT_SPAN);
                let loaded = (self.last_under_way as f64) >= self.limit / 2.0;
                let span = if loaded && took > a.long {
                    LONG_SPAN_LOADED
                } else {
                    LONG_SPAN
                };
                let mut long = ewma(a.long, took, dt, span);
                // Load dropped well below what the long average remembers: let it forget
                // faster (as Gradient2 does), or the limit could grow on stale evidence.
                if long > 2.0 * short {
                    long *= 0.95;
                }
                Averages {
                    short,
                    long,
                    at: now,
                }
            }
        };
        self.averages = Some(averages);
        if self.policy != Policy::Adaptive {
            return;
        }
        // Less than half the limit in use: the clients, not the limit, set the load (a closed
        // loop of 64 whose latency rose with its own start is not a queue to shed), so
        // neither direction has evidence (as Gradient2).
        if (self.last_under_way as f64) < self.limit / 2.0 {
            return;
        }
        let gradient = (TOLERANCE * averages.long / averages.short).clamp(MIN_GRADIENT, 1.0);
        let target = self.limit * gradient + self.limit.sqrt();
        let smoothed = self.limit * (1.0 - SMOOTHING) + target * SMOOTHING;
        self.limit = smoothed.clamp(MIN_ADMISSION_LIMIT as f64, MAX_ADMISSION_LIMIT as f64);
    }

    fn retry_after(&self) -> Duration {
        let ms = self.averages.map_or(1000.0, |a| a.short);
        let secs = (ms / 1000.0).ceil().max(1.0);
        Duration::from_secs(secs as u64).min(MAX_RETRY_AFTER)
    }
}

/// A time-weighted moving average: a sample `dt` ms after the last one weighs
/// `1 - e^(-dt/span)`, so the average forgets at the same pace whatever the rate of samples.
fn ewma(average: f64, sample: f64, dt: f64, span: Duration) -> f64 {
    let weight = 1.0 - (-dt / span.as_millis() as f64).exp();
    average + (sample - average) * weight
}
