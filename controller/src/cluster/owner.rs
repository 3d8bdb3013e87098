//! A controller's place in the cluster: the cluster's settings and identity, its membership
//! (a key bound to its etcd lease, kept alive), and the claim of a shard (an owner key bound
//! to the same lease, created only where there is none).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use mobiwf_cluster::retry::{Complaints, lease_holds_until};
use mobiwf_cluster::{ClaimView, Decision, Epoch, MemberId, SeenOwner, ShardCount, ShardId};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::link::{Condition, Etcd, EtcdLink, KeyValue, Write};
use super::patience::Patience;
use super::store::prefix_end;
use super::{ClusterRecord, Layout};

/// A member as its `members/<name>` key says (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberRecord {
    /// Its name.
    pub member: MemberId,
    /// Where its operators' API is.
    pub api: String,
}

/// A shard's owner as its `shards/<n>/owner` key says (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerRecord {
    /// The member that claimed it.
    pub member: MemberId,
    /// The lease it is bound to (one per controller process).
    pub lease: i64,
}

/// The value of `key` if absent, else what is there: put only by a transaction that finds
/// the key missing, so every member reads what the first one put.
async fn put_if_absent(link: &EtcdLink, key: String, value: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    let (k, v) = (key.clone().into_bytes(), value.clone());
    let answer = link
        .call(move |etcd| async move {
            let when = vec![Condition::Created(k.clone(), 0)];
            etcd.txn(when, vec![Write::Put(k.clone(), v, None)], Some(k))
                .await
        })
        .await?;
    if answer.succeeded {
        return Ok(value);
    }
    answer
        .read
        .map(|kv| kv.value)
        .with_context(|| format!("etcd: {key} is neither absent nor there"))
}

/// The one key `key`, if it is there.
async fn get(link: &EtcdLink, key: String) -> anyhow::Result<Option<KeyValue>> {
    let key = key.into_bytes();
    let found = link
        .call(move |etcd| async move { etcd.range(key, None, 1).await })
        .await?;
    Ok(found.into_iter().next())
}

/// The cluster's settings: those it was created with, or, for a new cluster, `shards`. A
/// different `shards` for an existing cluster is refused (instances never change shard).
pub async fn ensure_cluster(
    link: &EtcdLink,
    layout: &Layout,
    shards: Option<ShardCount>,
) -> anyhow::Result<ClusterRecord> {
    let wanted = ClusterRecord {
        shards: shards.unwrap_or(ShardCount::ONE),
    };
    let stored = put_if_absent(link, layout.cluster(), serde_json::to_vec(&wanted)?).await?;
    let record: ClusterRecord = serde_json::from_slice(&stored)
        .with_context(|| format!("etcd: {} is not a cluster's settings", layout.cluster()))?;
    if let Some(asked) = shards
        && asked != record.shards
    {
        anyhow::bail!(
            "--shards {} for a cluster created with {} shards: the count is fixed when the \
             cluster is created (an instance's shard is its hash modulo the count)",
            asked.get(),
            record.shards.get()
        );
    }
    if record.shards != ShardCount::ONE {
        anyhow::bail!(
            "this cluster has {} shards; this controller runs clusters of one shard only",
            record.shards.get()
        );
    }
    Ok(record)
}

/// The cluster's settings; `None` when no cluster was created under the layout's prefix.
pub async fn cluster_record(
    link: &EtcdLink,
    layout: &Layout,
) -> anyhow::Result<Option<ClusterRecord>> {
    let Some(kv) = get(link, layout.cluster()).await? else {
        return Ok(None);
    };
    let record = serde_json::from_slice(&kv.value)
        .with_context(|| format!("etcd: {} is not a cluster's settings", layout.cluster()))?;
    Ok(Some(record))
}

/// Makes `data_dir`'s identity the cluster's: the first controller puts its own in etcd;
/// every other one takes that (replacing the one in its data directory), so that the nodes
/// reach whichever controller owns the book under one peer id.
pub async fn ensure_identity(
    link: &EtcdLink,
    layout: &Layout,
    data_dir: &Path,
) -> anyhow::Result<libp2p::PeerId> {
    let local = mobiwf_runtime::identity::load_or_create(data_dir)?;
    let bytes = local.to_protobuf_encoding()?;
    let cluster = put_if_absent(link, layout.identity(), bytes.clone()).await?;
    let keypair = libp2p::identity::Keypair::from_protobuf_encoding(&cluster)
        .with_context(|| format!("etcd: {} is not a libp2p key", layout.identity()))?;
    if cluster != bytes {
        let path = data_dir.join(mobiwf_runtime::identity::KEY_FILE);
        // A temporary file is created 0600, then renamed over the old key.
        let mut file = tempfile::NamedTempFile::new_in(data_dir)?;
        std::io::Write::write_all(&mut file, &cluster)?;
        file.as_file().sync_all()?;
        file.persist(&path)
            .with_context(|| format!("cannot replace {}", path.display()))?;
        tracing::info!(peer = %keypair.public().to_peer_id(), "took the cluster's identity");
    }
    Ok(keypair.public().to_peer_id())
}

/// This controller's membership: its lease and its `members/` key.
pub struct Membership {
    /// Its name.
    pub member: MemberId,
    /// Its etcd lease.
    pub lease: i64,
    /// The lease's time to live.
    pub ttl: Duration,
    /// When the grant of its lease was sent: the lease holds at least its time to live from
    /// then.
    granted_at: std::time::Instant,
}

impl Membership {
    /// Takes a lease of `ttl` and registers as `record.member` under it.
    pub async fn join(
        link: &EtcdLink,
        layout: &Layout,
        record: &MemberRecord,
        ttl: Duration,
    ) -> anyhow::Result<Membership> {
        let secs = i64::try_from(ttl.as_secs().max(1)).unwrap_or(i64::MAX);
        let granted_at = std::time::Instant::now();
        let (lease, granted) = link
            .call(move |etcd| async move { etcd.lease_grant(secs).await })
            .await?;
        let key = format!("{}{}", layout.members(), record.member).into_bytes();
        let value = serde_json::to_vec(record)?;
        link.call(move |etcd| async move { etcd.put(key, value, Some(lease)).await })
            .await?;
        Ok(Membership {
            member: record.member.clone(),
            lease,
            ttl: Duration::from_secs(granted.max(1).unsigned_abs()),
            granted_at,
        })
    }

    /// Ends its lease now, if etcd answers (a member that joins again leaves its old lease
    /// behind; it would lapse on its own).
    pub async fn leave(&self, link: &EtcdLink) {
        let lease = self.lease;
        if let Err(e) = link
            .call(move |etcd| async move { etcd.lease_revoke(lease).await })
            .await
        {
            tracing::debug!(lease, "could not end the old lease: {e}");
        }
    }

    /// Keeps the lease alive, a third of its time to live apart (another renewal soon while one
    /// is not answered), until etcd says it is gone or it may lapse before a renewal gets through:
    /// then `lost` is told (whatever it held
    /// may be claimed by another member from then on). The lease surely holds until its time
    /// to live after the last renewal that got through was sent, less a margin
    /// (`mobiwf_cluster::retry::lease_holds_until`): `lost` is told at that instant, not
    /// later, so an owner cut off from etcd stops acting before another member may claim.
    pub fn keep_alive(&self, link: &Arc<EtcdLink>, lost: watch::Sender<bool>) {
        let (lease, ttl, granted_at) = (self.lease, self.ttl, self.granted_at);
        link.spawn(move |etcd| async move {
            let why = renew(etcd, lease, ttl, granted_at).await;
            tracing::error!(lease, "the cluster lease is lost: {why}");
            lost.send_replace(true);
        });
    }
}

/// How long a renewal without an answer waits before another is sent beside it. A renewal
/// that reached a member just as etcd's leader died is not answered even once the others
/// elected a new one (some 1-2 s on loopback), while one sent after the election is at once:
/// waiting a third of the time to live for the first would let the lease be given up for
/// lost when etcd renews again well within it. The first is not given up either: on a slow
/// etcd it may be the one answered.
const RENEW_AGAIN: Duration = Duration::from_millis(200);

/// Renews `lease` a third of its time to live apart until it is lost or may lapse; why. Each
/// round sends renewals [`RENEW_AGAIN`] apart until one is answered; the lease holds from the
/// sending of the one answered.
async fn renew(etcd: Etcd, lease: i64, ttl: Duration, granted_at: std::time::Instant) -> String {
    let every = ttl / 3;
    let mut holds_until = lease_holds_until(granted_at, ttl);
    let mut complaints = Complaints::default();
    loop {
        let next = (std::time::Instant::now() + every).min(holds_until);
        tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
        // Dropped at the end of the round: renewals still unanswered then are abandoned.
        let mut asked = tokio::task::JoinSet::new();
        'round: loop {
            let sent = std::time::Instant::now();
            if sent >= holds_until {
                return format!(
                    "no renewal got through in time: etcd may end it any moment now (its time \
                     to live is {ttl:?})"
                );
            }
            let renewing = etcd.clone();
            asked.spawn(async move { (sent, renewing.lease_keep_alive(lease).await) });
            let again = tokio::time::Instant::from_std((sent + RENEW_AGAIN).min(holds_until));
            loop {
                let answer = match tokio::time::timeout_at(again, asked.join_next()).await {
                    // Time to send another.
                    Err(_) => continue 'round,
                    // Every renewal sent has failed: another once it is time.
                    Ok(None) => {
                        tokio::time::sleep_until(again).await;
                        continue 'round;
                    }
                    Ok(Some(Err(_))) => continue,
                    Ok(Some(Ok(answer))) => answer,
                };
                match answer {
                    (sent, Ok(left)) if left > 0 => {
                        holds_until =
                            lease_holds_until(sent, Duration::from_secs(left.unsigned_abs()));
                        complaints.succeeded();
                        break 'round;
                    }
                    (_, Ok(_)) => return "etcd says it expired".to_owned(),
                    (_, Err(e)) => {
                        if complaints.failed(std::time::Instant::now()) {
                            tracing::warn!(lease, "a renewal of the cluster lease failed: {e}");
                        }
                    }
                }
            }
        }
    }
}

/// The members whose lease is alive.
pub async fn live_members(link: &EtcdLink, layout: &Layout) -> anyhow::Result<Vec<MemberRecord>> {
    let prefix = layout.members().into_bytes();
    let end = prefix_end(&prefix);
    let found = link
        .call(move |etcd| async move { etcd.range(prefix, Some(end), 0).await })
        .await?;
    found
        .iter()
        .map(|kv| {
            serde_json::from_slice(&kv.value).with_context(|| {
                format!(
                    "etcd: {:?} is not a member",
                    String::from_utf8_lossy(&kv.key)
                )
            })
        })
        .collect()
}

/// A shard's owner key: who, at which epoch; `None` when nobody owns it.
pub async fn owner(
    link: &EtcdLink,
    layout: &Layout,
    shard: ShardId,
) -> anyhow::Result<Option<(OwnerRecord, Epoch)>> {
    let Some(kv) = get(link, layout.owner(shard)).await? else {
        return Ok(None);
    };
    let record = serde_json::from_slice(&kv.value)
        .with_context(|| format!("etcd: {} is not a shard's owner", layout.owner(shard)))?;
    Ok(Some((record, Epoch(kv.create_revision))))
}

/// Creates `shard`'s owner key for `me`, bound to its lease, if there is none; the epoch
/// when this claim won.
async fn try_claim(
    link: &EtcdLink,
    layout: &Layout,
    shard: ShardId,
    me: &Membership,
) -> anyhow::Result<Option<Epoch>> {
    let key = layout.owner(shard).into_bytes();
    let record = OwnerRecord {
        member: me.member.clone(),
        lease: me.lease,
    };
    let value = serde_json::to_vec(&record)?;
    let lease = me.lease;
    let answer = link
        .call(move |etcd| async move {
            let when = vec![Condition::Created(key.clone(), 0)];
            etcd.txn(when, vec![Write::Put(key, value, Some(lease))], None)
                .await
        })
        .await?;
    // The transaction's one put created the key: its revision is the key's creation.
    Ok(answer.succeeded.then_some(Epoch(answer.revision)))
}

/// Waits until this member owns `shard` (claiming it when `mobiwf_cluster::decide` says so),
/// looking every `look_every`; its epoch. While etcd does not answer it waits for it, saying
/// so now and then (`patience`); other errors end it.
pub async fn claim(
    link: &EtcdLink,
    layout: &Layout,
    shard: ShardId,
    me: &Membership,
    look_every: Duration,
) -> anyhow::Result<Epoch> {
    let mut ownerless_looks = 0;
    let mut patience = Patience::new("waiting to own the book");
    loop {
        let looked = async {
            let live = live_members(link, layout).await?;
            Ok::<_, anyhow::Error>((live, owner(link, layout, shard).await?))
        };
        let (live, seen) = match looked.await {
            Ok(looked) => {
                patience.answered(link);
                looked
            }
            Err(e) => {
                patience.failed(link, e).await?;
                continue;
            }
        };
        let live: Vec<MemberId> = live.into_iter().map(|m| m.member).collect();
        let view = ClaimView {
            shard,
            me: &me.member,
            live: &live,
            owner: seen.as_ref().map(|(record, epoch)| SeenOwner {
                member: &record.member,
                epoch: *epoch,
                ours: record.lease == me.lease,
            }),
            held: None,
            ownerless_looks,
        };
        match mobiwf_cluster::decide(&view) {
            Decision::Keep(epoch) => return Ok(epoch),
            Decision::Claim => {
                let claimed = match try_claim(link, layout, shard, me).await {
                    Ok(claimed) => claimed,
                    Err(e) => {
                        patience.failed(link, e).await?;
                        continue;
                    }
                };
                if let Some(epoch) = claimed {
                    tracing::info!(%shard, %epoch, member = %me.member, "claimed the shard");
                    return Ok(epoch);
                }
            }
            Decision::Wait | Decision::Drop => {}
        }
        ownerless_looks = if seen.is_none() {
            ownerless_looks + 1
        } else {
            0
        };
        tokio::time::sleep(look_every).await;
    }
}
