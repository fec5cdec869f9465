#!/usr/bin/env bash
# world_check: every piece of the world, checked the way the suite and the operator use it
# (sourced by `run` after world_up, before the suite). Runs the suite's own lib functions
# (install_gitsrv, install_chartmuseum, install_helm_operator_with_helm, ...) from the
# suite's checkout, with real helm2/helm3/git/ssh/curl and Capstan's libgit2, and cleans up
# after itself: the suite starts from an empty namespace. Prints one line per check and
# returns non-zero if one failed.

check_failures=0
ok() { printf '  ok    %s\n' "$*" >&2; }
fail() { printf '  FAIL  %s\n' "$*" >&2; check_failures=$((check_failures + 1)); }
since() { echo "$(( ($(date +%s%N) / 1000000 - $1) ))"; }
expect() { # expect WHAT CMD... : CMD must succeed
  local what=$1 out t; shift
  t=$(( $(date +%s%N) / 1000000 ))
  if out=$("$@" 2>&1); then ok "$what ($(since "$t") ms)"; else
    fail "$what ($(since "$t") ms)"; printf '%s\n' "$out" | tail -n 15 | sed 's/^/        /' >&2
  fi
}
refuse() { # refuse WHAT CMD... : CMD must fail
  local what=$1 t; shift
  t=$(( $(date +%s%N) / 1000000 ))
  if "$@" >/dev/null 2>&1; then fail "$what (it succeeded)"; else ok "$what ($(since "$t") ms)"; fi
}

world_check() {
  local t0 scratch
  t0=$(( $(date +%s%N) / 1000000 ))
  scratch=$WORLD/check
  mkdir -p "$scratch"
  step "checking the world"
  (
    set +eu +o pipefail
    cd "$SUITE_ROOT/test/e2e" || exit 1
    exec 3>&2
    # shellcheck disable=SC1091
    source lib/env.bash; source lib/defer.bash; source lib/install.bash; source lib/poll.bash
    check_world_pieces "$scratch"
    run_deferred >/dev/null 2>&1
    # The suite's Helm clients start without repositories, as they did.
    helm3 repo remove podinfo kong museum >/dev/null 2>&1
    helm2 repo remove podinfo >/dev/null 2>&1
    kubectl delete namespace "$E2E_NAMESPACE" "$DEMO_NAMESPACE" --ignore-not-found --wait >/dev/null 2>&1
    exit "$check_failures"
  )
  local rc=$?
  WORLD_CHECK_MS=$(elapsed "$t0")
  echo "world: checked in $WORLD_CHECK_MS ms, $rc failed" >&2
  return "$rc"
}

check_world_pieces() {
  local scratch=$1 out

  echo "names (/etc/hosts of the world, read by getent, curl, ssh, Go and libgit2):" >&2
  for name in gitsrv chartmuseum stefanprodan.github.io charts.konghq.com raw.githubusercontent.com charts.helm.sh; do
    expect "$name resolves to $(getent hosts "$name" | cut -d' ' -f1)" getent hosts "$name"
  done

  echo "web over TLS, verified against the run's test CA ($E2E_CA_FILE):" >&2
  local podinfo=https://stefanprodan.github.io/podinfo
  expect "$podinfo/index.yaml lists podinfo 3.2.0, 3.2.2, 4.0.1" bash -c \
    "curl -fsS --cacert '$E2E_CA_FILE' $podinfo/index.yaml | grep -c 'version: \(3.2.0\|3.2.2\|4.0.1\)$' | grep -qx 3"
  expect "$podinfo/podinfo-3.2.2.tgz is a chart archive" bash -c \
    "curl -fsS --cacert '$E2E_CA_FILE' $podinfo/podinfo-3.2.2.tgz | tar -tz | grep -qx podinfo/Chart.yaml"
  expect "https://charts.konghq.com/index.yaml lists kong 1.1.1" bash -c \
    "curl -fsS --cacert '$E2E_CA_FILE' https://charts.konghq.com/index.yaml | grep -q 'https://charts.konghq.com/kong-1.1.1.tgz'"
  local raw=https://raw.githubusercontent.com/stefanprodan/podinfo/3.2.0/charts/podinfo
  expect "$raw/values.yaml is podinfo 3.2.0's" bash -c \
    "curl -fsS --cacert '$E2E_CA_FILE' $raw/values.yaml | cmp - '$SUITE_SHARED/upstream/podinfo-3.2.0/charts/podinfo/values.yaml'"
  expect "$raw/invalid.yaml is 404" bash -c \
    "[ \$(curl -sS -o /dev/null -w '%{http_code}' --cacert '$E2E_CA_FILE' $raw/invalid.yaml) = 404 ]"
  expect "https://charts.helm.sh/stable/index.yaml (empty stable repository)" \
    curl -fsS --cacert "$E2E_CA_FILE" https://charts.helm.sh/stable/index.yaml
  refuse "the same without the test CA fails verification" \
    curl -fsS --cacert /etc/ssl/certs/ca-certificates.crt "$podinfo/index.yaml"

  echo "helm3 and helm2 (HELM_HOST=$HELM_HOST):" >&2
  expect "helm3 repo add podinfo $podinfo" helm3 repo add podinfo "$podinfo"
  expect "helm3 repo add kong https://charts.konghq.com/" helm3 repo add kong https://charts.konghq.com/
  expect "helm3 search repo finds podinfo 3.2.0, 3.2.2, 4.0.1 and kong 1.1.1" bash -c \
    "helm3 search repo --versions -o json | jq -r '.[] | .name + \" \" + .version' | sort | tr '\n' ' ' | grep -qx 'kong/kong 1.1.1 podinfo/podinfo 3.2.0 podinfo/podinfo 3.2.2 podinfo/podinfo 4.0.1 '"
  expect "helm2 version: client and Tiller v2.17.0" bash -c \
    "helm2 version --tiller-namespace '$E2E_NAMESPACE' | grep -c 'SemVer:\"v2.17.0\"' | grep -qx 2"
  expect "helm3 pull $podinfo/podinfo-3.2.2.tgz (a chart by URL, as 15_upgrade installs it)" \
    bash -c "mkdir -p '$scratch/helm3-pull' && helm3 pull '$podinfo/podinfo-3.2.2.tgz' -d '$scratch/helm3-pull'"
  expect "helm2 fetch $podinfo/podinfo-3.2.2.tgz (the same through Helm 2's repositories' indexes)" \
    bash -c "mkdir -p '$scratch/helm2-fetch' && helm2 fetch '$podinfo/podinfo-3.2.2.tgz' -d '$scratch/helm2-fetch'"
  expect "helm2 repo add podinfo $podinfo" helm2 repo add podinfo "$podinfo"

  echo "kwok: pods do what their containers would (real helm3, --wait and helm test):" >&2
  kubectl create namespace "$DEMO_NAMESPACE" >/dev/null
  expect "podinfo 3.2.0 installs with --wait (pods Ready)" \
    helm3 install ready podinfo/podinfo --version 3.2.0 -n "$DEMO_NAMESPACE" --wait --timeout 60s
  # (replicaCount 2 as the fixtures: with 1, podinfo's maxUnavailable of 1 lets Helm's
  # wait pass with no pod Ready)
  refuse "podinfo 3.2.0 with faults.unready=true (replicaCount 2) times out in --wait" \
    helm3 install unready podinfo/podinfo --version 3.2.0 -n "$DEMO_NAMESPACE" \
      --set faults.unready=true --set replicaCount=2 --wait --timeout 8s
  expect "  and its pods are Running, never Ready" bash -c \
    "sleep 2; kubectl get pods -n '$DEMO_NAMESPACE' -l app=podinfo,release=unready -o jsonpath='{range .items[*]}{.status.phase} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}' | sort -u | grep -qx 'Running False'"
  expect "podinfo 4.0.1: helm3 test passes" bash -c \
    "helm3 install tested podinfo/podinfo --version 4.0.1 -n '$DEMO_NAMESPACE' --wait --timeout 60s >/dev/null && helm3 test tested -n '$DEMO_NAMESPACE' --timeout 60s"
  refuse "podinfo 4.0.1 with faults.testFail=true: helm3 test fails" bash -c \
    "helm3 upgrade tested podinfo/podinfo --version 4.0.1 -n '$DEMO_NAMESPACE' --set faults.testFail=true --wait >/dev/null && helm3 test tested -n '$DEMO_NAMESPACE' --timeout 60s"
  expect "  the failed test pod exited 1" bash -c \
    "kubectl get pods -n '$DEMO_NAMESPACE' -o json | jq -e '[.items[] | select(.metadata.name | test(\"fault-test\")) | .status.containerStatuses[0].state.terminated.exitCode] | index(1) != null'"
  refuse "podinfo 4.0.1 with faults.testTimeout=true: helm3 test times out" bash -c \
    "helm3 upgrade tested podinfo/podinfo --version 4.0.1 -n '$DEMO_NAMESPACE' --set faults.testTimeout=true --wait >/dev/null && helm3 test tested -n '$DEMO_NAMESPACE' --timeout 5s"
  expect "kong 1.1.1 as skip-crd.yaml asks: installs, no konghq.com CRD" bash -c \
    "helm3 install skip-crd kong/kong --version 1.1.1 -n '$DEMO_NAMESPACE' --skip-crds --set ingressController.installCRDs=false && ! kubectl get crd | grep -q konghq.com"
  kubectl create namespace "$E2E_NAMESPACE" >/dev/null 2>&1
  expect "podinfo 4.0.1 through Tiller: helm2 install --wait, helm2 test" bash -c \
    "helm2 install podinfo/podinfo --version 4.0.1 --name tiller-tested --namespace '$DEMO_NAMESPACE' --tiller-namespace '$E2E_NAMESPACE' --wait --timeout 60 >/dev/null && helm2 test tiller-tested --tiller-namespace '$E2E_NAMESPACE' --timeout 60"
  expect "  Tiller keeps its record in a ConfigMap of $E2E_NAMESPACE" \
    kubectl get configmap -n "$E2E_NAMESPACE" tiller-tested.v1
  helm2 delete --purge tiller-tested --tiller-namespace "$E2E_NAMESPACE" >/dev/null 2>&1
  kubectl delete namespace "$DEMO_NAMESPACE" "$E2E_NAMESPACE" --wait >/dev/null 2>&1

  echo "gitsrv and chartmuseum through the suite's own install_gitsrv / install_chartmuseum:" >&2
  kubectl create namespace "$E2E_NAMESPACE" >/dev/null 2>&1
  refuse "gitsrv answers nothing before its pod exists" \
    env GIT_SSH_COMMAND="ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5" \
      git ls-remote ssh://git@gitsrv/git-server/repos/cluster.git
  local gitsrv_result chartmuseum_result
  install_gitsrv gitsrv_result >/dev/null 2>&1
  defer kill "${gitsrv_result[1]}"
  local clone=$scratch/clone head
  expect "git clone over ssh through kubectl port-forward (as 15_upgrade: ssh://git@localhost, GIT_SSH_COMMAND)" \
    env GIT_SSH_COMMAND="${gitsrv_result[0]}" git clone -q -b master ssh://git@localhost/git-server/repos/cluster.git "$clone"
  expect "  the clone is podinfo 3.2.0 committed as init" bash -c \
    "[ \"\$(git -C '$clone' log --format=%s)\" = init ] && grep -q '^version: 3.2.0' '$clone/charts/podinfo/Chart.yaml'"
  expect "git push to master" bash -c \
    "cd '$clone' && sed -i 's%these commands:%these commands;%' charts/podinfo/templates/NOTES.txt && git -c user.email=foo@bar.com -c user.name=Foo commit -qam 'Modify NOTES.txt' && GIT_SSH_COMMAND='${gitsrv_result[0]}' git push -q"
  head=$(git -C "$clone" rev-parse HEAD)
  local key
  key=$(sed -n 's/.* -i \([^ ]*\) .*/\1/p' <<<"${gitsrv_result[0]}")
  expect "ssh://git@gitsrv:22 with known_hosts_v1.0.0 and StrictHostKeyChecking=yes sees the push" bash -c \
    "GIT_SSH_COMMAND='ssh -o StrictHostKeyChecking=yes -o UserKnownHostsFile=$SUITE_ROOT/cache/known_hosts_v1.0.0 -o IdentitiesOnly=yes -i $key' git ls-remote ssh://git@gitsrv/git-server/repos/cluster.git refs/heads/master | grep -q '^$head'"
  refuse "a key not in the flux-git-deploy Secret is refused" bash -c \
    "ssh-keygen -q -t ed25519 -N '' -f '$scratch/other' && GIT_SSH_COMMAND='ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -i $scratch/other' git ls-remote ssh://git@gitsrv/git-server/repos/cluster.git"
  if [ -x "$E2E_CAPSTAN" ] && [ -f "$E2E_ROOT/target/plugins/source-git.wasm" ]; then
    # Capstan's own git source (libgit2 and its libssh2 transport) and Helm repository
    # source (the host's HTTP client), with credentials as a Flux Secret holds them.
    kubectl create secret generic -n "$E2E_NAMESPACE" capstan-check \
      --from-file=identity="$key" --from-file=known_hosts="$SUITE_ROOT/cache/known_hosts_v1.0.0" \
      --from-file=ca.crt="$E2E_CA_FILE" >/dev/null
    printf '%s\n' "cacheDir: $E2E_COMPONENT_CACHE" "plugins:" \
      "  - {name: git, world: source, path: $E2E_ROOT/target/plugins/source-git.wasm}" \
      "  - {name: helm-repo, world: source, path: $E2E_ROOT/target/plugins/source-helm-repo.wasm}" \
      "sources: {egress: {allowNetworks: [127.0.0.0/8]}}" > "$scratch/capstan.yaml"
    printf '%s\n' "apiVersion: helm.capstan.dev/v1alpha1" "kind: HelmRelease" \
      "metadata: {name: check-git, namespace: $E2E_NAMESPACE}" \
      "spec: {chart: {git: 'ssh://git@gitsrv/git-server/repos/cluster.git', ref: master, path: charts/podinfo, secretRef: {name: capstan-check}}}" \
      > "$scratch/hr-git.yaml"
    printf '%s\n' "apiVersion: helm.capstan.dev/v1alpha1" "kind: HelmRelease" \
      "metadata: {name: check-repo, namespace: $E2E_NAMESPACE}" \
      "spec: {chart: {repository: '$podinfo', name: podinfo, version: 3.2.2, chartPullSecret: {name: capstan-check}}}" \
      > "$scratch/hr-repo.yaml"
    expect "capstan source resolve: libgit2 over ssh to gitsrv:22 resolves master to the pushed commit" bash -c \
      "'$E2E_CAPSTAN' source resolve --config '$scratch/capstan.yaml' '$scratch/hr-git.yaml' | grep -q 'revision: *$head'"
    expect "capstan source resolve: $podinfo podinfo 3.2.2 over TLS with the CA from the Secret" bash -c \
      "'$E2E_CAPSTAN' source resolve --config '$scratch/capstan.yaml' '$scratch/hr-repo.yaml' | grep -q 'chart: *podinfo 3.2.2'"
  else
    fail "capstan source resolve (no $E2E_CAPSTAN or target/plugins: make plugins build)"
  fi
  kubectl delete -n "$E2E_NAMESPACE" -k "$FIXTURES_DIR/kustom/base/gitsrv" --wait >/dev/null 2>&1
  kubectl delete -n "$E2E_NAMESPACE" secret flux-git-deploy >/dev/null 2>&1
  install_gitsrv gitsrv_result >/dev/null 2>&1
  defer kill "${gitsrv_result[1]}"
  expect "a new gitsrv pod starts from a fresh cluster.git (the push is gone)" bash -c \
    "GIT_SSH_COMMAND='${gitsrv_result[0]}' git ls-remote ssh://git@localhost/git-server/repos/cluster.git refs/heads/master | grep -vq '^$head'"

  refuse "chartmuseum answers 503 before its pod exists" curl -fsS -m 5 http://chartmuseum:8080/health
  install_chartmuseum chartmuseum_result >/dev/null 2>&1
  defer kill "${chartmuseum_result[1]}"
  local museum="http://localhost:${chartmuseum_result[0]}"
  expect "chartmuseum: /health through kubectl port-forward ($museum)" curl -fsS -m 30 "$museum/health"
  upload_ok() { HELM_VERSION=v3 package_and_upload_chart "$1" "$2" | grep -q '"saved":true'; }
  expect "chartmuseum: package_and_upload_chart nested-helmrelease (POST /api/charts, 201)" \
    upload_ok "$FIXTURES_DIR/charts/nested-helmrelease" "$museum"
  expect "chartmuseum: the same version again is 409" bash -c \
    "helm3 package -d '$scratch' '$FIXTURES_DIR/charts/nested-helmrelease' >/dev/null && [ \$(curl -m 30 -sS -o /dev/null -w '%{http_code}' --data-binary @'$scratch/nested-helmrelease-0.1.0.tgz' http://chartmuseum:8080/api/charts) = 409 ]"
  expect "chartmuseum: helm3 repo add http://chartmuseum:8080, helm3 pull nested-helmrelease 0.1.0" bash -c \
    "mkdir -p '$scratch/pulled' && helm3 repo add museum http://chartmuseum:8080 >/dev/null && helm3 pull museum/nested-helmrelease --version 0.1.0 -d '$scratch/pulled'"

  echo "the operator's pod (operator.bash), installed by the suite's install_helm_operator_with_helm:" >&2
  (HELM_VERSION=v3 install_helm_operator_with_helm >/dev/null 2>&1)
  expect "gitconfig Secret as 10_helm_chart reads it" bash -c \
    "[ \"\$(kubectl get secrets -n '$E2E_NAMESPACE' gitconfig -ojsonpath={..data.gitconfig} | base64 --decode)\" = \"\$GITCONFIG\" ]"
  # (Capstan may have exited already, until it serves helm.fluxcd.io/v1 without its own
  # CRD: then its log is the previous container's)
  operator_logs() { kubectl logs -n "$E2E_NAMESPACE" deploy/helm-operator 2>/dev/null; kubectl logs -p -n "$E2E_NAMESPACE" deploy/helm-operator 2>/dev/null; }
  expect "kubectl logs deploy/helm-operator [-p] shows start_operator's line" \
    poll_until_true 'operator log' "operator_logs | grep -q 'start_operator: '" 20 1
  expect "start_operator got the chart's options" bash -c \
    "$(declare -f operator_logs); operator_logs | grep -q 'Helm v3, git poll 3s, charts sync 30s, Tiller namespace $E2E_NAMESPACE'"
  out=$(kubectl get pod -n "$E2E_NAMESPACE" -l app=helm-operator -o jsonpath='{.items[*].status.containerStatuses[*].restartCount}' 2>&1)
  ok "restart count as poll_no_restarts reads it: '$out' (capstan's exits so far)"
  (HELM_VERSION=v3 uninstall_helm_operator_with_helm)
  expect "uninstalled: capstan stopped" poll_until_true 'capstan stopped' \
    "grep -q 'capstan stopped' '$WORLD/logs/operator-supervisor.log'" 20 1
}
