use serde_json::json;

use super::*;
use capstan_api::{HelmReleaseSpec, ImageOverride, PatchTarget, PostRenderer};

fn release(
    post_renderers: Vec<PostRenderer>,
    common: Option<CommonMetadata>,
    strategy: Option<PostRenderStrategy>,
) -> HelmRelease {
    let mut hr = HelmRelease::new(
        "web",
        HelmReleaseSpec {
            post_renderers,
            common_metadata: common,
            post_render_strategy: strategy,
            ..HelmReleaseSpec::default()
        },
    );
    hr.metadata.namespace = Some("apps".into());
    hr
}

fn kustomize(patches: &[(&str, Option<PatchTarget>)], images: Vec<ImageOverride>) -> PostRenderer {
    PostRenderer {
        kustomize: Some(KustomizePostRenderer {
            patches: patches
                .iter()
                .map(|(patch, target)| KustomizePatch {
                    patch: (*patch).to_owned(),
                    target: target.clone(),
                })
                .collect(),
            images,
        }),
        plugin: None,
    }
}

fn documents() -> Vec<Document> {
    vec![
        Document {
            source: "web/templates/deployment.yaml".into(),
            hook: false,
            object: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"team": "chart"}},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}),
        },
        Document {
            source: "web/templates/job.yaml".into(),
            hook: true,
            object: json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "labels": {"app": "m"},
                "annotations": {"helm.sh/hook": "pre-install"}},
                "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "nginx:1.25"}]}}}}),
        },
    ]
}

/// A plugin step that is never configured: the plugins of a release without any.
struct NoPlugin;

impl PluginStep for NoPlugin {
    fn name(&self) -> &str {
        "none"
    }

    fn run<'a>(
        &'a self,
        _documents: &'a [Document],
        _args: &'a [String],
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Document>, String>> + Send + 'a>> {
        Box::pin(async { Err("no plugin is configured".to_owned()) })
    }
}

fn no_plugins() -> BTreeMap<String, Arc<NoPlugin>> {
    BTreeMap::new()
}

fn run(hr: &HelmRelease) -> Result<Vec<Document>, PostRenderError> {
    let pipeline = Pipeline::for_release(hr, &no_plugins()).unwrap().unwrap();
    futures::executor::block_on(pipeline.run(documents()))
}

#[test]
fn nothing_to_do_is_no_pipeline() {
    assert!(
        Pipeline::for_release(&release(vec![], None, None), &no_plugins())
            .unwrap()
            .is_none()
    );
    assert!(
        Pipeline::for_release(
            &release(vec![], Some(CommonMetadata::default()), None),
            &no_plugins()
        )
        .unwrap()
        .is_none()
    );
}

#[test]
fn patches_images_and_common_metadata_apply_in_order_to_hooks_too() {
    let hr = release(
        vec![kustomize(
            &[
                (
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n",
                    None,
                ),
                (
                    "- op: add\n  path: /metadata/labels/patched\n  value: \"yes\"\n",
                    Some(PatchTarget {
                        kind: Some("Deployment|Job".into()),
                        ..PatchTarget::default()
                    }),
                ),
            ],
            vec![ImageOverride {
                name: "nginx".into(),
                new_tag: Some("1.27".into()),
                ..ImageOverride::default()
            }],
        )],
        Some(CommonMetadata {
            labels: [("team".to_owned(), "platform".to_owned())].into(),
            annotations: [("owner".to_owned(), "ops".to_owned())].into(),
        }),
        None,
    );
    let out = run(&hr).unwrap();
    let deployment = &out.iter().find(|d| !d.hook).unwrap().object;
    let job = &out.iter().find(|d| d.hook).unwrap().object;
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        deployment["metadata"]["labels"],
        json!({"team": "platform", "patched": "yes"})
    );
    assert_eq!(
        deployment["metadata"]["annotations"],
        json!({"owner": "ops"})
    );
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(job["metadata"]["labels"]["patched"], "yes");
}

#[test]
fn nohooks_leaves_hooks_alone_and_separate_reaches_both() {
    let images = vec![ImageOverride {
        name: "nginx".into(),
        new_name: Some("mirror/nginx".into()),
        ..ImageOverride::default()
    }];
    let image_of = |docs: &[Document], hook: bool| {
        docs.iter().find(|d| d.hook == hook).unwrap().object["spec"]["template"]["spec"]["containers"][0]["image"].clone()
    };
    let out = run(&release(
        vec![kustomize(&[], images.clone())],
        None,
        Some(PostRenderStrategy::Nohooks),
    ))
    .unwrap();
    assert_eq!(image_of(&out, true), "nginx:1.25");
    assert_eq!(image_of(&out, false), "mirror/nginx:1.25");
    let out = run(&release(
        vec![kustomize(&[], images)],
        None,
        Some(PostRenderStrategy::Separate),
    ))
    .unwrap();
    assert_eq!(image_of(&out, true), "mirror/nginx:1.25");
    assert_eq!(image_of(&out, false), "mirror/nginx:1.25");
}

#[test]
fn a_delete_patch_drops_the_object() {
    let hr = release(
        vec![kustomize(
            &[(
                "$patch: delete\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n",
                None,
            )],
            vec![],
        )],
        None,
        None,
    );
    let out = run(&hr).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].object["kind"], "Deployment");
}

#[test]
fn bad_patches_are_refused_naming_renderer_and_patch() {
    let refused = |patch: &str, target: Option<PatchTarget>| {
        let hr = release(
            vec![
                kustomize(&[], vec![]),
                kustomize(
                    &[
                        (
                            "{}",
                            Some(PatchTarget {
                                kind: Some("Deployment".into()),
                                ..PatchTarget::default()
                            }),
                        ),
                        (patch, target),
                    ],
                    vec![],
                ),
            ],
            None,
            None,
        );
        match Pipeline::for_release(&hr, &no_plugins()) {
            Err(e) => e.to_string(),
            Ok(Some(p)) => futures::executor::block_on(p.run(documents()))
                .unwrap_err()
                .to_string(),
            Ok(None) => unreachable!("a pipeline was asked for"),
        }
    };
    assert_eq!(
        refused("- op: remove\n  path: /spec/x\n", None),
        "postRenderers[1].kustomize.patches[1]: a JSON 6902 patch (a list of operations) needs a target"
    );
    let missing = refused(
        "- op: remove\n  path: /spec/nothing\n",
        Some(PatchTarget {
            kind: Some("Deployment".into()),
            ..PatchTarget::default()
        }),
    );
    assert!(
        missing.starts_with("postRenderers[1].kustomize.patches[1]: on Deployment web:"),
        "{missing}"
    );
    let unnamed = refused(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec: {}\n",
        None,
    );
    assert!(
        unnamed.contains("no object is Service web (v1)"),
        "{unnamed}"
    );
    let not_yaml = refused("a: [", None);
    assert!(
        not_yaml.starts_with("postRenderers[1].kustomize.patches[1]: the patch is not YAML"),
        "{not_yaml}"
    );
}
