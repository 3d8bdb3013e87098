//! The login codes and sessions a daemon knows: in memory for the check of every page, in the
//! store as `web/code/<id>` and `web/session/<id>` (JSON, the hash, never the secret). A new
//! code is on disk (synced) before it is shown; exchanging it deletes it and writes the session
//! in one synced batch, so a code opens at most one session, across crashes too; a session
//! ended is gone from disk before the sign-out is answered. What is spent or over is dropped
//! as it is met (and at start).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::rules::{
    CODE_PREFIX, CODE_TTL_MS, CodeRefused, LoginCode, SESSION_PREFIX, SESSION_TTL_MS, Session,
    Speaker, id_of, is_over, take_code,
};
use crate::secret;
use crate::store::{Batch, Durability, Store, StoreError, encode, unreadable};

const CODE_KEY: &str = "web/code/";
const SESSION_KEY: &str = "web/session/";

/// The most login codes waiting at once; past it, the oldest goes.
pub const MAX_CODES: usize = 1024;

/// The most sessions at once; past it, the one that ends first goes.
pub const MAX_SESSIONS: usize = 4096;

/// A session the browser showed, with its token (the CSRF token derives from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The session as kept.
    pub session: Session,
    /// The token the cookie held.
    pub token: String,
}

impl Signed {
    /// The CSRF token every state-changing form of this session carries.
    pub fn csrf(&self) -> String {
        super::rules::csrf_of(&self.token)
    }

    /// Whether `presented` is this session's CSRF token.
    pub fn csrf_ok(&self, presented: Option<&str>) -> bool {
        super::rules::csrf_matches(&self.token, presented)
    }
}

#[derive(Default)]
struct Tables {
    codes: BTreeMap<String, LoginCode>,
    sessions: BTreeMap<String, Session>,
}

/// The codes and sessions of one daemon.
pub struct Sessions {
    store: Arc<dyn Store>,
    tables: Mutex<Tables>,
}

impl Sessions {
    /// What the store holds, less what is over at `now_ms` (deleted from the store too).
    pub fn open(store: Arc<dyn Store>, now_ms: u64) -> Result<Sessions, StoreError> {
        let mut tables = Tables::default();
        let mut gone = Batch::default();
        for (k, v) in store.scan_prefix(CODE_KEY.as_bytes())? {
            let code: LoginCode = serde_json::from_slice(&v).map_err(|e| unreadable(&k, &e))?;
            if is_over(code.expires_ms, now_ms) {
                gone.delete(k);
            } else {
                tables.codes.insert(code.id.clone(), code);
            }
        }
        for (k, v) in store.scan_prefix(SESSION_KEY.as_bytes())? {
            let session: Session = serde_json::from_slice(&v).map_err(|e| unreadable(&k, &e))?;
            if is_over(session.expires_ms, now_ms) {
                gone.delete(k);
            } else {
                tables.sessions.insert(session.id.clone(), session);
            }
        }
        if !gone.is_empty() {
            store.write(gone, Durability::Synced)?;
        }
        Ok(Sessions {
            store,
            tables: Mutex::new(tables),
        })
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new login code for `speaker`, leading to `then` (a path, checked by the caller with
    /// `rules::local_path`): its text, shown once, and what is kept; on disk when this
    /// returns. Blocks on the store's sync: call it off the async workers.
    pub fn issue(
        &self,
        speaker: Speaker,
        then: String,
        now_ms: u64,
    ) -> anyhow::Result<(String, LoginCode)> {
        let text = secret::new_token(CODE_PREFIX)?;
        let hash = secret::hash(&text);
        let code = LoginCode {
            id: id_of(&hash),
            hash,
            grant: speaker.grant,
            user: speaker.user,
            then,
            expires_ms: now_ms.saturating_add(CODE_TTL_MS),
        };
        let mut tables = self.tables();
        let mut batch = Batch::default();
        let key = format!("{CODE_KEY}{}", code.id);
        batch.put(key.clone(), encode(&key, &code)?);
        let spent = oldest_past(&tables.codes, MAX_CODES, |c| c.expires_ms);
        for id in &spent {
            batch.delete(format!("{CODE_KEY}{id}"));
        }
        self.store.write(batch, Durability::Synced)?;
        for id in spent {
            tables.codes.remove(&id);
        }
        tables.codes.insert(code.id.clone(), code.clone());
        Ok((text, code))
    }

    /// Exchanges the login code `presented` for a new session (the code is spent): the
    /// session's token (the cookie's value), the session, and where to go. Blocks on the
    /// store's sync.
    pub fn redeem(
        &self,
        presented: &str,
        now_ms: u64,
    ) -> anyhow::Result<Result<(Signed, String), CodeRefused>> {
        if presented.len() > secret::MAX_TOKEN_CHARS {
            return Ok(Err(CodeRefused::Unknown));
        }
        let hash = secret::hash(presented);
        let mut tables = self.tables();
        let id = id_of(&hash);
        let stored = tables.codes.get(&id);
        if let Err(refused) = take_code(stored, &hash, now_ms) {
            return Ok(Err(refused));
        }
        let Some(code) = tables.codes.get(&id).cloned() else {
            return Ok(Err(CodeRefused::Unknown));
        };
        let token = secret::new_token(SESSION_PREFIX)?;
        let token_hash = secret::hash(&token);
        let session = Session {
            id: id_of(&token_hash),
            hash: token_hash,
            grant: code.grant.clone(),
            user: code.user.clone(),
            created_ms: now_ms,
            expires_ms: now_ms.saturating_add(SESSION_TTL_MS),
        };
        let mut batch = Batch::default();
        batch.delete(format!("{CODE_KEY}{id}"));
        let key = format!("{SESSION_KEY}{}", session.id);
        batch.put(key.clone(), encode(&key, &session)?);
        let ended = oldest_past(&tables.sessions, MAX_SESSIONS, |s| s.expires_ms);
        for old in &ended {
            batch.delete(format!("{SESSION_KEY}{old}"));
        }
        self.store.write(batch, Durability::Synced)?;
        tables.codes.remove(&id);
        for old in ended {
            tables.sessions.remove(&old);
        }
        tables.sessions.insert(session.id.clone(), session.clone());
        Ok(Ok((Signed { session, token }, code.then)))
    }

    /// The session whose token is `presented`, if it is one of ours and not over at `now_ms`
    /// (compared by hash, in constant time).
    pub fn check(&self, presented: &str, now_ms: u64) -> Option<Signed> {
        if presented.len() > secret::MAX_TOKEN_CHARS {
            return None;
        }
        let hash = secret::hash(presented);
        let tables = self.tables();
        tables
            .sessions
            .get(&id_of(&hash))
            .filter(|s| secret::same_hash(&s.hash, &hash) && !is_over(s.expires_ms, now_ms))
            .map(|session| Signed {
                session: session.clone(),
                token: presented.to_owned(),
            })
    }

    /// Ends the session `id` (signing out): gone from disk when this returns. Blocks on the
    /// store's sync.
    pub fn end(&self, id: &str) -> Result<(), StoreError> {
        let mut tables = self.tables();
        let mut batch = Batch::default();
        batch.delete(format!("{SESSION_KEY}{id}"));
        self.store.write(batch, Durability::Synced)?;
        tables.sessions.remove(id);
        Ok(())
    }

    /// How many sessions are open (over or not).
    pub fn open_sessions(&self) -> usize {
        self.tables().sessions.len()
    }
}

/// The ids to drop from `table` before one more goes in: none while it has room, else those
/// that end first.
fn oldest_past<T>(
    table: &BTreeMap<String, T>,
    most: usize,
    ends: impl Fn(&T) -> u64,
) -> Vec<String> {
    if table.len() < most {
        return Vec::new();
    }
    let excess = table.len() + 1 - most;
    let mut by_end: Vec<(u64, &String)> = table.iter().map(|(id, t)| (ends(t), id)).collect();
    by_end.sort();
    by_end
        .into_iter()
        .take(excess)
        .map(|(_, id)| id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_auth::Grant;
    use crate::store::MemoryStore;

    fn alice() -> Grant {
        Grant::User("alice".into())
    }

    #[test]
    fn a_code_opens_one_session_and_is_kept_only_hashed() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let sessions = Sessions::open(store.clone(), 0).unwrap();
        let (code, kept) = sessions
            .issue(alice().into(), "/items/1/2".into(), 1_000)
            .unwrap();
        assert!(code.starts_with(CODE_PREFIX));
        assert_eq!(kept.expires_ms, 1_000 + CODE_TTL_MS);
        let on_disk = store.scan_prefix(CODE_KEY.as_bytes()).unwrap();
        assert_eq!(on_disk.len(), 1, "the code is on disk before it is shown");
        assert!(!String::from_utf8_lossy(&on_disk[0].1).contains(&code));

        let (signed, then) = sessions.redeem(&code, 2_000).unwrap().unwrap();
        assert_eq!(then, "/items/1/2");
        assert_eq!(signed.session.grant, alice());
        assert_eq!(signed.session.expires_ms, 2_000 + SESSION_TTL_MS);
        assert_eq!(
            sessions.redeem(&code, 2_001).unwrap().unwrap_err(),
            CodeRefused::Unknown,
            "a code is used once"
        );
        assert!(store.scan_prefix(CODE_KEY.as_bytes()).unwrap().is_empty());
        let kept = store.scan_prefix(SESSION_KEY.as_bytes()).unwrap();
        assert!(!String::from_utf8_lossy(&kept[0].1).contains(&signed.token));

        // The session is checked by its token, survives a restart, ends with its time.
        assert_eq!(sessions.check(&signed.token, 3_000), Some(signed.clone()));
        assert_eq!(sessions.check("mwf_session_nope", 3_000), None);
        let again = Sessions::open(store.clone(), 3_000).unwrap();
        assert_eq!(again.check(&signed.token, 3_000), Some(signed.clone()));
        let end = signed.session.expires_ms;
        assert_eq!(again.check(&signed.token, end), None);
        let later = Sessions::open(store.clone(), end).unwrap();
        assert_eq!(later.open_sessions(), 0);
        assert!(
            store
                .scan_prefix(SESSION_KEY.as_bytes())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn an_expired_code_opens_nothing_and_a_session_ends_on_sign_out() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let sessions = Sessions::open(store.clone(), 0).unwrap();
        let (code, _) = sessions.issue(alice().into(), "/".into(), 0).unwrap();
        let late = sessions.redeem(&code, CODE_TTL_MS).unwrap().unwrap_err();
        assert_eq!(late, CodeRefused::Expired);
        let (code, _) = sessions.issue(alice().into(), "/".into(), 0).unwrap();
        let (signed, _) = sessions.redeem(&code, 1).unwrap().unwrap();
        sessions.end(&signed.session.id).unwrap();
        assert_eq!(sessions.check(&signed.token, 2), None);
        let again = Sessions::open(store, 2).unwrap();
        assert_eq!(again.check(&signed.token, 2), None);
    }

    #[test]
    fn full_tables_drop_what_ends_first() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let sessions = Sessions::open(store.clone(), 0).unwrap();
        let (first, _) = sessions.issue(alice().into(), "/".into(), 0).unwrap();
        for n in 1..=MAX_CODES as u64 {
            sessions.issue(alice().into(), "/".into(), n).unwrap();
        }
        assert_eq!(sessions.tables().codes.len(), MAX_CODES);
        assert_eq!(
            sessions.redeem(&first, 10).unwrap().unwrap_err(),
            CodeRefused::Unknown,
            "the oldest code went to make room"
        );
        let stored = store.scan_prefix(CODE_KEY.as_bytes()).unwrap();
        assert_eq!(stored.len(), MAX_CODES);
    }

    #[test]
    fn the_csrf_token_is_the_sessions() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let sessions = Sessions::open(store, 0).unwrap();
        let (code, _) = sessions.issue(alice().into(), "/".into(), 0).unwrap();
        let (signed, _) = sessions.redeem(&code, 0).unwrap().unwrap();
        assert!(signed.csrf_ok(Some(&signed.csrf())));
        assert!(!signed.csrf_ok(None));
        let (code, _) = sessions.issue(alice().into(), "/".into(), 0).unwrap();
        let (other, _) = sessions.redeem(&code, 0).unwrap().unwrap();
        assert!(
            !signed.csrf_ok(Some(&other.csrf())),
            "each session has its own"
        );
    }

    #[test]
    fn a_session_stored_before_sessions_named_a_user_still_loads() {
        let stored = r#"{"id":"0123456789ab","hash":"00","grant":{"role":"operator"},"created_ms":1,"expires_ms":2}"#;
        let session: Session = serde_json::from_str(stored).unwrap();
        assert_eq!(session.user, None);
        let code = r#"{"id":"0123456789ab","hash":"00","grant":{"user":"alice"},"then":"/","expires_ms":2}"#;
        let code: LoginCode = serde_json::from_str(code).unwrap();
        assert_eq!(code.user, None);
    }
}
