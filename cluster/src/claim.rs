//! What a member does about one shard, from what it sees of it in etcd: keep it, claim it,
//! wait, or drop it. The claim itself is a transaction that creates the owner key only if it
//! is absent, so two members deciding to claim at once cannot both win: this only decides
//! who tries first.

use crate::{Epoch, MemberId, ShardId, owner_of};

/// What a member sees of one shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimView<'a> {
    /// The shard.
    pub shard: ShardId,
    /// This member.
    pub me: &'a MemberId,
    /// The members whose lease is alive, this one included.
    pub live: &'a [MemberId],
    /// The shard's owner key; `None` when nobody holds it.
    pub owner: Option<SeenOwner<'a>>,
    /// The epoch this member holds the shard at, if it believes it owns it.
    pub held: Option<Epoch>,
    /// How many looks in a row found the shard without an owner.
    pub ownerless_looks: u32,
}

/// A shard's owner key as seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenOwner<'a> {
    /// The member it names.
    pub member: &'a MemberId,
    /// Its creation revision: the owner's epoch.
    pub epoch: Epoch,
    /// It is bound to this process's lease (not merely to a member of this name: a previous
    /// process of the same member, whose lease has yet to lapse, is another owner).
    pub ours: bool,
}

/// What to do about the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// This member owns it at this epoch: go on.
    Keep(Epoch),
    /// Nobody owns it and this member should: try the claim transaction.
    Claim,
    /// Another member owns it, or should claim it first: look again later.
    Wait,
    /// This member held it, but the owner key is gone or another epoch's: it was fenced,
    /// and must stop at once, sending nothing more for the shard.
    Drop,
}

/// How many looks without an owner a member that is not the preferred one waits before it
/// claims anyway (the preferred member may be live yet slow, or stopped).
pub const PATIENCE_LOOKS: u32 = 3;

/// The decision for `view`. The table (held, owner, preferred):
///
/// | held | owner key | → |
/// |---|---|---|
/// | E | ours at E | keep E |
/// | E | absent, not ours, or ours at another epoch | drop |
/// | none | ours at E (a claim whose answer was lost) | keep E |
/// | none | not ours | wait |
/// | none | absent, me preferred, or waited `PATIENCE_LOOKS` | claim |
/// | none | absent, another preferred | wait |
pub fn decide(view: &ClaimView<'_>) -> Decision {
    match (view.held, view.owner) {
        (Some(held), Some(owner)) if owner.ours && owner.epoch == held => Decision::Keep(held),
        (Some(_), _) => Decision::Drop,
        (None, Some(owner)) if owner.ours => Decision::Keep(owner.epoch),
        (None, Some(_)) => Decision::Wait,
        (None, None) => {
            let preferred = owner_of(view.shard, view.live);
            if preferred == Some(view.me) || view.ownerless_looks >= PATIENCE_LOOKS {
                Decision::Claim
            } else {
                Decision::Wait
            }
        }
    }
}
