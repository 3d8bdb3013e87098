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

use crate::limits::MAX_DATA_ITEMS;
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
        crate::work::count(self.0.len());
        for (word, more) in self.0.iter_mut().zip(&other.0) {
            *word |= more;
        }
    }

    /// The names in both sets.
    pub(crate) fn and(&self, other: &Names) -> Names {
        crate::work::count(self.0.len());
        Names(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }
}

/// The data flow of one definition.
pub(crate) struct Flow<'a> {
    /// The declared names (the first declaration of each), in declaration order; at most
    /// [`MAX_DATA_ITEMS`] (more is refused by validation), so that the sets below cost bounded
    /// memory per activity whatever the input.
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
        if def.data.is_empty() {
            // Nothing declared, nothing flows: a workflow without data pays nothing for it.
            return Flow {
                names: Vec::new(),
                bit: HashMap::new(),
                index: HashMap::new(),
                preds: Vec::new(),
                ordered: Vec::new(),
                available: Vec::new(),
                needed: Vec::new(),
            };
        }
        let mut names = Vec::new();
        let mut bit = HashMap::new();
        for item in &def.data {
            if names.len() == MAX_DATA_ITEMS {
                break;
            }
            bit.entry(item.name.as_str()).or_insert_with(|| {
                names.push(item.name.as_str());
                names.len() - 1
            });
        }
        crate::work::count(def.data.len() + def.activities.len());
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
        // A loop's end comes before its head's next pass: what the head and those after it
        // read is needed at the end too, so what the body writes reaches the next pass. One
        // more reverse walk settles it, as loops do not nest.
        let back: HashMap<usize, usize> = def
            .activities
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((i, self.index(a.loop_back.as_ref()?.to)?)))
            .collect();
        let walks = if back.is_empty() { 1 } else { 2 };
        for walk in 0..walks {
            for &i in order.iter().rev() {
                let mut needed = self.set(access(i).map_or(&[][..], |d| &d.reads));
                for &s in &succs[i] {
                    needed.add(&self.needed[s]);
                }
                if let (true, Some(&head)) = (walk > 0, back.get(&i)) {
                    let head = self.needed[head].clone();
                    needed.add(&head);
                }
                self.needed[i] = needed;
            }
        }
    }

    /// The declared names among `names` (the others are left out).
    pub(crate) fn set(&self, names: &[String]) -> Names {
        crate::work::count(names.len());
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
        self.preds
            .get(s)
            .is_some_and(|p| p.binary_search(&i).is_ok())
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
        crate::work::count(self.names.len());
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
/// names, each once, in index order; itself and ids `index` lacks left out.
fn predecessors(def: &WorkflowDefinition, index: &HashMap<ActivityId, usize>) -> Vec<Vec<usize>> {
    def.activities
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let terms = a.depends.as_ref().map(|r| r.terms()).unwrap_or_default();
            crate::work::count(1 + a.preconditions.len() + terms.len());
            let ids = a.preconditions.iter().copied();
            let mut preds: Vec<usize> = ids
                .chain(terms.into_iter().map(|(id, _)| id))
                .filter_map(|p| index.get(&p).copied())
                .filter(|&p| p != i)
                .collect();
            preds.sort_unstable();
            preds.dedup();
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
        crate::work::count(1 + succs[i].len());
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

/// Which activity each contingency activity may stand in for, computed once per definition.
pub(crate) struct StandIns {
    /// For each activity id, the indexes of the activities whose `contingencyActivityId` names
    /// it (not itself), in definition order.
    namers: HashMap<ActivityId, Vec<usize>>,
    /// For each activity, the place in the graph a chain of stand-ins through it started from:
    /// itself, unless it comes after no activity and another names it as its contingency; then
    /// the origin of the first that does (a loop of contingencies stops where it closes).
    origin: Vec<usize>,
}

impl StandIns {
    /// The stand-ins of `def`, whose graph `flow` knows.
    pub(crate) fn new(def: &WorkflowDefinition, flow: &Flow<'_>) -> Self {
        let mut namers: HashMap<ActivityId, Vec<usize>> = HashMap::new();
        for (i, a) in def.activities.iter().enumerate() {
            if let Contingency::Run(x) = a.contingency
                && x != a.id
            {
                namers.entry(x).or_default().push(i);
            }
        }
        let first_namer = |i: usize| {
            let id = def.activities.get(i)?.id;
            namers.get(&id)?.first().copied()
        };
        let mut origin: Vec<Option<usize>> = vec![None; def.activities.len()];
        for start in 0..origin.len() {
            let mut path: Vec<usize> = Vec::new();
            let mut on_path: HashSet<usize> = HashSet::new();
            let mut at = start;
            let found = loop {
                crate::work::count(1);
                if let Some(known) = origin[at] {
                    break known;
                }
                let next = first_namer(at).filter(|_| !flow.has_predecessors(at));
                match next {
                    Some(next) if on_path.insert(at) => {
                        path.push(at);
                        at = next;
                    }
                    _ => break at,
                }
            };
            origin[at].get_or_insert(found);
            for i in path {
                origin[i] = Some(found);
            }
        }
        let origin = origin
            .into_iter()
            .enumerate()
            .map(|(i, o)| o.unwrap_or(i))
            .collect();
        StandIns { namers, origin }
    }

    /// The indexes of the activities contingency activity `x` may stand in for: those whose
    /// `contingencyActivityId` names it, each looked through to the origin of its chain of
    /// stand-ins, each once, in definition order of the namers.
    pub(crate) fn failed(&self, x: ActivityId) -> Vec<usize> {
        let mut failed: Vec<usize> = Vec::new();
        for &i in self.namers.get(&x).map(Vec::as_slice).unwrap_or_default() {
            let origin = self.origin.get(i).copied().unwrap_or(i);
            crate::work::count(1 + failed.len());
            if !failed.contains(&origin) {
                failed.push(origin);
            }
        }
        failed
    }
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
