//! Ordering requirements between definitions combined with loops and with reruns, on the
//! real binaries (a controller and partners P1 and P2 as processes; definitions P1, T11 then
//! T12, and P2, T21 then T22, deployed under their names; the ordering `T11 : T21`, and for
//! reruns the seed's two pairs). Every command logs its start and end with the machine's clock
//! and may wait at a gate of its instance, task and try, so the order is read from what ran.
//!
//! - Loops: T12 ends a loop back to T11, T22 one back to T21, two passes each. The instance of
//!   P1 that asked first goes first at each pass: the second pass of the other's T21 waits for
//!   the second pass of its T11, under way when T21 asks (`status`, `history` and `sync show`
//!   say so, naming T21's pass), and starts only once it ended.
//! - Reruns: the earlier instance's T11 fails, so its instance fails and leaves the relative
//!   order: the later instance's T21, which waited for it, goes on. An operator's rerun of T11
//!   runs it again without running T21 again, and the instance rerun asks as a newcomer, now
//!   after the other: its T12 waits for the other's T22.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, GATE_LIMIT_TICKS, Node, start_nodes, wait_for, xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for something that should happen soon.
const WAIT: Duration = Duration::from_secs(120);

/// A controller and partners P1 and P2, with the commands' log and gates.
struct Orders {
    dir: PathBuf,
    controller: Controller,
    _nodes: Vec<Node>,
    /// `<instance> <task> <try> start|end <ns>` a line.
    log: PathBuf,
    gates: PathBuf,
}

impl Orders {
    fn start(test: &str) -> Orders {
        let dir = scratch(test).unwrap();
        let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
        let nodes = start_nodes(&dir, &controller, &[("P1", "1"), ("P2", "1")]);
        let gates = dir.join("gates");
        std::fs::create_dir_all(&gates).unwrap();
        Orders {
            log: dir.join("ran.log"),
            gates,
            dir,
            controller,
            _nodes: nodes,
        }
    }

    /// A command of `task` that logs its start, waits at its gate when `gated`, logs its end
    /// and then runs `then`.
    fn command(&self, task: &str, gated: bool, then: &str) -> String {
        let (log, gates) = (self.log.display(), self.gates.display());
        let me = format!("$MOBIWF_INSTANCE {task} $MOBIWF_TRY");
        let wait = if gated {
            format!(
                "i=0; while [ ! -e '{gates}'/$MOBIWF_INSTANCE-{task}-$MOBIWF_TRY ] \
                 && [ $i -lt {GATE_LIMIT_TICKS} ]; do sleep 0.05; i=$((i+1)); done; "
            )
        } else {
            String::new()
        };
        format!(
            "echo \"{me} start $(date +%s%N)\" >> '{log}'; {wait}\
             echo \"{me} end $(date +%s%N)\" >> '{log}'; {then}"
        )
    }

    /// Deploys definition `name` (on the partner of that name): `first` (activity 1), then
    /// `second` (activity 2), each with its command and more elements.
    fn deploy(&self, name: &str, [first, second]: [(&str, String, &str); 2]) {
        let activity = |id: u64, (task, command, extra): &(&str, String, &str), pre: &str| {
            format!(
                "<activity id=\"{id}\"><nameActivity>{task}</nameActivity>\
                 <activityTypeId>1</activityTypeId>\
                 <contingencyActivityId>-1</contingencyActivityId>\
                 <preconditions>{pre}</preconditions>{extra}<command>{}</command></activity>",
                xml_text(command)
            )
        };
        let xml = format!(
            "<workflow id=\"9\"><description>{name}</description><activities>{}{}</activities>\
             <activityTypes><activityType id=\"1\"/></activityTypes>\
             <partitions><partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId>\
             <activityId>2</activityId></partition></partitions>\
             <partners><partner id=\"1\"><name>{name}</name><skills><activityTypeId>1</activityTypeId>\
             </skills></partner></partners></workflow>",
            activity(1, &first, ""),
            activity(2, &second, "<preconditionId>1</preconditionId>"),
        );
        let file = self.dir.join(format!("{name}.xml"));
        std::fs::write(&file, xml).unwrap();
        let args = ["deploy", file.to_str().unwrap(), "--name", name];
        self.controller
            .cli(&args, CLI_TIMEOUT)
            .expect_code(0, "deploy");
    }

    /// Applies the ordering text `text`.
    fn order(&self, text: &str) {
        let file = self.dir.join("order.pdl");
        std::fs::write(&file, text).unwrap();
        let args = ["orderings", "apply", file.to_str().unwrap()];
        self.controller
            .cli(&args, CLI_TIMEOUT)
            .expect_code(0, "orderings apply");
    }

    /// Starts an instance of definition `name`: its id.
    fn start_instance(&self, name: &str) -> u64 {
        let out = self.controller.cli(&["start", name], CLI_TIMEOUT);
        out.expect_code(0, &format!("start {name}"));
        out.stdout.trim().parse().unwrap()
    }

    /// Opens the gate of `task` of instance `id` for try `attempt` (`MOBIWF_TRY`, from 1).
    fn open(&self, id: u64, task: &str, attempt: u32) {
        std::fs::write(self.gates.join(format!("{id}-{task}-{attempt}")), "").unwrap();
    }

    /// When `task` of instance `id` logged `what` (start, end) on try `attempt`, ns.
    fn logged(&self, id: u64, task: &str, attempt: u32, what: &str) -> Option<u128> {
        let me = [id.to_string(), task.to_owned(), attempt.to_string()];
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.len() == 5 && w[..3] == me && w[3] == what)
            .map(|w| w[4].parse().unwrap())
    }

    /// Waits until `task` of instance `id` logged `what` on try `attempt`: when, ns.
    fn wait_logged(&self, id: u64, task: &str, attempt: u32, what: &str) -> u128 {
        wait_for(
            format!("instance {id}'s {task} to {what} (try {attempt})"),
            WAIT,
            || self.logged(id, task, attempt, what),
        )
    }

    /// How often `task` of instance `id` started.
    fn starts(&self, id: u64, task: &str) -> usize {
        let me = [id.to_string(), task.to_owned()];
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|w| w.len() == 5 && w[..2] == me && w[3] == "start")
            .count()
    }

    /// Waits until `task` of instance `id` is `synchronizing`, waiting `after` ("after
    /// instance 1's T11"); its view then.
    fn wait_ordered(&self, id: u64, task: &str, after: &str) -> Value {
        wait_for(
            format!("instance {id}'s {task} to wait {after}"),
            WAIT,
            || {
                let status = self.controller.status(id);
                let a = status["activities"]
                    .as_array()?
                    .iter()
                    .find(|a| a["name"] == task)?
                    .clone();
                let waits = a["state"] == "synchronizing"
                    && a["detail"].as_str().is_some_and(|d| d.contains(after));
                waits.then_some(a)
            },
        )
    }

    fn history(&self, id: u64) -> Vec<String> {
        self.controller
            .history(id)
            .iter()
            .map(|e| e["what"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// The end of a loop back to activity 1: two passes (flag `again` after the first).
fn loop_end(dir: &Path) -> (String, &'static str) {
    let counter = format!(
        "'{}'/passes-$MOBIWF_INSTANCE-$MOBIWF_ACTIVITY",
        dir.display()
    );
    let flag = format!(
        "r=$(cat {counter} 2>/dev/null || echo 0); r=$((r+1)); echo $r > {counter}; \
         if [ $r -lt 2 ]; then echo again; else echo done; fi > \"$MOBIWF_FLAG_FILE\""
    );
    (flag, "<loop to=\"1\" while=\"again\" max=\"3\"/>")
}

#[test]
fn each_pass_of_the_later_instance_s_task_waits_for_the_pass_of_the_earlier_under_way() {
    let o = Orders::start("orderings-loops");
    let (flag, back) = loop_end(&o.dir);
    o.deploy(
        "P1",
        [
            ("T11", o.command("T11", true, ""), ""),
            ("T12", o.command("T12", false, &flag), back),
        ],
    );
    o.deploy(
        "P2",
        [
            ("T21", o.command("T21", false, ""), ""),
            ("T22", o.command("T22", true, &flag), back),
        ],
    );
    o.order("WORKFLOW_DEFINITIONS P1 : P2;\nRELATIVE_ORDER { T11 : T21; }\n");

    let first = o.start_instance("P1");
    o.wait_logged(first, "T11", 1, "start");
    let later = o.start_instance("P2");
    let after = format!("after instance {first}'s T11");
    o.wait_ordered(later, "T21", &after);
    // The first pass: T21 goes once T11 ended; the later's loop end is held at its gate
    // until the earlier's second pass of T11 is under way.
    o.open(first, "T11", 1);
    o.wait_logged(first, "T11", 2, "start");
    o.wait_logged(later, "T22", 1, "start");
    o.open(later, "T22", 1);
    o.open(later, "T22", 2);

    let waiting = o.wait_ordered(later, "T21", &after);
    assert_eq!(waiting["pass"], 2, "its second pass waits: {waiting:#}");
    let history = o.history(later);
    let words = format!("T21 (1#2) waits for the relative order of its instance: {after}");
    assert!(history.iter().any(|h| h.contains(&words)), "{history:#?}");
    let sync = o.controller.cli(&["sync", "show"], CLI_TIMEOUT);
    assert!(
        sync.stdout
            .lines()
            .any(|l| l.starts_with("orders") && l.contains("T21 (1#2)") && l.contains(&after)),
        "{}",
        sync.stdout
    );

    o.open(first, "T11", 2);
    for id in [first, later] {
        o.controller
            .wait(id, WAIT.as_secs())
            .expect_code(0, "both instances succeed");
    }
    for attempt in [1, 2] {
        let ended = o.wait_logged(first, "T11", attempt, "end");
        let began = o.wait_logged(later, "T21", attempt, "start");
        assert!(
            ended < began,
            "pass {attempt}: instance {first}'s T11 ended at {ended} ns, after instance \
             {later}'s T21 started at {began} ns"
        );
    }
}

#[test]
fn a_rerun_of_the_earlier_task_runs_it_again_and_its_instance_asks_as_a_newcomer() {
    let o = Orders::start("orderings-rerun");
    // T11 fails its first try, at its gate; a rerun's try succeeds.
    let fail_first = "[ \"$MOBIWF_TRY\" -gt 1 ]";
    o.deploy(
        "P1",
        [
            ("T11", o.command("T11", true, fail_first), ""),
            ("T12", o.command("T12", false, ""), ""),
        ],
    );
    o.deploy(
        "P2",
        [
            ("T21", o.command("T21", false, ""), ""),
            ("T22", o.command("T22", true, ""), ""),
        ],
    );
    o.order("WORKFLOW_DEFINITIONS P1 : P2;\nRELATIVE_ORDER { T11 : T21; T12 : T22; }\n");

    let first = o.start_instance("P1");
    o.wait_logged(first, "T11", 1, "start");
    let later = o.start_instance("P2");
    o.wait_ordered(later, "T21", &format!("after instance {first}'s T11"));
    // T11 fails: its instance fails and leaves the order; T21 goes on.
    o.open(first, "T11", 1);
    o.controller
        .wait(first, WAIT.as_secs())
        .expect_code(1, "the first instance fails");
    let t21_ended = o.wait_logged(later, "T21", 1, "end");
    o.wait_logged(later, "T22", 1, "start");

    o.open(first, "T11", 2);
    let out = o
        .controller
        .cli(&["rerun", &first.to_string(), "1"], CLI_TIMEOUT);
    out.expect_code(0, "rerun T11");
    // Its rerun runs (T21 is over) and its T12 now waits for the other's T22.
    let rerun_began = o.wait_logged(first, "T11", 2, "start");
    assert!(t21_ended < rerun_began, "the rerun ran after T21");
    let t12 = o.wait_ordered(first, "T12", &format!("after instance {later}'s T22"));
    assert_eq!(t12["state"], "synchronizing", "{t12:#}");
    o.open(later, "T22", 1);
    for id in [later, first] {
        o.controller
            .wait(id, WAIT.as_secs())
            .expect_code(0, "both instances succeed");
    }
    let t22_ended = o.wait_logged(later, "T22", 1, "end");
    let t12_began = o.wait_logged(first, "T12", 1, "start");
    assert!(
        t22_ended < t12_began,
        "the rerun instance's T12 went after T22"
    );
    assert_eq!(o.starts(later, "T21"), 1, "T21 is not run again");
    assert_eq!(
        o.starts(first, "T11"),
        2,
        "T11 ran twice: its try and its rerun"
    );
}
