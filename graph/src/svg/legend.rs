//! The legend under the lanes: every state's colours, then the three kinds of edge. Fixed:
//! the same entries in the same order whatever the instance, so a reader learns it once.

use crate::layout::{CAPTION_W, MARGIN};
use crate::model::EdgeKind;
use crate::state::Shown;

/// One state's entry's width.
const ENTRY_W: i64 = 150;
/// One edge's entry's width (its words are longer).
const EDGE_ENTRY_W: i64 = 220;
/// One row of entries.
const ROW_H: i64 = 24;
/// The entries of the edges' row, with their words.
const EDGES: [(EdgeKind, &str); 3] = [
    (EdgeKind::Precondition, "precondition"),
    (EdgeKind::Contingency, "contingency (if it fails)"),
    (EdgeKind::Loop, "loop back"),
];

/// The narrowest drawing the legend fits in: the edges' row.
pub(super) fn min_width() -> i64 {
    2 * MARGIN + CAPTION_W + 3 * EDGE_ENTRY_W
}

/// How many entries a row holds in a drawing `width` wide.
fn per_row(width: i64) -> usize {
    usize::try_from((width - 2 * MARGIN - CAPTION_W) / ENTRY_W)
        .unwrap_or(1)
        .max(1)
}

/// How many rows the states take.
fn state_rows(width: i64) -> i64 {
    i64::try_from(Shown::ALL.len().div_ceil(per_row(width))).unwrap_or(1)
}

/// The legend's height in a drawing `width` wide: the states' rows and the edges' row.
pub(super) fn height(width: i64) -> i64 {
    (state_rows(width) + 1) * ROW_H + 8
}

/// The legend, its top at `top`.
pub(super) fn legend(top: i64, width: i64) -> String {
    let per_row = per_row(width);
    let left = MARGIN + CAPTION_W;
    let mut out = format!(
        "<g class=\"legend\">\n<text x=\"{}\" y=\"{}\" font-weight=\"bold\">legend</text>\n",
        MARGIN + 10,
        top + 16
    );
    for (i, state) in Shown::ALL.iter().enumerate() {
        let (x, y) = at(left, top, i, per_row);
        let style = state.style();
        let dash = if style.dashed {
            " stroke-dasharray=\"4 2\""
        } else {
            ""
        };
        out += &format!(
            "<g class=\"legend-entry\" data-legend=\"{word}\">\
             <rect x=\"{x}\" y=\"{}\" width=\"22\" height=\"14\" rx=\"3\" fill=\"{}\" \
             stroke=\"{}\" stroke-width=\"1.5\"{dash}/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text></g>\n",
            y + 4,
            style.fill,
            style.stroke,
            x + 30,
            y + 15,
            state.label(),
            word = state.word(),
        );
    }
    let edges_y = top + state_rows(width) * ROW_H;
    for (i, (kind, words)) in EDGES.iter().enumerate() {
        let x = left + i64::try_from(i).unwrap_or(0) * EDGE_ENTRY_W;
        let (colour, dash, marker) = super::edges::stroke(*kind, false);
        out += &format!(
            "<g class=\"legend-entry\" data-legend=\"{}\">\
             <path d=\"M {x} {y} L {} {y}\" stroke=\"{colour}\" stroke-width=\"1.5\"{dash} \
             fill=\"none\" marker-end=\"url(#{marker})\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\">{words}</text></g>\n",
            kind.word(),
            x + 26,
            x + 32,
            edges_y + 15,
            y = edges_y + 11,
        );
    }
    out += "</g>\n";
    out
}

/// Where entry `i` goes.
fn at(left: i64, top: i64, i: usize, per_row: usize) -> (i64, i64) {
    let column = i64::try_from(i % per_row).unwrap_or(0);
    let row = i64::try_from(i / per_row).unwrap_or(0);
    (left + column * ENTRY_W, top + row * ROW_H)
}
