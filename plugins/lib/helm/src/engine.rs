//! Helm's template engine: every template of every enabled chart registered under its full
//! path in one template set, parsed deepest-first (so the root chart's `define`s win),
//! executed with `missingkey=zero` against per-chart objects (`.Values` scoped to the
//! subchart, `.Chart`, `.Files`, `.Release`, `.Capabilities`, `.Template`, `.Subcharts`),
//! `<no value>` removed, and errors reported as Helm words them.

use std::collections::BTreeMap;
use std::rc::Rc;

use capstan_gotmpl::value::{Map, Value};
use capstan_gotmpl::{Limits, MissingKey, Template, TemplateError};

mod ahead;

use crate::chart::{Chart, Metadata};
use crate::funcs::{CryptoOffload, LookupFn, WARN_END, WARN_START, helm_functions};
use crate::objects::{Capabilities, Files};

/// The release a render is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseInfo {
    /// Release name.
    pub name: String,
    /// Release namespace.
    pub namespace: String,
    /// Revision being rendered.
    pub revision: i64,
    /// Whether this is an install.
    pub is_install: bool,
    /// Whether this is an upgrade.
    pub is_upgrade: bool,
}

impl Default for ReleaseInfo {
    fn default() -> Self {
        ReleaseInfo {
            name: "release-name".into(),
            namespace: "default".into(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        }
    }
}

/// Everything a render needs besides the chart and values.
#[derive(Clone, Default)]
pub struct RenderOptions {
    /// `.Release`.
    pub release: ReleaseInfo,
    /// `.Capabilities`.
    pub capabilities: Capabilities,
    /// `missingkey=error` (lint `--strict`).
    pub strict: bool,
    /// Execution bounds.
    pub limits: Limits,
    /// `lookup` implementation; `None` gives `{}` as `helm template` does.
    pub lookup: Option<LookupFn>,
    /// Where the certificate functions get RSA keys and signatures, and `bcrypt`/`htpasswd`
    /// their hashes; the default makes them in-process.
    pub crypto: CryptoOffload,
    /// Post-renderer run between rendering and sorting (`--post-renderer`); `None` for
    /// none.
    pub post_render: Option<crate::postrender::PostRenderFn>,
    /// Leave what rendering built (the parsed template set, the chart's values as
    /// templates saw them) unfreed when it ends, for a caller whose memory is discarded
    /// right after: a component instance, which lives for one call, or a one-shot process.
    /// Freeing thousands of parse-tree nodes and value maps one by one is then wasted work
    /// (perf: about a sixth of bitnami/mastodon's native render with glibc's malloc; in the
    /// component, whose allocator frees cheaply, skipping it saved 3 %). Each render that
    /// skips it keeps its memory until the caller's ends, so long-lived callers, and
    /// callers rendering many times, leave it `false`.
    pub skip_teardown: bool,
}

/// A rendering failure, worded as Helm words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A template did not parse.
    #[error("parse error at ({location}): {message}")]
    Parse {
        /// `file:line`.
        location: String,
        /// Go's message.
        message: String,
    },
    /// `required` or `fail`.
    #[error("execution error at ({location}): {message}")]
    Failed {
        /// `file:line:col`.
        location: String,
        /// The chart's message.
        message: String,
    },
    /// A function's own error (`error calling index: index out of range: 9`), in Go's
    /// words: Helm's reformatting walks Go's error chain and gives up, printing Go's text as
    /// it is, when it reaches an error that is not a template error (the function's, which
    /// Go wraps as `error calling NAME: %w`).
    #[error("template: {location}: executing {template:?} at <{context}>: {message}")]
    Function {
        /// `file:line:col`.
        location: String,
        /// Template being executed.
        template: String,
        /// The failing node.
        context: String,
        /// `error calling NAME: ` and the function's message.
        message: String,
    },
    /// Any other execution error.
    #[error("{location}\n  executing {template:?} at <{context}>:\n    {message}")]
    Exec {
        /// `file:line:col`.
        location: String,
        /// Template being executed.
        template: String,
        /// The failing node.
        context: String,
        /// What went wrong.
        message: String,
    },
}

/// Helm 2's `.Release.Time`: a `*timestamp.Timestamp` (fields `Seconds`, `Nanos`; printed
/// in protobuf's text form).
struct ProtoTimestamp {
    seconds: i64,
    nanos: i64,
}

impl capstan_gotmpl::value::Object for ProtoTimestamp {
    fn type_name(&self) -> String {
        "*timestamp.Timestamp".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Seconds" => Some(Value::Int64(self.seconds)),
            "Nanos" => Some(Value::Int64(self.nanos)),
            _ => None,
        }
    }
    fn format(&self) -> String {
        format!("seconds:{} nanos:{} ", self.seconds, self.nanos)
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert("seconds".into(), Value::Int64(self.seconds));
        map.insert("nanos".into(), Value::Int64(self.nanos));
        Value::from(map)
    }
}

/// Helm's `ToRenderValues` top-level object for a chart and its coalesced values.
pub fn render_values(chart: &Chart, values: &Value, options: &RenderOptions) -> Value {
    let release = &options.release;
    let mut release_map = Map::new();
    release_map.insert("Name".into(), Value::from(release.name.as_str()));
    release_map.insert("Namespace".into(), Value::from(release.namespace.as_str()));
    release_map.insert("IsUpgrade".into(), Value::Bool(release.is_upgrade));
    release_map.insert("IsInstall".into(), Value::Bool(release.is_install));
    release_map.insert("Revision".into(), Value::Int(release.revision));
    let helm2 = options.capabilities.tiller_version.is_some();
    release_map.insert(
        "Service".into(),
        Value::from(if helm2 { "Tiller" } else { "Helm" }),
    );
    if helm2 {
        // Helm 2 also tells charts when the release was rendered (a protobuf Timestamp).
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        release_map.insert(
            "Time".into(),
            Value::Object(std::rc::Rc::new(ProtoTimestamp {
                seconds: i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
                nanos: i64::from(now.subsec_nanos()),
            })),
        );
    }
    let mut top = Map::new();
    top.insert("Chart".into(), metadata_as_map(&chart.metadata));
    top.insert("Capabilities".into(), options.capabilities.to_value());
    top.insert("Release".into(), Value::from(release_map));
    top.insert("Values".into(), values.clone());
    Value::from(top)
}

/// Go's `structToMap` of chart metadata, the `.Chart` object: Go field names, slices always
/// lists (empty rather than nil), nested structs as maps.
pub fn metadata_as_map(metadata: &Metadata) -> Value {
    let strings = |items: &[String]| {
        Value::from(
            items
                .iter()
                .map(|s| Value::from(s.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    let mut map = Map::new();
    map.insert("Name".into(), Value::from(metadata.name.as_str()));
    map.insert("Home".into(), Value::from(metadata.home.as_str()));
    map.insert("Sources".into(), strings(&metadata.sources));
    map.insert("Version".into(), Value::from(metadata.version.as_str()));
    map.insert(
        "Description".into(),
        Value::from(metadata.description.as_str()),
    );
    map.insert("Keywords".into(), strings(&metadata.keywords));
    let maintainers = metadata
        .maintainers
        .iter()
        .map(|m| {
            let mut entry = Map::new();
            entry.insert("Name".into(), Value::from(m.name.as_str()));
            entry.insert("Email".into(), Value::from(m.email.as_str()));
            entry.insert("URL".into(), Value::from(m.url.as_str()));
            Value::from(entry)
        })
        .collect::<Vec<_>>();
    map.insert("Maintainers".into(), Value::from(maintainers));
    map.insert("Icon".into(), Value::from(metadata.icon.as_str()));
    map.insert(
        "APIVersion".into(),
        Value::from(metadata.api_version.as_str()),
    );
    map.insert("Condition".into(), Value::from(metadata.condition.as_str()));
    map.insert("Tags".into(), Value::from(metadata.tags.as_str()));
    map.insert(
        "AppVersion".into(),
        Value::from(metadata.app_version.as_str()),
    );
    map.insert("Deprecated".into(), Value::Bool(metadata.deprecated));
    let annotations: Map = metadata
        .annotations
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    map.insert("Annotations".into(), Value::from(annotations));
    map.insert(
        "KubeVersion".into(),
        Value::from(metadata.kube_version.as_str()),
    );
    let dependencies = metadata
        .dependencies
        .iter()
        .flatten()
        .map(|d| {
            let mut entry = Map::new();
            entry.insert("Name".into(), Value::from(d.name.as_str()));
            entry.insert("Version".into(), Value::from(d.version.as_str()));
            entry.insert("Repository".into(), Value::from(d.repository.as_str()));
            entry.insert("Condition".into(), Value::from(d.condition.as_str()));
            entry.insert("Tags".into(), strings(&d.tags));
            entry.insert("Enabled".into(), Value::Bool(d.enabled));
            entry.insert("ImportValues".into(), Value::from(d.import_values.clone()));
            entry.insert("Alias".into(), Value::from(d.alias.as_str()));
            Value::from(entry)
        })
        .collect::<Vec<_>>();
    map.insert("Dependencies".into(), Value::from(dependencies));
    map.insert("Type".into(), Value::from(metadata.chart_type.as_str()));
    Value::from(map)
}

struct Renderable<'chart> {
    /// The template's text, borrowed from the chart unless it had to be made valid UTF-8.
    text: std::borrow::Cow<'chart, str>,
    /// The per-chart object shared by all its templates (Helm sets `.Template` on it).
    vals: Value,
    base_path: String,
}

/// Helm's `Values.Table(name)`: the sub-map under `key`, when it is a map.
fn table(value: &Value, key: &str) -> Option<Value> {
    let Value::Map(map) = value else {
        return None;
    };
    match map.borrow().get(key) {
        Some(v @ Value::Map(_)) => Some(v.clone()),
        _ => None,
    }
}

fn collect_templates<'chart>(
    chart: &'chart Chart,
    templates: &mut BTreeMap<String, Renderable<'chart>>,
    parent: &Value,
) -> Value {
    let Value::Map(parent_map) = parent else {
        return Value::Nil;
    };
    let parent_map = parent_map.borrow();
    let get = |k: &str| parent_map.get(k).cloned().unwrap_or_default();
    let mut chart_map = match metadata_as_map(&chart.metadata) {
        Value::Map(m) => m.borrow().clone(),
        _ => Map::new(),
    };
    chart_map.insert("IsRoot".into(), Value::Bool(chart.is_root()));
    let subcharts = Value::new_map();
    let values = if chart.is_root() {
        get("Values")
    } else {
        table(&get("Values"), chart.name()).unwrap_or_else(Value::new_map)
    };
    let mut next = Map::new();
    next.insert("Chart".into(), Value::from(chart_map));
    next.insert(
        "Files".into(),
        Value::Object(Rc::new(Files::new(chart.files.iter().cloned()))),
    );
    next.insert("Release".into(), get("Release"));
    next.insert("Capabilities".into(), get("Capabilities"));
    next.insert("Values".into(), values);
    next.insert("Subcharts".into(), subcharts.clone());
    drop(parent_map);
    let next = Value::from(next);
    for child in chart.dependencies() {
        let child_vals = collect_templates(child, templates, &next);
        if let Value::Map(subs) = &subcharts {
            subs.borrow_mut()
                .insert(child.name().to_owned(), child_vals);
        }
    }
    let full_path = chart.chart_full_path();
    for template in &chart.templates {
        if chart.is_library() && !basename(&template.name).starts_with('_') {
            continue;
        }
        templates.insert(
            format!("{full_path}/{}", template.name),
            Renderable {
                text: String::from_utf8_lossy(&template.data),
                vals: next.clone(),
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    next
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Helm's parse order: more `/` first, then reverse lexicographic.
fn sort_templates(names: &mut [String]) {
    names.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
}

/// Render every template of `chart` (already processed for dependencies) with `top` from
/// [`render_values`]. Returns rendered text by template path, partials excluded.
pub fn render(
    chart: &Chart,
    top: &Value,
    options: &RenderOptions,
) -> Result<BTreeMap<String, String>, RenderError> {
    let mut templates = BTreeMap::new();
    collect_templates(chart, &mut templates, top);
    let mut order: Vec<String> = templates.keys().cloned().collect();
    sort_templates(&mut order);
    let mut crypto = options.crypto.clone();
    let mut foresight = options
        .crypto
        .bcrypt_start
        .clone()
        .and_then(|start| ahead::start_foreseen_hashes(&templates, &order, options, start));
    if let Some(foresight) = &foresight {
        crypto.bcrypt = Some(foresight.finishing(options.crypto.bcrypt.clone()));
    }
    let mut set = Template::new(helm_functions(options.lookup.clone(), crypto));
    set.missing_key = missing_key(options);
    set.limits = options.limits;
    if let Some(foresight) = &foresight {
        set.reuse_parses_of(&foresight.parsed);
    }
    for name in &order {
        let renderable = &templates[name];
        set.parse(name, &renderable.text)
            .map_err(|e| RenderError::Parse {
                location: format!("{}:{}", e.name, e.line),
                message: last_part(&e.message),
            })?;
    }
    let mut rendered = BTreeMap::new();
    for name in &order {
        if basename(name).starts_with('_') {
            continue;
        }
        let renderable = &templates[name];
        if let Value::Map(vals) = &renderable.vals {
            let mut template = Map::new();
            template.insert("Name".into(), Value::from(name.as_str()));
            template.insert(
                "BasePath".into(),
                Value::from(renderable.base_path.as_str()),
            );
            vals.borrow_mut()
                .insert("Template".into(), Value::from(template));
        }
        let draws = foresight.as_mut().and_then(|f| f.draws.remove(name));
        let output = match draws {
            Some(draws) => {
                capstan_sprig::replay_random(draws, || set.execute(name, renderable.vals.clone()))
            }
            None => set.execute(name, renderable.vals.clone()),
        }
        .map_err(exec_error)?;
        rendered.insert(name.clone(), output.replace("<no value>", ""));
    }
    if options.skip_teardown {
        std::mem::forget(set);
        std::mem::forget(templates);
        std::mem::forget(foresight);
    }
    Ok(rendered)
}

/// How missing map keys print (`--strict` makes them errors).
fn missing_key(options: &RenderOptions) -> MissingKey {
    if options.strict {
        MissingKey::Error
    } else {
        MissingKey::Zero
    }
}

/// What Helm keeps of a parse error (`cleanupParseError`): Go's message split on `": "`, the
/// last piece only (`bad number syntax: "3k"` is shown as `"3k"`).
fn last_part(message: &str) -> String {
    message.rsplit(": ").next().unwrap_or(message).to_owned()
}

/// Whether an execution error is a function's own error, which Go wraps as `error calling
/// NAME: %w` around a plain error. Errors from nested templates (`include`, `tpl`: text
/// with `template: ` in it) are left to the reformatted form.
fn is_function_error(message: &str) -> bool {
    message
        .strip_prefix("error calling ")
        .and_then(|rest| rest.split_once(": "))
        .is_some_and(|(_, inner)| !inner.contains("template: "))
}

fn exec_error(error: TemplateError) -> RenderError {
    match error {
        TemplateError::Exec(e) => {
            let location = format!("{}:{}:{}", e.parse_name, e.line, e.col);
            if let Some(start) = e.message.find(WARN_START)
                && let Some(end) = e.message.rfind(WARN_END)
                && end >= start + WARN_START.len()
            {
                return RenderError::Failed {
                    location,
                    message: e.message[start + WARN_START.len()..end].to_owned(),
                };
            }
            if is_function_error(&e.message) {
                return RenderError::Function {
                    location,
                    template: e.name,
                    context: e.context,
                    message: e.message,
                };
            }
            RenderError::Exec {
                location,
                template: e.name,
                context: e.context,
                message: e.message,
            }
        }
        TemplateError::Parse(e) => RenderError::Parse {
            location: format!("{}:{}", e.name, e.line),
            message: last_part(&e.message),
        },
        TemplateError::NotFound(name) => RenderError::Exec {
            location: name.clone(),
            template: name,
            context: String::new(),
            message: "template not found".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(message: &str) -> TemplateError {
        TemplateError::Exec(capstan_gotmpl::exec::ExecError {
            name: "snip/templates/t.yaml".into(),
            parse_name: "snip/templates/t.yaml".into(),
            line: 1,
            col: 3,
            context: "index .Values.list 9".into(),
            message: message.into(),
        })
    }

    /// Helm v4.2.3's messages (the parity corpus's snippets `index-out-of-range` and
    /// `nil-chain`).
    #[test]
    fn function_errors_keep_gos_text_and_others_are_reformatted() {
        assert_eq!(
            exec_error(exec("error calling index: index out of range: 9")).to_string(),
            "template: snip/templates/t.yaml:1:3: executing \"snip/templates/t.yaml\" at <index .Values.list 9>: error calling index: index out of range: 9"
        );
        assert_eq!(
            exec_error(exec("nil pointer evaluating interface {}.deeper")).to_string(),
            "snip/templates/t.yaml:1:3\n  executing \"snip/templates/t.yaml\" at <index .Values.list 9>:\n    nil pointer evaluating interface {}.deeper"
        );
        // An included template's error stays in the reformatted form.
        let nested = "error calling include: template: snip/templates/_h.tpl:1:2: executing \"x\" at <.a.b>: nil pointer evaluating interface {}.b";
        assert!(matches!(exec_error(exec(nested)), RenderError::Exec { .. }));
    }
}
