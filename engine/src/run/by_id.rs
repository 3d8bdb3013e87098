//! A run's small maps keyed by activity id, as a vector sorted by id: a partition has a
//! handful of activities, and a `BTreeMap`'s first node (room for eleven entries) cost about
//! 2 KB per run for two of them, which made up a third of an idle node's memory.

use mobiwf_proto::ActivityId;

/// Values by activity id, sorted by id, each id once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ById<T>(Vec<(ActivityId, T)>);

impl<T> Default for ById<T> {
    fn default() -> Self {
        ById(Vec::new())
    }
}

impl<T> ById<T> {
    fn position(&self, id: ActivityId) -> Option<usize> {
        self.0.binary_search_by_key(&id, |(k, _)| *k).ok()
    }

    /// The value of `id`.
    pub(crate) fn get(&self, id: &ActivityId) -> Option<&T> {
        let at = self.position(*id)?;
        self.0.get(at).map(|(_, v)| v)
    }

    /// The value of `id`, to change.
    pub(crate) fn get_mut(&mut self, id: &ActivityId) -> Option<&mut T> {
        let at = self.position(*id)?;
        self.0.get_mut(at).map(|(_, v)| v)
    }

    /// Every value, by id.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Every (id, value), by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ActivityId, &T)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<T> FromIterator<(ActivityId, T)> for ById<T> {
    /// As a map would collect them: of two values for one id, the later.
    fn from_iter<I: IntoIterator<Item = (ActivityId, T)>>(entries: I) -> Self {
        let mut entries: Vec<(ActivityId, T)> = entries.into_iter().collect();
        entries.reverse();
        entries.sort_by_key(|(k, _)| *k);
        entries.dedup_by_key(|(k, _)| *k);
        entries.shrink_to_fit();
        ById(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_id_and_keeps_the_later_of_two_values_as_a_map_would() {
        let mut map: ById<&str> = [
            (ActivityId(9), "nine"),
            (ActivityId(2), "two"),
            (ActivityId(9), "nine again"),
            (ActivityId(5), "five"),
        ]
        .into_iter()
        .collect();
        assert_eq!(map.get(&ActivityId(9)), Some(&"nine again"));
        assert_eq!(map.get(&ActivityId(3)), None);
        *map.get_mut(&ActivityId(2)).unwrap() = "deux";
        let ids: Vec<u64> = map.iter().map(|(k, _)| k.0).collect();
        assert_eq!(ids, [2, 5, 9]);
        assert_eq!(map.values().count(), 3);
        assert_eq!(map.get(&ActivityId(2)), Some(&"deux"));
        assert!(map.get_mut(&ActivityId(4)).is_none());
    }
}
