//! Helm's chart model (`pkg/chart/v2`): a chart's metadata (Chart.yaml), lock file,
//! templates, default values, schema, other files and subcharts, with Helm's metadata
//! validation and string sanitising, and two views of the metadata for templates: the
//! Go-field view `.Chart` shows (`.Chart.Name`, `.Chart.AppVersion`) and the JSON view
//! `toJson .Chart` marshals.
//!
//! Chart.yaml, Chart.lock and requirements.yaml are decoded the way `sigs.k8s.io/yaml`
//! decodes them into Go structs: YAML to generic values, numbers and bools turned into
//! strings where the Go field is a string (a float as `FormatFloat(x, 'g', -1, 32)`, so
//! `appVersion: 1.10` becomes `"1.1"`), JSON field names matched exactly first and then
//! case-insensitively, unknown fields ignored, type mismatches reported as
//! `encoding/json` words them.

use std::collections::BTreeMap;
use std::sync::Arc;

use capstan_gotmpl::value::{Map, Value};

/// API version of Helm 2 era charts (dependencies in requirements.yaml).
pub const API_VERSION_V1: &str = "v1";
/// API version of Helm 3 charts.
pub const API_VERSION_V2: &str = "v2";

/// A file of a chart: its path relative to the chart root (`/`-separated) and contents.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct File {
    /// Path relative to the chart root, e.g. `templates/deployment.yaml`.
    pub name: String,
    /// Contents (a UTF-8 BOM already stripped by the loader), shared: every render gives
    /// templates the chart's files as `.Files`, and copying them there each time was two
    /// copies of every non-template file per render (half the bytes a Bitnami chart with
    /// its READMEs and changelogs reads).
    pub data: Arc<Vec<u8>>,
    /// For a file of a chart folder a host passed without reading it (`folder-template`):
    /// where its contents come from. `data` is then empty, and [`File::contents`] reads
    /// them the first time they are asked for. Only files that reach templates as `.Files`
    /// stay unread when a chart is loaded; every file the loader itself needs is read.
    pub unread: Option<Unread>,
}

impl File {
    /// A file from a name and contents.
    pub fn new(name: impl Into<String>, data: impl Into<Vec<u8>>) -> File {
        File {
            name: name.into(),
            data: Arc::new(data.into()),
            unread: None,
        }
    }

    /// A file whose contents are read from `unread` when first asked for.
    pub fn unread(name: impl Into<String>, unread: Unread) -> File {
        File {
            name: name.into(),
            data: Arc::default(),
            unread: Some(unread),
        }
    }

    /// The contents, read now if they were not. A file that cannot be read has no contents
    /// here; [`File::read_failure`] says why, and a render that met one fails with it.
    pub fn contents(&self) -> Arc<Vec<u8>> {
        match &self.unread {
            None => Arc::clone(&self.data),
            Some(unread) => unread.contents().unwrap_or_default(),
        }
    }

    /// The file with its contents in `data`, or why they could not be read.
    pub fn read_now(self) -> Result<File, String> {
        match &self.unread {
            None => Ok(self),
            Some(unread) => Ok(File {
                data: unread.contents()?,
                name: self.name,
                unread: None,
            }),
        }
    }

    /// Why an unread file's contents could not be read, once something asked for them.
    pub fn read_failure(&self) -> Option<String> {
        let unread = self.unread.as_ref()?;
        match unread.0.read.get() {
            Some(Err(message)) => Some(format!("cannot read {}: {message}", unread.0.path)),
            _ => None,
        }
    }
}

/// Reads the files of a chart folder that were passed unread.
pub trait FileReader: Send + Sync {
    /// The contents of the file at `path` (relative to the chart folder).
    fn read(&self, path: &str) -> Result<Vec<u8>, String>;
}

/// The contents of one unread file: read through its [`FileReader`] once, the first time
/// they are asked for (a UTF-8 byte order mark stripped, as the loader strips it).
#[derive(Clone)]
pub struct Unread(Arc<UnreadState>);

struct UnreadState {
    path: String,
    size: u64,
    reader: Arc<dyn FileReader>,
    read: std::sync::OnceLock<Result<Arc<Vec<u8>>, String>>,
}

impl Unread {
    /// The file at `path` of the folder `reader` reads, `size` bytes when listed.
    pub fn new(path: impl Into<String>, size: u64, reader: Arc<dyn FileReader>) -> Unread {
        Unread(Arc::new(UnreadState {
            path: path.into(),
            size,
            reader,
            read: std::sync::OnceLock::new(),
        }))
    }

    /// Size when listed.
    pub fn size(&self) -> u64 {
        self.0.size
    }

    /// The contents, read on the first call.
    pub fn contents(&self) -> Result<Arc<Vec<u8>>, String> {
        self.0
            .read
            .get_or_init(|| {
                self.0
                    .reader
                    .read(&self.0.path)
                    .map(|data| Arc::new(crate::load::strip_bom(data)))
            })
            .clone()
    }
}

impl std::fmt::Debug for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Unread({:?}, {} bytes)", self.0.path, self.0.size)
    }
}

impl PartialEq for Unread {
    fn eq(&self, other: &Unread) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Unread {}

/// A chart maintainer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Maintainer {
    /// User or organisation name.
    pub name: String,
    /// Email address.
    pub email: String,
    /// URL.
    pub url: String,
}

/// A dependency declared in Chart.yaml (or requirements.yaml, or a lock file).
#[derive(Debug, Clone, Default)]
pub struct Dependency {
    /// Chart name (after dependency processing: the alias, when one is set).
    pub name: String,
    /// Version constraint (a single version in lock files).
    pub version: String,
    /// Repository URL or `@alias`.
    pub repository: String,
    /// Comma-separated values paths that enable or disable the dependency.
    pub condition: String,
    /// Tags grouping dependencies for enabling together.
    pub tags: Vec<String>,
    /// Whether the dependency is enabled (set by dependency processing).
    pub enabled: bool,
    /// `import-values` entries as written (strings or `{child, parent}` maps); after
    /// dependency processing, every entry is a `{child, parent}` map of strings.
    pub import_values: Vec<Value>,
    /// Alias the subchart is known by.
    pub alias: String,
}

/// Chart.lock / requirements.lock.
#[derive(Debug, Clone, Default)]
pub struct Lock {
    /// When the lock was generated (RFC 3339 text as written).
    pub generated: String,
    /// Digest of the dependencies in Chart.yaml.
    pub digest: String,
    /// The locked dependencies.
    pub dependencies: Vec<Dependency>,
}

/// Chart.yaml.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// Chart name. Required.
    pub name: String,
    /// Project home page.
    pub home: String,
    /// Source code URLs.
    pub sources: Vec<String>,
    /// Chart version (SemVer). Required.
    pub version: String,
    /// One-sentence description.
    pub description: String,
    /// Keywords.
    pub keywords: Vec<String>,
    /// Maintainers.
    pub maintainers: Vec<Maintainer>,
    /// Icon URL.
    pub icon: String,
    /// Chart API version (`v1` or `v2`); a missing one is `v1`.
    pub api_version: String,
    /// Legacy top-level condition.
    pub condition: String,
    /// Legacy top-level tags.
    pub tags: String,
    /// Version of the packaged application.
    pub app_version: String,
    /// Whether the chart is deprecated.
    pub deprecated: bool,
    /// Free-form annotations.
    pub annotations: BTreeMap<String, String>,
    /// Kubernetes version constraint.
    pub kube_version: String,
    /// Declared dependencies. `None` is Go's nil slice (no `dependencies:` key, or every
    /// dependency disabled), which Helm's dependency processing treats differently from
    /// an empty list.
    pub dependencies: Option<Vec<Dependency>>,
    /// `application`, `library` or empty.
    pub chart_type: String,
}

/// A metadata validation failure, worded as Helm's (`validation: chart.metadata.name is
/// required`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("validation: {0}")]
pub struct ValidationError(pub String);

/// A chart: metadata, templates, values, files and subcharts.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    /// Chart.yaml.
    pub metadata: Metadata,
    /// Chart.lock (or requirements.lock).
    pub lock: Option<Lock>,
    /// `templates/**` files, in load order.
    pub templates: Vec<File>,
    /// Default values (values.yaml, every document merged); always a map.
    pub values: Value,
    /// values.yaml as written (for `helm show values`), when present.
    pub raw_values: Option<Vec<u8>>,
    /// values.schema.json, when present.
    pub schema: Option<Vec<u8>>,
    /// Every other file (README, crds/, .helmignore, charts/*.prov, ...).
    pub files: Vec<File>,
    dependencies: Vec<Chart>,
    /// Names of the charts above this one, root first (empty for the root chart).
    ancestors: Vec<String>,
}

impl Chart {
    /// A chart with this metadata and nothing else.
    pub fn new(metadata: Metadata) -> Chart {
        Chart {
            metadata,
            values: Value::new_map(),
            ..Chart::default()
        }
    }

    /// The chart's name (after aliasing, the alias).
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// Whether this chart is not a subchart.
    pub fn is_root(&self) -> bool {
        self.ancestors.is_empty()
    }

    /// Whether the chart is a library chart (`type: library`).
    pub fn is_library(&self) -> bool {
        self.metadata.chart_type == "library"
    }

    /// The subcharts (in load order; dependency processing may drop or alias some).
    pub fn dependencies(&self) -> &[Chart] {
        &self.dependencies
    }

    /// The first unread file of this chart or its subcharts that a render asked for and
    /// could not read, and why.
    pub fn read_failure(&self) -> Option<String> {
        self.files
            .iter()
            .find_map(File::read_failure)
            .or_else(|| self.dependencies.iter().find_map(Chart::read_failure))
    }

    /// The subcharts, mutably. Renaming one does not re-link its own subcharts: call
    /// [`Chart::set_dependencies`] after renaming.
    pub fn dependencies_mut(&mut self) -> &mut [Chart] {
        &mut self.dependencies
    }

    /// Replace the subcharts, making this chart their parent.
    pub fn set_dependencies(&mut self, charts: Vec<Chart>) {
        self.dependencies = charts;
        self.relink();
    }

    /// Add a subchart, making this chart its parent.
    pub fn add_dependency(&mut self, chart: Chart) {
        self.dependencies.push(chart);
        self.relink();
    }

    /// Take the subcharts out (they keep their parent links until re-added).
    pub(crate) fn take_dependencies(&mut self) -> Vec<Chart> {
        std::mem::take(&mut self.dependencies)
    }

    /// Point every subchart (recursively) at this chart's current name and position.
    fn relink(&mut self) {
        let mut chain = self.ancestors.clone();
        chain.push(self.metadata.name.clone());
        for child in &mut self.dependencies {
            child.ancestors = chain.clone();
            child.relink();
        }
    }

    /// Names of the parent charts, root first.
    pub fn ancestors(&self) -> &[String] {
        &self.ancestors
    }

    /// Helm's `ChartFullPath`: `root/charts/child/charts/grandchild` (alias names, so it
    /// need not exist on disk).
    pub fn chart_full_path(&self) -> String {
        let mut path = String::new();
        for ancestor in &self.ancestors {
            path.push_str(ancestor);
            path.push_str("/charts/");
        }
        path.push_str(&self.metadata.name);
        path
    }

    /// Helm's `ChartPath`: `root.child.grandchild`.
    pub fn chart_path(&self) -> String {
        let mut parts = self.ancestors.clone();
        parts.push(self.metadata.name.clone());
        parts.join(".")
    }

    /// The `crds/*.yaml|yml|json` files of this chart and then of its subcharts, each with
    /// its path prefixed by the chart's full path (Helm's `CRDObjects`).
    pub fn crd_objects(&self) -> Vec<(String, &File)> {
        let mut found = Vec::new();
        for file in &self.files {
            if file.name.starts_with("crds/") && has_manifest_extension(&file.name) {
                found.push((format!("{}/{}", self.chart_full_path(), file.name), file));
            }
        }
        for dependency in &self.dependencies {
            found.extend(dependency.crd_objects());
        }
        found
    }

    /// Validate (and sanitise) the metadata.
    pub fn validate(&mut self) -> Result<(), ValidationError> {
        self.metadata.validate()
    }

    /// `.Chart` as templates see it: a map keyed by Go field names.
    pub fn metadata_value(&self) -> Value {
        self.metadata.to_go_fields()
    }
}

fn has_manifest_extension(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    match base.rfind('.') {
        Some(dot) => {
            let extension = &base[dot..];
            [".yaml", ".yml", ".json"]
                .iter()
                .any(|e| extension.eq_ignore_ascii_case(e))
        }
        None => false,
    }
}

/// Whether Go's `unicode.IsPrint` holds for a rune that is not a space: letters, marks,
/// numbers, punctuation and symbols; not controls, format characters, private use,
/// surrogates or separators.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let code = c as u32;
    let format_or_private = matches!(code,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2
        | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let noncharacter = (0xFDD0..=0xFDEF).contains(&code) || code & 0xFFFE == 0xFFFE;
    !format_or_private && !noncharacter
}

/// Helm's `sanitizeString`: every space character becomes ` `, non-printable runes are
/// dropped.
pub fn sanitize_string(text: &str) -> String {
    text.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_go_printable(c) {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

fn sanitize_in_place(text: &mut String) {
    let clean = sanitize_string(text);
    if clean != *text {
        *text = clean;
    }
}

fn is_valid_alias(alias: &str) -> bool {
    !alias.is_empty()
        && alias
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Maintainer {
    fn sanitize(&mut self) {
        sanitize_in_place(&mut self.name);
        sanitize_in_place(&mut self.email);
        sanitize_in_place(&mut self.url);
    }
}

impl Dependency {
    /// Helm's `Dependency.Validate`: sanitise, and check the alias characters.
    pub fn validate(&mut self) -> Result<(), ValidationError> {
        sanitize_in_place(&mut self.name);
        sanitize_in_place(&mut self.version);
        sanitize_in_place(&mut self.repository);
        sanitize_in_place(&mut self.condition);
        for tag in &mut self.tags {
            sanitize_in_place(tag);
        }
        if !self.alias.is_empty() && !is_valid_alias(&self.alias) {
            return Err(ValidationError(format!(
                "dependency {:?} has disallowed characters in the alias",
                self.name
            )));
        }
        Ok(())
    }

    fn to_go_fields(&self) -> Value {
        let mut map = Map::new();
        map.insert("Name".into(), Value::from(self.name.as_str()));
        map.insert("Version".into(), Value::from(self.version.as_str()));
        map.insert("Repository".into(), Value::from(self.repository.as_str()));
        map.insert("Condition".into(), Value::from(self.condition.as_str()));
        map.insert("Tags".into(), string_list(&self.tags));
        map.insert("Enabled".into(), Value::Bool(self.enabled));
        map.insert(
            "ImportValues".into(),
            Value::from(self.import_values.clone()),
        );
        map.insert("Alias".into(), Value::from(self.alias.as_str()));
        Value::from(map)
    }

    /// The dependency as `encoding/json` marshals it (`name` and `repository` always,
    /// the rest when not empty).
    pub fn to_json_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), Value::from(self.name.as_str()));
        insert_nonempty(&mut map, "version", &self.version);
        map.insert("repository".into(), Value::from(self.repository.as_str()));
        insert_nonempty(&mut map, "condition", &self.condition);
        if !self.tags.is_empty() {
            map.insert("tags".into(), string_list(&self.tags));
        }
        if self.enabled {
            map.insert("enabled".into(), Value::Bool(true));
        }
        if !self.import_values.is_empty() {
            map.insert(
                "import-values".into(),
                Value::from(self.import_values.clone()),
            );
        }
        insert_nonempty(&mut map, "alias", &self.alias);
        Value::from(map)
    }
}

fn string_list(items: &[String]) -> Value {
    Value::from(
        items
            .iter()
            .map(|s| Value::from(s.as_str()))
            .collect::<Vec<_>>(),
    )
}

fn insert_nonempty(map: &mut Map, key: &str, text: &str) {
    if !text.is_empty() {
        map.insert(key.into(), Value::from(text));
    }
}

impl Metadata {
    /// Helm's `Metadata.Validate`: sanitise the string fields, then check the required
    /// fields, the name, the version, the type, maintainers and dependencies.
    pub fn validate(&mut self) -> Result<(), ValidationError> {
        let fail = |message: String| Err(ValidationError(message));
        for field in [
            &mut self.name,
            &mut self.description,
            &mut self.home,
            &mut self.icon,
            &mut self.condition,
            &mut self.tags,
            &mut self.app_version,
            &mut self.kube_version,
        ] {
            sanitize_in_place(field);
        }
        for item in self.sources.iter_mut().chain(self.keywords.iter_mut()) {
            sanitize_in_place(item);
        }
        if self.api_version.is_empty() {
            return fail("chart.metadata.apiVersion is required".into());
        }
        if self.name.is_empty() {
            return fail("chart.metadata.name is required".into());
        }
        if self.name == "." || self.name == ".." {
            return fail(format!(
                "chart.metadata.name {:?} is not allowed",
                self.name
            ));
        }
        if self.name.contains('/') || self.name.ends_with('/') {
            return fail(format!("chart.metadata.name {:?} is invalid", self.name));
        }
        if self.version.is_empty() {
            return fail("chart.metadata.version is required".into());
        }
        if crate::semver::Version::parse(&self.version).is_err() {
            return fail(format!(
                "chart.metadata.version {:?} is invalid",
                self.version
            ));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return fail("chart.metadata.type must be application or library".into());
        }
        for maintainer in &mut self.maintainers {
            maintainer.sanitize();
        }
        let mut seen = std::collections::BTreeSet::new();
        for dependency in self.dependencies.iter_mut().flatten() {
            dependency.validate()?;
            let key = if dependency.alias.is_empty() {
                dependency.name.clone()
            } else {
                dependency.alias.clone()
            };
            if !seen.insert(key.clone()) {
                return fail(format!(
                    "more than one dependency with name or alias {key:?}"
                ));
            }
        }
        Ok(())
    }

    /// Decode Chart.yaml text (the first YAML document) into metadata, as Helm's loader
    /// does (no validation, no `apiVersion` default).
    pub fn from_yaml(text: &str) -> Result<Metadata, String> {
        let mut metadata = Metadata::default();
        metadata.merge_yaml(text)?;
        Ok(metadata)
    }

    /// Decode YAML into this metadata, overwriting only the fields present (how Helm
    /// reads requirements.yaml into a chart's metadata).
    pub fn merge_yaml(&mut self, text: &str) -> Result<(), String> {
        let value = capstan_goyaml::from_yaml(text).map_err(|e| e.to_string())?;
        self.merge_value(&value).map_err(json_error)
    }

    fn merge_value(&mut self, value: &Value) -> Result<(), DecodeError> {
        let Some(fields) = object_fields(value, "", "v2.Metadata")? else {
            return Ok(());
        };
        for (key, field) in fields {
            let at = |name: &str| format!("Metadata.{name}");
            match key {
                "name" => decode_string(field, &at(key), &mut self.name)?,
                "home" => decode_string(field, &at(key), &mut self.home)?,
                "sources" => decode_strings(field, &at(key), &mut self.sources)?,
                "version" => decode_string(field, &at(key), &mut self.version)?,
                "description" => decode_string(field, &at(key), &mut self.description)?,
                "keywords" => decode_strings(field, &at(key), &mut self.keywords)?,
                "maintainers" => {
                    if let Some(items) = list_items(&field, &at(key), "[]*v2.Maintainer")? {
                        let mut maintainers = Vec::new();
                        for item in items {
                            maintainers.push(decode_maintainer(&item)?);
                        }
                        self.maintainers = maintainers;
                    }
                }
                "icon" => decode_string(field, &at(key), &mut self.icon)?,
                "apiVersion" => decode_string(field, &at(key), &mut self.api_version)?,
                "condition" => decode_string(field, &at(key), &mut self.condition)?,
                "tags" => decode_string(field, &at(key), &mut self.tags)?,
                "appVersion" => decode_string(field, &at(key), &mut self.app_version)?,
                "deprecated" => decode_bool(field, &at(key), &mut self.deprecated)?,
                "annotations" => decode_annotations(field, &mut self.annotations)?,
                "kubeVersion" => decode_string(field, &at(key), &mut self.kube_version)?,
                "dependencies" => {
                    self.dependencies = decode_dependencies(field, "Metadata.dependencies")?
                        .or_else(|| {
                            // `dependencies: null` leaves Go's slice as it was.
                            self.dependencies.take()
                        });
                }
                "type" => decode_string(field, &at(key), &mut self.chart_type)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// `.Chart` as templates see it: Go field names, Go zero values for absent fields
    /// (`""`, `false`; absent lists are empty lists, absent annotations an empty map).
    pub fn to_go_fields(&self) -> Value {
        let mut map = Map::new();
        let text = |s: &str| Value::from(s);
        map.insert("Name".into(), text(&self.name));
        map.insert("Home".into(), text(&self.home));
        map.insert("Sources".into(), string_list(&self.sources));
        map.insert("Version".into(), text(&self.version));
        map.insert("Description".into(), text(&self.description));
        map.insert("Keywords".into(), string_list(&self.keywords));
        map.insert(
            "Maintainers".into(),
            Value::from(
                self.maintainers
                    .iter()
                    .map(|m| {
                        let mut fields = Map::new();
                        fields.insert("Name".into(), text(&m.name));
                        fields.insert("Email".into(), text(&m.email));
                        fields.insert("URL".into(), text(&m.url));
                        Value::from(fields)
                    })
                    .collect::<Vec<_>>(),
            ),
        );
        map.insert("Icon".into(), text(&self.icon));
        map.insert("APIVersion".into(), text(&self.api_version));
        map.insert("Condition".into(), text(&self.condition));
        map.insert("Tags".into(), text(&self.tags));
        map.insert("AppVersion".into(), text(&self.app_version));
        map.insert("Deprecated".into(), Value::Bool(self.deprecated));
        map.insert(
            "Annotations".into(),
            Value::from(
                self.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect::<Map>(),
            ),
        );
        map.insert("KubeVersion".into(), text(&self.kube_version));
        map.insert(
            "Dependencies".into(),
            Value::from(
                self.dependencies
                    .iter()
                    .flatten()
                    .map(Dependency::to_go_fields)
                    .collect::<Vec<_>>(),
            ),
        );
        map.insert("Type".into(), text(&self.chart_type));
        Value::from(map)
    }

    /// The metadata as `encoding/json` marshals it (what `toJson .Chart` prints): JSON
    /// names, empty fields omitted.
    pub fn to_json_value(&self) -> Value {
        let mut map = Map::new();
        insert_nonempty(&mut map, "name", &self.name);
        insert_nonempty(&mut map, "home", &self.home);
        if !self.sources.is_empty() {
            map.insert("sources".into(), string_list(&self.sources));
        }
        insert_nonempty(&mut map, "version", &self.version);
        insert_nonempty(&mut map, "description", &self.description);
        if !self.keywords.is_empty() {
            map.insert("keywords".into(), string_list(&self.keywords));
        }
        if !self.maintainers.is_empty() {
            let items = self
                .maintainers
                .iter()
                .map(|m| {
                    let mut fields = Map::new();
                    insert_nonempty(&mut fields, "name", &m.name);
                    insert_nonempty(&mut fields, "email", &m.email);
                    insert_nonempty(&mut fields, "url", &m.url);
                    Value::from(fields)
                })
                .collect::<Vec<_>>();
            map.insert("maintainers".into(), Value::from(items));
        }
        insert_nonempty(&mut map, "icon", &self.icon);
        insert_nonempty(&mut map, "apiVersion", &self.api_version);
        insert_nonempty(&mut map, "condition", &self.condition);
        insert_nonempty(&mut map, "tags", &self.tags);
        insert_nonempty(&mut map, "appVersion", &self.app_version);
        if self.deprecated {
            map.insert("deprecated".into(), Value::Bool(true));
        }
        if !self.annotations.is_empty() {
            let annotations = self
                .annotations
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect::<Map>();
            map.insert("annotations".into(), Value::from(annotations));
        }
        insert_nonempty(&mut map, "kubeVersion", &self.kube_version);
        if let Some(dependencies) = self.dependencies.as_ref().filter(|d| !d.is_empty()) {
            let items = dependencies
                .iter()
                .map(Dependency::to_json_value)
                .collect::<Vec<_>>();
            map.insert("dependencies".into(), Value::from(items));
        }
        insert_nonempty(&mut map, "type", &self.chart_type);
        Value::from(map)
    }
}

impl Lock {
    /// Decode Chart.lock / requirements.lock text.
    pub fn from_yaml(text: &str) -> Result<Lock, String> {
        let value = capstan_goyaml::from_yaml(text).map_err(|e| e.to_string())?;
        let mut lock = Lock::default();
        let fields = object_fields(&value, "", "v2.Lock").map_err(json_error)?;
        for (key, field) in fields.into_iter().flatten() {
            match key {
                "generated" => decode_string(field, "Lock.generated", &mut lock.generated)
                    .map_err(json_error)?,
                "digest" => {
                    decode_string(field, "Lock.digest", &mut lock.digest).map_err(json_error)?
                }
                "dependencies" => {
                    lock.dependencies = decode_dependencies(field, "Lock.dependencies")
                        .map_err(json_error)?
                        .unwrap_or_default();
                }
                _ => {}
            }
        }
        Ok(lock)
    }
}

/// Why a YAML value does not fit the Go struct (an `encoding/json` type error, or a
/// null list entry Helm's validation refuses).
#[derive(Debug)]
enum DecodeError {
    Type {
        json_kind: &'static str,
        field: String,
        go_type: &'static str,
    },
    Validation(ValidationError),
}

fn json_error(error: DecodeError) -> String {
    match error {
        DecodeError::Type {
            json_kind,
            field,
            go_type,
        } => {
            let target = if field.contains('.') {
                format!("Go struct field {field}")
            } else {
                "Go value".to_string()
            };
            format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {json_kind} into {target} of type {go_type}"
            )
        }
        DecodeError::Validation(error) => error.to_string(),
    }
}

/// The JSON kind `encoding/json` names in type errors.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Nil => "null",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::Int64(_) | Value::Float(_) => "number",
        Value::String(_) | Value::Bytes(_) => "string",
        Value::List(_) => "array",
        Value::Map(_) | Value::Object(_) => "object",
    }
}

fn type_error(value: &Value, field: &str, go_type: &'static str) -> DecodeError {
    DecodeError::Type {
        json_kind: json_kind(value),
        field: field.to_owned(),
        go_type,
    }
}

/// The entries of a JSON object decoded into a struct, each paired with the struct's
/// field name it lands in (exact JSON name first, then a case-insensitive match); `None`
/// for null.
fn object_fields(
    value: &Value,
    field: &str,
    go_type: &'static str,
) -> Result<Option<Vec<(&'static str, Value)>>, DecodeError> {
    const FIELDS: &[&str] = &[
        "name",
        "home",
        "sources",
        "version",
        "description",
        "keywords",
        "maintainers",
        "icon",
        "apiVersion",
        "condition",
        "tags",
        "appVersion",
        "deprecated",
        "annotations",
        "kubeVersion",
        "dependencies",
        "type",
        "repository",
        "enabled",
        "import-values",
        "alias",
        "email",
        "url",
        "generated",
        "digest",
    ];
    match value {
        Value::Nil => Ok(None),
        Value::Map(map) => {
            let map = map.borrow();
            let mut out = Vec::new();
            for (key, field) in map.iter() {
                let known = FIELDS
                    .iter()
                    .find(|f| **f == key)
                    .or_else(|| FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key)));
                if let Some(name) = known {
                    out.push((*name, field.clone()));
                }
            }
            Ok(Some(out))
        }
        other => Err(type_error(other, field, go_type)),
    }
}

/// The string `sigs.k8s.io/yaml` hands `encoding/json` for a scalar whose Go field is a
/// string; `None` for null (the field keeps its value).
fn scalar_text(value: &Value) -> Option<Result<String, ()>> {
    match value {
        Value::Nil => None,
        Value::String(s) => Some(Ok(s.to_string())),
        Value::Bool(b) => Some(Ok(b.to_string())),
        Value::Int(i) | Value::Int64(i) => Some(Ok(i.to_string())),
        Value::Float(x) => Some(Ok(yaml_number_text(*x))),
        _ => Some(Err(())),
    }
}

/// A YAML number as the string field receives it: integers as `FormatInt`, other floats
/// as `FormatFloat(x, 'g', -1, 32)`.
pub fn yaml_number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.2e18 {
        return format!("{}", x as i64);
    }
    format_float32_g(x)
}

/// Go's `strconv.FormatFloat(x, 'g', -1, 32)`.
fn format_float32_g(x: f64) -> String {
    let single = x as f32;
    if single.is_nan() {
        return "NaN".into();
    }
    if single.is_infinite() {
        return if single > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde[-]x`.
    let scientific = format!("{single:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{sign}{first}{fraction}e{exponent_sign}{:02}",
            exponent.abs()
        );
    }
    let point = exponent + 1;
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        format!("{sign}{whole}.{fraction}")
    }
}

fn decode_string(value: Value, field: &str, target: &mut String) -> Result<(), DecodeError> {
    match scalar_text(&value) {
        None => Ok(()),
        Some(Ok(text)) => {
            *target = text;
            Ok(())
        }
        Some(Err(())) => Err(type_error(&value, field, "string")),
    }
}

fn decode_bool(value: Value, field: &str, target: &mut bool) -> Result<(), DecodeError> {
    match value {
        Value::Nil => Ok(()),
        Value::Bool(b) => {
            *target = b;
            Ok(())
        }
        other => Err(type_error(&other, field, "bool")),
    }
}

/// A JSON array's items; `None` for null.
fn list_items(
    value: &Value,
    field: &str,
    go_type: &'static str,
) -> Result<Option<Vec<Value>>, DecodeError> {
    match value {
        Value::Nil => Ok(None),
        Value::List(items) => Ok(Some(items.as_ref().clone())),
        other => Err(type_error(other, field, go_type)),
    }
}

fn decode_strings(value: Value, field: &str, target: &mut Vec<String>) -> Result<(), DecodeError> {
    let Some(items) = list_items(&value, field, "[]string")? else {
        return Ok(());
    };
    let mut out = Vec::new();
    for item in items {
        let mut text = String::new();
        decode_string(item, field, &mut text)?;
        out.push(text);
    }
    *target = out;
    Ok(())
}

fn decode_annotations(
    value: Value,
    target: &mut BTreeMap<String, String>,
) -> Result<(), DecodeError> {
    match &value {
        Value::Nil => Ok(()),
        Value::Map(map) => {
            let mut out = BTreeMap::new();
            for (key, item) in map.borrow().iter() {
                let mut text = String::new();
                decode_string(item.clone(), "Metadata.annotations", &mut text)?;
                out.insert(key.clone(), text);
            }
            *target = out;
            Ok(())
        }
        other => Err(type_error(
            other,
            "Metadata.annotations",
            "map[string]string",
        )),
    }
}

fn decode_maintainer(value: &Value) -> Result<Maintainer, DecodeError> {
    let Some(fields) = object_fields(value, "Metadata.maintainers", "v2.Maintainer")? else {
        return Err(DecodeError::Validation(ValidationError(
            "maintainers must not contain empty or null nodes".into(),
        )));
    };
    let mut maintainer = Maintainer::default();
    for (key, field) in fields {
        match key {
            "name" => decode_string(field, "Metadata.maintainers.name", &mut maintainer.name)?,
            "email" => decode_string(field, "Metadata.maintainers.email", &mut maintainer.email)?,
            "url" => decode_string(field, "Metadata.maintainers.url", &mut maintainer.url)?,
            _ => {}
        }
    }
    Ok(maintainer)
}

fn decode_dependencies(value: Value, field: &str) -> Result<Option<Vec<Dependency>>, DecodeError> {
    let Some(items) = list_items(&value, field, "[]*v2.Dependency")? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for item in items {
        out.push(decode_dependency(&item, field)?);
    }
    Ok(Some(out))
}

fn decode_dependency(value: &Value, field: &str) -> Result<Dependency, DecodeError> {
    let Some(fields) = object_fields(value, field, "v2.Dependency")? else {
        return Err(DecodeError::Validation(ValidationError(
            "dependencies must not contain empty or null nodes".into(),
        )));
    };
    let mut dependency = Dependency::default();
    for (key, item) in fields {
        let at = format!("{field}.{key}");
        match key {
            "name" => decode_string(item, &at, &mut dependency.name)?,
            "version" => decode_string(item, &at, &mut dependency.version)?,
            "repository" => decode_string(item, &at, &mut dependency.repository)?,
            "condition" => decode_string(item, &at, &mut dependency.condition)?,
            "tags" => decode_strings(item, &at, &mut dependency.tags)?,
            "enabled" => decode_bool(item, &at, &mut dependency.enabled)?,
            "import-values" => {
                if let Some(items) = list_items(&item, &at, "[]interface {}")? {
                    dependency.import_values = items;
                }
            }
            "alias" => decode_string(item, &at, &mut dependency.alias)?,
            _ => {}
        }
    }
    Ok(dependency)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(name: &str, api: &str, version: &str) -> Metadata {
        Metadata {
            name: name.into(),
            api_version: api.into(),
            version: version.into(),
            ..Metadata::default()
        }
    }

    fn dependency(name: &str, alias: &str) -> Dependency {
        Dependency {
            name: name.into(),
            alias: alias.into(),
            ..Dependency::default()
        }
    }

    #[test]
    fn validate_reports_helms_errors() {
        // Helm pkg/chart/v2/metadata_test.go TestValidate.
        let err = |mut m: Metadata| m.validate().err().map(|e| e.to_string());
        assert_eq!(
            err(metadata("test", "", "1.0")).as_deref(),
            Some("validation: chart.metadata.apiVersion is required")
        );
        assert_eq!(
            err(metadata("", "v2", "1.0")).as_deref(),
            Some("validation: chart.metadata.name is required")
        );
        assert_eq!(
            err(metadata(".", "v2", "1.0")).as_deref(),
            Some("validation: chart.metadata.name \".\" is not allowed")
        );
        assert_eq!(
            err(metadata("..", "v2", "1.0")).as_deref(),
            Some("validation: chart.metadata.name \"..\" is not allowed")
        );
        assert_eq!(
            err(metadata("../../test", "v2", "1.0")).as_deref(),
            Some("validation: chart.metadata.name \"../../test\" is invalid")
        );
        assert_eq!(
            err(metadata("test", "v2", "")).as_deref(),
            Some("validation: chart.metadata.version is required")
        );
        let mut bad_type = metadata("test", "v2", "1.0");
        bad_type.chart_type = "test".into();
        assert_eq!(
            err(bad_type).as_deref(),
            Some("validation: chart.metadata.type must be application or library")
        );
        let mut fine = metadata("test", "v2", "1.0");
        fine.chart_type = "application".into();
        fine.dependencies = Some(vec![dependency("dependency", "legal-alias")]);
        assert_eq!(err(fine), None);
        let mut bad_alias = metadata("test", "v2", "1.0");
        bad_alias.dependencies = Some(vec![dependency("bad", "illegal alias")]);
        assert_eq!(
            err(bad_alias).as_deref(),
            Some("validation: dependency \"bad\" has disallowed characters in the alias")
        );
        for pair in [
            vec![dependency("foo", ""), dependency("foo", "")],
            vec![dependency("foo", ""), dependency("bar", "foo")],
        ] {
            let mut twice = metadata("test", "v2", "1.0");
            twice.dependencies = Some(pair);
            assert_eq!(
                err(twice).as_deref(),
                Some("validation: more than one dependency with name or alias \"foo\"")
            );
        }
        assert_eq!(
            err(metadata("test", "v2", "1.2.3.4")).as_deref(),
            Some("validation: chart.metadata.version \"1.2.3.4\" is invalid")
        );
    }

    #[test]
    fn validate_sanitizes_strings() {
        // Helm TestValidate_sanitize.
        let mut m = metadata("test", "v2", "1.0");
        m.description = "\u{7}descr\u{81}iption\rtest".into();
        m.maintainers = vec![Maintainer {
            name: "\r".into(),
            ..Maintainer::default()
        }];
        m.validate().unwrap();
        assert_eq!(m.description, "description test");
        assert_eq!(m.maintainers[0].name, " ");
    }

    #[test]
    fn float_to_string_like_go_formatfloat_32() {
        // strconv.FormatFloat(x, 'g', -1, 32) results.
        assert_eq!(yaml_number_text(1.1), "1.1");
        assert_eq!(yaml_number_text(1.10), "1.1");
        assert_eq!(yaml_number_text(2.0), "2");
        assert_eq!(format_float32_g(1e6), "1e+06");
        assert_eq!(format_float32_g(123456.0), "123456");
        assert_eq!(format_float32_g(0.0001), "0.0001");
        assert_eq!(format_float32_g(0.00001), "1e-05");
        assert_eq!(format_float32_g(1.23456), "1.23456");
        assert_eq!(format_float32_g(-2.5), "-2.5");
    }

    #[test]
    fn full_path_and_root() {
        let mut root = Chart::new(metadata("root", "v2", "1.0.0"));
        let mut child = Chart::new(metadata("child", "v2", "1.0.0"));
        child.add_dependency(Chart::new(metadata("grand", "v2", "1.0.0")));
        root.add_dependency(child);
        assert!(root.is_root());
        let child = &root.dependencies()[0];
        assert!(!child.is_root());
        assert_eq!(child.chart_full_path(), "root/charts/child");
        assert_eq!(
            child.dependencies()[0].chart_full_path(),
            "root/charts/child/charts/grand"
        );
        assert_eq!(child.dependencies()[0].chart_path(), "root.child.grand");
    }

    #[test]
    fn chart_yaml_decodes_like_sigs_yaml() {
        // sigs.k8s.io/yaml hands a YAML number or bool to a Go string field as
        // FormatInt / FormatFloat(x, 'g', -1, 32) / FormatBool text.
        let m = Metadata::from_yaml(
            "apiVersion: v2\nname: demo\nversion: 1.0\nappVersion: 1.10\nkubeVersion: 1\n\
             annotations:\n  answer: 42\n  flag: yes\nkeywords: [a, 2]\nDescription: mixed case\n\
             dependencies:\n  - name: sub\n    version: ~1\n    import-values: [data, {child: a, parent: b}]\n\
             unknown: ignored\n",
        )
        .unwrap();
        assert_eq!(m.version, "1");
        assert_eq!(m.app_version, "1.1");
        assert_eq!(m.kube_version, "1");
        assert_eq!(m.annotations["answer"], "42");
        assert_eq!(m.annotations["flag"], "true");
        assert_eq!(m.keywords, ["a", "2"]);
        assert_eq!(
            m.description, "mixed case",
            "JSON field names match case-insensitively"
        );
        let dependencies = m.dependencies.unwrap();
        assert_eq!(dependencies[0].version, "~1");
        assert_eq!(dependencies[0].import_values.len(), 2);
        assert!(
            Metadata::from_yaml("name: x\n")
                .unwrap()
                .dependencies
                .is_none()
        );
        assert_eq!(
            Metadata::from_yaml("dependencies: []\n")
                .unwrap()
                .dependencies
                .map(|d| d.len()),
            Some(0)
        );
    }

    #[test]
    fn chart_yaml_type_errors_read_like_encoding_json() {
        assert_eq!(
            Metadata::from_yaml("deprecated: \"yes\"\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field Metadata.deprecated of type bool"
        );
        assert_eq!(
            Metadata::from_yaml("- a\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type v2.Metadata"
        );
        assert_eq!(
            Metadata::from_yaml("maintainers:\n  - null\n").unwrap_err(),
            "validation: maintainers must not contain empty or null nodes"
        );
        assert_eq!(
            Metadata::from_yaml("maintainers:\n  - someone\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field Metadata.maintainers of type v2.Maintainer"
        );
        assert_eq!(
            Metadata::from_yaml("dependencies: [x]\n").unwrap_err(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field Metadata.dependencies of type v2.Dependency"
        );
    }

    #[test]
    fn requirements_merge_into_metadata() {
        let mut m = Metadata::from_yaml("apiVersion: v1\nname: old\nversion: 1.0.0\n").unwrap();
        m.merge_yaml("dependencies:\n  - name: a\n    version: 1.0.0\n")
            .unwrap();
        assert_eq!(m.name, "old");
        assert_eq!(
            m.dependencies.map(|d| d[0].name.clone()).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn go_field_view_for_templates() {
        let mut m = Metadata::from_yaml(
            "apiVersion: v2\nname: demo\nversion: 0.1.0\nmaintainers:\n  - name: me\n    url: u\n",
        )
        .unwrap();
        m.validate().unwrap();
        let view = m.to_go_fields();
        let Value::Map(fields) = &view else {
            panic!("a map")
        };
        let fields = fields.borrow();
        assert_eq!(fields["Name"].as_str(), Some("demo"));
        assert_eq!(fields["APIVersion"].as_str(), Some("v2"));
        assert_eq!(fields["AppVersion"].as_str(), Some(""));
        assert!(matches!(fields["Deprecated"], Value::Bool(false)));
        assert_eq!(
            fields["Maintainers"].to_go_string(),
            "[map[Email: Name:me URL:u]]"
        );
        assert_eq!(
            m.to_json_value().to_go_string(),
            "map[apiVersion:v2 maintainers:[map[name:me url:u]] name:demo version:0.1.0]"
        );
    }
}
