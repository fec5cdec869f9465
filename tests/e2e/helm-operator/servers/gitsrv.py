#!/usr/bin/env python3
"""The suite's git server: what fluxcd/gitsrv:v1.0.0 did in the suite's `gitsrv` pod, as a
plain process (asyncssh from target/ssh-venv, `make ssh-server`; the real `git-upload-pack`
and `git-receive-pack` behind it). Used by tests/e2e/helm-operator (see its README.md).

    gitsrv.py --listen ADDRESS:PORT --host-key FILE ... --template DIR --state DIR

- Serves `/git-server/repos/<name>` for fetches and pushes (gitsrv's path; the suite and its
  HelmReleases use ssh://git@gitsrv/git-server/repos/cluster.git), as user `git` only.
- Lets in the public keys gitsrv let in: every `*.pub` of the Secret `flux-git-deploy`
  (E2E_NAMESPACE) that its pod mounted at /git-server/keys, read at each connection (the
  suite makes a new key pair in every test's setup).
- Answers only while a Ready pod labelled name=gitsrv exists (its Service); otherwise the
  connection is closed at once. Each new pod starts from --template (the repositories as
  gitsrv's start-up seeds them from TAR_URL: the podinfo 3.2.0 tree committed as `init` on
  master, `dummy` checked out so pushes to master are accepted), copied to
  --state/<pod uid>/: the pod's emptyDir.

Prints `ready` once listening, then logs one line per connection and command to stderr.
"""
import argparse
import asyncio
import os
import shlex
import shutil
import sys
import threading

import asyncssh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from podgate import PodGate, secret_files  # noqa: E402

NAMESPACE = os.environ.get("E2E_NAMESPACE", "helm-operator-e2e")
PREFIX = "/git-server/repos/"
SERVED = ("git-upload-pack", "git-receive-pack")

args = None
gate = PodGate(NAMESPACE, "name=gitsrv")
seed_lock = threading.Lock()


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def pod_repos(uid):
    """The repositories folder of pod `uid`, seeded from the template on first use."""
    root = os.path.join(args.state, uid)
    with seed_lock:
        if not os.path.isdir(root):
            shutil.copytree(args.template, root + ".partial", symlinks=True)
            os.rename(root + ".partial", root)
            log("pod %s: repositories seeded" % uid)
    return root


def authorized_keys():
    files = secret_files(NAMESPACE, "flux-git-deploy") or {}
    return b"".join(v.rstrip(b"\n") + b"\n" for k, v in sorted(files.items()) if k.endswith(".pub"))


class Server(asyncssh.SSHServer):
    def connection_made(self, connection):
        self.connection = connection
        log("connection from %s" % (connection.get_extra_info("peername")[0],))

    async def begin_auth(self, username):
        uid = await asyncio.to_thread(gate.current)
        if uid is None:
            log("no Ready gitsrv pod: connection closed")
            self.connection.close()
            return True
        keys = await asyncio.to_thread(authorized_keys)
        if username == "git" and keys:
            self.connection.set_authorized_keys(asyncssh.import_authorized_keys(keys.decode()))
        log("auth %s (%d keys from secret flux-git-deploy)" % (username, keys.count(b"\n")))
        return True


async def serve(process):
    command = process.command or ""
    log("exec %s" % command)
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    if len(words) != 2 or words[0] not in SERVED or not words[1].startswith(PREFIX):
        process.stderr.write(b"fatal: only git-upload-pack and git-receive-pack of %s* are served\n" % PREFIX.encode())
        process.exit(128)
        return
    uid = await asyncio.to_thread(gate.current)
    if uid is None:
        process.stderr.write(b"fatal: the gitsrv pod is gone\n")
        process.exit(128)
        return
    root = await asyncio.to_thread(pod_repos, uid)
    path = os.path.normpath(os.path.join(root, words[1][len(PREFIX):]))
    if not path.startswith(root + os.sep) or not os.path.isdir(path):
        process.stderr.write(b"fatal: '%s' does not appear to be a git repository\n" % words[1].encode())
        process.exit(128)
        return
    git = await asyncio.create_subprocess_exec(
        words[0], path,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await process.redirect(stdin=git.stdin, stdout=git.stdout, stderr=git.stderr)
    process.exit(await git.wait())


async def main():
    host, _, port = args.listen.rpartition(":")
    await asyncssh.create_server(
        Server, host, int(port),
        server_host_keys=args.host_key,
        process_factory=serve,
        encoding=None,
    )
    print("ready", flush=True)
    await asyncio.Future()


parser = argparse.ArgumentParser()
parser.add_argument("--listen", required=True)
parser.add_argument("--host-key", action="append", required=True)
parser.add_argument("--template", required=True)
parser.add_argument("--state", required=True)
args = parser.parse_args()
os.makedirs(args.state, exist_ok=True)
asyncio.run(main())
