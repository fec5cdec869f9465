//! Hostile charts against the real control plane: each fails its own HelmRelease with an
//! error naming the template and the limit it hit (recursion depth, output size, a huge
//! `repeat`), `.Files` reaches nothing outside the chart, the operator stays up, and a
//! well-behaved release beside them becomes Ready; with a 96 MiB budget of guest memory
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

/// One HelmRelease per name in `namespace`, each running the chart folder of that name in
/// the git repository `url` (branch `main`).
async fn create_git_releases(api: &Api<HelmRelease>, namespace: &str, url: &str, names: &[&str]) {
    for name in names {
        let hr = helm_release(
            name,
            namespace,
            serde_json::json!({"chart": {"git": url, "ref": "main", "path": name}}),
        );
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
}

/// The operator with every product plugin and `budget_mib` of guest memory shared by
/// all calls in flight, whatever each call's own limit. The plugins are compiled into the
/// cache first by `capstan plugin compile`, as an image build or init container would: the
/// budget bounds what guests hold, while compiling the backend with Cranelift peaks at
/// ~360 MiB on its own (measured cold), which is not what these tests are about.
fn start_with_memory_budget(cluster: &Cluster, dir: &std::path::Path, budget_mib: u64) -> Operator {
    let config = format!(
        "{}pluginMemoryBudgetMib: {budget_mib}\n",
        Operator::config_with("")
    );
    let config_path = Operator::config_path(dir);
    std::fs::write(&config_path, &config).unwrap();
    let compiled =
        std::process::Command::new(crate::harness::repo_root().join("target/debug/capstan"))
            .args(["plugin", "compile", "--config"])
            .arg(&config_path)
            .output()
            .unwrap();
    assert!(
        compiled.status.success(),
        "capstan plugin compile: {}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    Operator::start_with_config(cluster, dir, &config, &[])
}

/// Print the operator's peak RSS for `what` and check it stayed under 200 MiB: the guests'
/// linear memory lives in the operator process, and the shared budget, not the workers
/// times each call's `memoryMib` (4 × 512 MiB here), bounds it.
fn assert_peak_rss_under_200_mib(
    operator: &Operator,
    what: &str,
    budget_mib: u64,
    started: Instant,
) {
    let peak_mib = peak_rss_kib(operator.pid().unwrap()) / 1024;
    eprintln!(
        "{what}: all decided {:.1}s after start; operator peak RSS {peak_mib} MiB",
        started.elapsed().as_secs_f64()
    );
    assert!(
        peak_mib < 200,
        "{what}: operator peak RSS {peak_mib} MiB with a {budget_mib} MiB guest memory budget"
    );
}

/// The operator's budget of guest memory, in MiB, where a single call needs up to Helm's
/// 100 MiB decompressed-chart limit (the archive tests).
const MEMORY_BUDGET_MIB: u64 = 128;

/// The budget for the template tests, whose calls overlap at the budget. The operator
/// itself holds ~60–70 MiB once its plugins are loaded from the cache (57 MiB for
/// `capstan plugin compile` alone), so budget plus operator stays under 200 MiB with room
/// for the host's own buffers; with 128 MiB the sum reached 196–200 MiB whenever the
/// templates overlapped at the budget.
const TEMPLATE_MEMORY_BUDGET_MIB: u64 = 96;

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
    create_git_releases(
        &api,
        &namespace,
        &url,
        &["recursive", "huge", "repeated", "escaping", "fine"],
    )
    .await;
    let started = Instant::now();
    let operator = start_with_memory_budget(&cluster, dir.path(), TEMPLATE_MEMORY_BUDGET_MIB);
    let long = Duration::from_secs(180);
    wait_for(&api, "fine", &operator, "Ready", long, ready).await;
    let failed = |hr: &HelmRelease| condition(hr, "Released").is_some_and(|c| c.status == "False");
    let budget = format!("shared memory budget of {TEMPLATE_MEMORY_BUDGET_MIB} MiB");
    for (name, expected) in [
        ("recursive", "exceeded maximum template depth (100)"),
        // 64 MiB of output takes more than the budget to build: either limit may hold first.
        ("huge", "output size limit of 67108864 bytes exceeded"),
        (
            "repeated",
            "Repeat output of 1073741824 bytes exceeds the 64 MiB limit",
        ),
    ] {
        // A chart may first be refused by the shared budget while the others hold memory
        // (a retryable failure): wait for its own limit.
        let decided = |hr: &HelmRelease| {
            failed(hr)
                && condition(hr, "Ready").is_some_and(|c| {
                    c.message.contains(expected) || (name == "huge" && c.message.contains(&budget))
                })
        };
        let hr = wait_for(&api, name, &operator, "its own limit", long, decided).await;
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
    // Without the budget this test peaked at 240–405 MiB.
    assert_peak_rss_under_200_mib(
        &operator,
        "hostile charts",
        TEMPLATE_MEMORY_BUDGET_MIB,
        started,
    );
}

/// One tar entry of a hand-written archive: `name` as stored (no path cleaning: fixtures
/// need what tar libraries refuse to write), a type flag (`b'0'` file, `b'2'` symlink),
/// the link target, and the contents.
struct TarEntry<'a> {
    name: &'a str,
    kind: u8,
    link: &'a str,
    contents: &'a [u8],
}

/// A ustar header block for `entry`.
fn tar_header(entry: &TarEntry<'_>) -> [u8; 512] {
    let mut header = [0u8; 512];
    let mut put = |at: usize, bytes: &[u8]| header[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, entry.name.as_bytes());
    put(100, b"0000644\0");
    put(108, b"0000000\0");
    put(116, b"0000000\0");
    put(124, format!("{:011o}\0", entry.contents.len()).as_bytes());
    put(136, b"00000000000\0");
    put(148, b"        ");
    put(156, &[entry.kind]);
    put(157, entry.link.as_bytes());
    put(257, b"ustar\0");
    put(263, b"00");
    let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
    header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    header
}

/// A gzipped tar of `entries`, written as a chart archive is; `zero_files` adds that many
/// 4 MiB files of zeros under `<chart>/files/` (a zip bomb: they compress to almost
/// nothing), streamed so the test never holds them.
fn chart_archive(chart: &str, entries: &[TarEntry<'_>], zero_files: usize) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let chart_yaml = format!("apiVersion: v2\nname: {chart}\nversion: 0.1.0\n");
    let chart_yaml_name = format!("{chart}/Chart.yaml");
    let own = TarEntry {
        name: &chart_yaml_name,
        kind: b'0',
        link: "",
        contents: chart_yaml.as_bytes(),
    };
    let zeros = vec![0u8; 4 << 20];
    let zero_names: Vec<String> = (0..zero_files)
        .map(|i| format!("{chart}/files/zeros-{i}.bin"))
        .collect();
    let zero_entries = zero_names.iter().map(|name| TarEntry {
        name,
        kind: b'0',
        link: "",
        contents: &zeros,
    });
    for entry in std::iter::once(own)
        .chain(entries.iter().map(|e| TarEntry { ..*e }))
        .chain(zero_entries)
    {
        gz.write_all(&tar_header(&entry)).unwrap();
        gz.write_all(entry.contents).unwrap();
        let padding = (512 - entry.contents.len() % 512) % 512;
        gz.write_all(&vec![0u8; padding]).unwrap();
    }
    gz.write_all(&[0u8; 1024]).unwrap();
    gz.finish().unwrap()
}

/// Chart archives built to hurt, served by a Helm repository: a zip bomb (300 MiB of
/// zeros in a few KiB), an entry escaping the chart with `../`, an absolute path in the
/// chart folder, and a
/// symlink to `/etc/passwd`. Each fails its own release with the rule it broke, a
/// well-behaved chart from the same repository becomes Ready, and the operator's peak RSS
/// stays under 200 MiB.
pub async fn hostile_chart_archives_fail_alone(cluster: Arc<Cluster>) {
    use sha2::Digest;
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n";
    let file = |name, contents| TarEntry {
        name,
        kind: b'0',
        link: "",
        contents,
    };
    let charts: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bomb",
            chart_archive(
                "bomb",
                &[file("bomb/templates/cm.yaml", template.as_bytes())],
                75,
            ),
            "decompressed chart is larger than the maximum size 104857600",
        ),
        (
            "escaping",
            chart_archive(
                "escaping",
                &[file(
                    "escaping/../../etc/passwd",
                    b"root:x:0:0::/root:/bin/sh\n",
                )],
                0,
            ),
            "chart illegally references parent directory",
        ),
        (
            "absolute",
            chart_archive(
                "absolute",
                // As Helm reads archives, the first path element is the chart folder: this
                // entry is `/etc/cron.d/evil` inside the chart.
                &[file("absolute//etc/cron.d/evil", b"* * * * * root sh\n")],
                0,
            ),
            "chart illegally contains absolute paths",
        ),
        (
            "linked",
            chart_archive(
                "linked",
                &[TarEntry {
                    name: "linked/templates/passwd.yaml",
                    kind: b'2',
                    link: "/etc/passwd",
                    contents: b"",
                }],
                0,
            ),
            "chart file \"templates/passwd.yaml\" is a link to \"/etc/passwd\", outside the chart",
        ),
        (
            "fine",
            chart_archive(
                "fine",
                &[file("fine/templates/cm.yaml", template.as_bytes())],
                0,
            ),
            "",
        ),
    ];
    let mut index = String::from("apiVersion: v1\nentries:\n");
    for (name, archive, _) in &charts {
        let file = format!("{name}-0.1.0.tgz");
        std::fs::write(served.join(&file), archive).unwrap();
        let digest = hex::encode(sha2::Sha256::digest(archive));
        index.push_str(&format!(
            "  {name}:\n  - apiVersion: v2\n    name: {name}\n    version: 0.1.0\n    digest: {digest}\n    urls: [{file}]\n"
        ));
    }
    std::fs::write(served.join("index.yaml"), index).unwrap();
    let server =
        crate::repo_server::RepoServer::start(&served, dir.path().join("access.log"), None);
    let namespace = cluster.create_namespace("hostile-archives").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &namespace);
    for (name, _, _) in &charts {
        let hr = helm_release(
            name,
            &namespace,
            serde_json::json!({"chart": {"repository": server.url(""), "name": name, "version": "0.1.0"}}),
        );
        api.create(&PostParams::default(), &hr).await.unwrap();
    }
    let started = Instant::now();
    let operator = start_with_memory_budget(&cluster, dir.path(), MEMORY_BUDGET_MIB);
    let long = Duration::from_secs(120);
    wait_for(&api, "fine", &operator, "Ready", long, ready).await;
    let refused = |hr: &HelmRelease| condition(hr, "Ready").is_some_and(|c| c.status == "False");
    for (name, _, expected) in charts.iter().filter(|(name, ..)| *name != "fine") {
        let hr = wait_for(&api, name, &operator, "a refusal", long, refused).await;
        let message = &condition(&hr, "Ready").unwrap().message;
        eprintln!("{name}: {message}");
        assert!(message.contains(expected), "{name}: {message}");
    }
    let listed = cluster.run("helm", &["list", "-n", &namespace, "-q"]);
    assert_eq!(
        listed.trim(),
        format!("{namespace}-fine"),
        "only the fine chart is installed"
    );
    assert_peak_rss_under_200_mib(&operator, "hostile archives", MEMORY_BUDGET_MIB, started);
}

/// A git repository, served over smart HTTP by the real `git http-backend`, whose chart holds
/// a 2 GiB file (sparse: git stores it in about 2 MiB): the mirror is fetched, the chart read
/// is refused from the blob's header before anything is inflated, its release fails naming
/// the cap and the file, a chart beside it in the same repository installs, and the
/// operator's peak RSS stays under 200 MiB.
pub async fn a_two_gib_blob_in_git_fails_its_release_alone(cluster: Arc<Cluster>) {
    use crate::git_support::git;
    install_crd(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let config_map =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n";
    let url = charts_repository(
        dir.path(),
        "sparse-repo",
        &[
            ("sparse", &[("cm.yaml", config_map)]),
            ("fine", &[("cm.yaml", config_map)]),
        ],
    );
    let repo = dir.path().join("sparse-repo");
    let big = std::fs::File::create(repo.join("sparse/templates/big.yaml")).unwrap();
    big.set_len(2 << 30).unwrap();
    drop(big);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "a 2 GiB file"]);
    // Over the network, as a tenant's repository comes (local paths are refused by default).
    let _ = url;
    let server =
        crate::git_support::GitHttpServer::start(dir.path(), dir.path().join("git-http.log"), None);
    let url = server.url("sparse-repo");
    let namespace = cluster.create_namespace("sparse").await;
    let api: Api<HelmRelease> = Api::namespaced(cluster.client().await, &namespace);
    create_git_releases(&api, &namespace, &url, &["sparse", "fine"]).await;
    let started = Instant::now();
    let operator = start_with_memory_budget(&cluster, dir.path(), MEMORY_BUDGET_MIB);
    let long = Duration::from_secs(120);
    wait_for(&api, "fine", &operator, "Ready", long, ready).await;
    let refused = |hr: &HelmRelease| condition(hr, "Ready").is_some_and(|c| c.status == "False");
    let hr = wait_for(&api, "sparse", &operator, "a refusal", long, refused).await;
    let message = &condition(&hr, "Ready").unwrap().message;
    assert!(
        message.contains("`sparse` at ")
            && message.contains("holds more than 64 MiB (at templates/big.yaml)"),
        "{message}"
    );
    assert_peak_rss_under_200_mib(&operator, "2 GiB blob", MEMORY_BUDGET_MIB, started);
}
