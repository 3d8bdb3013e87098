//! Reads the routing extensions of both languages: an activity's `<merge>` (how its
//! preconditions combine), `<routes>` (which successors a completion flag leads to) and
//! `<completion>`. A part that cannot be read keeps its default and its problem is reported;
//! what the parts name (successors, adjacents, how many votes, flag text) is checked by
//! `validate`.

use super::{Ctx, abbreviate, attr_pos, many, suggest};
use crate::model::{ActivityId, Merge, Route};
use crate::source_map::Node;
use crate::tree::Element;

const MERGES: &[&str] = &["and", "or", "vote"];
const MERGE_EXPECTED: &str = "and (the default: every precondition finished), or (the first \
                              to finish) or vote (with votes=\"N\": N of them succeeded)";
const MERGE_ATTRIBUTES: &str = "its attributes are flag (with or) and votes (with vote), e.g. \
                                <merge flag=\"approved\">or</merge> or <merge \
                                votes=\"2\">vote</merge>";
const VOTE_EXAMPLE: &str = "<merge votes=\"2\">vote</merge>";
const ROUTE_EXAMPLE: &str = "<route flag=\"approved\"><to>6</to></route>";
const COMPLETION_EXPECTED: &str = "true (when it succeeds the instance ends, and every activity \
                                   not yet finished is cancelled) or false (the default)";

impl Ctx {
    /// The `<merge>` element `el` of activity `index` (`owner` in messages); `None` when it
    /// cannot be read (the problems are reported).
    pub fn merge(&mut self, el: &Element, index: usize, owner: &str) -> Option<Merge> {
        let what = format!("<merge> of {owner}");
        self.check_attrs(el, &what, &["flag", "votes"], MERGE_ATTRIBUTES);
        for name in ["flag", "votes"] {
            if el.attr(&[name]).is_some() {
                self.map
                    .set(Node::MergeAttr(index, name), attr_pos(el, name));
            }
        }
        let text = self.leaf(el).trim();
        let (flag, votes) = (el.attr(&["flag"]), el.attr(&["votes"]));
        let misplaced = match (text, flag, votes) {
            ("and" | "or", _, Some(raw)) => Some((
                "votes",
                format!(
                    "{what} has votes=\"{}\" with {text}; votes belongs to vote, e.g. \
                     {VOTE_EXAMPLE}: write vote, or remove votes",
                    abbreviate(raw)
                ),
            )),
            ("and" | "vote", Some(raw), _) => Some((
                "flag",
                format!(
                    "{what} has flag=\"{}\" with {text}; a flag belongs to or (the first \
                     precondition to finish with that flag starts the activity), e.g. <merge \
                     flag=\"approved\">or</merge>: write or, or remove flag",
                    abbreviate(raw)
                ),
            )),
            _ => None,
        };
        if let Some((attr, message)) = misplaced {
            self.error(attr_pos(el, attr), message);
            return None;
        }
        match text {
            "and" => Some(Merge::All),
            "or" => Some(Merge::First {
                flag: flag.map(str::to_owned),
            }),
            "vote" => self.votes(el, &what).map(|votes| Merge::Vote { votes }),
            _ => {
                self.unknown_merge(el, &what, text);
                None
            }
        }
    }

    /// The `votes` attribute of `<merge>vote</merge>` `el` (`what` in messages).
    fn votes(&mut self, el: &Element, what: &str) -> Option<u32> {
        let Some(raw) = el.attr(&["votes"]) else {
            self.error(
                el.pos,
                format!(
                    "{what} is vote without votes; add how many preconditions must succeed, \
                     e.g. {VOTE_EXAMPLE}"
                ),
            );
            return None;
        };
        let votes = raw.trim().parse::<u32>().ok();
        if votes.is_none() {
            self.error(
                attr_pos(el, "votes"),
                format!(
                    "{what} has votes=\"{}\"; votes is how many preconditions must succeed, a \
                     whole number from 1 to the number of preconditions, e.g. {VOTE_EXAMPLE}",
                    abbreviate(raw)
                ),
            );
        }
        votes
    }

    /// Reports the text of `<merge>` `el` (`what`), which is none of [`MERGES`].
    fn unknown_merge(&mut self, el: &Element, what: &str, text: &str) {
        let message = if text.is_empty() {
            format!("{what} is empty; expected {MERGE_EXPECTED}")
        } else {
            let hint = suggest(text, MERGES)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            format!(
                "{what} is \"{}\"; expected {MERGE_EXPECTED}{hint}",
                abbreviate(text)
            )
        };
        self.error(el.value_pos(), message);
    }

    /// The routes of the `<routes>` element `el` of activity `index` (`owner` in messages). A
    /// route whose every `<to>` is unreadable is left out (each `<to>` is reported).
    pub fn routes(&mut self, el: &Element, index: usize, owner: &str) -> Vec<Route> {
        let what = format!("<routes> of {owner}");
        self.check_shape(el, &what, &[many(&["route"])], false);
        let mut routes = Vec::new();
        if el.children.is_empty() && el.text.trim().is_empty() {
            self.error(
                el.pos,
                format!(
                    "{what} holds no <route>; add a route such as {ROUTE_EXAMPLE}, or remove \
                     <routes>"
                ),
            );
            return routes;
        }
        for child in el.children_named(&["route"]) {
            if let Some(route) = self.route(child, (index, routes.len()), owner) {
                routes.push(route);
            }
        }
        routes
    }

    /// Route `r` of activity `index`, the `<route>` element `el`.
    fn route(&mut self, el: &Element, (index, r): (usize, usize), owner: &str) -> Option<Route> {
        let flag = el.attr(&["flag"]).map(str::to_owned);
        let what = format!("{} of {owner}", route_name(flag.as_deref()));
        let hint = format!("its only attribute is flag, e.g. {ROUTE_EXAMPLE}");
        self.check_attrs(el, &what, &["flag"], &hint);
        self.check_content(el, &what, &[many(&["to"])]);
        let mut to = Vec::new();
        let mut written = 0;
        for t in el.children_named(&["to"]) {
            written += 1;
            if let Some(id) = self.id_text(t, &what) {
                self.map
                    .set(Node::RouteTo(index, r, to.len()), t.value_pos());
                to.push(ActivityId(id));
            }
        }
        if to.is_empty() && written > 0 {
            return None;
        }
        self.map.set(Node::Route(index, r), el.pos);
        if flag.is_some() {
            self.map
                .set(Node::RouteFlag(index, r), attr_pos(el, "flag"));
        }
        Some(Route { flag, to })
    }

    /// `<completion>`: `true` or `false`.
    pub fn completion(&mut self, el: &Element, owner: &str) -> Option<bool> {
        self.true_false(el, owner, COMPLETION_EXPECTED)
    }

    /// Reports attributes of `el` (`what` in messages) other than `allowed` (and namespace
    /// declarations); `hint` ends the message and says what the element takes.
    pub(super) fn check_attrs(&mut self, el: &Element, what: &str, allowed: &[&str], hint: &str) {
        for attr in &el.attrs {
            let name = attr.name.as_str();
            let known = allowed.contains(&name)
                || name == "xmlns"
                || name.starts_with("xmlns:")
                || name.starts_with("xsi:");
            if !known {
                let guess = suggest(name, allowed)
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                self.error(
                    attr.pos,
                    format!("{what} has an unknown attribute {name}; {guess}{hint}"),
                );
            }
        }
    }
}

/// How messages name a route: `<route flag="approved">`, or `<route>` without a flag.
pub(crate) fn route_name(flag: Option<&str>) -> String {
    match flag {
        Some(flag) => format!("<route flag=\"{}\">", abbreviate(flag)),
        None => "<route>".to_owned(),
    }
}
