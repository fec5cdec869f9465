//! The objects a HelmRelease points at (credential Secrets of its chart source, the
//! ConfigMaps and Secrets of `valuesFrom`, the HelmReleases of `dependsOn`), and the tenancy rule that they stay in the
//! HelmRelease's own namespace unless the configuration sets `allowCrossNamespaceRefs:
//! true` (Flux's `--no-cross-namespace-refs`, the other way round: refused by default).
//!
//! A release breaking the rule is stalled before anything is read for it: the source loop
//! reads no Secret for it and the release loop calls no plugin.

use crate::api::{HelmRelease, KeyRef, NamespacedRef};

/// One object a HelmRelease points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The spec field, e.g. `spec.valuesFrom[1].secretKeyRef`.
    pub field: String,
    /// `Secret`, `ConfigMap` or `HelmRelease`.
    pub kind: &'static str,
    /// The object's namespace (the HelmRelease's when the field names none).
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

/// Every object `hr` points at, in spec order.
pub fn references(hr: &HelmRelease) -> Vec<Reference> {
    let own = hr.namespace_or_default();
    let namespaced = |field: &str, kind: &'static str, r: &NamespacedRef| Reference {
        field: field.to_owned(),
        kind,
        namespace: r.namespace.clone().unwrap_or_else(|| own.clone()),
        name: r.name.clone(),
    };
    let keyed = |field: String, kind: &'static str, r: &KeyRef| Reference {
        field,
        kind,
        namespace: r.namespace.clone().unwrap_or_else(|| own.clone()),
        name: r.name.clone(),
    };
    let chart = &hr.spec.chart;
    let mut found = Vec::new();
    if let Some(r) = &chart.secret_ref {
        found.push(namespaced("spec.chart.secretRef", "Secret", r));
    }
    if let Some(r) = &chart.chart_pull_secret {
        found.push(namespaced("spec.chart.chartPullSecret", "Secret", r));
    }
    if let Some(r) = chart.source.as_ref().and_then(|s| s.secret_ref.as_ref()) {
        found.push(namespaced("spec.chart.source.secretRef", "Secret", r));
    }
    for (index, dependency) in hr.spec.depends_on.iter().enumerate() {
        found.push(namespaced(
            &format!("spec.dependsOn[{index}]"),
            "HelmRelease",
            dependency,
        ));
    }
    for (index, source) in hr.spec.values_from.iter().enumerate() {
        if let Some(r) = &source.config_map_key_ref {
            let field = format!("spec.valuesFrom[{index}].configMapKeyRef");
            found.push(keyed(field, "ConfigMap", r));
        }
        if let Some(r) = &source.secret_key_ref {
            let field = format!("spec.valuesFrom[{index}].secretKeyRef");
            found.push(keyed(field, "Secret", r));
        }
    }
    found
}

/// Why a HelmRelease may not be reconciled: it points at an object in another namespace
/// while the configuration refuses that.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: {} {}/{} is in another namespace than the HelmRelease ({own}); cross-namespace references are refused unless the operator's configuration sets `allowCrossNamespaceRefs: true`",
    reference.field, reference.kind, reference.namespace, reference.name
)]
pub struct CrossNamespaceRef {
    /// The first offending reference.
    pub reference: Reference,
    /// The HelmRelease's namespace.
    pub own: String,
}

/// Checks `hr` against the rule; `allow` is the configuration's `allowCrossNamespaceRefs`.
pub fn check(hr: &HelmRelease, allow: bool) -> Result<(), CrossNamespaceRef> {
    if allow {
        return Ok(());
    }
    let own = hr.namespace_or_default();
    match references(hr)
        .into_iter()
        .find(|reference| reference.namespace != own)
    {
        Some(reference) => Err(CrossNamespaceRef { reference, own }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ChartSource, HelmReleaseSpec, PluginSource, ValuesFromSource};

    fn release(spec: HelmReleaseSpec) -> HelmRelease {
        let mut hr = HelmRelease::new("web", spec);
        hr.metadata.namespace = Some("team-a".into());
        hr
    }

    fn in_ns(name: &str, namespace: Option<&str>) -> NamespacedRef {
        NamespacedRef {
            name: name.into(),
            namespace: namespace.map(str::to_owned),
        }
    }

    fn key_ref(name: &str, namespace: Option<&str>) -> KeyRef {
        KeyRef {
            name: name.into(),
            namespace: namespace.map(str::to_owned),
            ..KeyRef::default()
        }
    }

    #[test]
    fn references_in_the_own_namespace_pass_whether_named_or_not() {
        let hr = release(HelmReleaseSpec {
            chart: ChartSource {
                git: Some("https://h/r.git".into()),
                secret_ref: Some(in_ns("git-auth", None)),
                ..ChartSource::default()
            },
            values_from: vec![ValuesFromSource {
                secret_key_ref: Some(key_ref("vals", Some("team-a"))),
                ..ValuesFromSource::default()
            }],
            ..HelmReleaseSpec::default()
        });
        assert_eq!(references(&hr).len(), 2);
        assert!(references(&hr).iter().all(|r| r.namespace == "team-a"));
        assert_eq!(check(&hr, false), Ok(()));
    }

    #[test]
    fn the_first_reference_elsewhere_is_named_with_its_field() {
        let hr = release(HelmReleaseSpec {
            chart: ChartSource {
                source: Some(PluginSource {
                    kind: "oci".into(),
                    spec: serde_json::json!({}),
                    secret_ref: Some(in_ns("registry", None)),
                }),
                ..ChartSource::default()
            },
            values_from: vec![
                ValuesFromSource {
                    config_map_key_ref: Some(key_ref("shared", None)),
                    ..ValuesFromSource::default()
                },
                ValuesFromSource {
                    secret_key_ref: Some(key_ref("db", Some("team-b"))),
                    ..ValuesFromSource::default()
                },
            ],
            ..HelmReleaseSpec::default()
        });
        let refused = check(&hr, false).unwrap_err();
        assert_eq!(refused.reference.field, "spec.valuesFrom[1].secretKeyRef");
        let message = refused.to_string();
        assert!(
            message.starts_with("spec.valuesFrom[1].secretKeyRef: Secret team-b/db is in another namespace than the HelmRelease (team-a)"),
            "{message}"
        );
        assert!(
            message.contains("allowCrossNamespaceRefs: true"),
            "{message}"
        );
        assert_eq!(check(&hr, true), Ok(()));
    }

    #[test]
    fn chart_credentials_elsewhere_are_refused_too() {
        for (chart, field) in [
            (
                ChartSource {
                    git: Some("https://h/r.git".into()),
                    secret_ref: Some(in_ns("auth", Some("infra"))),
                    ..ChartSource::default()
                },
                "spec.chart.secretRef",
            ),
            (
                ChartSource {
                    repository: Some("https://charts/".into()),
                    name: Some("web".into()),
                    chart_pull_secret: Some(in_ns("auth", Some("infra"))),
                    ..ChartSource::default()
                },
                "spec.chart.chartPullSecret",
            ),
        ] {
            let hr = release(HelmReleaseSpec {
                chart,
                ..HelmReleaseSpec::default()
            });
            let refused = check(&hr, false).unwrap_err();
            assert_eq!(refused.reference.field, field);
            assert_eq!(refused.reference.kind, "Secret");
            assert_eq!(refused.reference.namespace, "infra");
        }
    }
}
