//! `values.schema.json` validation as Helm does it before rendering
//! (`pkg/chart/common/util/jsonschema.go`, `ValidateAgainstSchema`): each chart's schema
//! checks that chart's coalesced values, recursively into every subchart's key (skipped
//! when the key is absent or null, an error when it is not a map). Schemas without
//! `$schema` are read as draft 2020-12 (santhosh-tekuri/jsonschema's default); `format`
//! is asserted for draft 7 and earlier only. `urn:` references resolve to the permissive
//! `true` schema, as Helm's URN loader does; other external references (Helm's `http`,
//! `https` and `file` loaders) are not fetched, so a schema needing them fails to compile.
//!
//! Validation uses the `jsonschema` crate; the common failures (type, required, bounds,
//! lengths, enum, const, pattern, additional properties, contains) are worded as Helm's
//! validator (santhosh-tekuri/jsonschema) words them, without its nested causes.

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

enum Problem {
    Missing(Vec<String>),
    Message(String),
}

/// santhosh-tekuri's `quote`: Go-quoted, in single quotes.
fn quote(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// santhosh-tekuri's `display` of a primitive JSON value.
fn display(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => quote(s),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => "value".into(),
        serde_json::Value::Null => "<nil>".into(),
        serde_json::Value::Number(n) => number_text(n),
        serde_json::Value::Bool(b) => b.to_string(),
    }
}

/// A JSON number as Go's `%v` prints the float64 santhosh-tekuri compares.
fn number_text(number: &serde_json::Number) -> String {
    match number.as_i64() {
        Some(i) => i.to_string(),
        None => capstan_gotmpl::value::format_float_g(number.as_f64().unwrap_or(f64::NAN)),
    }
}

fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// The message santhosh-tekuri/jsonschema (Helm's validator) gives for the common
/// failures; the `jsonschema` crate's own message otherwise.
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
    let instance: &serde_json::Value = error.instance();
    let got_number = || match instance {
        serde_json::Value::Number(n) => number_text(n),
        other => other.to_string(),
    };
    let limit_text = |limit: &serde_json::Value| match limit {
        serde_json::Value::Number(n) => number_text(n),
        other => other.to_string(),
    };
    let length = || match instance {
        serde_json::Value::String(s) => s.chars().count(),
        serde_json::Value::Array(items) => items.len(),
        serde_json::Value::Object(fields) => fields.len(),
        _ => 0,
    };
    match error.kind() {
        Kind::Type { kind } => {
            let want = match kind {
                TypeKind::Single(one) => one.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("got {}, want {want}", json_type_name(instance))
        }
        Kind::Minimum { limit } => {
            format!("minimum: got {}, want {}", got_number(), limit_text(limit))
        }
        Kind::Maximum { limit } => {
            format!("maximum: got {}, want {}", got_number(), limit_text(limit))
        }
        Kind::ExclusiveMinimum { limit } => {
            format!(
                "exclusiveMinimum: got {}, want {}",
                got_number(),
                limit_text(limit)
            )
        }
        Kind::ExclusiveMaximum { limit } => {
            format!(
                "exclusiveMaximum: got {}, want {}",
                got_number(),
                limit_text(limit)
            )
        }
        Kind::MinLength { limit } => format!("minLength: got {}, want {limit}", length()),
        Kind::MaxLength { limit } => format!("maxLength: got {}, want {limit}", length()),
        Kind::MinItems { limit } => format!("minItems: got {}, want {limit}", length()),
        Kind::MaxItems { limit } => format!("maxItems: got {}, want {limit}", length()),
        Kind::MinProperties { limit } => format!("minProperties: got {}, want {limit}", length()),
        Kind::MaxProperties { limit } => format!("maxProperties: got {}, want {limit}", length()),
        Kind::Enum { options } => match options.as_ref() {
            serde_json::Value::Array(items)
                if items.iter().all(|v| !v.is_array() && !v.is_object()) =>
            {
                let shown: Vec<String> = items.iter().map(display).collect();
                if shown.len() == 1 {
                    format!("value must be {}", shown[0])
                } else {
                    format!("value must be one of {}", shown.join(", "))
                }
            }
            _ => "enum failed".into(),
        },
        Kind::Constant { expected_value } => match expected_value.as_ref() {
            v if v.is_array() || v.is_object() => "const failed".into(),
            v => format!("value must be {}", display(v)),
        },
        Kind::Pattern { pattern } => match instance {
            serde_json::Value::String(text) => {
                format!("{} does not match pattern {}", quote(text), quote(pattern))
            }
            _ => error.to_string(),
        },
        Kind::AdditionalProperties { unexpected } => format!(
            "additional properties {} not allowed",
            unexpected
                .iter()
                .map(|p| quote(p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Kind::Contains => "no items match contains schema".into(),
        Kind::FalseSchema => "false schema".into(),
        _ => error.to_string(),
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

/// Build, once for the instance, what validating against the common kinds of chart schema
/// needs first: the meta-schema validators (draft 2020-12, which schemas without `$schema`
/// and Bitnami's `http://json-schema.org/schema#` are read as, and draft 7), kept by the
/// `jsonschema` crate for the instance's life (vendor/README.md). A backend's `prepare`
/// export calls it, so that a pre-initialised component starts with them.
pub fn prepare() {
    for schema in [
        br#"{"type": "object"}"#.as_slice(),
        br#"{"$schema": "http://json-schema.org/schema#", "type": "object"}"#,
        br#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}"#,
    ] {
        // Valid schemas and a nil value: nothing to report, only the validators built.
        let _ = validate_against_single_schema(&Value::Nil, schema);
    }
}

/// Helm's `ValidateAgainstSingleSchema`: the problems of `values` against one schema,
/// each on its own line, or nothing.
pub fn validate_against_single_schema(values: &Value, schema: &[u8]) -> Result<(), String> {
    let schema: serde_json::Value =
        serde_json::from_slice(schema).map_err(|e| format!("invalid JSON schema: {e}"))?;
    let instance = value_to_json(values);
    // Most schemas and values need no compiled validator (`schema_subset`); it is built
    // only when the quick check is unsure, and words the errors.
    if crate::schema_subset::certainly_valid(&schema, &instance) {
        return Ok(());
    }
    validate_compiled(&schema, &instance)
}

/// The problems of `instance` against `schema` as the compiled validator finds and words
/// them: what [`validate_against_single_schema`] reports when the subset walk is unsure,
/// and the reference that walk must agree with.
pub(crate) fn validate_compiled(
    schema: &serde_json::Value,
    instance: &serde_json::Value,
) -> Result<(), String> {
    let validator = jsonschema::options()
        .with_retriever(HelmRetriever)
        .with_base_uri("file:///values.schema.json")
        .build(schema)
        .map_err(|e| format!("{e}\n"))?;
    // (instance path, missing required properties or a message), in the validator's order.
    let mut problems: Vec<(String, Problem)> = Vec::new();
    for error in validator.iter_errors(instance) {
        let path = error.instance_path().to_string();
        if let jsonschema::error::ValidationErrorKind::Required { property } = error.kind() {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            if let Some((_, Problem::Missing(names))) = problems
                .iter_mut()
                .find(|(p, m)| *p == path && matches!(m, Problem::Missing(_)))
            {
                names.push(name);
                continue;
            }
            problems.push((path, Problem::Missing(vec![name])));
            continue;
        }
        problems.push((path, Problem::Message(describe(&error))));
    }
    let mut report = String::new();
    for (path, problem) in problems {
        let message = match problem {
            Problem::Message(message) => message,
            Problem::Missing(names) if names.len() == 1 => {
                format!("missing property {}", quote(&names[0]))
            }
            Problem::Missing(names) => format!(
                "missing properties {}",
                names
                    .iter()
                    .map(|n| quote(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        report.push_str(&format!("- at '{path}': {message}\n"));
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
    use crate::test_support::map;

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
        assert_eq!(
            report,
            "- at '': missing property 'employmentInfo'\n- at '/age': minimum: got -5, want 0\n"
        );
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
        assert_eq!(report, "subchart:\n- at '': missing property 'age'\n");
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
        // Helm adds the nested cause ("  - at '/data/0': got number, want string").
        assert!(
            report.starts_with("subchart:\n- at '/data': no items match contains schema\n"),
            "{report}"
        );
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
