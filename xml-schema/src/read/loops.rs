//! Reads an activity's `<loop to="T" while="FLAG" max="N"/>` (the back edge of a loop it ends)
//! and, in partition documents, the `<member id ip/>`s derivation lists inside it. What the
//! attributes name (the head, the flag's spelling, the limit) is checked by `validate`.

use super::{Ctx, abbreviate, attr_pos, many};
use crate::model::{ActivityId, Loop, LoopMember};
use crate::source_map::Node;
use crate::tree::Element;

pub(crate) const LOOP_EXAMPLE: &str = "<loop to=\"3\" while=\"again\" max=\"5\"/>";
const LOOP_ATTRIBUTES: &[&str] = &["to", "while", "max"];

impl Ctx {
    /// The `<loop>` element `el` of activity `index` (`owner` in messages); `None` when a
    /// required attribute is missing or unreadable (the problems are reported).
    pub fn loop_back(&mut self, el: &Element, index: usize, owner: &str) -> Option<Loop> {
        let what = format!("<loop> of {owner}");
        let hint = format!(
            "its attributes are to (the loop's first activity), while (the completion flag that \
             runs it again) and max (how many passes at most), e.g. {LOOP_EXAMPLE}"
        );
        self.check_attrs(el, &what, LOOP_ATTRIBUTES, &hint);
        self.check_content(el, &what, &[many(&["member"])]);
        self.map.set(Node::Loop(index), el.pos);
        for name in LOOP_ATTRIBUTES {
            if el.attr(&[name]).is_some() {
                self.map
                    .set(Node::LoopAttr(index, name), attr_pos(el, name));
            }
        }
        let to = self.loop_number(el, &what, "to", "the id of the loop's first activity");
        let max = self.loop_number(el, &what, "max", "how many passes may run, e.g. max=\"5\"");
        let while_flag = el.attr(&["while"]).map(str::to_owned);
        if while_flag.is_none() {
            self.error(
                el.pos,
                format!(
                    "{what} has no while; add the completion flag that runs the loop again, e.g. \
                     {LOOP_EXAMPLE}"
                ),
            );
        }
        let body = el
            .children_named(&["member"])
            .enumerate()
            .filter_map(|(m, member)| self.loop_member(member, (index, m), &what))
            .collect();
        let max = u32::try_from(max?).unwrap_or(u32::MAX);
        Some(Loop {
            to: ActivityId(to?),
            while_flag: while_flag?,
            max,
            body,
        })
    }

    /// The whole number in attribute `name` of `<loop>` `el` (`what`), reported when missing
    /// or not one; `expected` says what it holds.
    fn loop_number(&mut self, el: &Element, what: &str, name: &str, expected: &str) -> Option<u64> {
        let Some(raw) = el.attr(&[name]) else {
            self.error(
                el.pos,
                format!("{what} has no {name}; add {name}, {expected}: {LOOP_EXAMPLE}"),
            );
            return None;
        };
        let n = raw.trim().parse::<u64>().ok();
        if n.is_none() {
            self.error(
                attr_pos(el, name),
                format!(
                    "{what} has {name}=\"{}\", not a whole number; {name} is {expected}",
                    abbreviate(raw)
                ),
            );
        }
        n
    }

    /// `<member id ip/>` `m` of the loop of activity `index`.
    fn loop_member(
        &mut self,
        el: &Element,
        (index, m): (usize, usize),
        what: &str,
    ) -> Option<LoopMember> {
        let member = format!("<member> of {what}");
        self.check_attrs(
            el,
            &member,
            &["id", "ip", "carries"],
            "its attributes are id, ip and carries, e.g. <member id=\"3\" \
             ip=\"/ip4/10.0.0.2/tcp/4001\" carries=\"count\"/>",
        );
        self.check_content(el, &member, &[]);
        self.map.set(Node::LoopMember(index, m), el.pos);
        let id = self.id_attr(el, "member")?;
        Some(LoopMember {
            id: ActivityId(id),
            location: el.attr(&["ip"]).unwrap_or_default().to_owned(),
            carries: el
                .attr(&["carries"])
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        })
    }
}
