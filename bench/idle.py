#!/usr/bin/python3
"""Idle-card benchmark for `make bench` (issue 27): what a booted card that
does nothing costs the host, beside the two figures that keeping IPIs prompt
without a periodic timer must not make worse (docs/design.md §10).

- Host CPU of the QEMU process over WINDOW_S seconds of an idle card, its
  user + system time from /proc/PID/stat (the process's own CPU time, not
  wall time: the host may be shared), after SETTLE_S seconds past the
  prompt; the card's heartbeat over the same window (each beat a wake-up of
  the serving CPU by its poll timer). Medians of RUNS boots, CPUS=4.
- The doorbell round trip on each of those cards after its window
  (pmuctl ping, PINGS calls back to back): the median of the medians.
- One boot at 244 threads: its guest instructions from kernel entry to the
  prompt (uptime's TSC ticks under -icount shift=0), then the same idle
  window on it.

Figures beside issue 27's targets. Exits non-zero only when a boot fails."""

import json
import mmap
import os
import statistics
import sys
import time

from boot import BUILD, ENTRY_TO_PROMPT, on_card, report, target
from mailbox import ping

RUNS = 3
CPUS = 4
FULL_CPUS = 244
SETTLE_S = 2
WINDOW_S = 30
PINGS = 500
TARGET_CPU_PCT = 5          # issue 27: an idle card, one host core
TARGET_MEDIAN_US = 30       # issue 12's doorbell round trip
TARGET_INSTRUCTIONS = 30_000_000  # issue 27: boot at 244 threads


def cpu_seconds(pid):
    """utime + stime of a process (proc(5): fields 14 and 15), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def heartbeat_reader(card):
    """A function returning the card's mailbox heartbeat, read from shared
    memory at the header offset of build/gen/mbox_layout.json."""
    with open(os.path.join(BUILD, "gen", "mbox_layout.json")) as f:
        off, size = json.load(f)["header"]["heartbeat"]
    fd = os.open(f"/dev/shm/pmuos-{card}", os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    os.close(fd)
    return lambda: int.from_bytes(m[off:off + size], "little")


def idle_window(g):
    """(% of one host core, heartbeats per second) over WINDOW_S s of the card doing nothing."""
    time.sleep(SETTLE_S)
    beat = heartbeat_reader(g.card)
    c0, b0, t0 = cpu_seconds(g.proc.pid), beat(), time.monotonic()
    time.sleep(WINDOW_S)
    c1, b1, t1 = cpu_seconds(g.proc.pid), beat(), time.monotonic()
    return 100 * (c1 - c0) / (t1 - t0), (b1 - b0) / (t1 - t0)


def small_card(g):
    pct, beats = idle_window(g)
    return pct, beats, ping(str(PINGS))[0]


def full_card(g):
    g.send(b"uptime\r")
    m, _ = g.expect(ENTRY_TO_PROMPT)
    return (int(m[1]), *idle_window(g))


def main():
    runs = [on_card(CPUS, small_card) for _ in range(RUNS)]
    full = on_card(FULL_CPUS, full_card)
    if None in runs or full is None:
        return 1
    pct = statistics.median(r[0] for r in runs)
    beats = statistics.median(r[1] for r in runs)
    rtt = statistics.median(r[2] for r in runs)
    instructions, full_pct, full_beats = full
    load = os.getloadavg()
    report([f"An idle card (issue 27): host CPU of the QEMU process over {WINDOW_S} s of a booted card doing",
            f"nothing, {SETTLE_S} s after its prompt (utime + stime from /proc/PID/stat, % of one host core),",
            "the card's heartbeats per second over the same window, the doorbell round trip after it",
            f"(pmuctl ping {PINGS}); CPUS={CPUS}: medians of {RUNS} boots ("
            + ", ".join(f"{r[0]:.1f} %" for r in runs) + "). Then one boot at "
            f"{FULL_CPUS} threads: guest instructions",
            "entry->prompt (TSC ticks under -icount shift=0) and the same idle window.",
            f"Host load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (QEMU's own CPU time is "
            "measured, not wall time)."],
           [("figure", 44), ("value", 12), ("target", 30)],
           [(f"idle host CPU, CPUS={CPUS}", f"{pct:.1f} %", target(round(pct, 1), TARGET_CPU_PCT)),
            (f"idle heartbeats per second, CPUS={CPUS}", f"{beats:.0f}", ""),
            (f"doorbell round trip median, CPUS={CPUS}", f"{rtt:.1f} us", target(round(rtt, 1), TARGET_MEDIAN_US)),
            (f"boot to prompt, CPUS={FULL_CPUS}", f"{instructions / 1e6:.1f} M",
             target(instructions, TARGET_INSTRUCTIONS)),
            (f"idle host CPU, CPUS={FULL_CPUS}", f"{full_pct:.1f} %", ""),
            (f"idle heartbeats per second, CPUS={FULL_CPUS}", f"{full_beats:.0f}", "")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
