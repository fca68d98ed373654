#!/usr/bin/python3
"""Full-card benchmark for `make bench` (issue 23.10): on one 244-thread card, the wall
time of `pmuctl run -C 1-243 hello` beside `pmuctl run -C 1-63 hello` (medians of
RUNS, interleaved so host load drifts hit both alike), and what bounds it. Exits
non-zero only when the boot fails (a run that fails is reported as such)."""

import os
import statistics
import subprocess
import sys
import time

from boot import BUILD, on_card, report

CPUS = 244
RUNS = 3
SETS = ("1-63", "1-243")
HELLO = os.path.join(BUILD, "user", "hello.elf")


def run(card, cpus):
    """Wall seconds of one `pmuctl run -C cpus hello`, or None if it failed (said on stderr)."""
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card, "run", "-C", cpus, HELLO],
                       capture_output=True, text=True, timeout=1800)
    s = time.monotonic() - t0
    if p.returncode != 0:
        print(f"bench: pmuctl run -C {cpus} hello failed after {s:.1f} s: {p.stderr.strip()}", file=sys.stderr)
        return None
    return s


def dialogue(g):
    times = {s: [] for s in SETS}
    for i in range(RUNS):
        for s in SETS if i % 2 == 0 else reversed(SETS):
            times[s].append(run(g.card, s))
    return times


def main():
    # PLUGIN=0, as tests/system/test_full_card.py: the 244-thread card boots in ~80 s with the plugin.
    times = on_card(CPUS, dialogue, env={"PLUGIN": "0"})
    if times is None:
        return 1
    rows = []
    for s in SETS:
        ok = [t for t in times[s] if t is not None]
        n = int(s.split("-")[1])
        med = statistics.median(ok) if ok else None
        rows.append((f"run -C {s} hello ({n} tasks)", f"{len(ok)} of {RUNS}",
                     f"{med:.1f}" if med else "-", f"{med / n * 1000:.0f}" if med else "-"))
    report([f"A full card (CPUS={CPUS}, -icount shift=0, PLUGIN=0, same card): `pmuctl run` of hello on 63 and 243",
            f"application threads, wall time from pmuctl's start to its exit, medians of {RUNS}."],
           [("what", 34), ("ran", 8), ("median s", 9), ("ms per task", 11)], rows)
    print()
    print("What bounds it: the card's work is serial on the serving CPU (RUN loads the read-only text once")
    print("per launch and builds one address space per CPU, ~205 K guest instructions each for hello, most")
    print("of it zeroing the 1 MiB stack), and QEMU runs every vCPU in turn on one host thread: under -icount")
    print("each turn of a running vCPU is the time to the next timer (at most 100 us, the PIT's 10 kHz while tasks")
    print(f"run, which keeps the serving CPU's turns coming) divided by the vCPU count, so one busy vCPU among {CPUS} gets")
    print(f"~200-400 instructions per round of {CPUS} vCPU visits (halted ones included): its rate falls as")
    print("1/N^2 with N vCPUs.")
    print("Before the launch's tasks shared one text, each had a copy of the code, and pages that had held")
    print("code, reused later, made QEMU flush every vCPU's jump cache per block translated from them: a")
    print("second 243-task launch took 110-336 s (docs/design.md §6).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
