//! A release's post-rendering ([`Pipeline`]): its `postRenderers` (Kustomize patches and
//! image overrides, plugin steps) in their order, then its `commonMetadata`, over the
//! documents its `postRenderStrategy` selects.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use capstan_api::{
    CommonMetadata, HelmRelease, KustomizePatch, KustomizePostRenderer, PostRenderStrategy,
};
use serde_json::Value;

use crate::images;
use crate::selector::Selector;
use crate::strategic_merge;

/// One rendered document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Template file it came from.
    pub source: String,
    /// Whether it is a hook.
    pub hook: bool,
    /// The object.
    pub object: Value,
}

/// A post-renderer that failed, named as the HelmRelease names it.
#[derive(Debug, thiserror::Error)]
pub enum PostRenderError {
    /// A Kustomize patch is invalid or does not apply.
    #[error("postRenderers[{renderer}].kustomize.patches[{patch}]: {message}")]
    Patch {
        /// Index of the post-renderer.
        renderer: usize,
        /// Index of the patch.
        patch: usize,
        /// What is wrong.
        message: String,
    },
    /// A plugin post-renderer failed.
    #[error("postRenderers[{renderer}].plugin {name:?}: {message}")]
    Plugin {
        /// Index of the post-renderer.
        renderer: usize,
        /// Plugin name.
        name: String,
        /// What went wrong.
        message: String,
    },
}

/// A post-renderer the embedder runs for a release's `postRenderers[].plugin` (Helm 4
/// `postrenderer/v1` plugins): documents and Helm's `--post-renderer-args` in, documents
/// out.
pub trait PluginStep: Send + Sync {
    /// The name releases give it.
    fn name(&self) -> &str;

    /// Post-render `documents` with `args`; the error says what went wrong.
    fn run<'a>(
        &'a self,
        documents: &'a [Document],
        args: &'a [String],
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Document>, String>> + Send + 'a>>;
}

/// One step of a release's post-rendering.
enum Step {
    Kustomize {
        renderer: usize,
        spec: KustomizePostRenderer,
    },
    Plugin {
        renderer: usize,
        plugin: Arc<dyn PluginStep>,
        args: Vec<String>,
    },
    CommonMetadata(CommonMetadata),
}

/// A release's post-rendering, built once per reconcile.
pub struct Pipeline {
    steps: Vec<Step>,
    strategy: PostRenderStrategy,
}

/// A post-renderer a release asks for that cannot be built (named by field).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PipelineError(pub String);

impl Pipeline {
    /// The pipeline of `hr`, or none when it asks for no post-rendering. `plugins` are the
    /// configured plugin post-renderers by name.
    pub fn for_release<P: PluginStep + 'static>(
        hr: &HelmRelease,
        plugins: &BTreeMap<String, Arc<P>>,
    ) -> Result<Option<Self>, PipelineError> {
        let mut steps = Vec::new();
        for (renderer, spec) in hr.spec.post_renderers.iter().enumerate() {
            match (&spec.kustomize, &spec.plugin) {
                (Some(kustomize), None) => {
                    for (patch, p) in kustomize.patches.iter().enumerate() {
                        parse_patch(p).map_err(|message| {
                            PipelineError(
                                PostRenderError::Patch {
                                    renderer,
                                    patch,
                                    message,
                                }
                                .to_string(),
                            )
                        })?;
                    }
                    steps.push(Step::Kustomize {
                        renderer,
                        spec: kustomize.clone(),
                    });
                }
                (None, Some(plugin)) => {
                    let found = plugins.get(&plugin.name).ok_or_else(|| {
                        PipelineError(format!(
                            "postRenderers[{renderer}].plugin: no postrenderer plugin {:?} is configured (configured: {})",
                            plugin.name,
                            if plugins.is_empty() {
                                "none".to_owned()
                            } else {
                                plugins.keys().cloned().collect::<Vec<_>>().join(", ")
                            }
                        ))
                    })?;
                    steps.push(Step::Plugin {
                        renderer,
                        plugin: Arc::clone(found) as Arc<dyn PluginStep>,
                        args: plugin.args.clone(),
                    });
                }
                _ => {
                    return Err(PipelineError(format!(
                        "postRenderers[{renderer}]: set exactly one of kustomize and plugin"
                    )));
                }
            }
        }
        if let Some(metadata) = &hr.spec.common_metadata
            && (!metadata.labels.is_empty() || !metadata.annotations.is_empty())
        {
            steps.push(Step::CommonMetadata(metadata.clone()));
        }
        Ok((!steps.is_empty()).then(|| Pipeline {
            steps,
            strategy: hr.spec.post_render_strategy.unwrap_or_default(),
        }))
    }

    /// Post-render `documents` as the strategy says.
    pub async fn run(&self, documents: Vec<Document>) -> Result<Vec<Document>, PostRenderError> {
        let (hooks, templates): (Vec<_>, Vec<_>) = documents.into_iter().partition(|d| d.hook);
        match self.strategy {
            PostRenderStrategy::Combined => {
                let mut all = hooks;
                all.extend(templates);
                self.run_stream(all).await
            }
            PostRenderStrategy::Separate => {
                let mut out = self.run_stream(hooks).await?;
                out.extend(self.run_stream(templates).await?);
                Ok(out)
            }
            PostRenderStrategy::Nohooks => {
                let mut out = hooks;
                out.extend(self.run_stream(templates).await?);
                Ok(out)
            }
        }
    }

    async fn run_stream(
        &self,
        mut documents: Vec<Document>,
    ) -> Result<Vec<Document>, PostRenderError> {
        if documents.is_empty() {
            return Ok(documents);
        }
        for step in &self.steps {
            match step {
                Step::Kustomize { renderer, spec } => {
                    for (patch, p) in spec.patches.iter().enumerate() {
                        apply_patch(&mut documents, p).map_err(|message| {
                            PostRenderError::Patch {
                                renderer: *renderer,
                                patch,
                                message,
                            }
                        })?;
                    }
                    if !spec.images.is_empty() {
                        for document in &mut documents {
                            images::override_images(&mut document.object, &spec.images);
                        }
                    }
                }
                Step::Plugin {
                    renderer,
                    plugin,
                    args,
                } => {
                    documents = plugin.run(&documents, args).await.map_err(|message| {
                        PostRenderError::Plugin {
                            renderer: *renderer,
                            name: plugin.name().to_owned(),
                            message,
                        }
                    })?;
                }
                Step::CommonMetadata(metadata) => {
                    for document in &mut documents {
                        set_common_metadata(&mut document.object, metadata);
                    }
                }
            }
        }
        Ok(documents)
    }
}

/// A patch as Kustomize reads it: a YAML list is JSON 6902, an object a strategic merge.
enum Patch {
    Json6902(json_patch::Patch),
    StrategicMerge(Value),
}

fn parse_patch(patch: &KustomizePatch) -> Result<(Patch, Option<Selector>), String> {
    let value: Value =
        serde_yaml_ng::from_str(&patch.patch).map_err(|e| format!("the patch is not YAML: {e}"))?;
    let selector = patch.target.as_ref().map(Selector::new).transpose()?;
    let parsed = match value {
        Value::Array(_) => {
            if selector.is_none() {
                return Err("a JSON 6902 patch (a list of operations) needs a target".into());
            }
            Patch::Json6902(
                serde_json::from_value(value).map_err(|e| format!("not a JSON 6902 patch: {e}"))?,
            )
        }
        Value::Object(_) => Patch::StrategicMerge(value),
        _ => {
            return Err(
                "a patch is a YAML object (strategic merge) or a list of operations (JSON 6902)"
                    .into(),
            );
        }
    };
    Ok((parsed, selector))
}

fn describe(object: &Value) -> String {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
    format!("{} {}", text("/kind"), text("/metadata/name"))
}

/// Whether an untargeted strategic merge patch names `object` (its `apiVersion`, `kind`,
/// `metadata.name` and, when it has one, `metadata.namespace`).
fn named_by(patch: &Value, object: &Value) -> bool {
    let same = |p: &str| patch.pointer(p) == object.pointer(p);
    same("/apiVersion")
        && same("/kind")
        && same("/metadata/name")
        && (patch.pointer("/metadata/namespace").is_none() || same("/metadata/namespace"))
}

/// The patch without the fields that name its target.
fn without_identity(patch: &Value) -> Value {
    let mut patch = patch.clone();
    if let Some(map) = patch.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
        if let Some(metadata) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("name");
            metadata.remove("namespace");
            if metadata.is_empty() {
                map.remove("metadata");
            }
        }
    }
    patch
}

fn apply_patch(documents: &mut Vec<Document>, patch: &KustomizePatch) -> Result<(), String> {
    let (parsed, selector) = parse_patch(patch)?;
    let selected: Vec<usize> = match (&parsed, &selector) {
        (_, Some(selector)) => documents
            .iter()
            .enumerate()
            .filter(|(_, d)| selector.matches(&d.object))
            .map(|(i, _)| i)
            .collect(),
        (Patch::StrategicMerge(value), None) => {
            let found: Vec<usize> = documents
                .iter()
                .enumerate()
                .filter(|(_, d)| named_by(value, &d.object))
                .map(|(i, _)| i)
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "no object is {} ({}); give the patch a target, or name an object of the release",
                    describe(value),
                    value
                        .pointer("/apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("no apiVersion")
                ));
            }
            found
        }
        (Patch::Json6902(_), None) => Vec::new(),
    };
    let mut deleted = Vec::new();
    for &i in &selected {
        let object = &mut documents[i].object;
        match &parsed {
            Patch::Json6902(operations) => json_patch::patch(object, operations)
                .map_err(|e| format!("on {}: {e}", describe(object)))?,
            Patch::StrategicMerge(value) => {
                if value.get("$patch").and_then(Value::as_str) == Some("delete") {
                    deleted.push(i);
                    continue;
                }
                let builtin = strategic_merge::is_builtin(
                    object
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                );
                strategic_merge::apply(object, &without_identity(value), builtin)
                    .map_err(|e| format!("on {}: {e}", describe(object)))?;
            }
        }
    }
    for i in deleted.into_iter().rev() {
        documents.remove(i);
    }
    Ok(())
}

/// Put `metadata`'s labels and annotations on `object`, over the chart's.
fn set_common_metadata(object: &mut Value, metadata: &CommonMetadata) {
    let Some(object) = object.as_object_mut() else {
        return;
    };
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    for (field, entries) in [
        ("labels", &metadata.labels),
        ("annotations", &metadata.annotations),
    ] {
        if entries.is_empty() {
            continue;
        }
        let map = meta
            .entry(field)
            .or_insert_with(|| Value::Object(Default::default()));
        if !map.is_object() {
            *map = Value::Object(Default::default());
        }
        if let Some(map) = map.as_object_mut() {
            for (k, v) in entries {
                map.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests;
