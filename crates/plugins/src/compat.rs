//! Components of the previous contract, `capstan:plugin@0.1.x` (N−1), served through an
//! adapter: the host links the 0.1 imports (`log`, `git`) next to the current ones and
//! translates calls both ways.
//!
//! A 0.1 source plugin cannot describe itself (0.1 has no `describe`): its source kinds
//! are those its configuration entry names (`kinds: [git]` or `[helm-repository]`, the two
//! kinds 0.1's closed `source-spec` variant knew), and the adapter declares them with the
//! capabilities the 0.1 host granted them. A request's JSON spec is turned into that
//! variant. Backends of 0.1 have their own adapter (`compat_backend`).

use crate::bindings::types::{Error, ErrorCode};
use crate::kinds::{DeclaredKind, HttpAccess, KindCapabilities};

/// Bindings of the 0.1.1 `source-plugin` world (WIT kept in `crates/capabilities/compat-wit/0.1.1`). The
/// shared `types` are the current ones: 0.2 did not change them; the imports are the
/// capabilities' ([`capstan_capabilities::v0_1`]).
pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../capabilities/compat-wit/0.1.1",
        world: "source-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types@0.1.1": capstan_capabilities::bindings::types,
            "capstan:plugin/log@0.1.1": capstan_capabilities::v0_1::log,
            "capstan:plugin/git@0.1.1": capstan_capabilities::v0_1::git,
        },
    });
}

use v0_1::exports::capstan::plugin::source as source01;

/// The source kinds 0.1's closed variant could express.
pub const V0_1_KINDS: [&str; 2] = ["git", "helm-repository"];

/// The declaration of a 0.1 plugin's `kind`: a schema of the fields 0.1's variant has, and
/// the capabilities the 0.1 host granted it.
pub fn declared_kind(kind: &str) -> Option<DeclaredKind> {
    match kind {
        "git" => Some(DeclaredKind {
            name: "git".into(),
            summary: "a chart folder in a git repository (capstan:plugin@0.1 component)".into(),
            schema: serde_json::json!({
                "type": "object",
                "required": ["url"],
                "properties": {
                    "url": {"type": "string", "minLength": 1},
                    "ref": {"type": "string", "minLength": 1},
                    "semver": {"type": "string", "minLength": 1},
                    "path": {"type": "string"},
                    "insecure": {"type": "boolean"}
                },
                "additionalProperties": false
            }),
            capabilities: KindCapabilities {
                git_url_field: Some("/url".into()),
                ..KindCapabilities::default()
            },
        }),
        "helm-repository" => Some(DeclaredKind {
            name: "helm-repository".into(),
            summary: "a chart in a Helm HTTP repository (capstan:plugin@0.1 component)".into(),
            schema: serde_json::json!({
                "type": "object",
                "required": ["url", "chart"],
                "properties": {
                    "url": {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"},
                    "chart": {"type": "string", "minLength": 1},
                    "version": {"type": "string"}
                },
                "additionalProperties": false
            }),
            capabilities: KindCapabilities {
                http: vec![HttpAccess {
                    url_field: "/url".into(),
                    insecure_field: None,
                    send_credentials: true,
                    shared_document: Some("index.yaml".into()),
                }],
                ..KindCapabilities::default()
            },
        }),
        _ => None,
    }
}

fn text(spec: &serde_json::Value, field: &str) -> String {
    spec.get(field)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// A current request in 0.1's shape.
pub fn request(kind: &str, spec: &str) -> Result<source01::SourceRequest, Error> {
    let value: serde_json::Value = serde_json::from_str(spec).map_err(|e| Error {
        code: ErrorCode::InvalidInput,
        message: format!("spec is not JSON: {e}"),
        retryable: false,
    })?;
    let spec = match kind {
        "git" => {
            let semver = text(&value, "semver");
            let reference = if semver.is_empty() {
                let name = text(&value, "ref");
                source01::GitRef::Branch(if name.is_empty() {
                    "master".into()
                } else {
                    name
                })
            } else {
                source01::GitRef::Semver(semver)
            };
            source01::SourceSpec::Git(source01::GitSource {
                url: text(&value, "url"),
                reference,
                path: text(&value, "path").trim_matches('/').to_owned(),
            })
        }
        "helm-repository" => source01::SourceSpec::HelmRepository(source01::HelmRepositorySource {
            url: text(&value, "url"),
            chart: text(&value, "chart"),
            version: text(&value, "version"),
        }),
        other => {
            return Err(Error {
                code: ErrorCode::Unsupported,
                message: format!(
                    "a capstan:plugin@0.1 component cannot serve kind `{other}` (0.1 knows only {})",
                    V0_1_KINDS.join(" and ")
                ),
                retryable: false,
            });
        }
    };
    Ok(source01::SourceRequest { spec })
}

/// A current revision in 0.1's shape (identical fields).
pub fn revision(
    at: &crate::bindings::source::exports::capstan::plugin::source::Revision,
) -> source01::Revision {
    source01::Revision {
        id: at.id.clone(),
        content_id: at.content_id.clone(),
    }
}

/// 0.1's revision in the current shape.
pub fn revision_from(
    at: source01::Revision,
) -> crate::bindings::source::exports::capstan::plugin::source::Revision {
    crate::bindings::source::exports::capstan::plugin::source::Revision {
        id: at.id,
        content_id: at.content_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_specs_become_the_old_variant() {
        let git = request("git", r#"{"url":"file:///r","ref":"v1","path":"/chart/"}"#).unwrap();
        let source01::SourceSpec::Git(git) = git.spec else {
            panic!("not git")
        };
        assert_eq!(git.url, "file:///r");
        assert_eq!(git.path, "chart");
        assert!(matches!(git.reference, source01::GitRef::Branch(ref b) if b == "v1"));
        let range = request("git", r#"{"url":"u","semver":"^1"}"#).unwrap();
        let source01::SourceSpec::Git(range) = range.spec else {
            panic!("not git")
        };
        assert!(matches!(range.reference, source01::GitRef::Semver(ref r) if r == "^1"));
        let repo = request("helm-repository", r#"{"url":"https://h/c","chart":"web"}"#).unwrap();
        assert!(
            matches!(repo.spec, source01::SourceSpec::HelmRepository(ref r) if r.chart == "web")
        );
        let error = request("oci", "{}").unwrap_err();
        assert_eq!(error.code, ErrorCode::Unsupported);
        assert!(
            error
                .message
                .contains("0.1 knows only git and helm-repository")
        );
    }

    #[test]
    fn the_old_kinds_are_declared_with_their_old_grants() {
        let git = declared_kind("git").unwrap();
        assert_eq!(git.capabilities.git_url_field.as_deref(), Some("/url"));
        let repo = declared_kind("helm-repository").unwrap();
        assert_eq!(
            repo.capabilities.http[0].shared_document.as_deref(),
            Some("index.yaml")
        );
        assert!(declared_kind("oci").is_none());
    }
}
