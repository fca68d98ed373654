#!/usr/bin/python3
"""Mailbox benchmark for `make bench`: the round trip of an `info` request
through the mailbox (pmuctl ping: median and p99 of 500) with the doorbell
(scripts/qemu.sh's ivshmem-doorbell), beside the same kind of query through
the serial shell (`version`, until the next prompt) on the same card, beside
issue 12's target, and beside the same round trip with the doorbell off
(DOORBELL=0: ivshmem-plain, the card polls every 100 us), the baseline, in
the same run. Then what waking a halted card costs: round trips 5 ms apart
(every card CPU halts in between), the guest instructions from the ring's
interrupt to the card's ring back (TSC ticks under -icount shift=0, as the
card reports them), and how far the card's clock moves against the host's
while it is halted. Wall time on the host. Exits non-zero only when a boot
fails."""

import os
import re
import statistics
import subprocess
import sys
import time

from boot import BUILD, PROMPT, on_card, report, target

RUNS = 200
PINGS = 500
GAP_PINGS, GAP_MS = 100, 5
TARGET_MEDIAN_US, TARGET_P99_US = 30, 100  # issue 12
UPTIME = re.compile(rb"\(([0-9]+) TSC ticks at ([0-9]+) Hz since kernel entry\)")


def pmuctl(*args):
    out = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", f"bench{os.getpid()}", *args],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout


def ping(*args):
    m = re.search(r"median ([\d.]+) us, p99 ([\d.]+) us", pmuctl("ping", *args))
    return float(m[1]), float(m[2])


def card_seconds(g):
    """The card's clock (TSC, virtual time under -icount) and the host's, read together."""
    g.send(b"uptime\r")
    m, seen = g.expect(UPTIME)
    g.expect(PROMPT)
    return int(m[1]) / int(m[2]), seen


def with_doorbell(g):
    serial = []
    for _ in range(RUNS):
        t0 = time.monotonic()
        g.send(b"version\r")
        g.expect(PROMPT)
        serial.append((time.monotonic() - t0) * 1e6)
    serial.sort()
    back_to_back = ping(str(PINGS))
    card0, host0 = card_seconds(g)
    halted = ping(str(GAP_PINGS), str(GAP_MS))
    card1, host1 = card_seconds(g)
    ticks = int(re.search(r"the last answered (\d+) TSC ticks", pmuctl("info"))[1])
    return ((statistics.median(serial), serial[int(len(serial) * 0.99)]), back_to_back, halted, ticks,
            (card1 - card0) / (host1 - host0))


def without_doorbell(g):
    return ping(str(PINGS)), ping(str(GAP_PINGS), str(GAP_MS))


def main():
    on = on_card(4, with_doorbell)
    off = on_card(4, without_doorbell, env={"DOORBELL": "0"})
    if on is None or off is None:
        return 1
    serial, b2b, halted, ticks, clock = on
    off_b2b, off_halted = off
    report(["Host <-> card round trip, wall time (CPUS=4, -icount shift=0): an info request through",
            f"the mailbox ({PINGS} calls back to back; {GAP_PINGS} calls {GAP_MS} ms apart, every card CPU",
            f"halted in between) beside a `version` line through the serial shell ({RUNS} lines),",
            "with the doorbell (ivshmem-doorbell) and without it (DOORBELL=0, the card polls), same run."],
           [("path", 34), ("median us", 10), ("p99 us", 10), ("target median", 30), ("target p99", 30)],
           [("mailbox, doorbell", f"{b2b[0]:.1f}", f"{b2b[1]:.1f}", target(round(b2b[0], 1), TARGET_MEDIAN_US),
             target(round(b2b[1], 1), TARGET_P99_US)),
            ("mailbox, doorbell, card halted", f"{halted[0]:.1f}", f"{halted[1]:.1f}", "", ""),
            ("mailbox, no doorbell (baseline)", f"{off_b2b[0]:.1f}", f"{off_b2b[1]:.1f}", "", ""),
            ("mailbox, no doorbell, card halted", f"{off_halted[0]:.1f}", f"{off_halted[1]:.1f}", "", ""),
            ("serial shell", f"{serial[0]:.1f}", f"{serial[1]:.1f}", "", "")])
    print()
    print(f"A halted card's wake-up: {ticks:,} guest instructions (TSC ticks) of the card's time from the ring's")
    print(f"interrupt to its ring back (the last round trip). While its CPUs were halted its clock ran {clock:.3f} s")
    print("per host second (-icount sleep=on: QEMU moves a halted card's clock on to its next timer as host time")
    print("passes); the rest of a halted round trip is the host's: QEMU's main loop taking the ring, the vCPU")
    print("thread woken to run, pmuctl woken by the card's ring.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
