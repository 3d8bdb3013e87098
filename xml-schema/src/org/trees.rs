//! Departments and teams form trees: each names at most one parent, which must be declared,
//! and following parents never comes back (a cycle would put a department inside itself, and
//! "a department includes its subtree" would never end).

use super::validate::Known;
use crate::diagnostic::{Diagnostic, Pos};

/// Checks the parents of one kind (`parents[i]` is item `i`'s parent and where it is named):
/// every parent is declared, and no chain of parents comes back to where it started. Each
/// cycle is reported once, at the parent of its first member in document order.
pub(super) fn check_tree(
    diags: &mut Vec<Diagnostic>,
    known: &Known,
    parents: &[Option<(&str, Pos)>],
) {
    let what = known.kind.what;
    // parent_of[i]: the index of item i's parent, for first declarations with a known parent.
    let mut parent_of: Vec<Option<usize>> = vec![None; parents.len()];
    for (i, parent) in parents.iter().enumerate() {
        let Some((parent, pos)) = *parent else {
            continue;
        };
        let id = known.items.get(i).map_or("", |item| item.id);
        let whose = if id.is_empty() {
            format!("the parent of this {what}")
        } else {
            format!("the parent of {what} {id}")
        };
        if known.check(diags, parent, pos, &whose) && known.first.get(id) == Some(&i) {
            parent_of[i] = known.first.get(parent).copied();
        }
    }
    for cycle in cycles(&parent_of) {
        let ids: Vec<&str> = cycle
            .iter()
            .chain(cycle.first())
            .map(|&i| known.items.get(i).map_or("", |item| item.id))
            .collect();
        let pos = cycle
            .first()
            .and_then(|&i| parents.get(i).copied().flatten())
            .map_or(Pos::UNKNOWN, |(_, pos)| pos);
        diags.push(Diagnostic::new(
            pos,
            format!(
                "{what} cycle: {} (each is part of the next); {} form a tree, so remove or \
                 change the parent of one of them",
                ids.join(" -> "),
                known.kind.section
            ),
        ));
    }
}

/// Every cycle of the graph `parent_of` (each node has at most one parent), as the list of
/// its members starting at the smallest index and following parents.
fn cycles(parent_of: &[Option<usize>]) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        /// On the walk that started at this index.
        Walk(usize),
        Done,
    }
    let mut seen = vec![Seen::No; parent_of.len()];
    let mut found = Vec::new();
    for start in 0..parent_of.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match seen[i] {
                Seen::No => {
                    seen[i] = Seen::Walk(start);
                    path.push(i);
                    at = parent_of[i];
                }
                Seen::Walk(walk) if walk == start => {
                    let from = path.iter().position(|&p| p == i).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    let smallest = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                    cycle.rotate_left(smallest);
                    found.push(cycle);
                    break;
                }
                Seen::Walk(_) | Seen::Done => break,
            }
        }
        for &i in &path {
            seen[i] = Seen::Done;
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_cycle_once_from_its_smallest_member() {
        // 0 -> 2 -> 1 -> 2 ; 3 -> 3 ; 4 -> 0 ; 5 root
        let parents = [Some(2), Some(2), Some(1), Some(3), Some(0), None];
        assert_eq!(cycles(&parents), vec![vec![1, 2], vec![3]]);
    }

    #[test]
    fn a_forest_has_no_cycles() {
        let parents = [None, Some(0), Some(1), Some(0), None, Some(4)];
        assert!(cycles(&parents).is_empty());
    }

    #[test]
    fn a_long_chain_is_walked_without_recursion() {
        let n: usize = 100_000;
        let mut parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        parents[0] = Some(n - 1);
        let found = cycles(&parents);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), n);
        assert_eq!(found[0][..3], [0, n - 1, n - 2]);
    }
}
