//! Time native rendering of one chart folder, as `helm template` does it: load the chart
//! (and its subcharts) from disk, read the values file, render, and assemble the output
//! text — repeated `N` times in one process.
//!
//! ```text
//! cargo run --release -p capstan-helm --example render -- CHART_DIR [VALUES.yaml] \
//!     [--iterations N] [--max-seconds S] [--name rel] [--namespace ns] [--kube-version v1.36.0]
//!     [--phases] [--print] [--output FILE]
//! ```
//!
//! `--max-seconds` stops early (after at least one render) once that much time has been
//! spent, for charts that generate RSA keys and take seconds per render.
//!
//! Allocates with mimalloc (see [`ALLOCATOR`]).
//!
//! Prints one line: `iterations=N mean_ms=… median_ms=… min_ms=… bytes=…` (`bytes` is the
//! size of the rendered output). With `--phases`, also the median time of each step (load,
//! values file, dependencies, coalesce, schema validation, render values, templates,
//! assemble+text). With `--print`, writes the last render to stdout instead (for checking
//! output); with `--output FILE`, writes it to FILE as well as timing (`scripts/bench-render`
//! compares it with Helm's before it counts the times).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use capstan_gotmpl::value::Value;
use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::template_text;

/// The example's allocator. With glibc's `malloc`, allocating and freeing was about 30 % of
/// a native render (perf, bitnami/mastodon); a program that embeds the engine picks its own
/// allocator, as the rendering components do (`capstan_plugin_sdk::use_size_class_allocator!`),
/// and mimalloc renders mastodon, wordpress and kube-prometheus 19-20 % faster than glibc
/// (docs/rendering.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Command-line arguments.
struct Args {
    chart: PathBuf,
    values: Option<PathBuf>,
    iterations: usize,
    max_seconds: Option<f64>,
    name: String,
    namespace: String,
    kube_version: String,
    phases: bool,
    print: bool,
    output: Option<PathBuf>,
}

/// Parse the command line (no external parser: this is a small tool).
fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        chart: PathBuf::new(),
        values: None,
        iterations: 10,
        max_seconds: None,
        name: "rel".into(),
        namespace: "ns".into(),
        kube_version: "v1.36.0".into(),
        phases: false,
        print: false,
        output: None,
    };
    let mut positional = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--iterations" | "-N" => {
                args.iterations = value(&arg)?
                    .parse()
                    .map_err(|e| format!("--iterations: {e}"))?
            }
            "--max-seconds" => {
                args.max_seconds = Some(
                    value(&arg)?
                        .parse()
                        .map_err(|e| format!("--max-seconds: {e}"))?,
                )
            }
            "--name" => args.name = value(&arg)?,
            "--namespace" | "-n" => args.namespace = value(&arg)?,
            "--kube-version" => args.kube_version = value(&arg)?,
            "--phases" => args.phases = true,
            "--print" => args.print = true,
            "--output" => args.output = Some(PathBuf::from(value(&arg)?)),
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}")),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let mut positional = positional.into_iter();
    args.chart = positional
        .next()
        .ok_or("usage: render CHART_DIR [VALUES.yaml] [--iterations N] [--phases] [--print]")?;
    args.values = positional.next();
    if positional.next().is_some() {
        return Err("too many arguments".into());
    }
    args.iterations = args.iterations.max(1);
    Ok(args)
}

/// Time spent in each step of one render.
#[derive(Default, Clone, Copy)]
struct Phases {
    load: Duration,
    values_file: Duration,
    dependencies: Duration,
    coalesce: Duration,
    schema: Duration,
    render_values: Duration,
    templates: Duration,
    assemble: Duration,
}

/// One full render, step by step (the same steps as `pipeline::render_chart`, which is what
/// `capstan template` runs in the component), returning the output text and step times.
fn render_once(args: &Args, options: &RenderOptions) -> Result<(String, Phases), String> {
    let mut phases = Phases::default();
    let mut clock = Instant::now();
    let mut lap = |slot: &mut Duration| {
        let now = Instant::now();
        *slot = now - clock;
        clock = now;
    };
    let mut chart = capstan_helm::load::load_dir(&args.chart)
        .map_err(|e| format!("loading {}: {e}", args.chart.display()))?;
    lap(&mut phases.load);
    let user_values = match &args.values {
        Some(path) => {
            let data =
                std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            capstan_helm::load::load_values(&data)?
        }
        None => Value::new_map(),
    };
    lap(&mut phases.values_file);
    let required = chart.metadata.kube_version.clone();
    let actual = options.capabilities.kube_version.clone();
    if !required.is_empty() && !capstan_helm::semver::is_compatible_range(&required, &actual) {
        return Err(format!(
            "chart requires kubeVersion: {required} which is incompatible with Kubernetes {actual}"
        ));
    }
    capstan_helm::dependencies::process_dependencies(&mut chart, &user_values)
        .map_err(|e| e.to_string())?;
    lap(&mut phases.dependencies);
    let values =
        capstan_helm::values::coalesce_values(&chart, &user_values).map_err(|e| e.to_string())?;
    lap(&mut phases.coalesce);
    capstan_helm::schema::validate_against_schema(&chart, &values).map_err(|e| e.to_string())?;
    lap(&mut phases.schema);
    let top = capstan_helm::engine::render_values(&chart, &values, options);
    lap(&mut phases.render_values);
    let files = capstan_helm::engine::render(&chart, &top, options).map_err(|e| e.to_string())?;
    lap(&mut phases.templates);
    let assembled = capstan_helm::output::assemble(chart.name(), files, false, false)
        .map_err(|e| e.to_string())?;
    let text = template_text(&assembled, true);
    lap(&mut phases.assemble);
    Ok((text, phases))
}

/// Median of a list of durations (sorted in place).
fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    match times.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => times[n / 2],
        n => (times[n / 2 - 1] + times[n / 2]) / 2,
    }
}

/// Milliseconds with three decimals.
fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Render `iterations` times and print the statistics.
fn run(args: Args) -> Result<(), String> {
    let capabilities = Capabilities::default().with_kube_version(&args.kube_version)?;
    let options = RenderOptions {
        release: ReleaseInfo {
            name: args.name.clone(),
            namespace: args.namespace.clone(),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        },
        capabilities,
        ..RenderOptions::default()
    };
    let mut totals = Vec::with_capacity(args.iterations);
    let mut steps = Vec::with_capacity(args.iterations);
    let mut last = String::new();
    let budget = args.max_seconds.map(Duration::from_secs_f64);
    let begin = Instant::now();
    for _ in 0..args.iterations {
        if budget.is_some_and(|b| !totals.is_empty() && begin.elapsed() >= b) {
            break;
        }
        let start = Instant::now();
        let (text, phases) = render_once(&args, &options)?;
        totals.push(start.elapsed());
        steps.push(phases);
        last = text;
    }
    if args.print {
        print!("{last}");
        return Ok(());
    }
    if let Some(path) = &args.output {
        std::fs::write(path, &last).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    let mean = totals.iter().sum::<Duration>() / totals.len() as u32;
    let min = totals.iter().min().copied().unwrap_or_default();
    let med = median(&mut totals);
    println!(
        "iterations={} mean_ms={} median_ms={} min_ms={} bytes={}",
        totals.len(),
        ms(mean),
        ms(med),
        ms(min),
        last.len()
    );
    if args.phases {
        let step = |pick: fn(&Phases) -> Duration| {
            let mut times: Vec<Duration> = steps.iter().map(pick).collect();
            ms(median(&mut times))
        };
        println!(
            "phases_median_ms load={} values_file={} dependencies={} coalesce={} schema={} \
             render_values={} templates={} assemble={}",
            step(|p| p.load),
            step(|p| p.values_file),
            step(|p| p.dependencies),
            step(|p| p.coalesce),
            step(|p| p.schema),
            step(|p| p.render_values),
            step(|p| p.templates),
            step(|p| p.assemble),
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("render: {e}");
            return ExitCode::from(2);
        }
    };
    // Deeply nested templates recurse: render on a thread with a large stack, as the
    // parity harness does.
    let outcome = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(args))
        .map_err(|e| format!("cannot start the render thread: {e}"))
        .and_then(|h| h.join().map_err(|_| "renderer panicked".to_owned()))
        .and_then(|r| r);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("render: {e}");
            ExitCode::FAILURE
        }
    }
}
