#!/usr/bin/python3
"""`make determinism` (issue 23, must show 3): the same SPFLT region run
RUNS times (default 50) on one card while the host keeps it busy, and its
plugin counts against valgrind's on the same object code.

The card: 8 CPUs (2 cores of 4 threads) on the strict KNC CPU, with the
plugin. The regions: memtest's 4 MiB scattered walk (`random 4194304
200000`: 200,000 reads at pseudo-random words of 4 MiB) and its matmul
(`matmul 100`: ms_matmul, user/measured.c, two 100 x 100 matrices), on CPU 1,
which shares its core (its caches) with CPU 0. Each run is `pmuctl stat
--spflt`, which polls the card until the program ends, while a second pmuctl
pings it without a pause (`ping 1000000 0`) from before the first run to
after the last. A run counts two events (two counters, no multiplexing):
RUNS runs count DATA_READ:u and DATA_WRITE:u, RUNS more DATA_READ_MISS:u and
DATA_READ:u, alternating.

The reference: callgrind with its cache simulation in the KNC's L1D geometry
(32 KiB, 8 ways, 64-byte lines), --toggle-collect on the measured function,
running build/test/memtest-linux, the same object code. The verdict: every
run's counts identical; DATA_READ:u equal to callgrind's Dr, DATA_WRITE:u to
its Dw plus one (the region's CALL writes its return address), and
DATA_READ_MISS:u within 1 % of its D1mr. Exits non-zero if any of that fails
or a run fails. Environment: RUNS, BUILD."""

import os
import re
import subprocess
import sys
import time

from boot import BUILD, report, with_host_card

RUNS = int(os.environ.get("RUNS", "50"))
CPU = 1
REGIONS = [("4 MiB scattered walk", "random 4194304 200000", "ms_random"), ("matmul", "matmul 100", "ms_matmul")]
PAIRS = [("DATA_READ:u", "DATA_WRITE:u"), ("DATA_READ_MISS:u", "DATA_READ:u")]
PMUCTL = os.path.join(BUILD, "pmuctl")
MEMTEST = os.path.join(BUILD, "user", "memtest.elf")
TWIN = os.path.join(BUILD, "test", "memtest-linux")
VALGRIND = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64",
            "--LL=524288,8,64"]
CSV = re.compile(r"^(\d+),[^,]*,([\w:]+),", re.M)


def valgrind(args, function):
    out = f"/tmp/pmuos-determinism-{os.getpid()}.out"
    try:
        p = subprocess.run(VALGRIND + [f"--toggle-collect={function}", f"--callgrind-out-file={out}", TWIN]
                           + args.split(), capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            sys.exit(f"determinism: valgrind failed: {p.stderr}")
        text = open(out).read()
    finally:
        if os.path.exists(out):
            os.unlink(out)
    events = re.search(r"^events: (.*)$", text, re.M)[1].split()
    return dict(zip(events, map(int, re.search(r"^summary: (.*)$", text, re.M)[1].split())))


def stat(card, events, args):
    p = subprocess.run([PMUCTL, "--card", card, "stat", "--spflt", "-C", str(CPU), "-e", ",".join(events), "-x", ",",
                        "--", MEMTEST] + args.split(), capture_output=True, text=True, timeout=600)
    counts = {m[2]: int(m[1]) for m in CSV.finditer(p.stderr)}  # -x on stderr, as perf's
    if p.returncode != 0 or set(counts) != set(events):
        sys.exit(f"determinism: pmuctl stat {args} failed ({p.returncode}): {p.stdout}{p.stderr}")
    return counts


def doorbells(card):
    out = subprocess.run([PMUCTL, "--card", card, "info"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"(\d+) rings reached the card", out)
    return int(m[1]) if m else 0


def measure(card):
    results = []
    for name, args, function in REGIONS:
        start, rings0 = time.monotonic(), doorbells(card)
        pinger = subprocess.Popen([PMUCTL, "--card", card, "ping", "1000000", "0"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            runs = {pair: [] for pair in PAIRS}
            for _ in range(RUNS):
                for pair in PAIRS:
                    runs[pair].append(stat(card, pair, args))
            if pinger.poll() is not None:
                sys.exit("determinism: the pinging client stopped")
        finally:
            pinger.kill()
            pinger.wait()
        rings = doorbells(card) - rings0
        reads = sorted({r["DATA_READ:u"] for pair in PAIRS for r in runs[pair]})
        writes = sorted({r["DATA_WRITE:u"] for r in runs[PAIRS[0]]})
        misses = sorted({r["DATA_READ_MISS:u"] for r in runs[PAIRS[1]]})
        results.append((name, args, function, reads, writes, misses, rings, time.monotonic() - start))
    return results


def main():
    results = with_host_card("determinism", 8, measure)
    rows, ok = [], True
    for name, args, function, reads, writes, misses, rings, secs in results:
        vg = valgrind(args, function)
        off = (misses[0] - vg["D1mr"]) / vg["D1mr"] * 100
        good = (reads == [vg["Dr"]] and writes == [vg["Dw"] + 1] and len(misses) == 1 and abs(off) <= 1.0)
        ok &= good
        show = lambda values: ", ".join(f"{v:,}" for v in values)
        rows.append([name, f"{2 * RUNS}", show(reads), f"{vg['Dr']:,}", show(writes), f"{vg['Dw'] + 1:,}",
                     show(misses), f"{vg['D1mr']:,}", f"{off:+.3f} %", f"{rings:,}", f"{secs:.0f}",
                     "yes" if good else "NO"])
    report([f"The same SPFLT region, {RUNS} runs of each counter pair on CPU {CPU} of an 8-CPU card, each "
            "under pmuctl stat --spflt while a second pmuctl pings the card throughout; the distinct values "
            "counted, against callgrind on the same object code (Dw + 1: the region's CALL)."],
           [("region", 20), ("runs", 4), ("DATA_READ:u", 11), ("Dr", 9), ("DATA_WRITE:u", 12), ("Dw+1", 6),
            ("DATA_READ_MISS:u", 16), ("D1mr", 7), ("off", 9), ("rings", 6), ("s", 4), ("ok", 3)], rows)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
