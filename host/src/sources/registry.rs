//! The source registry: derived bookkeeping `release -> mirror key`, recomputed from the
//! complete set of current release specs on every pass. A key no release references is
//! collected once it has stayed unreferenced for the grace period — whether its releases
//! were deleted, moved to another URL, ref, path or credentials, or the repository simply
//! never changes. Nothing here depends on the repository signalling anything.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::{MirrorKey, ReleaseKey};

#[derive(Debug)]
struct Entry {
    users: BTreeSet<ReleaseKey>,
    unreferenced_since: Option<Instant>,
}

/// What changed in one pass.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RegistryChanges {
    /// Keys referenced for the first time (fetch them now).
    pub added: Vec<MirrorKey>,
    /// Keys unreferenced for at least the grace period (remove their mirrors).
    pub collected: Vec<MirrorKey>,
}

/// Mirror keys and the releases that use them.
#[derive(Debug)]
pub struct SourceRegistry {
    grace: Duration,
    entries: BTreeMap<MirrorKey, Entry>,
}

impl SourceRegistry {
    /// An empty registry collecting unreferenced keys after `grace`.
    pub fn new(grace: Duration) -> Self {
        SourceRegistry {
            grace,
            entries: BTreeMap::new(),
        }
    }

    /// Recompute references from the complete current set of `(release, key)` pairs.
    pub fn observe<'a>(
        &mut self,
        current: impl IntoIterator<Item = (&'a ReleaseKey, &'a MirrorKey)>,
        now: Instant,
    ) -> RegistryChanges {
        let mut users: BTreeMap<&MirrorKey, BTreeSet<ReleaseKey>> = BTreeMap::new();
        for (release, key) in current {
            users.entry(key).or_default().insert(release.clone());
        }
        let mut changes = RegistryChanges::default();
        for (key, entry) in &mut self.entries {
            match users.remove(key) {
                Some(now_users) => {
                    entry.users = now_users;
                    entry.unreferenced_since = None;
                }
                None => {
                    entry.users.clear();
                    entry.unreferenced_since.get_or_insert(now);
                }
            }
        }
        for (key, now_users) in users {
            changes.added.push(key.clone());
            self.entries.insert(
                key.clone(),
                Entry {
                    users: now_users,
                    unreferenced_since: None,
                },
            );
        }
        let grace = self.grace;
        self.entries
            .retain(|key, entry| match entry.unreferenced_since {
                Some(since) if now.saturating_duration_since(since) >= grace => {
                    changes.collected.push(key.clone());
                    false
                }
                _ => true,
            });
        changes
    }

    /// Every key still tracked (referenced, or within its grace period).
    pub fn keys(&self) -> impl Iterator<Item = &MirrorKey> {
        self.entries.keys()
    }

    /// Keys referenced by at least one release.
    pub fn referenced(&self) -> impl Iterator<Item = &MirrorKey> {
        self.entries
            .iter()
            .filter(|(_, e)| !e.users.is_empty())
            .map(|(k, _)| k)
    }

    /// Releases using `key`.
    pub fn users(&self, key: &MirrorKey) -> usize {
        self.entries.get(key).map_or(0, |e| e.users.len())
    }

    /// Number of tracked keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is tracked.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(n: usize) -> ReleaseKey {
        ReleaseKey {
            namespace: "ns".into(),
            name: format!("r{n}"),
        }
    }

    fn key(url: &str) -> MirrorKey {
        MirrorKey {
            url: url.into(),
            credentials: None,
        }
    }

    #[test]
    fn identical_sources_share_one_key_and_changes_are_collected_after_grace() {
        let grace = Duration::from_secs(60);
        let mut registry = SourceRegistry::new(grace);
        let t0 = Instant::now();
        let (r1, r2) = (release(1), release(2));
        let (a, b) = (key("https://a"), key("https://b"));
        let changes = registry.observe([(&r1, &a), (&r2, &a)], t0);
        assert_eq!(changes.added, std::slice::from_ref(&a));
        assert_eq!(registry.users(&a), 2);

        // r2 moves to b; a still has r1.
        let changes = registry.observe([(&r1, &a), (&r2, &b)], t0);
        assert_eq!(changes.added, std::slice::from_ref(&b));
        // r1 deleted: a becomes unreferenced but stays within the grace period...
        let changes = registry.observe([(&r2, &b)], t0 + Duration::from_secs(1));
        assert!(changes.collected.is_empty());
        assert_eq!(registry.len(), 2);
        // ...and is collected once the grace period has passed, with nothing signalling.
        let changes = registry.observe([(&r2, &b)], t0 + Duration::from_secs(62));
        assert_eq!(changes.collected, std::slice::from_ref(&a));
        assert_eq!(registry.keys().collect::<Vec<_>>(), [&b]);
    }

    #[test]
    fn a_key_referenced_again_within_grace_is_kept() {
        let mut registry = SourceRegistry::new(Duration::from_secs(60));
        let t0 = Instant::now();
        let (r1, a) = (release(1), key("https://a"));
        registry.observe([(&r1, &a)], t0);
        registry.observe([], t0 + Duration::from_secs(30));
        registry.observe([(&r1, &a)], t0 + Duration::from_secs(50));
        let changes = registry.observe([], t0 + Duration::from_secs(100));
        assert!(
            changes.collected.is_empty(),
            "the grace period restarts when a key is dropped again"
        );
        let changes = registry.observe([], t0 + Duration::from_secs(161));
        assert_eq!(changes.collected, [a]);
    }
}
