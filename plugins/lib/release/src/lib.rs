//! The Helm release lifecycle shared by the release backend components: `sync` (install
//! or upgrade, with hooks, CRDs, server-side apply and `wait`), `uninstall`, `rollback`,
//! `plan`, `status`/`history`, `template`/`package` through `capstan-helm`, and the
//! release's tests after a sync when the host asks for them ([`tests`]).
//!
//! The lifecycle keeps release records through [`store`], whose backing
//! [`store::RecordStore`] each component chooses once at start: Helm v3's Secrets or
//! ConfigMaps (`backend-helm3`, the default) or Tiller's ConfigMaps
//! ([`tiller_store`], `backend-helm2`); Helm v3's store can move a release's Tiller records
//! to Helm 3 on first sight ([`migrate`]). The
//! lifecycle itself works on Helm v3's release model (`capstan_helm::release`).

pub mod crds;
pub mod drift;
pub mod flavor;
pub mod hooks;
pub mod live;
pub mod migrate;
pub mod objects;
pub mod package;
pub mod plan;
pub mod render;
pub mod rollback;
pub mod store;
pub mod sync;
pub mod tests;
pub mod tiller_store;
pub mod uninstall;
pub mod values;
pub mod wait;
