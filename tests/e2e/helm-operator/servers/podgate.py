"""What a Kubernetes Service and a pod's volumes give the world's servers (gitsrv.py and
reposrv.py), which run as plain processes beside the control plane instead of as the
suite's pods (kwok runs no container).

A Service routes to a pod only while one matching its selector is Ready, and a pod that
replaces another starts from its image and empty volumes: the suite's `install_gitsrv`
and `install_chartmuseum` apply a Deployment in every test's setup and delete it with the
namespace in teardown, so each test gets a fresh `cluster.git` and an empty ChartMuseum.
`PodGate.current()` answers which pod (uid) is serving now, or None, by asking the API
server (kubectl, `E2E_KUBECTL`, with `KUBECONFIG`) at most every `ttl` seconds; servers
ask it per connection or request, so nothing polls while the suite is idle.
"""
import base64
import json
import os
import subprocess
import threading
import time

KUBECTL = os.environ.get("E2E_KUBECTL", "kubectl")


def kubectl_json(*args):
    out = subprocess.run(
        [KUBECTL, *args, "-o", "json"], capture_output=True, timeout=30, check=False
    )
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


def ready(pod):
    if pod["metadata"].get("deletionTimestamp"):
        return False
    for condition in pod.get("status", {}).get("conditions", []) or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


class PodGate:
    def __init__(self, namespace, selector, ttl=0.5):
        self.namespace = namespace
        self.selector = selector
        self.ttl = ttl
        self.lock = threading.Lock()
        self.checked = 0.0
        self.uid = None

    def current(self):
        """The uid of a Ready pod matching the selector (the oldest), or None.

        Only a pod found is remembered (for `ttl` seconds): "none" is asked again at once,
        and a failed query (the API server busy) is retried, so a client right after
        `kubectl rollout status` is never turned away by a stale or failed answer."""
        with self.lock:
            if self.uid is not None and time.monotonic() - self.checked < self.ttl:
                return self.uid
            self.uid = None
            for attempt in range(3):
                pods = kubectl_json("get", "pods", "-n", self.namespace, "-l", self.selector)
                if pods is not None:
                    items = [p for p in pods.get("items", []) if ready(p)]
                    items.sort(key=lambda p: p["metadata"]["creationTimestamp"])
                    self.uid = items[0]["metadata"]["uid"] if items else None
                    break
                time.sleep(0.5)
            self.checked = time.monotonic()
            return self.uid


def secret_files(namespace, name):
    """The files a Secret volume would hold: {key: bytes}, or None without the Secret."""
    secret = kubectl_json("get", "secret", "-n", namespace, name)
    if secret is None:
        return None
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
