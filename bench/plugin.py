#!/usr/bin/python3
"""Plugin benchmark for `make bench`: what the QEMU plugin
(build/pmuos-pmu.so) costs a counting run, and how late the PMI of an event
it counts comes.

Cost: two cards, booted with PLUGIN=0 and PLUGIN=1, live side by side;
each program runs on CPU 1 of one card, then of the other (the order
alternating), ROUNDS times, while counter 0 counts INSTRUCTIONS_EXECUTED and
counter 1 a second event (with the plugin DATA_READ_MISS:u, one of its
events; without, CPU_CLK_UNHALTED:u). The card not running is stopped
(SIGSTOP) meanwhile, so the two never share the host's two cores. This
host's speed drifts by up to 2x over seconds (a virtual machine on shared
cores), so the slowdown is the median of each round's ratio of two runs
made back to back, not the ratio of medians from runs far apart. Per
program: the guest instructions the run executed (deterministic under
-icount shift=0), the median host wall time from the `run` line to the
task's exit status, guest instructions per wall second, and the slowdown,
against the target of at most 3x.

Skid: CODE_READ:u (one event per instruction) sampled every 100,000 events
on a loop with no system calls (memtest branches): each sample's counter
value is what the counter counted after the wrap before the PMI came, in
instructions. Without a kernel entry, the model notices a plugin counter's
wrap at its poll (pmu/model/backend.c: every 8,192 TSC ticks plus the Ring-3 slack
of 512 while a plugin event samples).

QEMU: the same cost on the QEMU pmuos runs beside Debian's own (issue 36's
choice of a QEMU base, docs/design.md §11). Figures, not verdicts: exits non-zero
only when a boot fails."""

import os
import re
import signal
import statistics
import sys
import time

from boot import PMUOS, PROMPT, BootFailed, Guest, on_card, report

ROUNDS = 21
PROGRAMS = ["triad 200000", "matmul 128", "chase 65536", "steady 2000", "memtest walk 4194304 8 2", "calib"]
QEMU_PROGRAMS = ["matmul 128", "memtest walk 4194304 8 2"]
QEMU_ROUNDS = 11
TARGET = 3.0
EXIT = re.compile(rb"exit status (\d+)\r?\n")
COUNT = re.compile(rb"^\s*1\s+0\s+\S+\s+(\d+)\s", re.M)
SAMPLE = re.compile(rb"^\d+\s+0x[0-9a-f]+\s+3\s+\d+\s+(\d+)\s", re.M)
PERIOD = 100000


class Card:
    """A booted card whose CPU 1 counts INSTRUCTIONS_EXECUTED and a second
    event, and runs programs on request."""

    def __init__(self, plugin, qemu=None):
        env = {"PLUGIN": "1" if plugin else "0", "CARD": f"bench{os.getpid()}p{int(plugin)}{'d' if qemu else ''}"}
        if qemu:
            env["QEMU"] = qemu
        self.g = Guest(PMUOS, 4, env)
        self.g.expect(PROMPT)
        self.g.shell(b"pmu set 1 0 INSTRUCTIONS_EXECUTED")
        self.g.shell(b"pmu set 1 1 " + (b"DATA_READ_MISS:u" if plugin else b"CPU_CLK_UNHALTED:u"))
        self.g.shell(b"pmu start 1")
        self.pause()

    def pause(self):
        os.kill(self.g.proc.pid, signal.SIGSTOP)

    def run(self, program):
        """(wall seconds from `run` to the exit status, guest instructions)."""
        os.kill(self.g.proc.pid, signal.SIGCONT)
        self.g.shell(b"pmu clear 1")
        start = time.monotonic()
        self.g.send(f"run {program} on 1\r".encode())
        _, seen = self.g.expect(EXIT)
        self.g.expect(PROMPT)
        self.g.send(b"pmu read 1\r")
        m, _ = self.g.expect(COUNT)
        self.g.expect(PROMPT)
        self.pause()
        return seen - start, int(m.group(1))


def costs(make, programs, rounds):
    """{program: {False: [...], True: [...]}}: (seconds, instructions) per round on the cards
    make(False) and make(True), run in turn; None if a boot fails."""
    cards = {}
    try:
        for k in (False, True):
            cards[k] = make(k)
        out = {p: {False: [], True: []} for p in programs}
        for p in programs:
            for r in range(rounds):
                for k in ((False, True) if r % 2 == 0 else (True, False)):
                    out[p][k].append(cards[k].run(p))
        return out
    except BootFailed as e:
        print(f"bench: {e}", file=sys.stderr)
        return None
    finally:
        for c in cards.values():
            os.kill(c.g.proc.pid, signal.SIGCONT)
            c.g.kill()


def skid():
    def dialogue(g):
        for line in (f"pmu set 1 0 CODE_READ:u period={PERIOD}".encode(), b"pmu spflt 1 off", b"pmu start 1"):
            g.shell(line)
        g.send(b"run memtest branches 2000000 on 1\r")
        g.expect(EXIT)
        g.expect(PROMPT)
        g.send(b"pmu samples 1 100\r")
        m, _ = g.expect(re.compile(rb"(?s)(.*?)\d+ samples shown"))
        return [int(x) for x in SAMPLE.findall(m.group(1))]
    return on_card(4, dialogue, {"PLUGIN": "1"})


def main():
    runs = costs(Card, PROGRAMS, ROUNDS)
    if runs is None:
        return 1
    rows = []
    for p in PROGRAMS:
        off = [t for t, _ in runs[p][False]]
        on = [t for t, _ in runs[p][True]]
        slowdown = statistics.median(b / a for a, b in zip(off, on))
        insns = runs[p][True][0][1]
        off_s, on_s = statistics.median(off), statistics.median(on)
        rows.append((p, insns, f"{off_s:.3f}", f"{on_s:.3f}", f"{insns / off_s / 1e6:.0f}", f"{insns / on_s / 1e6:.0f}",
                     f"{slowdown:.2f}x", "yes" if slowdown <= TARGET else "no"))
    report(["QEMU plugin cost (CPUS=4, -icount shift=0, program on CPU 1; counter 0 INSTRUCTIONS_EXECUTED,",
            "counter 1 DATA_READ_MISS:u with the plugin, CPU_CLK_UNHALTED:u without): host wall seconds",
            f"from `run` to the exit status, median of {ROUNDS} runs on each of two live cards, run in",
            "turn; guest instructions of the run (all levels, from counter 0); millions of them per",
            "wall second; slowdown: the median of the rounds' ratios."],
           [("program", 26), ("guest insns", 11), ("s, PLUGIN=0", 11), ("s, PLUGIN=1", 11),
            ("M/s off", 7), ("M/s on", 6), ("slowdown", 8), (f"<= {TARGET:.0f}x", 6)], rows)
    # The QEMU pmuos runs (scripts/build-qemu.sh) beside Debian's own, both with the plugin.
    qemus = costs(lambda debian: Card(True, "qemu-system-x86_64" if debian else None), QEMU_PROGRAMS, QEMU_ROUNDS)
    if qemus is None:
        return 1
    rows = []
    for p in QEMU_PROGRAMS:
        ours, debian = ([t for t, _ in qemus[p][k]] for k in (False, True))
        rows.append((p, f"{statistics.median(debian):.3f}", f"{statistics.median(ours):.3f}",
                     f"{statistics.median(b / a for a, b in zip(debian, ours)):.2f}x"))
    report(["The QEMU pmuos runs (Debian's 7.2 source rebuilt with scripts/qemu-fixes/, scripts/build-qemu.sh)",
            "beside Debian's own qemu-system-x86_64, both with the plugin, as above: host wall seconds, medians",
            f"of {QEMU_ROUNDS} runs on each of two live cards in turn; ratio: the median of the rounds' ratios."],
           [("program", 26), ("s, Debian's", 11), ("s, pmuos's", 10), ("ratio", 6)], rows)
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
