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
    label_in(inst, id, mobiwf_proto::Pass::FIRST)
}

/// An activity of `inst` in pass `pass` of a loop: `Check (3#2)` (`Check (3)` in the first).
fn label_in(inst: &Instance, id: ActivityId, pass: mobiwf_proto::Pass) -> String {
    let serial = pass.of(id);
    match inst.activities.iter().find(|a| a.id == id) {
        Some(a) if !a.name.is_empty() => format!("{} ({serial})", a.name),
        _ => format!("activity {serial}"),
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
    if let Some(pause) = a.paused() {
        notes.push(format!(
            "paused by {} at {} (was {}; `resume {} {}` goes on)",
            pause.by,
            at(inst.submitted_ms, Some(pause.since_ms)),
            a.state().as_str(),
            inst.id,
            a.id
        ));
    }
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
            if a.paused().is_some() {
                "paused"
            } else {
                a.state().as_str()
            },
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

/// An instance's data, a line per name: its latest value, who wrote it (and in which pass of a
/// loop, `#2`) and when (since the instance's submission); then what earlier passes wrote; then
/// the nodes that did not answer.
pub fn data(inst: &Instance, view: &crate::data::DataView) -> String {
    let header = format!(
        "{:<16} {:<8} {:<24} {:<10} VALUE\n",
        "NAME", "TYPE", "WRITTEN BY", "AT"
    );
    let mut out = format!(
        "instance {}: {} data value(s)\n{header}",
        inst.id,
        view.data.len()
    );
    for d in &view.data {
        out += &datum_line(inst, d);
    }
    if !view.earlier.is_empty() {
        out += &format!(
            "written by earlier passes of loops: {} value(s)\n{header}",
            view.earlier.len()
        );
        for d in &view.earlier {
            out += &datum_line(inst, d);
        }
    }
    for (node, why) in &view.unanswered {
        out += &format!("node {node} did not answer ({why}): its values are not shown\n");
    }
    out
}

/// One value of `status --data`, a line.
fn datum_line(inst: &Instance, d: &mobiwf_proto::Datum) -> String {
    let (kind, value) = d.value.shown();
    let long = !matches!(d.value, DataValue::File(_)) && value.chars().count() > SHOWN_VALUE_CHARS;
    let value = if long {
        let cut: String = value.chars().take(SHOWN_VALUE_CHARS).collect();
        format!("{cut}… (--json shows it whole)")
    } else {
        value
    };
    // An input was given at the submission: shown at +0.
    let (by, at_ms) = match d.by {
        Writer::Input => ("input".to_owned(), inst.submitted_ms),
        Writer::Activity(id) => (
            label_in(inst, id, d.pass),
            Millis::from_micros(d.at_us).as_u64(),
        ),
    };
    let line = format!(
        "{:<16} {:<8} {:<24} {:<10} {}",
        d.name,
        kind,
        by,
        at(inst.submitted_ms, Some(at_ms)),
        value.escape_debug()
    );
    format!("{}\n", line.trim_end())
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
mod tests;
