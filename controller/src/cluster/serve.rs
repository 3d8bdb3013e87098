//! `serve --etcd`: the controller joins its cluster, waits until it owns the book's shard,
//! runs with its book in etcd, and stops at once when it finds it was fenced.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mobiwf_cluster::txn::TxnLimits;
use mobiwf_cluster::{Epoch, MemberId, ShardCount, ShardId};
use tokio::sync::watch;

use super::patience::{from_etcd, patiently};
use super::{EtcdLink, Fenced, Layout, MemberRecord, Membership, ShardStore};

/// The exit status of a controller that was fenced (a transaction found another epoch
/// owning its shard, or its lease was lost).
pub const FENCED_EXIT: u8 = 3;

/// `serve`'s cluster options.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// Keep the book in etcd, in a cluster of controllers (comma-separated client URLs,
    /// e.g. http://10.0.0.1:2379,http://10.0.0.2:2379): the controller waits until it owns
    /// the book, and another member takes it over when its lease lapses. Without it the book
    /// is in DIR's RocksDB, as always.
    #[arg(long, value_name = "URL[,URL]", value_delimiter = ',')]
    pub etcd: Vec<String>,
    /// How many shards the cluster spreads instances over, fixed when the cluster is
    /// created; only 1 for now.
    #[arg(long, value_name = "S", requires = "etcd",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: Option<u32>,
    /// The prefix of the cluster's keys in etcd.
    #[arg(long, value_name = "PREFIX", default_value = super::DEFAULT_PREFIX, requires = "etcd")]
    pub etcd_prefix: String,
    /// This controller's name in the cluster (default: the machine's host name and the API's
    /// address).
    #[arg(long, value_name = "NAME", requires = "etcd")]
    pub member: Option<String>,
    /// The time to live of this controller's etcd lease, in whole seconds: how long after it
    /// stops answering another member may take its shard over.
    #[arg(long, value_name = "SECS", default_value_t = 5, requires = "etcd",
          value_parser = clap::value_parser!(u64).range(2..=600))]
    pub etcd_lease: u64,
    /// The most operations etcd takes in one transaction: its `--max-txn-ops` (give the same
    /// when etcd runs with another). A larger group commit is cut in parts, all-or-nothing.
    #[arg(long, value_name = "N", default_value_t = mobiwf_cluster::txn::ETCD_MAX_TXN_OPS,
          requires = "etcd")]
    pub etcd_max_txn_ops: usize,
    /// The largest request etcd takes, in bytes: its `--max-request-bytes` (give the same
    /// when etcd runs with another). A larger group commit is cut in parts; a single entry
    /// larger than this is refused.
    #[arg(long, value_name = "BYTES",
          default_value_t = mobiwf_cluster::txn::ETCD_MAX_REQUEST_BYTES, requires = "etcd")]
    pub etcd_max_request_bytes: usize,
}

/// A controller in its cluster, owning the book's shard.
pub struct Joined {
    store: Arc<ShardStore>,
    fenced: watch::Receiver<Option<Fenced>>,
    lost: watch::Receiver<bool>,
    /// Its membership.
    pub membership: Membership,
}

impl Joined {
    /// Connects to the cluster `args` name (none without `--etcd`), joins it, and waits until
    /// this controller owns the book's shard. While etcd does not answer, it waits for it
    /// (saying so now and then, `patience`); a lease that lapses while it waits is taken
    /// again.
    pub async fn join(
        args: &ClusterArgs,
        data_dir: &Path,
        api: SocketAddr,
    ) -> anyhow::Result<Option<Joined>> {
        if args.etcd.is_empty() {
            return Ok(None);
        }
        std::fs::create_dir_all(data_dir)?;
        let layout = Layout::new(&args.etcd_prefix);
        let limits = TxnLimits::new(args.etcd_max_txn_ops, args.etcd_max_request_bytes)?;
        let endpoints = args.etcd.clone();
        let link = Arc::new(tokio::task::spawn_blocking(move || EtcdLink::new(&endpoints)).await??);
        let shards = match args.shards {
            Some(n) => Some(ShardCount::new(n).ok_or_else(|| anyhow::anyhow!("--shards 0"))?),
            None => None,
        };
        tracing::info!("reaching etcd at {}", link.endpoints().join(","));
        patiently(&link, "reading the cluster's settings", || {
            super::ensure_cluster(&link, &layout, shards)
        })
        .await?;
        let peer = patiently(&link, "reading the cluster's identity", || {
            super::ensure_identity(&link, &layout, data_dir)
        })
        .await?;
        let record = MemberRecord {
            member: MemberId(args.member.clone().unwrap_or_else(|| default_member(api))),
            api: api.to_string(),
        };
        let ttl = Duration::from_secs(args.etcd_lease);
        let shard = ShardId(0);
        let (membership, lost, epoch) = own(&link, &layout, shard, &record, ttl).await?;
        tracing::info!(member = %record.member, %peer, %epoch, "owns the book");
        let (fenced_tx, fenced) = watch::channel(None);
        let store = ShardStore::new(link.clone(), &layout, shard, epoch, fenced_tx)
            .with_limits(limits)
            .with_lease(lost.clone());
        Ok(Some(Joined {
            store: Arc::new(store),
            fenced,
            lost,
            membership,
        }))
    }

    /// The book's store in etcd.
    pub fn store(&self) -> Arc<ShardStore> {
        self.store.clone()
    }

    /// Returns once this controller no longer owns its shard: a transaction was refused, or
    /// its lease may have lapsed (then a transaction that writes nothing, given an eighth of
    /// the lease, says whether another epoch owns the shard; a controller that cannot even ask
    /// in that time stops all the same). Why.
    pub async fn fenced(mut self) -> String {
        let lost = tokio::select! {
            _ = self.fenced.wait_for(Option::is_some) => false,
            _ = self.lost.wait_for(|lost| *lost) => true,
        };
        if lost {
            // Briefly: the lease may lapse at etcd within its margin from now.
            let store = self.store.clone();
            let checked = tokio::task::spawn_blocking(move || store.check());
            let checked = tokio::time::timeout(self.membership.ttl / 8, checked);
            tokio::select! {
                // A write refused meanwhile says so at once: the daemon it stops must not
                // be found stopped first (an orderly stop, another exit status).
                _ = self.fenced.wait_for(Option::is_some) => {}
                checked = checked => if let Ok(Ok(Err(e))) = checked {
                    return e.to_string();
                },
            }
        }
        match self.store.fencing() {
            Some(fenced) => fenced.to_string(),
            None => "the cluster lease is lost and etcd could not say who owns the shard: \
                     this controller may have been fenced, it stops"
                .to_owned(),
        }
    }
}

/// Joins the cluster as `record` and waits until it owns `shard`: its membership, the watch
/// its lease's loss is told on, and its epoch. A lease that may have lapsed while it waited
/// (etcd did not answer for its time to live) is left and a new one taken, as is one etcd
/// refuses a claim under; the member waits on.
async fn own(
    link: &Arc<EtcdLink>,
    layout: &Layout,
    shard: ShardId,
    record: &MemberRecord,
    ttl: Duration,
) -> anyhow::Result<(Membership, watch::Receiver<bool>, Epoch)> {
    loop {
        let membership = patiently(link, "joining the cluster", || {
            Membership::join(link, layout, record, ttl)
        })
        .await?;
        let (lost_tx, mut lost) = watch::channel(false);
        membership.keep_alive(link, lost_tx);
        tracing::info!(member = %record.member, "joined the cluster; waiting to own the book");
        let claimed = tokio::select! {
            claimed = super::claim(link, layout, shard, &membership, ttl / 3) => Some(claimed),
            _ = lost.wait_for(|lost| *lost) => None,
        };
        match claimed {
            Some(Ok(epoch)) if !*lost.borrow() => return Ok((membership, lost, epoch)),
            Some(Err(e)) if !from_etcd(&e) => return Err(e),
            Some(Err(e)) => tracing::warn!("etcd refused a claim of the book: {e:#}"),
            Some(Ok(_)) | None => {}
        }
        tracing::warn!(
            member = %record.member,
            "the cluster lease may have lapsed while this controller waited; it joins again"
        );
        membership.leave(link).await;
    }
}

/// The machine's host name and the API's address.
fn default_member(api: SocketAddr) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    if host.is_empty() {
        api.to_string()
    } else {
        format!("{host}/{api}")
    }
}
