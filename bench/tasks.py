#!/usr/bin/python3
"""Ring-3 benchmark for `make bench`: on the model backend under -icount
shift=0, the kernel instructions one emulated RDPMC and one emulated SPFLT
take (counted by INSTRUCTIONS_EXECUTED:k on the task's CPU), and the user
instructions an empty SPFLT-bracketed region adds to a USR count (the goal
is 0). Deterministic figures from user/programs/calib.c. Exits non-zero
only when a boot fails."""

import re
import sys

from boot import on_card, report, target

# Each pattern ends at the line's end, so a number is never read half-arrived.
COST = re.compile(rb"kernel instructions per RDPMC (\d+), per SPFLT (\d+)\r?\n")
EMPTY = re.compile(rb"region of 0 user instructions counted (\d+)\r?\n")
SETUP = [b"pmu set 1 0 INSTRUCTIONS_EXECUTED:u", b"pmu set 1 1 INSTRUCTIONS_EXECUTED:k",
         b"pmu spflt 1 0", b"pmu start 1"]


def dialogue(g):
    for line in SETUP:
        g.shell(line)
    rdpmc, spflt = (int(x) for x in g.ask(b"run calib cost", COST).groups())
    g.send(b"run calib\r")
    return rdpmc, spflt, int(g.expect(EMPTY)[0].group(1))


def main():
    result = on_card(4, dialogue)
    if result is None:
        return 1
    rdpmc, spflt, empty = result
    report(["Ring-3 counter access on the model backend (CPUS=4, -icount shift=0, task on CPU 1):",
            "RDPMC and SPFLT trap in QEMU and the kernel emulates them (the #UD/#GP fast path,",
            "pmu/model/emul.c); averages over 1000 of each."],
           [("what", 52), ("instructions", 12), ("target", 30)],
           [("kernel instructions per emulated RDPMC", rdpmc, target(rdpmc, 200)),
            ("kernel instructions per emulated SPFLT", spflt, target(spflt, 200)),
            ("user instructions an empty SPFLT region adds (USR)", empty, target(empty, 0))])
    return 0


if __name__ == "__main__":
    sys.exit(main())
