//! Hostile charts against the real control plane: each fails its own HelmRelease with an
//! error naming the template and the limit it hit (recursion depth, output size, a huge
//! `repeat`), `.Files` reaches nothing outside the chart, the operator stays up, and a
//! well-behaved release beside them becomes Ready; with a 128 MiB budget of guest memory
//! shared by all calls, the operator's peak RSS stays under 200 MiB (printed).

use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan::api::HelmRelease;
use kube::Api;
use kube::api::PostParams;

use crate::harness::Cluster;
use crate::helmrelease::{Operator, condition, helm_release, install_crd, ready, wait_for};

/// A git repository `dir/<repository>` (branch `main`) holding one chart folder per
/// `(name, templates)`, version 0.1.0; its `file://` URL.
pub(crate) fn charts_repository(
    dir: &std::path::Path,
    repository: &str,
    charts: &[(&str, &[(&str, &str)])],
) -> String {
    use crate::git_support::git;
    let repo = dir.join(repository);
    for (name, templates) in charts {
        let chart = repo.join(name);
        std::fs::create_dir_all(chart.join("templates")).unwrap();
        std::fs::write(
            chart.join("Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
        )
        .unwrap();
        for (file, text) in *templates {
            std::fs::write(chart.join("templates").join(file), text).unwrap();
        }
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "charts"]);
    format!("file://{}", repo.display())
}

/// Peak resident memory of process `pid` (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The operator's budget of guest memory in this test, in MiB.
const MEMORY_BUDGET_MIB: u64 = 128;

pub async fn hostile_charts_fail_alone_with_bounded_memory(cluster: Arc<Cluster>) {
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let config_map =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n";
    let recursive = format!("{config_map}  a: {{{{ include \"loop\" . }}}}\n");
    let huge = format!(
        "{config_map}  a: \"{{{{ range $i := 100000000 }}}}{}{{{{ end }}}}\"\n",
        "x".repeat(64)
    );
    let repeated = format!("{config_map}  a: {{{{ repeat 1073741824 \"x\" | quote }}}}\n");
    let escaping =
        format!("{config_map}  a: {{{{ .Files.Get \"../../../../etc/passwd\" | quote }}}}\n");
    let url = charts_repository(
        dir.path(),
        "hostile-repo",
        &[
            (
                "recursive",
                &[
                    (
                        "_loop.tpl",
                        "{{ define \"loop\" }}{{ include \"loop\" . }}{{ end }}",
                    ),
                    ("cm.yaml", &recursive),
                ],
            ),
            ("huge", &[("cm.yaml", &huge)]),
            ("repeated", &[("cm.yaml", &repeated)]),
            ("escaping", &[("cm.yaml", &escaping)]),
            ("fine", &[("cm.yaml", &format!("{config_map}  a: b\n"))]),
        ],
    );
    let namespace = cluster.create_namespace("hostile").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &namespace);
    for name in ["recursive", "huge", "repeated", "escaping", "fine"] {
        let hr = helm_release(
            name,
            &namespace,
            serde_json::json!({"chart": {"git": url, "ref": "main", "path": name}}),
        );
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let started = Instant::now();
    // All calls in flight share 128 MiB of guest memory, whatever each call's own limit.
    let config = format!(
        "{}pluginMemoryBudgetMib: {MEMORY_BUDGET_MIB}\n",
        Operator::config_with("")
    );
    let operator = Operator::start_with_config(&cluster, dir.path(), &config, &[]);
    let long = Duration::from_secs(180);
    wait_for(&api, "fine", &operator, "Ready", long, ready).await;
    let failed = |hr: &HelmRelease| condition(hr, "Released").is_some_and(|c| c.status == "False");
    let budget = format!("shared memory budget of {MEMORY_BUDGET_MIB} MiB");
    for (name, expected) in [
        ("recursive", "exceeded maximum template depth (100)"),
        // 64 MiB of output takes more than the budget to build: either limit may hold first.
        ("huge", "output size limit of 67108864 bytes exceeded"),
        (
            "repeated",
            "Repeat output of 1073741824 bytes exceeds the 64 MiB limit",
        ),
    ] {
        let hr = wait_for(&api, name, &operator, "a failed install", long, failed).await;
        let message = &condition(&hr, "Ready").unwrap().message;
        if name == "huge" && message.contains(&budget) {
            continue;
        }
        assert!(message.contains(expected), "{name}: {message}");
        assert!(
            message.contains(&format!("{name}/templates/cm.yaml")),
            "{name}: {message}"
        );
    }
    // `.Files` reaches nothing outside the chart: Helm gives "" for a path it does not hold.
    wait_for(&api, "escaping", &operator, "Ready", long, ready).await;
    let data = cluster.run(
        "kubectl",
        &[
            "get",
            "configmap",
            &format!("{namespace}-escaping"),
            "-n",
            &namespace,
            "-o",
            "jsonpath={.data.a}",
        ],
    );
    assert_eq!(data, "", "nothing from outside the chart");
    let pid = operator.pid().unwrap();
    let peak_mib = peak_rss_kib(pid) / 1024;
    eprintln!(
        "hostile charts: all decided {:.1}s after start; operator peak RSS {peak_mib} MiB",
        started.elapsed().as_secs_f64()
    );
    // The guests' linear memory lives in the operator process: the shared budget, not the
    // workers times each call's `memoryMib` (4 × 512 MiB here), bounds it. Without the
    // budget this run peaked at 240–405 MiB.
    assert!(
        peak_mib < 200,
        "operator peak RSS {peak_mib} MiB with a {MEMORY_BUDGET_MIB} MiB guest memory budget"
    );
}
