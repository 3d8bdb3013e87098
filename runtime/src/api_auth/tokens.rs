//! The API tokens a daemon knows: in memory for the check of every request, in the store as
//! `auth/token/<id>` (JSON [`ApiToken`]: the hash, never the token). A new token is on disk
//! (synced) before it is shown; a revoked one is gone from disk before the revocation is
//! answered.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use super::{
    API_TOKEN_PREFIX, ApiToken, Grant, MAX_API_LABEL_CHARS, MAX_API_TOKENS, MAX_USER_CHARS, Role,
};
use crate::secret;
use crate::store::{Batch, Durability, Store, StoreError, encode, unreadable};

const TOKEN_KEY_PREFIX: &str = "auth/token/";

/// How a daemon checks its API.
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// Check every request's token; false only by the operator's explicit choice
    /// (`--insecure-no-auth`).
    pub enforce: bool,
    /// Whether tokens for one user (`/users/{user}/...` only) may be made: on nodes. Where
    /// not (the controller), a role token may name the organisation user it speaks for
    /// instead ([`super::ApiToken::user`]).
    pub users: bool,
    /// The daemon's command, for messages (`mobiwf-controller`, `mobiwf-node`).
    pub command: &'static str,
    /// The file that holds the administrator's token (the daemon writes it at start; 401
    /// answers name it).
    pub token_file: PathBuf,
    /// What a request needs, by its method and path: the daemon's table (its
    /// `api_access::need`).
    pub need: fn(&axum::http::Method, &str) -> super::Need,
}

/// Why a token was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotMade {
    /// The request is wrong: a label too long, a user id that is not one, a user's token
    /// asked of the controller.
    Invalid(String),
    /// [`MAX_API_TOKENS`] tokens exist already.
    Full(String),
}

impl std::fmt::Display for NotMade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotMade::Invalid(why) | NotMade::Full(why) => f.write_str(why),
        }
    }
}

/// The tokens of one daemon.
pub struct ApiTokens {
    store: Arc<dyn Store>,
    settings: AuthSettings,
    table: RwLock<BTreeMap<String, ApiToken>>,
    /// Serializes creations and revocations (the table's lock is not held across a write).
    writer: Mutex<()>,
}

impl ApiTokens {
    /// The tokens the store holds, checked as `settings` say.
    pub fn open(store: Arc<dyn Store>, settings: AuthSettings) -> Result<ApiTokens, StoreError> {
        let mut table = BTreeMap::new();
        for (k, v) in store.scan_prefix(TOKEN_KEY_PREFIX.as_bytes())? {
            let token: ApiToken = serde_json::from_slice(&v).map_err(|e| unreadable(&k, &e))?;
            table.insert(token.id.clone(), token);
        }
        Ok(ApiTokens {
            store,
            settings,
            table: RwLock::new(table),
            writer: Mutex::new(()),
        })
    }

    /// How the API is checked.
    pub fn settings(&self) -> &AuthSettings {
        &self.settings
    }

    /// The token `presented` stands for, if it is one of ours (compared by hash, in constant
    /// time).
    pub fn check(&self, presented: &str) -> Option<ApiToken> {
        if presented.len() > secret::MAX_TOKEN_CHARS {
            return None;
        }
        let hash = secret::hash(presented);
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        table
            .get(&id_of(&hash))
            .filter(|t| secret::same_hash(&t.hash, &hash))
            .cloned()
    }

    /// Every token, by id.
    pub fn list(&self) -> Vec<ApiToken> {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        table.values().cloned().collect()
    }

    /// A new token for `grant`: its text (shown once) and what is kept; on disk when this
    /// returns. The inner error says what is wrong with the request.
    pub fn create(
        &self,
        grant: Grant,
        label: String,
        now_ms: u64,
    ) -> anyhow::Result<Result<(String, ApiToken), NotMade>> {
        self.create_for(grant, None, label, now_ms)
    }

    /// [`ApiTokens::create`], the token speaking for organisation user `user` when one is
    /// named (a role token on the controller).
    pub fn create_for(
        &self,
        grant: Grant,
        user: Option<String>,
        label: String,
        now_ms: u64,
    ) -> anyhow::Result<Result<(String, ApiToken), NotMade>> {
        if let Err(e) = self.check_request(&grant, user.as_deref(), &label) {
            return Ok(Err(NotMade::Invalid(e)));
        }
        let _writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.list().len() >= MAX_API_TOKENS {
            return Ok(Err(NotMade::Full(format!(
                "there are {MAX_API_TOKENS} API tokens already (MAX_API_TOKENS): revoke some \
                 with `{} api-tokens revoke ID`",
                self.settings.command
            ))));
        }
        let text = secret::new_token(API_TOKEN_PREFIX)?;
        let hash = secret::hash(&text);
        let token = ApiToken {
            id: id_of(&hash),
            hash,
            grant,
            label,
            created_ms: now_ms,
            user,
        };
        let key = format!("{TOKEN_KEY_PREFIX}{}", token.id);
        let mut batch = Batch::default();
        batch.put(key.clone(), encode(&key, &token)?);
        self.store.write(batch, Durability::Synced)?;
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        table.insert(token.id.clone(), token.clone());
        Ok(Ok((text, token)))
    }

    /// Revokes the token with id `id`: refused from the next request on.
    pub fn revoke(&self, id: &str) -> anyhow::Result<Result<ApiToken, String>> {
        let _writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let Some(token) = self.list().into_iter().find(|t| t.id == id) else {
            return Ok(Err(format!(
                "no API token has the id {id} (`{} api-tokens list` shows them)",
                self.settings.command
            )));
        };
        let mut batch = Batch::default();
        batch.delete(format!("{TOKEN_KEY_PREFIX}{id}"));
        self.store.write(batch, Durability::Synced)?;
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        table.remove(id);
        Ok(Ok(token))
    }

    /// Makes sure the settings' token file holds an administrator's token this daemon knows:
    /// a new one (0600) when the file is missing, unreadable as a token, or its token was
    /// revoked or is not an administrator's (or the store is new).
    pub fn ensure_file(&self, now_ms: u64) -> anyhow::Result<()> {
        let path = &self.settings.token_file;
        if path.exists() {
            let known = secret::read_token_file(path)
                .ok()
                .and_then(|t| self.check(&t))
                .is_some_and(|t| t.grant == Grant::Role(Role::Administrator));
            if known {
                return Ok(());
            }
            tracing::warn!(file = %path.display(), "the API token file held no administrator's token this daemon knows: replaced");
        }
        let label = format!("written to {} at start", path.display());
        let (text, token) = self
            .create(Grant::Role(Role::Administrator), label, now_ms)?
            .map_err(|e| anyhow::anyhow!("cannot make the administrator's API token: {e}"))?;
        secret::write_private(path, &text)?;
        tracing::info!(file = %path.display(), id = %token.id, "administrator's API token written");
        Ok(())
    }

    fn check_request(
        &self,
        grant: &Grant,
        speaks_for: Option<&str>,
        label: &str,
    ) -> Result<(), String> {
        if label.chars().count() > MAX_API_LABEL_CHARS {
            return Err(format!(
                "a token's label is at most {MAX_API_LABEL_CHARS} characters (MAX_API_LABEL_CHARS)"
            ));
        }
        let user = match (grant, speaks_for) {
            (Grant::Role(_), None) => return Ok(()),
            (Grant::Role(_), Some(_)) if self.settings.users => {
                return Err(format!(
                    "a {} token speaks for a role or for one user, not both: give --role, or \
                     --user alone for the user's own token",
                    self.settings.command
                ));
            }
            (Grant::User(_), Some(_)) => {
                return Err("a user's own token names its user once".to_owned());
            }
            (Grant::Role(_), Some(user)) => user,
            (Grant::User(_), None) if !self.settings.users => {
                return Err(format!(
                    "{} makes no user tokens (a user's token is made on their device: \
                     `mobiwf-node api-tokens create --user U`); give a role, with --user U for \
                     the organisation user it speaks for",
                    self.settings.command
                ));
            }
            (Grant::User(user), None) => user.as_str(),
        };
        user_id_problem(user).map_or(Ok(()), Err)
    }
}

/// What is wrong with `user` as a user id, if anything.
pub fn user_id_problem(user: &str) -> Option<String> {
    let fine = !user.is_empty()
        && user.chars().count() <= MAX_USER_CHARS
        && !user.contains(|c: char| c.is_whitespace() || c == '/');
    (!fine).then(|| {
        format!(
            "{user:?} is not a user id (one word of at most {MAX_USER_CHARS} characters, \
             without `/`, as in the organisation document)"
        )
    })
}

fn id_of(hash: &str) -> String {
    hash.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn settings(dir: &std::path::Path, users: bool) -> AuthSettings {
        AuthSettings {
            enforce: true,
            users,
            command: "mobiwf-node",
            token_file: dir.join("api.token"),
            need: |_, _| super::super::Need::Role(Role::Viewer),
        }
    }

    #[test]
    fn tokens_are_kept_hashed_and_come_back_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let tokens = ApiTokens::open(store.clone(), settings(dir.path(), true)).unwrap();
        let (text, made) = tokens
            .create(Grant::User("alice".into()), "phone".into(), 7)
            .unwrap()
            .unwrap();
        assert!(text.starts_with(API_TOKEN_PREFIX));
        assert_eq!(tokens.check(&text), Some(made.clone()));
        assert_eq!(tokens.check("mwf_api_nope"), None);
        let stored = store.scan_prefix(TOKEN_KEY_PREFIX.as_bytes()).unwrap();
        assert!(!String::from_utf8_lossy(&stored[0].1).contains(&text));
        let again = ApiTokens::open(store.clone(), settings(dir.path(), true)).unwrap();
        assert_eq!(again.check(&text), Some(made.clone()));
        again.revoke(&made.id).unwrap().unwrap();
        assert_eq!(again.check(&text), None);
        assert!(again.revoke(&made.id).unwrap().is_err());
        let after = ApiTokens::open(store, settings(dir.path(), true)).unwrap();
        assert!(after.list().is_empty());
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let controller = ApiTokens::open(store.clone(), settings(dir.path(), false)).unwrap();
        let user = controller.create(Grant::User("alice".into()), String::new(), 0);
        let refused = user.unwrap().unwrap_err();
        assert!(matches!(&refused, NotMade::Invalid(why) if why.contains("no user tokens")));
        let node = ApiTokens::open(store, settings(dir.path(), true)).unwrap();
        for bad in ["", "a b", "a/b", &"x".repeat(MAX_USER_CHARS + 1)] {
            let refused = node.create(Grant::User(bad.into()), String::new(), 0);
            let refused = refused.unwrap().unwrap_err().to_string();
            assert!(refused.contains("not a user id"), "{refused}");
        }
        let both = node.create_for(
            Grant::Role(Role::Operator),
            Some("bob".into()),
            String::new(),
            0,
        );
        let both = both.unwrap().unwrap_err().to_string();
        assert!(both.contains("not both"), "{both}");
        let (_, made) = controller
            .create_for(
                Grant::Role(Role::Operator),
                Some("bob".into()),
                String::new(),
                0,
            )
            .unwrap()
            .unwrap();
        assert_eq!(made.user.as_deref(), Some("bob"));
        let bad = controller.create_for(
            Grant::Role(Role::Operator),
            Some("a b".into()),
            String::new(),
            0,
        );
        assert!(
            bad.unwrap()
                .unwrap_err()
                .to_string()
                .contains("not a user id")
        );
        let long = "x".repeat(MAX_API_LABEL_CHARS + 1);
        let refused = node.create(Grant::Role(Role::Viewer), long, 0);
        let refused = refused.unwrap().unwrap_err().to_string();
        assert!(refused.contains("MAX_API_LABEL_CHARS"), "{refused}");
        for _ in 0..MAX_API_TOKENS {
            let made = node.create(Grant::Role(Role::Viewer), String::new(), 0);
            made.unwrap().unwrap();
        }
        let past = node.create(Grant::Role(Role::Viewer), String::new(), 0);
        assert!(matches!(past.unwrap(), Err(NotMade::Full(_))));
    }

    #[test]
    fn the_token_file_is_kept_while_its_token_lives() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let tokens = ApiTokens::open(store, settings(dir.path(), true)).unwrap();
        let file = dir.path().join("api.token");
        tokens.ensure_file(1).unwrap();
        let first = secret::read_token_file(&file).unwrap();
        let held = tokens.check(&first).unwrap();
        assert_eq!(held.grant, Grant::Role(Role::Administrator));
        tokens.ensure_file(2).unwrap();
        assert_eq!(secret::read_token_file(&file).unwrap(), first);
        tokens.revoke(&held.id).unwrap().unwrap();
        tokens.ensure_file(3).unwrap();
        let second = secret::read_token_file(&file).unwrap();
        assert_ne!(second, first);
        assert!(tokens.check(&second).is_some());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
