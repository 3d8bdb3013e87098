//! The enrolment commands as the API and `serve` use them: join tokens (made here, kept by
//! the controller as hashes), the allow list, removing a node, and the join token file
//! `serve` keeps in its data directory.

use std::path::Path;

use mobiwf_proto::{NodeId, NodeName};
use mobiwf_runtime::secret;

use super::enrol::{EnrolAction, EnrolAnswer};
use super::{Command, ControllerClient, Event};
use crate::enrolment::JOIN_TOKEN_PREFIX;

/// The file in the controller's data directory that holds a join token (0600).
pub const JOIN_TOKEN_FILE: &str = "join.token";

impl ControllerClient {
    /// Applies an enrolment command; answered once it is on disk.
    pub(crate) async fn enrol(
        &self,
        action: EnrolAction,
    ) -> anyhow::Result<Result<EnrolAnswer, String>> {
        self.ask(|reply| Event::Command(Command::Enrol { action, reply }))
            .await
    }

    /// A new join token: its text (shown once, never stored) and what the controller keeps.
    pub async fn create_join_token(
        &self,
        label: String,
    ) -> anyhow::Result<Result<(String, EnrolAnswer), String>> {
        let token = secret::new_token(JOIN_TOKEN_PREFIX)?;
        let hash = secret::hash(&token);
        Ok(self
            .enrol(EnrolAction::CreateToken { hash, label })
            .await?
            .map(|answer| (token, answer)))
    }

    /// Revokes a join token by id.
    pub async fn revoke_join_token(
        &self,
        id: String,
    ) -> anyhow::Result<Result<EnrolAnswer, String>> {
        self.enrol(EnrolAction::RevokeToken { id }).await
    }

    /// Puts a peer id on the allow list.
    pub async fn allow_peer(&self, peer: NodeId) -> anyhow::Result<Result<EnrolAnswer, String>> {
        self.enrol(EnrolAction::Allow { peer }).await
    }

    /// Removes a registered node (its partitions are given up, its name is free).
    pub async fn remove_node(&self, name: NodeName) -> anyhow::Result<Result<EnrolAnswer, String>> {
        self.enrol(EnrolAction::RemoveNode { name }).await
    }

    /// The join tokens (without hashes) and the allow list.
    pub async fn enrolment(&self) -> anyhow::Result<Result<EnrolAnswer, String>> {
        self.enrol(EnrolAction::List).await
    }

    /// Makes sure `path` holds a live join token: a new one when the file is missing or its
    /// token was revoked (or the store is new). Returns the token.
    pub async fn ensure_join_token_file(&self, path: &Path) -> anyhow::Result<String> {
        if path.exists() {
            let token = secret::read_token_file(path)?;
            let id: String = secret::hash(&token).chars().take(12).collect();
            if let Ok(EnrolAnswer::Listing { tokens, .. }) = self.enrolment().await?
                && tokens.iter().any(|t| t.id == id)
            {
                return Ok(token);
            }
            tracing::warn!(file = %path.display(), "the join token file held a token this controller does not know: replaced");
        }
        let (token, _) = self
            .create_join_token("written to the data directory by serve".to_owned())
            .await?
            .map_err(|e| anyhow::anyhow!("cannot make a join token: {e}"))?;
        secret::write_private(path, &token)?;
        tracing::info!(file = %path.display(), "join token written (give it to nodes with --join-token-file)");
        Ok(token)
    }
}
