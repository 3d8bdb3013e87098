//! Whether a waiting activity can go on, never will, or is on a path not taken: its
//! preconditions as its `<merge>` combines them (all of them, the first to finish, or N votes;
//! *A lightweight workflow engine based on a relational structure* (He, Li, Jiao, Liu), §3.2.1),
//! each precondition's outcome following routes (a route that led elsewhere skips the successor)
//! and contingency substitutions, then its `<depends>` rule (`rules`).

use mobiwf_proto::{ActivityId, CANCELLED_BY_RULE, Outcome, StateSet};
use mobiwf_xml_schema::{Merge, PartitionActivity, route_for};

use crate::known::Known;
use crate::rules::{self, Verdict};
use crate::run::{Run, outcome_of};

/// Whether an activity can start.
pub(crate) enum Readiness {
    /// A precondition or its rule is not decided yet.
    Wait,
    /// Its preconditions (as merged) and its rule hold.
    Ready,
    /// It can never run: cancel, for this reason.
    Blocked(String),
    /// It is on a path not taken: skip, for this reason.
    Skipped(String),
}

/// What one precondition says to one successor: its outcome, and the completion flag it ended
/// with.
struct Word<'a> {
    outcome: Outcome,
    flag: Option<&'a str>,
    /// It succeeded, but its route led elsewhere (the outcome is then `Skipped`).
    routed_away: bool,
}

impl Run {
    /// Whether `act` can start now, as far as this run knows.
    pub(crate) fn readiness(&self, act: &PartitionActivity, known: Option<&Known>) -> Readiness {
        let words = act
            .preconditions
            .iter()
            .map(|p| (p.id, self.word(p.id, p.local, act.id, known)));
        let merged = match &act.merge {
            Merge::All => all(words),
            Merge::First { flag } => first(&words.collect::<Vec<_>>(), flag.as_deref()),
            Merge::Vote { votes } => vote(&words.collect::<Vec<_>>(), *votes),
        };
        if !matches!(merged, Readiness::Ready | Readiness::Wait) {
            return merged;
        }
        let Some(rule) = &act.depends else {
            return merged;
        };
        let entered = |id: ActivityId| self.entered(id, known);
        match rules::evaluate(rule, &entered) {
            Verdict::True => merged,
            Verdict::Unknown => Readiness::Wait,
            Verdict::False => Readiness::Blocked(format!(
                "{CANCELLED_BY_RULE} {} can no longer hold",
                rules::describe(rule)
            )),
        }
    }

    /// What precondition `id` says to `successor`: a local one from its record (or, once it
    /// was replaced, its contingency activity's notification), a remote one from
    /// notifications, following substitutions. A success whose routes do not lead to
    /// `successor` is a skip.
    fn word<'a>(
        &'a self,
        id: ActivityId,
        local: bool,
        successor: ActivityId,
        known: Option<&'a Known>,
    ) -> Option<Word<'a>> {
        let replaced = known.is_some_and(|k| k.replaced.contains_key(&id));
        if local && !replaced {
            let (act, p) = (self.activity(id)?, self.progress(id)?);
            let outcome = outcome_of(p.life().wire(), act.contingency)?;
            let flag = p.flag.as_deref();
            let routed_away = outcome == Outcome::Succeeded
                && !act.routes.is_empty()
                && !route_for(&act.routes, flag).is_some_and(|r| r.to.contains(&successor));
            let outcome = if routed_away {
                Outcome::Skipped
            } else {
                outcome
            };
            return Some(Word {
                outcome,
                flag,
                routed_away,
            });
        }
        let known = known?;
        let at = known.stand_in(id)?;
        let outcome = *known.heard.get(&at)?;
        let routed_away = outcome == Outcome::Succeeded
            && known
                .routed
                .get(&at)
                .is_some_and(|to| !to.contains(&successor));
        Some(Word {
            outcome: if routed_away {
                Outcome::Skipped
            } else {
                outcome
            },
            flag: known.flags.get(&at).map(String::as_str),
            routed_away,
        })
    }

    /// The outcome of a remote precondition, as notifications (and substitutions) tell it.
    pub(crate) fn remote_outcome(&self, id: ActivityId, known: Option<&Known>) -> Option<Outcome> {
        let known = known?;
        known.heard.get(&known.stand_in(id)?).copied()
    }

    /// The states activity `id` entered, as far as this run knows: its own record for an
    /// activity of this partition, else what its partner said (nothing known yet: empty).
    pub(crate) fn entered(&self, id: ActivityId, known: Option<&Known>) -> StateSet {
        match self.progress(id) {
            Some(p) => p.entered(),
            None => known
                .and_then(|k| k.states.get(&id).copied())
                .unwrap_or_default(),
        }
    }
}

/// Every precondition (the published meaning): one that can never be met cancels; one on a
/// path not taken skips (a dead path); otherwise each must be met.
fn all<'a>(words: impl Iterator<Item = (ActivityId, Option<Word<'a>>)>) -> Readiness {
    let mut skipped = None;
    let mut waiting = false;
    for (id, word) in words {
        match word.as_ref().map(|w| (w.outcome, w.routed_away)) {
            None => waiting = true,
            Some((Outcome::Succeeded | Outcome::Released, _)) => {}
            Some((Outcome::Blocked, _)) => {
                return Readiness::Blocked(format!("precondition {id} failed or was cancelled"));
            }
            Some((Outcome::Skipped, routed_away)) => {
                skipped = skipped.or(Some((id, routed_away)));
            }
        }
    }
    match (skipped, waiting) {
        (Some((id, true)), _) => Readiness::Skipped(format!(
            "on a path not taken: precondition {id} routed its flag elsewhere"
        )),
        (Some((id, false)), _) => Readiness::Skipped(format!(
            "on a path not taken: precondition {id} was skipped"
        )),
        (None, true) => Readiness::Wait,
        (None, false) => Readiness::Ready,
    }
}

/// The first precondition to be met (with `flag`: met and ended with that flag) starts it;
/// when none can be any more, it is skipped if every one was, else cancelled.
fn first(words: &[(ActivityId, Option<Word>)], flag: Option<&str>) -> Readiness {
    let met = |w: &Word| {
        matches!(w.outcome, Outcome::Succeeded | Outcome::Released)
            && flag.is_none_or(|f| w.flag == Some(f))
    };
    if words.iter().any(|(_, w)| w.as_ref().is_some_and(met)) {
        return Readiness::Ready;
    }
    if words.iter().any(|(_, w)| w.is_none()) {
        return Readiness::Wait;
    }
    let all_skipped = words
        .iter()
        .all(|(_, w)| w.as_ref().is_some_and(|w| w.outcome == Outcome::Skipped));
    let with = flag.map_or(String::new(), |f| format!(" with flag {f}"));
    if all_skipped {
        Readiness::Skipped("on a path not taken: every precondition of its or-merge was".to_owned())
    } else {
        Readiness::Blocked(format!("no precondition of its or-merge finished{with}"))
    }
}

/// `votes` preconditions succeeded starts it; when that many can no longer succeed, it is
/// skipped if the others were all skipped, else cancelled.
fn vote(words: &[(ActivityId, Option<Word>)], votes: u32) -> Readiness {
    let count = |f: &dyn Fn(&Option<Word>) -> bool| {
        u32::try_from(words.iter().filter(|(_, w)| f(w)).count()).unwrap_or(u32::MAX)
    };
    let yes = count(&|w| w.as_ref().is_some_and(|w| w.outcome == Outcome::Succeeded));
    let open = count(&|w| w.is_none());
    if yes >= votes {
        return Readiness::Ready;
    }
    if yes.saturating_add(open) >= votes {
        return Readiness::Wait;
    }
    let others_skipped = words.iter().all(|(_, w)| {
        w.as_ref()
            .is_some_and(|w| matches!(w.outcome, Outcome::Succeeded | Outcome::Skipped))
    });
    let why = format!(
        "only {} of its {} preconditions can still succeed, fewer than the {votes} votes it needs",
        yes.saturating_add(open),
        words.len()
    );
    if others_skipped {
        Readiness::Skipped(why)
    } else {
        Readiness::Blocked(why)
    }
}
