#!/usr/bin/python3
"""PMI-path benchmark for `make bench`: guest instructions one counter
overflow costs the interrupted thread, from the card's `pmu bench` (see
pmu/bench.c), for a counting and for a sampling overflow. Under -icount
shift=0 with the other CPUs halted, TSC ticks are guest instructions, so
the figures are deterministic. Exits non-zero only when a boot fails."""

import re
import sys

from boot import on_card, report

LINE = re.compile(rb"(counting|sampling) overflow: (\d+) instructions in all, "
                  rb"model overflow timer (\d+), PMI path \(vector entry to iret\) (\d+)\r?\n")
LOOP = re.compile(rb"loop without overflow: (\d+) ticks")


def dialogue(g):
    g.send(b"pmu bench\r")
    base = int(g.expect(LOOP)[0].group(1))
    return base, [g.expect(LINE)[0].groups() for _ in range(2)]


def main():
    result = on_card(4, dialogue)
    if result is None:
        return 1
    base, rows = result
    report(["PMI path on the model backend, CPUS=4, -icount shift=0: guest instructions one overflow",
            "adds to a 10^6-instruction kernel loop (median of 3 runs each; the loop alone took",
            f"{base} ticks). The model's overflow timer, measured with LVT 0x340 masked, is not PMI path;",
            "the self-IPI by which the model delivers the PMI (what the APIC does in hardware) is in it."],
           [("overflow", 9), ("PMI path: vector entry to iret", 30), ("model overflow timer", 20), ("total", 7)],
           [(kind.decode(), int(pmi), int(timer), int(total)) for kind, total, timer, pmi in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
