#!/usr/bin/python3
"""Soft-float benchmark for `make bench`: what pmuos-cc's card-correct code
(soft-float: each double operation a call into glibc's soft-fp) costs
against the same source built with pmuos-cc --qemu-sse (SSE2, QEMU only),
in guest user instructions (INSTRUCTIONS_EXECUTED:u on the task's CPU,
deterministic under -icount shift=0). Both builds run on the same card, one
after the other. Figures, not verdicts: exits non-zero only when a boot
fails."""

import os
import re
import sys

from boot import BUILD, on_card, report

PROMPT = re.compile(rb"pmuos> ")
EXIT = re.compile(rb"exit status (\d+)\r?\n")
COUNT = re.compile(rb"^\s*1\s+0\s+\S+\s+(\d+)\s", re.M)
# (card-correct built-in, its SSE twin from bench/bench.mk, arguments)
PROGRAMS = [("triad", "triad_sse", "200000"), ("matmul", "matmul_sse", "128")]


def instructions(g, program, args):
    g.shell(b"pmu clear 1")
    g.send(f"run {program} {args} on 1\r".encode())
    status = int(g.expect(EXIT)[0].group(1))
    g.expect(PROMPT)
    m = g.ask(b"pmu read 1", COUNT)
    return int(m.group(1)) if status == 0 else None


def dialogue(g):
    for line in (b"pmu set 1 0 INSTRUCTIONS_EXECUTED:u", b"pmu start 1"):
        g.shell(line)
    return [(soft, args, instructions(g, soft, args), instructions(g, sse, args)) for soft, sse, args in PROGRAMS]


def main():
    elfs = [os.path.join(BUILD, "bench", f"{sse}.elf") for _, sse, _ in PROGRAMS]
    result = on_card(4, dialogue, {"PLUGIN": "0", "PROGRAMS": " ".join(elfs)})
    if result is None:
        return 1
    rows = []
    for prog, args, soft, sse in result:
        ratio = f"{soft / sse:.1f}x" if soft and sse else "failed"
        rows.append((f"{prog} {args}", f"{soft:,}" if soft else "failed", f"{sse:,}" if sse else "failed", ratio))
    report(["Soft-float's cost (CPUS=4, -icount shift=0, task on CPU 1): user instructions of the",
            "card-correct build (pmuos-cc: double arithmetic by soft-fp calls) and of the same",
            "source built with pmuos-cc --qemu-sse (SSE2 instructions, QEMU only)."],
           [("program", 16), ("soft-float", 16), ("SSE", 14), ("ratio", 7)], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
