//! A page of the instance list (`GET /instances`, `mobiwf-controller list`), read from the
//! store's summaries (`sum/<id>`, see `state`), never from the book: the list costs a page,
//! not every instance ever run.
//!
//! Instances come by id; a filter on a state that is not final reads the `live/` index (the
//! few instances under way) instead of every summary. At most [`MAX_LIST_SCAN`] summaries are
//! looked at for one page: a page may hold fewer than asked for, and `next` says where the
//! next one starts (`None`: there is nothing after it).

use mobiwf_book::{InstanceState, InstanceSummary};
use mobiwf_proto::InstanceId;
use mobiwf_runtime::store::{Store, StoreError, unreadable};
use serde::{Deserialize, Serialize};

use crate::state;

/// Instances on a page unless `limit` says otherwise.
pub const DEFAULT_PAGE: usize = 100;
/// The most instances on one page.
pub const MAX_PAGE: usize = 1000;
/// The most summaries looked at for one page (a rare filter answers in several pages).
pub const MAX_LIST_SCAN: usize = 20_000;
/// Summaries read from the store at once.
const SCAN_CHUNK: usize = 512;

/// Which instances a page shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only those in this state.
    pub state: Option<InstanceState>,
    /// Only those of this workflow (its id, as the definition writes it).
    pub workflow: Option<String>,
    /// Only those submitted at or after this time, ms since the epoch.
    pub since_ms: Option<u64>,
    /// Only those started from the deployed definition of this name (any version).
    pub definition: Option<String>,
}

impl Filter {
    fn matches(&self, s: &InstanceSummary) -> bool {
        self.state.is_none_or(|state| s.state == state)
            && self
                .workflow
                .as_ref()
                .is_none_or(|w| s.workflow.to_string() == *w)
            && self.since_ms.is_none_or(|since| s.submitted_ms >= since)
            && self.definition.as_ref().is_none_or(|name| {
                s.definition
                    .as_ref()
                    .is_some_and(|d| d.name.as_str() == name)
            })
    }
}

/// One page of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// The instances, by id.
    pub instances: Vec<InstanceSummary>,
    /// Where the next page starts (`after=` it); `None` when nothing comes after.
    pub next: Option<InstanceId>,
}

/// The state named `word` (as `GET /instances` shows states), or what the words are.
pub fn parse_state(word: &str) -> Result<InstanceState, String> {
    InstanceState::ALL
        .into_iter()
        .find(|s| s.as_str() == word)
        .ok_or_else(|| {
            let all: Vec<&str> = InstanceState::ALL.iter().map(|s| s.as_str()).collect();
            format!(
                "unknown instance state {word:?}: use one of {}",
                all.join(", ")
            )
        })
}

/// The instances after `after` that `filter` lets through, at most `limit` (at most
/// [`MAX_PAGE`]).
pub fn page(
    store: &dyn Store,
    filter: &Filter,
    after: Option<InstanceId>,
    limit: usize,
) -> Result<Page, StoreError> {
    let limit = limit.clamp(1, MAX_PAGE);
    let via_live = filter.state.is_some_and(|s| !s.is_final());
    let prefix: &[u8] = if via_live { b"live/" } else { b"sum/" };
    let key_of = |id: u64| {
        let mut key = prefix.to_vec();
        key.extend_from_slice(format!("{id:020}").as_bytes());
        key
    };
    let mut from = key_of(after.map_or(0, |a| a.0.saturating_add(1)));
    let (mut instances, mut scanned) = (Vec::new(), 0);
    loop {
        let chunk = store.scan_from(prefix, &from, SCAN_CHUNK)?;
        let Some((last, _)) = chunk.last() else {
            return Ok(Page {
                instances,
                next: None,
            });
        };
        from = last.clone();
        from.push(0);
        for (k, v) in &chunk {
            let id = state::number_after(k, prefix).ok_or_else(|| unreadable(k, &"bad key"))?;
            scanned += 1;
            let summary = if via_live {
                summary_of(store, InstanceId(id))?
            } else {
                Some(serde_json::from_slice(v).map_err(|e| unreadable(k, &e))?)
            };
            if let Some(s) = summary.filter(|s| filter.matches(s)) {
                instances.push(s);
            }
            if instances.len() >= limit || scanned >= MAX_LIST_SCAN {
                return Ok(Page {
                    instances,
                    next: Some(InstanceId(id)),
                });
            }
        }
    }
}

/// One instance's stored summary.
pub fn summary_of(
    store: &dyn Store,
    id: InstanceId,
) -> Result<Option<InstanceSummary>, StoreError> {
    let key = state::summary_key(id);
    store
        .get(key.as_bytes())?
        .map(|v| serde_json::from_slice(&v).map_err(|e| unreadable(key.as_bytes(), &e)))
        .transpose()
}
