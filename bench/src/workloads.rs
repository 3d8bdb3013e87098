//! The workflows the benchmark runs: `chain10`, `paper` and `fanout` (and, only when asked for,
//! the `scale16` and `scale100` chains over many partners), each a MobiWfMS definition whose activities are automatic and run no command, so that what is measured is
//! the runtime moving work between partners.

use std::collections::BTreeMap;

use mobiwf_xml_schema::WorkflowDefinition;

/// The paper's example workflow, as the repository ships it.
pub const PAPER: &str = include_str!("../../examples/paper/workflow.xml");

/// One workload: its definition and what the measurements need to know about it.
pub struct Workload {
    /// Its name in the report.
    pub name: &'static str,
    /// One line on its shape, for the report.
    pub shape: &'static str,
    /// The definition, as submitted.
    pub xml: String,
    /// The partners it names: (name, skills), each run by one node.
    pub partners: Vec<(String, Vec<u64>)>,
    /// For each activity, its preconditions.
    pub preconditions: BTreeMap<u64, Vec<u64>>,
    /// For each activity, the name of the partner that runs it.
    pub partner_of: BTreeMap<u64, String>,
}

impl Workload {
    /// The activities of one instance.
    pub fn activities(&self) -> usize {
        self.preconditions.len()
    }

    /// True when the workload is one the Temporal baseline also runs.
    pub fn has_temporal_twin(&self) -> bool {
        matches!(self.name, "chain10" | "paper")
    }

    fn from_xml(name: &'static str, shape: &'static str, xml: String) -> anyhow::Result<Workload> {
        let def = mobiwf_xml_schema::load_definition(xml.as_bytes())
            .map_err(|d| anyhow::anyhow!("{}", d.render(name)))?
            .value;
        Ok(Workload {
            name,
            shape,
            partners: partners(&def),
            preconditions: def
                .activities
                .iter()
                .map(|a| (a.id.0, a.preconditions.iter().map(|p| p.0).collect()))
                .collect(),
            partner_of: partner_of(&def),
            xml,
        })
    }
}

fn partners(def: &WorkflowDefinition) -> Vec<(String, Vec<u64>)> {
    def.partners
        .iter()
        .map(|p| (p.name.clone(), p.skills.iter().map(|s| s.0).collect()))
        .collect()
}

fn partner_of(def: &WorkflowDefinition) -> BTreeMap<u64, String> {
    let names: BTreeMap<u64, &str> = def
        .partners
        .iter()
        .map(|p| (p.id.0, p.name.as_str()))
        .collect();
    def.partitions
        .iter()
        .flat_map(|part| {
            let name = names.get(&part.partner.0).copied().unwrap_or_default();
            part.activities.iter().map(move |a| (a.0, name.to_owned()))
        })
        .collect()
}

/// Every workload, in report order.
pub fn all() -> anyhow::Result<Vec<Workload>> {
    Ok(vec![
        Workload::from_xml(
            "chain10",
            "10 sequential activities alternating between two partners: every hop crosses partners",
            chain(10, 2),
        )?,
        Workload::from_xml(
            "paper",
            "the paper's 5-activity workflow on its two partners (3 of its 5 edges cross partners)",
            PAPER.to_owned(),
        )?,
        Workload::from_xml(
            "fanout",
            "one activity, 20 parallel successors spread over 4 partners, one join",
            fanout(20, 4),
        )?,
    ])
}

/// The activities of a scale workload's chain.
pub const SCALE_CHAIN: u64 = 128;

/// The scale workloads, smallest first (the section's ratio is the last over the first):
/// name, partners, shape.
pub const SCALE: [(&str, usize, &str); 2] = [
    (
        "scale16",
        16,
        "128 sequential activities round-robin over 16 partners",
    ),
    (
        "scale100",
        100,
        "128 sequential activities round-robin over 100 partners",
    ),
];

/// The scale workloads: a chain of [`SCALE_CHAIN`] activities round-robin over each partner
/// count of [`SCALE`] (one node per partner). Not in [`all`]: a hundred nodes make a run of
/// their own.
pub fn scale() -> anyhow::Result<Vec<Workload>> {
    SCALE
        .iter()
        .map(|&(name, n, shape)| Workload::from_xml(name, shape, chain(SCALE_CHAIN, n)))
        .collect()
}

/// An activity of a generated workflow: automatic, no command, no timers.
fn activity(id: u64, preconditions: &[u64]) -> String {
    let pre: String = preconditions
        .iter()
        .map(|p| format!("<preconditionId>{p}</preconditionId>"))
        .collect();
    format!(
        "<activity id=\"{id}\"><nameActivity>a{id}</nameActivity><activityTypeId>1</activityTypeId>\
         <status>0</status><timeToWait>0</timeToWait><contingencyActivityId>-1</contingencyActivityId>\
         <timeOut>0</timeOut><preconditions>{pre}</preconditions></activity>"
    )
}

/// A definition with `partners` partners B1..Bn, partition i holding `placed[i]`.
fn definition(name: &str, activities: &str, placed: &[Vec<u64>]) -> String {
    let mut partitions = String::new();
    let mut partners = String::new();
    for (i, ids) in placed.iter().enumerate() {
        let n = i + 1;
        let ids: String = ids
            .iter()
            .map(|a| format!("<activityId>{a}</activityId>"))
            .collect();
        partitions += &format!(
            "<partition id=\"{n}\"><name>p{n}</name><partnerId>{n}</partnerId><timeOut>0</timeOut>{ids}</partition>"
        );
        partners += &format!(
            "<partner id=\"{n}\"><name>B{n}</name><description>bench partner</description>\
             <ip>127.0.0.1</ip><skills><activityTypeId>1</activityTypeId></skills></partner>"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workflow id=\"1\"><description>{name}</description>\
         <activities>{activities}</activities><activityTypes><actitivityType id=\"1\">\
         <description>no-op</description></actitivityType></activityTypes>\
         <partitions>{partitions}</partitions><partners>{partners}</partners></workflow>\n"
    )
}

/// `n` sequential activities 1..=n, activity i on partner (i - 1) mod `partners`.
fn chain(n: u64, partners: usize) -> String {
    let mut activities = String::new();
    let mut placed = vec![Vec::new(); partners];
    for id in 1..=n {
        let pre: Vec<u64> = (id > 1).then(|| id - 1).into_iter().collect();
        activities += &activity(id, &pre);
        placed[usize::try_from(id - 1).unwrap_or(0) % partners].push(id);
    }
    definition(&format!("chain{n}"), &activities, &placed)
}

/// Activity 1, then `width` activities 2..=width+1 that wait for it, then a join that waits
/// for all of them; successor i on partner i mod `partners`, root and join on the first.
fn fanout(width: u64, partners: usize) -> String {
    let join = width + 2;
    let mut activities = activity(1, &[]);
    let mut placed = vec![Vec::new(); partners];
    placed[0].push(1);
    for id in 2..=width + 1 {
        activities += &activity(id, &[1]);
        placed[usize::try_from(id).unwrap_or(0) % partners].push(id);
    }
    let middle: Vec<u64> = (2..=width + 1).collect();
    activities += &activity(join, &middle);
    placed[0].push(join);
    definition(&format!("fanout{width}"), &activities, &placed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_workloads_are_valid_definitions_of_the_announced_shapes() {
        let all = all().expect("valid");
        let by_name = |n: &str| all.iter().find(|w| w.name == n).expect(n);
        let chain = by_name("chain10");
        assert_eq!(chain.activities(), 10);
        assert_eq!(chain.partners.len(), 2);
        for id in 2..=10u64 {
            assert_eq!(chain.preconditions[&id], vec![id - 1]);
            assert_ne!(chain.partner_of[&id], chain.partner_of[&(id - 1)]);
        }
        let paper = by_name("paper");
        assert_eq!((paper.activities(), paper.partners.len()), (5, 2));
        let fanout = by_name("fanout");
        assert_eq!((fanout.activities(), fanout.partners.len()), (22, 4));
        assert_eq!(fanout.preconditions[&22].len(), 20);
        let spread: std::collections::BTreeSet<&String> =
            (2..=21).map(|a| &fanout.partner_of[&a]).collect();
        assert_eq!(spread.len(), 4);
    }

    #[test]
    fn the_scale_chains_visit_every_partner_round_robin() {
        let scale = scale().expect("valid");
        let names: Vec<&str> = scale.iter().map(|w| w.name).collect();
        assert_eq!(names, ["scale16", "scale100"]);
        for (w, (_, n, _)) in scale.iter().zip(SCALE) {
            assert_eq!((w.activities(), w.partners.len()), (128, n));
            for id in 2..=128u64 {
                assert_eq!(w.preconditions[&id], vec![id - 1]);
                assert_ne!(w.partner_of[&id], w.partner_of[&(id - 1)]);
            }
            // Activity i on partner B((i - 1) mod n + 1): the chain wraps round.
            assert_eq!(w.partner_of[&1], "B1");
            assert_eq!(w.partner_of[&(n as u64 + 1)], "B1");
            let used: std::collections::BTreeSet<&String> = w.partner_of.values().collect();
            assert_eq!(used.len(), n);
        }
        assert!(
            all()
                .expect("valid")
                .iter()
                .all(|w| !w.name.starts_with("scale"))
        );
    }
}
