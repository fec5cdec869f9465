//! `spec.dependsOn` (Flux's `dependsOn`): a HelmRelease is installed or upgraded only once
//! every HelmRelease it depends on is Ready for its current generation. A dependency cycle
//! is reported on every member with the whole cycle named. Readiness changes propagate
//! without polling: the release loop's watch of HelmReleases tells [`ReadyTracker`] about
//! every object it sees, and the dependents of one whose readiness changed are
//! reconciled at once.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::api::HelmRelease;

/// What the dependencies of a HelmRelease allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// None, or all Ready.
    Ready,
    /// Waiting for the dependency named in the message.
    NotReady(String),
    /// The HelmRelease is part of a cycle (the message names it).
    Cycle(String),
}

/// The HelmReleases the release loop watches, for dependency checks.
#[derive(Default)]
pub struct Dependencies {
    store: OnceLock<Store<HelmRelease>>,
}

/// `namespace/name` of a HelmRelease.
fn key(hr: &HelmRelease) -> (String, String) {
    (hr.namespace_or_default(), hr.name_any())
}

/// The `namespace/name` each of `hr`'s dependencies names (its own namespace by default).
pub fn dependency_keys(hr: &HelmRelease) -> Vec<(String, String)> {
    let own = hr.namespace_or_default();
    hr.spec
        .depends_on
        .iter()
        .map(|d| {
            (
                d.namespace.clone().unwrap_or_else(|| own.clone()),
                d.name.clone(),
            )
        })
        .collect()
}

/// Whether `hr` is Ready for its current generation.
pub fn is_ready(hr: &HelmRelease) -> bool {
    hr.status.as_ref().is_some_and(|status| {
        status.observed_generation == hr.metadata.generation
            && status
                .condition("Ready")
                .is_some_and(|c| c.status == "True")
    })
}

impl Dependencies {
    /// Use `store` (the release loop's reflector) from now on.
    pub fn attach(&self, store: Store<HelmRelease>) {
        let _ = self.store.set(store);
    }

    fn get(&self, namespace: &str, name: &str) -> Option<std::sync::Arc<HelmRelease>> {
        self.store
            .get()?
            .get(&ObjectRef::new(name).within(namespace))
    }

    /// What `hr`'s dependencies allow now.
    pub fn check(&self, hr: &HelmRelease) -> Verdict {
        if hr.spec.depends_on.is_empty() {
            return Verdict::Ready;
        }
        if let Some(cycle) = self.cycle_through(hr) {
            return Verdict::Cycle(format!(
                "dependency cycle: {}",
                cycle
                    .iter()
                    .map(|(ns, name)| format!("{ns}/{name}"))
                    .collect::<Vec<_>>()
                    .join(" -> ")
            ));
        }
        for (namespace, name) in dependency_keys(hr) {
            match self.get(&namespace, &name) {
                None => {
                    return Verdict::NotReady(format!(
                        "dependency {namespace}/{name} does not exist"
                    ));
                }
                Some(dependency) if !is_ready(&dependency) => {
                    return Verdict::NotReady(format!(
                        "dependency {namespace}/{name} is not ready"
                    ));
                }
                Some(_) => {}
            }
        }
        Verdict::Ready
    }

    /// A path of dependencies from `hr` back to itself, `hr` first and last; none when
    /// `hr` is on no cycle.
    fn cycle_through(&self, hr: &HelmRelease) -> Option<Vec<(String, String)>> {
        let start = key(hr);
        let mut path = vec![start.clone()];
        let mut visited = std::collections::HashSet::new();
        self.search(&dependency_keys(hr), &start, &mut path, &mut visited)
    }

    fn search(
        &self,
        next: &[(String, String)],
        start: &(String, String),
        path: &mut Vec<(String, String)>,
        visited: &mut std::collections::HashSet<(String, String)>,
    ) -> Option<Vec<(String, String)>> {
        for dependency in next {
            if dependency == start {
                let mut cycle = path.clone();
                cycle.push(start.clone());
                return Some(cycle);
            }
            if !visited.insert(dependency.clone()) {
                continue;
            }
            let Some(found) = self.get(&dependency.0, &dependency.1) else {
                continue;
            };
            path.push(dependency.clone());
            if let Some(cycle) = self.search(&dependency_keys(&found), start, path, visited) {
                return Some(cycle);
            }
            path.pop();
        }
        None
    }

    /// The HelmReleases that depend on `hr`.
    pub fn dependents_of(&self, hr: &HelmRelease) -> Vec<ObjectRef<HelmRelease>> {
        let Some(store) = self.store.get() else {
            return Vec::new();
        };
        let target = key(hr);
        store
            .state()
            .iter()
            .filter(|d| dependency_keys(d).contains(&target))
            .map(|d| ObjectRef::from_obj(d.as_ref()))
            .collect()
    }
}

/// Remembers whether each HelmRelease was Ready, to tell when that changes.
#[derive(Default)]
pub struct ReadyTracker {
    ready: Mutex<HashMap<(String, String), bool>>,
}

impl ReadyTracker {
    /// Record `hr` as seen now; true when its readiness differs from the last time.
    pub fn changed(&self, hr: &HelmRelease) -> bool {
        let now = is_ready(hr);
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        ready.insert(key(hr), now) != Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector::store;
    use kube::runtime::watcher::Event;

    fn hr(name: &str, depends_on: &[&str], ready: bool) -> HelmRelease {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.capstan.dev/v1alpha1",
            "kind": "HelmRelease",
            "metadata": {"name": name, "namespace": "apps", "generation": 1},
            "spec": {
                "chart": {"git": "https://example.invalid/r", "path": "c"},
                "dependsOn": depends_on.iter().map(|d| serde_json::json!({"name": d})).collect::<Vec<_>>(),
            },
            "status": {
                "observedGeneration": 1,
                "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"},
                                "reason": "x", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            },
        }))
        .unwrap()
    }

    fn graph(objects: Vec<HelmRelease>) -> Dependencies {
        let (reader, mut writer) = store();
        writer.apply_watcher_event(&Event::Init);
        for object in objects {
            writer.apply_watcher_event(&Event::InitApply(object));
        }
        writer.apply_watcher_event(&Event::InitDone);
        let dependencies = Dependencies::default();
        dependencies.attach(reader);
        dependencies
    }

    #[test]
    fn a_chain_waits_for_each_link_and_names_it() {
        let g = graph(vec![hr("a", &[], false), hr("b", &["a"], false)]);
        assert_eq!(
            g.check(&hr("b", &["a"], false)),
            Verdict::NotReady("dependency apps/a is not ready".into())
        );
        assert_eq!(
            g.check(&hr("c", &["missing"], false)),
            Verdict::NotReady("dependency apps/missing does not exist".into())
        );
        let g = graph(vec![hr("a", &[], true), hr("b", &["a"], false)]);
        assert_eq!(g.check(&hr("b", &["a"], false)), Verdict::Ready);
        assert_eq!(g.dependents_of(&hr("a", &[], true)).len(), 1);
    }

    #[test]
    fn every_member_of_a_cycle_names_the_whole_cycle() {
        let members = vec![
            hr("x", &["y"], false),
            hr("y", &["z"], false),
            hr("z", &["x"], false),
            hr("w", &["x"], false),
        ];
        let g = graph(members.clone());
        assert_eq!(
            g.check(&members[0]),
            Verdict::Cycle("dependency cycle: apps/x -> apps/y -> apps/z -> apps/x".into())
        );
        assert_eq!(
            g.check(&members[2]),
            Verdict::Cycle("dependency cycle: apps/z -> apps/x -> apps/y -> apps/z".into())
        );
        // Depending on a cycle is waiting, not being on it.
        assert_eq!(
            g.check(&members[3]),
            Verdict::NotReady("dependency apps/x is not ready".into())
        );
    }

    #[test]
    fn readiness_changes_are_noticed_once() {
        let tracker = ReadyTracker::default();
        assert!(tracker.changed(&hr("a", &[], false)));
        assert!(!tracker.changed(&hr("a", &[], false)));
        assert!(tracker.changed(&hr("a", &[], true)));
        assert!(!tracker.changed(&hr("a", &[], true)));
    }
}
