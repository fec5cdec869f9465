//! `values.schema.json` validation as Helm does it before rendering
//! (`pkg/chart/common/util/jsonschema.go`, `ValidateAgainstSchema`): each chart's schema
//! checks that chart's coalesced values, recursively into every subchart's key (skipped
//! when the key is absent or null, an error when it is not a map). Schemas without
//! `$schema` are read as draft 2020-12 (santhosh-tekuri/jsonschema's default); `format`
//! is asserted for draft 7 and earlier only. `urn:` references resolve to the permissive
//! `true` schema, as Helm's URN loader does; other external references (Helm's `http`,
//! `https` and `file` loaders) are not fetched, so a schema needing them fails to compile.
//!
//! Validation uses the `jsonschema` crate, so messages differ from Helm's (which are
//! santhosh-tekuri's); whether values pass or fail is what matters.

use capstan_gotmpl::value::Value;

use crate::chart::Chart;

/// Values do not meet a chart's schema, or a schema is unusable. The message lists each
/// failing chart as Helm does (`name:` then one `- at '/path': problem` line per error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("values don't meet the specifications of the schema(s) in the following chart(s):\n{0}")]
pub struct SchemaError(pub String);

/// The JSON `encoding/json` would marshal for a value (integral floats as integers, as
/// their JSON text has no fraction).
pub fn value_to_json(value: &Value) -> serde_json::Value {
    match value.to_data() {
        Value::Nil | Value::Object(_) => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Int(i) | Value::Int64(i) => serde_json::Value::from(i),
        Value::Float(x) => {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                serde_json::Value::from(x as i64)
            } else {
                serde_json::Number::from_f64(x)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
        }
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(&b).into_owned()),
        Value::List(items) => serde_json::Value::Array(items.iter().map(value_to_json).collect()),
        Value::Map(map) => serde_json::Value::Object(
            map.borrow()
                .iter()
                .map(|(k, v)| (k.clone(), value_to_json(v)))
                .collect(),
        ),
    }
}

/// Resolves `urn:` references to `true` (Helm's fallback); refuses everything else.
struct HelmRetriever;

impl jsonschema::Retrieve for HelmRetriever {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.scheme().as_str() == "urn" {
            return Ok(serde_json::Value::Bool(true));
        }
        Err(format!(
            "cannot load {} (external schemas are not fetched)",
            uri.as_str()
        )
        .into())
    }
}

/// Helm's `ValidateAgainstSingleSchema`: the problems of `values` against one schema,
/// each on its own line, or nothing.
pub fn validate_against_single_schema(values: &Value, schema: &[u8]) -> Result<(), String> {
    let schema: serde_json::Value =
        serde_json::from_slice(schema).map_err(|e| format!("invalid JSON schema: {e}"))?;
    let validator = jsonschema::options()
        .with_retriever(HelmRetriever)
        .with_base_uri("file:///values.schema.json")
        .build(&schema)
        .map_err(|e| format!("{e}\n"))?;
    let instance = value_to_json(values);
    let mut report = String::new();
    for error in validator.iter_errors(&instance) {
        report.push_str(&format!("- at '{}': {}\n", error.instance_path(), error));
    }
    if report.is_empty() {
        Ok(())
    } else {
        Err(report)
    }
}

/// Helm's `ValidateAgainstSchema` over a chart and its subcharts, with `values` the
/// chart's coalesced values.
pub fn validate_against_schema(chart: &Chart, values: &Value) -> Result<(), SchemaError> {
    let report = schema_report(chart, values);
    if report.is_empty() {
        Ok(())
    } else {
        Err(SchemaError(report))
    }
}

fn schema_report(chart: &Chart, values: &Value) -> String {
    let mut report = String::new();
    if let Some(schema) = &chart.schema
        && let Err(problems) = validate_against_single_schema(values, schema)
    {
        report.push_str(&format!("{}:\n{problems}", chart.name()));
    }
    for subchart in chart.dependencies() {
        let sub_values = match values {
            Value::Map(map) => map.borrow().get(subchart.name()).cloned(),
            _ => None,
        };
        match sub_values {
            None | Some(Value::Nil) => {}
            Some(map @ Value::Map(_)) => report.push_str(&schema_report(subchart, &map)),
            Some(other) => report.push_str(&format!(
                "{}:\ninvalid type for values: expected object (map), got {}\n",
                subchart.name(),
                other.type_name()
            )),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::Metadata;
    use capstan_gotmpl::value::Map;

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::from(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<Map>(),
        )
    }

    fn chart(name: &str, schema: &str, dependencies: Vec<Chart>) -> Chart {
        let mut chart = Chart::new(Metadata {
            name: name.into(),
            api_version: "v2".into(),
            version: "1.0.0".into(),
            ..Metadata::default()
        });
        if !schema.is_empty() {
            chart.schema = Some(schema.as_bytes().to_vec());
        }
        chart.set_dependencies(dependencies);
        chart
    }

    const SUBCHART_SCHEMA: &str = r#"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Values",
  "type": "object",
  "properties": {
    "age": {
      "description": "Age",
      "minimum": 0,
      "type": "integer"
    }
  },
  "required": [
    "age"
  ]
}
"#;

    const SUBCHART_SCHEMA_2020: &str = r#"{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"title": "Values",
	"type": "object",
	"properties": {
		"data": {
			"type": "array",
			"contains": { "type": "string" },
			"unevaluatedItems": { "type": "number" }
		}
	},
	"required": ["data"]
}
"#;

    const TEST_VALUES: &str = include_str!("../tests/testdata/helm-schema/test-values.yaml");
    const TEST_VALUES_NEGATIVE: &str =
        include_str!("../tests/testdata/helm-schema/test-values-negative.yaml");
    const TEST_SCHEMA: &str = include_str!("../tests/testdata/helm-schema/test-values.schema.json");
    const INVALID_SCHEMA: &str =
        include_str!("../tests/testdata/helm-schema/test-values-invalid.schema.json");

    fn yaml(text: &str) -> Value {
        capstan_goyaml::from_yaml(text).unwrap()
    }

    fn with_subchart(schema: &str) -> Chart {
        chart("chrt", "", vec![chart("subchart", schema, vec![])])
    }

    #[test]
    fn single_schema_like_helm() {
        // Helm TestValidateAgainstSingleSchema, ...InvalidSingleSchema, ...SingleSchemaNegative.
        assert_eq!(
            validate_against_single_schema(&yaml(TEST_VALUES), TEST_SCHEMA.as_bytes()),
            Ok(())
        );
        assert!(
            validate_against_single_schema(&yaml(TEST_VALUES), INVALID_SCHEMA.as_bytes()).is_err()
        );
        let report =
            validate_against_single_schema(&yaml(TEST_VALUES_NEGATIVE), TEST_SCHEMA.as_bytes())
                .unwrap_err();
        // Helm: "- at '': missing property 'employmentInfo'\n- at '/age': minimum: got -5, want 0\n"
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 2, "{report}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("- at '': ") && l.contains("employmentInfo"))
        );
        assert!(lines.iter().any(|l| l.starts_with("- at '/age': ")));
    }

    #[test]
    fn subchart_schema_like_helm() {
        // Helm TestValidateAgainstSchema / ...Negative.
        let chrt = with_subchart(SUBCHART_SCHEMA);
        let good = map(&[
            ("name", Value::from("John")),
            ("subchart", map(&[("age", Value::Float(25.0))])),
        ]);
        assert_eq!(validate_against_schema(&chrt, &good), Ok(()));
        let bad = map(&[("name", Value::from("John")), ("subchart", map(&[]))]);
        let report = validate_against_schema(&chrt, &bad).unwrap_err().0;
        // Helm: "subchart:\n- at '': missing property 'age'\n"
        assert!(report.starts_with("subchart:\n- at '': "), "{report}");
        assert!(report.contains("age") && report.ends_with('\n'), "{report}");
    }

    #[test]
    fn draft_2020_schema_like_helm() {
        // Helm TestValidateAgainstSchema2020 / ...Negative.
        let chrt = with_subchart(SUBCHART_SCHEMA_2020);
        let good = map(&[
            ("name", Value::from("John")),
            (
                "subchart",
                map(&[(
                    "data",
                    Value::from(vec![Value::from("hello"), Value::Float(12.0)]),
                )]),
            ),
        ]);
        assert_eq!(validate_against_schema(&chrt, &good), Ok(()));
        let bad = map(&[
            ("name", Value::from("John")),
            (
                "subchart",
                map(&[("data", Value::from(vec![Value::Float(12.0)]))]),
            ),
        ]);
        let report = validate_against_schema(&chrt, &bad).unwrap_err().0;
        assert!(report.starts_with("subchart:\n- at '/data': "), "{report}");
    }

    #[test]
    fn subchart_values_missing_nil_or_wrong_type() {
        // Helm TestValidateAgainstSchema_MissingSubchartValues_NoPanic,
        // ..._SubchartNil_NoPanic, ..._InvalidSubchartValuesType_NoPanic.
        let chrt = with_subchart(SUBCHART_SCHEMA);
        assert!(validate_against_schema(&chrt, &map(&[("name", Value::from("John"))])).is_ok());
        assert!(validate_against_schema(&chrt, &map(&[("subchart", Value::Nil)])).is_ok());
        assert_eq!(
            validate_against_schema(&chrt, &map(&[("subchart", Value::from("oops"))]))
                .unwrap_err()
                .0,
            "subchart:\ninvalid type for values: expected object (map), got string\n"
        );
    }

    #[test]
    fn unresolved_urn_is_ignored() {
        // Helm TestValidateAgainstSingleSchema_UnresolvedURN_Ignored.
        let schema = r#"{"$schema": "https://json-schema.org/draft-07/schema#", "$ref": "urn:example:helm:schemas:v1:helm-schema-validation-conditions:v1/helmSchemaValidation-true"}"#;
        let values = map(&[("any", Value::from("value"))]);
        assert_eq!(
            validate_against_single_schema(&values, schema.as_bytes()),
            Ok(())
        );
    }

    #[test]
    fn integral_floats_are_integers() {
        // YAML numbers are float64; an integral one satisfies "integer", as in Helm.
        let chrt = with_subchart(SUBCHART_SCHEMA);
        let set_int = map(&[("subchart", map(&[("age", Value::Int64(2))]))]);
        assert_eq!(validate_against_schema(&chrt, &set_int), Ok(()));
        let fraction = map(&[("subchart", map(&[("age", Value::Float(2.5))]))]);
        assert!(validate_against_schema(&chrt, &fraction).is_err());
    }
}
