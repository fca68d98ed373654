#!/usr/bin/python3
"""pmuctl start-up benchmark for `make bench` (issue 12): `pmuctl info` as a
whole process (fork, exec, dynamic loading, mapping the mailbox, one info
round trip, exit), wall ms, median, beside the same number of /bin/true
processes started the same way in the same run (what any process costs on
this host) and beside `pmuctl events` (libpfm4 initialised for its knc PMU).
CPU ms (user + system, from wait4) are shown too: wall time on a shared
host includes waiting for a CPU. Figures, never verdicts.
Exits non-zero only when the boot or a pmuctl run fails."""

import os
import statistics
import subprocess
import sys
import time

from boot import BUILD, on_card, report, target

RUNS = 200
TARGET_MS = 5


def run_once(argv):
    """Wall ms and CPU ms (user + system) of one process."""
    t0 = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    wall = (time.monotonic() - t0) * 1e3
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with status {os.waitstatus_to_exitcode(status)}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3


def dialogue(g):
    pmuctl = os.path.abspath(os.path.join(BUILD, "pmuctl"))
    card = f"bench{os.getpid()}"
    cmds = {"pmuctl info": [pmuctl, "--card", card, "info"],
            "/bin/true": ["/bin/true"],
            "pmuctl events": [pmuctl, "events"]}
    times = {k: [] for k in cmds}
    # Interleaved, so load drifts on the shared host hit each alike.
    for _ in range(RUNS):
        for k, argv in cmds.items():
            times[k].append(run_once(argv))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}


def main():
    result = on_card(4, dialogue)
    if result is None:
        return 1
    info_wall = result["pmuctl info"][0]
    rows = [(k, f"{w:.2f}", f"{c:.2f}", target(round(w, 2), TARGET_MS) if k == "pmuctl info" else "")
            for k, (w, c) in result.items()]
    report([f"A whole process, {RUNS} runs of each interleaved (CPUS=4 card, -icount shift=0): wall ms",
            "from spawn to exit and CPU ms (user + system), medians. /bin/true is the cost of any",
            "process here; `pmuctl events` initialises libpfm4 (its knc PMU only) and lists 59 events.",
            f"pmuctl info minus /bin/true: {info_wall - result['/bin/true'][0]:.2f} ms wall."],
           [("process", 14), ("wall ms", 8), ("CPU ms", 7), ("target (wall ms)", 30)], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
