//! Tables of instances, activities, instance data, histories and nodes for the terminal.

use crate::render::ShownEvent;
use mobiwf_book::{ActivityView, Instance, InstanceState, NodeInfo};
use mobiwf_proto::{ActivityId, ActivityState, DataValue, Millis, Writer};
use mobiwf_xml_schema::Contingency;

fn at(base: u64, ms: Option<u64>) -> String {
    match ms {
        Some(ms) => format!("+{}", Millis(ms).since(Millis(base))),
        None => "-".to_owned(),
    }
}

/// `A2 (17)`, or `activity 17` when it has no name or is not in the instance.
fn label(inst: &Instance, id: ActivityId) -> String {
    match inst.activities.iter().find(|a| a.id == id) {
        Some(a) if !a.name.is_empty() => format!("{} ({id})", a.name),
        _ => format!("activity {id}"),
    }
}

/// What the DETAIL column says of an activity: how it started, how often it was tried, why
/// it failed, and what its contingency did.
fn detail(inst: &Instance, a: &ActivityView) -> String {
    let mut notes = Vec::new();
    if let Some(x) = a.stands_for {
        notes.push(format!("in place of {}", label(inst, x)));
    } else if a.partition.is_none() && a.state().is_pending() {
        notes.push("contingency activity (not placed)".to_owned());
    }
    if a.emergency {
        notes.push("emergency start (timeToWait)".to_owned());
    }
    if a.retried > 0 {
        notes.push(format!("tried {} more times", a.retried));
    }
    if let Some(flag) = &a.flag {
        notes.push(format!("flag {flag}"));
    }
    if let Some(d) = &a.detail {
        notes.push(d.clone());
    }
    if let Some(item) = inst.items.get(&a.id) {
        notes.extend(item_notes(item));
    }
    notes.extend(compensation_note(inst, a.id));
    if let Some(grace) = a.overdue() {
        notes.push(format!(
            "{}: withdrawn at {} unless its partner reports it first",
            grace.reason,
            at(inst.submitted_ms, Some(grace.at_ms))
        ));
    }
    if let Some(x) = a.replaced_by() {
        notes.push(format!("replaced by {}", label(inst, x)));
    } else if a.blocked_instead() {
        let x = match a.contingency {
            Contingency::Run(x) => x,
            Contingency::Block | Contingency::Release => ActivityId(1),
        };
        notes.push(format!(
            "its contingency activity {} was already in use: successors cancelled",
            label(inst, x)
        ));
    } else if a.state() == ActivityState::Failed {
        match a.contingency {
            Contingency::Release => notes.push("successors released (contingency 0)".to_owned()),
            Contingency::Block => {
                notes.push("successors cancelled (contingency -1)".to_owned());
            }
            Contingency::Run(_) => {}
        }
    }
    notes.join("; ")
}

/// Where the compensation of an activity is, once its instance's began: `compensated`,
/// `compensating`, `compensation failed: ...`, or `to compensate`.
fn compensation_note(inst: &Instance, id: ActivityId) -> Option<String> {
    let c = inst.compensation.as_ref()?;
    let at = c.order.iter().position(|x| *x == id)?;
    Some(match &c.failed {
        _ if at < c.done => "compensated".to_owned(),
        Some((x, why)) if *x == id => format!("compensation failed: {why}"),
        Some(_) => "not compensated (an earlier compensation failed)".to_owned(),
        None if at == c.done => "compensating".to_owned(),
        None => "to compensate".to_owned(),
    })
}

/// Who a work item is with: `done by alice`, `held by bob (locked)`, `offered to a, b`, or
/// why nobody can take it.
fn item_notes(item: &mobiwf_book::ItemSummary) -> Vec<String> {
    let mut notes = Vec::new();
    let list = |users: &[mobiwf_proto::UserId]| {
        users
            .iter()
            .map(|u| u.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !item.done_by.is_empty() {
        notes.push(format!("done by {}", list(&item.done_by)));
    }
    for h in &item.holders {
        let how = match h.hold {
            mobiwf_proto::Hold::Selected => "selected",
            mobiwf_proto::Hold::Locked => "locked",
        };
        let from = h
            .grantor
            .as_ref()
            .map_or(String::new(), |g| format!(", delegated by {g}"));
        notes.push(format!("{how} by {}{from}", h.user));
    }
    if !item.offered.is_empty() {
        notes.push(format!("offered to {}", list(&item.offered)));
    }
    if let Some(why) = &item.unassigned {
        notes.push(format!("nobody to offer to: {why}"));
    }
    notes
}

/// One instance and its activities, then its given-up partitions.
pub fn instance(inst: &Instance) -> String {
    let mut out = format!(
        "instance {} ({}workflow {}{}): {}",
        inst.id,
        inst.definition
            .as_ref()
            .map_or(String::new(), |d| format!("definition {d}, ")),
        inst.workflow,
        if inst.description.is_empty() {
            String::new()
        } else {
            format!(", {}", inst.description)
        },
        inst.state().as_str()
    );
    if let Some(d) = &inst.detail {
        out += &format!(" ({d})");
    }
    if inst.state() == InstanceState::Interrupted {
        out += " (nothing new starts until `resume`)";
    }
    out += "\n";
    if !inst.inputs.is_empty() {
        let each: Vec<String> = inst
            .inputs
            .iter()
            .map(|(name, value)| format!("{name}={}", value.shown().1.escape_debug()))
            .collect();
        out += &format!("inputs: {}\n", each.join(", "));
    }
    out += &format!(
        "{:<8} {:<16} {:<10} {:<12} {:<10} {:<10} DETAIL\n",
        "ACTIVITY", "NAME", "STATE", "PARTNER", "STARTED", "FINISHED"
    );
    for a in &inst.activities {
        let line = format!(
            "{:<8} {:<16} {:<10} {:<12} {:<10} {:<10} {}",
            a.pass.of(a.id),
            a.name,
            a.state().as_str(),
            a.node.as_ref().map_or("-", |n| n.as_str()),
            at(inst.submitted_ms, a.started_ms),
            at(inst.submitted_ms, a.finished_ms),
            detail(inst, a)
        );
        out += line.trim_end();
        out += "\n";
    }
    for p in &inst.partitions {
        if let Some(why) = p.abandoned() {
            out += &format!("partition {} on {} given up: {why}\n", p.id, p.node);
        }
    }
    out
}

/// The longest string `status --data` shows in full (`--json` shows every value whole).
const SHOWN_VALUE_CHARS: usize = 60;

/// An instance's data, a line per name: its latest value, who wrote it and when (since the
/// instance's submission); then the nodes that did not answer.
pub fn data(inst: &Instance, view: &crate::data::DataView) -> String {
    let mut out = format!(
        "instance {}: {} data value(s)\n{:<16} {:<8} {:<24} {:<10} VALUE\n",
        inst.id,
        view.data.len(),
        "NAME",
        "TYPE",
        "WRITTEN BY",
        "AT"
    );
    for d in &view.data {
        let (kind, value) = d.value.shown();
        let long =
            !matches!(d.value, DataValue::File(_)) && value.chars().count() > SHOWN_VALUE_CHARS;
        let value = if long {
            let cut: String = value.chars().take(SHOWN_VALUE_CHARS).collect();
            format!("{cut}… (--json shows it whole)")
        } else {
            value
        };
        // An input was given at the submission: shown at +0.
        let (by, at_ms) = match d.by {
            Writer::Input => ("input".to_owned(), inst.submitted_ms),
            Writer::Activity(id) => (label(inst, id), Millis::from_micros(d.at_us).as_u64()),
        };
        let line = format!(
            "{:<16} {:<8} {:<24} {:<10} {}",
            d.name,
            kind,
            by,
            at(inst.submitted_ms, Some(at_ms)),
            value.escape_debug()
        );
        out += line.trim_end();
        out += "\n";
    }
    for (node, why) in &view.unanswered {
        out += &format!("node {node} did not answer ({why}): its values are not shown\n");
    }
    out
}

/// A deployed definition and version as a table cell: `maintenance v2` (`-`: none).
fn definition_cell(d: Option<&mobiwf_book::DefinitionRef>) -> String {
    d.map_or("-".to_owned(), |d| format!("{} v{}", d.name, d.version))
}

/// Every instance, one line each.
pub fn instances(all: &[mobiwf_book::InstanceSummary]) -> String {
    let mut out = format!(
        "{:<10} {:<10} {:<20} {:<12} {:<10} DESCRIPTION\n",
        "INSTANCE", "WORKFLOW", "DEFINITION", "STATE", "TOOK"
    );
    for i in all {
        out += &format!(
            "{:<10} {:<10} {:<20} {:<12} {:<10} {}\n",
            i.id,
            i.workflow,
            definition_cell(i.definition.as_ref()),
            i.state.as_str(),
            i.finished_ms
                .map_or("-".to_owned(), |_| at(i.submitted_ms, i.finished_ms)),
            i.description
        );
    }
    out
}

/// Versions as ranges: `1-3,5`.
fn version_ranges(versions: &[mobiwf_book::DefinitionVersion]) -> String {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for v in versions.iter().map(|v| v.0) {
        match ranges.last_mut() {
            Some((_, last)) if *last + 1 == v => *last = v,
            _ => ranges.push((v, v)),
        }
    }
    let shown: Vec<String> = ranges
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    shown.join(",")
}

/// Every deployed definition, one line each: the latest version, every version that can be
/// started, when the latest was deployed, its instances not over, its creator role.
pub fn definitions(all: &[mobiwf_book::DefinitionSummary]) -> String {
    let mut out = format!(
        "{:<24} {:<7} {:<12} {:<20} {:<8} CREATOR ROLE\n",
        "NAME", "LATEST", "VERSIONS", "DEPLOYED (UTC)", "RUNNING"
    );
    for d in all {
        let line = format!(
            "{:<24} {:<7} {:<12} {:<20} {:<8} {}",
            d.name,
            d.latest,
            version_ranges(&d.versions),
            mobiwf_book::format_time(d.deployed_ms),
            d.running,
            d.creator_role.as_ref().map_or("-", |r| r.as_str())
        );
        out += line.trim_end();
        out += "\n";
        for r in &d.version_roles {
            out += &format!(
                "  version {}: its starts also need creator role {}\n",
                r.version, r.role
            );
        }
        for u in &d.unreadable {
            out += &format!(
                "  version {}: UNREADABLE, never started: {}\n",
                u.version, u.problem
            );
        }
    }
    out
}

/// Wall-clock UTC time of day, `HH:MM:SS.mmm`.
fn clock(ms: u64) -> String {
    mobiwf_runtime::process::time_of_day_utc(ms)
}

/// An instance's history, one line per event, by time (ties in the order the controller
/// learnt them): time since the first event, UTC time of day, partner, activity, what.
pub fn history(events: &[ShownEvent]) -> String {
    let mut sorted: Vec<&ShownEvent> = events.iter().collect();
    sorted.sort_by_key(|e| e.at_ms);
    let base = sorted.first().map_or(0, |e| e.at_ms);
    let mut out = format!(
        "{:<10} {:<12} {:<12} {:<8} WHAT\n",
        "TIME", "UTC", "PARTNER", "ACTIVITY"
    );
    for e in sorted {
        out += &format!(
            "{:<10} {:<12} {:<12} {:<8} {}\n",
            at(base, Some(e.at_ms)),
            clock(e.at_ms),
            e.partner.as_ref().map_or("-", |p| p.as_str()),
            e.activity.map_or("-".to_owned(), |a| a.to_string()),
            e.what
        );
    }
    out
}

/// Every registered node; under the table, why each suspected one is.
pub fn nodes(nodes: &[NodeInfo]) -> String {
    let mut out = format!(
        "{:<16} {:<12} {:<10} ADDRESS\n",
        "NAME", "SKILLS", "SUSPECTED"
    );
    for n in nodes {
        let skills: Vec<String> = n.skills.iter().map(ToString::to_string).collect();
        out += &format!(
            "{:<16} {:<12} {:<10} {}\n",
            n.name,
            skills.join(","),
            if n.suspected.is_some() { "yes" } else { "no" },
            n.addrs.first().map_or("-", String::as_str)
        );
    }
    for n in nodes {
        if let Some(why) = &n.suspected {
            out += &format!("{} is suspected: {why}\n", n.name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use mobiwf_book::PartitionView;
    use mobiwf_proto::{ActivityTypeId, InstanceId, NodeId, NodeName};
    use mobiwf_xml_schema::WorkflowId;

    use super::*;

    /// An activity as the store has it: on P1, started at 1 s and ended at 2 s, in `state`
    /// (its state is the book's to change: `more` sets stored fields, as `replaced_by`).
    fn view(
        id: u64,
        name: &str,
        state: ActivityState,
        more: &[(&str, serde_json::Value)],
    ) -> ActivityView {
        let mut v = serde_json::json!({
            "id": id, "name": name, "partition": 1, "node": "P1", "state": state,
            "started_ms": 1_000, "finished_ms": 2_000, "detail": null, "contingency": -1,
        });
        for (field, value) in more {
            v[*field] = value.clone();
        }
        serde_json::from_value(v).expect("an activity view")
    }

    #[test]
    fn status_says_why_and_what_the_contingency_did() {
        let mut a2 = view(
            17,
            "A2",
            ActivityState::Failed,
            &[("replaced_by", 21.into())],
        );
        a2.detail = Some("exit status 3".to_owned());
        a2.retried = 2;
        a2.contingency = Contingency::Run(ActivityId(21));
        let mut a2b = view(21, "A2b", ActivityState::Succeeded, &[]);
        a2b.node = Some(NodeName::new("P2"));
        a2b.stands_for = Some(ActivityId(17));
        a2b.emergency = true;
        let mut a4 = view(19, "A4", ActivityState::Failed, &[]);
        a4.contingency = Contingency::Release;
        a4.detail = Some("partner P2 stopped answering".to_owned());
        let unplaced = [
            ("partition", serde_json::Value::Null),
            ("node", serde_json::Value::Null),
        ];
        let mut spare = view(22, "A9", ActivityState::NotReady, &unplaced);
        (spare.started_ms, spare.finished_ms) = (None, None);
        let given_up: PartitionView = serde_json::from_value(serde_json::json!({
            "id": 2, "node": "P2", "peer": "peer", "deployed": true, "finished": false,
            "abandoned": "partner P2 stopped answering (no answer for 10 s)",
        }))
        .expect("a partition view");
        // Its state is the book's to change: the instance is read as the store has it.
        let inst: Instance = serde_json::from_value(serde_json::json!({
            "id": InstanceId(3), "workflow": WorkflowId(18), "description": "",
            "state": InstanceState::Interrupted, "detail": null, "submitted_ms": 0,
            "finished_ms": null, "partitions": [given_up], "activities": [a2, a2b, a4, spare],
        }))
        .expect("an instance");
        let text = instance(&inst);
        let line = |id: &str| {
            text.lines()
                .find(|l| l.starts_with(id))
                .unwrap_or_else(|| panic!("no line {id} in\n{text}"))
                .to_owned()
        };
        assert!(
            text.starts_with("instance 3 (workflow 18): interrupted"),
            "{text}"
        );
        assert!(
            line("17").ends_with("tried 2 more times; exit status 3; replaced by A2b (21)"),
            "{text}"
        );
        assert!(
            line("21").contains("P2")
                && line("21").ends_with("in place of A2 (17); emergency start (timeToWait)"),
            "{text}"
        );
        assert!(
            line("19")
                .ends_with("partner P2 stopped answering; successors released (contingency 0)"),
            "{text}"
        );
        assert!(
            line("22").ends_with("contingency activity (not placed)"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "partition 2 on P2 given up: partner P2 stopped answering (no answer for 10 s)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn status_and_its_data_show_the_inputs() {
        let inst: Instance = serde_json::from_value(serde_json::json!({
            "id": 4, "workflow": 2, "description": "", "state": "running", "detail": null,
            "submitted_ms": 5_000, "finished_ms": null, "partitions": [],
            "activities": [view(1, "Check", ActivityState::Succeeded, &[])],
            "inputs": { "note": { "string": "north \"gate\"" }, "reading": { "number": "5" } },
        }))
        .expect("an instance");
        let text = instance(&inst);
        assert!(
            text.lines()
                .any(|l| l == r#"inputs: note=north \"gate\", reading=5"#),
            "{text}"
        );
        let mut written = inst.inputs.data();
        written[1] = mobiwf_proto::Datum {
            by: Writer::Activity(ActivityId(1)),
            at_us: 7_000_000,
            ..written[1].clone()
        };
        let view = crate::data::DataView {
            data: written,
            unanswered: Default::default(),
        };
        let text = data(&inst, &view);
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} in\n{text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(line("note"), r#"note string input +0.000s north \"gate\""#);
        assert_eq!(line("reading"), "reading number Check (1) +2.000s 5");
    }

    #[test]
    fn nodes_show_suspicion() {
        let node = |name: &str, suspected: Option<&str>| NodeInfo {
            peer: NodeId::new(name),
            name: NodeName::new(name),
            skills: vec![ActivityTypeId(1), ActivityTypeId(3)],
            addrs: vec![format!("/ip4/127.0.0.1/tcp/1/p2p/{name}")],
            registered_ms: 0,
            seq: 0,
            suspected: suspected.map(str::to_owned),
        };
        let text = nodes(&[node("P1", None), node("P2", Some("no answer for 10 s"))]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("SUSPECTED"), "{text}");
        assert!(
            lines[1].starts_with("P1") && lines[1].contains(" no "),
            "{text}"
        );
        assert!(
            lines[2].starts_with("P2") && lines[2].contains(" yes "),
            "{text}"
        );
        assert_eq!(lines[3], "P2 is suspected: no answer for 10 s", "{text}");
    }

    #[test]
    fn work_items_say_who_has_them() {
        let mut summary = mobiwf_book::ItemSummary {
            offered: vec!["bob".into(), "carol".into()],
            ..Default::default()
        };
        assert_eq!(item_notes(&summary), ["offered to bob, carol"]);
        summary.offered.clear();
        summary.holders.push(mobiwf_proto::Holder {
            user: "carol".into(),
            hold: mobiwf_proto::Hold::Locked,
            since_ms: 5,
            grantor: Some("alice".into()),
        });
        assert_eq!(
            item_notes(&summary),
            ["locked by carol, delegated by alice"]
        );
        summary.holders.clear();
        summary.done_by.push("carol".into());
        assert_eq!(item_notes(&summary), ["done by carol"]);
    }

    #[test]
    fn definitions_show_their_versions_as_ranges() {
        let v = |n| mobiwf_book::DefinitionVersion(n);
        let d = mobiwf_book::DefinitionSummary {
            name: "maintenance".into(),
            latest: v(5),
            versions: vec![v(1), v(2), v(3), v(5)],
            deployed_ms: 1_795_362_832_007,
            creator_role: Some("tech".into()),
            version_roles: Vec::new(),
            running: 2,
            unreadable: Vec::new(),
        };
        let text = definitions(&[d]);
        let line = text.lines().nth(1).expect("a line");
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            [
                "maintenance",
                "5",
                "1-3,5",
                "2026/11/22",
                "15:53:52",
                "2",
                "tech"
            ],
            "{text}"
        );
        assert_eq!(version_ranges(&[v(1)]), "1");
        assert_eq!(version_ranges(&[]), "");
    }

    #[test]
    fn clock_is_utc_time_of_day() {
        // 2026-11-22 15:53:52.007 UTC
        assert_eq!(clock(1_795_362_832_007), "15:53:52.007");
    }
}
