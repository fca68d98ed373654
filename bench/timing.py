#!/usr/bin/python3
"""The plugin's KNC timing model (plugin/timing.h, docs/design.md §11) for
`make bench`: its figures beside the published ones, and what it costs.

Latency: a pointer chase (chase N: 4N dependent loads through N slots of 8
bytes) resident in the L1 (8 KiB), the L2 (256 KiB) and memory (8 MiB), on
CPU 5 of an 8-CPU card: cycles per load, and over the L1 chase per load that
missed (the L1's own cycle added back), beside Intel 671479's ranges (L2
15-30, GDDR 500-1000 cycles) and John McCalpin's 23.4 cycles for the L2
(SE10P, scalar pointer chasing; Intel's MIC forum, topic 499156).

Issue: pipes chain (64 dependent ADDs and DEC/JNZ per iteration) on 1-4
threads of core 1 at once and on CPUs 1 and 5 (two cores): each thread's
CPI and the core's combined IPC beside the rule the sources state (one
thread issues at most every other cycle, Intel 328207-002 §2.1; n threads
of a core share its issue turns).

Bandwidth of one core: memtest's read walk with a 64-byte stride (one read
per line) over 256 KiB 16 times (kept in the caches from its fill) and over
4 MiB once (evicted first: from memory): bytes per cycle, beside McCalpin's measured
single-core L2 read rate (about 23 GB/s at 1.1 GHz, 3.06 cycles per line,
the same forum thread). The model serializes misses (no prefetcher, no
misses in flight together), so its streams are latency-bound: the figure
shows by how much.

Cost: the model runs only while a counter counts one of its events. On one
card, the same run counted with cycles:u (the model on) and with
DATA_READ_MISS:u (off; the caches are simulated either way), in turn,
ROUNDS times: host wall seconds of each, medians, and the median of the
rounds' ratios, against the issue's bound of 1.25x. Figures, not verdicts:
exits non-zero only when a run fails."""

import os
import re
import statistics
import subprocess
import sys
import time

from boot import BUILD, report, with_host_card

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")
ROUNDS = int(os.environ.get("ROUNDS", "9"))
REGION = re.compile(r"^CPU(\d+),([a-z_]+),(\d+),,([A-Za-z0-9_]+:[uk]+)$", re.M)


def stat(card, cpus, events, program):
    """({cpu: {event: count}} of the program's region, host wall seconds)."""
    start = time.monotonic()
    p = subprocess.run([PMUCTL, "--card", card, "stat", "-A", "-C", cpus, "-x,", "-e", events, "--"] + program,
                       capture_output=True, text=True, timeout=1200)
    secs = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"timing: pmuctl stat {' '.join(program)} failed: {p.stdout}{p.stderr}")
    counts = {}
    for m in REGION.finditer(p.stderr):
        counts.setdefault(int(m[1]), {})[m[4]] = int(m[3])
    return counts, secs


def spflt(card, events, program):
    """{event: count} of memtest's SPFLT-gated region on CPU 5 (`stat --spflt`)."""
    p = subprocess.run([PMUCTL, "--card", card, "stat", "--spflt", "-C", "5", "-x,", "-e", events, "--"] + program,
                       capture_output=True, text=True, timeout=1200)
    counts = {m[2]: int(m[1]) for m in re.finditer(r"^(\d+),,([A-Za-z0-9_]+:[uk]+),", p.stderr, re.M)}
    if p.returncode != 0 or len(counts) != len(events.split(",")):
        sys.exit(f"timing: pmuctl stat --spflt {' '.join(program)} failed: {p.stdout}{p.stderr}")
    return counts


def chase(card, slots):
    a, _ = stat(card, "5", "cycles:u,DATA_READ_MISS:u", [os.path.join(USER, "chase.elf"), str(slots)])
    b, _ = stat(card, "5", "L2_DATA_READ_MISS_MEM_FILL:u,DATA_READ:u", [os.path.join(USER, "chase.elf"), str(slots)])
    return a[5]["cycles:u"], b[5]["DATA_READ:u"], a[5]["DATA_READ_MISS:u"], b[5]["L2_DATA_READ_MISS_MEM_FILL:u"]


def latency_rows(card):
    c1, n1, _, _ = chase(card, 1024)
    c2, n2, m2, f2 = chase(card, 32768)
    c3, n3, m3, f3 = chase(card, 1 << 20)
    base = c1 / n1
    l2 = (c2 - base * n2) / m2 + 1
    mem = (c3 - base * n3 - 23 * (m3 - f3)) / f3 + 1
    return [
        ("L1 (8 KiB)", f"{base:.2f}", "-", "-", "1 (Intel 671479)", "-"),
        ("L2 (256 KiB)", f"{c2 / n2:.2f}", f"{m2 / n2 * 100:.1f}", f"{l2:.1f}", "15-30 (Intel 671479); 23.4 (McCalpin)",
         f"{(l2 - 23.4) / 23.4 * 100:+.1f}% of 23.4"),
        ("memory (8 MiB)", f"{c3 / n3:.2f}", f"{f3 / n3 * 100:.1f}", f"{mem:.1f}", "500-1000 (Intel 671479)",
         f"{(mem - 500) / 500 * 100:+.1f}% of 500, its low end"),
    ]


def issue_rows(card):
    rows = []
    for cpus, n in (("5", 1), ("4-5", 2), ("4-6", 3), ("4-7", 4), ("1,5", 1)):
        one, _ = stat(card, cpus, "cycles:u,instructions:u", [os.path.join(USER, "pipes.elf"), "chain", "20000"])
        two, _ = stat(card, cpus, "cycles:u,instructions:u", [os.path.join(USER, "pipes.elf"), "chain", "40000"])
        cpi = {c: (two[c]["cycles:u"] - one[c]["cycles:u"]) / (two[c]["instructions:u"] - one[c]["instructions:u"])
               for c in two}
        ipc = sum(1 / v for v in cpi.values()) if n > 1 else 1 / next(iter(cpi.values()))
        rule = max(2, n) * 65 / 66
        rows.append((cpus, n, " ".join(f"{v:.3f}" for v in cpi.values()), f"{rule:.3f}",
                     f"{ipc:.3f}", f"{n / max(2, n) * 66 / 65:.3f}" if cpus != "1,5" else "two cores"))
    return rows


def bandwidth_rows(card):
    rows = []
    for name, args, published in (("L2-resident, 256 KiB x 16", ["262144", "64", "16", "keep"], 64 / 3.062),
                                  ("memory, 4 MiB x 1", ["4194304", "64", "1"], None)):
        c = spflt(card, "cycles:u,DATA_READ:u", [os.path.join(USER, "memtest.elf"), "walk"] + args)
        lines = c["DATA_READ:u"]
        bpc = 64 * lines / c["cycles:u"]
        rows.append((name, f"{c['cycles:u'] / lines:.1f}", f"{bpc:.2f}",
                     f"{published:.1f} (McCalpin)" if published else "none found",
                     f"{(bpc - published) / published * 100:+.0f}%" if published else "-"))
    return rows


def cost_rows(card):
    rows = []
    for name, program in (("matmul 256", ["matmul.elf", "256"]), ("4 MiB walk", ["memtest.elf", "walk", "4194304", "8", "2"])):
        runs = {True: [], False: []}
        for r in range(ROUNDS):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                events = "cycles:u" if on else "DATA_READ_MISS:u"
                _, secs = stat(card, "1", events, [os.path.join(USER, program[0])] + program[1:])
                runs[on].append(secs)
        ratio = statistics.median(a / b for a, b in zip(runs[True], runs[False]))
        rows.append((name, f"{statistics.median(runs[False]):.3f}", f"{statistics.median(runs[True]):.3f}",
                     f"{ratio:.2f}x", "yes" if ratio <= 1.25 else "no"))
    return rows


def main():
    lat, iss, bw, cost = with_host_card("timing", 8, lambda card: (latency_rows(card), issue_rows(card),
                                                                   bandwidth_rows(card), cost_rows(card)))
    report(["Pointer chase on CPU 5, the model's cycles (plugin/timing.h) beside the published latencies:",
            "cycles per load; the share of loads that missed the L1 (L2 row) or the L2 (memory row); the",
            "latency per such load (the cycles over the L1 chase's, per miss, plus the L1's own cycle)."],
           [("resident in", 14), ("cycles/load", 11), ("missed %", 8), ("latency", 7), ("published", 38),
            ("model vs published", 25)], lat)
    report(["pipes chain (66 instructions, 65 issue groups per iteration) on n threads at once: each thread's",
            "CPI (runs of 20,000 and 40,000 iterations, differenced), the rule's (max(2, n) x 65/66), the",
            "core's combined IPC and the rule's."],
           [("CPUs", 4), ("n", 1), ("CPI per thread", 27), ("rule", 5), ("core IPC", 8), ("rule", 9)], iss)
    report(["One core's read stream (memtest walk, one read per 64-byte line) on CPU 5: cycles per line and",
            "bytes per cycle beside McCalpin's measured L2 read rate (64 bytes per 3.062 cycles). The model",
            "takes each miss's full latency, one at a time: latency-bound where the card overlaps misses."],
           [("stream", 26), ("cycles/line", 11), ("bytes/cycle", 11), ("published", 17), ("model vs", 8)], bw)
    report(["The model's cost: host wall seconds of `pmuctl stat` of the program on CPU 1, counted with",
            "cycles:u (the model runs) and with DATA_READ_MISS:u (it does not; the caches run either way),",
            f"in turn, {ROUNDS} rounds on one card: medians, and the median of the rounds' ratios."],
           [("program", 11), ("s, model off", 12), ("s, model on", 11), ("ratio", 6), ("<= 1.25x", 8)], cost)
    return 0


if __name__ == "__main__":
    sys.exit(main())
