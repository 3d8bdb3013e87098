//! The graph in Graphviz's DOT, with what the SVG shows: a cluster per lane (`label` the
//! partner's name), the activities coloured by state (`class="state-WORD"`, a `tooltip` with
//! the whole name), the columns of the layout as `rank=same` groups (so `dot` keeps them),
//! the edges styled by kind (a loop's back edge does not constrain the ranks) and greyed off
//! the path taken, and the legend as a cluster of its own. Every name goes through
//! [`escape::dot`].

use std::collections::BTreeMap;

use crate::escape;
use crate::layout::Layout;
use crate::model::{ActivityBox, EdgeKind, Graph, LaneKey};
use crate::state::Shown;

/// `graph` as a DOT document.
pub fn dot(graph: &Graph) -> String {
    let layout = Layout::of(graph);
    let mut out = format!(
        "digraph \"mobiwf\" {{\n  graph [rankdir=LR, newrank=true, fontname=\"Helvetica\", \
         labelloc=t, label=\"{}\"];\n  node [shape=box, style=\"rounded,filled\", \
         fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
        escape::dot(&graph.title)
    );
    for (i, band) in layout.lanes.iter().enumerate() {
        let note = match &band.key {
            LaneKey::Partner(_) => String::new(),
            LaneKey::Controller => format!(" ({})", LaneKey::Controller.note()),
        };
        out += &format!(
            "  subgraph \"cluster_lane_{i}\" {{\n    label=\"{}{note}\";\n    style=filled;\n    \
             fillcolor=\"{}\";\n    color=\"#dee2e6\";\n",
            escape::dot(band.key.label()),
            crate::svg::lane_fill(i)
        );
        for (a, placed) in graph.activities.iter().zip(&layout.boxes) {
            if placed.lane == i {
                out += &format!("    {}\n", node(a));
            }
        }
        out += "  }\n";
    }
    let mut columns: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (a, placed) in graph.activities.iter().zip(&layout.boxes) {
        columns
            .entry(placed.column)
            .or_default()
            .push(format!("\"{}\";", a.id));
    }
    for ids in columns.values() {
        out += &format!("  {{ rank=same; {} }}\n", ids.join(" "));
    }
    for routed in &layout.edges {
        let Some(edge) = graph.edges.get(routed.edge) else {
            continue;
        };
        let greyed = [routed.from, routed.to]
            .iter()
            .any(|v| graph.activities[*v].state == Shown::Skipped);
        let mut attributes = vec![format!("class=\"edge {}\"", edge.kind.word())];
        attributes.extend(edge_style(edge.kind, greyed));
        if let Some(label) = &edge.label {
            attributes.push(format!("label=\"{}\"", escape::dot(label)));
        }
        out += &format!(
            "  \"{}\" -> \"{}\" [{}];\n",
            edge.from,
            edge.to,
            attributes.join(", ")
        );
    }
    out += &legend();
    out += "}\n";
    out
}

/// An activity's node statement.
fn node(a: &ActivityBox) -> String {
    let style = a.state.style();
    let name = if a.name.is_empty() {
        format!("activity {}", a.id)
    } else {
        a.name.clone()
    };
    let mut detail = format!("id {} · {}", a.pass.of(a.id), a.state.word());
    if let Some(node) = &a.node {
        detail += &format!(" · on {node}");
    }
    let dashed = if style.dashed { ",dashed" } else { "" };
    format!(
        "\"{}\" [label=\"{}\\n{}\", class=\"state-{}\", style=\"rounded,filled{dashed}\", \
         fillcolor=\"{}\", color=\"{}\", fontcolor=\"{}\", tooltip=\"{}\"];",
        a.id,
        escape::dot(&name),
        escape::dot(&detail),
        a.state.word(),
        style.fill,
        style.stroke,
        style.text,
        escape::dot(&format!(
            "{name} ({}): {}",
            a.pass.of(a.id),
            a.state.label()
        )),
    )
}

/// How an edge of `kind` is drawn, as DOT attributes.
fn edge_style(kind: EdgeKind, greyed: bool) -> Vec<String> {
    let colour = match kind {
        _ if greyed => "#ced4da",
        EdgeKind::Precondition => "#495057",
        EdgeKind::Contingency => "#e03131",
        EdgeKind::Loop => "#7048e8",
    };
    let mut out = vec![
        format!("color=\"{colour}\""),
        format!("fontcolor=\"{colour}\""),
    ];
    match kind {
        EdgeKind::Precondition => {}
        EdgeKind::Contingency => out.push("style=dashed".to_owned()),
        EdgeKind::Loop => out.push("constraint=false".to_owned()),
    }
    out
}

/// The legend: a node per state, in a cluster of its own.
fn legend() -> String {
    let mut out = String::from(
        "  subgraph \"cluster_legend\" {\n    label=\"legend\";\n    color=\"#dee2e6\";\n",
    );
    let mut ids = Vec::new();
    for state in Shown::ALL {
        let style = state.style();
        let dashed = if style.dashed { ",dashed" } else { "" };
        out += &format!(
            "    \"legend_{word}\" [label=\"{}\", style=\"rounded,filled{dashed}\", \
             fillcolor=\"{}\", color=\"{}\", fontcolor=\"{}\"];\n",
            state.label(),
            style.fill,
            style.stroke,
            style.text,
            word = state.word(),
        );
        ids.push(format!("\"legend_{}\";", state.word()));
    }
    out += &format!("    {{ rank=same; {} }}\n  }}\n", ids.join(" "));
    out
}
