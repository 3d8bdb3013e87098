//! The mesh of the loop tests combined with task classes and pausing: a controller and partners
//! P1 (activity type 1) and P2 (type 2) as processes, the loop's definition, the gates its
//! commands wait at and the log they keep, read back into what ran when.

use std::path::PathBuf;
use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, GATE_LIMIT_TICKS, Node, start_nodes, status_activity, wait_for,
    xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for something that should happen soon.
pub const WAIT: Duration = Duration::from_secs(60);

/// The class document of the tests: `press` excludes itself (one press at a time).
const CLASSES: &str = r#"<classes>
  <class id="press"><conflicts>press</conflicts><maxWait>120</maxWait></class>
</classes>
"#;

/// Activity 2's class, for [`LoopMesh::definition`].
pub const PRESS: &str = "<class>press</class>";

/// A controller (with the class document when `classes` is not empty) and partners P1 and P2.
pub struct LoopMesh {
    dir: PathBuf,
    pub controller: Controller,
    /// Kept running while the test runs.
    _p1: Node,
    pub p2: Node,
    /// The commands' log: `<instance> <activity> <try> start|done <ns>` a line.
    log: PathBuf,
    /// Where the gates are opened: `<instance>-<activity>-<try>`.
    gates: PathBuf,
}

impl LoopMesh {
    pub fn start(test: &str, classes: &str) -> LoopMesh {
        let dir = scratch(test).unwrap();
        let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
        if !classes.is_empty() {
            let file = dir.join("classes.xml");
            std::fs::write(&file, CLASSES).unwrap();
            controller
                .cli(&["classes", "apply", file.to_str().unwrap()], CLI_TIMEOUT)
                .expect_code(0, "classes apply");
        }
        let mut nodes = start_nodes(&dir, &controller, &[("P1", "1"), ("P2", "2")]).into_iter();
        let (Some(p1), Some(p2)) = (nodes.next(), nodes.next()) else {
            unreachable!("two nodes were started")
        };
        let gates = dir.join("gates");
        std::fs::create_dir_all(&gates).unwrap();
        LoopMesh {
            log: dir.join("ran.log"),
            gates,
            dir,
            controller,
            _p1: p1,
            p2,
        }
    }

    /// A command that logs its start, waits at its gate (when `gated`), sleeps a tenth of a
    /// second (long enough for an overlap to show) and logs its end, then runs `then`.
    fn command(&self, gated: bool, then: &str) -> String {
        let (log, gates) = (self.log.display(), self.gates.display());
        let me = "$MOBIWF_INSTANCE $MOBIWF_ACTIVITY $MOBIWF_TRY";
        let gate = "$MOBIWF_INSTANCE-$MOBIWF_ACTIVITY-$MOBIWF_TRY";
        let wait = if gated {
            format!(
                "i=0; while [ ! -e '{gates}'/{gate} ] && [ $i -lt {GATE_LIMIT_TICKS} ]; \
                 do sleep 0.05; i=$((i+1)); done; "
            )
        } else {
            String::new()
        };
        format!(
            "echo \"{me} start $(date +%s%N)\" >> '{log}'; {wait}sleep 0.1; \
             echo \"{me} done $(date +%s%N)\" >> '{log}'; {then}"
        )
    }

    /// Writes the loop's definition: 1 then 2 (with `class`, waiting at its gate) on P1; 3,
    /// the loop's end back to 2, on P2, asking for another pass (`again`) until the
    /// `passes`th (at most 3), its command gated too when `gate_end`; then 4 on P2.
    pub fn definition(&self, class: &str, passes: u32, gate_end: bool) -> PathBuf {
        let counter = format!("'{}'/passes-$MOBIWF_INSTANCE", self.dir.display());
        let flag = format!(
            "r=$(cat {counter} 2>/dev/null || echo 0); r=$((r+1)); echo $r > {counter}; \
             if [ $r -lt {passes} ]; then echo again; else echo done; fi > \"$MOBIWF_FLAG_FILE\""
        );
        let act = |id: u64, ty: u64, pre: &str, extra: &str| {
            let pre = if pre.is_empty() {
                String::new()
            } else {
                format!("<preconditionId>{pre}</preconditionId>")
            };
            format!(
                "<activity id=\"{id}\"><nameActivity>A{id}</nameActivity>\
                 <activityTypeId>{ty}</activityTypeId><preconditions>{pre}</preconditions>\
                 {extra}</activity>"
            )
        };
        let command = |c: String| format!("<command>{}</command>", xml_text(&c));
        let xml = format!(
            "<workflow id=\"82\"><description>loop</description><activities>{}{}{}{}</activities>\
             <activityTypes><activityType id=\"1\"/><activityType id=\"2\"/></activityTypes>\
             <partitions>\
               <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId></partition>\
               <partition id=\"2\"><partnerId>2</partnerId><activityId>3</activityId><activityId>4</activityId></partition>\
             </partitions>\
             <partners>\
               <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
               <partner id=\"2\"><name>P2</name><skills><activityTypeId>2</activityTypeId></skills></partner>\
             </partners></workflow>",
            act(1, 1, "", ""),
            act(
                2,
                1,
                "1",
                &format!("{}{class}", command(self.command(true, "")))
            ),
            act(
                3,
                2,
                "2",
                &format!(
                    "<loop to=\"2\" while=\"again\" max=\"3\"/>{}",
                    command(self.command(gate_end, &flag))
                )
            ),
            act(4, 2, "3", ""),
        );
        let file = self.dir.join("loop.xml");
        std::fs::write(&file, xml).unwrap();
        file
    }

    /// Opens the gate of `activity` of instance `id` in pass `pass` (its try `pass`: these
    /// commands are tried once a pass, and `MOBIWF_TRY` counts on across passes from 1).
    pub fn open(&self, id: u64, activity: u64, pass: u64) {
        let gate = self.gates.join(format!("{id}-{activity}-{pass}"));
        std::fs::write(gate, "").unwrap();
    }

    /// The lines of the commands' log, split into words.
    fn lines(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .collect()
    }

    /// Whether the log has `what` (start, done) of `activity` of `id` in pass `pass`.
    fn logged(&self, id: u64, activity: u64, pass: u64, what: &str) -> bool {
        let me = [id.to_string(), activity.to_string(), pass.to_string()];
        self.lines()
            .iter()
            .any(|w| w.len() == 5 && w[..3] == me && w[3] == what)
    }

    /// Waits until the command of `activity` of `id` started in pass `pass`.
    pub fn wait_started(&self, id: u64, activity: u64, pass: u64) {
        wait_for(
            format!("instance {id}'s activity {activity} to start in pass {pass}"),
            WAIT,
            || self.logged(id, activity, pass, "start").then_some(()),
        );
    }

    /// Waits until the command of `activity` of `id` ended in pass `pass`.
    pub fn wait_done(&self, id: u64, activity: u64, pass: u64) {
        wait_for(
            format!("instance {id}'s activity {activity} to end in pass {pass}"),
            WAIT,
            || self.logged(id, activity, pass, "done").then_some(()),
        );
    }

    /// How often the command of `activity` of `id` started.
    pub fn starts(&self, id: u64, activity: u64) -> usize {
        let me = [id.to_string(), activity.to_string()];
        self.lines()
            .iter()
            .filter(|w| w.len() == 5 && w[..2] == me && w[3] == "start")
            .count()
    }

    /// The runs of activity 2's command (the press), from the log.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        for w in self.lines() {
            let [instance, activity, attempt, what, at] = &w[..] else {
                panic!("unexpected line {w:?} in {}", self.log.display());
            };
            if activity != "2" {
                continue;
            }
            let at: u128 = at.parse().unwrap();
            let key = format!("{instance}-{attempt}");
            match what.as_str() {
                "start" => spans.push(Span {
                    key,
                    start: at,
                    end: None,
                }),
                "done" => {
                    let span = spans
                        .iter_mut()
                        .find(|s| s.key == key)
                        .unwrap_or_else(|| panic!("{w:?} before its start"));
                    span.end = Some(at);
                }
                _ => panic!("unexpected line {w:?}"),
            }
        }
        spans.sort_by_key(|s| s.start);
        spans
    }

    /// `mobiwf-controller ARGS`, its exit code checked; what it printed.
    pub fn operator(&self, args: &[&str], code: i32) -> String {
        let out = self.controller.cli(args, CLI_TIMEOUT);
        out.expect_code(code, &format!("mobiwf-controller {args:?}"));
        format!("{}{}", out.stdout, out.stderr)
    }

    /// Waits until the controller shows `activity` of `id` paused (or not); its view then.
    pub fn wait_paused(&self, id: u64, activity: u64, paused: bool) -> Value {
        wait_for(
            format!("the controller to show activity {activity} of instance {id} paused: {paused}"),
            WAIT,
            || {
                let a = status_activity(&self.controller.status(id), activity).clone();
                (a["paused"].is_object() == paused).then_some(a)
            },
        )
    }

    /// Waits for an event of instance `id` whose words contain `text`.
    pub fn wait_history(&self, id: u64, text: &str) -> Value {
        wait_for(
            format!("an event {text:?} in the history of instance {id}"),
            WAIT,
            || {
                self.controller
                    .history(id)
                    .into_iter()
                    .find(|e| e["what"].as_str().is_some_and(|w| w.contains(text)))
            },
        )
    }

    /// When (ms) the first event of instance `id` whose words contain `text` happened.
    pub fn event_at(&self, id: u64, text: &str) -> u64 {
        self.wait_history(id, text)["at_ms"].as_u64().unwrap()
    }

    /// The history of instance `id`, in words.
    pub fn history(&self, id: u64) -> Vec<String> {
        self.controller
            .history(id)
            .iter()
            .map(|e| e["what"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// One run of a command: which instance and try, from when to when (ns, the machine's clock).
#[derive(Debug, Clone)]
pub struct Span {
    key: String,
    start: u128,
    end: Option<u128>,
}

impl Span {
    /// Panics unless every run ended and no two overlap.
    pub fn assert_apart(spans: &[Span]) {
        for (i, a) in spans.iter().enumerate() {
            let a_end = a.end.unwrap_or_else(|| panic!("{a:?} never ended"));
            if let Some(b) = spans.get(i + 1) {
                assert!(
                    a_end < b.start,
                    "{a:?} and {b:?} ran at once; every run: {spans:#?}"
                );
            }
        }
    }
}
