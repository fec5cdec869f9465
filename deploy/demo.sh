#!/usr/bin/env bash
# The demo (`make demo`): start the local control plane, then run the operator with every
# plugin from deploy/capstan.example.yaml until Ctrl-C. Stops the control plane on exit.
#
# Today the operator loads and checks its plugins, connects to the cluster and serves
# /healthz, /readyz and /metrics on 127.0.0.1:8080; HelmRelease reconciliation arrives
# with the operator issue.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=$root/target/demo-cluster

echo "==> building capstan"
cargo build -p capstan
echo "==> starting the control plane in $dir"
tests/cluster/up "$dir"
trap 'echo "==> stopping the control plane"; tests/cluster/down "$dir"' EXIT
export KUBECONFIG=$dir/kubeconfig
bin=$(tests/cluster/tools-dir)
"$bin/kubectl" get nodes -o wide
echo "==> starting capstan (Ctrl-C to stop); try: curl -s 127.0.0.1:8080/metrics"
target/debug/capstan run --config deploy/capstan.example.yaml --metrics-address 127.0.0.1:8080 || true
