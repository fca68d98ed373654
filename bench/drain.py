#!/usr/bin/python3
"""Sample-drain benchmark for `make bench`: one thread sampling every 10,000
user instructions (INSTRUCTIONS_EXECUTED:u; under -icount shift=0 the TSC
ticks once per instruction, at 1 GHz) while pmuctl record drains the
per-CPU ring in the mailbox. Prints the samples, the lost ones, the sample
rate in card time (from the samples' own TSC; kernel time per sample makes
it less than 100,000/s) and the host's drain throughput in wall time. Exits
non-zero only when a boot or the recording fails."""

import os
import re
import struct
import subprocess
import sys
import tempfile

from boot import BUILD, on_card, report

PERIOD = 10000
HEADER = struct.Struct("<8sIIQQQ256s64s")
SAMPLE = struct.Struct("<QQQQIBBH")


def dialogue(g):
    out = tempfile.mktemp(suffix=".data")
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", f"bench{os.getpid()}", "record",
                        "-e", "INSTRUCTIONS_EXECUTED:u", "-c", str(PERIOD), "-C", "1", "-o", out, "--",
                        os.path.join(BUILD, "user", "triad.elf"), "3000000"],
                       capture_output=True, text=True, timeout=600)
    m = re.search(r"\[ pmuctl record: (\d+) samples, (\d+) lost", p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(p.stderr)
    data = open(out, "rb").read()
    os.unlink(out)
    tscs = [SAMPLE.unpack_from(data, HEADER.size + i * SAMPLE.size)[0]
            for i in range((len(data) - HEADER.size) // SAMPLE.size)]
    wall = float(re.search(r"([\d.]+) s of wall time", p.stderr)[1]) if "of wall time" in p.stderr else None
    return int(m[1]), int(m[2]), (max(tscs) - min(tscs)) / 1e9 if tscs else 0, wall


def main():
    result = on_card(4, dialogue)
    if result is None:
        return 1
    n, lost, card_s, wall = result
    report(["Sample drain: one thread (CPU 1, triad) sampled every 10,000 user instructions, drained by",
            "pmuctl record from the mailbox ring (CPUS=4, -icount shift=0: card seconds are TSC / 1 GHz)."],
           [("samples", 8), ("lost", 5), ("card samples/s", 14), ("host samples/s (wall)", 21)],
           [(n, lost, f"{n / card_s:.0f}" if card_s else "-", f"{n / wall:.0f}" if wall else "-")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
