#!/usr/bin/env python3
"""The suite's web: static HTTPS sites standing in for stefanprodan.github.io,
charts.konghq.com, raw.githubusercontent.com and charts.helm.sh, and a ChartMuseum at
http://chartmuseum:8080. One process, one thread per listener; Python's standard library
only. Used by tests/e2e/helm-operator (see its README.md).

    reposrv.py --tls-cert CERT --tls-key KEY \\
        --https ADDRESS:PORT=DOCROOT ... --chartmuseum ADDRESS:PORT=STORAGE

Each `--https` serves the files under DOCROOT (GET and HEAD; a missing file is 404, as
GitHub Pages and raw.githubusercontent.com answer) with the certificate given (one
certificate naming every host, from the run's test CA). Prepared by the harness: charts
packaged by the real `helm package`, indexes made by `helm repo index`.

`--chartmuseum` answers the part of ChartMuseum v0.11's API the suite and an operator use,
with local storage under STORAGE/<pod uid>/:
  GET /health                     {"healthy":true}
  GET /index.yaml                 the repository index (`helm repo index` of the storage,
                                  chart URLs `charts/<name>-<version>.tgz` as ChartMuseum's)
  GET /charts/<name>-<version>.tgz
  POST /api/charts                body: a chart archive. 201 {"saved":true}; 409
                                  {"error":"file already exists"} when that version is
                                  stored (ChartMuseum without --allow-overwrite); 500 with
                                  {"error": ...} for what is not a chart
It serves only while a Ready pod labelled name=chartmuseum exists in E2E_NAMESPACE (as its
Service would; otherwise every request is answered 503), and each new pod starts with
empty storage (its emptyDir). The real `helm` (E2E_HELM3) reads uploaded charts and makes
the index.

Every request is logged to stderr: listener, method, path, status.
"""
import argparse
import functools
import http.server
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from podgate import PodGate  # noqa: E402

HELM = os.environ.get("E2E_HELM3", "helm")
NAMESPACE = os.environ.get("E2E_NAMESPACE", "helm-operator-e2e")


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


class Static(http.server.SimpleHTTPRequestHandler):
    site = ""

    def log_request(self, code="-", size="-"):
        log("%s %s %s %s" % (self.site, self.command, self.path, code))

    def log_message(self, format, *args):
        pass


class ChartMuseum(http.server.BaseHTTPRequestHandler):
    site = ""
    storage = ""
    gate = None
    lock = threading.Lock()

    def log_request(self, code="-", size="-"):
        log("%s %s %s %s" % (self.site, self.command, self.path, code))

    def log_message(self, format, *args):
        pass

    def reply(self, code, body, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def no_pod(self):
        # No Ready pod behind the Service. A Service without endpoints refuses the
        # connection; this server cannot, having accepted it, and closing it unanswered
        # leaves a client behind `kubectl port-forward` (kwok's stream) waiting forever
        # (curl has no timeout in the suite): so 503, and the connection closes.
        log("%s %s %s (no Ready chartmuseum pod: 503)" % (self.site, self.command, self.path))
        self.close_connection = True
        self.reply(503, {"error": "no Ready chartmuseum pod"})

    def pod_storage(self):
        uid = self.gate.current()
        if uid is None:
            return None
        root = os.path.join(self.storage, uid)
        with self.lock:
            if not os.path.isdir(os.path.join(root, "charts")):
                os.makedirs(os.path.join(root, "charts"))
                reindex(root)
        return root

    def do_GET(self):
        root = self.pod_storage()
        if root is None:
            return self.no_pod()
        path = self.path.split("?", 1)[0]
        if path == "/health":
            return self.reply(200, {"healthy": True})
        if path == "/index.yaml":
            with open(os.path.join(root, "index.yaml"), "rb") as f:
                return self.reply(200, f.read(), "application/x-yaml")
        match = re.fullmatch(r"/charts/([A-Za-z0-9._+-]+\.tgz)", path)
        if match and os.path.isfile(os.path.join(root, "charts", match.group(1))):
            with open(os.path.join(root, "charts", match.group(1)), "rb") as f:
                return self.reply(200, f.read(), "application/x-tar")
        return self.reply(404, {"error": "not found"})

    do_HEAD = do_GET

    def do_POST(self):
        root = self.pod_storage()
        if root is None:
            return self.no_pod()
        if self.path.split("?", 1)[0] != "/api/charts":
            return self.reply(404, {"error": "not found"})
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with tempfile.TemporaryDirectory() as scratch:
            archive = os.path.join(scratch, "upload.tgz")
            with open(archive, "wb") as f:
                f.write(body)
            shown = subprocess.run([HELM, "show", "chart", archive], capture_output=True)
            if shown.returncode != 0:
                return self.reply(500, {"error": shown.stderr.decode().strip()})
            fields = dict(
                re.findall(r"^(name|version): *['\"]?([^'\"\n]+)['\"]?$", shown.stdout.decode(), re.M)
            )
            if "name" not in fields or "version" not in fields:
                return self.reply(500, {"error": "chart has no name or version"})
            target = os.path.join(root, "charts", "%s-%s.tgz" % (fields["name"], fields["version"]))
            with self.lock:
                if os.path.exists(target):
                    return self.reply(409, {"error": "file already exists"})
                shutil.copyfile(archive, target)
                reindex(root)
        return self.reply(201, {"saved": True})


def reindex(root):
    subprocess.run([HELM, "repo", "index", root], check=True, capture_output=True)


def listen(spec):
    address, _, docroot = spec.partition("=")
    host, _, port = address.rpartition(":")
    return host, int(port), docroot


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--https", action="append", default=[])
    parser.add_argument("--chartmuseum")
    args = parser.parse_args()

    servers = []
    context = None
    if args.https:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
    for spec in args.https:
        host, port, docroot = listen(spec)
        handler = type("Site", (Static,), {"site": "https://%s:%d" % (host, port)})
        server = http.server.ThreadingHTTPServer(
            (host, port), functools.partial(handler, directory=docroot)
        )
        server.socket = context.wrap_socket(server.socket, server_side=True)
        servers.append(server)
    if args.chartmuseum:
        host, port, storage = listen(args.chartmuseum)
        os.makedirs(storage, exist_ok=True)
        handler = type(
            "Museum",
            (ChartMuseum,),
            {
                "site": "http://%s:%d" % (host, port),
                "storage": storage,
                "gate": PodGate(NAMESPACE, "name=chartmuseum"),
            },
        )
        servers.append(http.server.ThreadingHTTPServer((host, port), handler))
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    log("serving %d listeners" % len(servers))
    print("ready", flush=True)
    threading.Event().wait()


main()
