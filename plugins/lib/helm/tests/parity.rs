//! Rendering parity against real Helm: renders every case of a corpus directory (default
//! `../shared/helm-parity/cases` from the workspace root, or `CAPSTAN_PARITY_DIR`) with
//! `capstan-helm` and applies the corpus comparison rule. Prints one line per failing
//! variant with the first differing line, then `N passed, M failed`. Exits non-zero when
//! the pass rate is below `CAPSTAN_PARITY_MIN_PERCENT` (default 0: report only).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use capstan_gotmpl::value::Value;
use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::manifest_text;

fn corpus_dir() -> Option<PathBuf> {
    capstan_helm::corpus::cases_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// Render one variant; `None` when rendering failed.
fn render_variant(case: &Path, variant: &str, meta: &serde_json::Value) -> Result<String, String> {
    let chart = capstan_helm::load::load_dir(case.join("chart")).map_err(|e| e.to_string())?;
    let values_path = case.join("values").join(format!("{variant}.yaml"));
    let user_values = match std::fs::read(&values_path) {
        Ok(data) => capstan_helm::load::load_values(&data)?,
        Err(_) => Value::new_map(),
    };
    let text = |key: &str, default: &str| {
        meta.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or(default)
            .to_owned()
    };
    let capabilities =
        Capabilities::default().with_kube_version(&text("kube_version", "v1.36.0"))?;
    let options = RenderOptions {
        release: ReleaseInfo {
            name: text("release", "rel"),
            namespace: text("namespace", "ns"),
            revision: 1,
            is_install: true,
            is_upgrade: false,
        },
        capabilities,
        ..RenderOptions::default()
    };
    let assembled = capstan_helm::pipeline::render_chart(chart, &user_values, &options, false)
        .map_err(|e| e.to_string())?;
    Ok(manifest_text(&assembled.manifests))
}

/// The corpus rule: exact bytes, or (with an `.alt.yaml`) equal on every line where the two
/// Helm renders agree, or a failure when Helm failed.
fn compare(case: &Path, variant: &str, actual: &Result<String, String>) -> Result<(), String> {
    let expected_dir = case.join("expected");
    if expected_dir.join(format!("{variant}.error.txt")).exists() {
        return match actual {
            Err(_) => Ok(()),
            Ok(_) => Err("expected a render error".into()),
        };
    }
    let actual = actual
        .as_ref()
        .map_err(|e| format!("render failed, Helm rendered it: {e}"))?;
    let expected = std::fs::read_to_string(expected_dir.join(format!("{variant}.yaml")))
        .map_err(|e| format!("cannot read expected output: {e}"))?;
    let alt = std::fs::read_to_string(expected_dir.join(format!("{variant}.alt.yaml"))).ok();
    let (e, g): (Vec<&str>, Vec<&str>) =
        (expected.split('\n').collect(), actual.split('\n').collect());
    match &alt {
        None if *actual == expected => return Ok(()),
        Some(alt) => {
            let a: Vec<&str> = alt.split('\n').collect();
            if g.len() != e.len() {
                return Err(format!("expected {} lines, got {}", e.len(), g.len()));
            }
            // Only lines on which both Helm renders agree must match.
            for (i, ((x, y), z)) in e.iter().zip(&g).zip(&a).enumerate() {
                if x != y && x == z {
                    return Err(format!("line {}: expected {x:?}, got {y:?}", i + 1));
                }
            }
            return Ok(());
        }
        None => {}
    }
    for (i, (x, y)) in e.iter().zip(&g).enumerate() {
        if x != y {
            return Err(format!("line {}: expected {x:?}, got {y:?}", i + 1));
        }
    }
    Err(format!("expected {} lines, got {}", e.len(), g.len()))
}

fn main() -> ExitCode {
    let Some(dir) = corpus_dir() else {
        println!("no parity corpus found (set CAPSTAN_PARITY_DIR); 0 passed, 0 failed");
        return ExitCode::SUCCESS;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("cannot read the parity corpus at {}", dir.display());
        return ExitCode::FAILURE;
    };
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let mut cases: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    cases.sort();
    let (mut passed, mut failed) = (0usize, 0usize);
    for case in cases {
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let meta: serde_json::Value = std::fs::read_to_string(case.join("case.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let mut variants: Vec<String> = meta
            .get("variants")
            .and_then(|v| v.as_object())
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_else(|| vec!["default".into()]);
        variants.sort();
        for variant in variants {
            // Render in a thread with a large stack: deep template nesting recurses.
            let (case_path, variant_name, meta_copy) =
                (case.clone(), variant.clone(), meta.clone());
            let actual = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || render_variant(&case_path, &variant_name, &meta_copy))
                .map_err(|e| e.to_string())
                .and_then(|h| h.join().map_err(|_| "renderer panicked".to_owned()))
                .and_then(|r| r);
            match compare(&case, &variant, &actual) {
                Ok(()) => passed += 1,
                Err(why) => {
                    failed += 1;
                    println!("FAIL {name} [{variant}]: {why}");
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    let min: f64 = std::env::var("CAPSTAN_PARITY_MIN_PERCENT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let total = passed + failed;
    if total > 0 && (passed as f64) * 100.0 < min * total as f64 {
        println!(
            "pass rate {:.1}% is below the required {min}%",
            passed as f64 * 100.0 / total as f64
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
