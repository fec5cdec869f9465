//! Which identity a release's cluster calls run as. A HelmRelease naming
//! `spec.serviceAccountName` (or, when it names none, the configuration's
//! `defaultServiceAccount`: lock-down mode) has every call its backend makes — apply,
//! delete, hooks, wait, `lookup`, release records — sent as
//! `system:serviceaccount:<namespace>:<name>` through Kubernetes impersonation, so the
//! release can do exactly what that account may do in the cluster and nothing more. The
//! operator's own identity is never a fallback: a call the account may not make fails with
//! the API server's `forbidden` message, which names verb, resource and account.
//!
//! One client per account is built from the operator's connection settings and kept, so
//! connections are reused across reconciles.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::Client;

use crate::api::HelmRelease;

/// The clients releases act through.
pub struct Identities {
    /// The operator's connection settings (impersonation is added per account).
    base: kube::Config,
    /// The configuration's `defaultServiceAccount`.
    default_service_account: Option<String>,
    clients: Mutex<HashMap<String, Client>>,
}

/// The Kubernetes user name of service account `name` in `namespace`.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

impl Identities {
    /// Identities made from the operator's `base` settings.
    pub fn new(base: kube::Config, default_service_account: Option<String>) -> Self {
        Identities {
            base,
            default_service_account: default_service_account.filter(|s| !s.is_empty()),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The service account `hr`'s calls run as, if any: its own `serviceAccountName`, else
    /// the configured default.
    pub fn account_of<'a>(&'a self, hr: &'a HelmRelease) -> Option<&'a str> {
        hr.spec
            .service_account_name
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.default_service_account.as_deref())
    }

    /// The user and the client for `hr`'s calls; `None` when it runs as the operator.
    pub fn client_for(&self, hr: &HelmRelease) -> Result<Option<(String, Client)>, String> {
        let Some(account) = self.account_of(hr) else {
            return Ok(None);
        };
        let user = service_account_user(&hr.namespace_or_default(), account);
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(&user) {
            return Ok(Some((user, client.clone())));
        }
        let mut config = self.base.clone();
        config.auth_info.impersonate = Some(user.clone());
        config.auth_info.impersonate_groups = None;
        let client = Client::try_from(config)
            .map_err(|e| format!("cannot make a client acting as {user}: {e}"))?;
        clients.insert(user.clone(), client.clone());
        Ok(Some((user, client)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::HelmReleaseSpec;

    fn release(account: Option<&str>) -> HelmRelease {
        let mut hr = HelmRelease::new(
            "web",
            HelmReleaseSpec {
                service_account_name: account.map(str::to_owned),
                ..HelmReleaseSpec::default()
            },
        );
        hr.metadata.namespace = Some("team-a".into());
        hr
    }

    fn identities(default: Option<&str>) -> Identities {
        let base = kube::Config::new("https://127.0.0.1:6443".parse().unwrap());
        Identities::new(base, default.map(str::to_owned))
    }

    #[test]
    fn the_release_account_wins_over_the_default_and_none_means_the_operator() {
        let open = identities(None);
        assert_eq!(open.account_of(&release(None)), None);
        assert_eq!(
            open.account_of(&release(Some("deployer"))),
            Some("deployer")
        );
        let locked = identities(Some("tenant"));
        assert_eq!(locked.account_of(&release(None)), Some("tenant"));
        assert_eq!(
            locked.account_of(&release(Some("deployer"))),
            Some("deployer")
        );
        assert_eq!(locked.account_of(&release(Some(""))), Some("tenant"));
    }

    #[tokio::test]
    async fn clients_impersonate_the_account_of_the_release_namespace_and_are_reused() {
        let locked = identities(Some("tenant"));
        let (user, _) = locked.client_for(&release(None)).unwrap().unwrap();
        assert_eq!(user, "system:serviceaccount:team-a:tenant");
        locked.client_for(&release(None)).unwrap();
        locked.client_for(&release(Some("deployer"))).unwrap();
        assert_eq!(locked.clients.lock().unwrap().len(), 2);
        assert!(
            identities(None)
                .client_for(&release(None))
                .unwrap()
                .is_none()
        );
    }
}
