//! Engine oracles: the corpus's `snippets.yaml` (`capstan_helm::corpus`) holds small
//! templates with the exact output (or the exact error message) real Helm gave. Each is
//! rendered as `templates/t.yaml` of chart `snip` 0.1.0 (appVersion 1.0) with the snippet's
//! values, release `rel` in `ns`. Prints every mismatch and the counts. Every snippet must
//! match: output byte for byte, an error with Helm's message, except the messages listed in
//! [`KNOWN_ERROR_DIFFERENCES`] (an entry that matches, or is gone, fails too). Fails when
//! the corpus is missing or has fewer than `corpus::MIN_SNIPPETS` snippets.
//! `cargo test --test snippets -- NAME` runs only the snippets whose name contains NAME.

use std::process::ExitCode;

use capstan_gotmpl::value::Value;
use capstan_helm::chart::File;
use capstan_helm::engine::{ReleaseInfo, RenderOptions, render, render_values};

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

/// Error snippets whose message differs from the one Helm recorded, with the reason (the
/// render must still fail).
const KNOWN_ERROR_DIFFERENCES: &[(&str, &str)] = &[];

fn main() -> ExitCode {
    let path = capstan_helm::corpus::snippets_file().unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let entries: Vec<serde_yaml_ng::Value> = serde_yaml_ng::from_str(&text)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let (mut passed, mut failed, mut known) = (0usize, 0usize, 0usize);
    let mut ran = Vec::new();
    for entry in &entries {
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
        ran.push(name.clone());
        let template = field("template").unwrap_or_default();
        let values = field("values").unwrap_or_default();
        let (t, v) = (template.clone(), values.clone());
        let actual = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || render_snippet(&t, &v))
            .map_err(|e| e.to_string())
            .and_then(|h| h.join().map_err(|_| "renderer panicked".to_owned()))
            .and_then(|r| r);
        let listed = KNOWN_ERROR_DIFFERENCES.iter().find(|(n, _)| *n == name);
        let verdict = match (field("output"), field("error"), &actual) {
            (Some(expected), _, Ok(got)) if *got == expected => Ok(()),
            (Some(expected), _, Ok(got)) => Err(format!("expected {expected:?}, got {got:?}")),
            (Some(_), _, Err(e)) => Err(format!("failed: {e}")),
            (None, Some(error), Err(got)) => match (*got == error, listed) {
                (true, None) => Ok(()),
                (true, Some(_)) => Err(
                    "listed in KNOWN_ERROR_DIFFERENCES but gives Helm's message now; remove it"
                        .into(),
                ),
                (false, Some((_, reason))) => {
                    known += 1;
                    println!("known difference {name} ({reason}): Helm {error:?}, here {got:?}");
                    continue;
                }
                (false, None) => Err(format!("expected error {error:?}, got error {got:?}")),
            },
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
    let total = passed + failed + known;
    println!(
        "{passed} passed, {failed} failed, {known} known error-message differences of {total} snippets"
    );
    let mut ok = failed == 0;
    for (name, _) in KNOWN_ERROR_DIFFERENCES {
        let in_scope = filter.as_ref().is_none_or(|f| name.contains(f.as_str()));
        if in_scope && !ran.iter().any(|n| n == name) {
            ok = false;
            println!("FAIL KNOWN_ERROR_DIFFERENCES lists {name}, which the corpus does not have");
        }
    }
    if filter.is_none()
        && let Err(e) = capstan_helm::corpus::at_least(
            total,
            capstan_helm::corpus::MIN_SNIPPETS,
            "snippets",
            &path,
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
