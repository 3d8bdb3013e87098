//! Columns: each activity's layer is the longest path to it over the edges that go forward
//! in time (preconditions, then contingencies). Loops' back edges never count, nor an edge
//! that would close a cycle (the definition's checks refuse cycles through preconditions;
//! this keeps the layout total on any graph): those are drawn as arcs back.

use crate::model::EdgeKind;

/// An edge as the layout sees it: positions in the graph's activities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    /// The activity it leaves.
    pub from: usize,
    /// The activity it reaches.
    pub to: usize,
    /// What it stands for.
    pub kind: EdgeKind,
}

/// What the layering made of the links: each activity's column, and which links are drawn
/// as arcs back (they do not layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layers {
    /// The column of each activity, from 0.
    pub column: Vec<usize>,
    /// For each link, true when it is drawn as an arc back.
    pub arc: Vec<bool>,
}

/// Layers `n` activities joined by `links`.
pub(crate) fn layer(n: usize, links: &[Link]) -> Layers {
    let arc = arcs(n, links);
    let mut incoming = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, l) in links.iter().enumerate() {
        if !arc[i] {
            incoming[l.to] += 1;
            out[l.from].push(l.to);
        }
    }
    // Kahn's order over what is left (acyclic): a column is one more than the highest of
    // the activity's predecessors.
    let mut column = vec![0usize; n];
    let mut ready: std::collections::VecDeque<usize> =
        (0..n).filter(|v| incoming[*v] == 0).collect();
    while let Some(v) = ready.pop_front() {
        for &w in &out[v] {
            column[w] = column[w].max(column[v] + 1);
            incoming[w] -= 1;
            if incoming[w] == 0 {
                ready.push_back(w);
            }
        }
    }
    Layers { column, arc }
}

/// The links drawn as arcs: loops' back edges, an activity's edge to itself, and the edges
/// a depth-first walk finds closing a cycle. The walk takes activities in the graph's order
/// and each one's preconditions before its contingencies, so that it is the same for the
/// same graph and, in a cycle through both, a contingency's edge is the one given up first.
fn arcs(n: usize, links: &[Link]) -> Vec<bool> {
    let mut arc: Vec<bool> = links
        .iter()
        .map(|l| l.kind == EdgeKind::Loop || l.from == l.to)
        .collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, l) in links.iter().enumerate() {
        if !arc[i] {
            out[l.from].push(i);
        }
    }
    for edges in &mut out {
        edges.sort_by_key(|i| (links[*i].kind != EdgeKind::Precondition, *i));
    }
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; n];
    // The walk keeps its own stack (activity, next edge): a long chain would overflow the
    // thread's.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for start in 0..n {
        if mark[start] != Mark::New {
            continue;
        }
        mark[start] = Mark::OnPath;
        stack.push((start, 0));
        while let Some(top) = stack.last_mut() {
            let (v, next) = *top;
            let Some(&i) = out[v].get(next) else {
                mark[v] = Mark::Done;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let w = links[i].to;
            match mark[w] {
                Mark::OnPath => arc[i] = true,
                Mark::New => {
                    mark[w] = Mark::OnPath;
                    stack.push((w, 0));
                }
                Mark::Done => {}
            }
        }
    }
    arc
}
