//! The delivery decisions of the daemons' shell, pure: what makes a message's effect happen
//! exactly once although it is delivered at least once. The runtime's shell
//! (`mobiwf_runtime::daemon` and `mobiwf_runtime::outbox`) carries them out with RocksDB,
//! libp2p and tokio's clock; the simulator (`mobiwf-sim`) carries out the same decisions on
//! its simulated disk, network and clock, so that what it checks is the code that runs.
//!
//! - `seen`: the receiver's apply-once rule (a floor per sender, the ids applied above it);
//! - `lane`: one destination peer's backoff, probe and reachability, on a clock it is given;
//! - `attempt`: what a delivery makes of each try, how an answered entry leaves the outbox,
//!   and what each try tells its receiver was answered.

pub mod attempt;
pub mod lane;
pub mod seen;

pub use attempt::{
    LinkError, Next, Removal, Tries, UNANSWERED_PAUSE_MAX, UNANSWERED_PAUSE_MIN, answered_below,
};
pub use lane::{Backoff, Gate, LaneState, Moment, UNREACHABLE_AFTER_FAILURES};
pub use seen::{
    ByRecord, Judgement, Ledger, Look, MAX_SEEN_ABOVE_FLOOR, Raise, Verdict, foreign_id,
};
