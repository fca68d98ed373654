#!/usr/bin/python3
"""Call-chain benchmark for `make bench`: guest instructions the PMI's
frame-pointer walk (pmu/callchain.c, pmuctl record -g) adds to a sample.
On the model backend under -icount shift=0, with the other CPUs halted, a
TSC tick is a guest instruction: a program that times its own work with
RDTSC while INSTRUCTIONS_EXECUTED:u samples every PERIOD user instructions
takes its work's instructions plus every sample's kernel instructions. The
same run with call chains of 0 and of PMU_CALLCHAIN_MAX frames: the
difference over the samples is the walk's cost. Two programs:
user/programs/calls.c (chains of 3 to 4 frames, a real program's) and
badstack deep (64 valid frames: every walk goes the full 16, the most a
sample can cost). Exits non-zero only when a boot fails."""

import re
import sys

from boot import on_card, report, target

PERIOD = 10000
FRAMES = 16  # PMU_CALLCHAIN_MAX, include/pmuos/sample.h
RUNS = {"calls": (b"run calls 1000000", re.compile(rb"in (\d+) TSC ticks\r?\n"), 20_000_000),
        "badstack deep": (b"run badstack deep 2000000", re.compile(rb"deep (\d+) ticks\r?\n"), 4_000_000)}
# Guest instructions a chain may add to a sample: two thirds of what a sample
# costs without one (1,443-1,500, bench/drain.py's and this figure), so that
# record -g less than doubles the PMI's cost even for a chain as long as it gets.
TARGET = 1000


def dialogue(g):
    g.shell(b"pmu set 1 0 INSTRUCTIONS_EXECUTED:u period=%d" % PERIOD)
    ticks = {}
    for name, (cmd, pattern, _) in RUNS.items():
        for frames in (0, FRAMES):
            g.shell(b"pmu callchain 1 %d" % frames)
            g.shell(b"pmu clear 1")
            g.shell(b"pmu start 1")
            ticks[name, frames] = int(g.ask(cmd, pattern).group(1))
            g.shell(b"pmu stop 1")
    return ticks


def main():
    ticks = on_card(4, dialogue)
    if ticks is None:
        return 1
    rows = []
    for name, (_, _, work) in RUNS.items():
        samples = work // PERIOD
        base = (ticks[name, 0] - work) / samples
        walk = (ticks[name, FRAMES] - ticks[name, 0]) / samples
        rows.append((f"{name}: a sample without a chain", f"{base:,.0f}", ""))
        rows.append((f"{name}: what the chain adds", f"{walk:,.0f}", target(round(walk), TARGET)))
    report(["Call chains (pmuctl record -g) on the model backend (CPUS=4, -icount shift=0, task on CPU 1):",
            f"guest instructions per sample (INSTRUCTIONS_EXECUTED:u every {PERIOD:,}), from the program's",
            "own TSC ticks less its work; chains of 0 and 16 frames (calls: 3-4 real frames; badstack",
            "deep: 64 frames, the walk stops at 16)."],
           [("what", 44), ("instructions", 12), ("target", 30)], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
