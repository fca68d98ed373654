#!/usr/bin/python3
"""Mailbox benchmark for `make bench`: the round-trip latency of an `info`
request through the mailbox (pmuctl ping: median and p99 of 500), beside the
same kind of query through the serial shell (`version`, until the next
prompt), measured in the same run on the same card. Wall time on the host.
Exits non-zero only when a boot fails."""

import os
import re
import statistics
import subprocess
import sys
import time

from boot import BUILD, PROMPT, on_card, report

RUNS = 200


def dialogue(g):
    serial = []
    for _ in range(RUNS):
        t0 = time.monotonic()
        g.send(b"version\r")
        g.expect(PROMPT)
        serial.append((time.monotonic() - t0) * 1e6)
    card = f"bench{os.getpid()}"
    out = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card, "ping", "500"],
                         capture_output=True, text=True, timeout=300)
    m = re.search(r"median ([\d.]+) us, p99 ([\d.]+) us", out.stdout)
    if not m:
        raise RuntimeError(out.stderr)
    serial.sort()
    return statistics.median(serial), serial[int(len(serial) * 0.99)], float(m[1]), float(m[2])


def main():
    result = on_card(4, dialogue)
    if result is None:
        return 1
    s_med, s_p99, m_med, m_p99 = result
    report(["Host <-> card round trip, wall time (CPUS=4, -icount shift=0): an info request through",
            f"the mailbox (500 calls) beside a `version` line through the serial shell ({RUNS} lines)."],
           [("path", 22), ("median us", 10), ("p99 us", 10)],
           [("mailbox (pmuctl)", f"{m_med:.1f}", f"{m_p99:.1f}"), ("serial shell", f"{s_med:.1f}", f"{s_p99:.1f}")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
