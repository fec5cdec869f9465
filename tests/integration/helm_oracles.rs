//! The rendering oracles (`plugins/lib/helm/tests/oracles/*.yaml`) against the real Helm they
//! were recorded from (v4.2.3, the version of the parity corpus, built by `make tools`), and
//! `capstan template` (the binary, through the backend component, no configuration) against
//! the same Helm: for every case, real `helm template rel CHART --namespace ns` and
//! `capstan template CHART --name rel --namespace ns` must print the same bytes, or fail
//! with the same message, and the recording must say what Helm says today.
//!
//! `CAPSTAN_ORACLES_WRITE=1` (`make oracles`) records Helm's answers into the files instead
//! of checking them; the comparison with `capstan template` runs either way.

use std::path::{Path, PathBuf};
use std::process::Command;

use capstan_helm::oracles::{NAMESPACE, RELEASE, oracle_files, read_cases, write_cases};

/// The Helm the oracles come from.
const HELM_VERSION: &str = "v4.2.3";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Real Helm, from the tools cache (`tests/cluster/build-helm4 v4.2.3`, which builds it
/// when missing).
fn real_helm() -> PathBuf {
    let out = Command::new(repo_root().join("tests/cluster/build-helm4"))
        .arg(HELM_VERSION)
        .output()
        .expect("tests/cluster/build-helm4");
    assert!(
        out.status.success(),
        "build-helm4 {HELM_VERSION}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The output of a command, or the message of its `Error: ` line(s).
fn outcome(mut command: Command) -> Result<String, String> {
    let out = command.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    if out.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let message = match stderr.find("Error: ") {
        Some(start) => stderr[start + "Error: ".len()..].to_owned(),
        None => format!("no `Error: ` in {stderr:?}"),
    };
    // Helm adds a hint line after YAML errors; it is not part of the message.
    let message = message
        .trim_end()
        .trim_end_matches("Use --debug flag to render out invalid YAML")
        .trim_end()
        .to_owned();
    Err(message)
}

#[test]
fn capstan_template_matches_real_helm_on_every_oracle() {
    let helm = real_helm();
    let capstan = repo_root().join("target/debug/capstan");
    assert!(
        capstan.is_file(),
        "{} is missing: run `cargo build -p capstan`",
        capstan.display()
    );
    let write = std::env::var("CAPSTAN_ORACLES_WRITE").is_ok_and(|v| v == "1");
    let home = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in oracle_files().unwrap() {
        let (header, mut cases) = read_cases(&file).unwrap();
        for case in &mut cases {
            let dir = tempfile::tempdir().unwrap();
            let chart = dir.path().join("chart");
            case.write_chart(&chart).unwrap();
            let mut helm_command = Command::new(&helm);
            helm_command
                .args(["template", RELEASE])
                .arg(&chart)
                .args(["--namespace", NAMESPACE])
                .env("HELM_CACHE_HOME", home.path().join("cache"))
                .env("HELM_CONFIG_HOME", home.path().join("config"))
                .env("HELM_DATA_HOME", home.path().join("data"));
            let by_helm = outcome(helm_command);
            let mut capstan_command = Command::new(&capstan);
            capstan_command
                .arg("template")
                .arg(&chart)
                .args(["--name", RELEASE, "--namespace", NAMESPACE])
                .arg("--cache-dir")
                .arg(home.path().join("capstan"))
                .env_remove("CAPSTAN_CONFIG")
                .env_remove("CAPSTAN_PLUGINS_DIR");
            let by_capstan = outcome(capstan_command);
            checked += 1;
            if by_capstan != by_helm {
                failures.push(format!(
                    "{} [{}]: helm {by_helm:?}\n  capstan {by_capstan:?}",
                    file.display(),
                    case.name
                ));
            }
            let recorded = case.recorded();
            if write {
                (case.output, case.error) = match by_helm {
                    Ok(output) => (Some(output), None),
                    Err(error) => (None, Some(error)),
                };
            } else if recorded.as_ref() != Some(&by_helm) {
                failures.push(format!(
                    "{} [{}]: recorded {recorded:?}, helm {HELM_VERSION} now says {by_helm:?} \
                     (run `make oracles`)",
                    file.display(),
                    case.name
                ));
            }
        }
        if write {
            write_cases(&file, &header, &cases).unwrap();
        }
    }
    assert!(checked > 0, "no oracle cases found");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
