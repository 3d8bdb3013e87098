//! Finds cycles among activities that wait for each other (through preconditions, and
//! through dependency rules), which so could never start.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::model::ActivityId;

/// Every cycle in the graph `waits_for` (activity → the activities it waits for), one per
/// strongly connected component with more than one member, as a path `a, b, ..., a` where
/// each waits for the next. Self-loops are not reported here. Components are found with
/// Tarjan's algorithm, iteratively so deep graphs cannot overflow the stack.
pub(crate) fn find_cycles(
    nodes: &[ActivityId],
    waits_for: &HashMap<ActivityId, Vec<ActivityId>>,
) -> Vec<Vec<ActivityId>> {
    let empty = Vec::new();
    let edges = |n: ActivityId| waits_for.get(&n).unwrap_or(&empty);
    let order: HashMap<ActivityId, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut cycles: Vec<Vec<ActivityId>> = components(nodes, waits_for)
        .into_iter()
        .map(|c| path_through(&c, &order, &edges))
        .collect();
    cycles.sort_by_key(|c| c.first().and_then(|n| order.get(n)).copied());
    cycles
}

/// The strongly connected components of `waits_for` with more than one member: the sets of
/// activities that each wait, directly or not, for all the others.
pub(crate) fn components(
    nodes: &[ActivityId],
    waits_for: &HashMap<ActivityId, Vec<ActivityId>>,
) -> Vec<Vec<ActivityId>> {
    let mut index_of: HashMap<ActivityId, usize> = HashMap::new();
    let mut low: HashMap<ActivityId, usize> = HashMap::new();
    let mut on_stack: HashMap<ActivityId, bool> = HashMap::new();
    let mut stack: Vec<ActivityId> = Vec::new();
    let mut components: Vec<Vec<ActivityId>> = Vec::new();
    let mut next = 0usize;
    let empty = Vec::new();
    let edges = |n: ActivityId| waits_for.get(&n).unwrap_or(&empty);

    for &start in nodes {
        if index_of.contains_key(&start) {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut work: Vec<(ActivityId, usize)> = vec![(start, 0)];
        while let Some(&(node, edge)) = work.last() {
            if edge == 0 && !index_of.contains_key(&node) {
                index_of.insert(node, next);
                low.insert(node, next);
                next += 1;
                stack.push(node);
                on_stack.insert(node, true);
            }
            if let Some(&succ) = edges(node).get(edge) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                if !index_of.contains_key(&succ) {
                    work.push((succ, 0));
                } else if on_stack.get(&succ).copied().unwrap_or(false) {
                    let l = low[&node].min(index_of[&succ]);
                    low.insert(node, l);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                let l = low[&parent].min(low[&node]);
                low.insert(parent, l);
            }
            if low[&node] == index_of[&node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack.insert(member, false);
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    components.push(component);
                }
            }
        }
    }

    components
}

/// The shortest way from `from` to `to` (different activities) that stays among `inside`:
/// `from, ..., to`, each waiting for the next; `None` when there is none.
pub(crate) fn path(
    from: ActivityId,
    to: ActivityId,
    inside: &HashSet<ActivityId>,
    waits_for: &HashMap<ActivityId, Vec<ActivityId>>,
) -> Option<Vec<ActivityId>> {
    let mut came_from: HashMap<ActivityId, ActivityId> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        for &succ in waits_for.get(&node).map(Vec::as_slice).unwrap_or_default() {
            if succ == from || !inside.contains(&succ) || came_from.contains_key(&succ) {
                continue;
            }
            came_from.insert(succ, node);
            if succ == to {
                let mut way = vec![to];
                let mut at = to;
                while let Some(&before) = came_from.get(&at) {
                    way.push(before);
                    at = before;
                }
                way.reverse();
                return Some(way);
            }
            queue.push_back(succ);
        }
    }
    None
}

/// A cycle inside component `members`, starting at its first member in document order.
fn path_through<'a>(
    members: &[ActivityId],
    order: &HashMap<ActivityId, usize>,
    edges: &impl Fn(ActivityId) -> &'a Vec<ActivityId>,
) -> Vec<ActivityId> {
    let Some(&start) = members.iter().min_by_key(|m| order.get(m).copied()) else {
        return Vec::new();
    };
    let inside: HashSet<ActivityId> = members.iter().copied().collect();
    // Breadth-first search from start back to start, staying inside the component.
    let mut came_from: HashMap<ActivityId, ActivityId> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &succ in edges(node) {
            if !inside.contains(&succ) {
                continue;
            }
            if succ == start {
                let mut path = vec![node];
                let mut at = node;
                while at != start {
                    at = came_from[&at];
                    path.push(at);
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if succ != start && !came_from.contains_key(&succ) {
                came_from.insert(succ, node);
                queue.push_back(succ);
            }
        }
    }
    members.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u64]) -> Vec<ActivityId> {
        v.iter().map(|&i| ActivityId(i)).collect()
    }

    #[test]
    fn finds_a_three_cycle_in_wait_order() {
        let nodes = ids(&[1, 2, 3, 4]);
        let waits: HashMap<_, _> = [
            (ActivityId(1), ids(&[3])),
            (ActivityId(2), ids(&[1])),
            (ActivityId(3), ids(&[2])),
            (ActivityId(4), ids(&[3])),
        ]
        .into();
        assert_eq!(find_cycles(&nodes, &waits), vec![ids(&[1, 3, 2, 1])]);
    }

    #[test]
    fn acyclic_graph_has_no_cycles() {
        let nodes = ids(&[1, 2, 3]);
        let waits: HashMap<_, _> =
            [(ActivityId(2), ids(&[1])), (ActivityId(3), ids(&[1, 2]))].into();
        assert!(find_cycles(&nodes, &waits).is_empty());
    }

    #[test]
    fn path_stays_inside_and_is_shortest() {
        let waits: HashMap<_, _> = [
            (ActivityId(1), ids(&[2, 4])),
            (ActivityId(2), ids(&[3])),
            (ActivityId(4), ids(&[3])),
            (ActivityId(3), ids(&[1])),
        ]
        .into();
        let all: HashSet<ActivityId> = ids(&[1, 2, 3, 4]).into_iter().collect();
        assert_eq!(
            path(ActivityId(1), ActivityId(3), &all, &waits),
            Some(ids(&[1, 2, 3]))
        );
        let without_2: HashSet<ActivityId> = ids(&[1, 3, 4]).into_iter().collect();
        assert_eq!(
            path(ActivityId(1), ActivityId(3), &without_2, &waits),
            Some(ids(&[1, 4, 3]))
        );
        assert_eq!(path(ActivityId(1), ActivityId(1), &all, &waits), None);
        assert_eq!(components(&ids(&[1, 2, 3, 4]), &waits).len(), 1);
    }

    #[test]
    fn long_chain_does_not_overflow() {
        let n = 100_000u64;
        let nodes: Vec<ActivityId> = (1..=n).map(ActivityId).collect();
        let mut waits: HashMap<_, _> = (2..=n)
            .map(|i| (ActivityId(i), vec![ActivityId(i - 1)]))
            .collect();
        waits.insert(ActivityId(1), vec![ActivityId(n)]);
        let cycles = find_cycles(&nodes, &waits);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len() as u64, n + 1);
    }
}
