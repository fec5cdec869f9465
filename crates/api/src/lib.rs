//! Capstan's API types, without IO. The `HelmRelease` API (`helm.capstan.dev/v1alpha1`): spec
//! field names and defaults of the Flux Helm Operator's `helm.fluxcd.io/v1`, plus `backend`,
//! `chart.source`, `suspend` and fields of Flux v2's HelmRelease (`install`, `upgrade`,
//! `uninstall`, `test`, `dependsOn`, `kubeConfig`, `storageNamespace`, `postRenderers`,
//! `commonMetadata`, `driftDetection`), and a kstatus-style status. `capstan crd` prints the
//! CRD generated from these types (`deploy/crds/helmreleases.yaml`).

mod chart;
mod crd;
pub mod helm_operator;
mod names;
mod post_render;
mod remediation;
mod schema;
mod spec;
mod status;

pub use chart::*;
pub use crd::*;
pub use names::*;
pub use post_render::*;
pub use remediation::*;
pub use spec::*;
pub use status::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn release(namespace: &str, target: Option<&str>) -> HelmRelease {
        let mut hr = HelmRelease::new("podinfo", HelmReleaseSpec::default());
        hr.metadata.namespace = Some(namespace.into());
        hr.spec.target_namespace = target.map(str::to_owned);
        hr
    }

    #[test]
    fn a_git_chart_passes_its_dependency_repositories_to_the_git_kind() {
        let mut chart = ChartSource {
            git: Some("https://example.com/apps.git".into()),
            path: Some("/charts/app/".into()),
            ..ChartSource::default()
        };
        let (kind, spec, _) = chart.kind_and_spec().unwrap();
        assert_eq!(kind, "git");
        assert_eq!(
            spec,
            serde_json::json!({"url": "https://example.com/apps.git", "ref": "master", "path": "charts/app"})
        );
        chart.dependency_repositories = vec!["https://charts.example.com".into()];
        let (_, spec, _) = chart.kind_and_spec().unwrap();
        assert_eq!(
            spec["dependencyRepositories"],
            serde_json::json!(["https://charts.example.com"])
        );
    }

    #[test]
    fn release_names_default_as_the_flux_helm_operator() {
        assert_eq!(release("demo", None).release_name(), "demo-podinfo");
        assert_eq!(release("demo", Some("demo")).release_name(), "demo-podinfo");
        assert_eq!(
            release("demo", Some("apps")).release_name(),
            "demo-apps-podinfo"
        );
        let mut named = release("demo", None);
        named.spec.release_name = Some("web".into());
        assert_eq!(named.release_name(), "web");
    }

    #[test]
    fn flux_helm_operator_documents_deserialize() {
        let hr: HelmRelease = serde_yaml_ng::from_str(
            "apiVersion: helm.capstan.dev/v1alpha1\nkind: HelmRelease\nmetadata: {name: a, namespace: n}\n\
             spec:\n  chart: {git: 'https://h/r.git', ref: main, path: charts/a}\n  skipCRDs: true\n\
               \x20 valuesFrom:\n  - configMapKeyRef: {name: cm, optional: true}\n  values: {replicas: 2, image: {tag: v1}}\n\
               \x20 rollback: {enable: true, maxRetries: 2}\n",
        )
        .unwrap();
        assert_eq!(hr.spec.chart.git_ref.as_deref(), Some("main"));
        assert!(hr.spec.skip_crds);
        let from = hr.spec.values_from[0].config_map_key_ref.as_ref().unwrap();
        assert_eq!(from.key_or_default(), "values.yaml");
        assert!(from.optional);
        assert_eq!(hr.spec.values.unwrap()["image"]["tag"], "v1");
        assert_eq!(hr.spec.rollback.unwrap().max_retries, Some(2));
    }

    #[test]
    fn conditions_keep_their_transition_time_while_unchanged() {
        let mut status = HelmReleaseStatus::default();
        status.set_condition("Ready", false, "Progressing", "a", Some(1), "t1");
        status.set_condition("ChartFetched", true, "Fetched", "b", Some(1), "t1");
        status.set_condition("Ready", false, "Progressing", "c", Some(2), "t2");
        assert_eq!(
            status.condition("Ready").unwrap().last_transition_time,
            "t1"
        );
        status.set_condition("Ready", true, "Released", "d", Some(2), "t3");
        assert_eq!(
            status.condition("Ready").unwrap().last_transition_time,
            "t3"
        );
        assert_eq!(status.conditions[0].type_, "Ready");
    }

    #[test]
    fn committed_crd_is_current() {
        let committed = include_str!("../../../deploy/crds/helmreleases.yaml");
        let generated = crd_yaml().unwrap();
        assert!(
            committed == generated,
            "deploy/crds/helmreleases.yaml is stale: run `cargo run -p capstan -- crd > deploy/crds/helmreleases.yaml`"
        );
    }

    #[test]
    fn chart_crd_is_current() {
        let copy = include_str!("../../../deploy/chart/capstan/crds/helmreleases.yaml");
        let generated = crd_yaml().unwrap();
        assert!(
            copy == generated,
            "deploy/chart/capstan/crds/helmreleases.yaml is stale: run `cargo run -p capstan -- crd > deploy/chart/capstan/crds/helmreleases.yaml`"
        );
    }
}
