#!/usr/bin/python3
"""PMI-path benchmark for `make bench`: guest instructions one counter
overflow costs the interrupted thread, from the card's `pmu bench` (see
pmu/bench.c), for a counting and for a sampling overflow. Under -icount
shift=0 with the other CPUs halted, TSC ticks are guest instructions, so
the figures are deterministic. Exits non-zero only when a boot fails."""

import re
import sys

from boot import PMUOS, BootFailed, Guest

LINE = re.compile(rb"(counting|sampling) overflow: (\d+) instructions in all, "
                  rb"model overflow timer (\d+), PMI path \(vector entry to iret\) (\d+)")
LOOP = re.compile(rb"loop without overflow: (\d+) ticks")


def main():
    g = Guest(PMUOS, 4)
    try:
        g.expect(re.compile(rb"pmuos> "))
        g.send(b"pmu bench\r")
        base = int(g.expect(LOOP)[0].group(1))
        rows = [g.expect(LINE)[0].groups() for _ in range(2)]
    except BootFailed as e:
        print(g.failure(e), file=sys.stderr)
        return 1
    finally:
        g.kill()
    print()
    print("PMI path on the model backend, CPUS=4, -icount shift=0: guest instructions one overflow")
    print("adds to a 10^6-instruction kernel loop (median of 3 runs each; the loop alone took")
    print(f"{base} ticks). The model's overflow timer, measured with LVT 0x340 masked, is not PMI path;")
    print("the self-IPI by which the model delivers the PMI (what the APIC does in hardware) is in it.")
    print()
    head = f"{'overflow':>9} | {'PMI path: vector entry to iret':>30} | {'model overflow timer':>20} | {'total':>7}"
    print(head)
    print("-" * len(head))
    for kind, total, timer, pmi in rows:
        print(f"{kind.decode():>9} | {int(pmi):>30} | {int(timer):>20} | {int(total):>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
