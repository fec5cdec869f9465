//! The user's values from the host's ordered value layers, merged as Helm merges them:
//! each values document coalesced over the previous ones (maps recursively, anything else
//! replaced), then each `--set`-style expression applied in turn, with Helm's typing rules
//! (`capstan_helm::strvals`). A document from an optional source that does not parse is
//! skipped; any other bad layer is an `invalid-input` error naming its origin.

use capstan_gotmpl::value::Value;
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::ValueLayer;

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// Merge `layers`, in order, into one values map.
pub fn merge(layers: &[ValueLayer]) -> Result<Value, Error> {
    use capstan_helm::strvals;
    let mut values = Value::new_map();
    for layer in layers {
        let (flag, expression, parse): (&str, &str, StrvalsFn) = match layer {
            ValueLayer::Document(document) => {
                match capstan_helm::load::load_values(document.content.as_bytes()) {
                    Ok(parsed) => values = capstan_helm::values::merge_maps(&values, &parsed),
                    Err(_) if document.optional => {}
                    Err(message) => {
                        return Err(invalid(format!(
                            "{}: not a values document: {message}",
                            document.origin
                        )));
                    }
                }
                continue;
            }
            ValueLayer::SetJson(e) => ("--set-json", e, strvals::parse_json_into),
            ValueLayer::Set(e) => ("--set", e, strvals::parse_into),
            ValueLayer::SetString(e) => ("--set-string", e, strvals::parse_into_string),
            ValueLayer::SetLiteral(e) => ("--set-literal", e, strvals::parse_literal_into),
            ValueLayer::SetFile(file) => {
                // The host read the file: its text is the value, taken verbatim.
                let expression = format!("{}={}", file.path, file.content);
                strvals::parse_literal_into(&expression, &values)
                    .map_err(|e| invalid(format!("--set-file {}: {e}", file.path)))?;
                continue;
            }
        };
        parse(expression, &values).map_err(|e| invalid(format!("{flag} {expression:?}: {e}")))?;
    }
    Ok(values)
}

type StrvalsFn = fn(&str, &Value) -> Result<(), capstan_helm::strvals::StrvalsError>;

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::ValuesDocument;

    fn document(content: &str, optional: bool) -> ValueLayer {
        ValueLayer::Document(ValuesDocument {
            origin: "valuesFrom[0] (ConfigMap n/cm, key values.yaml)".into(),
            content: content.into(),
            optional,
        })
    }

    #[test]
    fn documents_coalesce_in_order_and_expressions_apply_last() {
        let values = merge(&[
            document("image:\n  repository: web\n  tag: v1\nport: 80\n", false),
            document(r#"{"image": {"tag": "v2"}, "replicas": 3}"#, false),
            ValueLayer::Set("replicas=5,debug=true".into()),
            ValueLayer::SetString("port=8080".into()),
        ])
        .unwrap();
        let json = capstan_helm::values_json::to_typed_json(&values).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["image"]["repository"], "web");
        assert_eq!(parsed["image"]["tag"], "v2");
        assert_eq!(parsed["port"], "8080");
        assert_eq!(parsed["debug"], true);
    }

    #[test]
    fn a_broken_document_names_its_origin_unless_optional() {
        let error = merge(&[document("a: [\n", false)]).unwrap_err();
        assert!(
            error.message.starts_with(
                "valuesFrom[0] (ConfigMap n/cm, key values.yaml): not a values document"
            ),
            "{}",
            error.message
        );
        assert!(merge(&[document("a: [\n", true)]).is_ok());
        let bad_set = merge(&[ValueLayer::Set("a[=1".into())]).unwrap_err();
        assert!(
            bad_set.message.starts_with("--set \"a[=1\""),
            "{}",
            bad_set.message
        );
    }
}
