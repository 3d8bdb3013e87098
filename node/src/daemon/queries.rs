//! What the API and the pages ask the actor, answered once the group they came in is on disk
//! (no answer shows a state the disk does not have): the worklists, the data, the runs, the
//! notices, the directory, and one item of a user's worklist with what its page shows beside it
//! (what the activity reads and writes, as far as this node knows).

use std::collections::BTreeMap;

use mobiwf_engine::{Run, RunKey};
use mobiwf_proto::{ActivityId, DataValue, Datum, InstanceId, UserId};
use mobiwf_runtime::store::StoreError;
use mobiwf_xml_schema::DataKind;

use super::actor::NodeActor;
use super::{Query, RunView, RunsPage, WorklistEntry};

/// Which entries of a worklist a page shows: at most `limit` from the `from`th on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// How many come before the page.
    pub from: usize,
    /// The most the page shows.
    pub limit: usize,
}

/// One page of a user's worklist: its entries, and how many the whole worklist holds.
#[derive(Debug, Clone)]
pub struct WorklistPage {
    /// The page's entries, in the order asked.
    pub entries: Vec<WorklistEntry>,
    /// How many entries the whole worklist holds.
    pub total: usize,
}

/// One item of a user's worklist as its page shows it.
#[derive(Debug, Clone)]
pub struct ItemDetail {
    /// The worklist's line.
    pub entry: WorklistEntry,
    /// What the activity reads, each with its value when this node knows it; `None` when this
    /// node holds neither the activity's partition nor a copy of what it reads.
    pub reads: Option<Vec<ReadValue>>,
    /// What the activity writes, each with its kind; `None` when this node does not know
    /// (the item's host checks what a completion sets either way).
    pub writes: Option<Vec<(String, DataKind)>>,
}

/// A name an activity reads, and its value when known here.
#[derive(Debug, Clone)]
pub struct ReadValue {
    /// The declared name.
    pub name: String,
    /// Its value (a file names its content in the node's file store).
    pub value: Option<DataValue>,
}

/// Whether a user is away and which peers their device cannot reach, as the worklist page
/// shows the link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserLink {
    /// Since when the user is away (disconnected), in ms since the epoch.
    pub away_since_ms: Option<u64>,
    /// The peers this device cannot reach now.
    pub cut_off: Vec<CutOff>,
    /// The hosts of the user's items, by peer id.
    pub hosts: Vec<ItemsHost>,
    /// How many items the user holds locked (what a disconnection takes along).
    pub locked: usize,
    /// How many of the user's actions were sent to their hosts and not answered yet.
    pub waiting: usize,
}

/// The host of some of a user's items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemsHost {
    /// Its peer id.
    pub peer: mobiwf_proto::NodeId,
    /// Its node name, when the directory knows it.
    pub name: Option<mobiwf_proto::NodeName>,
    /// How many of the user's actions on its items it has not answered yet.
    pub waiting: usize,
}

/// A peer this device cannot reach: deliveries to it failed `UNREACHABLE_AFTER_FAILURES`
/// times in a row, and nothing was heard from it since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutOff {
    /// Its peer id.
    pub peer: mobiwf_proto::NodeId,
    /// Its node name, when the directory knows it.
    pub name: Option<mobiwf_proto::NodeName>,
    /// Since when, in ms since the epoch.
    pub since_ms: u64,
}

/// What the item page of `user`'s item asks.
pub(super) struct ItemAsked {
    pub(super) user: UserId,
    pub(super) instance: InstanceId,
    pub(super) activity: ActivityId,
}

impl NodeActor {
    pub(super) fn answer(&self, query: Query) {
        match query {
            Query::Worklist(reply) => {
                let _ = reply.send(self.core.engine().worklist());
            }
            Query::Data(instance, reply) => match self.known_data(instance) {
                Ok(data) => {
                    let _ = reply.send(data);
                }
                Err(e) => tracing::error!("reading instance {instance}'s data: {e}"),
            },
            Query::Runs(wanted, reply) => {
                match super::memory::runs_page(
                    self.core.engine(),
                    self.store.as_ref(),
                    wanted,
                    view,
                ) {
                    Ok((runs, next)) => {
                        let next = next.map(|i| i.0);
                        let _ = reply.send(RunsPage { runs, next });
                    }
                    // The caller hears that the node did not answer.
                    Err(e) => tracing::error!("reading the runs: {e}"),
                }
            }
            Query::UserWorklistPage {
                user,
                order,
                window,
                reply,
            } => {
                let _ = reply.send(self.user_worklist_page(&user, order, window));
            }
            Query::Notices { user, reply } => {
                let dir = self.core.engine().directory();
                let answer =
                    mobiwf_people::desk::here(dir, &self.core.identity().name, user.as_str())
                        .map(|_| self.core.desk().notices(user.as_str()).to_vec())
                        .map_err(|e| e.to_string());
                let _ = reply.send(answer);
            }
            Query::Link { user, reply } => {
                let _ = reply.send(self.user_link(&user));
            }
            Query::Directory(reply) => {
                let _ = reply.send(self.directory_view());
            }
            Query::Item(asked, reply) => match self.item_detail(&asked) {
                Ok(answer) => {
                    let _ = reply.send(answer);
                }
                Err(e) => tracing::error!("reading instance {}'s data: {e}", asked.instance),
            },
        }
    }

    /// The entries of `user`'s worklist in `order` that `window` shows, each with its host's
    /// name, and how many the worklist holds; why not when the user's device is another node.
    fn user_worklist_page(
        &self,
        user: &UserId,
        order: mobiwf_people::Order,
        window: Window,
    ) -> Result<WorklistPage, String> {
        self.here(user)?;
        let page = self
            .core
            .desk()
            .worklist_page(user.as_str(), order, window.from, window.limit);
        Ok(WorklistPage {
            entries: page
                .entries
                .into_iter()
                .map(|entry| self.line(user, entry))
                .collect(),
            total: page.total,
        })
    }

    /// Why not when `user`'s device is another node.
    fn here(&self, user: &UserId) -> Result<(), String> {
        let dir = self.core.engine().directory();
        mobiwf_people::desk::here(dir, &self.core.identity().name, user.as_str())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// A worklist entry of `user` with its host's name.
    fn line(&self, user: &UserId, entry: mobiwf_people::Entry) -> WorklistEntry {
        let dir = self.core.engine().directory();
        WorklistEntry {
            host_name: entry
                .info
                .host
                .peer()
                .and_then(|peer| dir.device_by_node(peer))
                .map(|d| d.name.clone()),
            entry,
            user: user.clone(),
        }
    }

    /// Since when `user` is away, the peers this device cannot reach, and the hosts of the
    /// user's items with what waits for them (counted on the desk, no entry copied); why not
    /// when the user's device is another node.
    fn user_link(&self, user: &UserId) -> Result<UserLink, String> {
        let dir = self.core.engine().directory();
        mobiwf_people::desk::here(dir, &self.core.identity().name, user.as_str())
            .map_err(|e| e.to_string())?;
        let away_since_ms = self
            .core
            .desk()
            .away()
            .find_map(|(u, at)| (u == user).then_some(at));
        let cut_off = self
            .cut_off
            .iter()
            .map(|(peer, since_ms)| CutOff {
                peer: peer.clone(),
                name: dir.device_by_node(peer).map(|d| d.name.clone()),
                since_ms: *since_ms,
            })
            .collect();
        let (mut hosts, mut locked, mut waiting) = (BTreeMap::new(), 0, 0);
        for item in self.core.desk().worklist_links(user.as_str()) {
            locked += usize::from(item.locked);
            waiting += usize::from(item.pending);
            if let Some(peer) = item.host.peer() {
                *hosts.entry(peer).or_insert(0) += usize::from(item.pending);
            }
        }
        let hosts = hosts
            .into_iter()
            .map(|(peer, waiting)| ItemsHost {
                peer: peer.clone(),
                name: dir.device_by_node(peer).map(|d| d.name.clone()),
                waiting,
            })
            .collect();
        Ok(UserLink {
            away_since_ms,
            cut_off,
            hosts,
            locked,
            waiting,
        })
    }

    /// What the node knows of `instance`'s data: the engine's (read back when retired) and,
    /// on a device, what its users' items of the instance read, as copied.
    fn known_data(&self, instance: InstanceId) -> Result<Vec<Datum>, StoreError> {
        let mut data =
            super::memory::data(self.core.engine(), self.store.as_ref(), instance)?.latest;
        let copies = self.core.desk().items().filter_map(|i| {
            (i.info.instance == instance)
                .then_some(i.copy.as_ref())
                .flatten()
        });
        for copy in copies {
            for datum in &copy.data {
                match data.iter_mut().find(|d| d.name == datum.name) {
                    Some(known) if datum.supersedes(known) => *known = datum.clone(),
                    Some(_) => {}
                    None => data.push(datum.clone()),
                }
            }
        }
        Ok(data)
    }

    /// The item of `asked.user`'s worklist, with what its activity reads and writes as far as
    /// this node knows: from the partition when this node hosts it, else from the copy of
    /// what it reads and its application's writes. `Ok(Err)`: the user's device is another
    /// node; `Ok(Ok(None))`: the item is not (or no longer) on the user's worklist.
    fn item_detail(
        &self,
        asked: &ItemAsked,
    ) -> Result<Result<Option<ItemDetail>, String>, StoreError> {
        if let Err(why) = self.here(&asked.user) {
            return Ok(Err(why));
        }
        let desk = self.core.desk();
        let Some(entry) = desk.worklist_entry(asked.user.as_str(), asked.instance, asked.activity)
        else {
            return Ok(Ok(None));
        };
        let entry = self.line(&asked.user, entry);
        let run_key = RunKey {
            instance: asked.instance,
            partition: entry.entry.info.partition,
        };
        let hosted = self.core.engine().run(&run_key).and_then(|run| {
            let act = run.activity(asked.activity)?;
            let kinds = |names: &[String]| -> Vec<(String, DataKind)> {
                let kind = |n: &String| run.doc().data_kind(n).unwrap_or(DataKind::String);
                names.iter().map(|n| (n.clone(), kind(n))).collect()
            };
            Some((kinds(&act.data.reads), kinds(&act.data.writes)))
        });
        let copy = desk
            .item(asked.instance, asked.activity)
            .and_then(|i| i.copy.as_ref());
        let names: Option<Vec<String>> = match (&hosted, copy) {
            (Some((reads, _)), _) => Some(reads.iter().map(|(n, _)| n.clone()).collect()),
            (None, Some(copy)) => Some(copy.data.iter().map(|d| d.name.clone()).collect()),
            (None, None) => None,
        };
        let known = self.known_data(asked.instance)?;
        let reads = names.map(|names| {
            let value = |n: &String| known.iter().find(|d| &d.name == n).map(|d| d.value.clone());
            let read = |name: String| ReadValue {
                value: value(&name),
                name,
            };
            names.into_iter().map(read).collect()
        });
        let application = entry.entry.info.application.as_ref();
        let writes = match hosted {
            Some((_, writes)) => Some(writes),
            None => application.map(|a| a.writes.clone()),
        };
        Ok(Ok(Some(ItemDetail {
            entry,
            reads,
            writes,
        })))
    }
}

fn view(run: &Run) -> RunView {
    RunView {
        instance: run.key.instance,
        partition: run.key.partition,
        done: run.all_final(),
        activities: run.records(),
    }
}
