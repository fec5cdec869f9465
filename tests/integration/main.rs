//! Integration tests against a real control plane on 127.0.0.1 (etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler, kwok) and the real `helm` CLI.
//!
//! A custom runner (no libtest) so that the cluster this binary starts is always stopped,
//! whatever the tests do: each test runs in its own task, a panic fails that test only,
//! and teardown runs before the process exits. Pass a substring to run matching tests.

mod backend_previous;
mod deploy;
#[path = "../support/git.rs"]
mod git_support;
mod harness;
mod helm4_getter;
mod helmrelease;
mod host_imports;
mod hostile;
mod installed;
mod kwok_and_helm;
mod oci;
mod operator;
mod plugin_platform;
#[path = "../support/probe.rs"]
mod probe_support;
mod release_helm2;
mod release_helm3;
mod release_helm3_configmap;
mod release_helm3_lifecycle;
#[path = "../support/repo_server.rs"]
mod repo_server;
mod swap;
mod tenancy;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::Cluster;

type TestFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
type TestFn = fn(Arc<Cluster>) -> TestFuture;

const TESTS: &[(&str, TestFn)] = &[
    (
        "a_renewed_release_lease_is_respected_whatever_its_clock_says",
        |c| Box::pin(tenancy::a_renewed_release_lease_is_respected_whatever_its_clock_says(c)),
    ),
    ("a_two_gib_blob_in_git_fails_its_release_alone", |c| {
        Box::pin(hostile::a_two_gib_blob_in_git_fails_its_release_alone(c))
    }),
    ("hostile_chart_archives_fail_alone", |c| {
        Box::pin(hostile::hostile_chart_archives_fail_alone(c))
    }),
    ("sources_reach_only_what_the_egress_guard_allows", |c| {
        Box::pin(tenancy::sources_reach_only_what_the_egress_guard_allows(c))
    }),
    (
        "a_previous_contract_backend_installs_and_hands_over_to_the_current_one",
        |c| {
            Box::pin(
                backend_previous::a_previous_contract_backend_installs_and_hands_over_to_the_current_one(c),
            )
        },
    ),
    (
        "a_backend_built_before_an_import_existed_is_refused_only_what_needs_it",
        |c| {
            Box::pin(
                backend_previous::a_backend_built_before_an_import_existed_is_refused_only_what_needs_it(c),
            )
        },
    ),
    ("kwok_brings_deployment_pods_to_ready", |c| {
        Box::pin(kwok_and_helm::kwok_brings_deployment_pods_to_ready(c))
    }),
    ("real_helm_installs_and_lists_a_local_chart", |c| {
        Box::pin(kwok_and_helm::real_helm_installs_and_lists_a_local_chart(c))
    }),
    ("host_probe_exercises_every_host_import", |c| {
        Box::pin(host_imports::host_probe_exercises_every_host_import(c))
    }),
    (
        "helmrelease_from_git_follows_values_commits_and_configmaps",
        |c| Box::pin(helmrelease::helmrelease_from_git_follows_values_commits_and_configmaps(c)),
    ),
    (
        "helmrelease_converges_after_the_operator_is_killed_mid_install",
        |c| {
            Box::pin(helmrelease::helmrelease_converges_after_the_operator_is_killed_mid_install(c))
        },
    ),
    (
        "helmrelease_from_a_helm_repository_follows_new_versions",
        |c| Box::pin(helmrelease::helmrelease_from_a_helm_repository_follows_new_versions(c)),
    ),
    ("a_failed_upgrade_is_rolled_back_when_asked", |c| {
        Box::pin(helmrelease::a_failed_upgrade_is_rolled_back_when_asked(c))
    }),
    (
        "a_failed_upgrade_is_rolled_back_after_a_crash_before_the_rollback",
        |c| {
            Box::pin(
                helmrelease::a_failed_upgrade_is_rolled_back_after_a_crash_before_the_rollback(c),
            )
        },
    ),
    (
        "a_follower_finishes_the_install_its_killed_leader_began",
        |c| Box::pin(helmrelease::a_follower_finishes_the_install_its_killed_leader_began(c)),
    ),
    (
        "a_release_locked_by_another_process_waits_then_installs",
        |c| Box::pin(helmrelease::a_release_locked_by_another_process_waits_then_installs(c)),
    ),
    ("a_failed_hook_reports_its_last_log_lines", |c| {
        Box::pin(helmrelease::a_failed_hook_reports_its_last_log_lines(c))
    }),
    ("depends_on_installs_in_order_and_reports_cycles", |c| {
        Box::pin(helmrelease::depends_on_installs_in_order_and_reports_cycles(c))
    }),
    ("uninstall_options_keep_history_and_skip_hooks", |c| {
        Box::pin(helmrelease::uninstall_options_keep_history_and_skip_hooks(
            c,
        ))
    }),
    ("values_come_from_a_url_and_a_file_in_the_chart", |c| {
        Box::pin(helmrelease::values_come_from_a_url_and_a_file_in_the_chart(
            c,
        ))
    }),
    (
        "drift_is_detected_and_corrected_without_a_new_revision",
        |c| Box::pin(helmrelease::drift_is_detected_and_corrected_without_a_new_revision(c)),
    ),
    ("helm_tests_run_after_install_and_upgrade", |c| {
        Box::pin(helmrelease::helm_tests_run_after_install_and_upgrade(c))
    }),
    ("records_live_in_the_storage_namespace", |c| {
        Box::pin(helmrelease::records_live_in_the_storage_namespace(c))
    }),
    (
        "post_renderers_and_common_metadata_shape_what_is_applied",
        |c| Box::pin(helmrelease::post_renderers_and_common_metadata_shape_what_is_applied(c)),
    ),
    ("two_shards_each_handle_only_their_releases", |c| {
        Box::pin(helmrelease::two_shards_each_handle_only_their_releases(c))
    }),
    (
        "a_release_with_a_kube_config_goes_to_the_remote_cluster",
        |c| Box::pin(helmrelease::a_release_with_a_kube_config_goes_to_the_remote_cluster(c)),
    ),
    (
        "install_and_upgrade_options_create_the_namespace_and_follow_crd_policies",
        |c| {
            Box::pin(helmrelease::install_and_upgrade_options_create_the_namespace_and_follow_crd_policies(
            c,
        ))
        },
    ),
    (
        "a_failed_upgrade_is_remediated_by_uninstall_when_asked",
        |c| Box::pin(helmrelease::a_failed_upgrade_is_remediated_by_uninstall_when_asked(c)),
    ),
    ("only_the_leader_replica_acts", |c| {
        Box::pin(helmrelease::only_the_leader_replica_acts(c))
    }),
    (
        "values_from_another_namespace_are_refused_unless_allowed",
        |c| Box::pin(tenancy::values_from_another_namespace_are_refused_unless_allowed(c)),
    ),
    ("uninstall_leaves_objects_that_are_not_the_releases", |c| {
        Box::pin(tenancy::uninstall_leaves_objects_that_are_not_the_releases(
            c,
        ))
    }),
    (
        "a_failing_uninstall_releases_the_finalizer_after_the_deadline",
        |c| Box::pin(tenancy::a_failing_uninstall_releases_the_finalizer_after_the_deadline(c)),
    ),
    (
        "a_release_acts_only_with_its_service_accounts_rights",
        |c| Box::pin(tenancy::a_release_acts_only_with_its_service_accounts_rights(c)),
    ),
    ("hostile_charts_fail_alone_with_bounded_memory", |c| {
        Box::pin(hostile::hostile_charts_fail_alone_with_bounded_memory(c))
    }),
    (
        "an_operation_whose_release_lease_is_taken_over_stops",
        |c| Box::pin(tenancy::an_operation_whose_release_lease_is_taken_over_stops(c)),
    ),
    (
        "a_source_kind_added_by_configuration_alone_is_ready_and_listed",
        |c| {
            Box::pin(
                plugin_platform::a_source_kind_added_by_configuration_alone_is_ready_and_listed(c),
            )
        },
    ),
    (
        "oci_charts_follow_constraints_pins_and_report_registry_failures",
        |c| Box::pin(oci::oci_charts_follow_constraints_pins_and_report_registry_failures(c)),
    ),
    (
        "a_git_chart_pulls_its_oci_dependencies_as_helm_dependency_build_does",
        |c| Box::pin(oci::a_git_chart_pulls_its_oci_dependencies_as_helm_dependency_build_does(c)),
    ),
    (
        "one_helm4_getter_file_serves_helm4_and_a_ready_helmrelease",
        |c| Box::pin(helm4_getter::one_helm4_getter_file_serves_helm4_and_a_ready_helmrelease(c)),
    ),
    (
        "one_helm4_postrenderer_file_serves_helm4_and_a_helmrelease",
        |c| Box::pin(helm4_getter::one_helm4_postrenderer_file_serves_helm4_and_a_helmrelease(c)),
    ),
    (
        "capstan_helm2_records_are_read_and_changed_by_real_helm2",
        |c| Box::pin(release_helm2::capstan_helm2_records_are_read_and_changed_by_real_helm2(c)),
    ),
    (
        "helm2_releases_are_upgraded_in_place_and_names_are_unique_in_the_cluster",
        |c| {
            Box::pin(
                release_helm2::helm2_releases_are_upgraded_in_place_and_names_are_unique_in_the_cluster(c),
            )
        },
    ),
    (
        "ten_helm2_releases_move_to_helm3_when_the_configuration_changes",
        |c| Box::pin(swap::ten_helm2_releases_move_to_helm3_when_the_configuration_changes(c)),
    ),
    (
        "capstan_helm2_creates_crd_install_hooks_before_the_release",
        |c| Box::pin(release_helm2::capstan_helm2_creates_crd_install_hooks_before_the_release(c)),
    ),
    (
        "capstan_helm2_prunes_history_and_unlocks_what_a_killed_tiller_left",
        |c| {
            Box::pin(
                release_helm2::capstan_helm2_prunes_history_and_unlocks_what_a_killed_tiller_left(
                    c,
                ),
            )
        },
    ),
    ("helm2_releases_move_to_helm3_in_place", |c| {
        Box::pin(release_helm2::helm2_releases_move_to_helm3_in_place(c))
    }),
    (
        "capstan_helm2_atomic_install_with_a_failing_hook_leaves_nothing",
        |c| {
            Box::pin(
                release_helm2::capstan_helm2_atomic_install_with_a_failing_hook_leaves_nothing(c),
            )
        },
    ),
    ("capstan_run_loads_plugins_and_serves_health", |c| {
        Box::pin(operator::capstan_run_loads_plugins_and_serves_health(c))
    }),
    (
        "capstan_release_installs_upgrades_and_uninstalls_for_real_helm",
        |c| {
            Box::pin(
                release_helm3::capstan_release_installs_upgrades_and_uninstalls_for_real_helm(c),
            )
        },
    ),
    (
        "capstan_release_adopts_helm_installs_and_follows_helm_rollback",
        |c| {
            Box::pin(
                release_helm3::capstan_release_adopts_helm_installs_and_follows_helm_rollback(c),
            )
        },
    ),
    (
        "capstan_release_unlocks_a_release_left_pending_install",
        |c| Box::pin(release_helm3::capstan_release_unlocks_a_release_left_pending_install(c)),
    ),
    (
        "capstan_release_configmap_driver_shares_history_with_helm",
        |c| {
            Box::pin(
                release_helm3_configmap::capstan_release_configmap_driver_shares_history_with_helm(
                    c,
                ),
            )
        },
    ),
    ("capstan_release_outside_the_grant_writes_nothing", |c| {
        Box::pin(release_helm3::capstan_release_outside_the_grant_writes_nothing(c))
    }),
    (
        "a_sync_renders_with_the_live_clusters_capabilities_and_lookups",
        |c| {
            Box::pin(
                release_helm3::a_sync_renders_with_the_live_clusters_capabilities_and_lookups(c),
            )
        },
    ),
    (
        "capstan_release_operations_on_one_release_exclude_each_other",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_operations_on_one_release_exclude_each_other(c),
            )
        },
    ),
    (
        "capstan_release_waits_for_a_hook_pod_to_complete_not_just_to_be_ready",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_waits_for_a_hook_pod_to_complete_not_just_to_be_ready(c),
            )
        },
    ),
    ("capstan_release_waits_and_runs_hooks_of_every_event", |c| {
        Box::pin(release_helm3_lifecycle::capstan_release_waits_and_runs_hooks_of_every_event(c))
    }),
    (
        "capstan_release_atomic_install_that_never_gets_ready_leaves_nothing",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_atomic_install_that_never_gets_ready_leaves_nothing(c),
            )
        },
    ),
    (
        "capstan_release_force_replaces_what_cannot_change_in_place",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_force_replaces_what_cannot_change_in_place(
                    c,
                ),
            )
        },
    ),
    ("capstan_release_creates_crds_by_policy", |c| {
        Box::pin(release_helm3_lifecycle::capstan_release_creates_crds_by_policy(c))
    }),
    (
        "capstan_release_plans_without_writing_and_rolls_back",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_plans_without_writing_and_rolls_back(c),
            )
        },
    ),
    (
        "capstan_release_atomic_install_with_a_failing_hook_leaves_nothing",
        |c| {
            Box::pin(
                release_helm3_lifecycle::capstan_release_atomic_install_with_a_failing_hook_leaves_nothing(c),
            )
        },
    ),
    (
        "deploy_manifests_and_chart_are_accepted_and_grant_what_the_operator_needs",
        |c| {
            Box::pin(
                deploy::deploy_manifests_and_chart_are_accepted_and_grant_what_the_operator_needs(
                    c,
                ),
            )
        },
    ),
    (
        "the_chart_installed_by_helm_runs_the_operator_as_its_service_account",
        |c| {
            Box::pin(
                installed::the_chart_installed_by_helm_runs_the_operator_as_its_service_account(c),
            )
        },
    ),
];

/// Longest a single test may take before it is failed.
const TEST_TIMEOUT: Duration = Duration::from_secs(300);

fn main() -> std::process::ExitCode {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let selected: Vec<_> = TESTS
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    if std::env::args().any(|a| a == "--list") {
        for (name, _) in &selected {
            println!("{name}: test");
        }
        return std::process::ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start tokio: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let cluster = match Cluster::start_or_reuse() {
        Ok(cluster) => Arc::new(cluster),
        Err(error) => {
            eprintln!("cannot start the control plane: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!(
        "\nrunning {} integration tests against {}",
        selected.len(),
        cluster.kubeconfig().display()
    );
    let mut failed = Vec::new();
    let started = Instant::now();
    for (name, test) in &selected {
        let test_started = Instant::now();
        let outcome = runtime.block_on(async {
            let task = tokio::spawn(test(Arc::clone(&cluster)));
            tokio::time::timeout(TEST_TIMEOUT, task).await
        });
        let verdict = match outcome {
            Ok(Ok(())) => "ok",
            Ok(Err(_panic)) => "FAILED",
            Err(_elapsed) => "FAILED (timed out)",
        };
        println!(
            "test {name} ... {verdict} ({:.1}s)",
            test_started.elapsed().as_secs_f64()
        );
        if verdict != "ok" {
            failed.push(*name);
        }
    }
    drop(runtime);
    let passed = selected.len() - failed.len();
    // Tear down before reporting so that a failing run still stops its processes.
    drop(cluster);
    println!(
        "\ntest result: {}. {passed} passed; {} failed; finished in {:.1}s",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        std::process::ExitCode::FAILURE
    }
}
