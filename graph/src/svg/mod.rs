//! The graph as an SVG document, written by hand: a band and a caption per lane, the edges
//! (`edges`), a rounded box per activity coloured by its state, and the legend (`legend`).
//!
//! What a page or a test can rely on: each activity is a `g` with `class="state-WORD"`,
//! `data-activity="ID"`, `data-state="WORD"` and `data-pass="N"` (WORD as `status` says it;
//! `data-node` for one the controller placed), inside its lane's `g class="lane"`, which has
//! `data-lane="partner"` and `data-partner="NAME"`, or `data-lane="controller"`; each edge is a
//! `g class="edge KIND"` (KIND `precondition`, `contingency` or `loop`, then `skipped` when it
//! leads to or from a skipped activity) with `data-from` and `data-to`. The legend's entries
//! use `data-legend`, never `data-state`. Every name goes through [`escape::xml`].

mod edges;
mod legend;

use crate::escape::{self, cut};
use crate::layout::{BOX_H, BOX_W, Band, CAPTION_W, Layout, MARGIN, Placed};
use crate::model::{ActivityBox, Graph, LaneKey};

/// How many characters of a name fit on a box's first line.
const NAME_CHARS: usize = 20;
/// How many characters fit on a box's second line.
const DETAIL_CHARS: usize = 28;
/// How many characters of a partner's name fit in a lane's caption.
const CAPTION_CHARS: usize = 18;

/// `graph` as an SVG document.
pub fn svg(graph: &Graph) -> String {
    let layout = Layout::of(graph);
    let width = layout.width.max(legend::min_width());
    let legend_top = layout.bottom + MARGIN;
    let height = legend_top + legend::height(width) + MARGIN;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"13\">\n"
    );
    let title = escape::xml(&graph.title);
    out += &format!("<title>{title}</title>\n");
    out += edges::MARKERS;
    out += &format!(
        "<text class=\"title\" x=\"{MARGIN}\" y=\"{}\" font-size=\"15\" \
         font-weight=\"bold\">{title}</text>\n",
        MARGIN + 20
    );
    for (i, band) in layout.lanes.iter().enumerate() {
        out += &band_rect(band, i, width);
    }
    out += &edges::all(graph, &layout);
    for (band, members) in layout.lanes.iter().zip(layout.by_lane()) {
        out += &format!("<g class=\"lane\" {}>\n", lane_attributes(&band.key));
        out += &caption(band);
        for i in members {
            out += &activity(&graph.activities[i], &layout.boxes[i]);
        }
        out += "</g>\n";
    }
    out += &legend::legend(legend_top, width);
    out += "</svg>\n";
    out
}

/// `data-lane="partner" data-partner="NAME"`, or `data-lane="controller"`.
fn lane_attributes(key: &LaneKey) -> String {
    match key {
        LaneKey::Partner(name) => format!(
            "data-lane=\"partner\" data-partner=\"{}\"",
            escape::xml(name)
        ),
        LaneKey::Controller => "data-lane=\"controller\"".to_owned(),
    }
}

/// The fill of the `i`th lane's band: the lanes alternate so that each reads as a band.
pub(crate) fn lane_fill(i: usize) -> &'static str {
    if i.is_multiple_of(2) {
        "#f8f9fa"
    } else {
        "#ffffff"
    }
}

/// A lane's band.
fn band_rect(band: &Band, i: usize, width: i64) -> String {
    let fill = lane_fill(i);
    format!(
        "<rect class=\"lane-band\" {} x=\"{MARGIN}\" y=\"{}\" width=\"{}\" height=\"{}\" \
         fill=\"{fill}\" stroke=\"#dee2e6\"/>\n",
        lane_attributes(&band.key),
        band.top,
        width - 2 * MARGIN,
        band.height
    )
}

/// A lane's caption at its left: the partner's name, and what the lane is.
fn caption(band: &Band) -> String {
    let x = MARGIN + 10;
    format!(
        "<line x1=\"{edge}\" y1=\"{top}\" x2=\"{edge}\" y2=\"{bottom}\" stroke=\"#dee2e6\"/>\n\
         <text class=\"lane-caption\" x=\"{x}\" y=\"{}\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{x}\" y=\"{}\" font-size=\"11\" fill=\"#868e96\">{}</text>\n",
        band.top + 24,
        escape::xml(&cut(band.key.label(), CAPTION_CHARS)),
        band.top + 40,
        band.key.note(),
        edge = MARGIN + CAPTION_W,
        top = band.top,
        bottom = band.top + band.height,
    )
}

/// One activity: a rounded box coloured by its state, its name, and its id (with the pass
/// after the first), its state, and the node the controller placed it on.
fn activity(a: &ActivityBox, at: &Placed) -> String {
    let style = a.state.style();
    let word = a.state.word();
    let mut detail = format!("id {} · {}", a.pass.of(a.id), word);
    let mut node_attribute = String::new();
    if let Some(node) = &a.node {
        detail += &format!(" · on {node}");
        node_attribute = format!(" data-node=\"{}\"", escape::xml(node));
    }
    let name = if a.name.is_empty() {
        format!("activity {}", a.id)
    } else {
        a.name.clone()
    };
    let dash = if style.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let cx = at.x + BOX_W / 2;
    format!(
        "<g class=\"state-{word}\" data-activity=\"{id}\" data-state=\"{word}\" \
         data-pass=\"{pass}\"{node_attribute}>\n\
         <title>{title}</title>\n\
         <rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"8\" \
         fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"1.5\"{dash}/>\n\
         <text x=\"{cx}\" y=\"{name_y}\" text-anchor=\"middle\" font-weight=\"bold\" \
         fill=\"{text}\">{name}</text>\n\
         <text x=\"{cx}\" y=\"{detail_y}\" text-anchor=\"middle\" font-size=\"11\" \
         fill=\"{text}\">{detail}</text>\n</g>\n",
        id = a.id,
        pass = a.pass,
        title = escape::xml(&format!(
            "{name} ({}): {}",
            a.pass.of(a.id),
            a.state.label()
        )),
        x = at.x,
        y = at.y,
        fill = style.fill,
        stroke = style.stroke,
        text = style.text,
        name = escape::xml(&cut(&name, NAME_CHARS)),
        name_y = at.y + 20,
        detail = escape::xml(&cut(&detail, DETAIL_CHARS)),
        detail_y = at.y + 38,
    )
}
