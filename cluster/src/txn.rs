//! What one etcd transaction may carry, and how the owner's writes are cut to fit: etcd
//! refuses a transaction with more than `--max-txn-ops` operations or a request larger than
//! `--max-request-bytes`, and a refused group commit would stop the controller, which on
//! restart would try the same commit again. The shell (`mobiwf-controller`'s `cluster`
//! module) sends each part as one fenced transaction, and keeps a commit of several parts
//! all-or-nothing with a journal whose entries are encoded here (why that holds is its
//! module doc).

use std::ops::Range;

/// etcd's default `--max-txn-ops`: the most operations one transaction may hold.
pub const ETCD_MAX_TXN_OPS: usize = 128;

/// etcd's default `--max-request-bytes` (1.5 MiB): the largest request it takes.
pub const ETCD_MAX_REQUEST_BYTES: usize = 1_572_864;

/// Bytes of each request kept for what surrounds its writes: the fencing guard, the read
/// when it fails, etcd's request header (all far smaller).
pub const REQUEST_ROOM: usize = 4096;

/// Bytes one write adds to a request beyond its key and value (the protocol's tags and
/// lengths, the lease: about twenty).
pub const WRITE_OVERHEAD: usize = 32;

/// The limits of the etcd the controller writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnLimits {
    max_ops: usize,
    max_bytes: usize,
}

impl Default for TxnLimits {
    fn default() -> TxnLimits {
        TxnLimits::ETCD_DEFAULTS
    }
}

/// Limits no transaction can be cut to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "etcd limits of {max_ops} operations and {max_bytes} bytes per transaction are too small: \
     at least 1 operation and {} bytes",
    REQUEST_ROOM + 1
)]
pub struct BadLimits {
    /// The operations given.
    pub max_ops: usize,
    /// The bytes given.
    pub max_bytes: usize,
}

impl TxnLimits {
    /// etcd's defaults.
    pub const ETCD_DEFAULTS: TxnLimits = TxnLimits {
        max_ops: ETCD_MAX_TXN_OPS,
        max_bytes: ETCD_MAX_REQUEST_BYTES,
    };

    /// The limits of an etcd started with `--max-txn-ops max_ops --max-request-bytes
    /// max_bytes`.
    pub fn new(max_ops: usize, max_bytes: usize) -> Result<TxnLimits, BadLimits> {
        if max_ops == 0 || max_bytes <= REQUEST_ROOM {
            return Err(BadLimits { max_ops, max_bytes });
        }
        Ok(TxnLimits { max_ops, max_bytes })
    }

    /// The most writes in one transaction.
    pub fn max_ops(self) -> usize {
        self.max_ops
    }

    /// The largest request etcd takes.
    pub fn max_bytes(self) -> usize {
        self.max_bytes
    }

    /// The bytes of writes one transaction may carry.
    pub fn budget(self) -> usize {
        self.max_bytes - REQUEST_ROOM
    }
}

/// The bytes a write of a `key` bytes long key and a `value` bytes long value (0 for a
/// delete) adds to a request, at most.
pub fn write_size(key: usize, value: usize) -> usize {
    key.saturating_add(value).saturating_add(WRITE_OVERHEAD)
}

/// A write no transaction can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a write of {size} bytes is over the {} bytes one etcd transaction may carry (etcd's \
     --max-request-bytes {}, less {REQUEST_ROOM} kept for the transaction around it): start \
     etcd with a larger --max-request-bytes and give the controller the same with \
     --etcd-max-request-bytes",
    limits.budget(),
    limits.max_bytes()
)]
pub struct TooBig {
    /// Which write, by its place in the list.
    pub index: usize,
    /// Its size ([`write_size`]).
    pub size: usize,
    /// The limits it is over.
    pub limits: TxnLimits,
}

/// Cuts writes of `sizes` ([`write_size`]), in order, into consecutive parts each within
/// `limits`, as few as this greedy cut gives (each part as full as it can be): one part (maybe
/// empty) when all fit in one transaction. An error, before anything is sent, when one write
/// alone is over the bytes a transaction may carry.
pub fn split(sizes: &[usize], limits: TxnLimits) -> Result<Vec<Range<usize>>, TooBig> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (index, &size) in sizes.iter().enumerate() {
        if size > limits.budget() {
            return Err(TooBig {
                index,
                size,
                limits,
            });
        }
        if index - start == limits.max_ops || bytes + size > limits.budget() {
            parts.push(start..index);
            (start, bytes) = (index, 0);
        }
        bytes += size;
    }
    parts.push(start..sizes.len());
    Ok(parts)
}

/// The name of the journal's entry `index` (below the journal's prefix): in the order of the
/// commit's writes.
pub fn entry_name(index: usize) -> String {
    format!("w/{index:010}")
}

/// The name of the journal's seal (below its prefix): present once every entry is, its value
/// the number of entries ([`seal_value`]).
pub const SEAL_NAME: &str = "sealed";

/// The seal's value for a journal of `entries` entries.
pub fn seal_value(entries: usize) -> Vec<u8> {
    entries.to_string().into_bytes()
}

/// The number of entries a seal's value says; `None` when it is not a seal's.
pub fn parse_seal(value: &[u8]) -> Option<usize> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// A put's tag in a journal entry.
const PUT: u8 = b'P';
/// A delete's tag in a journal entry.
const DELETE: u8 = b'D';

/// Bytes a journal entry adds to its write's key and value.
pub const ENTRY_OVERHEAD: usize = 5;

/// One write as a journal entry: its tag (put or delete), its key's length (four bytes, big
/// endian), its key, and for a put its value.
pub fn encode_entry(key: &[u8], value: Option<&[u8]>) -> Vec<u8> {
    let mut entry = Vec::with_capacity(ENTRY_OVERHEAD + key.len() + value.map_or(0, <[u8]>::len));
    entry.push(if value.is_some() { PUT } else { DELETE });
    // A key over 4 GiB is far over anything etcd takes: `split` refuses it first.
    entry.extend_from_slice(&u32::try_from(key.len()).unwrap_or(u32::MAX).to_be_bytes());
    entry.extend_from_slice(key);
    if let Some(value) = value {
        entry.extend_from_slice(value);
    }
    entry
}

/// A write a journal entry holds: its key, and its value for a put (`None`: a delete).
pub type Entry = (Vec<u8>, Option<Vec<u8>>);

/// The write in a journal entry ([`encode_entry`]); `None` when it is not one.
pub fn decode_entry(entry: &[u8]) -> Option<Entry> {
    let (&tag, rest) = entry.split_first()?;
    let (length, rest) = rest.split_first_chunk::<4>()?;
    let length = usize::try_from(u32::from_be_bytes(*length)).ok()?;
    let (key, value) = (rest.get(..length)?, rest.get(length..)?);
    match tag {
        PUT => Some((key.to_vec(), Some(value.to_vec()))),
        DELETE if value.is_empty() => Some((key.to_vec(), None)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn what_fits_in_one_transaction_is_one_part() {
        let limits = TxnLimits::ETCD_DEFAULTS;
        assert_eq!(split(&[], limits).unwrap(), vec![0..0]);
        assert_eq!(split(&[100; 128], limits).unwrap(), vec![0..128]);
    }

    #[test]
    fn more_operations_than_etcd_takes_are_cut_at_its_limit() {
        let limits = TxnLimits::ETCD_DEFAULTS;
        assert_eq!(
            split(&[100; 300], limits).unwrap(),
            vec![0..128, 128..256, 256..300]
        );
        assert_eq!(split(&[100; 129], limits).unwrap(), vec![0..128, 128..129]);
    }

    #[test]
    fn more_bytes_than_etcd_takes_are_cut_below_its_limit() {
        let limits = TxnLimits::new(128, 10_000).unwrap();
        assert_eq!(limits.budget(), 10_000 - REQUEST_ROOM);
        // 5904 bytes of room: two writes of 2500, then two, then one.
        assert_eq!(split(&[2500; 5], limits).unwrap(), vec![0..2, 2..4, 4..5]);
        // A write exactly as large as the room fits alone.
        assert_eq!(
            split(&[1, 5904, 1], limits).unwrap(),
            vec![0..1, 1..2, 2..3]
        );
    }

    #[test]
    fn a_write_no_transaction_can_carry_is_refused_naming_the_limit() {
        let limits = TxnLimits::ETCD_DEFAULTS;
        let huge = write_size(20, 2 * 1024 * 1024);
        let refused = split(&[10, huge, 10], limits).unwrap_err();
        assert_eq!(
            refused,
            TooBig {
                index: 1,
                size: huge,
                limits
            }
        );
        let said = refused.to_string();
        assert!(said.contains("--max-request-bytes 1572864"), "{said}");
        assert!(said.contains("--etcd-max-request-bytes"), "{said}");
    }

    #[test]
    fn limits_no_transaction_fits_are_refused() {
        assert!(TxnLimits::new(0, ETCD_MAX_REQUEST_BYTES).is_err());
        assert!(TxnLimits::new(128, REQUEST_ROOM).is_err());
        assert_eq!(
            TxnLimits::new(ETCD_MAX_TXN_OPS, ETCD_MAX_REQUEST_BYTES),
            Ok(TxnLimits::default())
        );
    }

    #[test]
    fn journal_entries_and_seals_read_back() {
        let put = encode_entry(b"seen/a/1", Some(b"value"));
        assert_eq!(
            decode_entry(&put),
            Some((b"seen/a/1".to_vec(), Some(b"value".to_vec())))
        );
        assert_eq!(put.len(), ENTRY_OVERHEAD + 8 + 5);
        let delete = encode_entry(b"out/7", None);
        assert_eq!(decode_entry(&delete), Some((b"out/7".to_vec(), None)));
        let empty = encode_entry(b"k", Some(b""));
        assert_eq!(
            decode_entry(&empty),
            Some((b"k".to_vec(), Some(Vec::new())))
        );
        for bad in [
            &b""[..],
            b"P",
            b"P\0\0\0\x09short",
            b"X\0\0\0\x01k",
            b"D\0\0\0\x01kv",
        ] {
            assert_eq!(decode_entry(bad), None, "{bad:?}");
        }
        assert_eq!(parse_seal(&seal_value(300)), Some(300));
        assert_eq!(parse_seal(b"x"), None);
        assert!(entry_name(9) < entry_name(10), "entries sort in order");
    }

    proptest! {
        /// Every part is within the limits, the parts cover the writes in order, and no
        /// two neighbours could have been one.
        #[test]
        fn parts_cover_the_writes_within_the_limits(
            sizes in prop::collection::vec(WRITE_OVERHEAD..3000usize, 0..400),
            max_ops in 1usize..200,
        ) {
            let limits = TxnLimits::new(max_ops, REQUEST_ROOM + 3000).unwrap();
            let parts = split(&sizes, limits).unwrap();
            let mut next = 0;
            for part in &parts {
                prop_assert_eq!(part.start, next);
                next = part.end;
                prop_assert!(part.len() <= max_ops);
                let bytes: usize = sizes[part.clone()].iter().sum();
                prop_assert!(bytes <= limits.budget());
            }
            prop_assert_eq!(next, sizes.len());
            for pair in parts.windows(2) {
                let joined: usize = sizes[pair[0].start..pair[1].end].iter().sum();
                prop_assert!(
                    pair[0].len() + pair[1].len() > max_ops || joined > limits.budget()
                );
            }
        }
    }
}
