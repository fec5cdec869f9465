//! What a source sync pass needs of each source (mirrors, documents, plugin calls) and the
//! grants its plugin calls carry.

use std::collections::HashMap;
use std::sync::Arc;

use crate::capabilities::Grants;
use crate::capabilities::credentials::CredentialsGrant;
use crate::capabilities::git::GitGrant;
use crate::capabilities::http::{BasicAuth, CachedUrl, CustomCa, HttpGrant};
use crate::sources::catalog::{RouteError, SourceCatalog, flag_at, text_at, urls_at};
use crate::sources::{MirrorKey, SourceSpec, redact_userinfo};

/// Timing of source sync.
use super::*;

impl SourceSync {
    /// Route `source` and derive what it needs.
    pub(super) fn needs<'c>(
        &self,
        catalog: &'c SourceCatalog,
        source: &SourceSpec,
    ) -> Result<Needs<'c>, SourceError> {
        let spec: serde_json::Value = serde_json::from_str(&source.spec)
            .map_err(|e| source_error(source, None, format!("spec is not JSON: {e}")))?;
        let entry = catalog.route(&source.kind, &spec).map_err(|error| {
            let entry = catalog.kind(&source.kind).ok();
            SourceError {
                invalid_spec: matches!(
                    error,
                    RouteError::Invalid(_) | RouteError::UnknownKind { .. }
                ),
                ..source_error(source, entry, error.to_string())
            }
        })?;
        let capabilities = &entry.declared.capabilities;
        let mirror = match &capabilities.git_url_field {
            None => None,
            Some(pointer) => {
                let url = text_at(&spec, pointer).ok_or_else(|| {
                    source_error(
                        source,
                        Some(entry),
                        format!("spec field {pointer} (the git repository URL) is missing or not a string"),
                    )
                })?;
                // The git capability's rule: a credentials Secret goes to a plain `http://`
                // remote only when the spec's top-level `insecure` is true.
                if let Some(secret) = &source.credentials
                    && url.trim().to_ascii_lowercase().starts_with("http://")
                    && !flag_at(&spec, Some("/insecure"))
                {
                    return Err(source_error(
                        source,
                        Some(entry),
                        format!(
                            "credentials secret {}/{} would be sent over plain HTTP to {}: use an https:// URL, or set `insecure: true` in the source spec",
                            secret.namespace,
                            secret.name,
                            redact_userinfo(url.trim())
                        ),
                    ));
                }
                Some(MirrorKey {
                    url: url.trim().to_owned(),
                    credentials: source.credentials.clone(),
                })
            }
        };
        let mut documents = Vec::new();
        for access in &capabilities.http {
            let (Some(document), Some(urls)) =
                (&access.shared_document, urls_at(&spec, &access.url_field))
            else {
                continue;
            };
            for url in urls {
                documents.push(MirrorKey {
                    url: document_url(url, document),
                    credentials: source.credentials.clone(),
                });
            }
        }
        Ok(Needs {
            entry,
            spec,
            mirror,
            documents,
        })
    }

    /// The grants of a call about `source`.
    pub(super) fn grants(
        &self,
        source: &SourceSpec,
        needs: &Needs<'_>,
        documents: &HashMap<MirrorKey, DocumentState>,
        credentials: &dyn CredentialsLookup,
    ) -> Result<Grants, SourceError> {
        let fail = |cause: String| source_error(source, Some(needs.entry), cause);
        let capabilities = &needs.entry.declared.capabilities;
        let secret_data = match &source.credentials {
            None => None,
            Some(secret) => Some(credentials.data(secret).map_err(|message| {
                fail(format!(
                    "credentials secret {}/{}: {message}",
                    secret.namespace, secret.name
                ))
            })?),
        };
        let git = needs
            .mirror
            .as_ref()
            .map(|key| GitGrant::new(key.url.clone(), self.mirrors.path_of(key)));
        let http = if capabilities.http.is_empty() {
            None
        } else {
            let mut grant = HttpGrant::empty()
                .with_egress(Arc::clone(&self.http.egress))
                .with_hosts(self.http.extra_hosts.iter().cloned())
                .with_max_response_bytes(self.http.max_response_bytes)
                .with_timeout(self.http.timeout);
            let mut wants_credentials = false;
            // A credentialed URL over plain HTTP the spec did not mark `insecure`.
            let mut plain_http: Option<String> = None;
            for access in &capabilities.http {
                let Some(urls) = urls_at(&needs.spec, &access.url_field) else {
                    return Err(fail(format!(
                        "spec field {} (URLs the kind reaches) is neither a string nor a list of strings",
                        access.url_field
                    )));
                };
                for url in urls {
                    let insecure = flag_at(&needs.spec, access.insecure_field.as_deref());
                    let origins = origins_of(url, insecure).ok_or_else(|| {
                        fail(format!(
                            "spec field {}: `{}` is not a URL with a host",
                            access.url_field,
                            redact_userinfo(url)
                        ))
                    })?;
                    for origin in origins {
                        grant = grant.with_origin(origin, access.send_credentials);
                    }
                    wants_credentials |= access.send_credentials;
                    if access.send_credentials
                        && !insecure
                        && url.trim().to_ascii_lowercase().starts_with("http://")
                    {
                        plain_http.get_or_insert_with(|| redact_userinfo(url));
                    }
                    if let Some(document) = &access.shared_document {
                        let key = MirrorKey {
                            url: document_url(url, document),
                            credentials: source.credentials.clone(),
                        };
                        if let Some(state) = documents.get(&key) {
                            grant = grant.with_cached(CachedUrl {
                                url: key.url.clone(),
                                cache: Arc::clone(&state.cache),
                                max_bytes: self.http.max_document_bytes,
                            });
                        }
                    }
                }
            }
            if let (Some(data), Some(secret)) = (&secret_data, &source.credentials) {
                if let Some(pem) = crate::sources::spec::ca_bundle(data) {
                    let ca = CustomCa::from_pem(&pem).map_err(|e| {
                        fail(format!(
                            "credentials secret {}/{}: {e}",
                            secret.namespace, secret.name
                        ))
                    })?;
                    grant = grant.with_ca(Some(ca));
                }
                if wants_credentials {
                    let text = |key: &str| {
                        data.get(key)
                            .map(|v| String::from_utf8_lossy(v).into_owned())
                    };
                    if let (Some(username), Some(password)) = (text("username"), text("password")) {
                        // Credentials never cross the network in clear unless the spec
                        // says so.
                        if let Some(url) = plain_http {
                            let insecure = capabilities
                                .http
                                .iter()
                                .find_map(|a| a.insecure_field.as_deref())
                                .map(|field| {
                                    format!(
                                        "set `{}: true` in the source spec",
                                        field.trim_start_matches('/')
                                    )
                                })
                                .unwrap_or_else(|| {
                                    "this source kind cannot be told to allow it".to_owned()
                                });
                            return Err(fail(format!(
                                "credentials secret {}/{} would be sent over plain HTTP to {url}: use an https:// URL, or {insecure}",
                                secret.namespace, secret.name
                            )));
                        }
                        grant = grant.with_credentials(Some(BasicAuth { username, password }));
                    }
                }
            }
            Some(grant)
        };
        let credentials_grant = (!capabilities.secret_keys.is_empty()).then(|| {
            CredentialsGrant::new(
                capabilities.secret_keys.iter().cloned(),
                secret_data.as_ref(),
            )
        });
        Ok(Grants {
            kube: None,
            git,
            http,
            credentials: credentials_grant,
            post_render: None,
            release_context: None,
            folder_files: None,
        })
    }
}
