//! Reads the people extensions of an activity, in both languages: `<role>`, `<department>`,
//! `<team>`, `<assignment basis=".." method=".."/>`, `<policy>`, `<priority>`,
//! `<disconnected>` and `<deadline>`. A part that cannot be read keeps its default and its problem is
//! reported; whether the parts fit together (and the activity's kind) is checked by
//! `validate`.

use super::{Ctx, abbreviate, suggest};
use crate::limits::MAX_DEADLINE_HOURS;
use crate::model::{Basis, DepartmentId, Method, People, Policy, RoleId, TeamId};
use crate::tree::Element;

const BASES: &[&str] = &["role", "department", "team"];
const METHODS: &[&str] = &["fcfa", "all", "least-working", "priority", "round-robin"];
const POLICIES: &[&str] = &[
    "all",
    "fewest-assigned",
    "fewest-selected",
    "most-frequent",
    "most-recent",
];
const POLICY_EXPECTED: &str = "all, fewest-assigned N, fewest-selected N, most-frequent N or \
                               most-recent N, where N is how many candidates the item is offered \
                               to (a whole number, 1 or more)";
const ASSIGNMENT_EXAMPLE: &str = "<assignment basis=\"role\" method=\"fcfa\"/>";

impl Ctx {
    /// The people extensions among the children of activity `el` (named `owner` in messages,
    /// e.g. `activity 17`); the default when it has none.
    pub fn people(&mut self, el: &Element, owner: &str) -> People {
        let (basis, method) = el
            .child(&["assignment"])
            .map(|e| self.assignment(e, owner))
            .unwrap_or_default();
        People {
            role: el
                .child(&["role"])
                .and_then(|e| self.group_id(e, owner, "a role", "tech"))
                .map(RoleId::new),
            department: el
                .child(&["department"])
                .and_then(|e| self.group_id(e, owner, "a department", "field"))
                .map(DepartmentId::new),
            team: el
                .child(&["team"])
                .and_then(|e| self.group_id(e, owner, "a team", "north"))
                .map(TeamId::new),
            basis: basis.unwrap_or_default(),
            method: method.unwrap_or_default(),
            policy: el
                .child(&["policy"])
                .and_then(|e| self.policy(e, owner))
                .unwrap_or_default(),
            priority: el
                .child(&["priority"])
                .and_then(|e| self.priority(e, owner))
                .unwrap_or(0),
            disconnected: el
                .child(&["disconnected"])
                .and_then(|e| self.disconnected(e, owner))
                .unwrap_or(false),
            deadline: el
                .child(&["deadline"])
                .and_then(|e| self.deadline(e, owner)),
            pause_stops_deadline: el
                .child(&["pauseStopsDeadline"])
                .and_then(|e| self.pause_stops_deadline(e, owner))
                .unwrap_or(false),
        }
    }

    /// `<deadline>`: hours, from 1 to [`MAX_DEADLINE_HOURS`].
    fn deadline(&mut self, el: &Element, owner: &str) -> Option<u32> {
        let expected = format!(
            "a whole number of hours from 1 to {MAX_DEADLINE_HOURS}, counted from when the work \
             item is offered (e.g. <deadline>72</deadline>)"
        );
        let n = self.integer(el, owner, &expected)?;
        let hours = u32::try_from(n)
            .ok()
            .filter(|h| (1..=MAX_DEADLINE_HOURS).contains(h));
        if hours.is_none() {
            self.error(
                el.value_pos(),
                format!("<deadline> of {owner} is {n}; expected {expected}"),
            );
        }
        hours
    }

    /// The id inside `<role>`, `<department>` or `<team>` (trimmed); `what` names the thing of
    /// the organisation document it refers to, `example` is a sample id.
    fn group_id(&mut self, el: &Element, owner: &str, what: &str, example: &str) -> Option<String> {
        let text = self.leaf(el).trim();
        if text.is_empty() {
            self.error(
                el.value_pos(),
                format!(
                    "<{name}> of {owner} is empty; write the id of {what} of the organisation \
                     document, e.g. <{name}>{example}</{name}>, or remove <{name}>",
                    name = el.name
                ),
            );
            return None;
        }
        Some(text.to_owned())
    }

    /// The `basis` and `method` attributes of `<assignment>`; `None` where absent or unreadable.
    fn assignment(&mut self, el: &Element, owner: &str) -> (Option<Basis>, Option<Method>) {
        let what = format!("<assignment> of {owner}");
        self.assignment_shape(el, &what);
        let basis = el.attr(&["basis"]).and_then(|raw| {
            let basis = Basis::parse(raw.trim());
            if basis.is_none() {
                self.bad_choice(el, &what, "basis", raw, BASES);
            }
            basis
        });
        let method = el.attr(&["method"]).and_then(|raw| {
            let method = Method::parse(raw.trim());
            if method.is_none() {
                self.bad_choice(el, &what, "method", raw, METHODS);
            }
            method
        });
        (basis, method)
    }

    /// Reports attributes other than `basis` and `method`, and any content, of `<assignment>`.
    fn assignment_shape(&mut self, el: &Element, what: &str) {
        for attr in &el.attrs {
            let name = attr.name.as_str();
            let allowed = name == "basis"
                || name == "method"
                || name == "xmlns"
                || name.starts_with("xmlns:")
                || name.starts_with("xsi:");
            if !allowed {
                let hint = suggest(name, &["basis", "method"])
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                self.error(
                    el.pos,
                    format!(
                        "{what} has an unknown attribute {name}; {hint}its attributes are basis \
                         and method, e.g. {ASSIGNMENT_EXAMPLE}"
                    ),
                );
            }
        }
        if let Some(child) = el.children.first() {
            self.error(
                child.pos,
                format!(
                    "{what} holds <{}>; <assignment> is empty and says everything in its \
                     attributes basis and method, e.g. {ASSIGNMENT_EXAMPLE}",
                    child.name
                ),
            );
        } else if let (Some(pos), false) = (el.text_pos, el.text.trim().is_empty()) {
            self.error(
                pos,
                format!(
                    "{what} holds the text \"{}\"; <assignment> is empty and says everything in \
                     its attributes basis and method, e.g. {ASSIGNMENT_EXAMPLE}",
                    abbreviate(el.text.trim())
                ),
            );
        }
    }

    /// Reports attribute `attr` of `el` (`what`) holding `raw`, none of the `accepted` values.
    fn bad_choice(&mut self, el: &Element, what: &str, attr: &str, raw: &str, accepted: &[&str]) {
        let raw = raw.trim();
        let hint = suggest(raw, accepted)
            .map(|s| format!("; did you mean {s}?"))
            .unwrap_or_default();
        self.error(
            el.pos,
            format!(
                "{what} has {attr}=\"{}\"; expected {}{hint}",
                abbreviate(raw),
                one_of(accepted)
            ),
        );
    }

    /// `<policy>`: `all` or one of the other four names and a number from 1.
    fn policy(&mut self, el: &Element, owner: &str) -> Option<Policy> {
        let text = self.leaf(el).trim();
        if let Some(policy) = Policy::parse(text) {
            return Some(policy);
        }
        let what = format!("<policy> of {owner}");
        let mut words = text.split_whitespace();
        let (name, number, more) = (words.next(), words.next(), words.next().is_some());
        let message = match name {
            None => format!("{what} is empty; expected {POLICY_EXPECTED}"),
            Some(name) if !POLICIES.contains(&name) => {
                let hint = suggest(name, POLICIES)
                    .map(|s| format!("; did you mean {s}?"))
                    .unwrap_or_default();
                format!(
                    "{what} is \"{}\"; expected {POLICY_EXPECTED}{hint}",
                    abbreviate(text)
                )
            }
            Some("all") => format!(
                "{what} is \"{}\"; policy all offers the item to every candidate and takes no \
                 number, so write <policy>all</policy>",
                abbreviate(text)
            ),
            Some(name) if number.is_none() => format!(
                "{what} is \"{name}\" without a number; add how many candidates the item is \
                 offered to, e.g. <policy>{name} 2</policy>"
            ),
            Some(name) if more => format!(
                "{what} is \"{}\"; write the policy name and one number, e.g. <policy>{name} \
                 2</policy>",
                abbreviate(text)
            ),
            Some(name) => format!(
                "{what} is \"{}\"; the number after {name} is how many candidates the item is \
                 offered to, a whole number from 1 to {}, e.g. <policy>{name} 2</policy>",
                abbreviate(text),
                u32::MAX
            ),
        };
        self.error(el.value_pos(), message);
        None
    }

    /// `<priority>`: any whole number that fits in 64 bits.
    fn priority(&mut self, el: &Element, owner: &str) -> Option<i64> {
        let expected = format!(
            "a whole number from {} to {} (worklists show higher priorities first; default 0)",
            i64::MIN,
            i64::MAX
        );
        let n = self.integer(el, owner, &expected)?;
        let priority = i64::try_from(n).ok();
        if priority.is_none() {
            self.error(
                el.value_pos(),
                format!("<priority> of {owner} is {n}; expected {expected}"),
            );
        }
        priority
    }

    /// `<disconnected>`: `true` or `false`.
    fn disconnected(&mut self, el: &Element, owner: &str) -> Option<bool> {
        const EXPECTED: &str = "true (a person may lock the item and work on it without the \
                                network) or false (the default)";
        self.true_false(el, owner, EXPECTED)
    }

    /// `<pauseStopsDeadline>`: `true` or `false`.
    fn pause_stops_deadline(&mut self, el: &Element, owner: &str) -> Option<bool> {
        const EXPECTED: &str = "true (its <deadline> stops while the activity is paused) or \
                                false (the default: it runs on)";
        self.true_false(el, owner, EXPECTED)
    }
}

/// `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
