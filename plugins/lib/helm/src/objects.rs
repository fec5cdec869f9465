//! The built-in objects Helm gives templates that are more than plain maps: `.Files`
//! (`Get`, `GetBytes`, `Glob`, `Lines`, `AsConfig`, `AsSecrets`, ranging over paths) and
//! `.Capabilities` (`KubeVersion`, `APIVersions.Has`, `HelmVersion`), with the Go types'
//! printing and field names.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use capstan_gotmpl::value::{Map, Object, Value};

use crate::chart::File;
use crate::glob::Glob;

/// `.Files`: the chart's non-template files by path, sharing the chart's contents (a file
/// is copied only when a template reads it; a file passed unread is read then).
#[derive(Debug, Clone, Default)]
pub struct Files {
    files: BTreeMap<String, File>,
}

impl Files {
    /// Files of a chart.
    pub fn new(files: impl IntoIterator<Item = File>) -> Files {
        Files {
            files: files
                .into_iter()
                .map(|file| (file.name.clone(), file))
                .collect(),
        }
    }

    /// The contents of `path`, if the chart has such a file.
    fn contents(&self, path: &str) -> Option<Arc<Vec<u8>>> {
        self.files.get(path).map(File::contents)
    }

    fn glob(&self, pattern: &str) -> Files {
        let glob = Glob::new(pattern);
        Files {
            files: self
                .files
                .iter()
                .filter(|(name, _)| glob.matches(name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    fn by_basename(&self, encode: impl Fn(&[u8]) -> String) -> String {
        let map: Map = self
            .files
            .iter()
            .map(|(name, file)| {
                let base = name.rsplit('/').next().unwrap_or(name).to_owned();
                (base, Value::from(encode(&file.contents())))
            })
            .collect();
        crate::funcs::to_yaml_text(&Value::from(map))
    }
}

fn string_arg(args: &[Value], method: &str) -> Result<String, String> {
    match args {
        [Value::String(s)] => Ok(s.to_string()),
        [other] => Err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
        _ => Err(format!(
            "wrong number of args for {method}: want 1 got {}",
            args.len()
        )),
    }
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Get" | "GetBytes" | "Glob" | "Lines" | "AsConfig" | "AsSecrets"
        )
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        match name {
            "Get" => {
                let path = string_arg(args, name)?;
                Ok(Value::from(
                    self.contents(&path)
                        .map(|d| String::from_utf8_lossy(&d).into_owned())
                        .unwrap_or_default(),
                ))
            }
            "GetBytes" => {
                let path = string_arg(args, name)?;
                Ok(Value::Bytes(Rc::from(
                    self.contents(&path)
                        .as_deref()
                        .map_or(&[][..], |data| &data[..]),
                )))
            }
            "Glob" => {
                let pattern = string_arg(args, name)?;
                Ok(Value::Object(Rc::new(self.glob(&pattern))))
            }
            "Lines" => {
                let path = string_arg(args, name)?;
                let Some(data) = self.contents(&path) else {
                    return Ok(Value::from(Vec::new()));
                };
                let mut text = String::from_utf8_lossy(&data).into_owned();
                if text.ends_with('\n') {
                    text.pop();
                }
                Ok(Value::from(
                    text.split('\n').map(Value::from).collect::<Vec<_>>(),
                ))
            }
            "AsConfig" if args.is_empty() => Ok(Value::from(
                self.by_basename(|d| String::from_utf8_lossy(d).into_owned()),
            )),
            "AsSecrets" if args.is_empty() => Ok(Value::from(self.by_basename(base64_standard))),
            _ => Err(format!(
                "wrong number of args for {name}: want 0 got {}",
                args.len()
            )),
        }
    }

    fn format(&self) -> String {
        let entries: Map = self
            .files
            .iter()
            .map(|(k, v)| (k.clone(), Value::Bytes(Rc::from(&v.contents()[..]))))
            .collect();
        Value::from(entries).to_go_string()
    }

    fn to_data(&self) -> Value {
        let entries: Map = self
            .files
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(base64_standard(&v.contents()))))
            .collect();
        Value::from(entries)
    }

    fn entries(&self) -> Option<Vec<(String, Value)>> {
        Some(
            self.files
                .iter()
                .map(|(k, v)| (k.clone(), Value::Bytes(Rc::from(&v.contents()[..]))))
                .collect(),
        )
    }

    fn is_truthy(&self) -> bool {
        !self.files.is_empty()
    }
}

/// Standard base64 with padding (Go's `base64.StdEncoding`).
pub use capstan_gotmpl::json::base64_std as base64_standard;

/// What `.Capabilities` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// Kubernetes version, e.g. `v1.36.0`.
    pub kube_version: String,
    /// Its major part, e.g. `1`.
    pub kube_major: String,
    /// Its minor part, e.g. `36`.
    pub kube_minor: String,
    /// Group/versions (and optionally group/version/kind) the cluster serves.
    pub api_versions: Vec<String>,
    /// Helm version string templates see.
    pub helm_version: String,
    /// Helm git commit.
    pub helm_git_commit: String,
    /// Helm git tree state.
    pub helm_git_tree_state: String,
    /// Go version Helm was built with.
    pub helm_go_version: String,
    /// Helm 2 rendering: Tiller's version (`.Capabilities.TillerVersion`, in place of
    /// `.Capabilities.HelmVersion`, and `.Release.Service` is `Tiller`).
    pub tiller_version: Option<String>,
}

/// Group/versions `helm template` assumes without a cluster (client-go v0.36's scheme plus
/// apiextensions), in Helm's order.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1alpha2",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1alpha2",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
    "apiextensions.k8s.io/v1beta1",
];

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            kube_version: "v1.36.0".into(),
            kube_major: "1".into(),
            kube_minor: "36".into(),
            api_versions: DEFAULT_API_VERSIONS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            helm_version: "v4.2".into(),
            helm_git_commit: String::new(),
            helm_git_tree_state: String::new(),
            helm_go_version: "go1.26.6".into(),
            tiller_version: None,
        }
    }
}

impl Capabilities {
    /// Capabilities for a Kubernetes version given as `v1.29.3` or `1.29`.
    pub fn with_kube_version(mut self, version: &str) -> Result<Capabilities, String> {
        let trimmed = version.trim_start_matches('v');
        let mut parts = trimmed.split('.');
        let major = parts
            .next()
            .filter(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        let minor = parts
            .next()
            .filter(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        let (Some(major), Some(minor)) = (major, minor) else {
            return Err(format!(
                "invalid kube version {version:?}: expected v<major>.<minor>[.<patch>]"
            ));
        };
        let patch = parts.next().unwrap_or("0");
        self.kube_major = major.to_owned();
        self.kube_minor = minor.to_owned();
        self.kube_version = format!("v{major}.{minor}.{patch}");
        Ok(self)
    }

    /// The `.Capabilities` object.
    pub fn to_value(&self) -> Value {
        Value::Object(Rc::new(CapabilitiesObject(Rc::new(self.clone()))))
    }
}

struct CapabilitiesObject(Rc<Capabilities>);
struct KubeVersion(Rc<Capabilities>);
struct VersionSet(Rc<Capabilities>);
struct HelmVersion(Rc<Capabilities>);
struct TillerVersion(Rc<Capabilities>);

impl Object for CapabilitiesObject {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        let caps = self.0.clone();
        Some(match name {
            "KubeVersion" => Value::Object(Rc::new(KubeVersion(caps))),
            "APIVersions" => Value::Object(Rc::new(VersionSet(caps))),
            "HelmVersion" if caps.tiller_version.is_none() => {
                Value::Object(Rc::new(HelmVersion(caps)))
            }
            "TillerVersion" if caps.tiller_version.is_some() => {
                Value::Object(Rc::new(TillerVersion(caps)))
            }
            _ => return None,
        })
    }
    fn format(&self) -> String {
        let last = if self.0.tiller_version.is_some() {
            TillerVersion(self.0.clone()).format()
        } else {
            HelmVersion(self.0.clone()).format()
        };
        format!(
            "&{{{} {} {last}}}",
            KubeVersion(self.0.clone()).format(),
            VersionSet(self.0.clone()).format(),
        )
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert("KubeVersion".into(), KubeVersion(self.0.clone()).to_data());
        map.insert("APIVersions".into(), VersionSet(self.0.clone()).to_data());
        if self.0.tiller_version.is_some() {
            map.insert(
                "TillerVersion".into(),
                TillerVersion(self.0.clone()).to_data(),
            );
        } else {
            map.insert("HelmVersion".into(), HelmVersion(self.0.clone()).to_data());
        }
        Value::from(map)
    }
}

/// Helm 2's `version.Version` of Tiller: `SemVer`, `GitCommit`, `GitTreeState`.
impl Object for TillerVersion {
    fn type_name(&self) -> String {
        "*version.Version".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::from(match name {
            "SemVer" => self.0.tiller_version.as_deref().unwrap_or(""),
            "GitCommit" | "GitTreeState" => "",
            _ => return None,
        }))
    }
    fn format(&self) -> String {
        format!(
            "&Version{{SemVer:{},GitCommit:,GitTreeState:,}}",
            self.0.tiller_version.as_deref().unwrap_or("")
        )
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert(
            "sem_ver".into(),
            Value::from(self.0.tiller_version.as_deref().unwrap_or("")),
        );
        Value::from(map)
    }
}

impl Object for KubeVersion {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::from(match name {
            "Version" => self.0.kube_version.as_str(),
            "Major" => self.0.kube_major.as_str(),
            "Minor" => self.0.kube_minor.as_str(),
            _ => return None,
        }))
    }
    fn has_method(&self, name: &str) -> bool {
        matches!(name, "String" | "GitVersion")
    }
    fn call_method(&self, _name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(Value::from(self.0.kube_version.as_str()))
    }
    fn format(&self) -> String {
        self.0.kube_version.clone()
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert("version".into(), Value::from(self.0.kube_version.as_str()));
        map.insert("major".into(), Value::from(self.0.kube_major.as_str()));
        map.insert("minor".into(), Value::from(self.0.kube_minor.as_str()));
        Value::from(map)
    }
}

impl Object for VersionSet {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn has_method(&self, name: &str) -> bool {
        name == "Has"
    }
    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let wanted = string_arg(args, name)?;
        Ok(Value::Bool(self.0.api_versions.contains(&wanted)))
    }
    fn format(&self) -> String {
        format!("[{}]", self.0.api_versions.join(" "))
    }
    fn to_data(&self) -> Value {
        Value::from(
            self.0
                .api_versions
                .iter()
                .map(|v| Value::from(v.as_str()))
                .collect::<Vec<_>>(),
        )
    }
    fn entries(&self) -> Option<Vec<(String, Value)>> {
        None
    }
}

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::from(match name {
            "Version" => self.0.helm_version.as_str(),
            "GitCommit" => self.0.helm_git_commit.as_str(),
            "GitTreeState" => self.0.helm_git_tree_state.as_str(),
            "GoVersion" => self.0.helm_go_version.as_str(),
            _ => return None,
        }))
    }
    fn format(&self) -> String {
        format!(
            "{{{} {} {} {}}}",
            self.0.helm_version,
            self.0.helm_git_commit,
            self.0.helm_git_tree_state,
            self.0.helm_go_version
        )
    }
    fn to_data(&self) -> Value {
        let mut map = Map::new();
        map.insert("version".into(), Value::from(self.0.helm_version.as_str()));
        if !self.0.helm_git_commit.is_empty() {
            map.insert(
                "git_commit".into(),
                Value::from(self.0.helm_git_commit.as_str()),
            );
        }
        if !self.0.helm_git_tree_state.is_empty() {
            map.insert(
                "git_tree_state".into(),
                Value::from(self.0.helm_git_tree_state.as_str()),
            );
        }
        map.insert(
            "go_version".into(),
            Value::from(self.0.helm_go_version.as_str()),
        );
        Value::from(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_methods_follow_helm() {
        let files = Files::new([
            File::new("files/a.conf", b"x\ny\n".to_vec()),
            File::new("files/sub/b.conf", b"z".to_vec()),
            File::new("README.md", b"hi".to_vec()),
        ]);
        let get = files
            .call_method("Get", &[Value::from("README.md")])
            .unwrap();
        assert_eq!(get.to_go_string(), "hi");
        let missing = files.call_method("Get", &[Value::from("nope")]).unwrap();
        assert_eq!(missing.to_go_string(), "");
        let lines = files
            .call_method("Lines", &[Value::from("files/a.conf")])
            .unwrap();
        assert_eq!(lines.to_go_string(), "[x y]");
        let Value::Object(globbed) = files
            .call_method("Glob", &[Value::from("files/*")])
            .unwrap()
        else {
            panic!("Glob must return Files")
        };
        let names: Vec<String> = globbed
            .entries()
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(names, ["files/a.conf"]);
        assert!(!Files::default().is_truthy());
    }

    #[test]
    fn base64_matches_go_std_encoding() {
        assert_eq!(base64_standard(b""), "");
        assert_eq!(base64_standard(b"f"), "Zg==");
        assert_eq!(base64_standard(b"fo"), "Zm8=");
        assert_eq!(base64_standard(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn capabilities_print_like_helm() {
        let caps = Capabilities::default().to_value();
        let Value::Object(obj) = caps else { panic!() };
        let Some(Value::Object(kube)) = obj.field("KubeVersion") else {
            panic!()
        };
        assert_eq!(kube.format(), "v1.36.0");
        let Some(Value::Object(apis)) = obj.field("APIVersions") else {
            panic!()
        };
        assert_eq!(
            apis.call_method("Has", &[Value::from("apps/v1")])
                .unwrap()
                .to_go_string(),
            "true"
        );
        assert_eq!(
            apis.call_method("Has", &[Value::from("apps/v1/Deployment")])
                .unwrap()
                .to_go_string(),
            "false"
        );
    }
}
