//! The typed model of both MobiWfMS XML languages: the workflow definition (*MobiWfMS*, "Linguagem
//! de workflow do MobiWfMS", §4.1, Figure 9) and the partition document sent to a partner (§4.2,
//! Figure 10).
//!
//! The model is plain data: no positions (those live in [`crate::SourceMap`]), so that
//! `read(write(x)) == x` holds for every value.

mod applications;
mod classes;
mod common;
mod data;
mod definition;
mod flag;
mod loops;
mod ordering;
mod partition;
mod people;
mod rules;

pub use applications::{
    Application, ApplicationId, MAX_APPLICATION_KIB, application_id_problem, os_problem,
};
pub use classes::{ClassDocument, ClassName, DEFAULT_MAX_WAIT_SECS, TaskClass, class_name_problem};

pub use common::{
    ActivityId, ActivityKind, ActivityTypeId, Contingency, PartitionId, PartnerId, Retries, Status,
    WorkflowId,
};
pub use data::{DataAccess, DataItem, DataKind, Input, data_name_problem, number_problem};
pub use definition::{
    Activity, ActivityType, DefinitionName, Partition, Partner, WorkflowDefinition,
    definition_name_problem,
};
pub use flag::{FlagFault, flag_fault, flag_problem};
pub use loops::{Loop, LoopMember};
pub use ordering::{OrderPair, Ordering, Orderings, Side, TaskRef};
pub use partition::{Adjacent, PartitionActivity, PartitionDocument, Precondition};
pub use people::{
    Basis, Department, DepartmentId, Method, Organisation, People, Policy, Role, RoleGrant, RoleId,
    Team, TeamId, User, UserId, role_id_problem,
};
pub use rules::{Merge, Route, Rule, TaskState, route_for, routed_to};
