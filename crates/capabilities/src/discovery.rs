//! The `discovery` host interface: the target cluster's version and served API versions,
//! as Helm reads them for `.Capabilities` (`KubeVersion` from `/version`; `APIVersions` as
//! Helm's `GetVersionSet` builds it: every `group/version` of `/api` and `/apis`, and
//! `group/version/Kind` for every resource listed, subresources included). Read through
//! the call's grant (the release's identity, in its target cluster) and kept per cluster
//! for [`FRESH_FOR`], so a reconcile costs no discovery round trips.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kube::Client;

use super::bindings::discovery::Host;
use super::bindings::types::{Error, ErrorCode};
use super::discovery_cache::Served;
use super::errors::error;
use super::kube::{KubeGrant, KubeView};

/// How long one discovery answer is used (a CRD installed meanwhile shows after this).
pub const FRESH_FOR: Duration = Duration::from_secs(60);

fn unavailable(what: &str, e: kube::Error) -> Error {
    error(ErrorCode::Unavailable, format!("discovery ({what}): {e}"))
}

/// Ask the API server what it serves.
async fn discover(client: &Client) -> Result<Served, Error> {
    let version = client
        .apiserver_version()
        .await
        .map_err(|e| unavailable("/version", e))?
        .git_version;
    let mut served = BTreeSet::new();
    let mut add_resources =
        |group_version: &str,
         list: k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList| {
            served.insert(group_version.to_owned());
            for resource in list.resources {
                served.insert(format!("{group_version}/{}", resource.kind));
            }
        };
    let core = client
        .list_core_api_versions()
        .await
        .map_err(|e| unavailable("/api", e))?;
    for version in &core.versions {
        let list = client
            .list_core_api_resources(version)
            .await
            .map_err(|e| unavailable(&format!("/api/{version}"), e))?;
        add_resources(version, list);
    }
    let groups = client
        .list_api_groups()
        .await
        .map_err(|e| unavailable("/apis", e))?;
    for group in &groups.groups {
        for version in &group.versions {
            // An aggregated API that is down is left out, as Helm leaves out the groups
            // discovery could not read.
            if let Ok(list) = client
                .list_api_group_resources(&version.group_version)
                .await
            {
                add_resources(&version.group_version, list);
            }
        }
    }
    Ok(Served {
        read_at: Instant::now(),
        version,
        api_versions: served.into_iter().collect(),
    })
}

/// The cluster's discovery answer, from the cache while fresh.
async fn served(grant: KubeGrant) -> Result<Served, Error> {
    let (client, cache) = grant.discovery_client();
    if let Some(found) = cache.served.read().await.as_ref()
        && found.read_at.elapsed() < FRESH_FOR
    {
        return Ok(found.clone());
    }
    let served = discover(client).await?;
    *cache.served.write().await = Some(served.clone());
    Ok(served)
}

impl Host for KubeView<'_> {
    async fn server_version(&mut self) -> Result<String, Error> {
        Ok(served(self.kube()?.clone()).await?.version)
    }

    async fn api_versions(&mut self) -> Result<Vec<String>, Error> {
        Ok(served(self.kube()?.clone()).await?.api_versions)
    }
}
