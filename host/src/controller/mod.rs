//! The HelmRelease operator: two loops over one store (DESIGN.md, "Two loops, one store").
//! The source loop ([`sourcing`]) decides which chart artifact each release runs; the
//! release loop (a kube-runtime `Controller`, [`reconcile`]) makes the cluster match through
//! the backend chosen by `spec.backend` / `spec.helmVersion`. Changes of referenced
//! ConfigMaps and Secrets, and new artifacts, wake the releases concerned.

mod actions;
pub mod backends;
mod cleanup;
pub mod context;
pub mod contract;
pub mod decision;
pub mod dependencies;
pub mod error;
pub mod helm_tests;
pub mod identity;
pub mod leader;
pub mod metrics;
mod observe;
pub mod options;
pub mod queue;
pub mod reconcile;
pub mod refs;
pub mod reload;
pub mod remote;
mod report;
pub mod run;
pub mod sourcing;
pub mod values;
