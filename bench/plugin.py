#!/usr/bin/python3
"""Plugin benchmark for `make bench`: what the QEMU plugin
(build/pmuos-pmu.so) costs a counting run, and how late the PMI of an event
it counts comes.

Cost: cards booted with PLUGIN=0 and PLUGIN=1, alternately (3 rounds, so
load drifts hit both alike), run the same programs on CPU 1 while counter 0
counts INSTRUCTIONS_EXECUTED and counter 1 a second event (with the plugin
DATA_READ_MISS:u, one of its events; without, CPU_CLK_UNHALTED:u). Per
program: the guest instructions the run executed (deterministic under
-icount shift=0), the median host wall time from the `run` line to the
task's exit status, guest instructions per wall second, and the slowdown,
against the target of at most 3x.

Skid: CODE_READ:u (one event per instruction) sampled every 100,000 events
on a loop with no system calls (memtest branches): each sample's counter
value is what the counter counted after the wrap before the PMI came, in
instructions. Without a kernel entry, the model notices a plugin counter's
wrap at its poll (pmu/model.c: every 8,192 TSC ticks plus the Ring-3 slack
of 512 while a plugin event samples). Figures, not verdicts: exits non-zero
only when a boot fails."""

import re
import statistics
import sys
import time

from boot import PROMPT, on_card, report

ROUNDS = 3
PROGRAMS = ["triad 200000", "matmul 128", "chase 65536", "steady 2000", "memtest walk 4194304 8 2", "calib"]
TARGET = 3.0
EXIT = re.compile(rb"exit status (\d+)\r?\n")
COUNT = re.compile(rb"^\s*1\s+0\s+\S+\s+(\d+)\s", re.M)
SAMPLE = re.compile(rb"^\d+\s+0x[0-9a-f]+\s+3\s+\d+\s+(\d+)\s", re.M)
PERIOD = 100000


def cmd(g, line):
    g.send(line + b"\r")
    return g.expect(PROMPT)[0]


def costs(plugin):
    def dialogue(g):
        cmd(g, b"pmu set 1 0 INSTRUCTIONS_EXECUTED")
        cmd(g, b"pmu set 1 1 " + (b"DATA_READ_MISS:u" if plugin else b"CPU_CLK_UNHALTED:u"))
        cmd(g, b"pmu start 1")
        out = {}
        for p in PROGRAMS:
            cmd(g, b"pmu clear 1")
            start = time.monotonic()
            g.send(f"run {p} on 1\r".encode())
            _, seen = g.expect(EXIT)
            g.expect(PROMPT)
            g.send(b"pmu read 1\r")
            m, _ = g.expect(COUNT)
            g.expect(PROMPT)
            out[p] = (seen - start, int(m.group(1)))
        return out
    return on_card(4, dialogue, {"PLUGIN": "1" if plugin else "0"})


def skid():
    def dialogue(g):
        for line in (f"pmu set 1 0 CODE_READ:u period={PERIOD}".encode(), b"pmu spflt 1 off", b"pmu start 1"):
            cmd(g, line)
        g.send(b"run memtest branches 2000000 on 1\r")
        g.expect(EXIT)
        g.expect(PROMPT)
        g.send(b"pmu samples 1 100\r")
        m, _ = g.expect(re.compile(rb"(?s)(.*?)\d+ samples shown"))
        return [int(x) for x in SAMPLE.findall(m.group(1))]
    return on_card(4, dialogue, {"PLUGIN": "1"})


def main():
    runs = {False: [], True: []}
    for r in range(ROUNDS):
        for plugin in ((False, True) if r % 2 == 0 else (True, False)):
            result = costs(plugin)
            if result is None:
                return 1
            runs[plugin].append(result)
    rows = []
    for p in PROGRAMS:
        off = statistics.median(run[p][0] for run in runs[False])
        on = statistics.median(run[p][0] for run in runs[True])
        insns = runs[True][0][p][1]
        rows.append((p, insns, f"{off:.3f}", f"{on:.3f}", f"{insns / off / 1e6:.0f}", f"{insns / on / 1e6:.0f}",
                     f"{on / off:.2f}x", "yes" if on / off <= TARGET else "no"))
    report(["QEMU plugin cost (CPUS=4, -icount shift=0, program on CPU 1; counter 0 INSTRUCTIONS_EXECUTED,",
            "counter 1 DATA_READ_MISS:u with the plugin, CPU_CLK_UNHALTED:u without): host wall seconds",
            f"from `run` to the exit status, median of {ROUNDS} cards each way, booted alternately; guest",
            "instructions of the run (all levels, from counter 0); millions of them per wall second."],
           [("program", 26), ("guest insns", 11), ("s, PLUGIN=0", 11), ("s, PLUGIN=1", 11),
            ("M/s off", 7), ("M/s on", 6), ("slowdown", 8), (f"<= {TARGET:.0f}x", 6)], rows)
    skids = skid()
    if skids is None:
        return 1
    report([f"Skid of a plugin event's PMI: CODE_READ:u sampled every {PERIOD} events in a loop without system",
            "calls (memtest branches 2000000); instructions counted after the wrap before the PMI, over",
            f"{len(skids)} samples; bound: the model's poll, 8192 TSC ticks + 512 (Ring-3 slack)."],
           [("samples", 7), ("median", 6), ("max", 6), ("min", 6)],
           [(len(skids), int(statistics.median(skids)), max(skids), min(skids))] if skids else [(0, "-", "-", "-")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
