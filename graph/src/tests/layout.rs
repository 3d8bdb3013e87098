//! The layout on graphs written by hand: columns, lanes, rows, arcs, and that the same graph
//! always gives the same drawing.

use super::*;
use crate::Layout;
use crate::layout::{BOX_H, BOX_W};

/// Each activity's column, in the graph's order.
fn columns(layout: &Layout) -> Vec<usize> {
    layout.boxes.iter().map(|b| b.column).collect()
}

#[test]
fn a_column_is_the_longest_path_over_the_preconditions() {
    // 1 → 2 → 3 → 4, and 1 → 4 directly: 4 comes after 3, not after 1.
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P1"), Shown::Succeeded),
            act(3, Some("P2"), Shown::Running),
            act(4, Some("P1"), Shown::NotReady),
        ],
        vec![pre(1, 2), pre(2, 3), pre(3, 4), pre(1, 4)],
    );
    let layout = Layout::of(&g);
    assert_eq!(columns(&layout), vec![0, 1, 2, 3]);
    assert_eq!(layout.columns, 4);
    assert!(layout.edges.iter().all(|e| !e.arc));
    // Columns go left to right, a box's width and a gap apart.
    let xs: Vec<i64> = layout.boxes.iter().map(|b| b.x).collect();
    assert!(xs.windows(2).all(|w| w[1] > w[0] + BOX_W), "{xs:?}");
}

#[test]
fn a_lane_per_partner_as_their_first_activity_comes_and_the_controllers_last() {
    let g = graph(
        vec![
            act(1, Some("P2"), Shown::Succeeded),
            act(2, None, Shown::NotReady),
            act(3, Some("P1"), Shown::Running),
            act(4, Some("P2"), Shown::NotReady),
        ],
        vec![pre(1, 3), pre(3, 4), edge(3, 2, EdgeKind::Contingency)],
    );
    let layout = Layout::of(&g);
    let keys: Vec<&LaneKey> = layout.lanes.iter().map(|l| &l.key).collect();
    assert_eq!(
        keys,
        vec![
            &LaneKey::Partner("P2".to_owned()),
            &LaneKey::Partner("P1".to_owned()),
            &LaneKey::Controller
        ]
    );
    let lanes: Vec<usize> = layout.boxes.iter().map(|b| b.lane).collect();
    assert_eq!(lanes, vec![0, 2, 1, 0]);
    // Each box lies inside its lane's band, and the bands do not overlap.
    for b in &layout.boxes {
        let band = &layout.lanes[b.lane];
        assert!(
            b.y > band.top && b.y + BOX_H < band.top + band.height,
            "{b:?} {band:?}"
        );
    }
    for pair in layout.lanes.windows(2) {
        assert_eq!(pair[0].top + pair[0].height, pair[1].top);
    }
    // The contingency activity comes after the one it stands in for.
    assert_eq!(columns(&layout), vec![0, 2, 1, 2]);
}

#[test]
fn a_loops_back_edge_is_an_arc_and_does_not_make_a_column() {
    // Draft → Edit → Review → Publish; Review loops back to Edit.
    let mut back = edge(3, 2, EdgeKind::Loop);
    back.label = Some("while again, max 4".to_owned());
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::Succeeded),
            act(2, Some("P1"), Shown::Succeeded),
            act(3, Some("P2"), Shown::Running),
            act(4, Some("P2"), Shown::NotReady),
        ],
        vec![pre(1, 2), pre(2, 3), back, pre(3, 4)],
    );
    let layout = Layout::of(&g);
    assert_eq!(columns(&layout), vec![0, 1, 2, 3]);
    let arcs: Vec<usize> = layout
        .edges
        .iter()
        .filter(|e| e.arc)
        .map(|e| e.edge)
        .collect();
    assert_eq!(arcs, vec![2], "only the loop's edge is an arc");
}

#[test]
fn a_cycle_is_broken_where_the_walk_closes_it_and_everything_is_still_placed() {
    // The definition's checks refuse such a cycle; the layout must not hang or panic on one.
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::NotReady),
            act(2, Some("P1"), Shown::NotReady),
            act(3, Some("P1"), Shown::NotReady),
        ],
        vec![pre(1, 2), pre(2, 3), pre(3, 1), pre(2, 2)],
    );
    let layout = Layout::of(&g);
    assert_eq!(columns(&layout), vec![0, 1, 2]);
    let arcs: Vec<bool> = layout.edges.iter().map(|e| e.arc).collect();
    assert_eq!(arcs, vec![false, false, true, true]);
}

#[test]
fn an_edge_to_an_activity_the_graph_does_not_have_is_left_out() {
    let g = graph(
        vec![act(1, Some("P1"), Shown::NotReady)],
        vec![pre(1, 9), pre(8, 1)],
    );
    let layout = Layout::of(&g);
    assert!(layout.edges.is_empty());
    assert_eq!(columns(&layout), vec![0]);
}

#[test]
fn the_barycentre_uncrosses_two_chains_in_one_lane() {
    // Column 0 holds 1 then 2; column 1 lists 2's successor first: drawn in that order the
    // two edges would cross.
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::NotReady),
            act(2, Some("P1"), Shown::NotReady),
            act(3, Some("P1"), Shown::NotReady),
            act(4, Some("P1"), Shown::NotReady),
        ],
        vec![pre(2, 3), pre(1, 4)],
    );
    let layout = Layout::of(&g);
    let row = |i: usize| layout.boxes[i].row;
    assert_eq!(layout.lanes[0].rows, 2);
    assert!(row(0) < row(1), "1 above 2");
    assert!(row(3) < row(2), "4 (after 1) above 3 (after 2)");
}

#[test]
fn a_chain_stays_on_its_row_where_the_lane_has_room() {
    // 1 forks to 2 and 3; 4 follows 3 alone and takes 3's row, not the lane's first.
    let g = graph(
        vec![
            act(1, Some("P1"), Shown::NotReady),
            act(2, Some("P1"), Shown::NotReady),
            act(3, Some("P1"), Shown::NotReady),
            act(4, Some("P1"), Shown::NotReady),
        ],
        vec![pre(1, 2), pre(1, 3), pre(3, 4)],
    );
    let layout = Layout::of(&g);
    assert_eq!(layout.boxes[3].row, layout.boxes[2].row);
    assert_ne!(layout.boxes[1].row, layout.boxes[2].row);
}

/// A graph of `n` activities over three partners and the controller, with edges picked by a
/// fixed generator: big and tangled enough for the sweeps to move things.
fn tangled(n: u64) -> Graph {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let partners = [Some("P1"), Some("P2"), Some("P3"), None];
    let activities = (1..=n)
        .map(|id| {
            act(
                id,
                partners[(next() % 4) as usize],
                Shown::ALL[(next() % 9) as usize],
            )
        })
        .collect();
    let mut edges = Vec::new();
    for to in 2..=n {
        for _ in 0..(next() % 3) {
            edges.push(pre(1 + next() % (to - 1), to));
        }
        if next() % 7 == 0 {
            edges.push(edge(to, 1 + next() % (to - 1), EdgeKind::Loop));
        }
        if next() % 11 == 0 {
            edges.push(edge(1 + next() % (to - 1), to, EdgeKind::Contingency));
        }
    }
    graph(activities, edges)
}

#[test]
fn the_same_graph_always_gives_the_same_layout_and_documents() {
    let g = tangled(60);
    let first = Layout::of(&g);
    for _ in 0..5 {
        assert_eq!(Layout::of(&g.clone()), first);
    }
    assert_eq!(crate::svg(&g), crate::svg(&g.clone()));
    assert_eq!(crate::dot(&g), crate::dot(&g.clone()));
    // Every forward edge goes left to right; no two boxes of a lane overlap.
    for e in first.edges.iter().filter(|e| !e.arc) {
        assert!(
            first.boxes[e.from].column < first.boxes[e.to].column,
            "{e:?}"
        );
    }
    let mut places: Vec<(usize, usize, usize)> = first
        .boxes
        .iter()
        .map(|b| (b.lane, b.column, b.row))
        .collect();
    places.sort_unstable();
    places.dedup();
    assert_eq!(places.len(), first.boxes.len(), "two boxes in one place");
}

#[test]
fn a_long_chain_is_laid_out_without_recursion() {
    // A walk that recursed per activity would overflow the test thread's stack here.
    let n = 20_000;
    let activities = (1..=n)
        .map(|id| act(id, Some("P1"), Shown::NotReady))
        .collect();
    let edges = (1..n).map(|id| pre(id, id + 1)).collect();
    let layout = Layout::of(&graph(activities, edges));
    assert_eq!(layout.columns, 20_000);
}
