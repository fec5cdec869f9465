#!/usr/bin/env python3
"""Serves the git repositories under ROOT over smart HTTP on 127.0.0.1 through the real
`git http-backend` (CGI), optionally behind HTTP basic auth.

    git_http_server.py ROOT [USER PASSWORD]

With TLS_CERT and TLS_KEY (PEM files) in the environment it serves HTTPS.

Prints the port it listens on as the first line of stdout, then logs one line per request
(method, path, status) to stderr. Used by the integration tests only.
"""
import base64
import http.server
import os
import ssl
import subprocess
import sys

ROOT = sys.argv[1]
CREDENTIALS = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else None
BACKEND = os.path.join(
    subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip(),
    "git-http-backend",
)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def reply(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def serve(self):
        body = self.read_body()
        if CREDENTIALS:
            expected = "Basic " + base64.b64encode(("%s:%s" % CREDENTIALS).encode()).decode()
            if self.headers.get("Authorization") != expected:
                self.reply(401, [("WWW-Authenticate", 'Basic realm="git"')], b"unauthorized\n")
                return
        path, _, query = self.path.partition("?")
        env = {
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "REMOTE_USER": CREDENTIALS[0] if CREDENTIALS else "",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        if self.headers.get("Content-Encoding") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        output = subprocess.run([BACKEND], input=body, env=env, capture_output=True).stdout
        head, _, payload = output.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.reply(status, headers, payload)

    def log_message(self, format, *args):
        sys.stderr.write("%s\n" % (format % args))
        sys.stderr.flush()


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if os.environ.get("TLS_CERT"):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ["TLS_CERT"], os.environ["TLS_KEY"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
