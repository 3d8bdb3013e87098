//! Who a work item goes to (*A lightweight workflow engine based on a relational structure*
//! (He, Li, Jiao, Liu), §3.3 and §4.2; *Synchronization and Disconnected Operation in WorkToDo*
//! (IC-03-006), Table 2): the candidates of the activity's basis minus those on leave or without a
//! device, then the method (and for `fcfa` the notification policy) picks among them. Ties are
//! broken by user id, so the same directory and load always give the same choice.
//!
//! Load (open and held items per user) is what the host knows: the items it hosts. With one
//! host per role's work that is exact; across hosts each counts its own (documented in
//! ARCHITECTURE.md → People).

use std::collections::BTreeMap;

use mobiwf_xml_schema::{Method, People, Policy, User, UserId};

use crate::Directory;

/// The work each user has on this host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Load {
    /// Items offered to or held by the user, not finished.
    pub open: BTreeMap<UserId, u32>,
    /// Items the user holds (selected or locked), not finished.
    pub held: BTreeMap<UserId, u32>,
}

impl Load {
    fn open(&self, user: &UserId) -> u32 {
        self.open.get(user).copied().unwrap_or(0)
    }

    fn held(&self, user: &UserId) -> u32 {
        self.held.get(user).copied().unwrap_or(0)
    }
}

/// What the assignment decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `fcfa`: offered to these users; the first to select takes it.
    Offer(Vec<UserId>),
    /// `all`: each of these users gets a copy of their own.
    Copies(Vec<UserId>),
    /// `least-working`, `priority`, `round-robin`: this user is the executor (offered to them
    /// alone). For round-robin it is also the role's new token.
    Fixed(UserId),
    /// Nobody can be offered the item now.
    Nobody(String),
}

/// Chooses who gets an item of an activity with these people extensions. `token` is the last
/// user round-robin gave an item of the same role to (on this host).
pub fn choose(dir: &Directory, people: &People, load: &Load, token: Option<&UserId>) -> Choice {
    let group = dir.group(people);
    let candidates: Vec<&User> = group.iter().copied().filter(|u| dir.available(u)).collect();
    if candidates.is_empty() {
        return Choice::Nobody(nobody(dir, people, group.len()));
    }
    match people.method {
        Method::Fcfa => Choice::Offer(policy(dir, people.policy, &candidates, load)),
        Method::All => Choice::Copies(ids(&candidates)),
        Method::LeastWorking => first_by(&candidates, |u| load.open(&u.id)),
        Method::Priority => {
            let Some(role) = people.role.as_ref() else {
                return Choice::Nobody("method priority needs a role".to_owned());
            };
            first_by(&candidates, |u| {
                std::cmp::Reverse(dir.priority_in(u, role).unwrap_or(i64::MIN))
            })
        }
        Method::RoundRobin => {
            let next = token
                .and_then(|t| candidates.iter().find(|u| &u.id > t))
                .or_else(|| candidates.first());
            match next {
                Some(u) => Choice::Fixed(u.id.clone()),
                None => Choice::Nobody("no candidate".to_owned()),
            }
        }
    }
}

/// The users of the fcfa policy, in id order.
fn policy(dir: &Directory, policy: Policy, candidates: &[&User], load: &Load) -> Vec<UserId> {
    let device = |u: &User| dir.device_of(u.id.as_str()).cloned();
    let mut ranked: Vec<(i128, &User)> = match policy {
        Policy::All => return ids(candidates),
        Policy::FewestAssigned(_) => rank(candidates, |u| i128::from(load.open(&u.id))),
        Policy::FewestSelected(_) => rank(candidates, |u| i128::from(load.held(&u.id))),
        Policy::MostFrequent(_) => rank(candidates, |u| {
            -i128::from(device(u).map_or(0, |d| d.connections))
        }),
        Policy::MostRecent(_) => rank(candidates, |u| {
            -i128::from(device(u).map_or(0, |d| d.last_connected_ms))
        }),
    };
    let n = match policy {
        Policy::All => candidates.len(),
        Policy::FewestAssigned(n)
        | Policy::FewestSelected(n)
        | Policy::MostFrequent(n)
        | Policy::MostRecent(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    ranked.sort_by(|(a, ua), (b, ub)| a.cmp(b).then(ua.id.cmp(&ub.id)));
    let mut chosen: Vec<UserId> = ranked
        .into_iter()
        .take(n)
        .map(|(_, u)| u.id.clone())
        .collect();
    chosen.sort();
    chosen
}

fn rank<'a>(candidates: &[&'a User], key: impl Fn(&User) -> i128) -> Vec<(i128, &'a User)> {
    candidates.iter().map(|u| (key(u), *u)).collect()
}

fn first_by<K: Ord>(candidates: &[&User], key: impl Fn(&User) -> K) -> Choice {
    candidates
        .iter()
        .min_by(|a, b| key(a).cmp(&key(b)).then(a.id.cmp(&b.id)))
        .map_or_else(
            || Choice::Nobody("no candidate".to_owned()),
            |u| Choice::Fixed(u.id.clone()),
        )
}

fn ids(users: &[&User]) -> Vec<UserId> {
    users.iter().map(|u| u.id.clone()).collect()
}

/// Why nobody can be offered an item, in words for the history.
fn nobody(dir: &Directory, people: &People, group: usize) -> String {
    let who = people
        .role
        .as_ref()
        .map(|r| format!("role {r}"))
        .or_else(|| {
            people
                .department
                .as_ref()
                .map(|d| format!("department {d}"))
        })
        .or_else(|| people.team.as_ref().map(|t| format!("team {t}")))
        .unwrap_or_else(|| "the activity".to_owned());
    if dir.version == 0 {
        format!("no organisation directory has reached this node yet; {who} has no candidate")
    } else if group == 0 {
        format!("nobody in {who} (directory version {})", dir.version)
    } else {
        format!(
            "all {group} of {who} are on leave or have no registered device (directory version {})",
            dir.version
        )
    }
}
