//! Random interleavings of requests, completions and instance ends across two and three
//! definitions: whoever first asks to run an ordered task (seen by the simulation, not the
//! book) runs each paired task before the others' (or ends first), and once the random part
//! is over, everything that is left runs to its end: no wait lasts for ever.

use super::*;

/// Where a task of an instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Waiting,
    Running { since: u64 },
    Done { started: u64, at: u64 },
}

/// Instances running their tasks in a given order, one at a time, and the book deciding.
struct Sim {
    book: OrderingBook,
    world: World,
    /// Each instance's tasks, in the order it runs them.
    plans: BTreeMap<InstanceId, Vec<String>>,
    stages: BTreeMap<(InstanceId, String), Stage>,
    /// When each instance first asked to run an ordered task.
    first_ordered: BTreeMap<InstanceId, u64>,
    ended_at: BTreeMap<InstanceId, u64>,
    /// The `(definition, task)`s some pair names.
    ordered: BTreeSet<(String, String)>,
    step: u64,
}

/// Three definitions of three tasks each; `A` of each is paired around a ring, `B` of P1 and
/// P2 too, `C` never.
const TASKS: [&str; 3] = ["A", "B", "C"];
const RING: &str = "WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { A1 : A2; B1 : B2; }
                    WORKFLOW_DEFINITIONS P2 : P3; RELATIVE_ORDER { A2 : A3; }
                    WORKFLOW_DEFINITIONS P3 : P1; RELATIVE_ORDER { A3 : A1; B3 : B1; }";
const PAIR: &str = "WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { A1 : A2; B1 : B2; A1 : B2; }";

impl Sim {
    fn new(three: bool, orders: &[Vec<usize>], counts: &[u64]) -> Sim {
        let doc = orderings(if three { RING } else { PAIR });
        let mut ordered = BTreeSet::new();
        for o in &doc.orderings {
            for pair in &o.pairs {
                for side in [Side::First, Side::Second] {
                    ordered.insert((o.definition(side).to_string(), pair.task(side).to_string()));
                }
            }
        }
        let mut book = OrderingBook::default();
        book.apply(doc);
        let mut world = World::default();
        let mut plans = BTreeMap::new();
        let defs = if three { 3 } else { 2 };
        let mut next = 1;
        for d in 0..defs {
            let name = format!("P{}", d + 1);
            let tasks: Vec<String> = TASKS.iter().map(|t| format!("{t}{}", d + 1)).collect();
            let refs: Vec<&str> = tasks.iter().map(String::as_str).collect();
            world.add(&name, &refs);
            for _ in 0..counts[d] {
                world.start(next, &name);
                let plan = orders[d].iter().map(|&k| tasks[k].clone()).collect();
                plans.insert(InstanceId(next), plan);
                next += 1;
            }
        }
        Sim {
            book,
            world,
            plans,
            stages: BTreeMap::new(),
            first_ordered: BTreeMap::new(),
            ended_at: BTreeMap::new(),
            ordered,
            step: 0,
        }
    }

    /// The task `instance` is at, and where it is; `None` once it is done or ended.
    fn current(&self, instance: InstanceId) -> Option<(String, Option<Stage>)> {
        if self.ended_at.contains_key(&instance) {
            return None;
        }
        self.plans[&instance].iter().find_map(|task| {
            let stage = self.stages.get(&(instance, task.clone())).copied();
            match stage {
                Some(Stage::Done { .. }) => None,
                _ => Some((task.clone(), stage)),
            }
        })
    }

    /// Moves `instance` one step: asks to run its task, asks again while it waits, or
    /// finishes it. Returns whether anything moved.
    fn advance(&mut self, instance: InstanceId) -> bool {
        self.step += 1;
        let Some((task, stage)) = self.current(instance) else {
            return false;
        };
        let key = (instance, task.clone());
        match stage {
            None | Some(Stage::Waiting) => {
                let definition = self.world.instances[&instance].definition.clone();
                if self
                    .ordered
                    .contains(&(definition.to_string(), task.clone()))
                {
                    self.first_ordered.entry(instance).or_insert(self.step);
                }
                let request = Request {
                    instance,
                    definition: &definition,
                    workflow: &self.world.definitions[&definition],
                    activity: self.world.id(instance.0, &task),
                };
                let decision = self.book.request(&request, &self.world);
                let stage = if decision.waits.is_empty() {
                    Stage::Running { since: self.step }
                } else {
                    Stage::Waiting
                };
                let moved = stage != Stage::Waiting || stage_of(&self.stages, &key).is_none();
                self.stages.insert(key, stage);
                moved
            }
            Some(Stage::Running { since }) => {
                self.world.finish(instance.0, &task);
                self.stages.insert(
                    key,
                    Stage::Done {
                        started: since,
                        at: self.step,
                    },
                );
                true
            }
            Some(Stage::Done { .. }) => false,
        }
    }

    fn end(&mut self, instance: InstanceId) {
        self.step += 1;
        if self.ended_at.contains_key(&instance) || self.current(instance).is_none() {
            return;
        }
        self.ended_at.insert(instance, self.step);
        if let Some(p) = self.world.instances.get_mut(&instance) {
            p.ended = true;
        }
        self.book.ended(instance);
    }

    /// Every pair, between every two instances of its definitions, ran in the order of their
    /// first ordered requests: the earlier one's task was done (or its instance ended) before
    /// the later one's started.
    fn check_order(&self) -> Result<(), String> {
        for o in &self.book.orderings().orderings {
            for pair in &o.pairs {
                for (i, j) in self.pairs_of(o.definition(Side::First), o.definition(Side::Second)) {
                    let (a, b) = (pair.first.to_string(), pair.second.to_string());
                    let (early, late) =
                        match (self.first_ordered.get(&i), self.first_ordered.get(&j)) {
                            (Some(x), Some(y)) if x < y => ((i, a), (j, b)),
                            (Some(_), None) => ((i, a), (j, b)),
                            (None, None) => continue,
                            _ => ((j, b), (i, a)),
                        };
                    let Some(started) = self.started(&late) else {
                        continue;
                    };
                    let done = match self.stages.get(&early) {
                        Some(Stage::Done { at, .. }) => Some(*at),
                        _ => None,
                    };
                    let freed = done
                        .into_iter()
                        .chain(self.ended_at.get(&early.0).copied())
                        .min();
                    if freed.is_none_or(|freed| freed > started) {
                        return Err(format!(
                            "{late:?} started at {started} before {early:?} was done or ended \
                             ({freed:?}); first ordered requests {:?}",
                            self.first_ordered
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn started(&self, key: &(InstanceId, String)) -> Option<u64> {
        match self.stages.get(key)? {
            Stage::Running { since } => Some(*since),
            Stage::Done { started, .. } => Some(*started),
            Stage::Waiting => None,
        }
    }

    /// Every instance of `first` with every instance of `second`.
    fn pairs_of(
        &self,
        first: &DefinitionName,
        second: &DefinitionName,
    ) -> Vec<(InstanceId, InstanceId)> {
        let of = |name: &DefinitionName| -> Vec<InstanceId> {
            self.world
                .instances
                .iter()
                .filter(|(_, p)| &p.definition == name)
                .map(|(id, _)| *id)
                .collect()
        };
        let seconds = of(second);
        of(first)
            .into_iter()
            .flat_map(|i| seconds.iter().map(move |j| (i, *j)))
            .collect()
    }
}

fn stage_of(
    stages: &BTreeMap<(InstanceId, String), Stage>,
    key: &(InstanceId, String),
) -> Option<Stage> {
    stages.get(key).copied()
}

fn order() -> impl Strategy<Value = Vec<usize>> {
    Just(vec![0, 1, 2]).prop_shuffle()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_pair_runs_out_of_order_and_no_wait_lasts(
        three in any::<bool>(),
        orders in proptest::collection::vec(order(), 3),
        counts in proptest::collection::vec(1u64..=3, 3),
        moves in proptest::collection::vec((any::<u8>(), 0u8..20), 0..150),
    ) {
        let mut sim = Sim::new(three, &orders, &counts);
        let instances: Vec<InstanceId> = sim.plans.keys().copied().collect();
        for (who, what) in moves {
            let instance = instances[usize::from(who) % instances.len()];
            if what == 0 {
                sim.end(instance);
            } else {
                sim.advance(instance);
            }
            prop_assert_eq!(sim.check_order(), Ok(()));
        }
        // The rest runs to its end, with nothing ending on the way.
        let mut rounds = 0;
        while instances.iter().any(|i| sim.current(*i).is_some()) {
            let mut moved = false;
            for i in &instances {
                moved |= sim.advance(*i);
            }
            prop_assert!(moved, "stuck: {:?}", sim.stages);
            prop_assert_eq!(sim.check_order(), Ok(()));
            rounds += 1;
            prop_assert!(rounds < 1000);
        }
    }
}
