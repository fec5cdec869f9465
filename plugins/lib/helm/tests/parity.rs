//! Rendering parity against real Helm: renders every values variant of every case of the
//! parity corpus (`capstan_helm::corpus`: `CAPSTAN_PARITY_DIR`, default
//! `shared/helm-parity` beside the checkout) with `capstan-helm` and applies the corpus
//! comparison rule. Prints one line per failing variant with the first differing line, then
//! the counts. Fails when the corpus is missing, when it has fewer than
//! `corpus::MIN_VARIANTS` variants, on any mismatch not in [`KNOWN_FAILURES`], and on an
//! entry of that list which matches (or is gone). `cargo test --test parity -- NAME` runs
//! only the cases whose name contains NAME (and skips the count check).

use std::path::Path;
use std::process::ExitCode;

use capstan_gotmpl::value::Value;
use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::manifest_text;

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
/// Helm renders agree, or a failure when Helm failed. With `free`, lines that start with it
/// (after their indentation) in both renders count as equal: a known difference.
fn compare(
    case: &Path,
    variant: &str,
    actual: &Result<String, String>,
    free: Option<&str>,
) -> Result<(), String> {
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
    if alt.is_none() && *actual == expected {
        return Ok(());
    }
    let same = |x: &str, y: &str| {
        x == y
            || free.is_some_and(|p| x.trim_start().starts_with(p) && y.trim_start().starts_with(p))
    };
    let (e, g): (Vec<&str>, Vec<&str>) =
        (expected.split('\n').collect(), actual.split('\n').collect());
    if let Some(alt) = &alt {
        let a: Vec<&str> = alt.split('\n').collect();
        if g.len() != e.len() {
            return Err(format!("expected {} lines, got {}", e.len(), g.len()));
        }
        // Only lines on which both Helm renders agree must match.
        for (i, ((x, y), z)) in e.iter().zip(&g).zip(&a).enumerate() {
            if !same(x, y) && x == z {
                return Err(format!("line {}: expected {x:?}, got {y:?}", i + 1));
            }
        }
        return Ok(());
    }
    for (i, (x, y)) in e.iter().zip(&g).enumerate() {
        if !same(x, y) {
            return Err(format!("line {}: expected {x:?}, got {y:?}", i + 1));
        }
    }
    if e.len() == g.len() {
        return Ok(());
    }
    Err(format!("expected {} lines, got {}", e.len(), g.len()))
}

/// A variant known to differ from Helm's recorded output, on the lines starting with `line`
/// only.
struct KnownFailure {
    case: &'static str,
    variant: &'static str,
    line: &'static str,
    reason: &'static str,
}

/// The known differences. Any other mismatch fails the test, and so does a listed variant
/// that differs elsewhere, one that matches now (the list must stay true: remove it) and
/// one the corpus no longer has.
const KNOWN_FAILURES: &[KnownFailure] = &[KnownFailure {
    case: "bitnami_charts__bitnami_argo-cd",
    variant: "default",
    line: "admin.passwordMtime: ",
    reason: "`dateInZone ... (now) \"UTC\" | b64enc`: the time of the render to the second, which both Helm \
             renders of the corpus happened to share",
}];

fn main() -> ExitCode {
    let dir = capstan_helm::corpus::cases_dir().unwrap_or_else(|e| panic!("{e}"));
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let cases = capstan_helm::corpus::case_dirs().unwrap_or_else(|e| panic!("{e}"));
    let (mut passed, mut failed, mut known) = (0usize, 0usize, 0usize);
    let mut ran = Vec::new();
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
            let listed = KNOWN_FAILURES
                .iter()
                .find(|k| k.case == name && k.variant == variant);
            match (compare(&case, &variant, &actual, None), listed) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some(_)) => {
                    failed += 1;
                    println!(
                        "FAIL {name} [{variant}]: listed in KNOWN_FAILURES but matches Helm now; remove it from the list"
                    );
                }
                (Err(why), Some(known_failure)) => {
                    match compare(&case, &variant, &actual, Some(known_failure.line)) {
                        Ok(()) => {
                            known += 1;
                            println!(
                                "known failure {name} [{variant}] ({}): {why}",
                                known_failure.reason
                            );
                        }
                        Err(why) => {
                            failed += 1;
                            println!(
                                "FAIL {name} [{variant}] (beyond its known difference on `{}`): {why}",
                                known_failure.line
                            );
                        }
                    }
                }
                (Err(why), None) => {
                    failed += 1;
                    println!("FAIL {name} [{variant}]: {why}");
                }
            }
            ran.push((name.clone(), variant));
        }
    }
    let total = passed + failed + known;
    println!("{passed} passed, {failed} failed, {known} known failures of {total} variants");
    let mut ok = failed == 0;
    for KnownFailure { case, variant, .. } in KNOWN_FAILURES {
        let in_scope = filter.as_ref().is_none_or(|f| case.contains(f.as_str()));
        if in_scope && !ran.iter().any(|(c, v)| c == case && v == variant) {
            ok = false;
            println!(
                "FAIL KNOWN_FAILURES lists {case} [{variant}], which the corpus does not have"
            );
        }
    }
    if filter.is_none()
        && let Err(e) = capstan_helm::corpus::at_least(
            total,
            capstan_helm::corpus::MIN_VARIANTS,
            "values variants",
            &dir,
        )
    {
        ok = false;
        println!("FAIL {e}");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
