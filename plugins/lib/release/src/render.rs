//! Rendering for `template` and `sync`: load the chart archive, decode the user's values,
//! and render exactly as Helm does, with the errors Helm would give.

use capstan_gotmpl::value::Value;
use capstan_helm::chart::Chart;
use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::{Assembled, hooks_text, manifest_text};
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ErrorCode, ReleaseId,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    ChartFile, ChartInput, Rendered, TemplateOptions, ValueLayer,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::folder_template::UnreadFile;

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// What a render of a release produced, with what the release record needs.
pub struct Render {
    /// The root chart after dependency processing, as Helm stores it in the record (only
    /// when asked for with [`Request::for_record`]).
    pub chart: Option<Chart>,
    /// The user's values (the record's `config`).
    pub user_values: Value,
    /// Manifests, hooks and notes.
    pub assembled: Assembled,
}

/// One render request.
pub struct Request<'a> {
    /// Which release.
    pub release: &'a ReleaseId,
    /// The user's value layers, in order.
    pub values: &'a [ValueLayer],
    /// `.Capabilities`.
    pub capabilities: Capabilities,
    /// `.Release.Revision`.
    pub revision: u32,
    /// `.Release.IsUpgrade` (otherwise `IsInstall`).
    pub is_upgrade: bool,
    /// Keep the processed chart for a release record.
    pub for_record: bool,
    /// `lookup`; `None` gives `{}` (`helm template`).
    pub lookup: Option<capstan_helm::funcs::LookupFn>,
    /// Run the release's post-renderers through the host's `post-render` import.
    pub post_render: bool,
}

/// A chart and values as a release record keeps them, before any rendering.
pub struct Input {
    /// The root chart after dependency processing.
    pub chart: Option<Chart>,
    /// The user's values.
    pub user_values: Value,
}

/// Load the chart archive and the user's values, and process the chart's dependencies as
/// the release record stores the chart (no rendering).
pub fn prepare(chart: &ChartArtifact, values: &[ValueLayer]) -> Result<Input, Error> {
    let loaded = load(chart)?;
    let user_values = crate::values::merge(values)?;
    let mut chart = loaded;
    capstan_helm::dependencies::process_dependencies(&mut chart, &user_values)
        .map_err(|e| invalid(e.to_string()))?;
    Ok(Input {
        chart: Some(chart),
        user_values,
    })
}

/// The chart of the artifact; a chart Helm refuses fails with Helm's own message (`helm
/// template` prints it as is, and so does `capstan template`).
fn load(chart: &ChartArtifact) -> Result<Chart, Error> {
    capstan_helm::load::load_archive(&chart.archive).map_err(|e| invalid(e.to_string()))
}

/// RSA keys and signatures for the certificate functions, and bcrypt hashes, from the
/// host's `crypto` import, which makes them natively (several times faster than this
/// component could: WebAssembly has no 64×64-bit multiplication, and bcrypt's table
/// lookups pay for bounds it cannot see).
fn host_crypto() -> capstan_helm::funcs::CryptoOffload {
    use capstan_plugin_sdk::backend::capstan::plugin::crypto;
    capstan_helm::funcs::CryptoOffload {
        rsa_keys: Some(std::rc::Rc::new(|bits| {
            let bits =
                u32::try_from(bits).map_err(|_| format!("unsupported RSA key size {bits}"))?;
            crypto::generate_rsa_key(bits).map_err(|e| e.message)
        })),
        rsa_sign: Some(std::rc::Rc::new(|key, message| {
            crypto::sign_rsa_sha256(key, message).map_err(|e| e.message)
        })),
        bcrypt: Some(std::rc::Rc::new(|password, cost| {
            crypto::bcrypt_hash(password, cost).map_err(|e| e.message)
        })),
        // The host hashes on another core while the render goes on.
        bcrypt_start: Some(std::rc::Rc::new(|password, cost| {
            let handle = crypto::bcrypt_hash_start(password, cost).map_err(|e| e.message)?;
            let finish: capstan_helm::funcs::PendingHash =
                Box::new(move || crypto::bcrypt_hash_finish(handle).map_err(|e| e.message));
            Ok(finish)
        })),
    }
}

/// The host's `post-render` import as the engine's post-renderer. Documents cross as JSON
/// read by Helm's YAML rules here, and come back as YAML written by go-yaml's rules (keys
/// sorted, as `sigs.k8s.io/yaml` writes objects), so no scalar changes type on the way.
fn host_post_render() -> capstan_helm::postrender::PostRenderFn {
    use capstan_helm::postrender::Document;
    use capstan_plugin_sdk::backend::capstan::plugin::post_render;
    std::rc::Rc::new(|documents: Vec<Document>| {
        let mut sent = Vec::with_capacity(documents.len());
        for document in documents {
            let value = capstan_goyaml::from_yaml(&document.text)
                .map_err(|e| format!("{}: YAML parse error: {e}", document.source))?;
            if matches!(value, Value::Nil) {
                continue;
            }
            let object = capstan_gotmpl::json::to_json(&value)
                .map_err(|e| format!("{}: cannot convert to JSON: {e}", document.source))?;
            sent.push(post_render::Document {
                source: document.source,
                hook: document.hook,
                object,
            });
        }
        let Some(returned) = post_render::run(&sent).map_err(|e| e.message)? else {
            return Ok(None);
        };
        returned
            .into_iter()
            .map(|d| {
                let value = capstan_helm::values_json::from_typed_json(&d.object)
                    .map_err(|e| format!("post-rendered {}: {e}", d.source))?;
                let text = capstan_goyaml::to_yaml(&value)
                    .map_err(|e| format!("post-rendered {}: {e}", d.source))?;
                Ok(Document {
                    source: d.source,
                    hook: d.hook,
                    text,
                })
            })
            .collect::<Result<Vec<_>, String>>()
            .map(Some)
    })
}

/// `capabilities` as the component's Helm major renders them (Helm 2: Tiller's version).
fn flavored(mut capabilities: Capabilities) -> Capabilities {
    if crate::flavor::current() == crate::flavor::Flavor::Helm2 {
        capabilities.tiller_version = Some(crate::flavor::TILLER_VERSION.into());
    }
    capabilities
}

/// Render `chart` for a release.
pub fn render(chart: &ChartArtifact, request: Request<'_>) -> Result<Render, Error> {
    render_loaded(load(chart)?, request)
}

/// [`render`] of a chart already loaded.
fn render_loaded(loaded: Chart, request: Request<'_>) -> Result<Render, Error> {
    let user_values = crate::values::merge(request.values)?;
    let chart = if request.for_record {
        let mut chart = loaded.clone();
        capstan_helm::dependencies::process_dependencies(&mut chart, &user_values)
            .map_err(|e| invalid(e.to_string()))?;
        Some(chart)
    } else {
        None
    };
    let render_options = RenderOptions {
        release: ReleaseInfo {
            name: request.release.name.clone(),
            namespace: request.release.namespace.clone(),
            revision: i64::from(request.revision),
            is_install: !request.is_upgrade,
            is_upgrade: request.is_upgrade,
        },
        capabilities: flavored(request.capabilities),
        crypto: host_crypto(),
        lookup: request.lookup,
        post_render: request.post_render.then(host_post_render),
        // This crate runs inside a component instance that lives for one call: its memory
        // goes when the call ends.
        skip_teardown: true,
        ..RenderOptions::default()
    };
    let assembled =
        capstan_helm::pipeline::render_chart(loaded, &user_values, &render_options, false)
            .map_err(|e| invalid(e.to_string()))?;
    Ok(Render {
        chart,
        user_values,
        assembled,
    })
}

/// Render `chart` for `release` with the value layers `values`, as `helm template` does.
pub fn template(
    release: ReleaseId,
    chart: ChartArtifact,
    values: Vec<ValueLayer>,
    options: TemplateOptions,
) -> Result<Rendered, Error> {
    template_loaded(load(&chart)?, release, values, options)
}

/// `prepare.prepare`: build what every render needs first (the chart-schema validators'
/// meta-schemas), for a host that pre-initialises the component.
pub fn prepare_instance() {
    capstan_helm::schema::prepare();
}

/// `chart-template.template-chart`: [`template`] of a chart folder or archive as given,
/// with what `package` would refuse refused the same way, without building the archive.
pub fn template_chart(
    release: ReleaseId,
    chart: ChartInput,
    values: Vec<ValueLayer>,
    options: TemplateOptions,
) -> Result<Rendered, Error> {
    let loaded = match chart {
        ChartInput::Folder(files) => {
            capstan_helm::package::load_folder(crate::package::source_files(files))
                .map_err(invalid)?
        }
        ChartInput::Archive(archive) => capstan_helm::load::load_archive(&archive)
            .map_err(|e| invalid(format!("not a chart archive: {e}")))?,
    };
    template_loaded(loaded, release, values, options)
}

/// `folder-template.template-folder`: [`template_chart`] of a chart folder passed in part,
/// the `unread` files read through the host's `folder-files` import only when loading or a
/// template needs them.
pub fn template_folder(
    release: ReleaseId,
    files: Vec<ChartFile>,
    unread: Vec<UnreadFile>,
    values: Vec<ValueLayer>,
    options: TemplateOptions,
) -> Result<Rendered, Error> {
    let loaded = capstan_helm::package::load_folder_in_part(
        crate::package::source_files(files),
        unread
            .into_iter()
            .map(|file| (file.path, file.size))
            .collect(),
        std::sync::Arc::new(HostFolderFiles),
    )
    .map_err(invalid)?;
    template_loaded(loaded, release, values, options)
}

/// The host's `folder-files` import, which reads the unread files of the folder the
/// current call renders.
struct HostFolderFiles;

impl capstan_helm::chart::FileReader for HostFolderFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        capstan_plugin_sdk::backend::capstan::plugin::folder_files::read_file(path)
            .map_err(|e| e.message)
    }
}

fn template_loaded(
    loaded: Chart,
    release: ReleaseId,
    values: Vec<ValueLayer>,
    options: TemplateOptions,
) -> Result<Rendered, Error> {
    let mut capabilities = Capabilities::default();
    if let Some(version) = &options.kube_version {
        capabilities = capabilities.with_kube_version(version).map_err(invalid)?;
    }
    capabilities
        .api_versions
        .extend(options.api_versions.iter().cloned());
    let rendered = render_loaded(
        loaded,
        Request {
            release: &release,
            values: &values,
            capabilities,
            revision: 1,
            is_upgrade: options.is_upgrade,
            for_record: false,
            lookup: None,
            post_render: false,
        },
    )?;
    let assembled = rendered.assembled;
    Ok(Rendered {
        manifest: manifest_text(&assembled.manifests),
        hooks: hooks_text(&assembled.hooks),
        notes: (!assembled.notes.is_empty()).then_some(assembled.notes),
    })
}
