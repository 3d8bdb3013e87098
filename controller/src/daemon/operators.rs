//! An operator's commands to the book (a submission, a control, a rerun, an organisation, an
//! action on a work item): each applied in its group, its answer given by the group after the
//! write.
//! Apart from the actor's loop because each command has its own input and answer, while the
//! loop is the same for every event.

use mobiwf_book::{BookError, Effect, Input, Instance};
use mobiwf_proto::{Control, InstanceId};
use mobiwf_runtime::daemon::Group;

use super::Command;
use super::actor::ControllerActor;

impl ControllerActor {
    /// An operator's command: applied to the book, answered after the write.
    pub(super) fn command(
        &mut self,
        now: u64,
        command: Command,
        effects: &mut Vec<Effect>,
        group: &mut Group,
    ) {
        match command {
            Command::Submit {
                definition,
                source,
                start,
                starter,
                reply,
            } => {
                let input = Input::Submit {
                    definition,
                    source,
                    responsible: start.responsible,
                    inputs: start.inputs,
                    starter,
                };
                let result = self.submit(now, input, effects);
                group.answer(reply, result);
            }
            Command::Control {
                instance,
                action,
                reply,
            } => {
                let result = self.control(now, instance, action, effects);
                group.answer(reply, result);
            }
            command @ (Command::Pause { .. } | Command::Worklist { .. }) => {
                self.activity_order(now, command, effects, group)
            }
            Command::Rerun {
                instance,
                activity,
                reply,
            } => {
                let result = self.rerun(now, instance, activity, effects);
                group.answer(reply, result);
            }
            Command::Organisation {
                document,
                org,
                reply,
            } => {
                let result = self.organisation(now, Input::Organisation { document, org }, effects);
                group.answer(reply, result);
            }
            Command::Classes {
                document,
                classes,
                reply,
            } => {
                let result = self.coordination(now, Input::Classes { document, classes }, effects);
                group.answer(reply, result);
            }
            Command::Orderings {
                source,
                document,
                reply,
            } => {
                let input = Input::Orderings { source, document };
                let result = self.coordination(now, input, effects);
                group.answer(reply, result);
            }
            Command::Definitions(command) => self.definitions(now, command, effects, group),
            Command::Enrol { reply, .. } => {
                let _ = reply.send(Err("enrolment is applied with its group".to_owned()));
            }
        }
    }

    /// An operator's order about one activity: pause or resume it, or act on its work item.
    fn activity_order(
        &mut self,
        now: u64,
        command: Command,
        effects: &mut Vec<Effect>,
        group: &mut Group,
    ) {
        match command {
            Command::Pause {
                instance,
                activity,
                action,
                by,
                reply,
            } => {
                let input = Input::Pause {
                    instance,
                    activity,
                    action,
                    by,
                };
                let result = self.operator(now, input, effects);
                group.answer(reply, result);
            }
            Command::Worklist {
                instance,
                activity,
                user,
                action,
                reply,
            } => {
                let input = Input::Worklist {
                    instance,
                    activity,
                    user,
                    action,
                };
                let result = self.administer(now, input, effects);
                group.answer(reply, result);
            }
            _ => {}
        }
    }

    /// A submission: the new instance.
    fn submit(
        &mut self,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<InstanceId, BookError> {
        let applied = self.apply_book(now, input)?;
        effects.extend(applied.effects);
        let id = applied.instance.unwrap_or(InstanceId(0));
        tracing::info_span!("instance", instance = %id)
            .in_scope(|| tracing::info!("instance submitted"));
        Ok(id)
    }

    /// An operator's control: the instance afterwards.
    fn control(
        &mut self,
        now: u64,
        instance: InstanceId,
        action: Control,
        effects: &mut Vec<Effect>,
    ) -> Result<Instance, BookError> {
        let applied = self.apply_book(now, Input::Control { instance, action })?;
        effects.extend(applied.effects);
        tracing::info!(%instance, action = action.as_str(), "operator control");
        self.book
            .instance(instance)
            .cloned()
            .ok_or(BookError::UnknownInstance(instance))
    }

    /// An operator's order about one instance (a pause or resumption): the instance
    /// afterwards.
    fn operator(
        &mut self,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<Instance, BookError> {
        let Some(instance) = input.instance() else {
            return Err(BookError::Unexpected("order"));
        };
        tracing::info!(%instance, ?input, "operator order");
        let applied = self.apply_book(now, input)?;
        effects.extend(applied.effects);
        self.book
            .instance(instance)
            .cloned()
            .ok_or(BookError::UnknownInstance(instance))
    }

    /// An operator's rerun: the instance afterwards.
    fn rerun(
        &mut self,
        now: u64,
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        effects: &mut Vec<Effect>,
    ) -> Result<Instance, BookError> {
        let applied = self.apply_book(now, Input::Rerun { instance, activity })?;
        effects.extend(applied.effects);
        tracing::info!(%instance, %activity, "operator rerun");
        self.book
            .instance(instance)
            .cloned()
            .ok_or(BookError::UnknownInstance(instance))
    }

    /// An organisation applied: the new directory version.
    fn organisation(
        &mut self,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<u64, BookError> {
        let applied = self.apply_book(now, input)?;
        effects.extend(applied.effects);
        let version = self.book.directory().version;
        tracing::info!(version, "organisation applied");
        Ok(version)
    }

    /// A class or ordering document applied: how many classes or orderings it holds.
    fn coordination(
        &mut self,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<usize, BookError> {
        let classes = matches!(input, Input::Classes { .. });
        let applied = self.apply_book(now, input)?;
        effects.extend(applied.effects);
        if classes {
            let count = self.book.classes().classes.len();
            tracing::info!(classes = count, "class document applied");
            Ok(count)
        } else {
            let count = self.book.orderings().orderings.len();
            tracing::info!(orderings = count, "ordering document applied");
            Ok(count)
        }
    }

    /// An operator's action on a work item: the name of the node it is sent to.
    fn administer(
        &mut self,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<String, BookError> {
        let applied = self.apply_book(now, input)?;
        let host = applied.effects.iter().find_map(|e| match e {
            Effect::Send { to, .. } => self.book.nodes().find(|n| &n.peer == to),
            _ => None,
        });
        let host = host.map(|n| n.name.to_string()).unwrap_or_default();
        effects.extend(applied.effects);
        Ok(host)
    }
}
