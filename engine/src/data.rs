//! Instance data: the values and files an instance's activities write, as this node knows them.
//! Writes come from this node's activities (a command's data directory, a person's
//! `complete --set`/`--file`) and from partners' notifications; of two writes of a name the later
//! wins ([`Datum::supersedes`]), whatever the order they arrive in. A notification carries the
//! names its receiver's activities, or those after them, read (`<carries>`). A file is only
//! referenced here; its content is in the daemon's store, and one that has not arrived yet (too big
//! to travel inline) is fetched from its holder while the activities that read it stay
//! `synchronizing`.

use std::collections::BTreeSet;

use mobiwf_proto::data::MAX_INSTANCE_VALUE_BYTES;
use mobiwf_proto::data_passes;
use mobiwf_proto::{
    ActivityId, DataValue, Datum, FileRef, InstanceId, InstanceInputs, Location, Writer,
};
use mobiwf_xml_schema::{DataKind, PartitionActivity, PartitionDocument, number_problem};
use serde::{Deserialize, Serialize};

use crate::lifecycle::{Event, Life};
use crate::run::RunKey;
use crate::{Effect, Engine};

/// A file this node's instance data references but does not hold yet, and where to get it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// The content's reference.
    pub file: FileRef,
    /// The location of a partner that holds it (the one whose notification referenced it).
    pub holder: Location,
}

/// What a partner's notification says of the instance data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// The values and file references it carries.
    pub data: Vec<Datum>,
    /// The files among them whose content the daemon does not hold (not inline, not stored
    /// before), and where to fetch each.
    pub missing: Vec<Missing>,
}

impl Engine {
    /// Takes the data a partner carried: each datum that supersedes what is known; files not
    /// held are fetched ([`Effect::Fetch`]). True when something changed.
    pub(crate) fn take_data(
        &mut self,
        instance: InstanceId,
        carried: Carried,
        effects: &mut Vec<Effect>,
    ) -> bool {
        let Carried { data, missing } = carried;
        let mut changed = false;
        for datum in data {
            let absent = match &datum.value {
                DataValue::File(f) => missing.iter().find(|m| m.file == *f).cloned(),
                _ => None,
            };
            if !self.put_datum(instance, datum) {
                continue;
            }
            changed = true;
            if let Some(m) = absent {
                self.want_file(instance, m, effects);
            }
        }
        changed
    }

    /// Keeps the instance's inputs a deployment carries as its data, given before any
    /// activity ran: a write of the same name known here already wins over them, and so does
    /// every later one ([`Datum::supersedes`]), as if they had been written first.
    pub(crate) fn seed_inputs(&mut self, instance: InstanceId, inputs: &InstanceInputs) {
        for datum in inputs.data() {
            self.put_datum(instance, datum);
        }
    }

    /// Keeps `datum` when it supersedes the known value of its name (true when it did), or
    /// as what an earlier pass wrote ([`data_passes::keep`]).
    pub(crate) fn put_datum(&mut self, instance: InstanceId, datum: Datum) -> bool {
        let known = self.known.entry(instance).or_default();
        let kept = data_passes::keep(&mut known.data, &mut known.earlier, datum);
        if kept.latest || kept.earlier {
            self.touch_known(instance);
        }
        kept.latest
    }

    /// Asks the daemon to fetch a file this instance needs, once.
    pub(crate) fn want_file(
        &mut self,
        instance: InstanceId,
        missing: Missing,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        if known.missing.iter().any(|m| m.file == missing.file) {
            return;
        }
        effects.push(Effect::Fetch {
            instance,
            file: missing.file.clone(),
            from: missing.holder.clone(),
        });
        known.missing.push(missing);
        self.touch_known(instance);
    }

    /// The daemon holds the content of `file` now: the activities of `instance` that waited
    /// for it go on.
    pub(crate) fn fetched(&mut self, instance: InstanceId, file: &FileRef, fx: &mut Vec<Effect>) {
        let Some(known) = self.known.get_mut(&instance) else {
            return;
        };
        let before = known.missing.len();
        known.missing.retain(|m| m.file != *file);
        if known.missing.len() != before {
            self.touch_known(instance);
            for key in self.keys_of(instance) {
                self.admit_synchronized(key, fx);
            }
            self.advance_instance(instance, fx);
        }
    }

    /// True when every file `act` reads is held here (values always are).
    pub(crate) fn data_here(&self, instance: InstanceId, act: &PartitionActivity) -> bool {
        let Some(known) = self.known.get(&instance) else {
            return true;
        };
        if known.missing.is_empty() {
            return true;
        }
        act.data
            .reads
            .iter()
            .all(|name| match known.data.get(name) {
                Some(Datum {
                    value: DataValue::File(f),
                    ..
                }) => !known.missing.iter().any(|m| m.file == *f),
                _ => true,
            })
    }

    /// The activities of a run that synchronized but wait for files to arrive (or, of a task
    /// class, were granted it while their instance was interrupted), and now have them: they
    /// are admitted and start (an interrupted instance starts nothing).
    pub(crate) fn admit_synchronized(&mut self, key: RunKey, effects: &mut Vec<Effect>) {
        let held = self.known.get(&key.instance).is_some_and(|k| k.interrupted);
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        if held {
            return;
        }
        let waiting: Vec<ActivityId> = run
            .doc()
            .activities
            .iter()
            .filter(|a| run.life(a.id) == Some(&Life::Synchronizing))
            // One that asks the manager only once granted (`crate::sync`).
            .filter(|a| {
                !crate::sync::asks(a) || run.progress(a.id).is_some_and(|p| p.gate.granted())
            })
            .filter(|a| self.data_here(key.instance, a))
            .map(|a| a.id)
            .collect();
        for activity in waiting {
            if self.step(key, activity, Event::Admit) {
                self.run_admitted(key, activity, effects);
            }
        }
    }

    /// The known values of `names` in `instance` (names never written are left out).
    fn values_of<'a>(
        &self,
        instance: InstanceId,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Vec<Datum> {
        let Some(known) = self.known.get(&instance) else {
            return Vec::new();
        };
        names
            .into_iter()
            .filter_map(|name| known.data.get(name).cloned())
            .collect()
    }

    /// The values an activity reads, as known now.
    pub(crate) fn reads_of(&self, instance: InstanceId, act: &PartitionActivity) -> Vec<Datum> {
        self.values_of(instance, &act.data.reads)
    }

    /// What a compensation finds in its data directory: the values its activity read and
    /// wrote, as known now.
    pub(crate) fn compensation_reads(&self, key: RunKey, activity: ActivityId) -> Vec<Datum> {
        let Some(act) = self.runs.get(&key).and_then(|r| r.activity(activity)) else {
            return Vec::new();
        };
        let names: BTreeSet<&String> = act.data.reads.iter().chain(&act.data.writes).collect();
        self.values_of(key.instance, names)
    }

    /// What the notification to one partner carries: the known values of `names`.
    pub(crate) fn carried(&self, instance: InstanceId, names: &BTreeSet<&String>) -> Vec<Datum> {
        self.values_of(instance, names.iter().copied())
    }

    /// Keeps what an activity wrote when it succeeded, stamped with its end.
    pub(crate) fn keep_writes(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        written: Vec<(String, DataValue)>,
    ) {
        for (name, value) in written {
            // Later than every write of the name this node knew: a partner whose clock runs
            // ahead never makes this node's newer write lose (a hybrid logical clock).
            let known = self.known.get(&key.instance);
            let after = known
                .and_then(|k| k.data.get(&name))
                .map_or(0, |d| d.at_us.saturating_add(1));
            let pass = self
                .runs
                .get(&key)
                .and_then(|r| r.progress(activity))
                .map(|p| p.pass)
                .unwrap_or_default();
            let datum = Datum {
                name,
                value,
                by: Writer::Activity(activity),
                at_us: self.now_us.max(after),
                pass,
            };
            self.put_datum(key.instance, datum);
        }
    }

    /// What `activity` (of run `key`) wrote, checked against its `<writes>` and the
    /// declarations: each name must be one it writes, a number a number, a file a file (a
    /// person's text for a number name is taken as the number), and the instance's values
    /// together must stay within `MAX_INSTANCE_VALUE_BYTES`. The values as kept, or what is
    /// wrong.
    pub(crate) fn accepted_writes(
        &self,
        key: RunKey,
        activity: ActivityId,
        written: Vec<(String, DataValue)>,
    ) -> Result<Vec<(String, DataValue)>, String> {
        let found = self
            .runs
            .get(&key)
            .and_then(|run| Some((run, run.activity(activity)?)));
        let Some((run, act)) = found else {
            return Err(format!(
                "activity {activity} of instance {} is not run here",
                key.instance
            ));
        };
        let mut out = Vec::with_capacity(written.len());
        for (name, value) in written {
            if !act.data.writes.contains(&name) {
                let writes = if act.data.writes.is_empty() {
                    "it writes no data".to_owned()
                } else {
                    format!("it writes {}", act.data.writes.join(", "))
                };
                return Err(format!(
                    "activity {activity} does not write `{name}`: {writes}"
                ));
            }
            let value = typed(&name, run.doc().data_kind(&name), value)?;
            if let Some(problem) = value.problem() {
                return Err(format!("`{name}`: {problem}"));
            }
            out.push((name, value));
        }
        match self.instance_size_problem(key.instance, &out) {
            Some(problem) => Err(problem),
            None => Ok(out),
        }
    }

    /// Why `written` would make the instance's values too big to travel
    /// (`MAX_INSTANCE_VALUE_BYTES`), if it would.
    fn instance_size_problem(
        &self,
        instance: InstanceId,
        written: &[(String, DataValue)],
    ) -> Option<String> {
        let size = |v: &DataValue| match v {
            DataValue::String(t) | DataValue::Number(t) => t.len(),
            DataValue::File(_) => 0,
        };
        let mut total: usize = written.iter().map(|(_, v)| size(v)).sum();
        if let Some(known) = self.known.get(&instance) {
            total += known
                .data
                .values()
                .filter(|d| !written.iter().any(|(n, _)| *n == d.name))
                .map(|d| size(&d.value))
                .sum::<usize>();
        }
        (total > MAX_INSTANCE_VALUE_BYTES).then(|| {
            format!(
                "the instance's values would hold {total} bytes, over the limit of \
                 {MAX_INSTANCE_VALUE_BYTES} (MAX_INSTANCE_VALUE_BYTES): put long text in a <file>"
            )
        })
    }

    /// Every value this node knows of an instance, by name.
    pub fn data(&self, instance: InstanceId) -> Vec<Datum> {
        self.known
            .get(&instance)
            .map(|k| k.data.values().cloned().collect())
            .unwrap_or_default()
    }

    /// What earlier passes of loops wrote, as this node kept it: the last write of each name
    /// in each pass before its latest ([`data_passes`]).
    pub fn earlier_data(&self, instance: InstanceId) -> Vec<Datum> {
        self.known
            .get(&instance)
            .map(|k| k.earlier.clone())
            .unwrap_or_default()
    }
}

/// Why the inputs deployed with a partition do not fit its document `doc` (each a declared
/// value, of its type), if they do not. The controller checked them against the definition:
/// this keeps a node from holding what its own activities could not have written.
pub(crate) fn inputs_problem(doc: &PartitionDocument, inputs: &InstanceInputs) -> Option<String> {
    let problems: Vec<String> = inputs
        .iter()
        .filter_map(|(name, value)| {
            match typed(name, doc.data_kind(name), value.clone()) {
                Ok(kept) if kept == *value => None,
                Ok(_) => Some(format!(
                    "`{name}` is a {}, not a {}",
                    doc.data_kind(name).map_or("value", DataKind::as_str),
                    value.shown().0
                )),
                Err(problem) => Some(problem),
            }
            .or_else(|| value.problem().map(|p| format!("`{name}`: {p}")))
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// `value` as the declared `kind` of `name` holds it.
fn typed(name: &str, kind: Option<DataKind>, value: DataValue) -> Result<DataValue, String> {
    match (kind, value) {
        (Some(DataKind::Number), DataValue::String(text) | DataValue::Number(text)) => {
            match number_problem(&text) {
                None => Ok(DataValue::Number(text)),
                Some(problem) => Err(format!("`{name}` is a number: {problem}")),
            }
        }
        (Some(DataKind::String), DataValue::String(text) | DataValue::Number(text)) => {
            Ok(DataValue::String(text))
        }
        (Some(DataKind::File), v @ DataValue::File(_)) => Ok(v),
        (Some(DataKind::File), _) => Err(format!(
            "`{name}` is a file: give its content (complete --file {name}=PATH)"
        )),
        (Some(_), DataValue::File(_)) => Err(format!(
            "`{name}` is a value, not a file: give it with --set {name}=VALUE"
        )),
        (None, _) => Err(format!(
            "`{name}` is not declared in the partition's <data>"
        )),
    }
}
