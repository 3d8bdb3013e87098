//! What the users of this device were told, oldest first, at most
//! [`MAX_NOTICES_PER_USER`] each. Every notice gets a number of its own (across users), which
//! names it in the store: a new notice is one write, a dropped one a delete.

use mobiwf_proto::{NodeName, Notice};

use super::{Applied, Desk, MAX_NOTICES_PER_USER};
use crate::Directory;

/// One user's notices and their numbers, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UserNotices {
    pub(super) seqs: Vec<u64>,
    pub(super) list: Vec<Notice>,
}

impl Desk {
    /// A notice from the controller: kept when the user's device is this node.
    pub(super) fn notice(&mut self, dir: &Directory, me: &NodeName, notice: Notice) -> Applied {
        if super::here(dir, me, notice.user.as_str()).is_ok() {
            self.push_notice(notice);
        }
        Applied::default()
    }

    /// Appends a notice to its user's list, dropping the oldest beyond the limit.
    pub(super) fn push_notice(&mut self, notice: Notice) {
        let seq = self.next_notice.max(1);
        self.next_notice = seq + 1;
        self.dirty.meta = true;
        self.dirty.notice_written(seq, notice.user.clone());
        let mine = self.notices.entry(notice.user.clone()).or_default();
        mine.seqs.push(seq);
        mine.list.push(notice);
        if mine.list.len() > MAX_NOTICES_PER_USER {
            let extra = mine.list.len() - MAX_NOTICES_PER_USER;
            mine.list.drain(..extra);
            for dropped in mine.seqs.drain(..extra) {
                self.dirty.notice_gone(dropped);
            }
        }
    }

    /// A user's notices, oldest first.
    pub fn notices(&self, user: &str) -> &[Notice] {
        self.notices.get(user).map_or(&[], |n| n.list.as_slice())
    }

    /// The notice numbered `seq` of `user`, if it is still kept.
    pub(super) fn notice_by_seq(&self, user: &str, seq: u64) -> Option<&Notice> {
        let mine = self.notices.get(user)?;
        let at = mine.seqs.binary_search(&seq).ok()?;
        mine.list.get(at)
    }
}
