//! The `credentials` host interface (since 0.2.0): the keys of a release's credentials
//! Secret that its source kind declared in `capabilities.secret-keys`, and nothing else.
//! The host reads the Secret; the grant holds only the declared keys, so an undeclared key
//! is refused even when the Secret has it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::bindings::credentials::Host;
use super::bindings::types::{Error, ErrorCode};
use super::errors::error;

/// The declared keys of one call's credentials Secret.
#[derive(Clone, Default)]
pub struct CredentialsGrant {
    declared: BTreeSet<String>,
    values: BTreeMap<String, Vec<u8>>,
}

impl fmt::Debug for CredentialsGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialsGrant")
            .field("declared", &self.declared)
            .field("present", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl CredentialsGrant {
    /// A grant of `declared` keys, taking their values from `secret` (a Secret's data);
    /// other keys of the Secret are dropped here.
    pub fn new(
        declared: impl IntoIterator<Item = String>,
        secret: Option<&BTreeMap<String, Vec<u8>>>,
    ) -> Self {
        let declared: BTreeSet<String> = declared.into_iter().collect();
        let values = secret
            .map(|data| {
                data.iter()
                    .filter(|(key, _)| declared.contains(*key))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default();
        CredentialsGrant { declared, values }
    }

    /// The value of declared key `key`, for host-side adapters (Helm 4 getters receive
    /// credentials in their input, as Helm passes `--username` / `--password`).
    pub fn value(&self, key: &str) -> Option<&[u8]> {
        if !self.declared.contains(key) {
            return None;
        }
        self.values.get(key).map(Vec::as_slice)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        if !self.declared.contains(key) {
            return Err(error(
                ErrorCode::Denied,
                format!(
                    "credentials key `{key}` was not declared by this source kind (declared: {})",
                    self.declared
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(self.values.get(key).cloned())
    }
}

/// What the `credentials` import sees of a call: its credentials grant.
pub struct CredentialsView<'a> {
    /// The grant, if any.
    pub(crate) grant: Option<&'a CredentialsGrant>,
}

impl Host for CredentialsView<'_> {
    async fn get(&mut self, key: String) -> Result<Option<Vec<u8>>, Error> {
        match self.grant {
            Some(grant) => grant.get(&key),
            None => Err(error(
                ErrorCode::Denied,
                "no credentials are granted to this call",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_declared_keys_are_kept_and_served() {
        let secret: BTreeMap<String, Vec<u8>> = [
            ("token".to_owned(), b"t0k".to_vec()),
            ("ssh-key".to_owned(), b"private".to_vec()),
        ]
        .into();
        let grant =
            CredentialsGrant::new(["token".to_owned(), "username".to_owned()], Some(&secret));
        assert_eq!(grant.get("token").unwrap(), Some(b"t0k".to_vec()));
        assert_eq!(grant.get("username").unwrap(), None);
        let refused = grant.get("ssh-key").unwrap_err();
        assert_eq!(refused.code, ErrorCode::Denied);
        assert!(refused.message.contains("`ssh-key`"), "{}", refused.message);
        assert!(!format!("{grant:?}").contains("t0k"));
    }
}
