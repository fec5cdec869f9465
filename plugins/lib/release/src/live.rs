//! Rendering against the release's target cluster, as `helm install` and `helm upgrade`
//! render (unlike `helm template`): `.Capabilities` from the cluster's discovery (the
//! host's `discovery` import: server version and every served `group/version` and
//! `group/version/Kind`), and `lookup` reading live objects through the host's `kube`,
//! within the call's grant (an object outside it fails the render with the grant's
//! message, as a forbidden lookup fails Helm's).

use std::rc::Rc;

use capstan_gotmpl::value::{Map, Value};
use capstan_helm::funcs::LookupFn;
use capstan_helm::objects::Capabilities;
use capstan_plugin_sdk::backend::capstan::plugin::discovery;
use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode};

use crate::store::with_context;

/// `.Capabilities` of the target cluster.
pub fn capabilities() -> Result<Capabilities, Error> {
    let version =
        discovery::server_version().map_err(|e| with_context(e, "read the cluster's version"))?;
    let mut capabilities = Capabilities::default()
        .with_kube_version(&version)
        .map_err(|e| {
            Error::new(
                ErrorCode::Internal,
                format!("the cluster reports version {version:?}: {e}"),
            )
        })?;
    capabilities.api_versions = discovery::api_versions()
        .map_err(|e| with_context(e, "read the cluster's API versions"))?;
    Ok(capabilities)
}

/// A JSON object from the API server as template data (integers stay `int64`, as
/// Kubernetes' unstructured objects hold them).
fn template_value(json: &str) -> Result<Value, String> {
    capstan_helm::values_json::from_typed_json(json)
}

/// `lookup apiVersion kind namespace name`: the object (`{}` when it does not exist), or,
/// with an empty name, the list of them as `<Kind>List` with `items`.
pub fn lookup() -> LookupFn {
    Rc::new(|api_version, kind, namespace, name| {
        let namespace = (!namespace.is_empty()).then(|| namespace.to_owned());
        if !name.is_empty() {
            let found = kube::get(&ObjectRef {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                namespace,
                name: name.to_owned(),
            });
            return match found {
                Ok(Some(json)) => template_value(&json),
                Ok(None) => Ok(Value::new_map()),
                Err(e) if e.code == ErrorCode::NotFound => Ok(Value::new_map()),
                Err(e) => Err(e.message),
            };
        }
        match kube::list(api_version, kind, namespace.as_deref(), None) {
            Ok(items) => {
                let items = items
                    .iter()
                    .map(|json| template_value(json))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut list = Map::new();
                list.insert("apiVersion".into(), Value::from(api_version));
                list.insert("kind".into(), Value::from(format!("{kind}List")));
                list.insert("items".into(), Value::from(items));
                Ok(Value::from(list))
            }
            Err(e) if e.code == ErrorCode::NotFound => Ok(Value::new_map()),
            Err(e) => Err(e.message),
        }
    })
}
