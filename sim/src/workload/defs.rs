//! The workflow definitions a run submits, drawn from the seed: the paper's example as
//! published, and shapes built around what the engine decides (chains with failures, retries
//! and contingencies; fan-outs joined by `and`, `or` and `vote` merges; routes by completion
//! flag; a loop; a manual activity offered to people; activities of task classes), their
//! activities spread over the nodes so that hand-offs cross the network. Each is written as
//! MobiWfMS XML, as an operator would submit it.

use std::fmt::Write as _;

use crate::rng::Rng;

/// The paper's example, as published (partners P1 and P2).
pub const PAPER: &str = include_str!("../../../examples/paper/workflow.xml");

/// The paper's example's activities.
pub const PAPER_ACTIVITIES: [u64; 5] = [16, 17, 18, 19, 20];

/// What an activity is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// It runs a command (the simulated executor reads its spec, `CommandSpec`).
    Automatic(String),
    /// A person does it: offered to the role `tech`, first to select takes it.
    Manual {
        /// It may be locked for work without the network.
        lockable: bool,
        /// Its `<deadline>`, when it has one.
        deadline: Option<Deadline>,
    },
    /// It passes at once (a routing point).
    Dummy,
}

/// A work item's `<deadline>`: hours (of the run's short hour, `SIM_HOUR_MS`), and whether
/// a pause stops it (`<pauseStopsDeadline>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// `<deadline>`, hours.
    pub hours: u32,
    /// `<pauseStopsDeadline>true`.
    pub pause_stops: bool,
}

/// The length of an hour for `<deadline>`s in a run (`--hour-ms`), ms: a deadline of 48 to
/// 96 hours runs out in 5 to 10 s of simulated time, while the faults last.
pub const SIM_HOUR_MS: u64 = 100;

/// One activity of a generated definition.
#[derive(Debug, Clone)]
pub struct Act {
    /// Its id (from 1).
    pub id: u64,
    /// The node (0-based) whose partition holds it.
    pub partner: usize,
    /// Its preconditions.
    pub pre: Vec<u64>,
    /// What it is.
    pub kind: Kind,
    /// `contingencyActivityId`: -1 blocks its successors, 0 releases them.
    pub contingency: i64,
    /// `<retries>` count, with a 1 s wait.
    pub retries: u32,
    /// `<merge>` as written (`or`, `votes="2">vote`), when not `and`.
    pub merge: Option<String>,
    /// `<routes>`: (flag, successors); the one without a flag last.
    pub routes: Vec<(Option<String>, Vec<u64>)>,
    /// `<loop to while max>`.
    pub looping: Option<(u64, String, u32)>,
    /// `<class>`.
    pub class: Option<String>,
    /// `<completion>true</completion>`.
    pub completion: bool,
    /// `<compensation>`: undoes its work when its instance is cancelled or fails after it
    /// succeeded.
    pub compensation: bool,
}

impl Act {
    fn new(id: u64, partner: usize, pre: Vec<u64>, kind: Kind) -> Act {
        Act {
            id,
            partner,
            pre,
            kind,
            contingency: -1,
            retries: 0,
            merge: None,
            routes: Vec::new(),
            looping: None,
            class: None,
            completion: false,
            compensation: false,
        }
    }
}

/// A command that ends well `ok` times in a thousand after 50 ms to `max_ms`.
fn command(rng: &mut Rng, ok: u32, max_ms: u64) -> Kind {
    let ok = if rng.chance(300) { ok } else { 1000 };
    Kind::Automatic(format!("sim ok={ok} ms=50-{max_ms}"))
}

/// Writes the definition of `acts` over `nodes` nodes (partners `P1`...).
pub fn write(id: u64, description: &str, acts: &[Act], nodes: usize) -> String {
    let mut x = String::new();
    let _ = write!(
        x,
        "<workflow id=\"{id}\"><description>{description}</description><activities>"
    );
    for a in acts {
        write_activity(&mut x, a);
    }
    x.push_str("</activities><activityTypes><activityType id=\"1\"/></activityTypes><partitions>");
    for n in 0..nodes {
        let mine: Vec<&Act> = acts.iter().filter(|a| a.partner == n).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = write!(
            x,
            "<partition id=\"{}\"><partnerId>{}</partnerId>",
            n + 1,
            n + 1
        );
        for a in mine {
            let _ = write!(x, "<activityId>{}</activityId>", a.id);
        }
        x.push_str("</partition>");
    }
    x.push_str("</partitions><partners>");
    for n in 0..nodes {
        let _ = write!(
            x,
            "<partner id=\"{}\"><name>P{}</name><skills><activityTypeId>1</activityTypeId>\
             </skills></partner>",
            n + 1,
            n + 1
        );
    }
    x.push_str("</partners></workflow>");
    x
}

fn write_activity(x: &mut String, a: &Act) {
    let _ = write!(
        x,
        "<activity id=\"{}\"><nameActivity>A{}</nameActivity><activityTypeId>1</activityTypeId>\
         <contingencyActivityId>{}</contingencyActivityId><preconditions>",
        a.id, a.id, a.contingency
    );
    for p in &a.pre {
        let _ = write!(x, "<preconditionId>{p}</preconditionId>");
    }
    x.push_str("</preconditions>");
    if let Some(merge) = &a.merge {
        let _ = write!(x, "<merge{merge}</merge>");
    }
    if !a.routes.is_empty() {
        x.push_str("<routes>");
        for (flag, to) in &a.routes {
            match flag {
                Some(f) => {
                    let _ = write!(x, "<route flag=\"{f}\">");
                }
                None => x.push_str("<route>"),
            }
            for t in to {
                let _ = write!(x, "<to>{t}</to>");
            }
            x.push_str("</route>");
        }
        x.push_str("</routes>");
    }
    if a.completion {
        x.push_str("<completion>true</completion>");
    }
    if let Some((to, flag, max)) = &a.looping {
        let _ = write!(x, "<loop to=\"{to}\" while=\"{flag}\" max=\"{max}\"/>");
    }
    match &a.kind {
        Kind::Automatic(command) => {
            let _ = write!(x, "<command>{command}</command>");
            if a.compensation {
                x.push_str("<compensation>sim ok=950 ms=50-400</compensation>");
            }
            if a.retries > 0 {
                let _ = write!(
                    x,
                    "<retries><count>{}</count><wait>1</wait></retries>",
                    a.retries
                );
            }
            if let Some(class) = &a.class {
                let _ = write!(x, "<class>{class}</class>");
            }
        }
        Kind::Manual { lockable, deadline } => {
            x.push_str(
                "<kind>manual</kind><role>tech</role><assignment basis=\"role\" method=\"fcfa\"/>",
            );
            if *lockable {
                x.push_str("<disconnected>true</disconnected>");
            }
            if let Some(d) = deadline {
                let _ = write!(x, "<deadline>{}</deadline>", d.hours);
                if d.pause_stops {
                    x.push_str("<pauseStopsDeadline>true</pauseStopsDeadline>");
                }
            }
        }
        Kind::Dummy => x.push_str("<kind>dummy</kind>"),
    }
    x.push_str("</activity>");
}

/// A chain of `len` activities, each on a node drawn at random.
pub fn chain(rng: &mut Rng, nodes: usize, len: u64) -> Vec<Act> {
    let mut acts = Vec::new();
    for id in 1..=len {
        let pre = if id == 1 { Vec::new() } else { vec![id - 1] };
        let mut a = Act::new(id, node(rng, nodes), pre, command(rng, 850, 1500));
        a.contingency = if rng.chance(500) { 0 } else { -1 };
        a.retries = u32::try_from(rng.below(3)).unwrap_or(0);
        a.compensation = rng.chance(300);
        acts.push(a);
    }
    acts
}

/// A start, `width` branches, a join (`and`, `or` or `vote`), an end.
pub fn fan_out(rng: &mut Rng, nodes: usize, width: u64) -> Vec<Act> {
    let mut acts = vec![Act::new(
        1,
        node(rng, nodes),
        Vec::new(),
        command(rng, 950, 800),
    )];
    let branches: Vec<u64> = (2..2 + width).collect();
    for &id in &branches {
        let mut a = Act::new(id, node(rng, nodes), vec![1], command(rng, 800, 1500));
        a.contingency = if rng.chance(700) { 0 } else { -1 };
        acts.push(a);
    }
    let join = 2 + width;
    let mut j = Act::new(join, node(rng, nodes), branches, Kind::Dummy);
    j.merge = match rng.below(3) {
        0 => None,
        1 => Some(">or".to_owned()),
        _ => Some(format!(" votes=\"{}\">vote", (width / 2).max(1))),
    };
    acts.push(j);
    let mut end = Act::new(
        join + 1,
        node(rng, nodes),
        vec![join],
        command(rng, 950, 500),
    );
    end.completion = rng.chance(300);
    acts.push(end);
    acts
}

/// A decision whose completion flag routes to one of two branches, joined by an `or`.
pub fn routes(rng: &mut Rng, nodes: usize) -> Vec<Act> {
    let mut decide = Act::new(
        1,
        node(rng, nodes),
        Vec::new(),
        Kind::Automatic("sim ok=1000 ms=50-600 flags=yes:50|no:50".to_owned()),
    );
    decide.routes = vec![(Some("yes".to_owned()), vec![2]), (None, vec![3])];
    let yes = Act::new(2, node(rng, nodes), vec![1], command(rng, 900, 900));
    let no = Act::new(3, node(rng, nodes), vec![1], command(rng, 900, 900));
    let mut join = Act::new(4, node(rng, nodes), vec![2, 3], Kind::Dummy);
    join.merge = Some(">or".to_owned());
    let last = Act::new(5, node(rng, nodes), vec![4], command(rng, 950, 600));
    vec![decide, yes, no, join, last]
}

/// Draft, then Edit and Review in a loop while Review says `again` (at most three passes),
/// then Publish.
pub fn looped(rng: &mut Rng, nodes: usize) -> Vec<Act> {
    let draft = Act::new(1, node(rng, nodes), Vec::new(), command(rng, 1000, 500));
    let mut edit = Act::new(2, node(rng, nodes), vec![1], command(rng, 1000, 700));
    edit.contingency = 0;
    let mut review = Act::new(
        3,
        node(rng, nodes),
        vec![2],
        Kind::Automatic("sim ok=1000 ms=50-700 flags=again:60|good:40".to_owned()),
    );
    review.looping = Some((2, "again".to_owned(), 3));
    review.contingency = 0;
    let publish = Act::new(4, node(rng, nodes), vec![3], command(rng, 1000, 500));
    vec![draft, edit, review, publish]
}

/// A report, an inspection done by a person (offered to every technician; now and then with
/// a deadline that runs out while the run lasts), a close.
pub fn people(rng: &mut Rng, nodes: usize) -> Vec<Act> {
    let report = Act::new(1, node(rng, nodes), Vec::new(), command(rng, 1000, 500));
    let lockable = rng.chance(400);
    let deadline = rng.chance(400).then(|| Deadline {
        hours: u32::try_from(rng.range(12, 96)).unwrap_or(48),
        pause_stops: rng.chance(500),
    });
    let inspect = Act::new(
        2,
        node(rng, nodes),
        vec![1],
        Kind::Manual { lockable, deadline },
    );
    let close = Act::new(3, node(rng, nodes), vec![2], command(rng, 1000, 500));
    vec![report, inspect, close]
}

/// Activities of task classes on different nodes: `press` conflicts with itself and with
/// `drill`.
pub fn classes(rng: &mut Rng, nodes: usize) -> Vec<Act> {
    let mut acts = Vec::new();
    for id in 1..=3 {
        let mut a = Act::new(id, node(rng, nodes), Vec::new(), command(rng, 950, 2500));
        a.class = Some(if rng.chance(700) { "press" } else { "drill" }.to_owned());
        a.contingency = 0;
        acts.push(a);
    }
    let mut end = Act::new(4, node(rng, nodes), vec![1, 2, 3], command(rng, 1000, 300));
    end.contingency = 0;
    acts.push(end);
    acts
}

/// The class document the classes' activities are decided by.
pub const CLASSES: &str = "<classes><class id=\"press\"><conflicts>press drill</conflicts>\
    <maxWait>120</maxWait></class><class id=\"drill\"/></classes>";

fn node(rng: &mut Rng, nodes: usize) -> usize {
    usize::try_from(rng.below(nodes as u64)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_a_valid_definition_for_any_seed() {
        for seed in 0..40 {
            let mut rng = Rng::new(seed);
            let shapes = [
                chain(&mut rng, 3, 4),
                fan_out(&mut rng, 3, 3),
                routes(&mut rng, 3),
                looped(&mut rng, 3),
                people(&mut rng, 3),
                classes(&mut rng, 3),
            ];
            for (i, acts) in shapes.iter().enumerate() {
                let xml = write(seed * 10 + i as u64, "shape", acts, 3);
                let loaded = mobiwf_xml_schema::load_definition(xml.as_bytes());
                assert!(loaded.is_ok(), "{xml}\n{:?}", loaded.err());
            }
        }
        assert!(mobiwf_xml_schema::load_definition(PAPER.as_bytes()).is_ok());
        assert!(mobiwf_xml_schema::load_classes(CLASSES.as_bytes()).is_ok());
    }
}
