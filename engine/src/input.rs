//! The inputs of the engine: everything that happens to a node's partitions, one variant
//! each (the daemon turns messages, commands' ends, people's actions and time into these).

use mobiwf_proto::{
    ActivityId, Claim, Completed, ControlInstance, InstanceId, NodeId, Notify, StateChanged,
    SyncGranted, SyncRefused, Withdraw,
};

use crate::{Finisher, Lost, Missing};

/// What happens to the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The controller sends a partition of an instance. Its `hour_ms`, when `None`, is this
    /// node's own ([`Engine::set_hour_ms`]); an empty `runs_on` takes everyone's word about
    /// every activity, as before it was sent.
    Deploy(mobiwf_proto::Deploy),
    /// Another partner says an activity finished.
    Notified(Notified),
    /// The daemon holds the content of a file it was asked to fetch ([`Effect::Fetch`]).
    Fetched {
        /// The instance that needed it.
        instance: InstanceId,
        /// The content's reference.
        file: mobiwf_proto::FileRef,
    },
    /// Another partner says an activity that a dependency rule here names entered a state.
    StateChanged(Changed),
    /// The controller says these activities failed (their partner did not answer in time);
    /// they are withdrawn by id, whatever partition the controller names.
    Withdraw(Withdraw),
    /// The controller says contingency activity `by` runs in place of failed `replaced`.
    Substitute {
        /// The instance.
        instance: InstanceId,
        /// The failed activity.
        replaced: ActivityId,
        /// The contingency activity.
        by: ActivityId,
        /// The peer that runs it (whose word about it is taken).
        peer: Option<NodeId>,
    },
    /// The controller says completion activity `by` succeeded: the instance is complete.
    Completed(Completed),
    /// An operator interrupted, resumed or cancelled the instance.
    Control(ControlInstance),
    /// An operator pauses or resumes one activity (`pause`): carried out or refused, the
    /// controller is told either way.
    Pause(mobiwf_proto::PauseOrder),
    /// Time passed: start the activities whose `timeToWait` ran out, fail those that ran longer
    /// than their `timeOut`, try failed commands again, report overdue preconditions. The daemon
    /// sends it at [`Engine::next_deadline`].
    Tick,
    /// An activity finished.
    Finished(Ended),
    /// The controller asks for the compensation of an activity of a partition here (backward
    /// recovery): it runs when the activity succeeded and has one; the controller is told how
    /// it ended, or why it cannot run.
    Compensate(mobiwf_proto::Compensate),
    /// The compensation command of an activity ended.
    CompensationEnded(mobiwf_proto::Compensated),
    /// An operator reruns a failed activity (forward recovery): those of `activities` this
    /// partition holds go back to `NotReady`, and what was heard of each is forgotten.
    Rerun(mobiwf_proto::Rerun),
    /// The controller sent a version of the organisation directory: kept when newer than
    /// the one held (an older one is ignored); then every open work item nobody could be
    /// offered is assigned again.
    Directory(mobiwf_people::Directory),
    /// Deliveries to a peer failed `UNREACHABLE_AFTER_FAILURES` times in a row
    /// (`reachable: false`), or it answered again (`true`): the users whose device it is get
    /// no new offers while it cannot be reached (*Synchronization and Disconnected Operation in
    /// WorkToDo* (IC-03-006), §5.3: marked inactive; they keep what they hold and what they were
    /// offered), and once it answers, open items nobody could be offered are assigned again.
    Link {
        /// The peer.
        peer: NodeId,
        /// True when it answered again.
        reachable: bool,
    },
    /// A user acts on a work item hosted here (see `items`). The answer goes to the
    /// claimant's device as the `answer` of a `Message::Item`; a claim from the controller
    /// is answered only in the `Message::ItemEvents` (a refusal).
    Claim(Claimed),
    /// The controller's synchronization manager granted an activity's request for its class
    /// (`crate::sync`): taken only for the request the activity waits with.
    SyncGranted(SyncGranted),
    /// A grant that came after the node's lease for its request ran out since the request was
    /// asked (the daemon tells it from its round trips with the controller): not used; the
    /// request is released and asked again (`crate::sync`).
    SyncLapsed(SyncGranted),
    /// The manager refused it (it waited too long): the activity fails.
    SyncRefused(SyncRefused),
    /// The daemon killed a command that ran under a grant: its lease ran out.
    SyncLost(Lost),
    /// Another partner says a loop runs again: the activities of its body start their next
    /// pass (see `passes`).
    NewPass(Passed),
}

/// A partner's word that a loop runs again ([`Input::NewPass`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Passed {
    /// Who says so: the peer that runs the loop's end (`None`: the controller).
    pub from: Option<NodeId>,
    /// What it says. Its inline `files` and `holder` are the daemon's, as a notification's.
    pub new_pass: mobiwf_proto::NewPass,
    /// The files among its data whose content the daemon does not hold, and where to fetch
    /// them.
    pub missing: Vec<Missing>,
}

/// A partner's word that an activity finished ([`Input::Notified`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Notified {
    /// Who says so: a partner's peer id, `None` for the controller (relays, contingency
    /// outcomes), whose word is always taken.
    pub from: Option<NodeId>,
    /// What it says. Its inline `files` and `holder` are the daemon's, which keeps the
    /// contents and says which files are still `missing`.
    pub notify: Notify,
    /// The files among its data whose content the daemon does not hold, and where to fetch
    /// them.
    pub missing: Vec<Missing>,
}

/// A partner's word that an activity a dependency rule here names entered a state
/// ([`Input::StateChanged`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// Who says so (as for [`Notified::from`]).
    pub from: Option<NodeId>,
    /// What it says.
    pub change: StateChanged,
}

/// The end of a command's try or of a person's work ([`Input::Finished`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// How it ended.
    pub finish: Finish,
    /// Who says so.
    pub by: Finisher,
    /// Which try of the command ended (ignored for people): the end of an earlier try that
    /// was given up on is ignored.
    pub attempt: u32,
    /// The instance data it wrote (kept when it succeeded): each a name of its `<writes>`; a
    /// person's text for a number is checked as a number. A file's content is already in the
    /// daemon's store.
    pub written: Vec<(String, mobiwf_proto::DataValue)>,
}

/// A user's action on a work item hosted here ([`Input::Claim`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// The claim as it came.
    pub claim: Claim,
    /// The peer id of the device that sent it; `None` when the controller sent it.
    pub from: Option<NodeId>,
    /// The files a completion names whose content the daemon does not hold, and where to
    /// fetch them (the claimant's device).
    pub missing: Vec<Missing>,
}

/// How an activity's work ended, as its command or its person says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// It succeeded.
    Succeeded {
        /// What was said of it (the person's words).
        detail: Option<String>,
        /// The completion flag it ended with (a person's choice, or what its command wrote to
        /// its flag file), read by routes and `<merge flag>`.
        flag: Option<String>,
    },
    /// It failed: a failure has no completion flag (routes and `<merge flag>` read only a
    /// success's).
    Failed {
        /// Why (exit status, the person's words).
        detail: Option<String>,
    },
}

impl Finish {
    /// An end as the wire and the stores spell it, a success or not beside the words and the
    /// flag: a failure's flag is dropped (a failure has none).
    pub fn of(succeeded: bool, detail: Option<String>, flag: Option<String>) -> Finish {
        if succeeded {
            Finish::Succeeded { detail, flag }
        } else {
            Finish::Failed { detail }
        }
    }

    /// The completion flag of a success.
    pub fn flag(&self) -> Option<&str> {
        match self {
            Finish::Succeeded { flag, .. } => flag.as_deref(),
            Finish::Failed { .. } => None,
        }
    }

    /// True when it succeeded.
    pub fn succeeded(&self) -> bool {
        matches!(self, Finish::Succeeded { .. })
    }

    /// What was said of it, success or failure.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Finish::Succeeded { detail, .. } | Finish::Failed { detail } => detail.as_deref(),
        }
    }

    /// Its words, success or failure, taken.
    pub fn into_detail(self) -> Option<String> {
        match self {
            Finish::Succeeded { detail, .. } | Finish::Failed { detail } => detail,
        }
    }
}
