#!/usr/bin/python3
"""Cache events against cachegrind for `make bench` (issue 27, must show 1):
what a user who wants the L1 data misses of a loop pays with each tool.

The same object code (build/user/measured.o: ms_random, ms_matmul) in
build/test/memtest-linux and build/user/memtest.elf, two workloads:
memtest's 4 MiB scattered walk (`random 4194304 20000000`: 20 M reads at
pseudo-random words of 4 MiB, 140 M instructions) and a matmul of 256
(`matmul 256`: two 256 x 256 matrices of 64-bit words, 85 M instructions).
Four tools, in turn in every round (the order rotating), so the host's load
drifts over all of them alike:
  native      memtest-linux on the host
  cachegrind  valgrind --tool=cachegrind --cache-sim=yes in the KNC's L1
              geometry (32 KiB, 8 ways, 64-byte lines; LL as the L2)
  plugin on   pmuctl stat --spflt -e DATA_READ_MISS:u,INSTRUCTIONS_EXECUTED:u
              on a booted card (CPUS=4, the strict KNC CPU, PLUGIN=1)
  plugin off  the same on a card without the plugin, INSTRUCTIONS_EXECUTED:u
The card not in use is stopped (SIGSTOP), so an idle card takes nothing from
the one that runs. Per tool: the median wall seconds from start to exit,
and the median CPU seconds (user + system) of its processes (the card's:
QEMU's, read from /proc, plus pmuctl's), over ROUNDS rounds; the ratio to
cachegrind is the median of each round's ratio. The host has 2 cores that
other work shares: the load average is printed before and after.
Counts: DATA_READ_MISS:u of the measured function's SPFLT region against
cachegrind's D1 read misses in that function (its fn= lines), within 1 %.
Figures, not verdicts: exits non-zero only when a card does not boot or a
tool fails. Environment: ROUNDS (default 5), BUILD.
"""

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from boot import BUILD, PMUOS, PROMPT, BootFailed, Guest, report

ROUNDS = int(os.environ.get("ROUNDS", "5"))
WORKLOADS = [("4 MiB scattered walk", "random 4194304 20000000", "ms_random", 2.0),
             ("matmul 256", "matmul 256", "ms_matmul", 1.0)]
GOAL = 1.0  # issue 27's target for both
TWIN = os.path.join(BUILD, "test", "memtest-linux")
MEMTEST = os.path.join(BUILD, "user", "memtest.elf")
PMUCTL = os.path.join(BUILD, "pmuctl")
CACHEGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64",
              "--LL=524288,8,64"]
EVENTS = {True: "DATA_READ_MISS:u,INSTRUCTIONS_EXECUTED:u", False: "INSTRUCTIONS_EXECUTED:u"}
CSV = re.compile(r"^(\d+),[^,]*,([\w:]+),", re.M)
TOOLS = ["native", "cachegrind", "plugin on", "plugin off"]
TICK = os.sysconf("SC_CLK_TCK")


def run(argv):
    """(wall s, CPU s of the process and its children, stdout, stderr) of one command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"cache: {' '.join(argv)} failed ({p.returncode}): {stdout}{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, stdout, stderr


def cpu_of(pid):
    """User + system CPU seconds of process pid so far (/proc/PID/stat fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cachegrind(args, function):
    """(wall, CPU, D1 read misses in `function`)."""
    fd, path = tempfile.mkstemp(prefix="pmuos-cachegrind-")
    os.close(fd)
    try:
        wall, cpu, _, _ = run(CACHEGRIND + [f"--cachegrind-out-file={path}", TWIN] + args.split())
        text = open(path).read()
    finally:
        os.unlink(path)
    events = re.search(r"^events: (.*)$", text, re.M)[1].split()
    col, misses, inside = events.index("D1mr"), 0, False
    for line in text.splitlines():
        if line.startswith("fn="):
            inside = line[3:] == function
        elif inside and line[:1].isdigit():
            counts = line.split()[1:]
            misses += int(counts[col]) if col < len(counts) else 0
    return wall, cpu, misses


class Card:
    """A booted card (stopped while another tool runs) that runs memtest under pmuctl stat."""

    def __init__(self, plugin):
        self.plugin = plugin
        self.g = Guest(PMUOS, 4, {"PLUGIN": "1" if plugin else "0", "CPU": "knc",
                                  "CARD": f"cache{os.getpid()}p{int(plugin)}"})
        self.g.expect(PROMPT)
        os.set_blocking(self.g.proc.stdout.fileno(), False)
        self.pause()

    def pause(self):
        os.kill(self.g.proc.pid, signal.SIGSTOP)

    def drain(self):
        """Reads what the console printed (a full pipe would stop QEMU)."""
        try:
            while os.read(self.g.proc.stdout.fileno(), 65536):
                pass
        except (BlockingIOError, OSError):
            pass

    def stat(self, args):
        """(wall, CPU of QEMU and pmuctl, DATA_READ_MISS:u or None)."""
        os.kill(self.g.proc.pid, signal.SIGCONT)
        try:
            self.drain()
            before = cpu_of(self.g.proc.pid)
            wall, cpu, _, out = run([PMUCTL, "--card", self.g.card, "stat", "--spflt", "-C", "1",
                                     "-e", EVENTS[self.plugin], "-x", ",", "--", MEMTEST] + args.split())
            cpu += cpu_of(self.g.proc.pid) - before
            self.drain()
        finally:
            self.pause()
        counts = {m[2]: int(m[1]) for m in CSV.finditer(out)}
        return wall, cpu, counts.get("DATA_READ_MISS:u")

    def kill(self):
        os.kill(self.g.proc.pid, signal.SIGCONT)
        self.g.kill()


def measure(cards, args, function):
    """{tool: [(wall, cpu)]}, the plugin's misses (distinct values) and cachegrind's (distinct)."""
    times = {t: [] for t in TOOLS}
    misses, d1mr = set(), set()
    for r in range(ROUNDS):
        for tool in TOOLS[r % len(TOOLS):] + TOOLS[:r % len(TOOLS)]:
            if tool == "native":
                wall, cpu, _, _ = run([TWIN] + args.split())
            elif tool == "cachegrind":
                wall, cpu, m = cachegrind(args, function)
                d1mr.add(m)
            else:
                wall, cpu, m = cards[tool == "plugin on"].stat(args)
                if tool == "plugin on":
                    misses.add(m)
            times[tool].append((wall, cpu))
    return times, sorted(misses), sorted(d1mr)


def main():
    load0 = os.getloadavg()
    cards = {}
    try:
        for plugin in (True, False):
            cards[plugin] = Card(plugin)
        results = [(name, limit) + measure(cards, args, function) for name, args, function, limit in WORKLOADS]
    except BootFailed as e:
        print(f"cache: {e}", file=sys.stderr)
        return 1
    finally:
        for c in cards.values():
            c.kill()
    load1 = os.getloadavg()
    rows = []
    for name, limit, times, misses, d1mr in results:
        med = {t: (statistics.median(w for w, _ in times[t]), statistics.median(c for _, c in times[t])) for t in TOOLS}
        for t in TOOLS:
            wall, cpu = med[t]
            ratio = statistics.median(a[0] / b[0] for a, b in zip(times[t], times["cachegrind"]))
            cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(times[t], times["cachegrind"]))
            goal = ""
            if t == "plugin on":
                goal = "; ".join(f"<= {x:g}x: {'met' if ratio <= x else 'not met'}" for x in sorted({limit, GOAL}, reverse=True))
            rows.append((name if t == "native" else "", t, f"{wall:.2f}", f"{cpu:.2f}", f"{wall / med['native'][0]:.0f}x",
                         f"{ratio:.2f}x", f"{cpu_ratio:.2f}x", goal))
        # The card's pmuctl polls land at host-timed points of the walk: a few lines more or less.
        worst = max((abs(m - d1mr[0]) for m in misses), default=0) / d1mr[0] * 100 if len(d1mr) == 1 else None
        shown = f"{misses[0]:,}" if len(misses) == 1 else f"{misses[0]:,}-{misses[-1]:,}"
        rows.append(("", "DATA_READ_MISS:u", shown, f"D1mr {', '.join(f'{m:,}' for m in d1mr)}", "",
                     f"{worst:.3f} % off" if worst is not None else "D1mr differs", "",
                     "within 1 %: " + ("met" if worst is not None and worst <= 1 else "not met")))
    report([f"Cache events against cachegrind (issue 27): the same object code (build/user/measured.o) on the host,",
            "under valgrind's cachegrind in the KNC's L1 geometry, and on a booted card with the plugin (pmuctl stat",
            "--spflt -e DATA_READ_MISS:u,INSTRUCTIONS_EXECUTED:u) and without it (INSTRUCTIONS_EXECUTED:u).",
            f"Medians of {ROUNDS} rounds, the tools in turn in each; vs cachegrind: the median of each round's ratio",
            "(wall; CPU: user + system of the tool's processes, for a card QEMU's and pmuctl's). Misses: the",
            "function's SPFLT region (its range over the rounds) against cachegrind's D1mr in it: the farthest's distance.",
            f"Host load average (1, 5, 15 min): {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, "
            f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} after, on {os.cpu_count()} CPUs."],
           [("workload", 20), ("tool", 16), ("wall s", 21), ("CPU s", 15), ("vs native", 9),
            ("vs cachegrind", 13), ("CPU vs cg", 9), ("target", 30)], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
