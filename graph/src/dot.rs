//! The graph in Graphviz's DOT, with what the SVG shows: a cluster per lane (`label` the
//! partner's name), the activities coloured by state (`class="state-WORD"`, a `tooltip` with
//! the whole name), the columns of the layout as `rank=same` groups (so `dot` keeps them),
//! the edges styled by kind (a loop's back edge does not constrain the ranks) and greyed off
//! the path taken, and the legend as a row of the states' colours under the title. Every name
//! goes through [`escape::dot`], or [`escape::xml`] in the title (an HTML-like label).

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
         labelloc=t, label={}];\n  node [shape=box, style=\"rounded,filled\", \
         fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
        caption(&graph.title)
    );
    for (i, (band, members)) in layout.lanes.iter().zip(layout.by_lane()).enumerate() {
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
        for a in members {
            out += &format!("    {}\n", node(&graph.activities[a]));
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

/// The graph's caption, an HTML-like label: the title (escaped as XML, which such labels
/// are) above the legend, a row of the states' colours (so that the legend takes no rank).
fn caption(title: &str) -> String {
    let mut cells = String::new();
    for state in Shown::ALL {
        let style = state.style();
        let dashed = if style.dashed {
            " style=\"dashed\""
        } else {
            ""
        };
        cells += &format!(
            "<td bgcolor=\"{}\" color=\"{}\"{dashed}><font color=\"{}\">{}</font></td>",
            style.fill,
            style.stroke,
            style.text,
            state.label(),
        );
    }
    format!(
        "<<table border=\"0\" cellborder=\"1\" cellspacing=\"4\" cellpadding=\"4\"><tr>\
         <td colspan=\"{}\" border=\"0\">\
         {}</td></tr><tr>{cells}</tr></table>>",
        Shown::ALL.len(),
        escape::xml(title)
    )
}
