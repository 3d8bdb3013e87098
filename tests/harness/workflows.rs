//! Workflow documents for the tests, and checks of an instance's outcome.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{Controller, Node, wait_for};
use crate::repo_root;

/// The placement of a workflow of three activities A (1), B (2) and C (3) of type 1 on the
/// paper mesh's two partners: A and C on P1, B on P2, so what B reads or writes crosses the
/// network both ways. Its `<partitions>` and `<partners>`, to go after `<activityTypes>`.
pub const A_B_C_PLACEMENT: &str = "<partitions>\
    <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId><activityId>3</activityId></partition>\
    <partition id=\"2\"><partnerId>2</partnerId><activityId>2</activityId></partition>\
    </partitions><partners>\
    <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
    <partner id=\"2\"><name>P2</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
    </partners>";

/// The paper's example workflow (`examples/paper/workflow.xml`) with `extra(activity id)`
/// inserted in each `<activity>` (e.g. `<command>...</command>` or `<kind>manual</kind>`).
pub fn paper_workflow_with(extra: impl Fn(u64) -> String) -> String {
    let text = std::fs::read_to_string(repo_root().join("examples/paper/workflow.xml")).unwrap();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("<activity id=\"") {
        let after = &rest[start + "<activity id=\"".len()..];
        let id: u64 = after[..after.find('"').unwrap()].parse().unwrap();
        let end = start + rest[start..].find("</activity>").unwrap();
        out.push_str(&rest[..end]);
        out.push_str("  ");
        out.push_str(&extra(id));
        out.push_str("\n    ");
        rest = &rest[end..];
        // Move past this closing tag.
        out.push_str("</activity>");
        rest = &rest["</activity>".len()..];
    }
    out.push_str(rest);
    out
}

/// Writes `dir/workflow.xml`, the paper's workflow whose every activity's command waits
/// `pause` (none when zero) and then appends `$MOBIWF_INSTANCE $MOBIWF_ACTIVITY` to `log`
/// (what [`super::activity_lines`] counts); gives its path.
pub fn logging_workflow(dir: &Path, log: &Path, pause: Duration) -> PathBuf {
    let xml = paper_workflow_with(|_| {
        let wait = if pause.is_zero() {
            String::new()
        } else {
            format!("sleep {}; ", pause.as_secs_f64())
        };
        let command = format!(
            "{wait}echo \"$MOBIWF_INSTANCE $MOBIWF_ACTIVITY\" >> '{}'",
            log.display()
        );
        format!("<command>{}</command>", xml_text(&command))
    });
    let file = dir.join("workflow.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

/// Escapes text for XML element content.
pub fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One activity of an instance's `status --json`; the test fails when it has none.
pub fn status_activity(status: &Value, id: u64) -> &Value {
    status["activities"]
        .as_array()
        .and_then(|acts| acts.iter().find(|a| a["id"].as_u64() == Some(id)))
        .unwrap_or_else(|| panic!("no activity {id} in:\n{status:#}"))
}

/// Checks an instance's `status --json`: every activity in state `succeeded`, and each on the
/// node `expected` names for it (activity id, node name).
pub fn assert_all_succeeded(status: &Value, expected: &[(u64, &str)]) {
    assert_eq!(
        status["state"], "succeeded",
        "instance not succeeded:\n{status:#}"
    );
    let acts = status["activities"].as_array().expect("activities array");
    assert_eq!(acts.len(), expected.len(), "activities:\n{status:#}");
    for (id, node) in expected {
        let a = acts
            .iter()
            .find(|a| a["id"].as_u64() == Some(*id))
            .unwrap_or_else(|| panic!("no activity {id} in:\n{status:#}"));
        assert_eq!(a["state"], "succeeded", "activity {id}:\n{status:#}");
        assert_eq!(a["node"], *node, "activity {id} ran elsewhere:\n{status:#}");
    }
}

/// Waits until the paper's two partitions of instance `id` are deployed and its manual A2
/// (17) is on P1's worklist.
pub fn wait_deployed_and_offered(controller: &Controller, p1: &Node, id: u64) {
    wait_for(
        "both partitions to be deployed",
        Duration::from_secs(30),
        || {
            let status = controller.status(id);
            let parts = status["partitions"].as_array()?;
            (parts.len() == 2 && parts.iter().all(|p| p["deployed"] == true)).then_some(())
        },
    );
    wait_for("A2 (17) on P1's worklist", Duration::from_secs(30), || {
        p1.worklist()
            .as_array()?
            .iter()
            .any(|w| w["instance"].as_u64() == Some(id) && w["activity"] == 17)
            .then_some(())
    });
}
