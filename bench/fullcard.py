#!/usr/bin/python3
"""Full-card benchmark for `make bench` (issues 23.10 and 36): on one 244-thread card, the
wall time of `pmuctl run -C 1-243 hello` beside `pmuctl run -C 1-63 hello` (medians of
RUNS, interleaved so host load drifts hit both alike), and what bounds it. Then, on a
244-thread card with the plugin (each thread counted by its own clock), `run`, `stat`
and `record` of a long program (LONG: tens of millions of user instructions each) on 243
and on 63 application threads, each run checked (every rank's output, pmuctl's status 0,
no sample lost) and followed by `pmuctl info`, whose wall time is shown too. Exits
non-zero only when a boot fails (a run that fails is reported as such)."""

import os
import re
import statistics
import subprocess
import sys
import time

from boot import BUILD, on_card, report

CPUS = 244
RUNS = 3
SETS = ("1-63", "1-243")
HELLO = os.path.join(BUILD, "user", "hello.elf")
PMUCTL = os.path.join(BUILD, "pmuctl")
LONG = (os.path.join(BUILD, "user", "matmul.elf"), "48")  # 21.4 M user instructions
LONG_OUT = re.compile(r"^\[rank (\d+)\] matmul: n=48 trace \d+$", re.M)
PERIOD = 2000000  # record: about 10 samples a CPU
DATA = os.path.join(BUILD, "bench", "fullcard.data")
LONG_CMDS = {
    "run": ["run"],
    "stat": ["stat", "-e", "INSTRUCTIONS_EXECUTED:u"],
    "record": ["record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", str(PERIOD), "-o", DATA],
}


def run(card, cpus):
    """Wall seconds of one `pmuctl run -C cpus hello`, or None if it failed (said on stderr)."""
    t0 = time.monotonic()
    p = subprocess.run([PMUCTL, "--card", card, "run", "-C", cpus, HELLO],
                       capture_output=True, text=True, timeout=1800)
    s = time.monotonic() - t0
    if p.returncode != 0:
        print(f"bench: pmuctl run -C {cpus} hello failed after {s:.1f} s: {p.stderr.strip()}", file=sys.stderr)
        return None
    return s


def long_run(card, cmd, cpus):
    """(wall s of one `pmuctl CMD -C cpus` of LONG, wall s of the `pmuctl info` after it), or
    None after saying on stderr what was missing: a rank's output, status 0, a lost sample."""
    argv = [PMUCTL, "--card", card] + LONG_CMDS[cmd] + ["-C", cpus, "--", *LONG]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    s = time.monotonic() - t0
    n = int(cpus.split("-")[1])
    ranks = sorted(int(r) for r in LONG_OUT.findall(p.stdout))
    why = (f"status {p.returncode}" if p.returncode else
           f"{len(ranks)} ranks' output of {n}" if ranks != list(range(n)) else
           "samples lost" if cmd == "record" and not re.search(r"samples, 0 lost", p.stderr) else None)
    t1 = time.monotonic()
    info = subprocess.run([PMUCTL, "--card", card, "info"], capture_output=True, text=True, timeout=120)
    i = time.monotonic() - t1
    if info.returncode:
        why = f"pmuctl info after it: {info.stderr.strip()}"
    if why:
        print(f"bench: pmuctl {cmd} -C {cpus} of matmul {LONG[1]}: {why} ({s:.1f} s): {p.stderr.strip()[-400:]}",
              file=sys.stderr)
        return None
    return s, i


def long_dialogue(g):
    times = {(c, s): [] for c in LONG_CMDS for s in SETS}
    for c in LONG_CMDS:
        for i in range(RUNS):
            for s in SETS if i % 2 == 0 else reversed(SETS):
                times[(c, s)].append(long_run(g.card, c, s))
    return times


def dialogue(g):
    times = {s: [] for s in SETS}
    for i in range(RUNS):
        for s in SETS if i % 2 == 0 else reversed(SETS):
            times[s].append(run(g.card, s))
    return times


def main():
    # PLUGIN=0, as tests/system/test_full_card.py: the 244-thread card boots in ~80 s with the plugin.
    times = on_card(CPUS, dialogue, env={"PLUGIN": "0"})
    if times is None:
        return 1
    rows = []
    for s in SETS:
        ok = [t for t in times[s] if t is not None]
        n = int(s.split("-")[1])
        med = statistics.median(ok) if ok else None
        rows.append((f"run -C {s} hello ({n} tasks)", f"{len(ok)} of {RUNS}",
                     f"{med:.1f}" if med else "-", f"{med / n * 1000:.0f}" if med else "-"))
    report([f"A full card (CPUS={CPUS}, -icount shift=0, PLUGIN=0, same card): `pmuctl run` of hello on 63 and 243",
            f"application threads, wall time from pmuctl's start to its exit, medians of {RUNS}."],
           [("what", 34), ("ran", 8), ("median s", 9), ("ms per task", 11)], rows)
    print()
    print("What bounds it: the card's work is serial on the serving CPU (RUN loads the read-only text once")
    print("per launch and builds one address space per CPU, ~205 K guest instructions each for hello, most")
    print("of it zeroing the 1 MiB stack), and QEMU runs every vCPU in turn on one host thread: under -icount")
    print("each turn of a running vCPU is the time to the next timer (at most 100 us, the PIT's 10 kHz while tasks")
    print(f"run, which keeps the serving CPU's turns coming) divided by the vCPU count, so one busy vCPU among {CPUS} gets")
    print(f"~200-400 instructions per round of {CPUS} vCPU visits (halted ones included): its rate falls as")
    print("1/N^2 with N vCPUs.")
    print("Before the launch's tasks shared one text, each had a copy of the code, and pages that had held")
    print("code, reused later, made QEMU flush every vCPU's jump cache per block translated from them: a")
    print("second 243-task launch took 110-336 s (docs/design.md §6).")

    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    times = on_card(CPUS, long_dialogue)
    if times is None:
        return 1
    rows = []
    for c in LONG_CMDS:
        for s in SETS:
            ok = [t for t in times[(c, s)] if t is not None]
            med = statistics.median(t[0] for t in ok) if ok else None
            info = statistics.median(t[1] for t in ok) if ok else None
            rows.append((f"{c} -C {s}", f"{len(ok)} of {RUNS}", f"{med:.1f}" if ok else "-",
                         f"{info:.2f}" if ok else "-"))
    report([f"A full card with the plugin (CPUS={CPUS}, -icount shift=0): `pmuctl run`, `stat -e "
            f"INSTRUCTIONS_EXECUTED:u` and `record -c {PERIOD}`",
            f"of matmul {LONG[1]} (21.4 M user instructions each) on 63 and 243 application threads, each checked "
            "(every rank's output,",
            f"status 0, 0 samples lost) and followed by `pmuctl info`: wall times, medians of {RUNS}."],
           [("what", 18), ("ran", 8), ("median s", 9), ("info after, s", 13)], rows)
    print()
    print("Each of 243 threads runs 1/243 of the time QEMU's one host thread gives the vCPUs, so a 243-thread")
    print("run takes about 243/63 = 3.9 times the 63-thread one; record's overflow timers add the early")
    print("firings of docs/design.md §5.2 (a timer armed at TSC + ticks left fires before its thread gets there).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
