//! Helm's own dependency tests (`pkg/chart/v2/util/dependencies_test.go`, v4.2.3) run
//! against Helm's test charts (`tests/testdata/helm`), with Helm's expected results.

use std::path::PathBuf;

use capstan_gotmpl::value::{Map, Value};
use capstan_helm::chart::Chart;
use capstan_helm::dependencies::{
    process_dependencies, process_dependency_enabled, process_dependency_import_values,
};
use capstan_helm::load::load;
use capstan_helm::semver::is_compatible_range;
use capstan_helm::values::path_value;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/helm")
        .join(name)
}

fn load_chart(name: &str) -> Chart {
    match load(testdata(name)) {
        Ok(chart) => chart,
        Err(error) => panic!("failed to load testdata {name}: {error}"),
    }
}

fn map(entries: &[(&str, Value)]) -> Value {
    Value::from(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<Map>(),
    )
}

fn chart_paths(chart: &Chart) -> Vec<String> {
    fn walk(chart: &Chart, out: &mut Vec<String>) {
        out.push(chart.chart_path());
        for child in chart.dependencies() {
            walk(child, out);
        }
    }
    let mut out = Vec::new();
    walk(chart, &mut out);
    out.sort();
    out
}

/// How Helm's tests print a looked-up value (`FormatFloat(x, 'f', -1, 64)` for floats).
fn shown(value: &Value) -> String {
    match value {
        Value::Float(x) => {
            let text = format!("{x}");
            text.strip_suffix(".0").map(str::to_owned).unwrap_or(text)
        }
        other => other.to_go_string(),
    }
}

fn check_paths(values: &Value, expected: &[(&str, &str)]) {
    for (path, want) in expected {
        match path_value(values, path) {
            Some(found) => assert_eq!(shown(&found), *want, "{path}"),
            None => panic!("retrieving import values table {path}: no value"),
        }
    }
}

#[test]
fn load_dependency() {
    // TestLoadDependency.
    let chart = load_chart("frobnitz");
    let expected = [
        ("alpine", "0.1.0", "https://example.com/charts"),
        ("mariner", "4.3.2", "https://example.com/charts"),
    ];
    let declared = chart.metadata.dependencies.clone().unwrap_or_default();
    let locked = chart
        .lock
        .clone()
        .map(|l| l.dependencies)
        .unwrap_or_default();
    for dependencies in [declared, locked] {
        assert_eq!(dependencies.len(), 2);
        for (dependency, (name, version, repository)) in dependencies.iter().zip(expected) {
            assert_eq!(dependency.name, name);
            assert_eq!(dependency.version, version);
            assert_eq!(dependency.repository, repository);
        }
    }
}

#[test]
fn dependency_enabled() {
    // TestDependencyEnabled.
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "tags with no effect",
            map(&[("tags", map(&[("nothinguseful", f.clone())]))]),
            vec![
                "parentchart",
                "parentchart.subchart1",
                "parentchart.subchart1.subcharta",
                "parentchart.subchart1.subchartb",
            ],
        ),
        (
            "tags disabling a group",
            map(&[("tags", map(&[("front-end", f.clone())]))]),
            vec!["parentchart"],
        ),
        (
            "tags disabling a group and enabling a different group",
            map(&[(
                "tags",
                map(&[("front-end", f.clone()), ("back-end", t.clone())]),
            )]),
            vec![
                "parentchart",
                "parentchart.subchart2",
                "parentchart.subchart2.subchartb",
                "parentchart.subchart2.subchartc",
            ],
        ),
        (
            "tags disabling only children",
            map(&[(
                "tags",
                map(&[("subcharta", f.clone()), ("subchartb", f.clone())]),
            )]),
            vec![
                "parentchart",
                "parentchart.subchart1",
                "parentchart.subchart1.subcharta",
                "parentchart.subchart1.subchartb",
            ],
        ),
        (
            "tags disabling all parents/children with additional tag re-enabling a parent",
            map(&[(
                "tags",
                map(&[
                    ("front-end", f.clone()),
                    ("subchart1", t.clone()),
                    ("back-end", f.clone()),
                ]),
            )]),
            vec!["parentchart", "parentchart.subchart1"],
        ),
        (
            "conditions enabling the parent charts, but back-end (b, c) is still disabled via values.yaml",
            map(&[
                ("subchart1", map(&[("enabled", t.clone())])),
                ("subchart2", map(&[("enabled", t.clone())])),
            ]),
            vec![
                "parentchart",
                "parentchart.subchart1",
                "parentchart.subchart1.subcharta",
                "parentchart.subchart1.subchartb",
                "parentchart.subchart2",
            ],
        ),
        (
            "conditions disabling the parent charts, effectively disabling children",
            map(&[
                ("subchart1", map(&[("enabled", f.clone())])),
                ("subchart2", map(&[("enabled", f.clone())])),
            ]),
            vec!["parentchart"],
        ),
        (
            "conditions a child using the second condition path of child's condition",
            map(&[(
                "subchart1",
                map(&[("subcharta", map(&[("enabled", f.clone())]))]),
            )]),
            vec![
                "parentchart",
                "parentchart.subchart1",
                "parentchart.subchart1.subchartb",
            ],
        ),
        (
            "tags enabling a parent/child group with condition disabling one child",
            map(&[
                (
                    "subchart2",
                    map(&[("subchartc", map(&[("enabled", f.clone())]))]),
                ),
                ("tags", map(&[("back-end", t.clone())])),
            ]),
            vec![
                "parentchart",
                "parentchart.subchart1",
                "parentchart.subchart1.subcharta",
                "parentchart.subchart1.subchartb",
                "parentchart.subchart2",
                "parentchart.subchart2.subchartb",
            ],
        ),
        (
            "tags will not enable a child if parent is explicitly disabled with condition",
            map(&[
                ("subchart1", map(&[("enabled", f.clone())])),
                ("tags", map(&[("front-end", t.clone())])),
            ]),
            vec!["parentchart"],
        ),
        (
            "subcharts with alias also respect conditions",
            map(&[
                ("subchart1", map(&[("enabled", f.clone())])),
                (
                    "subchart2alias",
                    map(&[
                        ("enabled", t.clone()),
                        ("subchartb", map(&[("enabled", t.clone())])),
                    ]),
                ),
            ]),
            vec![
                "parentchart",
                "parentchart.subchart2alias",
                "parentchart.subchart2alias.subchartb",
            ],
        ),
    ];
    for (name, values, expected) in cases {
        let mut chart = load_chart("subpop");
        process_dependency_enabled(&mut chart, &values).unwrap();
        assert_eq!(chart_paths(&chart), expected, "{name}");
    }
}

#[test]
fn process_dependency_import_values_coalescing_and_merging() {
    // TestProcessDependencyImportValues.
    let expected = [
        ("imported-chart1.SC1bool", "true"),
        ("imported-chart1.SC1float", "3.14"),
        ("imported-chart1.SC1int", "100"),
        ("imported-chart1.SC1string", "dollywood"),
        ("imported-chart1.SC1extra1", "11"),
        ("imported-chart1.SPextra1", "helm rocks"),
        ("imported-chartA.SCAbool", "false"),
        ("imported-chartA.SCAfloat", "3.1"),
        ("imported-chartA.SCAint", "55"),
        ("imported-chartA.SCAstring", "jabba"),
        ("imported-chartA.SPextra3", "1.337"),
        ("imported-chartA.SC1extra2", "1.337"),
        ("imported-chartA.SCAnested1.SCAnested2", "true"),
        ("imported-chartA-B.SCAbool", "false"),
        ("imported-chartA-B.SCAfloat", "3.1"),
        ("imported-chartA-B.SCAint", "55"),
        ("imported-chartA-B.SCAstring", "jabba"),
        ("imported-chartA-B.SCBbool", "true"),
        ("imported-chartA-B.SCBfloat", "7.77"),
        ("imported-chartA-B.SCBint", "33"),
        ("imported-chartA-B.SCBstring", "boba"),
        ("imported-chartA-B.SPextra5", "k8s"),
        ("imported-chartA-B.SC1extra5", "tiller"),
        ("overridden-chart1.SC1bool", "false"),
        ("overridden-chart1.SC1float", "3.141592"),
        ("overridden-chart1.SC1int", "99"),
        ("overridden-chart1.SC1string", "pollywog"),
        ("overridden-chart1.SPextra2", "42"),
        ("overridden-chartA.SCAbool", "true"),
        ("overridden-chartA.SCAfloat", "41.3"),
        ("overridden-chartA.SCAint", "808"),
        ("overridden-chartA.SCAstring", "jabberwocky"),
        ("overridden-chartA.SPextra4", "true"),
        ("overridden-chartA-B.SCAbool", "true"),
        ("overridden-chartA-B.SCAfloat", "41.3"),
        ("overridden-chartA-B.SCAint", "808"),
        ("overridden-chartA-B.SCAstring", "jabberwocky"),
        ("overridden-chartA-B.SCBbool", "false"),
        ("overridden-chartA-B.SCBfloat", "1.99"),
        ("overridden-chartA-B.SCBint", "77"),
        ("overridden-chartA-B.SCBstring", "jango"),
        ("overridden-chartA-B.SPextra6", "111"),
        ("overridden-chartA-B.SCAextra1", "23"),
        ("overridden-chartA-B.SCBextra1", "13"),
        ("overridden-chartA-B.SC1extra6", "77"),
        ("SCBexported1B", "1965"),
        ("SC1extra7", "true"),
        ("SCBexported2A", "blaster"),
        ("global.SC1exported2.all.SC1exported3", "SC1expstr"),
    ];
    let mut coalesced = load_chart("subpop");
    process_dependency_import_values(&mut coalesced, false).unwrap();
    check_paths(&coalesced.values, &expected);
    assert!(
        path_value(&coalesced.values, "ensurenull").is_none(),
        "coalescing leaves no null"
    );

    let mut merged = load_chart("subpop");
    process_dependency_import_values(&mut merged, true).unwrap();
    assert!(
        matches!(path_value(&merged.values, "ensurenull"), Some(Value::Nil)),
        "merging keeps the null"
    );
}

#[test]
fn import_values_from_shared_dependency_to_aliases() {
    // TestProcessDependencyImportValuesFromSharedDependencyToAliases.
    let mut chart = load_chart("chart-with-import-from-aliased-dependencies");
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    process_dependency_import_values(&mut chart, true).unwrap();
    check_paths(
        &chart.values,
        &[
            ("foo-defaults.defaultValue", "42"),
            ("bar-defaults.defaultValue", "42"),
            ("foo.defaults.defaultValue", "42"),
            ("bar.defaults.defaultValue", "42"),
            ("foo.grandchild.defaults.defaultValue", "42"),
            ("bar.grandchild.defaults.defaultValue", "42"),
        ],
    );
}

#[test]
fn import_values_multi_level_precedence() {
    // TestProcessDependencyImportValuesMultiLevelPrecedence.
    let mut chart = load_chart("three-level-dependent-chart/umbrella");
    process_dependency_import_values(&mut chart, true).unwrap();
    check_paths(
        &chart.values,
        &[
            ("app1.service.port", "3456"),
            ("app2.service.port", "8080"),
            ("app3.service.port", "9090"),
            ("app4.service.port", "1234"),
        ],
    );
}

#[test]
fn import_values_for_enabled_charts() {
    // TestProcessDependencyImportValuesForEnabledCharts.
    let mut chart = load_chart("import-values-from-enabled-subchart/parent-chart");
    process_dependency_import_values(&mut chart, true).unwrap();
    assert_eq!(chart.dependencies().len(), 2);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(chart.dependencies().len(), 1);
    assert_eq!(chart.metadata.dependencies.as_ref().map_or(0, Vec::len), 1);
    let prod = &chart.dependencies()[0].values;
    assert_eq!(
        path_value(prod, "nameOverride")
            .map(|v| v.to_go_string())
            .as_deref(),
        Some("parent-chart-prod")
    );
}

#[test]
fn get_alias_dependency() {
    // TestGetAliasDependency (through process_dependency_enabled): the first declared
    // dependency of frobnitz matches a loaded subchart within its version range.
    let chart = load_chart("frobnitz");
    let declared = chart.metadata.dependencies.clone().unwrap_or_default();
    let first = &declared[0];
    let matched = chart.dependencies().iter().find(|c| {
        c.name() == first.name && is_compatible_range(&first.version, &c.metadata.version)
    });
    assert!(matched.is_some());
    assert!(!is_compatible_range(
        "something else which is not in the compatible range",
        &matched
            .map(|c| c.metadata.version.clone())
            .unwrap_or_default()
    ));
}

#[test]
fn dependent_chart_aliases() {
    // TestDependentChartAliases.
    let mut chart = load_chart("dependent-chart-alias");
    assert_eq!(chart.dependencies().len(), 2);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(
        chart.dependencies().len(),
        3,
        "alias dependencies are added"
    );
    let declared = chart.metadata.dependencies.clone().unwrap_or_default();
    assert_eq!(chart.dependencies().len(), declared.len());
    let third = &declared[2];
    let aliased = chart
        .dependencies()
        .iter()
        .find(|c| c.name() == third.name)
        .expect("alias chart present");
    assert_eq!(aliased.ancestors(), [chart.name().to_owned()]);
    if !third.alias.is_empty() {
        assert_eq!(aliased.name(), third.alias);
    }
}

#[test]
fn subcharts_absent_from_dependencies_stay() {
    // TestDependentChartWithSubChartsAbsentInDependency.
    let mut chart = load_chart("dependent-chart-no-requirements-yaml");
    assert_eq!(chart.dependencies().len(), 2);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(chart.dependencies().len(), 2);
}

#[test]
fn subcharts_all_specified_in_dependencies() {
    // TestDependentChartsWithSubchartsAllSpecifiedInDependency.
    let mut chart = load_chart("dependent-chart-with-all-in-requirements-yaml");
    assert_eq!(chart.dependencies().len(), 2);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(chart.dependencies().len(), 2);
    assert_eq!(chart.metadata.dependencies.as_ref().map_or(0, Vec::len), 2);
}

#[test]
fn some_subcharts_specified_in_dependencies() {
    // TestDependentChartsWithSomeSubchartsSpecifiedInDependency.
    let mut chart = load_chart("dependent-chart-with-mixed-requirements-yaml");
    assert_eq!(chart.dependencies().len(), 2);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(chart.dependencies().len(), 2);
    assert_eq!(chart.metadata.dependencies.as_ref().map_or(0, Vec::len), 1);
}

#[test]
fn dependency_aliased_twice_with_doubly_referenced_subdependency() {
    // TestChartWithDependencyAliasedTwiceAndDoublyReferencedSubDependency.
    let mut chart = load_chart("chart-with-dependency-aliased-twice");
    assert_eq!(chart.dependencies().len(), 1);
    let values = chart.values.clone();
    process_dependency_enabled(&mut chart, &values).unwrap();
    assert_eq!(chart.dependencies().len(), 2);
    fn check_parents(chart: &Chart) {
        let mut chain = chart.ancestors().to_vec();
        chain.push(chart.name().to_owned());
        for child in chart.dependencies() {
            assert_eq!(child.ancestors(), chain.as_slice());
            check_parents(child);
        }
    }
    check_parents(&chart);
}

#[test]
fn process_dependencies_runs_both_steps() {
    let mut chart = load_chart("subpop");
    process_dependencies(&mut chart, &Value::new_map()).unwrap();
    assert_eq!(
        chart_paths(&chart),
        [
            "parentchart",
            "parentchart.subchart1",
            "parentchart.subchart1.subcharta",
            "parentchart.subchart1.subchartb"
        ]
    );
    assert!(path_value(&chart.values, "imported-chart1.SPextra1").is_some());
}
