#!/usr/bin/env bash
# The world of the Flux Helm Operator's e2e suite, built on this machine without containers
# (see README.md beside this file): world_up starts it, world_down stops everything it
# started. Sourced by `run` inside private mount, network and pid namespaces, where
# /etc/hosts and the loopback interface are the world's own.

E2E_NAMESPACE=helm-operator-e2e

# Where the suite's host names point (/etc/hosts of the world), and on which ports.
GITSRV_ADDR=127.0.0.10          # gitsrv:22 (SSH)
CHARTMUSEUM_ADDR=127.0.0.11     # chartmuseum:8080 (HTTP)
PODINFO_ADDR=127.0.0.12         # stefanprodan.github.io:443
KONG_ADDR=127.0.0.13            # charts.konghq.com:443
RAW_ADDR=127.0.0.14             # raw.githubusercontent.com:443
STABLE_ADDR=127.0.0.15          # charts.helm.sh:443 (the operator's `stable` repository)

step() { printf '\n==> %s\n' "$*" >&2; }
elapsed() { echo "$(( $(date +%s%N) / 1000000 - $1 ))"; }

# start NAME CMD...: runs in the background, stdout to logs/NAME.out, stderr to
# logs/NAME.log; the pid is recorded for world_down.
start() {
  local name=$1; shift
  "$@" >"$WORLD/logs/$name.out" 2>"$WORLD/logs/$name.log" &
  echo "$name $!" >> "$WORLD/pids"
}

wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "world: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
}

world_up() {
  local t0 t
  t0=$(( $(date +%s%N) / 1000000 ))
  rm -rf "$WORLD"
  mkdir -p "$WORLD"/{logs,bin,pki,sites,gitsrv,operator/pods}
  : > "$WORLD/pids"
  E2E_CLUSTER=$WORLD/cluster
  E2E_OPERATOR_LOG=$WORLD/operator/current.log
  E2E_OPERATOR_PREVIOUS_LOG=$WORLD/operator/previous.log
  E2E_OPERATOR_RESTARTS=$WORLD/operator/restarts
  E2E_CA_FILE=$WORLD/pki/ca.crt
  E2E_CA_BUNDLE=$WORLD/pki/bundle.crt
  export E2E_NAMESPACE E2E_CLUSTER E2E_OPERATOR_LOG E2E_OPERATOR_PREVIOUS_LOG \
    E2E_OPERATOR_RESTARTS E2E_CA_FILE E2E_CA_BUNDLE

  step "network: loopback up, the suite's host names in a private /etc/hosts"
  ip link set lo up
  cat > "$WORLD/hosts" <<HOSTS
127.0.0.1 localhost
::1 localhost ip6-localhost ip6-loopback
$GITSRV_ADDR gitsrv
$CHARTMUSEUM_ADDR chartmuseum
$PODINFO_ADDR stefanprodan.github.io
$KONG_ADDR charts.konghq.com
$RAW_ADDR raw.githubusercontent.com
$STABLE_ADDR charts.helm.sh
HOSTS
  mount --bind "$WORLD/hosts" /etc/hosts

  step "TLS: a test CA for this run, one certificate for every HTTPS host"
  local pki=$WORLD/pki
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" \
    -days 2 -subj "/CN=capstan helm-operator-e2e test CA" 2>/dev/null
  printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=digitalSignature,keyEncipherment' \
    'extendedKeyUsage=serverAuth' \
    'subjectAltName=DNS:stefanprodan.github.io,DNS:charts.konghq.com,DNS:raw.githubusercontent.com,DNS:charts.helm.sh' \
    > "$pki/web.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$pki/web.key" -out "$pki/web.csr" -subj "/CN=web" 2>/dev/null
  openssl x509 -req -in "$pki/web.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/web.ext" -out "$pki/web.crt" 2>/dev/null
  # The system roots and the test CA: what SSL_CERT_FILE names in the world.
  cat /etc/ssl/certs/ca-certificates.crt "$pki/ca.crt" > "$E2E_CA_BUNDLE" 2>/dev/null ||
    cp "$pki/ca.crt" "$E2E_CA_BUNDLE"

  step "control plane (tests/cluster/up) with the world's kwok stages"
  # The operator pod's logs and the port-forwards of the suite's pods, served by kwok's
  # kubelet API (see operator.bash and README.md).
  cat > "$WORLD/kwok-world.yaml" <<KWOK
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: e2e-helm-operator-logs
spec:
  selector:
    matchNamespaces: [$E2E_NAMESPACE]
  logs:
  - containers: [flux-helm-operator]
    logsFile: $E2E_OPERATOR_LOG
    previousLogsFile: $E2E_OPERATOR_PREVIOUS_LOG
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: e2e-services
spec:
  selector:
    matchNamespaces: [$E2E_NAMESPACE]
  forwards:
  - ports: [22]
    target: {address: $GITSRV_ADDR, port: 22}
  - ports: [8080]
    target: {address: $CHARTMUSEUM_ADDR, port: 8080}
KWOK
  : > "$E2E_OPERATOR_LOG"
  t=$(( $(date +%s%N) / 1000000 ))
  CAPSTAN_KWOK_EXTRA_CONFIGS="$E2E_HERE/kwok-stages.yaml:$WORLD/kwok-world.yaml" \
    "$E2E_ROOT/tests/cluster/up" "$E2E_CLUSTER" >&2
  echo "world: control plane in $(elapsed "$t") ms" >&2
  export KUBECONFIG=$E2E_CLUSTER/kubeconfig
  # lib/env.bash sets KUBECONFIG to $KUBECONFIG_SLOT_<BATS_JOB_SLOT> (for its parallel runs
  # on several kind clusters); no bats sets BATS_JOB_SLOT, so that is $KUBECONFIG_SLOT_.
  export KUBECONFIG_SLOT_=$KUBECONFIG
  # Not Capstan's own HelmRelease CRD (helm.capstan.dev): with it installed, the suite's
  # `kubectl get helmrelease/NAME` finds that kind, not helm.fluxcd.io's (kubectl resolves
  # the name to the first group in discovery order, helm.capstan.dev before
  # helm.fluxcd.io), and every poll of the suite reads the wrong object.

  step "commands on PATH: kubectl, helm2 (Tiller's client), helm3"
  ln -s "$KUBECTL" "$WORLD/bin/kubectl"
  ln -s "$HELM2_DIR/helm" "$WORLD/bin/helm2"
  ln -s "$HELM3" "$WORLD/bin/helm3"
  export PATH=$WORLD/bin:$BATS_DIR/bin:$PATH
  export HELM_HOME=$WORLD/helm2-home
  export HELM_CACHE_HOME=$WORLD/helm3/cache HELM_CONFIG_HOME=$WORLD/helm3/config \
    HELM_DATA_HOME=$WORLD/helm3/data
  export SSL_CERT_FILE=$E2E_CA_BUNDLE CURL_CA_BUNDLE=$E2E_CA_BUNDLE
  # A home of its own: no developer's ~/.gitconfig, ~/.ssh or ~/.kube in the world.
  export HOME=$WORLD/home
  mkdir -p "$HOME"

  step "chart repositories: packaged by helm package, indexed by helm repo index"
  local charts=$SUITE_SHARED/charts sites=$WORLD/sites scratch
  mkdir -p "$sites/podinfo/podinfo" "$sites/kong" "$sites/stable/stable" \
    "$sites/raw/stefanprodan/podinfo/3.2.0/charts/podinfo"
  for v in 3.2.0 3.2.2 4.0.1; do
    "$HELM3" package "$charts/podinfo-$v" -d "$sites/podinfo/podinfo" >/dev/null
  done
  "$HELM3" repo index "$sites/podinfo/podinfo" --url https://stefanprodan.github.io/podinfo
  # kong 1.1.1, with two changes to what charts.konghq.com served (README.md, "Where the
  # world differs"):
  # - its archive bundled stable/postgresql 8.1.2 in charts/ (requirements.yaml; `helm
  #   dependency build` put it there), which neither shared/ nor any registry here has.
  #   Helm refuses a chart whose requirement is missing from charts/ whatever its
  #   condition, and drops a disabled one before rendering (postgresql.enabled is false in
  #   kong's values and the fixture's): a subchart of that name and version renders the
  #   same, so the archive gets one;
  # - its ingress controller's ClusterRole, ClusterRoleBinding, Role and RoleBinding are
  #   rbac.authorization.k8s.io/v1beta1, which Kubernetes removed in 1.22 (the suite ran on
  #   1.20): on this 1.36 control plane any Helm fails the install (`no matches for kind
  #   "ClusterRole" in version "rbac.authorization.k8s.io/v1beta1"`) before 35_skip_crds
  #   checks what it is about (no CRD installed with skipCRDs). They become v1, the same
  #   objects. (Serving v1beta1 with CRDs does not work: the API server's built-in
  #   rbac.authorization.k8s.io group answers 404 for every version it does not know.)
  scratch=$WORLD/kong-1.1.1/kong
  mkdir -p "$scratch"
  cp -r "$charts/kong-1.1.1/." "$scratch/"
  chmod -R u+w "$scratch"
  mkdir -p "$scratch/charts/postgresql"
  printf '%s\n' 'apiVersion: v1' 'name: postgresql' 'version: 8.1.2' \
    'description: stand-in for stable/postgresql 8.1.2 (disabled by kong 1.1.1 values; never rendered)' \
    > "$scratch/charts/postgresql/Chart.yaml"
  sed -i 's%^apiVersion: rbac.authorization.k8s.io/v1beta1$%apiVersion: rbac.authorization.k8s.io/v1%' \
    "$scratch/templates/controller-rbac-resources.yaml"
  "$HELM3" package "$scratch" -d "$sites/kong" >/dev/null
  "$HELM3" repo index "$sites/kong" --url https://charts.konghq.com
  "$HELM3" repo index "$sites/stable/stable" --url https://charts.helm.sh/stable
  cp "$SUITE_SHARED/upstream/podinfo-3.2.0/charts/podinfo/values.yaml" \
    "$sites/raw/stefanprodan/podinfo/3.2.0/charts/podinfo/values.yaml"

  step "servers: the web (HTTPS sites, ChartMuseum), gitsrv (SSH), Tiller"
  export E2E_KUBECTL=$KUBECTL E2E_HELM3=$HELM3
  start reposrv python3 "$E2E_HERE/servers/reposrv.py" \
    --tls-cert "$pki/web.crt" --tls-key "$pki/web.key" \
    --https "$PODINFO_ADDR:443=$sites/podinfo" \
    --https "$KONG_ADDR:443=$sites/kong" \
    --https "$RAW_ADDR:443=$sites/raw" \
    --https "$STABLE_ADDR:443=$sites/stable" \
    --chartmuseum "$CHARTMUSEUM_ADDR:8080=$WORLD/chartmuseum"

  # gitsrv's repositories as its start-up seeds them (start.sh of fluxcd/gitsrv with
  # REPO=cluster.git and TAR_URL=podinfo 3.2.0): the tree committed as `init` by root on
  # master, then a `dummy` branch checked out so that pushes to master are accepted.
  local repo=$WORLD/gitsrv/template/cluster.git
  mkdir -p "$repo"
  cp -r "$SUITE_SHARED/upstream/podinfo-3.2.0/." "$repo/"
  chmod -R u+w "$repo"
  (
    cd "$repo"
    git -c init.defaultBranch=master init -q --shared=true
    git add .
    git -c user.email=root@gitsrv.git -c user.name=root commit -qm init
    git checkout -qb dummy
  )
  ssh-keygen -q -t ed25519 -N "" -C gitsrv -f "$WORLD/gitsrv/ssh_host_ed25519_key"
  ssh-keygen -q -t rsa -b 3072 -N "" -C gitsrv -f "$WORLD/gitsrv/ssh_host_rsa_key"
  # What the suite downloads as known_hosts_v1.0.0 from gitsrv's release: its host keys
  # under the name gitsrv.
  for key in ed25519 rsa; do
    printf 'gitsrv %s\n' "$(cut -d' ' -f1,2 "$WORLD/gitsrv/ssh_host_${key}_key.pub")"
  done > "$WORLD/gitsrv/known_hosts"
  start gitsrv "$E2E_ROOT/target/ssh-venv/bin/python" "$E2E_HERE/servers/gitsrv.py" \
    --listen "$GITSRV_ADDR:22" \
    --host-key "$WORLD/gitsrv/ssh_host_ed25519_key" --host-key "$WORLD/gitsrv/ssh_host_rsa_key" \
    --template "$WORLD/gitsrv/template" --state "$WORLD/gitsrv/pods"

  # Real Tiller v2.17 out of cluster, keeping its releases in ConfigMaps (its default
  # storage, which the suite's `helm init` kept) in the suite's namespace.
  local tiller_port tiller_probe
  tiller_port=$(free_port); tiller_probe=$(free_port)
  TILLER_NAMESPACE=$E2E_NAMESPACE start tiller "$HELM2_DIR/tiller" --storage=configmap \
    --listen "127.0.0.1:$tiller_port" --probe-listen "127.0.0.1:$tiller_probe"
  export HELM_HOST=127.0.0.1:$tiller_port

  wait_for reposrv 30 grep -q ready "$WORLD/logs/reposrv.out"
  wait_for gitsrv 30 grep -q ready "$WORLD/logs/gitsrv.out"
  wait_for tiller 30 curl -fsS "http://127.0.0.1:$tiller_probe/readiness"
  # As the suite's install_tiller ran it (less Tiller): the stable repository's index comes
  # from the world's charts.helm.sh. Helm 2 looks through every repository's cached index
  # even to fetch a chart by URL (15_upgrade's `helm upgrade -i ... podinfo-3.2.2.tgz`), and
  # fails without it; --skip-refresh would leave it out.
  "$WORLD/bin/helm2" init --client-only --stable-repo-url https://charts.helm.sh/stable >/dev/null

  step "Capstan's components compiled into the cache every operator pod starts from"
  t=$(( $(date +%s%N) / 1000000 ))
  export E2E_COMPONENT_CACHE=$E2E_ROOT/target/e2e-helm-operator.cache
  if [ -x "$E2E_CAPSTAN" ]; then
    capstan_config v2,v3 "$E2E_NAMESPACE" > "$WORLD/capstan-compile.yaml"
    "$E2E_CAPSTAN" plugin compile --config "$WORLD/capstan-compile.yaml" \
      > "$WORLD/logs/capstan-compile.log" 2>&1 ||
      echo "world: capstan plugin compile failed (logs/capstan-compile.log)" >&2
  fi
  echo "world: components compiled in $(elapsed "$t") ms" >&2

  step "the suite's checkout: test/e2e (the suite, byte for byte), deploy/crds.yaml, chart/, cache/"
  # lib/env.bash finds everything from `git rev-parse --show-toplevel`.
  SUITE_ROOT=$WORLD/helm-operator
  mkdir -p "$SUITE_ROOT"/{test/e2e,deploy,chart,cache}
  git -C "$SUITE_ROOT" init -q
  cp -r "$SUITE_SHARED/suite/." "$SUITE_ROOT/test/e2e/"
  diff -r "$SUITE_SHARED/suite" "$SUITE_ROOT/test/e2e" >&2 || { echo "world: the suite's copy differs" >&2; return 1; }
  cp "$SUITE_SHARED/suite/crds.yaml" "$SUITE_ROOT/deploy/crds.yaml"
  cp -r "$E2E_HERE/chart/helm-operator" "$SUITE_ROOT/chart/helm-operator"
  cp "$WORLD/gitsrv/known_hosts" "$SUITE_ROOT/cache/known_hosts_v1.0.0"
  export SUITE_ROOT

  step "the operator's supervisor (operator.bash)"
  start operator-supervisor operator_supervisor

  # Everything a shell entering the world needs (see README.md, "Looking around").
  {
    for v in PATH HOME KUBECONFIG KUBECONFIG_SLOT_ HELM_HOST HELM_HOME HELM_CACHE_HOME HELM_CONFIG_HOME HELM_DATA_HOME \
      SSL_CERT_FILE CURL_CA_BUNDLE E2E_CA_FILE E2E_CA_BUNDLE E2E_NAMESPACE E2E_COMPONENT_CACHE E2E_OPERATOR_LOG \
      E2E_OPERATOR_PREVIOUS_LOG E2E_OPERATOR_RESTARTS SUITE_ROOT; do
      printf 'export %s=%q\n' "$v" "${!v}"
    done
  } > "$WORLD/env"
  # The unshare process (outside the pid namespace, inside the mount and network ones):
  # `nsenter -t` takes it.
  echo "${E2E_UNSHARE_PID:-}" > "$WORLD/unshare.pid"
  WORLD_UP_MS=$(elapsed "$t0")
  echo "world: up in $WORLD_UP_MS ms (look around: nsenter -t ${E2E_UNSHARE_PID:-?} -m -n, then source $WORLD/env)" >&2
}

world_down() {
  step "stopping the world"
  if [ -f "$WORLD/pids" ]; then
    local entries entry name pid
    mapfile -t entries < <(tac "$WORLD/pids")
    for entry in "${entries[@]}"; do
      name=${entry% *}; pid=${entry#* }
      kill -0 "$pid" 2>/dev/null || continue
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then
        echo "world: $name ($pid) ignored SIGTERM; killing" >&2
        kill -KILL "$pid" 2>/dev/null
      fi
    done
    rm -f "$WORLD/pids"
  fi
  [ -n "${E2E_CLUSTER:-}" ] && "$E2E_ROOT/tests/cluster/down" "$E2E_CLUSTER" >&2 || true
}
