//! Engine oracles: the corpus's `snippets.yaml` holds small templates with the exact output
//! (or the error) real Helm gave. Each is rendered as `templates/t.yaml` of chart `snip`
//! 0.1.0 (appVersion 1.0) with the snippet's values, release `rel` in `ns`. Prints every
//! mismatch and `N passed, M failed`; exits non-zero below `CAPSTAN_SNIPPETS_MIN_PERCENT`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use capstan_gotmpl::value::Value;
use capstan_helm::chart::File;
use capstan_helm::engine::{ReleaseInfo, RenderOptions, render, render_values};

fn snippets_path() -> PathBuf {
    capstan_helm::corpus::cases_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .map(|cases| cases.join("../snippets.yaml"))
        .unwrap_or_default()
}

fn render_snippet(template: &str, values: &str) -> Result<String, String> {
    let files = vec![
        File::new(
            "Chart.yaml",
            "apiVersion: v2\nname: snip\nversion: 0.1.0\nappVersion: \"1.0\"\n",
        ),
        File::new("values.yaml", values),
        File::new("templates/t.yaml", template),
    ];
    let chart = capstan_helm::load::load_files(files).map_err(|e| e.to_string())?;
    let options = RenderOptions {
        release: ReleaseInfo {
            name: "rel".into(),
            namespace: "ns".into(),
            ..ReleaseInfo::default()
        },
        ..RenderOptions::default()
    };
    let values = capstan_helm::values::coalesce_values(&chart, &Value::new_map())
        .map_err(|e| e.to_string())?;
    let top = render_values(&chart, &values, &options);
    let mut rendered = render(&chart, &top, &options).map_err(|e| e.to_string())?;
    rendered
        .remove("snip/templates/t.yaml")
        .ok_or_else(|| "no output for snip/templates/t.yaml".to_owned())
}

fn main() -> ExitCode {
    let path = snippets_path();
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "snippets not found at {}; 0 passed, 0 failed",
            path.display()
        );
        return ExitCode::SUCCESS;
    };
    let entries: Vec<serde_yaml_ng::Value> = match serde_yaml_ng::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            println!("cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let (mut passed, mut failed) = (0usize, 0usize);
    for entry in entries {
        // A plain scalar such as `1e+06` reads as a YAML number; the corpus wrote Go's
        // printing of a float there, so print it back the same way.
        let field = |k: &str| match entry.get(k) {
            Some(serde_yaml_ng::Value::String(s)) => Some(s.clone()),
            Some(serde_yaml_ng::Value::Number(n)) => Some(match n.as_i64() {
                Some(i) => i.to_string(),
                None => capstan_gotmpl::value::format_float_g(n.as_f64().unwrap_or(f64::NAN)),
            }),
            Some(serde_yaml_ng::Value::Bool(b)) => Some(b.to_string()),
            _ => None,
        };
        let name = field("name").unwrap_or_default();
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let template = field("template").unwrap_or_default();
        let values = field("values").unwrap_or_default();
        let (t, v) = (template.clone(), values.clone());
        let actual = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || render_snippet(&t, &v))
            .map_err(|e| e.to_string())
            .and_then(|h| h.join().map_err(|_| "renderer panicked".to_owned()))
            .and_then(|r| r);
        let verdict = match (field("output"), field("error"), &actual) {
            (Some(expected), _, Ok(got)) if *got == expected => Ok(()),
            (Some(expected), _, Ok(got)) => Err(format!("expected {expected:?}, got {got:?}")),
            (Some(_), _, Err(e)) => Err(format!("failed: {e}")),
            (None, Some(_), Err(_)) => Ok(()),
            (None, Some(error), Ok(got)) => Err(format!("expected error {error:?}, got {got:?}")),
            (None, None, _) => Err("snippet has neither output nor error".into()),
        };
        match verdict {
            Ok(()) => passed += 1,
            Err(why) => {
                failed += 1;
                println!("FAIL {name} {template:?}: {why}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    let min: f64 = std::env::var("CAPSTAN_SNIPPETS_MIN_PERCENT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let total = passed + failed;
    if total > 0 && (passed as f64) * 100.0 < min * total as f64 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
