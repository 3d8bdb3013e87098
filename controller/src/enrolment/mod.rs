//! Who may join the mesh: a node registers only with the controller's consent, a join token it
//! presents or its peer id on the allow list, and a node name belongs to the first peer id that
//! registered it. Pure: the actor asks it before the book hears of a registration, and stores what
//! changes (`store.rs`).

mod store;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_book::NodeInfo;
use mobiwf_proto::{NodeId, NodeName};
use serde::{Deserialize, Serialize};

pub use store::{load, stage};

/// What a join token starts with: says what it is when found in a file or a log.
pub const JOIN_TOKEN_PREFIX: &str = "mwf_join_";

/// The most join tokens that may exist at once (create refuses past it: revoke some).
pub const MAX_JOIN_TOKENS: usize = 1024;

/// The most peer ids on the allow list.
pub const MAX_ALLOWED_PEERS: usize = 4096;

/// The longest label of a join token, in characters.
pub const MAX_LABEL_CHARS: usize = 200;

/// A join token as the controller keeps it: its hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinToken {
    /// The token's id (the first 12 hex digits of its hash): how operators name it.
    pub id: String,
    /// SHA-256 of the token, hex.
    pub hash: String,
    /// What it is for, as its creator said.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// When it was made, ms since the epoch.
    pub created_ms: u64,
}

/// The controller's consent: join tokens, the allow list, and whether anyone may join.
#[derive(Debug, Clone, Default)]
pub struct Enrolment {
    /// Anyone who can reach the controller may join (`serve --open-enrolment`).
    pub open: bool,
    tokens: BTreeMap<String, JoinToken>,
    allowed: BTreeSet<NodeId>,
}

/// How a registration was let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// The peer is a registered node already.
    Member,
    /// It presented the join token with this id.
    Token(String),
    /// Its peer id is on the allow list.
    Allowed,
    /// Enrolment is open.
    Open,
}

/// What changed, for the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A token was made.
    Token(JoinToken),
    /// A token was revoked.
    Revoked(String),
    /// A peer id was allowed.
    Allowed(NodeId),
    /// A peer id left the allow list.
    Disallowed(NodeId),
}

impl Enrolment {
    /// The enrolment the store held.
    pub fn restore(tokens: Vec<JoinToken>, allowed: Vec<NodeId>) -> Enrolment {
        Enrolment {
            open: false,
            tokens: tokens.into_iter().map(|t| (t.id.clone(), t)).collect(),
            allowed: allowed.into_iter().collect(),
        }
    }

    /// The join tokens, by id.
    pub fn tokens(&self) -> impl Iterator<Item = &JoinToken> {
        self.tokens.values()
    }

    /// The peer ids on the allow list.
    pub fn allowed(&self) -> impl Iterator<Item = &NodeId> {
        self.allowed.iter()
    }

    /// Whether `peer` may register under `name`, presenting `token` (its hash), given the
    /// nodes registered so far: a name held by another peer id is refused (until an operator
    /// removes that node); a registered peer is a member; a new one needs open enrolment, the
    /// allow list or a live join token.
    pub fn admit<'a>(
        &self,
        peer: &NodeId,
        name: &NodeName,
        token_hash: Option<&str>,
        mut nodes: impl Iterator<Item = &'a NodeInfo>,
    ) -> Result<Admission, String> {
        let mut member = false;
        for node in nodes.by_ref() {
            if &node.peer == peer {
                member = true;
            } else if &node.name == name {
                return Err(format!(
                    "the name {name} belongs to peer {}, which registered it first; another \
                     key under that name is refused (if that node is gone for good, free its \
                     name with `mobiwf-controller nodes remove {name}`)",
                    node.peer
                ));
            }
        }
        if member {
            return Ok(Admission::Member);
        }
        if self.open {
            return Ok(Admission::Open);
        }
        if self.allowed.contains(peer) {
            return Ok(Admission::Allowed);
        }
        let Some(hash) = token_hash else {
            return Err(format!(
                "peer {peer} is not enrolled: start the node with --join-token-file (the \
                 controller's DIR/join.token, or a token from `mobiwf-controller tokens \
                 create`), or allow its peer id with `mobiwf-controller nodes allow {peer}`"
            ));
        };
        match self
            .tokens
            .values()
            .find(|t| mobiwf_runtime::secret::same_hash(&t.hash, hash))
        {
            Some(t) => Ok(Admission::Token(t.id.clone())),
            None => Err(format!(
                "peer {peer} presented a join token this controller does not know (revoked, \
                 or from another controller): get a current one from `mobiwf-controller \
                 tokens create`"
            )),
        }
    }

    /// Adds a token (by its hash); the change to store.
    pub fn add_token(
        &mut self,
        hash: String,
        label: String,
        now_ms: u64,
    ) -> Result<Change, String> {
        if self.tokens.len() >= MAX_JOIN_TOKENS {
            return Err(format!(
                "there are {MAX_JOIN_TOKENS} join tokens already (the limit): revoke some \
                 with `mobiwf-controller tokens revoke ID`"
            ));
        }
        if label.chars().count() > MAX_LABEL_CHARS {
            return Err(format!(
                "a token's label is at most {MAX_LABEL_CHARS} characters"
            ));
        }
        let token = JoinToken {
            id: hash.chars().take(12).collect(),
            hash,
            label,
            created_ms: now_ms,
        };
        self.tokens.insert(token.id.clone(), token.clone());
        Ok(Change::Token(token))
    }

    /// Revokes the token with id `id`: nodes already registered stay members.
    pub fn revoke(&mut self, id: &str) -> Result<Change, String> {
        match self.tokens.remove(id) {
            Some(t) => Ok(Change::Revoked(t.id)),
            None => Err(format!(
                "no join token has the id {id} (`mobiwf-controller tokens list` shows them)"
            )),
        }
    }

    /// Puts `peer` on the allow list.
    pub fn allow(&mut self, peer: NodeId) -> Result<Change, String> {
        if self.allowed.len() >= MAX_ALLOWED_PEERS && !self.allowed.contains(&peer) {
            return Err(format!(
                "the allow list holds {MAX_ALLOWED_PEERS} peer ids already (the limit)"
            ));
        }
        self.allowed.insert(peer.clone());
        Ok(Change::Allowed(peer))
    }

    /// Takes `peer` off the allow list (a removed node must be let in again to come back).
    pub fn disallow(&mut self, peer: &NodeId) -> Option<Change> {
        self.allowed
            .remove(peer)
            .then(|| Change::Disallowed(peer.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(peer: &str, name: &str) -> NodeInfo {
        NodeInfo {
            peer: NodeId::new(peer),
            name: NodeName::new(name),
            skills: Vec::new(),
            addrs: Vec::new(),
            registered_ms: 0,
            seq: 1,
            suspected: None,
        }
    }

    fn id(s: &str) -> NodeId {
        NodeId::new(s)
    }

    #[test]
    fn a_name_belongs_to_the_first_peer_that_registered_it() {
        let enrolment = Enrolment {
            open: true,
            ..Enrolment::default()
        };
        let nodes = [node("real", "P2")];
        let rogue = enrolment.admit(&id("rogue"), &NodeName::new("P2"), None, nodes.iter());
        assert!(rogue.unwrap_err().contains("belongs to peer real"));
        let back = enrolment.admit(&id("real"), &NodeName::new("P2"), None, nodes.iter());
        assert_eq!(back, Ok(Admission::Member));
        // A member may take a free name.
        let renamed = enrolment.admit(&id("real"), &NodeName::new("P9"), None, nodes.iter());
        assert_eq!(renamed, Ok(Admission::Member));
    }

    #[test]
    fn a_new_peer_needs_a_live_token_or_the_allow_list() {
        let mut enrolment = Enrolment::default();
        let name = NodeName::new("P1");
        let none: [NodeInfo; 0] = [];
        let refused = enrolment.admit(&id("p"), &name, None, none.iter());
        assert!(refused.unwrap_err().contains("not enrolled"));
        let token = mobiwf_runtime::secret::new_token(JOIN_TOKEN_PREFIX).unwrap();
        let hash = mobiwf_runtime::secret::hash(&token);
        let Change::Token(made) = enrolment
            .add_token(hash.clone(), "field".into(), 5)
            .unwrap()
        else {
            panic!("a token change");
        };
        let admitted = enrolment.admit(&id("p"), &name, Some(&hash), none.iter());
        assert_eq!(admitted, Ok(Admission::Token(made.id.clone())));
        let wrong = mobiwf_runtime::secret::hash("mwf_join_nope");
        let refused = enrolment.admit(&id("p"), &name, Some(&wrong), none.iter());
        assert!(refused.unwrap_err().contains("does not know"));
        enrolment.revoke(&made.id).unwrap();
        assert!(
            enrolment
                .admit(&id("p"), &name, Some(&hash), none.iter())
                .is_err()
        );
        assert!(enrolment.revoke(&made.id).is_err());
        enrolment.allow(id("p")).unwrap();
        assert_eq!(
            enrolment.admit(&id("p"), &name, None, none.iter()),
            Ok(Admission::Allowed)
        );
        assert!(enrolment.disallow(&id("p")).is_some());
        assert!(enrolment.disallow(&id("p")).is_none());
    }

    #[test]
    fn labels_and_token_counts_are_bounded() {
        let mut enrolment = Enrolment::default();
        let long = "x".repeat(MAX_LABEL_CHARS + 1);
        assert!(enrolment.add_token("ab".repeat(32), long, 0).is_err());
        for i in 0..MAX_JOIN_TOKENS {
            let hash = mobiwf_runtime::secret::hash(&i.to_string());
            enrolment.add_token(hash, String::new(), 0).unwrap();
        }
        let past = enrolment.add_token("cd".repeat(32), String::new(), 0);
        assert!(past.unwrap_err().contains("the limit"));
    }
}
