//! Remote clusters (Flux v2's `spec.kubeConfig`): a HelmRelease whose `kubeConfig.secretRef`
//! names a Secret in its own namespace has every cluster call of its backend — objects,
//! release records, hooks, wait, the release lock, discovery — sent to the API server that
//! kubeconfig describes, as the identity it holds (impersonating `serviceAccountName` there
//! when one applies). The Secret is read with the operator's identity.
//!
//! A kubeconfig is data from a tenant, so nothing in it may reach the operator's own
//! machine: references to files (`certificate-authority`, `client-certificate`,
//! `client-key`, `tokenFile`), `exec` credential plugins and `auth-provider`s are refused
//! with the field named, as Flux refuses them by default. One connection per kubeconfig
//! (by content digest) is kept with its own discovery cache, so API kinds of one cluster
//! are never taken for another's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Secret;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client};
use sha2::{Digest, Sha256};

use crate::api::HelmRelease;
use crate::capabilities::kube::DiscoveryCache;

/// Keys of the Secret tried when `secretRef.key` is not given (Flux's order).
const DEFAULT_KEYS: [&str; 2] = ["value", "value.yaml"];

/// A connection to one remote API server.
pub struct RemoteCluster {
    /// `sha256:<hex>` of the kubeconfig text: tells clusters apart in claims and caches.
    pub id: String,
    /// The API server's address, for messages.
    pub server: String,
    config: kube::Config,
    /// The kubeconfig's own identity.
    pub client: Client,
    /// What this cluster serves (never shared with another cluster).
    pub discovery: Arc<DiscoveryCache>,
    impersonated: Mutex<HashMap<String, Client>>,
}

impl RemoteCluster {
    /// A client acting as `user` (a service account of this cluster), made once and kept.
    pub fn client_as(&self, user: &str) -> Result<Client, String> {
        let mut clients = self.impersonated.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(user) {
            return Ok(client.clone());
        }
        let mut config = self.config.clone();
        config.auth_info.impersonate = Some(user.to_owned());
        config.auth_info.impersonate_groups = None;
        let client = Client::try_from(config).map_err(|e| {
            format!(
                "cannot make a client for {} acting as {user}: {e}",
                self.server
            )
        })?;
        clients.insert(user.to_owned(), client.clone());
        Ok(client)
    }
}

/// The remote clusters of every release, by kubeconfig digest.
#[derive(Default)]
pub struct RemoteClusters {
    clusters: Mutex<HashMap<String, Arc<RemoteCluster>>>,
}

impl RemoteClusters {
    /// The cluster `hr` targets: `None` for the operator's own cluster; an error naming the
    /// Secret, key or kubeconfig field when it cannot be used.
    pub async fn for_release(
        &self,
        operator: &Client,
        hr: &HelmRelease,
    ) -> Result<Option<Arc<RemoteCluster>>, String> {
        let Some(reference) = hr.spec.kube_config.as_ref() else {
            return Ok(None);
        };
        let secret_ref = &reference.secret_ref;
        let namespace = hr.namespace_or_default();
        let field = "spec.kubeConfig.secretRef";
        let api: Api<Secret> = Api::namespaced(operator.clone(), &namespace);
        let secret = api
            .get_opt(&secret_ref.name)
            .await
            .map_err(|e| {
                format!(
                    "{field}: cannot read Secret {namespace}/{}: {e}",
                    secret_ref.name
                )
            })?
            .ok_or_else(|| format!("{field}: Secret {namespace}/{} not found", secret_ref.name))?;
        let data = secret.data.unwrap_or_default();
        let (key, bytes) = match &secret_ref.key {
            Some(key) => (key.as_str(), data.get(key)),
            None => DEFAULT_KEYS
                .iter()
                .find_map(|key| data.get(*key).map(|bytes| (*key, Some(bytes))))
                .unwrap_or((DEFAULT_KEYS[0], None)),
        };
        let Some(bytes) = bytes else {
            return Err(format!(
                "{field}: Secret {namespace}/{} has no key {}",
                secret_ref.name,
                secret_ref
                    .key
                    .clone()
                    .unwrap_or_else(|| DEFAULT_KEYS.join(" or "))
            ));
        };
        let origin = format!("{field}: Secret {namespace}/{} key {key}", secret_ref.name);
        let text = std::str::from_utf8(&bytes.0)
            .map_err(|_| format!("{origin}: the kubeconfig is not UTF-8 text"))?;
        let id = format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())));
        if let Some(found) = self.get(&id) {
            return Ok(Some(found));
        }
        let cluster = Arc::new(connect(&origin, &id, text).await?);
        let mut clusters = self.clusters.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Some(Arc::clone(clusters.entry(id).or_insert(cluster))))
    }

    fn get(&self, id: &str) -> Option<Arc<RemoteCluster>> {
        let clusters = self.clusters.lock().unwrap_or_else(|e| e.into_inner());
        clusters.get(id).cloned()
    }
}

/// A connection from kubeconfig `text` (current context), after [`refuse_local_access`].
async fn connect(origin: &str, id: &str, text: &str) -> Result<RemoteCluster, String> {
    let kubeconfig =
        Kubeconfig::from_yaml(text).map_err(|e| format!("{origin}: not a kubeconfig: {e}"))?;
    refuse_local_access(&kubeconfig).map_err(|e| format!("{origin}: {e}"))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("{origin}: {e}"))?;
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config.clone())
        .map_err(|e| format!("{origin}: cannot connect to {server}: {e}"))?;
    Ok(RemoteCluster {
        id: id.to_owned(),
        server,
        config,
        client,
        discovery: Arc::new(DiscoveryCache::default()),
        impersonated: Mutex::new(HashMap::new()),
    })
}

/// Refuse what would make the operator read its own files or run programs.
fn refuse_local_access(kubeconfig: &Kubeconfig) -> Result<(), String> {
    for named in &kubeconfig.clusters {
        let Some(cluster) = &named.cluster else {
            continue;
        };
        if cluster.certificate_authority.is_some() {
            return Err(format!(
                "clusters[{}].cluster.certificate-authority names a file; embed it as certificate-authority-data",
                named.name
            ));
        }
    }
    for named in &kubeconfig.auth_infos {
        let Some(user) = &named.auth_info else {
            continue;
        };
        let file_fields = [
            ("client-certificate", user.client_certificate.is_some()),
            ("client-key", user.client_key.is_some()),
            ("tokenFile", user.token_file.is_some()),
        ];
        if let Some((field, _)) = file_fields.iter().find(|(_, set)| *set) {
            return Err(format!(
                "users[{}].user.{field} names a file; embed the data instead",
                named.name
            ));
        }
        if user.exec.is_some() {
            return Err(format!(
                "users[{}].user.exec runs a program, which the operator does not do for a release",
                named.name
            ));
        }
        if user.auth_provider.is_some() {
            return Err(format!(
                "users[{}].user.auth-provider is not supported; use a token or client certificate data",
                named.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(user: &str) -> Kubeconfig {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: far\n  cluster:\n    server: https://127.0.0.1:1\n    certificate-authority-data: AAAA\ncontexts:\n- name: far\n  context: {{cluster: far, user: u}}\ncurrent-context: far\nusers:\n- name: u\n  user:\n{user}"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    #[test]
    fn embedded_credentials_pass_and_local_access_is_refused_by_field() {
        assert_eq!(refuse_local_access(&kubeconfig("    token: abc\n")), Ok(()));
        for (user, field) in [
            (
                "    client-certificate: /etc/cert\n",
                "users[u].user.client-certificate",
            ),
            ("    client-key: /etc/key\n", "users[u].user.client-key"),
            (
                "    tokenFile: /var/run/secrets/token\n",
                "users[u].user.tokenFile",
            ),
            (
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n",
                "users[u].user.exec",
            ),
        ] {
            let refused = refuse_local_access(&kubeconfig(user)).unwrap_err();
            assert!(refused.starts_with(field), "{user}: {refused}");
        }
        let mut file_ca = kubeconfig("    token: abc\n");
        if let Some(cluster) = file_ca.clusters[0].cluster.as_mut() {
            cluster.certificate_authority = Some("/etc/ca.crt".into());
        }
        assert!(
            refuse_local_access(&file_ca)
                .unwrap_err()
                .starts_with("clusters[far].cluster.certificate-authority")
        );
    }
}
