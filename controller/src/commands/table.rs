//! Tables of instances, activities and nodes for the terminal.

use mobiwf_controller::book::{Instance, NodeInfo};

fn at(base: u64, ms: Option<u64>) -> String {
    match ms {
        Some(ms) => format!("+{:.3}s", ms.saturating_sub(base) as f64 / 1000.0),
        None => "-".to_owned(),
    }
}

/// One instance and its activities.
pub fn instance(inst: &Instance) -> String {
    let mut out = format!(
        "instance {} (workflow {}{}): {}",
        inst.id,
        inst.workflow,
        if inst.description.is_empty() {
            String::new()
        } else {
            format!(", {}", inst.description)
        },
        inst.state.as_str()
    );
    if let Some(d) = &inst.detail {
        out += &format!(" ({d})");
    }
    out += "\n";
    out += &format!(
        "{:<8} {:<16} {:<10} {:<12} {:<10} {:<10} DETAIL\n",
        "ACTIVITY", "NAME", "STATE", "PARTNER", "STARTED", "FINISHED"
    );
    for a in &inst.activities {
        out += &format!(
            "{:<8} {:<16} {:<10} {:<12} {:<10} {:<10} {}\n",
            a.id,
            a.name,
            a.state.as_str(),
            a.node.as_deref().unwrap_or("-"),
            at(inst.submitted_ms, a.started_ms),
            at(inst.submitted_ms, a.finished_ms),
            match (a.emergency, a.detail.as_deref()) {
                (true, Some(d)) => format!("emergency start (timeToWait); {d}"),
                (true, None) => "emergency start (timeToWait)".to_owned(),
                (false, d) => d.unwrap_or("").to_owned(),
            }
        );
    }
    out
}

/// Every instance, one line each.
pub fn instances(all: &[Instance]) -> String {
    let mut out = format!(
        "{:<10} {:<10} {:<10} {:<10} DESCRIPTION\n",
        "INSTANCE", "WORKFLOW", "STATE", "TOOK"
    );
    for i in all {
        out += &format!(
            "{:<10} {:<10} {:<10} {:<10} {}\n",
            i.id,
            i.workflow,
            i.state.as_str(),
            i.finished_ms
                .map_or("-".to_owned(), |_| at(i.submitted_ms, i.finished_ms)),
            i.description
        );
    }
    out
}

/// Every registered node.
pub fn nodes(nodes: &[NodeInfo]) -> String {
    let mut out = format!("{:<16} {:<12} ADDRESS\n", "NAME", "SKILLS");
    for n in nodes {
        let skills: Vec<String> = n.skills.iter().map(u64::to_string).collect();
        out += &format!(
            "{:<16} {:<12} {}\n",
            n.name,
            skills.join(","),
            n.addrs.first().map_or("-", String::as_str)
        );
    }
    out
}
