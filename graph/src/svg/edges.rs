//! The edges in SVG: an arrow forward from a box's right side to the next one's left side
//! (solid for a precondition, dashed for a contingency), and an arc back over the boxes from
//! top to top (a loop's back edge, labelled with its condition, or an edge against the
//! layers). An edge to or from a skipped activity is greyed, so that the path not taken shows.

use crate::escape;
use crate::layout::{BOX_H, BOX_W, Layout, Placed};
use crate::model::{Edge, EdgeKind, Graph};
use crate::state::Shown;

/// The arrowheads: one per colour an edge can have.
pub(super) const MARKERS: &str = "<defs>\n\
    <marker id=\"arrow-precondition\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
    markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
    <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#495057\"/></marker>\n\
    <marker id=\"arrow-contingency\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
    markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
    <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#e03131\"/></marker>\n\
    <marker id=\"arrow-loop\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
    markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
    <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#7048e8\"/></marker>\n\
    <marker id=\"arrow-skipped\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
    markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
    <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#ced4da\"/></marker>\n\
    </defs>\n";

/// How far an arc back rises above the higher of its ends.
const ARC_RISE: i64 = 30;

/// How an edge of a kind is stroked: colour, dashes, and its arrowhead's id.
pub(super) fn stroke(kind: EdgeKind, greyed: bool) -> (&'static str, &'static str, &'static str) {
    let dash = match kind {
        EdgeKind::Contingency => " stroke-dasharray=\"6 4\"",
        EdgeKind::Precondition | EdgeKind::Loop => "",
    };
    if greyed {
        return ("#ced4da", dash, "arrow-skipped");
    }
    match kind {
        EdgeKind::Precondition => ("#495057", dash, "arrow-precondition"),
        EdgeKind::Contingency => ("#e03131", dash, "arrow-contingency"),
        EdgeKind::Loop => ("#7048e8", dash, "arrow-loop"),
    }
}

/// Every edge that can be drawn, in the graph's order.
pub(super) fn all(graph: &Graph, layout: &Layout) -> String {
    let mut out = String::from("<g class=\"edges\" fill=\"none\">\n");
    for routed in &layout.edges {
        let Some(edge) = graph.edges.get(routed.edge) else {
            continue;
        };
        let (from, to) = (&layout.boxes[routed.from], &layout.boxes[routed.to]);
        let greyed = [routed.from, routed.to]
            .iter()
            .any(|v| graph.activities[*v].state == Shown::Skipped);
        let (d, label_at) = if routed.from == routed.to {
            self_arc(from)
        } else if routed.arc {
            arc(from, to)
        } else {
            forward(from, to)
        };
        out += &one(edge, greyed, &d, label_at);
    }
    out += "</g>\n";
    out
}

/// One edge's element: its path and its label.
fn one(edge: &Edge, greyed: bool, d: &str, (lx, ly): (i64, i64)) -> String {
    let (colour, dash, marker) = stroke(edge.kind, greyed);
    let class = if greyed {
        format!("edge {} skipped", edge.kind.word())
    } else {
        format!("edge {}", edge.kind.word())
    };
    let mut out = format!(
        "<g class=\"{class}\" data-from=\"{}\" data-to=\"{}\">\n\
         <path d=\"{d}\" stroke=\"{colour}\" stroke-width=\"1.5\"{dash} \
         marker-end=\"url(#{marker})\"/>\n",
        edge.from, edge.to
    );
    if let Some(label) = &edge.label {
        out += &format!(
            "<text x=\"{lx}\" y=\"{ly}\" text-anchor=\"middle\" font-size=\"11\" \
             fill=\"{colour}\" stroke=\"#ffffff\" stroke-width=\"3\" \
             paint-order=\"stroke\">{}</text>\n",
            escape::xml(label)
        );
    }
    out += "</g>\n";
    out
}

/// An arrow forward, right side to left side, and where its label goes (above its middle).
fn forward(from: &Placed, to: &Placed) -> (String, (i64, i64)) {
    let (x1, y1) = (from.x + BOX_W, from.y + BOX_H / 2);
    let (x2, y2) = (to.x, to.y + BOX_H / 2);
    let dx = (x2 - x1) / 2;
    let d = format!(
        "M {x1} {y1} C {} {y1}, {} {y2}, {x2} {y2}",
        x1 + dx,
        x2 - dx
    );
    (d, ((x1 + x2) / 2, (y1 + y2) / 2 - 5))
}

/// An arc back from the top of one box to the top of another, and where its label goes (at
/// its highest point).
fn arc(from: &Placed, to: &Placed) -> (String, (i64, i64)) {
    let (x1, y1) = (from.x + BOX_W / 2, from.y);
    let (x2, y2) = (to.x + BOX_W / 2, to.y);
    let c = y1.min(y2) - ARC_RISE;
    let d = format!("M {x1} {y1} C {x1} {c}, {x2} {c}, {x2} {y2}");
    // The curve's middle (t = 1/2) is (y1 + 6c + y2) / 8 high.
    (d, ((x1 + x2) / 2, (y1 + 6 * c + y2) / 8 - 5))
}

/// An activity's loop back to itself: a small arc over its box.
fn self_arc(at: &Placed) -> (String, (i64, i64)) {
    let (x1, x2, y) = (at.x + BOX_W * 2 / 3, at.x + BOX_W / 3, at.y);
    let c = y - ARC_RISE;
    let d = format!("M {x1} {y} C {x1} {c}, {x2} {c}, {x2} {y}");
    (d, (at.x + BOX_W / 2, (2 * y + 6 * c) / 8 - 5))
}
