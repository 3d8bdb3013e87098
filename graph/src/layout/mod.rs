//! Where everything goes: a lane per partner from top to bottom (in the order their first
//! activity comes, the controller's lane last), columns by layer (`layers`), rows in each
//! lane by crossing reduction (`order`), then pixels. No layout crate is used: the ones at
//! hand lay out a plain DAG and know nothing of lanes, which here fix each activity's band.
//! The same graph always gives the same layout.

mod layers;
mod order;

use std::collections::BTreeMap;

use mobiwf_proto::ActivityId;

use crate::model::{Graph, LaneKey};
use layers::Link;

/// Around the drawing.
pub const MARGIN: i64 = 20;
/// The title's band at the top.
pub const TITLE_H: i64 = 36;
/// The column of lane captions at the left.
pub const CAPTION_W: i64 = 150;
/// An activity's box.
pub const BOX_W: i64 = 160;
/// An activity's box.
pub const BOX_H: i64 = 48;
/// Between two columns: room for the edges and their labels.
pub const COLUMN_GAP: i64 = 90;
/// Between two rows of a lane.
pub const ROW_GAP: i64 = 24;
/// Above a lane's first row: room for the arcs back.
pub const LANE_TOP: i64 = 44;
/// Below a lane's last row.
pub const LANE_BOTTOM: i64 = 16;

/// A graph laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The lanes, top to bottom.
    pub lanes: Vec<Band>,
    /// Where each activity goes, in the graph's order.
    pub boxes: Vec<Placed>,
    /// The edges that can be drawn (both ends in the graph), in the graph's order.
    pub edges: Vec<Routed>,
    /// How many columns.
    pub columns: usize,
    /// The width of the lanes' area, margins included.
    pub width: i64,
    /// Where the lanes end (the legend goes below).
    pub bottom: i64,
}

/// A lane: its partner and its band.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Band {
    /// Whose lane.
    pub key: LaneKey,
    /// Its top edge.
    pub top: i64,
    /// Its height.
    pub height: i64,
    /// How many rows of activities it has.
    pub rows: usize,
}

/// Where one activity goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// Its column (its layer), from 0.
    pub column: usize,
    /// Its lane, an index in [`Layout::lanes`].
    pub lane: usize,
    /// Its row in its lane, from 0.
    pub row: usize,
    /// Its box's left edge.
    pub x: i64,
    /// Its box's top edge.
    pub y: i64,
}

/// One edge that can be drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routed {
    /// Its index in the graph's edges.
    pub edge: usize,
    /// The index of the activity it leaves.
    pub from: usize,
    /// The index of the activity it reaches.
    pub to: usize,
    /// True when it is drawn as an arc back (a loop's back edge, or one against the
    /// layers); false for an arrow forward.
    pub arc: bool,
}

impl Layout {
    /// The activities of each lane (positions in the graph), lane by lane.
    pub fn by_lane(&self) -> Vec<Vec<usize>> {
        let mut lanes = vec![Vec::new(); self.lanes.len()];
        for (i, placed) in self.boxes.iter().enumerate() {
            if let Some(lane) = lanes.get_mut(placed.lane) {
                lane.push(i);
            }
        }
        lanes
    }

    /// Lays `graph` out.
    pub fn of(graph: &Graph) -> Layout {
        let n = graph.activities.len();
        let (keys, lane) = lanes(graph);
        let index = first_index(graph);
        let mut edges: Vec<Routed> = Vec::new();
        let mut links: Vec<Link> = Vec::new();
        for (i, e) in graph.edges.iter().enumerate() {
            if let (Some(&from), Some(&to)) = (index.get(&e.from), index.get(&e.to)) {
                links.push(Link {
                    from,
                    to,
                    kind: e.kind,
                });
                edges.push(Routed {
                    edge: i,
                    from,
                    to,
                    arc: false,
                });
            }
        }
        let layered = layers::layer(n, &links);
        for (routed, arc) in edges.iter_mut().zip(&layered.arc) {
            routed.arc = *arc;
        }
        let forward: Vec<(usize, usize)> = edges
            .iter()
            .filter(|e| !e.arc)
            .map(|e| (e.from, e.to))
            .collect();
        let rows = order::arrange(&order::Places {
            column: &layered.column,
            lane: &lane,
            links: &forward,
            lanes: keys.len(),
        });
        let columns = layered.column.iter().max().map_or(0, |c| c + 1);
        let mut bands = Vec::with_capacity(keys.len());
        let mut top = MARGIN + TITLE_H;
        for (key, rows) in keys.into_iter().zip(&rows.of_lane) {
            let height = LANE_TOP + row_y(*rows) - ROW_GAP + LANE_BOTTOM;
            bands.push(Band {
                key,
                top,
                height,
                rows: *rows,
            });
            top += height;
        }
        let boxes = (0..n)
            .map(|v| Placed {
                column: layered.column[v],
                lane: lane[v],
                row: rows.row[v],
                x: column_x(layered.column[v]),
                y: bands[lane[v]].top + LANE_TOP + row_y(rows.row[v]),
            })
            .collect();
        Layout {
            lanes: bands,
            boxes,
            edges,
            columns,
            width: column_x(columns) - COLUMN_GAP / 2 + MARGIN,
            bottom: top,
        }
    }
}

/// The left edge of column `c`'s boxes.
fn column_x(c: usize) -> i64 {
    let columns = i64::try_from(c).unwrap_or(i64::MAX);
    (MARGIN + CAPTION_W + COLUMN_GAP / 2).saturating_add(columns.saturating_mul(BOX_W + COLUMN_GAP))
}

/// The top of row `r` below a lane's first row (for `r` rows: their height and a gap).
fn row_y(r: usize) -> i64 {
    i64::try_from(r)
        .unwrap_or(i64::MAX)
        .saturating_mul(BOX_H + ROW_GAP)
}

/// The lanes in order (partners as their first activity comes, the controller's last), and
/// each activity's lane.
fn lanes(graph: &Graph) -> (Vec<LaneKey>, Vec<usize>) {
    let mut keys: Vec<LaneKey> = Vec::new();
    let mut seen: std::collections::BTreeSet<&LaneKey> = std::collections::BTreeSet::new();
    for a in &graph.activities {
        if a.lane != LaneKey::Controller && seen.insert(&a.lane) {
            keys.push(a.lane.clone());
        }
    }
    if graph
        .activities
        .iter()
        .any(|a| a.lane == LaneKey::Controller)
    {
        keys.push(LaneKey::Controller);
    }
    let at: BTreeMap<&LaneKey, usize> = keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let lane = graph
        .activities
        .iter()
        .map(|a| at.get(&a.lane).copied().unwrap_or(0))
        .collect();
    (keys, lane)
}

/// Each activity id's first position in the graph (an id given twice is drawn twice, edges
/// go to the first).
fn first_index(graph: &Graph) -> BTreeMap<ActivityId, usize> {
    let mut index = BTreeMap::new();
    for (i, a) in graph.activities.iter().enumerate() {
        index.entry(a.id).or_insert(i);
    }
    index
}
