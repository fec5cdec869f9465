#!/usr/bin/env python3
"""Serves the git repositories under ROOT over SSH on 127.0.0.1 (asyncssh as the server,
the real `git-upload-pack` behind it), for fetches only.

    git_ssh_server.py ROOT HOST_KEY AUTHORIZED_KEYS

HOST_KEY is the server's private key file, AUTHORIZED_KEYS the public keys allowed in.
Prints the port it listens on as the first line of stdout, then logs one line per
connection and command to stderr. Used by the tests only (asyncssh comes from a venv).
"""
import asyncio
import os
import shlex
import sys

import asyncssh

ROOT = os.path.abspath(sys.argv[1])
HOST_KEY = sys.argv[2]
AUTHORIZED_KEYS = sys.argv[3]


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


async def serve(process):
    command = process.command or ""
    words = shlex.split(command)
    log("exec %s" % command)
    if len(words) != 2 or words[0] != "git-upload-pack":
        process.stderr.write(b"only git-upload-pack is served\n")
        process.exit(1)
        return
    path = os.path.normpath(os.path.join(ROOT, words[1].lstrip("/")))
    if not path.startswith(ROOT + os.sep):
        process.stderr.write(b"no such repository\n")
        process.exit(1)
        return
    upload = await asyncio.create_subprocess_exec(
        "git-upload-pack", path,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )
    await process.redirect(stdin=upload.stdin, stdout=upload.stdout)
    process.exit(await upload.wait())


class Server(asyncssh.SSHServer):
    def connection_made(self, connection):
        log("connection from %s" % (connection.get_extra_info("peername")[0],))

    def begin_auth(self, username):
        log("auth %s" % username)
        return True


async def main():
    server = await asyncssh.create_server(
        Server, "127.0.0.1", 0,
        server_host_keys=[HOST_KEY],
        authorized_client_keys=AUTHORIZED_KEYS,
        process_factory=serve,
        encoding=None,
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Future()


asyncio.run(main())
