//! Rows: where each activity stands in its lane. The activities of one lane and column form a
//! cell, stacked top to bottom; a lane is as many rows high as its fullest cell. The order in
//! each cell is the barycentre heuristic of Sugiyama, Tagawa and Toda, *Methods for Visual
//! Understanding of Hierarchical System Structures*: sweeping the columns left to right by
//! the mean height of each activity's predecessors, then back by its successors', a fixed
//! number of times; ties keep the order they had (first the graph's), so the outcome depends
//! on the graph alone. Each activity then takes the row nearest that mean that keeps its
//! cell's order, so that a chain runs straight where the lane has room.

use std::collections::BTreeMap;

/// How many times the columns are swept each way.
const SWEEPS: usize = 4;

/// Where the activities stand: the rows of each lane, and each activity's row in its lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rows {
    /// How many rows each lane has (at least one).
    pub of_lane: Vec<usize>,
    /// Each activity's row, from 0 at its lane's top.
    pub row: Vec<usize>,
}

/// The activities' places: each one's column and lane, the links that layer (`from`, `to`,
/// in columns left to right), and how many lanes there are.
pub(crate) struct Places<'a> {
    /// Each activity's column.
    pub column: &'a [usize],
    /// Each activity's lane.
    pub lane: &'a [usize],
    /// The links between columns.
    pub links: &'a [(usize, usize)],
    /// How many lanes.
    pub lanes: usize,
}

/// Orders the cells and gives each activity its row.
pub(crate) fn arrange(places: &Places<'_>) -> Rows {
    let n = places.column.len();
    let mut cells: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for v in 0..n {
        cells
            .entry((places.column[v], places.lane[v]))
            .or_default()
            .push(v);
    }
    let mut of_lane = vec![1usize; places.lanes];
    for ((_, lane), cell) in &cells {
        of_lane[*lane] = of_lane[*lane].max(cell.len());
    }
    let offset: Vec<usize> = of_lane
        .iter()
        .scan(0, |sum, rows| {
            let at = *sum;
            *sum += rows;
            Some(at)
        })
        .collect();
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to) in places.links {
        before[to].push(from);
        after[from].push(to);
    }
    // An activity's height while the cells are ordered: its lane's first row plus its place.
    let mut height = vec![0.0f64; n];
    for ((_, lane), cell) in &cells {
        for (slot, v) in cell.iter().enumerate() {
            height[*v] = (offset[*lane] + slot) as f64;
        }
    }
    let columns = places.column.iter().max().map_or(0, |c| c + 1);
    for _ in 0..SWEEPS {
        for column in 1..columns {
            sweep(&mut cells, (column, &offset), &before, &mut height);
        }
        for column in (0..columns.saturating_sub(1)).rev() {
            sweep(&mut cells, (column, &offset), &after, &mut height);
        }
    }
    let mut row = vec![0usize; n];
    for ((_, lane), cell) in &cells {
        let both = |v: usize| mean(before[v].iter().chain(&after[v]), &height);
        settle(cell, of_lane[*lane], offset[*lane], both, &mut row);
    }
    Rows { of_lane, row }
}

/// Orders every cell of `column` by the mean height of each activity's `neighbours` (its
/// own height when it has none there), and gives its activities their new heights (the
/// lanes' first rows at `offset`).
fn sweep(
    cells: &mut BTreeMap<(usize, usize), Vec<usize>>,
    (column, offset): (usize, &[usize]),
    neighbours: &[Vec<usize>],
    height: &mut [f64],
) {
    for ((_, lane), cell) in cells.range_mut((column, 0)..(column + 1, 0)) {
        let mut keyed: Vec<(f64, usize)> = cell
            .iter()
            .map(|v| {
                (
                    mean(neighbours[*v].iter(), height).unwrap_or(height[*v]),
                    *v,
                )
            })
            .collect();
        // A stable sort: activities with the same mean keep their order.
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        *cell = keyed.into_iter().map(|(_, v)| v).collect();
        for (slot, v) in cell.iter().enumerate() {
            height[*v] = (offset[*lane] + slot) as f64;
        }
    }
}

/// The mean height of `of`, none when empty.
fn mean<'a>(of: impl Iterator<Item = &'a usize>, height: &[f64]) -> Option<f64> {
    let (sum, count) = of.fold((0.0, 0usize), |(s, c), v| (s + height[*v], c + 1));
    (count > 0).then(|| sum / count as f64)
}

/// Gives the activities of one cell (in order) rows of a lane of `rows` rows starting at
/// height `offset`: each the row nearest its `wanted` height that keeps the order.
fn settle(
    cell: &[usize],
    rows: usize,
    offset: usize,
    wanted: impl Fn(usize) -> Option<f64>,
    row: &mut [usize],
) {
    let k = cell.len();
    let mut next = 0usize;
    for (i, v) in cell.iter().enumerate() {
        // The last row that leaves room below for the rest of the cell.
        let highest = rows.max(k) - k + i;
        let want = wanted(*v).map_or(i, |h| {
            let h = (h - offset as f64).round();
            if h <= 0.0 { 0 } else { h as usize }
        });
        let r = want.max(next).max(i).min(highest);
        row[*v] = r;
        next = r + 1;
    }
}
