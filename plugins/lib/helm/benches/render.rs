//! Native rendering of the 20 largest parity-corpus charts, measured as `helm template`
//! works: each iteration loads the chart folder (with its subcharts) from disk, reads the
//! `default` values file, renders, and assembles the output text.
//!
//! "Largest" is the total size in bytes of the regular files under a case's `chart/`
//! folder (subcharts included); ties are broken by case name, so the pick is deterministic.
//! The corpus is `capstan_helm::corpus` (`CAPSTAN_PARITY_DIR`, default `shared/helm-parity`
//! beside the checkout); without it the bench fails, naming the folder it looked in.
//! `scripts/bench-render` compares the same charts with real Helm and `capstan template`.
//!
//! Besides the whole render (`render/<chart>`), each stage is measured on its own, so a
//! change shows where it helped: `stage_load/<chart>` (reading the folder and subcharts),
//! `stage_render/<chart>` (dependencies, values, templates and sorting into manifests and
//! hooks, from a loaded chart) and
//! `stage_text/<chart>` (the output text of an assembled render).

use std::path::{Path, PathBuf};
use std::time::Duration;

use capstan_gotmpl::value::Value;
use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::template_text;
use criterion::Criterion;

/// How many charts to measure.
const CHARTS: usize = 20;

/// Total size of the regular files under `dir` (symbolic links are not followed).
fn tree_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(t) if t.is_dir() => tree_bytes(&entry.path()),
            Ok(t) if t.is_file() => entry.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// The `CHARTS` largest cases (by chart bytes, then name), largest first.
fn largest_cases(cases: Vec<PathBuf>) -> Vec<(String, PathBuf)> {
    let mut cases: Vec<(u64, String, PathBuf)> = cases
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (tree_bytes(&p.join("chart")), name, p)
        })
        .collect();
    cases.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    cases
        .into_iter()
        .take(CHARTS)
        .map(|(_, name, path)| (name, path))
        .collect()
}

/// What `helm template rel CHART -n ns -f values/default.yaml` does, natively.
fn render_case(case: &Path, options: &RenderOptions) -> Result<String, String> {
    let chart = capstan_helm::load::load_dir(case.join("chart")).map_err(|e| e.to_string())?;
    let user_values = match std::fs::read(case.join("values/default.yaml")) {
        Ok(data) => capstan_helm::load::load_values(&data)?,
        Err(_) => Value::new_map(),
    };
    let assembled = capstan_helm::pipeline::render_chart(chart, &user_values, options, false)
        .map_err(|e| e.to_string())?;
    Ok(template_text(&assembled, true))
}

fn render(c: &mut Criterion) {
    let cases = largest_cases(capstan_helm::corpus::case_dirs().unwrap_or_else(|e| panic!("{e}")));
    let options = RenderOptions {
        release: ReleaseInfo {
            name: "rel".into(),
            namespace: "ns".into(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        },
        capabilities: Capabilities::default()
            .with_kube_version("v1.36.0")
            .expect("kube version"),
        ..RenderOptions::default()
    };
    let mut group = c.benchmark_group("render");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (name, case) in &cases {
        // A chart Helm refuses is timed too (up to the error), but say so.
        if let Err(e) = render_case(case, &options) {
            println!("{name}: render fails ({e}); timing it anyway");
        }
        group.bench_function(name.as_str(), |b| {
            b.iter(|| std::hint::black_box(render_case(case, &options)))
        });
    }
    group.finish();
    stages(c, &cases, &options);
}

/// The stages of [`render_case`], each timed alone on the same charts.
fn stages(c: &mut Criterion, cases: &[(String, PathBuf)], options: &RenderOptions) {
    let configure =
        |group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>| {
            group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(300))
                .measurement_time(Duration::from_secs(1));
        };
    let mut load = c.benchmark_group("stage_load");
    configure(&mut load);
    for (name, case) in cases {
        load.bench_function(name.as_str(), |b| {
            b.iter(|| std::hint::black_box(capstan_helm::load::load_dir(case.join("chart"))))
        });
    }
    load.finish();

    let mut prepared = Vec::new();
    for (name, case) in cases {
        let Ok(chart) = capstan_helm::load::load_dir(case.join("chart")) else {
            continue;
        };
        let user_values = std::fs::read(case.join("values/default.yaml"))
            .ok()
            .and_then(|data| capstan_helm::load::load_values(&data).ok())
            .unwrap_or_else(Value::new_map);
        prepared.push((name, chart, user_values));
    }
    let mut render = c.benchmark_group("stage_render");
    configure(&mut render);
    for (name, chart, user_values) in &prepared {
        render.bench_function(name.as_str(), |b| {
            b.iter_batched(
                || chart.clone(),
                |chart| {
                    std::hint::black_box(capstan_helm::pipeline::render_chart(
                        chart,
                        user_values,
                        options,
                        false,
                    ))
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    render.finish();

    let mut text = c.benchmark_group("stage_text");
    configure(&mut text);
    for (name, chart, user_values) in &prepared {
        let Ok(assembled) =
            capstan_helm::pipeline::render_chart(chart.clone(), user_values, options, false)
        else {
            continue;
        };
        text.bench_function(name.as_str(), |b| {
            b.iter(|| std::hint::black_box(template_text(&assembled, true)))
        });
    }
    text.finish();
}

/// Run the benchmarks on a thread with a large stack (deeply nested templates recurse),
/// which is why this is not `criterion_main!`.
fn main() {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut criterion = Criterion::default().configure_from_args();
            render(&mut criterion);
            criterion.final_summary();
        })
        .expect("bench thread")
        .join()
        .expect("bench panicked");
}
