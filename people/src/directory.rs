//! The organisation directory as a node holds it: the organisation document the controller
//! applied, the registered devices, and the version both came with. Hosts assign work from
//! it; devices learn from it which users they serve.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{DeviceEntry, DirectoryVersion, NodeId, NodeName};
use mobiwf_xml_schema::{Basis, DepartmentId, Organisation, People, RoleId, TeamId, User};

/// The role whose members may administer worklists (insert, remove, delegate any item).
pub const ADMINISTRATOR: &str = "administrator";

/// Why a directory message could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectoryError {
    /// The organisation document does not load (the controller validated it, so this means
    /// the two run different versions).
    #[error(
        "the organisation document of directory version {version} does not load:\n{diagnostics}"
    )]
    BadDocument {
        /// The version.
        version: u64,
        /// The problems, rendered.
        diagnostics: String,
    },
}

/// One version of the directory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Directory {
    /// Grows with every change at the controller; 0 = none received yet.
    pub version: u64,
    /// The organisation document's text, as the controller sent it (kept to store and send
    /// on).
    pub document: String,
    /// The organisation.
    pub org: Organisation,
    /// The registered nodes by name.
    pub devices: BTreeMap<NodeName, DeviceEntry>,
    /// The devices (peer ids) this node failed to reach `UNREACHABLE_AFTER_FAILURES` times
    /// in a row and that have not answered since: their users are inactive here (no new
    /// offers). This node's own observation, not the controller's: kept across versions.
    pub unreachable: BTreeSet<NodeId>,
}

impl Directory {
    /// A directory from what a `Message::Directory` carries (or its stored form); the document
    /// is read and checked.
    pub fn parse(sent: DirectoryVersion) -> Result<Directory, DirectoryError> {
        let DirectoryVersion {
            version,
            document,
            devices,
        } = sent;
        let org = if document.trim().is_empty() {
            Organisation::default()
        } else {
            mobiwf_xml_schema::load_organisation(document.as_bytes())
                .map_err(|d| DirectoryError::BadDocument {
                    version,
                    diagnostics: d.render("organisation document"),
                })?
                .value
        };
        Ok(Directory {
            version,
            document,
            org,
            devices: devices.into_iter().map(|d| (d.name.clone(), d)).collect(),
            unreachable: BTreeSet::new(),
        })
    }

    /// A user by id.
    pub fn user(&self, id: &str) -> Option<&User> {
        self.org.users.iter().find(|u| u.id.as_str() == id)
    }

    /// The registered node that holds a user's worklist: none when the user has no device
    /// or it never registered.
    pub fn device_of(&self, user: &str) -> Option<&DeviceEntry> {
        let name = self.user(user)?.device.as_deref()?;
        self.devices.get(name)
    }

    /// The registered node with this peer id.
    pub fn device_by_node(&self, node: &NodeId) -> Option<&DeviceEntry> {
        self.devices.values().find(|d| &d.node == node)
    }

    /// The users whose worklists live on the node named `device`.
    pub fn users_on<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a User> + 'a {
        self.org
            .users
            .iter()
            .filter(move |u| u.device.as_deref() == Some(device))
    }

    /// Whether the user plays the administrator role.
    pub fn is_administrator(&self, user: &str) -> bool {
        self.user(user)
            .is_some_and(|u| u.roles.iter().any(|g| g.role.as_str() == ADMINISTRATOR))
    }

    /// A user's priority in a role, when they play it.
    pub fn priority_in(&self, user: &User, role: &RoleId) -> Option<i64> {
        user.roles
            .iter()
            .find(|g| &g.role == role)
            .map(|g| g.priority)
    }

    /// Whether the user may be offered new work: not on leave, with a registered device, and
    /// not away (disconnected with `mobiwf-node disconnect`).
    /// Nor inactive: their device unreachable from this node.
    pub fn available(&self, user: &User) -> bool {
        self.keeps_offers(user)
            && !self.is_away(user.id.as_str())
            && !self.is_inactive(user.id.as_str())
    }

    /// Whether the user's device cannot be reached from this node (*Synchronization and
    /// Disconnected Operation in WorkToDo* (IC-03-006), §5.3).
    pub fn is_inactive(&self, user: &str) -> bool {
        self.device_of(user)
            .is_some_and(|d| self.unreachable.contains(&d.node))
    }

    /// Records that a device cannot be reached, or answered again; true when that changed
    /// anything.
    pub fn set_reachable(&mut self, device: &NodeId, reachable: bool) -> bool {
        if reachable {
            self.unreachable.remove(device)
        } else {
            self.unreachable.insert(device.clone())
        }
    }

    /// Whether the user keeps the offers they have: not on leave, with a registered device.
    /// A user who is away keeps them (disabled on their device until they reconnect; anyone
    /// else offered the item may take it meanwhile).
    pub fn keeps_offers(&self, user: &User) -> bool {
        !user.on_leave && self.device_of(user.id.as_str()).is_some()
    }

    /// Whether the user disconnected and has not reconnected (their device's entry says so).
    pub fn is_away(&self, user: &str) -> bool {
        self.device_of(user)
            .is_some_and(|d| d.away.iter().any(|u| u.as_str() == user))
    }

    /// Everyone the activity's basis names (the role's members, or the department's or
    /// team's subtree, filtered by the role when there is one), whether available or not,
    /// ordered by id.
    pub fn group(&self, people: &People) -> Vec<&User> {
        let departments = people
            .department
            .as_ref()
            .map(|d| self.department_subtree(d));
        let teams = people.team.as_ref().map(|t| self.team_subtree(t));
        let mut users: Vec<&User> = self
            .org
            .users
            .iter()
            .filter(|u| {
                let in_role = people
                    .role
                    .as_ref()
                    .is_none_or(|r| u.roles.iter().any(|g| &g.role == r));
                let in_basis = match people.basis {
                    Basis::Role => people.role.is_some(),
                    Basis::Department => departments
                        .as_ref()
                        .is_some_and(|set| u.department.as_ref().is_some_and(|d| set.contains(d))),
                    Basis::Team => teams
                        .as_ref()
                        .is_some_and(|set| u.teams.iter().any(|t| set.contains(t))),
                };
                in_role && in_basis
            })
            .collect();
        users.sort_by(|a, b| a.id.cmp(&b.id));
        users
    }

    /// A department and every department under it.
    pub fn department_subtree(&self, root: &DepartmentId) -> BTreeSet<DepartmentId> {
        let edges: Vec<(DepartmentId, Option<DepartmentId>)> = self
            .org
            .departments
            .iter()
            .map(|d| (d.id.clone(), d.parent.clone()))
            .collect();
        subtree(root, &edges)
    }

    /// A team and every team under it.
    pub fn team_subtree(&self, root: &TeamId) -> BTreeSet<TeamId> {
        let edges: Vec<(TeamId, Option<TeamId>)> = self
            .org
            .teams
            .iter()
            .map(|t| (t.id.clone(), t.parent.clone()))
            .collect();
        subtree(root, &edges)
    }
}

/// `root` and everything whose parent chain reaches it (cycles were refused when the document
/// was read; the walk is bounded by the number of edges anyway).
fn subtree<T: Ord + Clone>(root: &T, edges: &[(T, Option<T>)]) -> BTreeSet<T> {
    let mut set = BTreeSet::from([root.clone()]);
    for _ in 0..edges.len() {
        let before = set.len();
        for (id, parent) in edges {
            if parent.as_ref().is_some_and(|p| set.contains(p)) {
                set.insert(id.clone());
            }
        }
        if set.len() == before {
            break;
        }
    }
    set
}
