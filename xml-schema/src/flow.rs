//! Instance data flow over a definition's graph (an activity comes after its preconditions and
//! the activities its `<depends>` rule names): which declared names are available after each
//! activity (it, or one before it, writes them) and which are needed from each activity on (it,
//! or one after it, reads them).
//!
//! Apart from `derive` and `validate` because both use it: derivation to say what each
//! notification carries, validation to refuse a read that nothing before writes. Computed once
//! per definition over a topological order, so a chain of many thousand activities costs linear
//! time; activities on a cycle, or after one (validation reports the cycle), are visited once,
//! after the others, with what their predecessors had so far: no loop, no recursion.

use std::collections::{HashMap, HashSet};

use crate::model::{ActivityId, Contingency, WorkflowDefinition};

/// A set of declared names: one bit per name, numbered in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names(Vec<u64>);

impl Names {
    /// No name, with room for `n` names.
    fn none(n: usize) -> Self {
        Names(vec![0; n.div_ceil(64)])
    }

    fn insert(&mut self, bit: usize) {
        if let Some(word) = self.0.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }

    /// Whether name number `bit` is in the set.
    pub(crate) fn contains(&self, bit: usize) -> bool {
        self.0
            .get(bit / 64)
            .is_some_and(|word| word & (1 << (bit % 64)) != 0)
    }

    /// Adds every name of `other`.
    pub(crate) fn add(&mut self, other: &Names) {
        for (word, more) in self.0.iter_mut().zip(&other.0) {
            *word |= more;
        }
    }

    /// The names in both sets.
    pub(crate) fn and(&self, other: &Names) -> Names {
        Names(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }
}

/// The data flow of one definition.
pub(crate) struct Flow<'a> {
    /// The declared names (the first declaration of each), in declaration order.
    names: Vec<&'a str>,
    /// Each declared name's number in `names`.
    bit: HashMap<&'a str, usize>,
    /// Each activity id's index in the definition (its first activity, should ids repeat).
    index: HashMap<ActivityId, usize>,
    /// For each activity (by index), the activities it comes after: its preconditions and the
    /// activities its rule names, each once, itself and unknown ids left out.
    preds: Vec<Vec<usize>>,
    /// For each activity, whether it is in the topological order (not on or after a cycle).
    ordered: Vec<bool>,
    /// For each activity, the names it or an activity before it writes.
    available: Vec<Names>,
    /// For each activity, the names it or an activity after it reads.
    needed: Vec<Names>,
}

impl<'a> Flow<'a> {
    /// The flow of `def`.
    pub(crate) fn new(def: &'a WorkflowDefinition) -> Self {
        let mut names = Vec::new();
        let mut bit = HashMap::new();
        for item in &def.data {
            bit.entry(item.name.as_str()).or_insert_with(|| {
                names.push(item.name.as_str());
                names.len() - 1
            });
        }
        let mut index = HashMap::with_capacity(def.activities.len());
        for (i, a) in def.activities.iter().enumerate() {
            index.entry(a.id).or_insert(i);
        }
        let preds = predecessors(def, &index);
        let (order, ordered) = topological_order(&preds);
        let mut flow = Flow {
            available: vec![Names::none(names.len()); def.activities.len()],
            needed: vec![Names::none(names.len()); def.activities.len()],
            names,
            bit,
            index,
            preds,
            ordered,
        };
        flow.propagate(def, &order);
        flow
    }

    /// Fills `available` in `order` and `needed` in reverse `order`.
    fn propagate(&mut self, def: &WorkflowDefinition, order: &[usize]) {
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); self.preds.len()];
        for (i, preds) in self.preds.iter().enumerate() {
            for &p in preds {
                succs[p].push(i);
            }
        }
        let access = |i: usize| def.activities.get(i).map(|a| &a.data);
        for &i in order {
            let mut available = self.set(access(i).map_or(&[][..], |d| &d.writes));
            for &p in &self.preds[i] {
                available.add(&self.available[p]);
            }
            self.available[i] = available;
        }
        for &i in order.iter().rev() {
            let mut needed = self.set(access(i).map_or(&[][..], |d| &d.reads));
            for &s in &succs[i] {
                needed.add(&self.needed[s]);
            }
            self.needed[i] = needed;
        }
    }

    /// The declared names among `names` (the others are left out).
    pub(crate) fn set(&self, names: &[String]) -> Names {
        let mut set = Names::none(self.names.len());
        for name in names {
            if let Some(&bit) = self.bit.get(name.as_str()) {
                set.insert(bit);
            }
        }
        set
    }

    /// The number of the declared name `name`.
    pub(crate) fn bit(&self, name: &str) -> Option<usize> {
        self.bit.get(name).copied()
    }

    /// The index of activity `id` in the definition.
    pub(crate) fn index(&self, id: ActivityId) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// Whether activity `i` is in the topological order: neither on nor after a cycle.
    pub(crate) fn is_ordered(&self, i: usize) -> bool {
        self.ordered.get(i).copied().unwrap_or(false)
    }

    /// Whether activity `s` comes right after activity `i` (`i` is a precondition of `s`, or
    /// its rule names `i`).
    pub(crate) fn comes_after(&self, s: usize, i: usize) -> bool {
        self.preds.get(s).is_some_and(|p| p.contains(&i))
    }

    /// Whether activity `i` comes after any other (a precondition or a rule term).
    pub(crate) fn has_predecessors(&self, i: usize) -> bool {
        self.preds.get(i).is_some_and(|p| !p.is_empty())
    }

    /// The names activity `i` or an activity before it writes.
    pub(crate) fn available(&self, i: usize) -> Names {
        self.available
            .get(i)
            .cloned()
            .unwrap_or_else(|| Names::none(self.names.len()))
    }

    /// The names written before activity `i`: by its predecessors or activities before them.
    pub(crate) fn before(&self, i: usize) -> Names {
        let mut before = Names::none(self.names.len());
        for &p in self.preds.get(i).map(Vec::as_slice).unwrap_or_default() {
            before.add(&self.available[p]);
        }
        before
    }

    /// The names activity `i` or an activity after it reads.
    pub(crate) fn needed(&self, i: usize) -> Names {
        self.needed
            .get(i)
            .cloned()
            .unwrap_or_else(|| Names::none(self.names.len()))
    }

    /// The names of `set`, in declaration order.
    pub(crate) fn names(&self, set: &Names) -> Vec<String> {
        (0..self.names.len())
            .filter(|&bit| set.contains(bit))
            .map(|bit| self.names[bit].to_owned())
            .collect()
    }

    /// What a notification from activity `from` to activity `to` carries: the names `to` or an
    /// activity after it reads that `from` or an activity before it writes.
    pub(crate) fn carried(&self, from: usize, to: usize) -> Vec<String> {
        self.names(&self.needed(to).and(&self.available(from)))
    }
}

/// For each activity of `def`, the indexes of its preconditions and of the activities its rule
/// names, each once, in that order; itself and ids `index` lacks left out.
fn predecessors(def: &WorkflowDefinition, index: &HashMap<ActivityId, usize>) -> Vec<Vec<usize>> {
    def.activities
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let terms = a.depends.as_ref().map(|r| r.terms()).unwrap_or_default();
            let ids = a.preconditions.iter().copied();
            let mut preds: Vec<usize> = Vec::new();
            for p in ids.chain(terms.into_iter().map(|(id, _)| id)) {
                if let Some(&p) = index.get(&p)
                    && p != i
                    && !preds.contains(&p)
                {
                    preds.push(p);
                }
            }
            preds
        })
        .collect()
}

/// The activities in an order where each comes after its predecessors (Kahn's algorithm), then
/// those on or after a cycle, in definition order; and, for each, whether it is in the first
/// part.
fn topological_order(preds: &[Vec<usize>]) -> (Vec<usize>, Vec<bool>) {
    let n = preds.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
    for (i, ps) in preds.iter().enumerate() {
        for &p in ps {
            succs[p].push(i);
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut next = 0;
    while let Some(&i) = order.get(next) {
        next += 1;
        for &s in &succs[i] {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                order.push(s);
            }
        }
    }
    let mut ordered = vec![false; n];
    for &i in &order {
        ordered[i] = true;
    }
    order.extend((0..n).filter(|&i| !ordered[i]));
    (order, ordered)
}

/// The indexes of the activities contingency activity `x` may stand in for: those whose
/// `contingencyActivityId` names it (not `x` itself), in definition order, each looked through
/// to the activity in the graph when it is a stand-in itself (it comes after no activity, and
/// another names it as its contingency): the place a chain of stand-ins started from.
pub(crate) fn stands_in_for(
    def: &WorkflowDefinition,
    flow: &Flow<'_>,
    x: ActivityId,
) -> Vec<usize> {
    let mut failed: Vec<usize> = Vec::new();
    for i in namers(def, x) {
        let mut origin = i;
        let mut visited = HashSet::from([origin, flow.index(x).unwrap_or(usize::MAX)]);
        while !flow.has_predecessors(origin) {
            let Some(a) = def.activities.get(origin) else {
                break;
            };
            match namers(def, a.id).into_iter().find(|j| visited.insert(*j)) {
                Some(j) => origin = j,
                None => break,
            }
        }
        if !failed.contains(&origin) {
            failed.push(origin);
        }
    }
    failed
}

/// The indexes of the activities whose `contingencyActivityId` names `x` (not `x` itself).
fn namers(def: &WorkflowDefinition, x: ActivityId) -> Vec<usize> {
    def.activities
        .iter()
        .enumerate()
        .filter(|(_, a)| a.contingency == Contingency::Run(x) && a.id != x)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_puts_predecessors_first_and_cycles_last() {
        // 0 <- 1 <- 2, and 3 <-> 4 (a cycle), 5 after 4.
        let preds = vec![vec![], vec![0], vec![1], vec![4], vec![3], vec![4]];
        let (order, ordered) = topological_order(&preds);
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(ordered, vec![true, true, true, false, false, false]);
        let chain: Vec<Vec<usize>> = (0..5)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let reversed: Vec<Vec<usize>> = (0..5)
            .map(|i| if i == 4 { vec![] } else { vec![i + 1] })
            .collect();
        assert_eq!(topological_order(&chain).0, vec![0, 1, 2, 3, 4]);
        assert_eq!(topological_order(&reversed).0, vec![4, 3, 2, 1, 0]);
    }

    #[test]
    fn names_are_sets_of_bits() {
        let mut a = Names::none(130);
        a.insert(0);
        a.insert(129);
        a.insert(500); // out of range: ignored
        assert!(a.contains(0) && a.contains(129) && !a.contains(64) && !a.contains(500));
        let mut b = Names::none(130);
        b.insert(129);
        b.insert(64);
        assert_eq!(a.and(&b).0, vec![0, 0, 2]);
        a.add(&b);
        assert!(a.contains(64));
    }
}
