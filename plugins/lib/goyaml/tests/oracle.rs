//! Differential fixtures: 1100+ documents (YAML 1.1 edge cases, quoting and folding stress
//! strings, key-order sets, mutated real values files with syntax errors, control
//! characters and byte-order marks) with what real Go produced for them:
//! `sigs.k8s.io/yaml.Unmarshal` (as JSON, or its error), `sigs.k8s.io/yaml.Marshal` of the
//! result, go-yaml v3's encoder with indent 2 (`toYamlPretty`), BurntSushi/toml's encoder
//! (`toToml`) and go-yaml v2's own `Unmarshal` error. Generated with go.yaml.in/yaml/v2
//! v2.4.4, go.yaml.in/yaml/v3 v3.0.4, sigs.k8s.io/yaml v1.6.0, BurntSushi/toml v1.6.0 (the
//! versions Helm v3.21 builds with); cases where Go's own output varied between runs
//! (non-transitive key order over random map order) were left out. The recorder is
//! `tests/cluster/goyaml-oracle` (`make goyaml-oracle` re-records the fixture from its
//! `input` fields; a new case is a line `{"input": "..."}`).

use capstan_goyaml::{from_yaml, from_yaml_typed, jsonstep, to_toml, to_yaml, to_yaml_pretty};

const FIXTURES: &str = include_str!("fixtures/go-yaml-oracle.jsonl");

fn field<'a>(case: &'a serde_json::Value, name: &str) -> &'a str {
    case.get(name).and_then(|v| v.as_str()).unwrap_or("")
}

#[test]
fn matches_go() {
    let mut failures = Vec::new();
    let mut count = 0;
    for line in FIXTURES.lines().filter(|l| !l.is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).expect("fixture line is JSON");
        count += 1;
        let input = field(&case, "input");
        let mut check = |what: &str, want: &str, got: &str| {
            if want != got {
                failures.push(format!(
                    "{what} for {input:?}\n  go:   {want:?}\n  ours: {got:?}"
                ));
            }
        };
        let typed_err = from_yaml_typed(input)
            .err()
            .map(|e| e.0)
            .unwrap_or_default();
        check("go-yaml error", field(&case, "typed_err"), &typed_err);
        match from_yaml(input) {
            Err(e) => check("parse error", field(&case, "parse_err"), &e.0),
            Ok(v) => {
                check("parse error", field(&case, "parse_err"), "");
                let json = jsonstep::to_json_text(&v, 512).unwrap_or_else(|_| "ERR".into());
                check("parsed value as JSON", field(&case, "parse"), &json);
                let (y, ye) = match to_yaml(&v) {
                    Ok(y) => (y, String::new()),
                    Err(e) => (String::new(), e.0),
                };
                check("toYaml", field(&case, "to_yaml"), &y);
                check("toYaml error", field(&case, "to_yaml_err"), &ye);
                let pretty = to_yaml_pretty(&v).unwrap_or_else(|e| format!("ERR {}", e.0));
                check("toYamlPretty", field(&case, "pretty"), &pretty);
                match to_toml(&v) {
                    Ok(t) => {
                        check("toToml", field(&case, "toml"), &t);
                        check("toToml error", field(&case, "toml_err"), "");
                    }
                    Err(e) => {
                        let want = field(&case, "toml_err");
                        check("toToml error", want.trim_start_matches("PANIC "), &e.0);
                    }
                }
            }
        }
    }
    assert!(count > 1000, "fixture cases: {count}");
    assert!(
        failures.is_empty(),
        "{} of {count} cases differ from Go:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
