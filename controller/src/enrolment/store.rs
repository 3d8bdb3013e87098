//! How the enrolment lives in the store: `enrol/token/<id>` (a join token's hash, label and
//! creation time, JSON) and `enrol/allow/<peer id>` (a peer id on the allow list, empty).

use mobiwf_proto::NodeId;
use mobiwf_runtime::store::{Batch, Store, StoreError, encode, unreadable};

use super::{Change, Enrolment, JoinToken};

const TOKEN_PREFIX: &str = "enrol/token/";
const ALLOW_PREFIX: &str = "enrol/allow/";

/// Adds `change` to `batch`.
pub fn stage(batch: &mut Batch, change: &Change) -> Result<(), StoreError> {
    match change {
        Change::Token(token) => {
            let key = format!("{TOKEN_PREFIX}{}", token.id);
            let value = encode(&key, token)?;
            batch.put(key, value);
        }
        Change::Revoked(id) => batch.delete(format!("{TOKEN_PREFIX}{id}")),
        Change::Allowed(peer) => batch.put(format!("{ALLOW_PREFIX}{peer}"), Vec::new()),
        Change::Disallowed(peer) => batch.delete(format!("{ALLOW_PREFIX}{peer}")),
    }
    Ok(())
}

/// The enrolment as the store holds it (closed: `serve` opens it by choice).
pub fn load(store: &dyn Store) -> Result<Enrolment, StoreError> {
    let mut tokens = Vec::new();
    for (k, v) in store.scan_prefix(TOKEN_PREFIX.as_bytes())? {
        tokens.push(serde_json::from_slice::<JoinToken>(&v).map_err(|e| unreadable(&k, &e))?);
    }
    let mut allowed = Vec::new();
    for (k, _) in store.scan_prefix(ALLOW_PREFIX.as_bytes())? {
        let peer = k
            .get(ALLOW_PREFIX.len()..)
            .and_then(|p| std::str::from_utf8(p).ok())
            .ok_or_else(|| unreadable(&k, &"not a peer id"))?;
        allowed.push(NodeId::new(peer.to_owned()));
    }
    Ok(Enrolment::restore(tokens, allowed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_runtime::store::{Durability, MemoryStore};

    #[test]
    fn the_enrolment_comes_back_from_the_store() {
        let store = MemoryStore::new();
        let mut enrolment = Enrolment::default();
        let mut batch = Batch::default();
        let made = enrolment
            .add_token("ab".repeat(32), "field".into(), 7)
            .unwrap();
        let other = enrolment
            .add_token("cd".repeat(32), String::new(), 8)
            .unwrap();
        let allowed = enrolment.allow(NodeId::new("peer1")).unwrap();
        for c in [&made, &other, &allowed] {
            stage(&mut batch, c).unwrap();
        }
        store.write(batch, Durability::Synced).unwrap();
        let mut batch = Batch::default();
        stage(&mut batch, &enrolment.revoke(&"cd".repeat(6)).unwrap()).unwrap();
        store.write(batch, Durability::Synced).unwrap();
        let back = load(&store).unwrap();
        assert_eq!(
            back.tokens().cloned().collect::<Vec<_>>(),
            enrolment.tokens().cloned().collect::<Vec<_>>()
        );
        assert_eq!(
            back.allowed().collect::<Vec<_>>(),
            vec![&NodeId::new("peer1")]
        );
    }
}
