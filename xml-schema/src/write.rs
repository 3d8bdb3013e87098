//! Model → XML text, indented like the published examples.
//!
//! Writes every element of the published languages (so the output reads like Figures 9 and
//! 10), and our extensions only when they differ from their defaults (so documents without
//! them stay exactly as published). Always UTF-8.

use std::fmt::Write as _;

use crate::model::{
    Activity, ActivityKind, Adjacent, Basis, DataAccess, DataItem, Input, Merge, Method,
    PartitionActivity, PartitionDocument, People, Policy, Precondition, Retries, Route, Rule,
    TaskState, WorkflowDefinition,
};

/// Writes a workflow definition.
pub fn write_definition(def: &WorkflowDefinition) -> String {
    let mut out = Out::new();
    out.open("workflow", Some(def.id.0));
    out.leaf("description", &def.description);
    if let Some(name) = &def.name {
        out.leaf("name", name);
    }
    if let Some(role) = &def.creator_role {
        out.leaf("creatorRole", role);
    }
    out.list("activities", def.activities.is_empty(), |out| {
        for a in &def.activities {
            write_activity(out, a);
        }
    });
    out.list("activityTypes", def.activity_types.is_empty(), |out| {
        for t in &def.activity_types {
            out.open("activityType", Some(t.id.0));
            out.leaf("description", &t.description);
            out.close("activityType");
        }
    });
    out.list("partitions", def.partitions.is_empty(), |out| {
        for p in &def.partitions {
            out.open("partition", Some(p.id.0));
            out.leaf("name", &p.name);
            out.leaf("partnerId", p.partner);
            out.leaf("timeOut", p.time_out_secs);
            for a in &p.activities {
                out.leaf("activityId", a);
            }
            out.close("partition");
        }
    });
    out.list("partners", def.partners.is_empty(), |out| {
        for p in &def.partners {
            out.open("partner", Some(p.id.0));
            out.leaf("name", &p.name);
            out.leaf("description", &p.description);
            out.leaf("ip", &p.location);
            out.list("skills", p.skills.is_empty(), |out| {
                for s in &p.skills {
                    out.leaf("activityTypeId", s);
                }
            });
            out.close("partner");
        }
    });
    out.data(&def.data);
    if !def.applications.is_empty() {
        out.open("applications", None);
        for application in &def.applications {
            out.application(application);
        }
        out.close("applications");
    }
    out.close("workflow");
    out.buf
}

/// One activity of a definition.
fn write_activity(out: &mut Out, a: &Activity) {
    out.open("activity", Some(a.id.0));
    out.leaf("nameActivity", &a.name);
    out.leaf("descriptionActivity", &a.description);
    out.leaf("activityTypeId", a.activity_type);
    out.leaf("status", a.status.code());
    out.leaf("timeToWait", a.time_to_wait_secs);
    out.leaf("contingencyActivityId", a.contingency.code());
    out.leaf("timeOut", a.time_out_secs);
    out.list("preconditions", a.preconditions.is_empty(), |out| {
        for p in &a.preconditions {
            out.leaf("preconditionId", p);
        }
    });
    out.depends(a.depends.as_ref());
    out.routing(&a.merge, &a.routes, a.completion);
    out.loop_back(a.loop_back.as_ref());
    out.extensions(
        a.kind,
        [a.command.as_deref(), a.compensation.as_deref()],
        a.retries,
        a.class.as_ref(),
    );
    if let Some(name) = &a.application {
        out.leaf("application", name);
    }
    out.access(&a.data);
    out.people(&a.people);
    out.close("activity");
}

/// Writes a partition document.
pub fn write_partition(doc: &PartitionDocument) -> String {
    let mut out = Out::new();
    out.open("workflow", Some(doc.workflow_id.0));
    if let Some(start) = &doc.start_time {
        out.leaf("startTime", start);
    }
    out.list("activities", doc.activities.is_empty(), |out| {
        for a in &doc.activities {
            write_partition_activity(out, a);
        }
    });
    out.data(&doc.data);
    out.close("workflow");
    out.buf
}

fn write_partition_activity(out: &mut Out, a: &PartitionActivity) {
    out.open("activity", Some(a.id.0));
    out.leaf("nameActivity", &a.name);
    out.leaf("descriptionActivity", &a.description);
    out.leaf("status", a.status.code());
    out.leaf("responseImmediate", u8::from(a.response_immediate));
    out.leaf("timeToWait", a.time_to_wait_secs);
    out.leaf("contingencyActivityId", a.contingency.code());
    out.list("preconditions", a.preconditions.is_empty(), |out| {
        for p in &a.preconditions {
            out.line(&precondition(p));
        }
    });
    out.depends(a.depends.as_ref());
    out.routing(&a.merge, &a.routes, a.completion);
    out.loop_back(a.loop_back.as_ref());
    out.list("adjacents", a.adjacents.is_empty(), |out| {
        for adj in &a.adjacents {
            out.line(&adjacent(adj));
        }
    });
    if a.time_out_secs != 0 {
        out.leaf("timeOut", a.time_out_secs);
    }
    out.extensions(
        a.kind,
        [a.command.as_deref(), a.compensation.as_deref()],
        a.retries,
        a.class.as_ref(),
    );
    if let Some(application) = &a.application {
        out.application(application);
    }
    if a.ordered {
        out.leaf("ordered", 1);
    }
    out.access(&a.data);
    out.people(&a.people);
    out.close("activity");
}

/// An adjacent on one line; its `states` only when it has some, each once, in
/// [`TaskState::ALL`] order; its `carries` only when it carries some.
fn adjacent(adj: &Adjacent) -> String {
    let states: Vec<&str> = TaskState::ALL
        .iter()
        .filter(|s| adj.states.contains(s))
        .map(|s| s.published())
        .collect();
    let states = if states.is_empty() {
        String::new()
    } else {
        format!("<states>{}</states>", states.join(" "))
    };
    format!(
        "<adjacent id=\"{}\"><ip>{}</ip>{states}{}</adjacent>",
        adj.id,
        escape(&adj.location),
        names_element("carries", &adj.carries)
    )
}

fn precondition(p: &Precondition) -> String {
    format!(
        "<precondition id=\"{}\"><status>{}</status><local>{}</local><timeOut>{}</timeOut></precondition>",
        p.id,
        p.status.code(),
        u8::from(p.local),
        p.time_out_secs
    )
}

/// An indenting XML text builder for the fixed shapes above.
struct Out {
    buf: String,
    depth: usize,
}

impl Out {
    fn new() -> Self {
        Out {
            buf: String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
            depth: 0,
        }
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.buf.push_str("  ");
        }
        self.buf.push_str(text);
        self.buf.push('\n');
    }

    fn open(&mut self, name: &str, id: Option<u64>) {
        match id {
            Some(id) => self.line(&format!("<{name} id=\"{id}\">")),
            None => self.line(&format!("<{name}>")),
        }
        self.depth += 1;
    }

    fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.line(&format!("</{name}>"));
    }

    fn leaf(&mut self, name: &str, value: impl std::fmt::Display) {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = write!(text, "{value}");
        self.line(&format!("<{name}>{}</{name}>", escape(&text)));
    }

    /// A container element, written empty (`<name/>`) when it has no children.
    fn list(&mut self, name: &str, empty: bool, body: impl FnOnce(&mut Out)) {
        if empty {
            self.line(&format!("<{name}/>"));
        } else {
            self.open(name, None);
            body(self);
            self.close(name);
        }
    }

    /// Our extensions, only where they differ from their defaults: `[command, compensation]`
    /// are the two commands of the activity.
    fn extensions(
        &mut self,
        kind: ActivityKind,
        commands: [Option<&str>; 2],
        retries: Retries,
        class: Option<&crate::model::ClassName>,
    ) {
        if kind != ActivityKind::default() {
            self.leaf("kind", kind.as_str());
        }
        let [command, compensation] = commands;
        if let Some(command) = command {
            self.leaf("command", command);
        }
        if let Some(compensation) = compensation {
            self.leaf("compensation", compensation);
        }
        if !retries.is_default() {
            self.line(&format!(
                "<retries><count>{}</count><wait>{}</wait></retries>",
                retries.count, retries.wait_secs
            ));
        }
        if let Some(class) = class {
            self.leaf("class", class);
        }
    }

    /// The extension `depends`, only when the activity has a rule. An `and` of several rules
    /// is written as those rules side by side, which `<depends>` means: the document is no
    /// deeper than the one it was read from, however deep that one was.
    fn depends(&mut self, rule: Option<&Rule>) {
        let Some(rule) = rule else { return };
        self.open("depends", None);
        match rule {
            Rule::And(rules) if rules.len() > 1 => rules.iter().for_each(|r| self.rule(r)),
            rule => self.rule(rule),
        }
        self.close("depends");
    }

    /// One rule: a term on one line, `and` and `or` around their rules (empty: `<and/>`).
    fn rule(&mut self, rule: &Rule) {
        match rule {
            Rule::Term { activity, state } => self.line(&format!(
                "<term activity=\"{activity}\" state=\"{}\"/>",
                state.published()
            )),
            Rule::And(rules) => self.list("and", rules.is_empty(), |out| {
                rules.iter().for_each(|r| out.rule(r));
            }),
            Rule::Or(rules) => self.list("or", rules.is_empty(), |out| {
                rules.iter().for_each(|r| out.rule(r));
            }),
        }
    }

    /// The routing extensions `merge`, `routes` and `completion`, each only where it differs
    /// from its default; a route on one line.
    fn routing(&mut self, merge: &Merge, routes: &[Route], completion: bool) {
        match merge {
            Merge::All => {}
            Merge::First { flag: None } => self.leaf("merge", "or"),
            Merge::First { flag: Some(flag) } => {
                self.line(&format!("<merge flag=\"{}\">or</merge>", escape_attr(flag)))
            }
            Merge::Vote { votes } => self.line(&format!("<merge votes=\"{votes}\">vote</merge>")),
        }
        if !routes.is_empty() {
            self.open("routes", None);
            for route in routes {
                self.line(&route_line(route));
            }
            self.close("routes");
        }
        if completion {
            self.leaf("completion", "true");
        }
    }

    /// The extension `loop`, only when the activity ends a loop: empty in a definition, its
    /// body's members one per line in a partition document.
    fn loop_back(&mut self, l: Option<&crate::model::Loop>) {
        let Some(l) = l else {
            return;
        };
        let open = format!(
            "<loop to=\"{}\" while=\"{}\" max=\"{}\"",
            l.to,
            escape_attr(&l.while_flag),
            l.max
        );
        if l.body.is_empty() {
            self.line(&format!("{open}/>"));
            return;
        }
        self.line(&format!("{open}>"));
        self.depth += 1;
        for m in &l.body {
            let carries = if m.carries.is_empty() {
                String::new()
            } else {
                format!(" carries=\"{}\"", escape_attr(&m.carries.join(" ")))
            };
            self.line(&format!(
                "<member id=\"{}\" ip=\"{}\"{carries}/>",
                m.id,
                escape_attr(&m.location)
            ));
        }
        self.close("loop");
    }

    /// The data extensions `reads` and `writes` of an activity, each only when it lists a name.
    fn access(&mut self, access: &DataAccess) {
        for (name, names) in [("reads", &access.reads), ("writes", &access.writes)] {
            if !names.is_empty() {
                self.line(&names_element(name, names));
            }
        }
    }

    /// An application: its id, its command, and its size and os where they differ from their
    /// defaults.
    fn application(&mut self, application: &crate::model::Application) {
        self.line(&format!(
            "<application id=\"{}\">",
            escape_attr(application.id.as_str())
        ));
        self.depth += 1;
        self.leaf("command", &application.command);
        if application.size_kib != 0 {
            self.leaf("size", application.size_kib);
        }
        if let Some(os) = &application.os {
            self.leaf("os", os);
        }
        self.close("application");
    }

    /// The data declarations of a document, only when there are some: a `<value>` with its
    /// type in lower case, or a `<file>`, one per line.
    fn data(&mut self, items: &[DataItem]) {
        if items.is_empty() {
            return;
        }
        self.open("data", None);
        for item in items {
            let name = escape_attr(&item.name);
            match item.kind.type_name() {
                Some(ty) => {
                    let input = match &item.input {
                        Input::No => String::new(),
                        Input::Required => " input=\"true\"".to_owned(),
                        Input::Default(v) => format!(" default=\"{}\"", escape_attr(v)),
                    };
                    self.line(&format!("<value name=\"{name}\" type=\"{ty}\"{input}/>"));
                }
                None => self.line(&format!("<file name=\"{name}\"/>")),
            }
        }
        self.close("data");
    }

    /// The people extensions, each only where it differs from its default.
    fn people(&mut self, people: &People) {
        if let Some(role) = &people.role {
            self.leaf("role", role);
        }
        if let Some(department) = &people.department {
            self.leaf("department", department);
        }
        if let Some(team) = &people.team {
            self.leaf("team", team);
        }
        if people.basis != Basis::default() || people.method != Method::default() {
            self.line(&format!(
                "<assignment basis=\"{}\" method=\"{}\"/>",
                people.basis.as_str(),
                people.method.as_str()
            ));
        }
        if people.policy != Policy::default() {
            self.leaf("policy", people.policy.to_text());
        }
        if people.priority != 0 {
            self.leaf("priority", people.priority);
        }
        if people.disconnected {
            self.leaf("disconnected", "true");
        }
        if let Some(hours) = people.deadline {
            self.leaf("deadline", hours);
        }
        if people.pause_stops_deadline {
            self.leaf("pauseStopsDeadline", "true");
        }
    }
}

/// `<name>a b c</name>` for a list of data names, or nothing when there are none.
fn names_element(name: &str, names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!("<{name}>{}</{name}>", escape(&names.join(" ")))
    }
}

/// A route on one line: `<route flag="approved"><to>6</to></route>`, `<route/>` when it
/// leads nowhere.
fn route_line(route: &Route) -> String {
    let flag = route
        .flag
        .as_deref()
        .map(|f| format!(" flag=\"{}\"", escape_attr(f)))
        .unwrap_or_default();
    if route.to.is_empty() {
        return format!("<route{flag}/>");
    }
    let to: String = route.to.iter().map(|t| format!("<to>{t}</to>")).collect();
    format!("<route{flag}>{to}</route>")
}

/// Escapes an attribute value written between double quotes. White space other than the
/// space becomes a character reference, which attribute-value normalisation keeps (every XML
/// reader turns a literal tab or line break in an attribute into a space). Also used by the
/// organisation writer.
pub(crate) fn escape_attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text content. `\r` becomes a character reference so that it survives the
/// end-of-line normalisation every XML reader applies.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}
