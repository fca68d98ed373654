#!/usr/bin/python3
"""Threads benchmark for `make bench`: on the model backend under -icount
shift=0, the kernel instructions of a futex wake that finds no waiter (the
unlock of a mutex some thread once waited on) and those the creating CPU
runs for a pthread_create and its pthread_join (the creation, the join's
futex wait and halt, the wake), counted by INSTRUCTIONS_EXECUTED:k on that
CPU (user/programs/threads.c `cost`). Deterministic figures. Exits
non-zero only when a boot fails."""

import re
import sys

from boot import on_card, report

COST = re.compile(rb"per futex wake (\d+), per create and join (\d+)\r?\n")
SETUP = [b"pmu set 1 1 INSTRUCTIONS_EXECUTED:k", b"pmu start 1"]


def dialogue(g):
    for line in SETUP:
        g.shell(line)
    wake, create = (int(x) for x in g.ask(b"run --threads threads cost on 1-2", COST).groups())
    return wake, create


def main():
    result = on_card(3, dialogue)
    if result is None:
        return 1
    wake, create = result
    report(["Threads on the model backend (CPUS=3, -icount shift=0; a process on CPUs 1-2, the creating",
            "thread on CPU 1): kernel instructions on CPU 1, averages over 1000 wakes and 100 threads."],
           [("what", 52), ("instructions", 12)],
           [("kernel instructions per futex wake, no waiter", wake),
            ("kernel instructions per pthread_create + join", create)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
