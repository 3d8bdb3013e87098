//! What the chaos run submits, and what the checker expects of each: the paper's workflow
//! (`examples/paper/workflow.xml`, on P1 and P2), the same with its A2 a person's work on P1
//! (completed through the node's API, no command), and a chain across the three nodes whose
//! middle activity fails its first try in odd instances and is retried by design. Every
//! automatic activity's command leaves a mark, `<instance> <activity> <try>` on a line of the marks
//! file, between two pauses: a kill or a stall finds commands before and after their effect.

use std::collections::BTreeMap;

/// The paper's example, as the repository ships it.
const PAPER: &str = include_str!("../../examples/paper/workflow.xml");

/// The description of the chain's definition (what `status` shows of it).
pub const CHAIN_DESCRIPTION: &str = "chaos chain";
/// The paper's description.
pub const PAPER_DESCRIPTION: &str = "Workflow Exemplo";
/// The description of the paper's workflow with a person's A2.
pub const PEOPLE_DESCRIPTION: &str = "Workflow Exemplo, A2 by hand";
/// The paper's activity a person completes in [`Workflow::People`] (on P1).
pub const MANUAL: u64 = 17;

/// The chain's activity that fails its first try in odd instances.
pub const RETRIED: u64 = 3;
/// How many more tries it has.
pub const RETRIES: u32 = 2;

/// The nodes of the mesh: (name, skills). The paper's partners first.
pub const NODES: [(&str, &str); 3] = [("P1", "1,2,3"), ("P2", "1,3"), ("P3", "1")];

/// One workflow of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Workflow {
    /// The paper's example.
    Paper,
    /// The paper's example with A2 a person's work.
    People,
    /// The chain over three nodes.
    Chain,
}

impl Workflow {
    /// Every one, in the order the submitter takes them in turn.
    pub const ALL: [Workflow; 3] = [Workflow::Paper, Workflow::Chain, Workflow::People];

    /// Which workflow an instance runs, from its definition's description.
    pub fn from_description(description: &str) -> Option<Workflow> {
        match description {
            PAPER_DESCRIPTION => Some(Workflow::Paper),
            PEOPLE_DESCRIPTION => Some(Workflow::People),
            CHAIN_DESCRIPTION => Some(Workflow::Chain),
            _ => None,
        }
    }

    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Workflow::Paper => "paper",
            Workflow::People => "people",
            Workflow::Chain => "chain",
        }
    }

    /// Its activities, each with how many tries its command may take by design (0: a
    /// person's work, no command).
    pub fn tries(self) -> BTreeMap<u64, u32> {
        match self {
            Workflow::Paper => (16..=20).map(|a| (a, 1)).collect(),
            Workflow::People => (16..=20).map(|a| (a, u32::from(a != MANUAL))).collect(),
            Workflow::Chain => (1..=6)
                .map(|a| (a, if a == RETRIED { RETRIES + 1 } else { 1 }))
                .collect(),
        }
    }

    /// The definition, its commands marking into `marks`.
    pub fn xml(self, marks: &str) -> String {
        match self {
            Workflow::Paper => paper(marks, false),
            Workflow::People => paper(marks, true),
            Workflow::Chain => chain(marks),
        }
    }
}

/// The command of an activity: a pause, the mark, a pause; `fail_first` makes the first try of
/// an odd instance exit 1 after its mark.
fn command(marks: &str, fail_first: bool) -> String {
    let fail = if fail_first {
        "; [ \"$MOBIWF_TRY\" -gt 1 ] || [ $((MOBIWF_INSTANCE % 2)) -eq 0 ]"
    } else {
        ""
    };
    let text = format!(
        "sleep 0.2; echo \"$MOBIWF_INSTANCE $MOBIWF_ACTIVITY $MOBIWF_TRY\" >> '{marks}'; \
         sleep 0.2{fail}"
    );
    format!("<command>{}</command>", xml_text(&text))
}

/// Escapes text for XML element content.
fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The paper's workflow with a marking command in every activity; with `by_hand`, its A2 a
/// person's work instead (and the description says so).
fn paper(marks: &str, by_hand: bool) -> String {
    if by_hand {
        let old = format!("<description>{PAPER_DESCRIPTION}</description>");
        let new = format!("<description>{PEOPLE_DESCRIPTION}</description>");
        paper_with(&PAPER.replacen(&old, &new, 1), marks, true)
    } else {
        paper_with(PAPER, marks, false)
    }
}

/// `text`, the paper's workflow, with the activities' commands or A2's `<kind>manual</kind>`.
fn paper_with(text: &str, marks: &str, by_hand: bool) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(end) = rest.find("</activity>") {
        out.push_str(&rest[..end]);
        out.push_str("  ");
        let manual = format!("<activity id=\"{MANUAL}\">");
        if by_hand && rest[..end].contains(&manual) {
            out.push_str("<kind>manual</kind>");
        } else {
            out.push_str(&command(marks, false));
        }
        out.push_str("\n    </activity>");
        rest = &rest[end + "</activity>".len()..];
    }
    out.push_str(rest);
    out
}

/// Six activities in a row, on P3, P2, P1, P3, P2, P1: every hop crosses nodes.
fn chain(marks: &str) -> String {
    let mut activities = String::new();
    let mut placed: [Vec<u64>; 3] = Default::default();
    for id in 1..=6u64 {
        let pre = if id > 1 {
            format!("<preconditionId>{}</preconditionId>", id - 1)
        } else {
            String::new()
        };
        let retries = if id == RETRIED {
            format!("<retries><count>{RETRIES}</count><wait>1</wait></retries>")
        } else {
            String::new()
        };
        activities += &format!(
            "<activity id=\"{id}\"><nameActivity>c{id}</nameActivity>\
             <activityTypeId>1</activityTypeId><preconditions>{pre}</preconditions>\
             {retries}{}</activity>",
            command(marks, id == RETRIED)
        );
        placed[usize::try_from((6 - id) % 3).unwrap_or(0)].push(id);
    }
    let mut partitions = String::new();
    let mut partners = String::new();
    for (i, ids) in placed.iter().enumerate() {
        let n = i + 1;
        let ids: String = ids
            .iter()
            .map(|a| format!("<activityId>{a}</activityId>"))
            .collect();
        partitions += &format!("<partition id=\"{n}\"><partnerId>{n}</partnerId>{ids}</partition>");
        partners += &format!(
            "<partner id=\"{n}\"><name>P{n}</name><skills><activityTypeId>1</activityTypeId></skills></partner>"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workflow id=\"77\">\
         <description>{CHAIN_DESCRIPTION}</description><activities>{activities}</activities>\
         <activityTypes><activityType id=\"1\"><description>work</description></activityType>\
         </activityTypes><partitions>{partitions}</partitions><partners>{partners}</partners>\
         </workflow>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_automatic_activity_marks_instance_activity_and_try() {
        for w in Workflow::ALL {
            let xml = w.xml("/tmp/m'arks");
            let marks = xml
                .matches("$MOBIWF_INSTANCE $MOBIWF_ACTIVITY $MOBIWF_TRY")
                .count();
            let automatic = w.tries().values().filter(|t| **t > 0).count();
            assert_eq!(marks, automatic, "{}", w.name());
            assert_eq!(xml.matches("</activity>").count(), w.tries().len());
        }
    }

    #[test]
    fn only_the_chains_retried_activity_may_take_more_than_one_try() {
        assert!(Workflow::Paper.tries().values().all(|t| *t == 1));
        let chain = Workflow::Chain.tries();
        assert_eq!(chain[&RETRIED], RETRIES + 1);
        assert_eq!(chain.values().filter(|t| **t > 1).count(), 1);
        let xml = Workflow::Chain.xml("/m");
        assert_eq!(xml.matches("<retries>").count(), 1);
        assert!(xml.contains("<partner id=\"3\"><name>P3</name>"));
    }

    #[test]
    fn the_people_workflow_is_the_papers_with_a2_by_hand() {
        let xml = Workflow::People.xml("/m");
        assert_eq!(xml.matches("<kind>manual</kind>").count(), 1);
        let a2 = xml.find("<activity id=\"17\">").expect("A2");
        let manual = xml.find("<kind>manual</kind>").expect("manual");
        let a3 = xml.find("<activity id=\"18\">").expect("A3");
        assert!(a2 < manual && manual < a3, "the manual kind is A2's");
        assert_eq!(Workflow::People.tries()[&MANUAL], 0);
        assert_eq!(Workflow::People.tries().len(), 5);
    }

    #[test]
    fn a_description_names_its_workflow() {
        for w in Workflow::ALL {
            let xml = w.xml("/m");
            let description = match w {
                Workflow::Paper => PAPER_DESCRIPTION,
                Workflow::People => PEOPLE_DESCRIPTION,
                Workflow::Chain => CHAIN_DESCRIPTION,
            };
            assert!(xml.contains(&format!("<description>{description}</description>")));
            assert_eq!(Workflow::from_description(description), Some(w));
        }
        assert_eq!(Workflow::from_description("other"), None);
    }
}
