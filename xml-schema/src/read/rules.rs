//! Reads the dependency rules of both languages: an activity's
//! `<depends>` (nested `<and>`/`<or>` over `<term activity=".." state=".."/>`) and, in
//! partition documents, an adjacent's `<states>`. A part that cannot be read is left out and
//! its problem reported; what a rule names (activities, itself, emptiness, cycles) is checked
//! by `validate`.

use super::{Child, Ctx, abbreviate, attr_pos, many, suggest};
use crate::diagnostic::Pos;
use crate::limits::MAX_RULE_TERMS;
use crate::model::{ActivityId, Rule, TaskState};
use crate::source_map::Node;
use crate::tree::Element;

/// The elements a rule is made of, which `<depends>`, `<and>` and `<or>` hold.
const RULES: &[Child] = &[many(&["term"]), many(&["and"]), many(&["or"])];
const RULE_NAMES: &[&str] = &["term", "and", "or"];
const TERM_EXAMPLE: &str = "<term activity=\"3\" state=\"SUCCEEDED\"/>";

/// Where the rule being read belongs and how many of its rules and terms were read so far, so
/// that each gets its number in the source map.
struct Walk<'a> {
    /// How messages name the activity, e.g. `activity 5`.
    owner: &'a str,
    /// The activity's index in its document.
    index: usize,
    /// Rules (terms, `and`s and `or`s) read so far, in document order.
    rules: usize,
    /// Terms read so far, in document order.
    terms: usize,
}

impl Ctx {
    /// The rule of the `<depends>` element `el` of activity `index` (named `owner` in
    /// messages, e.g. `activity 5`); several rules in it stand for their `and`. `None` when it
    /// holds no rule that could be read (the problems are reported).
    pub fn depends(&mut self, el: &Element, index: usize, owner: &str) -> Option<Rule> {
        let what = format!("<depends> of {owner}");
        self.map.set(Node::Depends(index), el.pos);
        self.check_shape(el, &what, RULES, false);
        if el.children.is_empty() && el.text.trim().is_empty() {
            self.error(
                el.pos,
                format!(
                    "{what} is empty; an empty <depends> never says anything: add a rule such \
                     as {TERM_EXAMPLE}, or remove <depends>"
                ),
            );
            return None;
        }
        let mut walk = Walk {
            owner,
            index,
            rules: 0,
            terms: 0,
        };
        let children: Vec<&Element> = el.children_named(RULE_NAMES).collect();
        let rule = match children.as_slice() {
            [one] => self.rule(one, &mut walk),
            several => {
                // Rule 0 is the `and` that `<depends>` stands for.
                walk.rules = 1;
                let rules: Vec<Rule> = several
                    .iter()
                    .filter_map(|child| self.rule(child, &mut walk))
                    .collect();
                (!rules.is_empty()).then(|| {
                    self.map.set(Node::Rule(index, 0), el.pos);
                    Rule::And(rules)
                })
            }
        };
        if walk.terms > MAX_RULE_TERMS {
            self.error(el.pos, crate::validate::too_many_terms(owner, walk.terms));
        }
        rule
    }

    /// The rule element `el` (`term`, `and` or `or`); `None` when it could not be read.
    fn rule(&mut self, el: &Element, walk: &mut Walk<'_>) -> Option<Rule> {
        if el.name == "term" {
            return self.term(el, walk);
        }
        let what = format!("<{}> of <depends> of {}", el.name, walk.owner);
        self.check_shape(el, &what, RULES, false);
        let k = walk.rules;
        walk.rules += 1;
        let rules: Vec<Rule> = el
            .children_named(RULE_NAMES)
            .filter_map(|child| self.rule(child, walk))
            .collect();
        if rules.is_empty() && !el.children.is_empty() {
            // Every rule inside was unreadable and is reported; leave this one out too, so
            // that it is not reported again as empty.
            walk.rules = k;
            return None;
        }
        self.map.set(Node::Rule(walk.index, k), el.pos);
        Some(if el.name == "and" {
            Rule::And(rules)
        } else {
            Rule::Or(rules)
        })
    }

    /// The `<term activity=".." state=".."/>` element `el`; `None` when it could not be read.
    fn term(&mut self, el: &Element, walk: &mut Walk<'_>) -> Option<Rule> {
        let what = format!("<term> of <depends> of {}", walk.owner);
        self.term_shape(el, &what);
        let activity = self.term_activity(el, &what);
        let state = match el.attr(&["state"]) {
            Some(raw) => {
                let state = TaskState::parse(raw);
                if state.is_none() {
                    let message =
                        unknown_state(&format!("{what} has state=\"{}\"", abbreviate(raw)), raw);
                    self.error(attr_pos(el, "state"), message);
                }
                state
            }
            None => {
                self.error(
                    el.pos,
                    format!(
                        "{what} has no state attribute; add the state the activity must have \
                         entered, one of {}, e.g. {TERM_EXAMPLE}",
                        state_names()
                    ),
                );
                None
            }
        };
        let (activity, state) = (activity?, state?);
        self.map.set(Node::Rule(walk.index, walk.rules), el.pos);
        self.map.set(Node::Term(walk.index, walk.terms), el.pos);
        walk.rules += 1;
        walk.terms += 1;
        Some(Rule::Term { activity, state })
    }

    /// The `activity` attribute of term `el` (`what` in messages).
    fn term_activity(&mut self, el: &Element, what: &str) -> Option<ActivityId> {
        let Some(raw) = el.attr(&["activity"]) else {
            self.error(
                el.pos,
                format!(
                    "{what} has no activity attribute; add the id of the activity whose state \
                     it looks at, e.g. {TERM_EXAMPLE}"
                ),
            );
            return None;
        };
        let id = raw.trim().parse::<u64>().ok().map(ActivityId);
        if id.is_none() {
            self.error(
                attr_pos(el, "activity"),
                format!(
                    "{what} has activity=\"{}\"; an activity id is a whole number, 0 or more, \
                     e.g. {TERM_EXAMPLE}",
                    abbreviate(raw)
                ),
            );
        }
        id
    }

    /// Reports attributes other than `activity` and `state`, and any content, of a term.
    fn term_shape(&mut self, el: &Element, what: &str) {
        for attr in &el.attrs {
            let name = attr.name.as_str();
            let allowed = name == "activity"
                || name == "state"
                || name == "xmlns"
                || name.starts_with("xmlns:")
                || name.starts_with("xsi:");
            if !allowed {
                let hint = suggest(name, &["activity", "state"])
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                self.error(
                    attr.pos,
                    format!(
                        "{what} has an unknown attribute {name}; {hint}its attributes are \
                         activity and state, e.g. {TERM_EXAMPLE}"
                    ),
                );
            }
        }
        if let Some((pos, held)) = super::content_of_empty(el) {
            self.error(
                pos,
                format!(
                    "{what} holds {held}; <term> is empty and says everything in its \
                     attributes activity and state, e.g. {TERM_EXAMPLE}"
                ),
            );
        }
    }

    /// The `<states>` element `el` of an adjacent (`owner` in messages, e.g. `adjacent 3 of
    /// activity 1`): task state names separated by white space, in any case, each once. The
    /// states are returned in [`TaskState::ALL`] order; a name that is not a state is reported
    /// where it is written and left out.
    pub fn states(&mut self, el: &Element, owner: &str) -> Vec<TaskState> {
        let what = format!("<states> of {owner}");
        let text = self.leaf(el);
        let mut states: Vec<TaskState> = Vec::new();
        for (word, pos) in words(text, el.value_pos()) {
            match TaskState::parse(word) {
                Some(state) if states.contains(&state) => self.error(
                    pos,
                    format!(
                        "{what} names {} twice; list each state once",
                        state.published()
                    ),
                ),
                Some(state) => states.push(state),
                None => {
                    let message =
                        unknown_state(&format!("{what} names \"{}\"", abbreviate(word)), word);
                    self.error(pos, message);
                }
            }
        }
        states.sort();
        states
    }
}

/// `NOT_READY, SYNCHRONIZING, ... or SKIPPED`.
fn state_names() -> String {
    let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.published()).collect();
    match names.split_last() {
        Some((last, init)) => format!("{} or {last}", init.join(", ")),
        None => String::new(),
    }
}

/// The message for `raw`, which is not a task state: `said` says where it was found.
fn unknown_state(said: &str, raw: &str) -> String {
    let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.published()).collect();
    let hint = suggest(raw.trim(), &names)
        .map(|s| format!("; did you mean {s}?"))
        .unwrap_or_default();
    format!(
        "{said}, which is not a task state; expected {} (in any case){hint}",
        state_names()
    )
}

/// The words of `text`, each with its position; `start` is where the first word is.
pub(crate) fn words(text: &str, start: Pos) -> Vec<(&str, Pos)> {
    let mut out = Vec::new();
    let mut pos = start;
    let mut word_start: Option<(usize, Pos)> = None;
    let body = text.trim_start();
    for (at, c) in body.char_indices() {
        if c.is_whitespace() {
            if let Some((from, p)) = word_start.take() {
                out.push((&body[from..at], p));
            }
        } else if word_start.is_none() {
            word_start = Some((at, pos));
        }
        if c == '\n' {
            pos = Pos {
                line: pos.line.saturating_add(1),
                column: 1,
            };
        } else {
            pos.column = pos.column.saturating_add(1);
        }
    }
    if let Some((from, p)) = word_start {
        out.push((&body[from..], p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_know_where_they_are() {
        let start = Pos { line: 3, column: 9 };
        let got = words("  RUNNING  failed\n   READY ", start);
        assert_eq!(
            got,
            vec![
                ("RUNNING", start),
                (
                    "failed",
                    Pos {
                        line: 3,
                        column: 18
                    }
                ),
                ("READY", Pos { line: 4, column: 4 }),
            ]
        );
        assert!(words("   ", start).is_empty());
    }

    #[test]
    fn state_names_are_listed_in_order() {
        assert_eq!(
            state_names(),
            "NOT_READY, SYNCHRONIZING, READY, RUNNING, SUCCEEDED, FAILED, CANCELLED or SKIPPED"
        );
    }
}
