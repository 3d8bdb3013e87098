//! The clauses of a task that say who does it and how it is offered: `ROLE` (as *WorkToDo: um
//! sistema de gerenciamento de workflows para ambientes de comunicação sem fio*, §4.1, writes
//! it), `DEPARTMENT`, `TEAM`, `ASSIGNMENT`, `POLICY`, and `PRIORITY`, `DEADLINE` and
//! `DISCONNECTED_OPERATION`, which a task model may give its tasks too.

use super::Parser;
use crate::limits::MAX_DEADLINE_HOURS;
use crate::model::{Basis, DepartmentId, Method, Policy, RoleId, TeamId};
use crate::pdl::ast::Task;
use crate::pdl::lexer::Token;

const BASES: [Basis; 3] = [Basis::Role, Basis::Department, Basis::Team];
const METHODS: [Method; 5] = [
    Method::Fcfa,
    Method::All,
    Method::LeastWorking,
    Method::Priority,
    Method::RoundRobin,
];
const POLICIES: [&str; 5] = [
    "all",
    "fewest-assigned",
    "fewest-selected",
    "most-frequent",
    "most-recent",
];

impl Parser<'_> {
    /// One clause of people of `task` (`owner` in messages); false when `keyword` is none.
    pub(super) fn people_clause(
        &mut self,
        keyword: &Token<'_>,
        owner: &str,
        task: &mut Task,
    ) -> bool {
        let at = self.here();
        let people = &mut task.activity.people;
        let field = match keyword.text.as_ref() {
            "ROLE" => {
                people.role = self.group("ROLE", owner).map(RoleId::new);
                "role"
            }
            "DEPARTMENT" => {
                people.department = self.group("DEPARTMENT", owner).map(DepartmentId::new);
                "department"
            }
            "TEAM" => {
                people.team = self.group("TEAM", owner).map(TeamId::new);
                "team"
            }
            "ASSIGNMENT" => {
                (people.basis, people.method) = self.assignment(owner);
                "assignment"
            }
            "POLICY" => {
                people.policy = self.policy(owner).unwrap_or_default();
                "policy"
            }
            "PRIORITY" => {
                people.priority = self.priority(owner).unwrap_or(0);
                "priority"
            }
            "DISCONNECTED_OPERATION" => {
                people.disconnected = self.disconnected(owner).unwrap_or(false);
                "disconnected"
            }
            "DEADLINE" => {
                people.deadline = self.deadline(owner);
                "deadline"
            }
            "PAUSE_STOPS_DEADLINE" => {
                people.pause_stops_deadline = self
                    .truth(
                        &format!("the PAUSE_STOPS_DEADLINE of {owner}"),
                        "true (its DEADLINE stops while the task is paused) or false (the \
                         default: it runs on)",
                    )
                    .unwrap_or(false);
                "pauseStopsDeadline"
            }
            _ => return false,
        };
        task.fields.push((field, at));
        true
    }

    /// The id after `ROLE`, `DEPARTMENT` or `TEAM` (`keyword`): a word or a quoted text, not
    /// empty; without the white space around it, as the XML reader takes it.
    fn group(&mut self, keyword: &str, owner: &str) -> Option<String> {
        let what = format!(
            "the {} of the organisation whose members do {owner}",
            keyword.to_ascii_lowercase()
        );
        let named = self.name(&what)?;
        let id = named.text.trim();
        if id.is_empty() {
            self.error(
                named.pos,
                format!(
                    "the {keyword} of {owner} is empty; write the id of a {} of the organisation \
                     document, or leave the clause out",
                    keyword.to_ascii_lowercase()
                ),
            );
            return None;
        }
        Some(id.to_owned())
    }

    /// `ASSIGNMENT [BASIS role|department|team] [METHOD fcfa|all|least-working|priority|
    /// round-robin]`; each part left out (or unreadable) is its default.
    fn assignment(&mut self, owner: &str) -> (Basis, Method) {
        let mut basis = Basis::default();
        let mut method = Method::default();
        if self.eat_word("BASIS") {
            let names = BASES.map(Basis::as_str);
            let expected = "role, department or team";
            let what = format!("the BASIS of {owner}");
            if let Some(i) = self.choice(&what, &names, expected, false) {
                basis = BASES[i];
            }
        }
        if self.eat_word("METHOD") {
            let names = METHODS.map(Method::as_str);
            let expected = "fcfa, all, least-working, priority or round-robin";
            let what = format!("the METHOD of {owner}");
            if let Some(i) = self.choice(&what, &names, expected, false) {
                method = METHODS[i];
            }
        }
        (basis, method)
    }

    /// `POLICY all | fewest-assigned n | fewest-selected n | most-frequent n | most-recent n`.
    fn policy(&mut self, owner: &str) -> Option<Policy> {
        let expected = "all, or fewest-assigned, fewest-selected, most-frequent or most-recent \
                        and how many candidates the item is offered to";
        let which = self.choice(
            &format!("the POLICY of {owner}"),
            &POLICIES,
            expected,
            false,
        )?;
        if which == 0 {
            return Some(Policy::All);
        }
        let at = self.here();
        let n = self.whole::<u32>(
            &format!("the number of POLICY {}", POLICIES[which]),
            "how many candidates the item is offered to, a whole number, 1 or more",
        )?;
        Policy::parse(&format!("{} {n}", POLICIES[which])).or_else(|| {
            self.error(
                at,
                format!(
                    "POLICY {} 0 offers the item to nobody; write 1 or more",
                    POLICIES[which]
                ),
            );
            None
        })
    }

    /// `PRIORITY n`: any whole number that fits in 64 bits.
    pub fn priority(&mut self, owner: &str) -> Option<i64> {
        self.whole::<i64>(
            &format!("the PRIORITY of {owner}"),
            "a whole number (worklists show higher priorities first; default 0)",
        )
    }

    /// `DEADLINE n [HOURS]`: from 1 to [`MAX_DEADLINE_HOURS`].
    pub fn deadline(&mut self, owner: &str) -> Option<u32> {
        let at = self.here();
        let expected = format!(
            "a whole number of hours from 1 to {MAX_DEADLINE_HOURS} (MAX_DEADLINE_HOURS), counted \
             from when the work item is offered, e.g. DEADLINE 48 HOURS"
        );
        let what = format!("the DEADLINE of {owner}");
        let hours = self.whole::<u32>(&what, &expected);
        self.unit("HOURS", "DEADLINE", hours.map(u64::from));
        let hours = hours?;
        if (1..=MAX_DEADLINE_HOURS).contains(&hours) {
            return Some(hours);
        }
        self.error(at, format!("{what} is {hours}; expected {expected}"));
        None
    }

    /// `DISCONNECTED_OPERATION true|false`.
    pub fn disconnected(&mut self, owner: &str) -> Option<bool> {
        self.truth(
            &format!("the DISCONNECTED_OPERATION of {owner}"),
            "true (a person may lock the work item and do it without the network) or false \
             (the default)",
        )
    }
}
