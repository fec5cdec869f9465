#!/usr/bin/env python3
"""stdin -> stdout, each line in the CRI log format a kubelet writes and kwok reads
(`<RFC 3339 time> stdout F <line>`), flushed per line: the operator's container log."""
import datetime
import sys

for line in sys.stdin.buffer:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    sys.stdout.buffer.write(stamp.encode() + b" stdout F " + line.rstrip(b"\n") + b"\n")
    sys.stdout.buffer.flush()
