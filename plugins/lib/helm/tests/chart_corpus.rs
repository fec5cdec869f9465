//! Every chart of the Helm parity corpus (`capstan_helm::corpus`: `CAPSTAN_PARITY_DIR`,
//! default `shared/helm-parity` beside the checkout; a missing corpus, or one with fewer
//! than `corpus::MIN_CASES` charts, fails) loads with its vendored
//! dependencies; for each values variant Helm rendered, dependency processing and
//! coalescing succeed, and every chart Helm's output names in a `# Source:` line is still
//! enabled after dependency processing (by its full path, aliases included), and the
//! coalesced values meet every chart's `values.schema.json` (Helm rendered them, so
//! they passed Helm's schema check).

use std::collections::BTreeSet;
use std::path::PathBuf;

use capstan_gotmpl::value::Value;
use capstan_helm::chart::Chart;
use capstan_helm::dependencies::{check_installable, process_dependencies};
use capstan_helm::load::{load, load_values};
use capstan_helm::schema::validate_against_schema;
use capstan_helm::values::coalesce_values;

fn full_paths(chart: &Chart, out: &mut BTreeSet<String>) {
    out.insert(chart.chart_full_path());
    for child in chart.dependencies() {
        full_paths(child, out);
    }
}

fn count(chart: &Chart) -> usize {
    1 + chart.dependencies().iter().map(count).sum::<usize>()
}

fn count_schemas(chart: &Chart) -> usize {
    usize::from(chart.schema.is_some())
        + chart
            .dependencies()
            .iter()
            .map(count_schemas)
            .sum::<usize>()
}

/// The chart paths named by `# Source: a/charts/b/templates/x.yaml` lines.
fn source_charts(expected: &str) -> BTreeSet<String> {
    expected
        .lines()
        .filter_map(|line| line.strip_prefix("# Source: "))
        .filter_map(|path| {
            path.split_once("/templates/")
                .map(|(chart, _)| chart.to_owned())
        })
        .collect()
}

#[test]
fn every_corpus_chart_loads_and_processes_dependencies() {
    let cases = capstan_helm::corpus::case_dirs().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut charts = 0;
    let mut schemas_checked = 0;
    for case in &cases {
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let loaded = match load(case.join("chart")) {
            Ok(chart) => chart,
            Err(error) => {
                failures.push(format!("{name}: load: {error}"));
                continue;
            }
        };
        charts += count(&loaded);
        let Ok(variants) = std::fs::read_dir(case.join("values")) else {
            continue;
        };
        let mut variants: Vec<PathBuf> =
            variants.filter_map(Result::ok).map(|e| e.path()).collect();
        variants.sort();
        for variant in variants {
            let Some(stem) = variant
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
            else {
                continue;
            };
            let expected_path = case.join("expected").join(format!("{stem}.yaml"));
            let Ok(expected) = std::fs::read_to_string(&expected_path) else {
                continue; // Helm refused this variant.
            };
            let data = std::fs::read(&variant).unwrap_or_default();
            let user = match load_values(&data) {
                Ok(values) => values,
                Err(error) => {
                    failures.push(format!("{name}/{stem}: values: {error}"));
                    continue;
                }
            };
            if let Err(error) = check_installable(&loaded) {
                failures.push(format!("{name}/{stem}: {error}"));
                continue;
            }
            let mut chart = loaded.clone();
            if let Err(error) = process_dependencies(&mut chart, &user) {
                failures.push(format!("{name}/{stem}: dependencies: {error}"));
                continue;
            }
            let coalesced = match coalesce_values(&chart, &user) {
                Ok(values) => values,
                Err(error) => {
                    failures.push(format!("{name}/{stem}: coalesce: {error}"));
                    continue;
                }
            };
            schemas_checked += count_schemas(&chart);
            if let Err(error) = validate_against_schema(&chart, &coalesced) {
                failures.push(format!("{name}/{stem}: schema: {error}"));
            }
            let mut enabled = BTreeSet::new();
            full_paths(&chart, &mut enabled);
            for source in source_charts(&expected) {
                if !enabled.contains(&source) {
                    failures.push(format!(
                        "{name}/{stem}: Helm rendered {source} but it is not enabled here"
                    ));
                }
            }
        }
    }
    eprintln!(
        "loaded {} corpus cases ({charts} charts with subcharts); {schemas_checked} schema checks",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn empty_user_values_are_a_map() {
    let values = load_values(b"").unwrap_or(Value::Nil);
    assert!(matches!(values, Value::Map(_)));
}
