#!/usr/bin/python3
"""Sampling against counting in wall time, for `make bench` (issue 27):
the same program under `pmuctl record -c PERIOD` and under `pmuctl stat`,
the same event (cycles, record's default), on one booted card (CPUS=4,
-icount shift=0), the two taking turns RUNS times. Each run's wall time is
pmuctl's, from start to exit (upload, run, drain, the file written); beside
it the host CPU time the QEMU process spent meanwhile (/proc/PID/stat), the
figure a busy host disturbs less. Medians, their ratio against the target,
and the host's load average (the machine may be shared). Exits non-zero only
when the boot or a run fails."""

import os
import statistics
import subprocess
import sys
import tempfile
import time

from boot import BUILD, on_card, report, target

PERIOD = 10000
RUNS = 5
TARGET = 1.2  # record's wall time / stat's (issue 27)
# steady: 151 M cycles at CPU 1, about 15,000 samples at PERIOD
PROGRAM = [os.path.join(BUILD, "user", "steady.elf"), "2000", "20000"]
TICK = os.sysconf("SC_CLK_TCK")


def qemu_cpu_s(pid):
    """utime + stime of the whole QEMU process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def timed(g, *args):
    cpu0, t0 = qemu_cpu_s(g.proc.pid), time.monotonic()
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", g.card, *args], capture_output=True, text=True,
                       timeout=600)
    wall, cpu = time.monotonic() - t0, qemu_cpu_s(g.proc.pid) - cpu0
    if p.returncode != 0:
        raise RuntimeError(f"pmuctl {' '.join(args)}: {p.returncode}: {p.stderr}")
    return wall, cpu


def dialogue(g):
    runs = {"stat": [], "record": []}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(RUNS):
            runs["stat"].append(timed(g, "stat", "-e", "cycles", "--", *PROGRAM))
            runs["record"].append(timed(g, "record", "-e", "cycles", "-c", str(PERIOD), "-o",
                                        os.path.join(d, "pmuos.data"), "--", *PROGRAM))
    return runs


def main():
    load0 = os.getloadavg()[0]
    runs = on_card(4, dialogue)
    if runs is None:
        return 1
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    ratio = med["record"][0] / med["stat"][0]
    rows = [(k, " ".join(f"{w:.2f}" for w, _ in v), f"{med[k][0]:.2f}", f"{med[k][1]:.2f}") for k, v in runs.items()]
    rows.append(("record / stat", "", f"{ratio:.2f}x", f"{med['record'][1] / med['stat'][1]:.2f}x"))
    report([f"Sampling against counting: `pmuctl record -e cycles -c {PERIOD:,}` and `pmuctl stat -e cycles`",
            f"of {os.path.basename(PROGRAM[0])} {' '.join(PROGRAM[1:])} on one card (CPUS=4, -icount shift=0), "
            f"taking turns {RUNS} times;",
            "wall seconds per run and their median, and the QEMU process's host CPU seconds (median).",
            f"Host load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after (a shared host stretches wall "
            "times)."],
           [("run", 13), ("wall s, each run", 34), ("median wall s", 13), ("QEMU CPU s", 10)], rows)
    print(f"record / stat wall time: {ratio:.2f}x, target {target(round(ratio * 100), round(TARGET * 100))} "
          "(in hundredths)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
