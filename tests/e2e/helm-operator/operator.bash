#!/usr/bin/env bash
# The operator's pod, as a kubelet would run it: while the helm-operator Deployment of the
# suite's stand-in chart (chart/helm-operator) has a pod, Capstan runs for it, on this
# machine, against the world's control plane. Sourced by world.bash; needs WORLD, KUBECTL,
# E2E_NAMESPACE and the environment world_up exports.
#
# What the suite asks of the operator's pod, and where it is answered:
# - `kubectl logs -n helm-operator-e2e deploy/helm-operator [-p]` (teardown, and the
#   greps for "upgrade failed", "test failed", ...): kwok serves the pod's container logs
#   from $E2E_OPERATOR_LOG and, with -p, $E2E_OPERATOR_PREVIOUS_LOG (the ClusterLogs that
#   world_up hands kwok). The supervisor writes Capstan's stdout and stderr there, in the
#   CRI log format kwok reads, and moves the current log to the previous one on a restart.
# - `poll_no_restarts` (`kubectl get pod -l app=helm-operator -o
#   jsonpath='{..restartCount}'`): the supervisor counts Capstan's exits while the pod
#   lives, writes the count to $E2E_OPERATOR_RESTARTS and puts it, with the last exit, in
#   the pod's status (containerStatuses[0].restartCount, lastState), as the kubelet does.
# - a pod that goes away (helm delete, namespace deletion) stops Capstan (SIGTERM, SIGKILL
#   after 15 s); a new pod starts it afresh with empty logs and a count of 0. After an exit
#   the next start waits as CrashLoopBackOff does: 10 s, doubling, at most 5 minutes.

# ----------------------------------------------------------------------------------------
# start_operator POD_DIR POD_NAME
#
# THE LAUNCHER. Runs Capstan in the foreground (exec) for the operator pod POD_NAME; its
# stdout and stderr are the container's log. POD_DIR is this pod's folder (state, files its
# volumes would hold, configuration). Called again after each exit.
#
# It hands Capstan the Helm Operator's configuration, read from the pod as the Helm
# Operator's container would have seen it:
#   - the container args the chart made (--enabled-helm-versions, --git-poll-interval=3s,
#     --charts-sync-interval=30s, --tiller-namespace=helm-operator-e2e, ...): in
#     POD_DIR/args, one a line, and mapped below onto what Capstan has today;
#   - the files of its volumes: POD_DIR/files/ssh/identity (Secret flux-git-deploy, at
#     /etc/fluxd/ssh), POD_DIR/files/known_hosts (ConfigMap helm-operator-ssh-config),
#     POD_DIR/files/gitconfig (Secret gitconfig), POD_DIR/files/repositories.yaml (Secret
#     flux-helm-repositories);
#   - the world's test CA (E2E_CA_FILE), which plays the part of the public roots for
#     stefanprodan.github.io, charts.konghq.com, raw.githubusercontent.com, charts.helm.sh.
# The HELM_OPERATOR_* variables below carry all of that to the process. Capstan does not
# read them yet, nor serve helm.fluxcd.io/v1: until that front door exists the suite fails
# (see README.md, "For the front-door implementer"). Change this function, and only this
# one, when it does.
# ----------------------------------------------------------------------------------------
start_operator() {
  local pod_dir=$1 pod_name=$2
  local args=$pod_dir/args
  arg() { sed -n "s/^--$1=//p" "$args" | head -n1; }
  local versions git_poll charts_sync tiller_ns
  versions=$(arg enabled-helm-versions)
  git_poll=$(arg git-poll-interval)
  charts_sync=$(arg charts-sync-interval)
  tiller_ns=$(arg tiller-namespace)

  capstan_config "$versions" "$tiller_ns" > "$pod_dir/capstan.yaml"

  export HELM_OPERATOR_POD=$pod_name
  export HELM_OPERATOR_ARGS_FILE=$args
  export HELM_OPERATOR_ENABLED_HELM_VERSIONS=$versions
  export HELM_OPERATOR_GIT_POLL_INTERVAL=$git_poll
  export HELM_OPERATOR_CHARTS_SYNC_INTERVAL=$charts_sync
  export HELM_OPERATOR_TILLER_NAMESPACE=$tiller_ns
  export HELM_OPERATOR_SSH_IDENTITY=$pod_dir/files/ssh/identity
  export HELM_OPERATOR_KNOWN_HOSTS=$pod_dir/files/known_hosts
  export HELM_OPERATOR_GITCONFIG=$pod_dir/files/gitconfig
  export HELM_OPERATOR_REPOSITORIES=$pod_dir/files/repositories.yaml
  export HELM_OPERATOR_CA_FILE=$E2E_CA_FILE
  # libgit2 and the host's git transport read the system roots from here.
  export SSL_CERT_FILE=$E2E_CA_BUNDLE
  export HOME=$pod_dir/home
  mkdir -p "$HOME"

  # The Helm Operator polled git every --git-poll-interval and re-read chart repositories
  # every --charts-sync-interval; Capstan refreshes both every --source-interval seconds,
  # so the git poll (the shorter) is given.
  local source_interval
  source_interval=$(duration_seconds "${git_poll:-3s}")
  echo "start_operator: $E2E_CAPSTAN run --config $pod_dir/capstan.yaml (pod $pod_name, Helm $versions, git poll $git_poll, charts sync $charts_sync, Tiller namespace $tiller_ns)"
  exec "$E2E_CAPSTAN" run --config "$pod_dir/capstan.yaml" \
    --metrics-address "127.0.0.1:$(free_port)" \
    --source-interval "$source_interval" --resync-interval 30 --shutdown-grace 10 \
    --allow-cluster-kind ClusterRole.rbac.authorization.k8s.io,ClusterRoleBinding.rbac.authorization.k8s.io
}

# capstan_config VERSIONS TILLER_NAMESPACE: the Capstan configuration for the operator pod
# (stdout). The plugins and cacheDir are the same whatever the arguments: world_up compiles
# the components into that cache once (`capstan plugin compile`, as an image build would),
# and every pod's Capstan starts from it instead of spending a minute in Cranelift.
capstan_config() {
  local versions=$1 tiller_ns=$2 plugins=$E2E_ROOT/target/plugins
  # Backends for the enabled Helm versions; a HelmRelease without spec.helmVersion gets the
  # lowest enabled one, as the Helm Operator chose.
  local default_backend=helm3 v2_line="" v3_line=""
  case ",$versions," in *,v3,*) v3_line="  v3: helm3" ;; esac
  case ",$versions," in *,v2,*) v2_line="  v2: helm2"; default_backend=helm2 ;; esac
  cat <<CONFIG
# Written by tests/e2e/helm-operator/operator.bash (capstan_config $versions $tiller_ns).
cacheDir: $E2E_COMPONENT_CACHE
plugins:
  - {name: git, world: source, path: $plugins/source-git.wasm}
  - {name: helm-repo, world: source, path: $plugins/source-helm-repo.wasm}
  - {name: helm3, world: backend, path: $plugins/backend-helm3.wasm,
     limits: {memoryMib: 512, timeoutMs: 600000}}
  # Tiller's records live in its namespace, where the real Tiller of the world (for the
  # suite's helm2 CLI) keeps them too.
  - {name: helm2, world: backend, path: $plugins/backend-helm2.wasm,
     limits: {memoryMib: 512, timeoutMs: 600000},
     storageNamespaces: [$tiller_ns], wasi: {env: {TILLER_NAMESPACE: $tiller_ns}}}
backends:
  default: $default_backend
$v2_line
$v3_line
# valuesFrom may name ConfigMaps and Secrets of other namespaces (30_values_from), as the
# Helm Operator allowed.
allowCrossNamespaceRefs: true
sources:
  # The world's servers are on loopback addresses (127.0.0.10-15, see /etc/hosts here).
  egress:
    allowNetworks: [127.0.0.0/8]
CONFIG
}

duration_seconds() { # 3s, 30s, 5m, 1h -> seconds
  local d=$1
  case $d in
    *h) echo $(( ${d%h} * 3600 )) ;;
    *m) echo $(( ${d%m} * 60 )) ;;
    *s) echo "${d%s}" ;;
    *) echo "$d" ;;
  esac
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# What the pod's volumes would hold, and its container's args, for start_operator.
prepare_pod() { # prepare_pod POD_NAME POD_DIR
  local pod=$1 dir=$2 json volume_json
  mkdir -p "$dir/files/ssh"
  json=$("$KUBECTL" get pod -n "$E2E_NAMESPACE" "$pod" -o json) || return 1
  jq -r '.spec.containers[0].args[]' <<<"$json" > "$dir/args"
  secret_file() { # secret_file NAME KEY TARGET
    "$KUBECTL" get secret -n "$E2E_NAMESPACE" "$1" -o json 2>/dev/null |
      jq -r --arg k "$2" '.data[$k] // empty' | base64 -d > "$3" || true
  }
  configmap_file() { # configmap_file NAME KEY TARGET
    "$KUBECTL" get configmap -n "$E2E_NAMESPACE" "$1" -o json 2>/dev/null |
      jq -r --arg k "$2" '.data[$k] // empty' > "$3" || true
  }
  local name
  for volume in git-key sshknownhosts git-config repositories-yaml; do
    volume_json=$(jq -c --arg v "$volume" '.spec.volumes[]? | select(.name == $v)' <<<"$json")
    [ -n "$volume_json" ] || continue
    case $volume in
      git-key)
        name=$(jq -r '.secret.secretName' <<<"$volume_json")
        for key in identity id_rsa id_rsa.pub known_hosts; do secret_file "$name" "$key" "$dir/files/ssh/$key"; done
        chmod 600 "$dir/files/ssh/"* ;;
      sshknownhosts)
        configmap_file "$(jq -r '.configMap.name' <<<"$volume_json")" known_hosts "$dir/files/known_hosts" ;;
      git-config)
        secret_file "$(jq -r '.secret.secretName' <<<"$volume_json")" gitconfig "$dir/files/gitconfig" ;;
      repositories-yaml)
        secret_file "$(jq -r '.secret.secretName' <<<"$volume_json")" repositories.yaml "$dir/files/repositories.yaml" ;;
    esac
  done
}

# Puts the container's state into the pod's status, as the kubelet reports it.
report_container() { # report_container POD RESTARTS STATE_JSON [LAST_STATE_JSON]
  local pod=$1 restarts=$2 state=$3 last=${4:-'{}'} ready=false
  case $state in *running*) ready=true ;; esac
  "$KUBECTL" patch pod -n "$E2E_NAMESPACE" "$pod" --subresource=status --type=merge -p "$(jq -cn \
    --argjson restarts "$restarts" --argjson state "$state" --argjson last "$last" --argjson ready "$ready" \
    --arg image "$(jq -r .image "$WORLD/operator/pods/$pod/container.json")" \
    '{status: {containerStatuses: [{name: "flux-helm-operator", image: $image, imageID: "",
      ready: $ready, started: $ready, restartCount: $restarts, state: $state, lastState: $last}]}}')" \
    >/dev/null 2>&1 || true
}

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# Runs Capstan for one pod until told to stop (SIGTERM), restarting it after exits.
run_pod() { # run_pod POD_NAME
  # A background subshell of the harness: no errexit here (a pod deleted between two
  # kubectl calls is not an error, and nothing may end this loop but SIGTERM).
  set +e +o pipefail
  local pod=$1 dir=$WORLD/operator/pods/$1 cpid="" stopping=0 restarts=0 backoff=10 last_state='{}'
  mkdir -p "$dir"
  "$KUBECTL" get pod -n "$E2E_NAMESPACE" "$pod" -o json | jq '.spec.containers[0]' > "$dir/container.json"
  trap 'stopping=1; [ -n "$cpid" ] && kill -TERM "$cpid" 2>/dev/null' TERM
  : > "$E2E_OPERATOR_LOG"
  rm -f "$E2E_OPERATOR_PREVIOUS_LOG"
  echo 0 > "$E2E_OPERATOR_RESTARTS"
  while [ "$stopping" = 0 ]; do
    # (the pod may be gone already: the supervisor's SIGTERM follows)
    prepare_pod "$pod" "$dir" 2>/dev/null || { sleep 1; continue; }
    local started
    started=$(now)
    report_container "$pod" "$restarts" "{\"running\":{\"startedAt\":\"$started\"}}" "$last_state"
    ( start_operator "$dir" "$pod" ) > >(exec python3 "$E2E_HERE/servers/crilog.py" >> "$E2E_OPERATOR_LOG") 2>&1 &
    cpid=$!
    echo "$cpid" > "$dir/capstan.pid"
    local code=0
    wait "$cpid" || code=$?
    # A TERM interrupts `wait`: wait for the operator itself, at most 15 s.
    if [ "$stopping" = 1 ]; then
      for _ in $(seq 150); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$cpid" 2>/dev/null || true
      break
    fi
    restarts=$((restarts + 1))
    echo "$restarts" > "$E2E_OPERATOR_RESTARTS"
    echo "operator: pod $pod: capstan exited with $code; restart $restarts in ${backoff}s" >&2
    last_state="{\"terminated\":{\"exitCode\":$code,\"reason\":\"Error\",\"startedAt\":\"$started\",\"finishedAt\":\"$(now)\"}}"
    cp "$E2E_OPERATOR_LOG" "$E2E_OPERATOR_PREVIOUS_LOG"
    : > "$E2E_OPERATOR_LOG"
    report_container "$pod" "$restarts" "{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}" "$last_state"
    for _ in $(seq $((backoff * 10))); do [ "$stopping" = 1 ] && break; sleep 0.1; done
    backoff=$((backoff * 2 > 300 ? 300 : backoff * 2))
  done
}

# The supervisor: follows the operator Deployment's pods and keeps one Capstan running for
# the Running one. Polls the API server once a second with curl (cheap), and stops on
# SIGTERM, stopping Capstan first.
operator_supervisor() {
  set +e +o pipefail
  local current="" runner="" pod
  trap '[ -n "$runner" ] && { kill -TERM "$runner" 2>/dev/null; wait "$runner"; }; exit 0' TERM
  while :; do
    pod=$(api_get "/api/v1/namespaces/$E2E_NAMESPACE/pods?labelSelector=app%3Dhelm-operator" |
      jq -r '[.items[]? | select(.metadata.deletionTimestamp == null and .status.phase == "Running")]
        | sort_by(.metadata.creationTimestamp) | .[0].metadata.name // empty' 2>/dev/null || true)
    if [ "$pod" != "$current" ]; then
      if [ -n "$runner" ]; then
        kill -TERM "$runner" 2>/dev/null
        wait "$runner" 2>/dev/null
        runner=""
        echo "operator: pod $current gone: capstan stopped" >&2
      fi
      current=$pod
      if [ -n "$pod" ]; then
        echo "operator: pod $pod is running: starting capstan" >&2
        run_pod "$pod" &
        runner=$!
      fi
    fi
    sleep 1 &
    wait $! || true
  done
}

api_get() { # api_get PATH: a GET against the API server as the admin of the kubeconfig
  curl -fsS --cacert "$E2E_CLUSTER/pki/ca.crt" --cert "$E2E_CLUSTER/pki/admin.crt" \
    --key "$E2E_CLUSTER/pki/admin.key" "$(sed -n 's/^ *server: //p' "$KUBECONFIG")$1"
}
