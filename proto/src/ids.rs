//! The ids that are not the documents' own: instances, nodes (by peer id) and node names.
//!
//! Activity, activity type and partition ids come from `mobiwf-xml-schema` (re-exported by
//! this crate), so that a value read from a document and a value on the wire are one type.
//! Every id serializes as the bare number or text it wraps: the wire and the stores keep the
//! format they had with bare values.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One run of a workflow; `workflow@id` in its partition documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstanceId(pub u64);

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<InstanceId> for mobiwf_xml_schema::WorkflowId {
    fn from(id: InstanceId) -> Self {
        mobiwf_xml_schema::WorkflowId(id.0)
    }
}

mobiwf_xml_schema::text_id!(
    /// A node (or the controller) by its libp2p peer id, in its base58 text form. The network
    /// layer parses it once where it needs a `libp2p::PeerId`; the pure cores only compare it.
    NodeId
);

mobiwf_xml_schema::text_id!(
    /// The name a node registered with, matched against a workflow partner's name or id.
    NodeName
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_serialize_as_their_bare_values() {
        assert_eq!(serde_json::to_string(&InstanceId(7)).unwrap(), "7");
        assert_eq!(
            serde_json::to_string(&NodeId::new("12D3")).unwrap(),
            "\"12D3\""
        );
        let back: NodeName = serde_json::from_str("\"P1\"").unwrap();
        assert_eq!(back, "P1");
        assert_eq!(InstanceId(3).to_string(), "3");
    }
}
