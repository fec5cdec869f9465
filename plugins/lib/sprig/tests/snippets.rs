//! End-to-end oracles: the snippets in the parity corpus's `snippets.yaml` (`CAPSTAN_PARITY_DIR`,
//! default `shared/helm-parity` beside the checkout; see `corpus.rs`) that use only Go's
//! builtins, Sprig and `.Values` are executed with capstan-gotmpl and these functions, and
//! compared with what real Helm printed. For an expected error, the Sprig part of Helm's
//! message (after `error calling NAME: `) must match. Snippets needing Helm's own functions
//! or objects are left to capstan-helm's harness.

// Where the corpus is: the one definition, shared with capstan-helm (which this crate cannot
// depend on).
#[allow(dead_code)]
#[path = "../../helm/src/corpus.rs"]
mod corpus;

use capstan_gotmpl::exec::{MissingKey, Template, TemplateError};
use capstan_gotmpl::value::{Map, Value};

/// Helm reads values through sigs.k8s.io/yaml: YAML 1.1 scalars, every number a float64;
/// coalescing then drops null entries.
fn to_value(yaml: &serde_yaml_ng::Value) -> Value {
    match yaml {
        serde_yaml_ng::Value::Null => Value::Nil,
        serde_yaml_ng::Value::Bool(b) => Value::Bool(*b),
        serde_yaml_ng::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        // YAML 1.1 octal (`0755`), which this YAML 1.2 reader leaves as a string.
        serde_yaml_ng::Value::String(s)
            if s.len() > 1
                && s.starts_with('0')
                && s.bytes().all(|b| (b'0'..=b'7').contains(&b)) =>
        {
            Value::Float(i64::from_str_radix(s, 8).unwrap_or(0) as f64)
        }
        serde_yaml_ng::Value::String(s) => Value::from(s.as_str()),
        serde_yaml_ng::Value::Sequence(items) => {
            Value::from(items.iter().map(to_value).collect::<Vec<_>>())
        }
        serde_yaml_ng::Value::Mapping(entries) => Value::from(
            entries
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let key = match k {
                        // YAML 1.1 reads the key `y` as the boolean true.
                        serde_yaml_ng::Value::String(s) if s == "y" => "true".to_owned(),
                        serde_yaml_ng::Value::String(s) => s.clone(),
                        other => serde_yaml_ng::to_string(other)
                            .unwrap_or_default()
                            .trim()
                            .to_owned(),
                    };
                    (key, to_value(v))
                })
                .collect::<Map>(),
        ),
        serde_yaml_ng::Value::Tagged(tagged) => to_value(&tagged.value),
    }
}

/// Whether the snippet needs Helm's functions, objects or YAML 1.1 number forms.
fn needs_helm(template: &str, values: &str) -> bool {
    const HELM_ONLY: &[&str] = &[
        ".Release",
        ".Chart",
        ".Capabilities",
        ".Template",
        "include",
        "tpl ",
        "required",
        "toYaml",
        "fromYaml",
        "toToml",
        "lookup",
        "fromJsonArray",
        "define",
        "block",
        "template ",
        ".Files",
    ];
    HELM_ONLY.iter().any(|h| template.contains(h))
        || (template.contains("octal") && values.contains("0755"))
}

#[test]
fn sprig_snippets_match_helm() {
    let path = corpus::snippets_file().unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let entries: Vec<serde_yaml_ng::Value> =
        serde_yaml_ng::from_str(&text).expect("snippets.yaml parses");
    if let Err(e) = corpus::at_least(entries.len(), corpus::MIN_SNIPPETS, "snippets", &path) {
        panic!("{e}");
    }
    let (mut passed, mut failures) = (0, Vec::new());
    for entry in &entries {
        let field = |k: &str| {
            entry
                .get(k)
                .and_then(serde_yaml_ng::Value::as_str)
                .map(str::to_owned)
        };
        let (Some(name), Some(template)) = (field("name"), field("template")) else {
            continue;
        };
        let values_text = field("values").unwrap_or_default();
        if needs_helm(&template, &values_text) {
            continue;
        }
        let values: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&values_text).unwrap_or(serde_yaml_ng::Value::Null);
        let mut top = Map::new();
        top.insert("Values".into(), to_value(&values));
        let mut set = Template::new(capstan_sprig::functions());
        set.missing_key = MissingKey::Zero;
        let template_name = "snip/templates/t.yaml";
        let result = set
            .parse(template_name, &template)
            .map_err(TemplateError::from)
            .and_then(|()| set.execute(template_name, Value::from(top)))
            .map(|out| out.replace("<no value>", ""));
        let expected_output = entry.get("output").map(|o| match o {
            serde_yaml_ng::Value::String(s) => s.clone(),
            serde_yaml_ng::Value::Number(n) => match n.as_i64() {
                Some(i) => i.to_string(),
                None => capstan_gotmpl::value::format_float_g(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_yaml_ng::Value::Bool(b) => b.to_string(),
            _ => String::new(),
        });
        // Helm wraps execution errors in its own formats; the function's own message (or the
        // executor's) must appear in what Helm printed.
        let error_matches = |e: &TemplateError, expected: &str| {
            let message = match e {
                TemplateError::Exec(exec) => exec.message.clone(),
                other => other.to_string(),
            };
            expected.contains(sprig_part(&message))
        };
        let ok = match (&result, expected_output, field("error")) {
            (Ok(out), Some(expected), _) => *out == expected,
            (Err(e), Some(expected), _) | (Err(e), None, Some(expected)) => {
                error_matches(e, &expected)
            }
            _ => false,
        };
        if ok {
            passed += 1;
        } else {
            failures.push(format!("{name}: {template:?} gave {result:?}"));
        }
    }
    println!("snippets: {passed} passed, {} failed", failures.len());
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    assert!(
        passed >= SPRIG_SNIPPETS,
        "only {passed} snippets ran here (at least {SPRIG_SNIPPETS} expected)"
    );
}

/// How many of the corpus's snippets need only Go's builtins, Sprig and `.Values` (the
/// others are left to capstan-helm's harness): what this test ran when it was written.
const SPRIG_SNIPPETS: usize = 241;

/// The text after `error calling NAME: ` (the function's own message), else the whole text.
fn sprig_part(message: &str) -> &str {
    match message.find("error calling ") {
        Some(i) => {
            let rest = &message[i + "error calling ".len()..];
            rest.find(": ").map_or(rest, |j| &rest[j + 2..])
        }
        None => message,
    }
}
