//! Semi-automatic work items on the device's actor: after each commit (and at start) the
//! applications the desk says run now (`Desk::to_launch`: an item a user of this device
//! selected, with what it reads copied here) are started, each under the executor's wrapper in
//! its own run directory (`<instance>-<partition>-<activity>.application`: at most once per
//! item on this device, across restarts), under the node's command policy, with the item's
//! inputs in `MOBIWF_DATA_DIR`; an application whose item no longer runs it (its user
//! completed or released it by hand, or it was taken away or ended) is killed. Its end comes
//! back as [`super::Event::ApplicationEnded`] and goes to the desk: exit 0 completes the item
//! as its user, with what it left in `MOBIWF_DATA_DIR`; any other end tells the user.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_node_core::NodeInput;
use mobiwf_people::{AppEnd, ItemKey, Launch};
use mobiwf_proto::{UserId, Written};
use mobiwf_runtime::store::StoreError;
use tracing::Instrument;

use super::Event;
use super::actor::{After, NodeActor, Writing};
use crate::executor::{self, Ended, Execution, RunKind};

/// The applications this node started and has not heard the end of, by item, and those of
/// them it killed (killed once).
#[derive(Default)]
pub(super) struct Running {
    started: BTreeMap<ItemKey, Execution>,
    killed: BTreeSet<ItemKey>,
}

impl NodeActor {
    /// Starts the applications the desk says run now and are not running, and kills those
    /// running whose item no longer runs them.
    pub(super) fn launch_applications(&mut self) {
        let launch = self.core.desk().to_launch();
        let wanted: BTreeMap<ItemKey, &Launch> = launch.iter().map(|l| (l.key, l)).collect();
        let running = &mut self.running;
        for (key, execution) in &running.started {
            if wanted.contains_key(key) || !running.killed.insert(*key) {
                continue;
            }
            // Its end still comes back, and the desk ignores it.
            tracing::info!(instance = %key.0, activity = %key.1, "the item no longer runs its application: killed");
            if let Err(why) = executor::kill(&self.data_dir, execution) {
                tracing::warn!(instance = %key.0, activity = %key.1, "{why}");
            }
        }
        for (key, l) in wanted {
            if self.running.started.contains_key(&key) {
                continue;
            }
            let Some(execution) = self.execution(l) else {
                continue;
            };
            self.running.started.insert(key, execution.clone());
            self.spawn_application(key, l.user.clone(), execution);
        }
    }

    /// What running `l`'s application is: the item's partition on its host, the inputs
    /// copied with the item, the names it may write.
    fn execution(&self, l: &Launch) -> Option<Execution> {
        let item = self.core.desk().item(l.key.0, l.key.1)?;
        let reads = item.copy.as_ref()?.data.clone();
        Some(Execution {
            instance: l.key.0,
            partition: item.info.partition,
            activity: l.key.1,
            attempt: 0,
            command: l.application.application.command.clone(),
            partner: self.core.identity().name.to_string(),
            reads,
            writes: l.application.writes.clone(),
            run: RunKind::Application {
                user: l.user.clone(),
            },
            // An application holds no task class: the activity's class, if any, is held by
            // the host for the person's activity.
            held: None,
        })
    }

    fn spawn_application(&self, key: ItemKey, user: UserId, execution: Execution) {
        let data_dir = self.data_dir.clone();
        let commands = self.commands.clone();
        let events = self.events.clone();
        let span = tracing::info_span!("application", instance = %key.0, activity = %key.1, %user);
        tokio::spawn(
            async move {
                tracing::info!(command = %execution.command, "application started");
                let ended = executor::execute(&data_dir, &execution, &commands).await;
                tracing::info!(succeeded = ended.finish.succeeded(), "application ended");
                let _ = events
                    .send(Event::ApplicationEnded { key, user, ended })
                    .await;
            }
            .instrument(span),
        );
    }

    /// An application ended: the desk decides what it means (the user's completion, or a
    /// notice).
    pub(super) fn application_ended(
        &mut self,
        now: u64,
        (key, user): (ItemKey, UserId),
        ended: Ended,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        self.running.started.remove(&key);
        self.running.killed.remove(&key);
        let end = if ended.finish.succeeded() {
            AppEnd::Succeeded(Written {
                values: ended.written.into_iter().collect(),
                ..Written::default()
            })
        } else {
            let why = match ended.finish {
                mobiwf_engine::Finish::Failed { detail } => detail,
                mobiwf_engine::Finish::Succeeded { .. } => None,
            };
            AppEnd::Failed(why.unwrap_or_else(|| "it failed".to_owned()))
        };
        let input = NodeInput::ApplicationEnded { key, user, end };
        self.step(now, input, writing, after)?;
        Ok(())
    }
}
