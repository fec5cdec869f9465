#!/usr/bin/env python3
"""Serves the files under ROOT as a Helm chart repository over HTTP on 127.0.0.1 with
Python's own static file handler (Last-Modified / If-Modified-Since included), optionally
behind HTTP basic auth.

    helm_repo_server.py ROOT [USER PASSWORD]

With TLS_CERT and TLS_KEY set (PEM files), serves HTTPS instead.

Prints the port it listens on as the first line of stdout, then logs one line per request
(method, path, status, whether an Authorization header came) to stderr. Used by the tests
only.
"""
import base64
import functools
import http.server
import os
import ssl
import sys

ROOT = sys.argv[1]
CREDENTIALS = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else None


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if CREDENTIALS:
            expected = "Basic " + base64.b64encode(("%s:%s" % CREDENTIALS).encode()).decode()
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="charts"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        super().do_GET()

    def log_request(self, code="-", size="-"):
        auth = "auth" if self.headers.get("Authorization") else "noauth"
        sys.stderr.write("%s %s %s %s\n" % (self.command, self.path, int(code), auth))
        sys.stderr.flush()

    def log_message(self, format, *args):
        pass


server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=ROOT)
)
if os.environ.get("TLS_CERT"):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ["TLS_CERT"], os.environ["TLS_KEY"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
