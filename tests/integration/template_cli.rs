//! `capstan template` renders through the sandboxed `backend-helm3` component and prints
//! what real Helm prints: checked byte for byte against real Helm 4.2.3 renders from the
//! parity corpus (`CAPSTAN_PARITY_DIR`, default `shared/helm-parity` beside the checkout; a
//! missing corpus or case fails), with `helm template`'s
//! layout (the manifest trimmed, then a newline; the corpus leaves hooks out, so does
//! `--no-hooks`). A chart Helm refuses must make the command fail with Helm's message.
//! Needs `make plugins` (the component) — the Makefile runs it first.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `capstan` binary the Makefile builds before this test (`cargo build -p capstan`).
fn capstan_binary() -> PathBuf {
    let binary = repo_root().join("target/debug/capstan");
    assert!(
        binary.is_file(),
        "{} is missing: run `cargo build -p capstan` first",
        binary.display()
    );
    binary
}

/// Case `name` of the parity corpus (`capstan_helm::corpus`); a missing corpus or case
/// fails the test, naming the folder looked in.
fn corpus_case(name: &str) -> PathBuf {
    capstan_helm::corpus::case(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A configuration with only the helm3 backend, and a private component cache.
fn config(dir: &Path) -> PathBuf {
    let component = repo_root().join("target/plugins/backend-helm3.wasm");
    assert!(
        component.exists(),
        "{} is missing: run `make plugins`",
        component.display()
    );
    config_for(dir, &component)
}

/// A configuration with `component` as the helm3 backend, and a private component cache.
fn config_for(dir: &Path, component: &Path) -> PathBuf {
    config_with_limits(dir, component, "{memoryMib: 1024, timeoutMs: 120000}")
}

/// [`config_for`] with the backend's `limits` (a YAML flow map).
fn config_with_limits(dir: &Path, component: &Path, limits: &str) -> PathBuf {
    let path = dir.join("capstan.yaml");
    std::fs::write(
        &path,
        format!(
            "cacheDir: {}\nplugins:\n  - name: helm3\n    world: backend\n    path: {}\n    limits: {limits}\nbackends:\n  default: helm3\n",
            dir.join("cache").display(),
            component.display()
        ),
    )
    .unwrap();
    path
}

/// `capstan template` of corpus `case` with its `variant` values (when it has them), as
/// the corpus recorded `helm template`.
fn template_command(config: &Path, cache: &Path, case: &Path, variant: &str) -> Command {
    let mut command = Command::new(capstan_binary());
    command
        .arg("template")
        .arg(case.join("chart"))
        .args(["--name", "rel", "--namespace", "ns", "--no-hooks"])
        .arg("--config")
        .arg(config)
        .arg("--cache-dir")
        .arg(cache);
    let values = case.join("values").join(format!("{variant}.yaml"));
    if values.exists() {
        command.arg("-f").arg(values);
    }
    command
}

/// Configurations (each with its own component cache) for the current `backend-helm3` and
/// for the e1a6294 fixture, which has no `template-chart` export.
struct TwoBackends {
    current: PathBuf,
    current_cache: PathBuf,
    early: PathBuf,
    early_cache: PathBuf,
}

impl TwoBackends {
    fn in_dir(dir: &Path) -> TwoBackends {
        let early_component = early_backend(dir);
        let current_cache = dir.join("current");
        let early_cache = dir.join("early");
        std::fs::create_dir_all(&current_cache).unwrap();
        std::fs::create_dir_all(&early_cache).unwrap();
        TwoBackends {
            current: config(&current_cache),
            early: config_for(&early_cache, &early_component),
            current_cache,
            early_cache,
        }
    }
}

/// The e1a6294 `backend-helm3` fixture (no `template-chart` export), unpacked into `dir`.
fn early_backend(dir: &Path) -> PathBuf {
    use std::io::Read;
    let mut early = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(repo_root().join("tests/fixtures/backend-helm3-0.2.0-e1a6294.wasm.gz"))
            .unwrap(),
    )
    .read_to_end(&mut early)
    .unwrap();
    let path = dir.join("backend-helm3-e1a6294.wasm");
    std::fs::write(&path, early).unwrap();
    path
}

fn capstan_template(
    config: &Path,
    cache: &Path,
    case: &Path,
    variant: &str,
) -> std::process::Output {
    template_command(config, cache, case, variant)
        .output()
        .unwrap()
}

#[test]
fn capstan_template_prints_what_real_helm_prints() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let cases = [
        ("bitnami_charts__bitnami_apache", "default"),
        (
            "kubernetes_ingress-nginx__charts_ingress-nginx",
            "controller-configmap-addheaders-values",
        ),
        ("argoproj_argo-helm__charts_argo-workflows", "default"),
        (
            "prometheus-community_helm-charts__charts_prometheus-node-exporter",
            "default",
        ),
    ];
    for (name, variant) in cases {
        let case = corpus_case(name);
        let expected =
            std::fs::read_to_string(case.join("expected").join(format!("{variant}.yaml"))).unwrap();
        let output = capstan_template(&config, dir.path(), &case, variant);
        assert!(
            output.status.success(),
            "{name}: capstan template failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let printed = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            printed,
            format!("{}\n", expected.trim()),
            "{name} [{variant}]"
        );
    }
}

/// The backend renders a chart folder in one call (`folder-template.template-folder`, no
/// archive built); a backend built before that optional export existed (the fixture from
/// commit e1a6294) is served by `package` and then `template`. Both print what real Helm
/// printed, and the plugin runtime's call log shows which path each took.
#[test]
fn a_folder_renders_in_one_call_and_backends_without_the_export_through_package() {
    let case = corpus_case("bitnami_charts__bitnami_apache");
    let expected = std::fs::read_to_string(case.join("expected/default.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let backends = TwoBackends::in_dir(dir.path());
    let runs = [
        (
            &backends.current,
            &backends.current_cache,
            vec!["template-folder"],
        ),
        (
            &backends.early,
            &backends.early_cache,
            vec!["package", "template"],
        ),
    ];
    for (config, cache, wanted_calls) in runs {
        let output = template_command(config, cache, &case, "default")
            .env("RUST_LOG", "error,capstan::plugins::call=debug")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            format!("{}\n", expected.trim()),
            "{}",
            config.display()
        );
        // Compiling a backend that exports `prepare` (first use of its cache) makes one
        // `prepare` call before the render's calls: pre-initialisation, not rendering.
        let calls: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains("plugin call succeeded"))
            .filter_map(|line| line.split("function=\"").nth(1)?.split('"').next())
            .filter(|function| *function != "prepare")
            .collect();
        assert_eq!(calls, wanted_calls, "{stderr}");
    }
}

#[test]
fn a_chart_helm_refuses_fails_with_helms_message() {
    let case = corpus_case("grafana_helm-charts__charts_pdc-agent");
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let output = capstan_template(&config, dir.path(), &case, "default");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Real Helm: execution error at (pdc-agent/templates/deployment.yaml:72:18): Either
    // tokenSecretName or insecureTokenValue must be provided
    assert!(
        stderr.contains(
            "execution error at (pdc-agent/templates/deployment.yaml:72:18): Either tokenSecretName or insecureTokenValue must be provided"
        ),
        "{stderr}"
    );
}

/// `capstan template CHART -f values.yaml` with no configuration, as `helm template` takes
/// nothing but the chart: the binary in `target/debug` finds the backend component
/// `make plugins` put in `target/plugins`.
#[test]
fn without_a_configuration_the_backend_beside_the_binary_renders() {
    let (name, variant) = ("bitnami_charts__bitnami_apache", "default");
    let case = corpus_case(name);
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(capstan_binary())
        .arg("template")
        .arg(case.join("chart"))
        .args(["--name", "rel", "--namespace", "ns", "--no-hooks"])
        .arg("-f")
        .arg(case.join("values").join(format!("{variant}.yaml")))
        .arg("--cache-dir")
        .arg(cache.path())
        .env_remove("CAPSTAN_CONFIG")
        .env_remove("CAPSTAN_PLUGINS_DIR")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "capstan template without --config: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected =
        std::fs::read_to_string(case.join("expected").join(format!("{variant}.yaml"))).unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("{}\n", expected.trim())
    );
}

/// With no configuration and no component for the backend asked for, the error names the
/// file and every folder searched, `$CAPSTAN_PLUGINS_DIR` first.
#[test]
fn without_a_configuration_a_missing_backend_names_the_folders_searched() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    let plugins_dir = dir.path().join("no-plugins-here");
    let output = Command::new(capstan_binary())
        .arg("template")
        .arg(&chart)
        .args(["--backend", "helm9"])
        .env_remove("CAPSTAN_CONFIG")
        .env("CAPSTAN_PLUGINS_DIR", &plugins_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`backend-helm9.wasm`"), "{stderr}");
    let searched = stderr.split("searched: ").nth(1).unwrap_or_default();
    assert!(
        searched.starts_with(&plugins_dir.display().to_string()),
        "{stderr}"
    );
    let checkout_plugins = repo_root().canonicalize().unwrap().join("target/plugins");
    assert!(
        stderr.contains("/usr/lib/capstan/plugins")
            && stderr.contains(&checkout_plugins.display().to_string()),
        "{stderr}"
    );
}

/// Of a folder's large files (over 64 KiB), the host reads ahead none: the backend's
/// `folder-template` render reads through `folder-files` only those loading or a template
/// needs (here the one `.Files.Get` asks for, not the one `.helmignore` drops nor an unused
/// README), as Helm reads only what `.helmignore` keeps; a backend without the export (the
/// e1a6294 fixture) gets every file and prints the same. A broken `.helmignore` is reported
/// by the render as it is without big files.
#[test]
fn large_files_are_read_only_when_the_render_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let backends = TwoBackends::in_dir(dir.path());
    let chart = one_template_chart(
        dir.path(),
        "big",
        "n: {{ len (.Files.Get \"files/big.txt\") }}\nskipped: {{ len (.Files.Glob \"skipped/*\") }}\n",
    );
    std::fs::create_dir_all(chart.join("files")).unwrap();
    std::fs::create_dir_all(chart.join("skipped")).unwrap();
    std::fs::write(chart.join("files/big.txt"), vec![b'k'; 2 << 20]).unwrap();
    std::fs::write(chart.join("skipped/big.txt"), vec![b'i'; 3 << 20]).unwrap();
    std::fs::write(chart.join("README.md"), vec![b'r'; 100 << 10]).unwrap();
    std::fs::write(chart.join(".helmignore"), "skipped/\n").unwrap();
    let run = |config: &Path, cache: &Path| {
        let output = Command::new(capstan_binary())
            .arg("template")
            .arg(&chart)
            .arg("--config")
            .arg(config)
            .arg("--cache-dir")
            .arg(cache)
            .env(
                "RUST_LOG",
                "error,capstan::plugins::call=debug,capstan::plugin=debug",
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let calls: Vec<String> = stderr
            .lines()
            .filter(|line| line.contains("plugin call succeeded"))
            .filter_map(|line| line.split("function=\"").nth(1)?.split('"').next())
            .filter(|function| *function != "prepare")
            .map(str::to_owned)
            .collect();
        let reads: Vec<String> = stderr
            .lines()
            .filter(|line| line.contains("read an unread chart folder file"))
            .filter_map(|line| line.split("path=\"").nth(1)?.split('"').next())
            .map(str::to_owned)
            .collect();
        (
            output.status.success(),
            String::from_utf8(output.stdout).unwrap(),
            stderr,
            calls,
            reads,
        )
    };
    let (ok, now, stderr, calls, reads) = run(&backends.current, &backends.current_cache);
    assert!(ok, "{stderr}");
    assert!(now.contains("n: 2097152\nskipped: 0\n"), "{now}");
    assert_eq!(calls, ["template-folder"], "{stderr}");
    assert_eq!(reads, ["files/big.txt"], "{stderr}");
    let (ok, early, stderr, calls, _) = run(&backends.early, &backends.early_cache);
    assert!(ok, "{stderr}");
    assert_eq!(early, now);
    assert_eq!(calls, ["package", "template"], "{stderr}");

    // A .helmignore the backend refuses: the render says why, big files or not, and reads
    // none of them.
    std::fs::write(chart.join(".helmignore"), "skipped/**\n").unwrap();
    let (ok, printed, with_big_files, _, reads) = run(&backends.current, &backends.current_cache);
    assert!(!ok && printed.is_empty(), "{printed}");
    assert!(reads.is_empty(), "{with_big_files}");
    std::fs::remove_dir_all(chart.join("skipped")).unwrap();
    std::fs::remove_file(chart.join("files/big.txt")).unwrap();
    std::fs::remove_file(chart.join("README.md")).unwrap();
    let (_, _, without, _, _) = run(&backends.current, &backends.current_cache);
    let refusal = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|line| !line.contains("plugin_call{"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(refusal(&with_big_files), refusal(&without));
    assert!(
        refusal(&without)
            .join("\n")
            .contains("`**` is not supported"),
        "{without}"
    );
}

/// A broken chart folder for `capstan template`: what is wrong, its files (path, text), the
/// refusal printed, and whether the e1a6294 backend prints the same.
type BrokenFolder = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    &'static str,
    bool,
);

/// A broken chart folder is refused with a message that names what is wrong and where,
/// and the same message whether the backend renders the folder in one `template-folder`
/// call or the host packages it first (`package` + `template`, the e1a6294 fixture, which
/// has no `template-chart`).
#[test]
fn broken_folders_are_refused_alike_through_template_chart_and_package() {
    let dir = tempfile::tempdir().unwrap();
    let backends = TwoBackends::in_dir(dir.path());
    let refusal = |config: &Path, cache: &Path, chart: &Path, what: &str| {
        let output = Command::new(capstan_binary())
            .arg("template")
            .arg(chart)
            .arg("--config")
            .arg(config)
            .arg("--cache-dir")
            .arg(cache)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!output.status.success(), "{what}: rendered\n{stderr}");
        assert!(output.stdout.is_empty(), "{what}: printed manifests");
        stderr.replace(&chart.display().to_string(), "CHART")
    };

    let chart_yaml = "apiVersion: v2\nname: broken\nversion: 0.1.0\n";
    let cases: [BrokenFolder; 5] = [
        (
            "no Chart.yaml",
            vec![("templates/cm.yaml", "kind: ConfigMap\n")],
            "error: chart CHART: Chart.yaml file is missing\n",
            true,
        ),
        (
            "no version",
            vec![("Chart.yaml", "apiVersion: v2\nname: broken\n")],
            "Error: Chart.yaml: field `version` is missing\n",
            true,
        ),
        (
            "Chart.yaml that is not YAML",
            vec![(
                "Chart.yaml",
                "apiVersion: v2\nname: [broken\nversion: 0.1.0\n",
            )],
            "Error: Chart.yaml: name: invalid type: sequence, expected a string at line 2 column 7\n",
            true,
        ),
        (
            ".helmignore leaves Chart.yaml out",
            vec![("Chart.yaml", chart_yaml), (".helmignore", "Chart.yaml\n")],
            "Error: Chart.yaml is excluded by .helmignore\n",
            true,
        ),
        (
            // Real Helm 4.3.2 prints exactly this; the e1a6294 backend's lexer refused the
            // stray `}` itself and said less.
            "template parse error",
            vec![
                ("Chart.yaml", chart_yaml),
                ("templates/cm.yaml", "a: 1\nb: {{ .Values.x }\n"),
            ],
            "Error: parse error at (broken/templates/cm.yaml:2): unexpected \"}\" in operand\n",
            false,
        ),
    ];
    for (what, files, wanted, same_in_early) in cases {
        let chart = dir.path().join(what.replace(' ', "-")).join("broken");
        for (name, text) in &files {
            let path = chart.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let now = refusal(&backends.current, &backends.current_cache, &chart, what);
        assert_eq!(now, wanted, "{what}");
        let early = refusal(&backends.early, &backends.early_cache, &chart, what);
        if same_in_early {
            assert_eq!(early, now, "{what}: package + template says otherwise");
        }
    }
}

/// A chart `name` under `dir` with the one template `text`.
fn one_template_chart(dir: &Path, name: &str, text: &str) -> PathBuf {
    let chart = dir.join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
    )
    .unwrap();
    std::fs::write(chart.join("templates").join(format!("{name}.yaml")), text).unwrap();
    chart
}

/// `capstan template` runs its component without epoch checks (`Preemption::Watchdog`): a
/// render still running at the plugin's deadline must end the command with the same
/// deadline error a call of the operator's runtime returns, not run on. The chart's one
/// template hashes 100 kB 100 000 times: little memory, few template steps (the engine's
/// step limit must not stop it first), about half a minute of work.
#[test]
fn a_render_past_its_deadline_ends_the_command_with_the_deadline_error() {
    let dir = tempfile::tempdir().unwrap();
    let component = repo_root().join("target/plugins/backend-helm3.wasm");
    assert!(component.exists(), "run `make plugins`");
    let config = config_with_limits(dir.path(), &component, "{memoryMib: 256, timeoutMs: 1500}");
    let chart = one_template_chart(
        dir.path(),
        "spin",
        "{{- range until 100000 }}{{ $x := repeat 100000 \"a\" | sha256sum }}{{ end }}\n",
    );
    // Compile the component first (its own cache entry: no epoch checks), so the deadline
    // below times the render, not Cranelift.
    let warm_chart = one_template_chart(
        dir.path(),
        "warm",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    );
    let warm = Command::new(capstan_binary())
        .arg("template")
        .arg(&warm_chart)
        .arg("--config")
        .arg(&config)
        .arg("--cache-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    assert!(String::from_utf8_lossy(&warm.stdout).contains("name: release-name"));

    let mut child = Command::new(capstan_binary())
        .arg("template")
        .arg(&chart)
        .arg("--config")
        .arg(&config)
        .arg("--cache-dir")
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Not a timing assertion: only a bound that keeps a broken watchdog from hanging the
    // suite (the command should end ~1.5 s in).
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(300) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`capstan template` ran 300 s past a 1.5 s deadline");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: plugin `helm3` failed in `template-folder`: deadline of 1500 ms exceeded"
        ),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}
