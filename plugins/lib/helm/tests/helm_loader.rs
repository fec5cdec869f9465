//! Helm's own loader tests (`pkg/chart/v2/loader/load_test.go`, v4.2.3) run against
//! Helm's loader test charts (`tests/testdata/helm-loader`), with Helm's expectations.
//!
//! Not reproduced: `TestLoadDirWithSymlink` (its link points outside the chart folder,
//! which Capstan refuses on purpose).

use std::path::PathBuf;

use capstan_gotmpl::value::Value;
use capstan_helm::chart::{Chart, File};
use capstan_helm::load::{load, load_files, load_values};
use capstan_helm::values::merge_maps;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/helm-loader")
        .join(name)
}

fn load_testdata(name: &str) -> Chart {
    match load(testdata(name)) {
        Ok(chart) => chart,
        Err(error) => panic!("failed to load testdata {name}: {error}"),
    }
}

fn verify_chart(chart: &Chart) {
    assert!(!chart.name().is_empty());
    assert_eq!(chart.templates.len(), 1);
    assert_eq!(
        chart.files.len(),
        6,
        "{:?}",
        chart.files.iter().map(|f| &f.name).collect::<Vec<_>>()
    );
    assert_eq!(chart.dependencies().len(), 2);
    for dependency in chart.dependencies() {
        let expected = match dependency.name() {
            "alpine" => "0.1.0",
            "mariner" => "4.3.2",
            other => panic!("Unknown dependency {other}"),
        };
        assert_eq!(dependency.metadata.version, expected);
    }
}

fn verify_dependencies(chart: &Chart) {
    let declared = chart.metadata.dependencies.clone().unwrap_or_default();
    assert_eq!(declared.len(), 2);
    let expected = [
        ("alpine", "0.1.0", "https://example.com/charts"),
        ("mariner", "4.3.2", "https://example.com/charts"),
    ];
    for (dependency, (name, version, repository)) in declared.iter().zip(expected) {
        assert_eq!(dependency.name, name);
        assert_eq!(dependency.version, version);
        assert_eq!(dependency.repository, repository);
    }
}

fn verify_chart_file_and_template(chart: &Chart, name: &str) {
    assert_eq!(chart.name(), name);
    assert_eq!(chart.templates.len(), 1);
    assert_eq!(chart.templates[0].name, "templates/template.tpl");
    assert!(!chart.templates[0].data.is_empty());
    assert_eq!(chart.files.len(), 6);
    assert_eq!(chart.dependencies().len(), 2);
    assert_eq!(chart.metadata.dependencies.as_ref().map_or(0, Vec::len), 2);
    assert_eq!(chart.lock.as_ref().map_or(0, |l| l.dependencies.len()), 2);
    for dependency in chart.dependencies() {
        match dependency.name() {
            "mariner" => {}
            "alpine" => {
                assert_eq!(dependency.templates.len(), 1);
                assert_eq!(dependency.templates[0].name, "templates/alpine-pod.yaml");
                assert!(!dependency.templates[0].data.is_empty());
                assert_eq!(dependency.files.len(), 1);
                assert_eq!(dependency.dependencies().len(), 2);
            }
            other => panic!("Unexpected dependency {other}"),
        }
    }
}

fn verify_bom_stripped(files: &[File]) {
    for file in files {
        assert!(
            !file.data.starts_with(b"\xEF\xBB\xBF"),
            "Byte Order Mark still present in processed file {}",
            file.name
        );
    }
}

#[test]
fn load_dir() {
    // TestLoadDir.
    let chart = load_testdata("frobnitz");
    verify_chart_file_and_template(&chart, "frobnitz");
    verify_chart(&chart);
    verify_dependencies(&chart);
}

#[test]
fn load_dir_with_dev_null() {
    // TestLoadDirWithDevNull: an irregular file (a link to /dev/null) is refused.
    assert!(load(testdata("frobnitz_with_dev_null")).is_err());
}

#[test]
fn load_dir_and_archive_with_utf_bom() {
    // TestLoadDirWithUTFBOM, TestLoadArchiveWithUTFBOM.
    for name in ["frobnitz_with_bom", "frobnitz_with_bom.tgz"] {
        let chart = load_testdata(name);
        verify_chart_file_and_template(&chart, "frobnitz");
        verify_chart(&chart);
        verify_dependencies(&chart);
        verify_bom_stripped(&chart.files);
    }
}

#[test]
fn load_v1_and_v2_with_requirements() {
    // TestLoadV1, TestLoadFileV1, TestLoadV2WithReqs.
    for name in ["frobnitz.v1", "frobnitz.v1.tgz", "frobnitz.v2.reqs"] {
        verify_dependencies(&load_testdata(name));
    }
}

#[test]
fn load_file() {
    // TestLoadFile.
    let chart = load_testdata("frobnitz-1.2.3.tgz");
    verify_chart_file_and_template(&chart, "frobnitz");
    verify_chart(&chart);
    verify_dependencies(&chart);
}

#[test]
fn load_file_backslash() {
    // TestLoadFileBackslash: an archive packed on Windows.
    let chart = load_testdata("frobnitz_backslash-1.2.3.tgz");
    verify_chart_file_and_template(&chart, "frobnitz_backslash");
    verify_chart(&chart);
    verify_dependencies(&chart);
}

#[test]
fn load_files_bad_cases() {
    // TestLoadFiles_BadCases.
    let error = load_files(vec![File::new("requirements.lock", "")]).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("validation: chart.metadata.apiVersion is required"),
        "{error}"
    );
}

const FROBNITZ_CHART_YAML: &str = "apiVersion: v1
name: frobnitz
description: This is a frobnitz.
version: \"1.2.3\"
keywords:
  - frobnitz
  - sprocket
  - dodad
maintainers:
  - name: The Helm Team
    email: helm@example.com
  - name: Someone Else
    email: nobody@example.com
sources:
  - https://example.com/foo/bar
home: http://example.com
icon: https://example.com/64x64.png
";

#[test]
fn load_files_like_helm() {
    // TestLoadFiles.
    let chart = load_files(vec![
        File::new("Chart.yaml", FROBNITZ_CHART_YAML),
        File::new("values.yaml", "var: some values"),
        File::new("values.schema.json", "type: Values"),
        File::new("templates/deployment.yaml", "some deployment"),
        File::new("templates/service.yaml", "some service"),
    ])
    .unwrap();
    assert_eq!(chart.name(), "frobnitz");
    let Value::Map(values) = &chart.values else {
        panic!("values are a map")
    };
    assert_eq!(values.borrow()["var"].as_str(), Some("some values"));
    assert_eq!(chart.schema.as_deref(), Some(&b"type: Values"[..]));
    assert_eq!(chart.templates.len(), 2);
    assert_eq!(chart.metadata.maintainers.len(), 2);
    assert_eq!(chart.metadata.maintainers[1].email, "nobody@example.com");
    assert_eq!(chart.metadata.keywords, ["frobnitz", "sprocket", "dodad"]);
    assert_eq!(
        load_files(Vec::new()).unwrap_err().to_string(),
        "Chart.yaml file is missing"
    );
}

#[test]
fn load_files_order() {
    // TestLoadFilesOrder: Chart.yaml is read first wherever it is in the list.
    let chart = load_files(vec![
        File::new("requirements.yaml", "dependencies:"),
        File::new("values.yaml", "var: some values"),
        File::new("templates/deployment.yaml", "some deployment"),
        File::new("templates/service.yaml", "some service"),
        File::new("Chart.yaml", FROBNITZ_CHART_YAML),
    ])
    .unwrap();
    assert_eq!(chart.metadata.api_version, "v1");
    assert!(chart.files.iter().any(|f| f.name == "requirements.yaml"));
}

#[test]
fn load_values_like_helm() {
    // TestLoadValues.
    let single = load_values(b"\nfoo:\n  image: foo:v1\nbar:\n  version: v2\n").unwrap();
    assert_eq!(
        single.to_go_string(),
        "map[bar:map[version:v2] foo:map[image:foo:v1]]"
    );
    let multiple =
        load_values(b"\nfoo:\n  image: foo:v1\nbar:\n  version: v2\n---\nfoo:\n  image: foo:v2\n")
            .unwrap();
    assert_eq!(
        multiple.to_go_string(),
        "map[bar:map[version:v2] foo:map[image:foo:v2]]"
    );
}

#[test]
fn merge_values_v2() {
    // TestMergeValuesV2 (MergeMaps).
    let parse = |text: &str| load_values(text.as_bytes()).unwrap();
    let nested = parse("foo: bar\nbaz:\n  cool: stuff\n");
    let another_nested = parse("foo: bar\nbaz:\n  cool: things\n  awesome: stuff\n");
    let flat = parse("foo: bar\nbaz: stuff\n");
    let another_flat = parse("testing: fun\n");
    assert!(merge_maps(&flat, &nested).deep_equal(&nested));
    assert!(merge_maps(&nested, &flat).deep_equal(&flat));
    assert!(merge_maps(&nested, &another_nested).deep_equal(&another_nested));
    let expected = parse("testing: fun\nfoo: bar\nbaz:\n  cool: things\n  awesome: stuff\n");
    assert!(merge_maps(&another_flat, &another_nested).deep_equal(&expected));
}
