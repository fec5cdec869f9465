//! Release objects: rendered documents as API JSON with Helm's ownership metadata, the
//! references used to get/delete them, ownership checks, and the install/uninstall order.

use std::collections::BTreeMap;

use capstan_helm::output::{INSTALL_ORDER, split_manifests};
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode};
use serde_json::Value;

use crate::store::with_context;

/// Annotation naming the owning release.
pub const RELEASE_NAME: &str = "meta.helm.sh/release-name";
/// Annotation naming the owning release's namespace.
pub const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
/// Label Helm puts on every release object.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Annotation that keeps an object when the release drops it or is uninstalled.
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// Kinds that are cluster-scoped in Kubernetes' built-in API groups. The capability has no
/// discovery call, so other kinds are taken to be namespaced and get the release namespace
/// when they name none (as Helm does through its REST mapper).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CSINode",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// One object of a release.
#[derive(Debug, Clone)]
pub struct Object {
    /// Template path it came from.
    pub path: String,
    /// The object as API JSON.
    pub body: Value,
    /// Where it lives.
    pub reference: ObjectRef,
}

impl Object {
    /// `Kind namespace/name`, for messages.
    pub fn describe(&self) -> String {
        describe(&self.reference)
    }

    /// Value of an annotation of the rendered object.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        annotation(&self.body, key)
    }

    /// Identity used to match objects across revisions (group, kind, namespace, name;
    /// the version may change between revisions).
    pub fn identity(&self) -> (String, String, String, String) {
        identity(&self.reference)
    }
}

/// See [`Object::identity`].
pub fn identity(reference: &ObjectRef) -> (String, String, String, String) {
    let group = reference
        .api_version
        .split_once('/')
        .map(|(g, _)| g)
        .unwrap_or("");
    (
        group.to_owned(),
        reference.kind.clone(),
        reference.namespace.clone().unwrap_or_default(),
        reference.name.clone(),
    )
}

/// `Kind namespace/name` or `Kind name`.
pub fn describe(reference: &ObjectRef) -> String {
    match &reference.namespace {
        Some(ns) => format!("{} {ns}/{}", reference.kind, reference.name),
        None => format!("{} {}", reference.kind, reference.name),
    }
}

/// An annotation of an API object.
pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// Parse one rendered document into an object in `namespace`. Empty documents give None.
pub fn parse(path: &str, document: &str, namespace: &str) -> Result<Option<Object>, Error> {
    let value = capstan_goyaml::from_yaml(document)
        .map_err(|e| invalid(format!("{path}: YAML parse error: {e}")))?;
    if matches!(value, capstan_gotmpl::value::Value::Nil) {
        return Ok(None);
    }
    let json = capstan_gotmpl::json::to_json(&value)
        .map_err(|e| invalid(format!("{path}: cannot convert to JSON: {e}")))?;
    let mut body: Value = serde_json::from_str(&json)
        .map_err(|e| invalid(format!("{path}: cannot convert to JSON: {e}")))?;
    let text = |pointer: &str| {
        body.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (Some(api_version), Some(kind), Some(name)) =
        (text("/apiVersion"), text("/kind"), text("/metadata/name"))
    else {
        return Err(invalid(format!(
            "{path}: object needs apiVersion, kind and metadata.name"
        )));
    };
    let namespace = if CLUSTER_SCOPED.contains(&kind.as_str()) {
        None
    } else {
        let ns = text("/metadata/namespace")
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| namespace.to_owned());
        if let Some(metadata) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("namespace".into(), Value::String(ns.clone()));
        }
        Some(ns)
    };
    Ok(Some(Object {
        path: path.to_owned(),
        body,
        reference: ObjectRef {
            api_version,
            kind,
            namespace,
            name,
        },
    }))
}

/// Parse a stored release manifest (`---` separated, `# Source:` headers) into objects, in
/// the order they appear.
pub fn parse_manifest(manifest: &str, namespace: &str) -> Result<Vec<Object>, Error> {
    let mut objects = Vec::new();
    for document in split_manifests(manifest) {
        let path = document
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# Source: "))
            .unwrap_or("manifest")
            .to_owned();
        if let Some(object) = parse(&path, &document, namespace)? {
            objects.push(object);
        }
    }
    Ok(objects)
}

/// Helm's `setMetadataVisitor`: the `managed-by` label and the release annotations.
pub fn set_ownership(object: &mut Object, release: &str, namespace: &str) {
    let Some(metadata) = object
        .body
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Default::default()));
    if !labels.is_object() {
        *labels = Value::Object(Default::default());
    }
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(MANAGED_BY.into(), "Helm".into());
    }
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Default::default()));
    if !annotations.is_object() {
        *annotations = Value::Object(Default::default());
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(RELEASE_NAME.into(), release.into());
        annotations.insert(RELEASE_NAMESPACE.into(), namespace.into());
    }
}

/// The live object `reference` names, if it exists.
pub fn live(reference: &ObjectRef) -> Result<Option<serde_json::Value>, Error> {
    let found = kube::get(reference)
        .map_err(|e| with_context(e, &format!("get {}", describe(reference))))?;
    found
        .map(|text| {
            serde_json::from_str(&text).map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("{} is not JSON: {e}", describe(reference)),
                )
            })
        })
        .transpose()
}

/// Helm's adoption check: a live object belongs to the release only when it carries the
/// release's annotations and the `managed-by: Helm` label. Returns why not, if not.
pub fn ownership_conflict(live: &Value, release: &str, namespace: &str) -> Option<String> {
    let label = live
        .pointer("/metadata/labels")
        .and_then(|l| l.get(MANAGED_BY))
        .and_then(Value::as_str);
    let mut problems = Vec::new();
    if label != Some("Helm") {
        problems.push(format!(
            "label validation error: key \"{MANAGED_BY}\" must equal \"Helm\": current value is {}",
            quoted(label)
        ));
    }
    for (key, want) in [(RELEASE_NAME, release), (RELEASE_NAMESPACE, namespace)] {
        let have = annotation(live, key);
        if have != Some(want) {
            problems.push(format!(
                "annotation validation error: key \"{key}\" must equal \"{want}\": current value is {}",
                quoted(have)
            ));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// Why the live object `live` must not be deleted for release `release` in `namespace`:
/// under Helm 3's rules an object is the release's only while it carries the release's
/// ownership metadata (someone may have taken it over since); `None` when it is ours.
/// Helm 2 marks nothing, so every object of its manifest counts as its own.
pub fn not_ours(live: &Value, release: &str, namespace: &str) -> Option<String> {
    if !crate::flavor::current().marks_ownership() {
        return None;
    }
    // A Deployment moved from Helm 2 carries the `managed-by: Helm` label and gets the
    // annotations with its next change (`migrate::adopt`): with no release named at all,
    // the label is enough.
    let labelled = live
        .pointer("/metadata/labels")
        .and_then(|l| l.get(MANAGED_BY))
        .and_then(Value::as_str)
        == Some("Helm");
    if labelled
        && annotation(live, RELEASE_NAME).is_none()
        && annotation(live, RELEASE_NAMESPACE).is_none()
    {
        return None;
    }
    ownership_conflict(live, release, namespace)
        .map(|why| format!("it does not belong to release {namespace}/{release} any more ({why})"))
}

fn quoted(value: Option<&str>) -> String {
    match value {
        Some(v) => format!("\"{v}\""),
        None => "missing".into(),
    }
}

fn rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|k| *k == kind)
}

/// Helm's `UninstallOrder` sort (stable): known kinds in reverse install order, unknown
/// kinds after them, alphabetically.
pub fn sort_for_uninstall(objects: &mut [Object]) {
    objects.sort_by(|a, b| {
        let (ka, kb) = (&a.reference.kind, &b.reference.kind);
        match (rank(ka), rank(kb)) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => ka.cmp(kb),
        }
    });
}

/// Objects keyed by identity, for diffs between revisions.
pub fn by_identity(objects: &[Object]) -> BTreeMap<(String, String, String, String), &Object> {
    objects.iter().map(|o| (o.identity(), o)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_naming_the_release_are_its_own_to_delete() {
        let mut object = parse_manifest(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
            "apps",
        )
        .unwrap()
        .remove(0);
        // Made by someone else: no Helm metadata.
        let why = not_ours(&object.body, "demo", "apps").unwrap();
        assert!(why.contains("release apps/demo"), "{why}");
        set_ownership(&mut object, "demo", "apps");
        assert_eq!(not_ours(&object.body, "demo", "apps"), None);
        // Taken over by another release.
        assert!(not_ours(&object.body, "other", "apps").is_some());
        // A Deployment moved from Helm 2 before its next change: the label only.
        if let Some(annotations) = object.body.pointer_mut("/metadata/annotations") {
            *annotations = serde_json::json!({});
        }
        assert_eq!(not_ours(&object.body, "demo", "apps"), None);
    }

    #[test]
    fn parses_with_namespace_and_ownership() {
        let mut object = parse(
            "c/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  n: \"1\"\n",
            "apps",
        )
        .unwrap()
        .unwrap();
        assert_eq!(object.reference.namespace.as_deref(), Some("apps"));
        set_ownership(&mut object, "demo", "apps");
        assert_eq!(object.body["metadata"]["labels"][MANAGED_BY], "Helm");
        assert!(ownership_conflict(&object.body, "demo", "apps").is_none());
        let conflict = ownership_conflict(&object.body, "other", "apps").unwrap();
        assert!(conflict.contains("release-name"), "{conflict}");
        let ns = parse(
            "p",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
            "apps",
        )
        .unwrap()
        .unwrap();
        assert_eq!(ns.reference.namespace, None);
        assert!(parse("p", "# nothing\n", "apps").unwrap().is_none());
    }

    #[test]
    fn uninstall_order_reverses_install_order() {
        let manifest = "---\n# Source: c/templates/a.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\n# Source: c/templates/c.yaml\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\n# Source: c/templates/d.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
        let mut objects = parse_manifest(manifest, "ns").unwrap();
        assert_eq!(objects[0].path, "c/templates/a.yaml");
        sort_for_uninstall(&mut objects);
        let kinds: Vec<_> = objects.iter().map(|o| o.reference.kind.as_str()).collect();
        assert_eq!(kinds, ["Deployment", "Service", "ConfigMap", "Widget"]);
    }
}
