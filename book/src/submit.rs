//! Submission: a definition is parsed (or found among the recent ones), placed on the registered
//! nodes, cut into partition documents, and a new instance is recorded with a deployment to each
//! partition's node. A start by name (`start`) comes to the same new instance
//! ([`Book::instantiate`]) with a deployed definition, parsed when it was deployed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mobiwf_proto::{ActivityId, InstanceId, Message, Millis, NodeId, NodeName, PartitionId};
use mobiwf_xml_schema::{
    DeriveOptions, DerivedPartition, Language, WorkflowDefinition, WorkflowId, derive_partitions,
    write_definition,
};

use crate::definitions::DefinitionRef;
use crate::history::Event;
use crate::inputs::{CheckedStart, StartWith};
use crate::start::{Needed, Starter};
use crate::{
    ActivityView, Applied, Book, BookError, Effect, Instance, NodeInfo, PartitionView, Placement,
    RECENT_DEFINITIONS, place,
};

/// A definition as submitted lately, kept parsed.
#[derive(Debug)]
pub(crate) struct Recent {
    language: Language,
    /// The text as submitted.
    src: Vec<u8>,
    parsed: Parsed,
}

/// A new instance to make (`Book::instantiate`): what a submission and a start by name both
/// come to.
#[derive(Debug)]
pub(crate) struct NewInstance {
    /// Its definition, parsed.
    pub(crate) def: Arc<WorkflowDefinition>,
    /// What its history says it came from: a file name, or the deployed definition.
    pub(crate) source: String,
    /// Where its definition is kept.
    pub(crate) origin: Origin,
    /// Its responsible user and its inputs, as given.
    pub(crate) with: StartWith,
}

/// Where an instance's definition is kept.
#[derive(Debug)]
pub(crate) enum Origin {
    /// Submitted whole: stored with the instance (these bytes).
    Submitted(Arc<[u8]>),
    /// Deployed: the instance names it, the registry keeps it.
    Deployed(DefinitionRef),
}

/// A document an operator submits: its bytes, its name (a file name), and who submits it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Submitted<'a> {
    pub(crate) xml: &'a [u8],
    pub(crate) source: &'a str,
    pub(crate) starter: &'a Starter,
}

/// A definition parsed, with the MobiWfMS XML bytes the controller stores for it.
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub(crate) def: Arc<WorkflowDefinition>,
    pub(crate) stored: Arc<[u8]>,
}

impl Book {
    /// The definition in `src`, read as `language`, parsed (or as parsed when it was read
    /// lately in that language), and the bytes to store for it: `src` itself when it is
    /// MobiWfMS XML, else the MobiWfMS XML it reads as, so a stored definition is always read
    /// back in one language. An operator's document is read in the language
    /// [`Language::of`] tells; stored bytes are always read as [`Language::MobiWfMs`], never
    /// guessed.
    pub(crate) fn parsed(
        &mut self,
        language: Language,
        src: &[u8],
        source: &str,
    ) -> Result<Parsed, BookError> {
        if let Some(i) = self
            .recent
            .iter()
            .position(|r| r.language == language && r.src == src)
        {
            let hit = self.recent.remove(i);
            let parsed = hit.parsed.clone();
            self.recent.insert(0, hit);
            return Ok(parsed);
        }
        let def = mobiwf_xml_schema::load_new_definition_in(language, src)
            .map_err(|d| BookError::Invalid(d.render(source)))?
            .value;
        let stored = match language {
            Language::MobiWfMs => src.to_vec(),
            Language::Pdl | Language::Bpmn => write_definition(&def).into_bytes(),
        };
        let parsed = Parsed {
            def: Arc::new(def),
            stored: stored.into(),
        };
        self.recent.insert(
            0,
            Recent {
                language,
                src: src.to_vec(),
                parsed: parsed.clone(),
            },
        );
        self.recent.truncate(RECENT_DEFINITIONS);
        Ok(parsed)
    }

    /// The book, taking documents of at most `bytes`, both as given and as stored (a PDL or
    /// BPMN document is stored as the MobiWfMS XML it reads as, which may be longer): for a
    /// store that limits one write (etcd), which a document too large would stop.
    pub fn with_largest_document(mut self, bytes: usize) -> Book {
        self.largest_document = Some(bytes);
        self
    }

    /// Refuses a document whose text (`given`, or as stored) is over the largest taken.
    pub(crate) fn check_size(
        &self,
        source: &str,
        given: usize,
        stored: usize,
    ) -> Result<(), BookError> {
        let Some(most) = self.largest_document else {
            return Ok(());
        };
        let size = given.max(stored);
        if size <= most {
            return Ok(());
        }
        let form = if stored > given {
            " as the MobiWfMS XML it is stored as"
        } else {
            ""
        };
        Err(BookError::TooLarge(format!(
            "{source} is {size} bytes{form}; this controller takes documents up to {most} \
             bytes (its book is in etcd, which limits one write: split the document, or raise \
             etcd's --max-request-bytes and give the controllers the same with \
             --etcd-max-request-bytes)"
        )))
    }

    /// An operator submits a definition: a new instance, deployed to the placed nodes; its
    /// responsible user (if any) is told it started. A document with a creator role is
    /// submitted only by a member of it, as it is started. Its inputs are checked and kept with it;
    /// each partition's deployment carries those its activities read.
    pub(crate) fn submit(
        &mut self,
        now_ms: u64,
        submitted: Submitted<'_>,
        with: StartWith,
    ) -> Result<Applied, BookError> {
        let Submitted {
            xml,
            source,
            starter,
        } = submitted;
        let Parsed { def, stored } = self.parsed(Language::of(source, xml), xml, source)?;
        self.check_size(source, xml.len(), stored.len())?;
        // A submitted document's creator role is checked as a start's is.
        let needed = Needed::own(&def);
        self.may_start(&format!("the workflow of {source}"), &needed, starter)?;
        let (effects, id) = self.instantiate(
            now_ms,
            NewInstance {
                def,
                source: source.to_owned(),
                origin: Origin::Submitted(stored),
                with,
            },
        )?;
        Ok(Applied {
            effects,
            instance: Some(id),
        })
    }

    /// A new instance of a definition, submitted or deployed: checked against the
    /// organisation, its inputs checked (the defaults filled in), placed, deployed to the
    /// placed nodes (each partition with the inputs its activities read); its responsible
    /// user (if any) is told it started. What to send, and the new instance.
    pub(crate) fn instantiate(
        &mut self,
        now_ms: u64,
        new: NewInstance,
    ) -> Result<(Vec<Effect>, InstanceId), BookError> {
        let NewInstance {
            def,
            source,
            origin,
            with,
        } = new;
        self.check_people(&def, with.responsible.as_ref())?;
        self.check_classes(&def)?;
        let start = with.checked(&def)?;
        let nodes: Vec<NodeInfo> = self.nodes.values().cloned().collect();
        let placement = place(&def, &nodes)?;
        let id = InstanceId(self.last_instance.0 + 1);
        let mut derived = self.derive(&placement, &nodes, id, now_ms);
        let ordered = match &origin {
            Origin::Deployed(at) => self.mark_ordered(&mut derived, &at.name, &def, id),
            Origin::Submitted(_) => Vec::new(),
        };
        let Deployed {
            partitions,
            placed,
            mut effects,
        } = self.deploy(id, derived, &placement, &nodes, &start, now_ms);
        let activities = def
            .activities
            .iter()
            .map(|a| activity_view(a, placed.get(&a.id)))
            .collect();
        self.last_instance = id;
        let deployed = match &origin {
            Origin::Submitted(_) => None,
            Origin::Deployed(at) => Some(at.clone()),
        };
        let what = Event::Submitted {
            source,
            partitions: partitions.iter().map(|p| (p.id, p.node.clone())).collect(),
            definition: deployed.clone(),
        };
        let CheckedStart {
            responsible,
            inputs,
        } = start;
        let mut inst = Instance::submitted(id, &def, now_ms, partitions, activities, responsible);
        inst.inputs = inputs;
        inst.definition = deployed;
        inst.ordered = ordered.into_iter().collect();
        self.instances.insert(id, inst);
        self.dirty_instances.insert(id);
        self.history.push(id, now_ms, None, None, what);
        self.track(now_ms, id, &mut effects);
        match origin {
            Origin::Submitted(stored) => self.new_definitions.push((id, stored.to_vec())),
            Origin::Deployed(at) => self.registry.named(&at),
        }
        self.definitions.insert(id, def);
        Ok((effects, id))
    }

    /// Sends each partition of new instance `id` to the node `placement` chose for it.
    fn deploy(
        &self,
        id: InstanceId,
        derived: Vec<DerivedPartition>,
        placement: &Placement,
        nodes: &[NodeInfo],
        start: &CheckedStart,
        now_ms: u64,
    ) -> Deployed {
        let mut deployed = Deployed {
            partitions: Vec::new(),
            placed: BTreeMap::new(),
            effects: Vec::new(),
        };
        let runs_on = runs_on(&derived, placement, nodes);
        let heard = crate::speakers::heard(&derived);
        for (d, heard) in derived.into_iter().zip(heard) {
            let Some(&i) = placement.node_of.get(&d.partner) else {
                continue;
            };
            let node = &nodes[i];
            for act in &d.document.activities {
                deployed
                    .placed
                    .insert(act.id, (d.partition, node.name.clone()));
            }
            deployed
                .partitions
                .push(partition_view(placement, &d, node, now_ms));
            deployed.effects.push(Effect::Send {
                to: node.peer.clone(),
                addrs: node.addrs.clone(),
                message: Message::Deploy(mobiwf_proto::Deploy {
                    instance: id,
                    partition: d.partition,
                    document: mobiwf_xml_schema::write_partition(&d.document),
                    responsible: start.responsible.clone(),
                    hour_ms: hour_ms_for(&d.document, self.hour_ms),
                    runs_on: crate::speakers::told(&runs_on, &heard),
                    inputs: crate::inputs::read_by(&start.inputs, &d.document),
                }),
            });
        }
        deployed
    }

    /// The partition documents of instance `id`, with the chosen nodes' locations.
    fn derive(
        &self,
        placement: &Placement,
        nodes: &[NodeInfo],
        id: InstanceId,
        now_ms: u64,
    ) -> Vec<DerivedPartition> {
        let locations = placement
            .node_of
            .iter()
            .map(|(partner, &i)| {
                let address = nodes[i].addrs.first().map_or("", String::as_str);
                (*partner, self.routing.location(address))
            })
            .collect();
        derive_partitions(
            &placement.definition,
            &DeriveOptions {
                workflow_id: Some(WorkflowId::from(id)),
                start_time: Some(format_time(now_ms)),
                locations,
            },
        )
    }
}

/// What deploying a new instance comes to: its partitions as the book records them, the
/// partition and node each activity went to, and the messages that deploy them.
struct Deployed {
    partitions: Vec<PartitionView>,
    placed: BTreeMap<ActivityId, (PartitionId, NodeName)>,
    effects: Vec<Effect>,
}

/// Who runs what in the whole instance (each node is told the part whose word it takes).
fn runs_on(
    derived: &[DerivedPartition],
    placement: &Placement,
    nodes: &[NodeInfo],
) -> BTreeMap<ActivityId, NodeId> {
    derived
        .iter()
        .filter_map(|d| Some((d, &nodes[*placement.node_of.get(&d.partner)?])))
        .flat_map(|(d, node)| {
            d.document
                .activities
                .iter()
                .map(|a| (a.id, node.peer.clone()))
        })
        .collect()
}

/// A new partition, sent to `node`, with its deadline when it has a `timeOut`.
fn partition_view(
    placement: &Placement,
    d: &DerivedPartition,
    node: &NodeInfo,
    now_ms: u64,
) -> PartitionView {
    let time_out = placement
        .definition
        .partitions
        .iter()
        .find(|p| p.id == d.partition)
        .map_or(0, |p| p.time_out_secs);
    let deadline_ms = (time_out > 0)
        .then(|| Millis(now_ms).saturating_add(Duration::from_secs(time_out.into())))
        .map(Millis::as_u64);
    PartitionView::sent(d.partition, node, deadline_ms, None)
}

/// A new activity, in the partition and on the node it was placed on (none for a contingency
/// activity).
fn activity_view(
    a: &mobiwf_xml_schema::Activity,
    at: Option<&(PartitionId, NodeName)>,
) -> ActivityView {
    let mut v = ActivityView::new(a.id, a.name.clone(), at.cloned(), a.contingency);
    v.compensable = a.compensation.is_some();
    v
}

/// A time as the documents' `startTime` writes it: `2007/3/10 16:19:34` (UTC).
pub fn format_time(ms: u64) -> String {
    let secs = Millis(ms).as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year}/{month}/{day} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The length of an hour a deployment carries: the controller's, for a partition with a
/// `<deadline>`; none otherwise (the message stays as it was before deadlines).
pub(crate) fn hour_ms_for(
    document: &mobiwf_xml_schema::PartitionDocument,
    hour_ms: u64,
) -> Option<u64> {
    document
        .activities
        .iter()
        .any(|a| a.people.deadline.is_some())
        .then_some(hour_ms)
}
