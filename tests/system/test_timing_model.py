"""The plugin's KNC core timing model (issue 37, plugin/timing.h, docs/design.md §11).

Cycles come from the model's rules: a thread issues at most every max(2, running
threads of its core) cycles, pairs in the U and V pipes by the Pentium's rules, waits
for results (an address one cycle more), and an L1 miss adds the latency of where it
was served. The programs: `pipes MODE N` (user/programs/pipes.c), loops whose every
iteration has a known mix, each in a region; a difference of two runs (N and 2N
iterations) cancels the region's own instructions, so the counts per iteration are
exact. `chase N`, a pointer chase through N slots of 8 bytes (4N dependent loads).
One 8-CPU card (cores of CPUs 0-3 and 4-7) on the strict KNC CPU."""
import os
import re
import subprocess
import threading

import pytest

from conftest import BUILD, plugin_card, pmuctl_ok as pmuctl

PMUCTL = os.path.join(BUILD, "pmuctl")
PIPES = os.path.join(BUILD, "user", "pipes.elf")
CHASE = os.path.join(BUILD, "user", "chase.elf")
MEMTEST = os.path.join(BUILD, "user", "memtest.elf")

# plugin/timing.h, and the published figures it is checked against.
ISSUE_GAP = 2
L1_LAT, L2_LAT, MEM_LAT = 1, 24, 500
L2_PUBLISHED = (15, 30)     # Intel 671479: "15-30 cycle latency"
L2_MEASURED = 23.4          # McCalpin, SE10P, scalar pointer chasing (Intel MIC forum 499156)
MEM_PUBLISHED = (500, 1000)  # Intel 671479: GDDR "latency of 500-1000 cycles"


@pytest.fixture(scope="module")
def card():
    c = plugin_card(cpus=8, timeout=120)
    yield c
    c.close()



def region(card, cpus, events, *program):
    """{cpu: {event: count}} of the program's one region, per CPU (`stat -A -x,`)."""
    p = pmuctl(card, "stat", "-A", "-C", cpus, "-x,", "-e", events, "--", *program)
    counts = {}
    for m in re.finditer(r"^CPU(\d+),[a-z0-9]+,(\d+),,([A-Za-z0-9_]+:[uk]+)$", p.stderr, re.M):
        counts.setdefault(int(m[1]), {})[m[3]] = int(m[2])
    assert counts, p.stderr
    return counts


def per_iteration(card, cpus, events, mode, n=2000):
    """{cpu: {event: count per iteration}} of `pipes MODE`: runs of n and 2n iterations, differenced,
    after one that leaves the program's lines in the caches as the next run finds them."""
    region(card, cpus, events, PIPES, mode, str(n))
    one, two = region(card, cpus, events, PIPES, mode, str(n)), region(card, cpus, events, PIPES, mode, str(2 * n))
    return {cpu: {e: (two[cpu][e] - one[cpu][e]) / n for e in one[cpu]} for cpu in one}


# pipes' loops: (instructions, issue groups) per iteration by plugin/timing.h's rules (DEC/JNZ pair).
CHAIN = (66, 65)  # 64 dependent ADDs, each its own group; DEC pairs with the last; JNZ alone
PAIRS = (130, 65)  # 64 pairs of independent ADDs; DEC and JNZ a pair


def test_a_dependent_chain_issues_every_other_cycle_on_one_thread(card):
    """One thread: CPI = 2 x groups / instructions, about 2 (328207-002 §2.1: no back-to-back issue)."""
    c = per_iteration(card, "5", "cycles:u,instructions:u", "chain")[5]
    assert c["instructions:u"] == CHAIN[0]
    assert c["cycles:u"] == ISSUE_GAP * CHAIN[1]
    assert abs(c["cycles:u"] / c["instructions:u"] - 2) < 0.05


def test_threads_of_one_core_share_its_issue_turns(card):
    """The chain on 2, 3 and 4 threads of core 1 (CPUs 4-7): each thread issues every max(2, n)
    cycles, so its CPI is that times groups per instruction and the core's combined IPC is
    n / max(2, n) of a group per cycle; within 3 % (the threads start and end a little apart)."""
    for cpus, n in (("4-5", 2), ("4-6", 3), ("4-7", 4)):
        counts = per_iteration(card, cpus, "cycles:u,instructions:u", "chain", n=20000)
        assert sorted(counts) == list(range(4, 4 + n)), counts
        rule = max(ISSUE_GAP, n) * CHAIN[1] / CHAIN[0]
        for cpu, c in counts.items():
            assert c["instructions:u"] == CHAIN[0]
            assert abs(c["cycles:u"] / c["instructions:u"] - rule) < 0.03 * rule, (n, cpu, c)
        ipc = sum(c["instructions:u"] for c in counts.values()) / max(c["cycles:u"] for c in counts.values())
        assert abs(ipc - n / max(ISSUE_GAP, n) * CHAIN[0] / CHAIN[1]) < 0.03 * ipc, (n, ipc)


def test_threads_on_different_cores_do_not_slow_each_other(card):
    """CPUs 1 and 5, one on each core, at once: each runs the chain as alone (CPU 1 within a few
    misses: CPU 0, its core's other thread, serves the host between runs, and its lines
    evict some of the program's from their L1I at host-timed points)."""
    counts = per_iteration(card, "1,5", "cycles:u,instructions:u", "chain", n=20000)
    for cpu in (1, 5):
        assert abs(counts[cpu]["cycles:u"] - ISSUE_GAP * CHAIN[1]) < 0.001 * ISSUE_GAP * CHAIN[1], counts


def test_pipeline_events_per_iteration(card):
    """Each of the model's pipeline events on the loop made for it, per iteration, by the rules."""
    c = per_iteration(card, "5", "INSTRUCTIONS_EXECUTED_V_PIPE:u,EXEC_STAGE_CYCLES:u", "pairs")[5]
    assert c == {"INSTRUCTIONS_EXECUTED_V_PIPE:u": PAIRS[0] - PAIRS[1], "EXEC_STAGE_CYCLES:u": PAIRS[1]}
    c = per_iteration(card, "5", "MEMORY_ACCESSES_IN_BOTH_PIPES:u,FE_STALLED:u", "both")[5]
    assert c == {"MEMORY_ACCESSES_IN_BOTH_PIPES:u": 16, "FE_STALLED:u": 0}  # 16 pairs of loads, all L1 hits
    # 8 x (IMUL, then a load addressed by its product): the load waits for the 10-cycle IMUL and one cycle more
    c = per_iteration(card, "5", "PIPELINE_AGI_STALLS:u,cycles:u", "agi")[5]
    assert c == {"PIPELINE_AGI_STALLS:u": 8, "cycles:u": 8 * (10 + 1 + ISSUE_GAP) + ISSUE_GAP}
    c = per_iteration(card, "5", "MICROCODE_CYCLES:u,FE_STALLED:u", "div")[5]
    assert c["MICROCODE_CYCLES:u"] == 4 * 41  # the Pentium's DIV r32: 41 cycles
    assert c["FE_STALLED:u"] == 4 * (41 - ISSUE_GAP)
    # a branch whose direction alternates: mispredicted, so a flush, every time
    c = per_iteration(card, "5", "PIPELINE_FLUSHES:u,BRANCHES_MISPREDICTED:u", "flush")[5]
    assert c == {"PIPELINE_FLUSHES:u": 1, "BRANCHES_MISPREDICTED:u": 1}


# pipes' prefetch loops: each iteration one prefetch of a line in memory (VPREFETCH0: into the L1D and the
# L2; VPREFETCH1: the L2), then a load of it (hit), or the same prefetch again (twice). {mode: {event: per
# iteration}}; the L2 events (counter 0 only) each beside an L1 one.
PREFETCH = {
    "pf0": {"L1_DATA_PF1:u": 1, "L1_DATA_PF1_MISS:u": 1, "L2_DATA_PF1_MISS:u": 1, "L1_DATA_PF1_DROP:u": 0,
            "L1_DATA_HIT_INFLIGHT_PF1:u": 0, "L1_DATA_PF2:u": 0},
    "pf0hit": {"L1_DATA_HIT_INFLIGHT_PF1:u": 1, "L1_DATA_PF1_MISS:u": 1},
    "pf0twice": {"L1_DATA_PF1:u": 2, "L1_DATA_PF1_DROP:u": 1, "L1_DATA_PF1_MISS:u": 1},
    "pf1": {"L1_DATA_PF2:u": 1, "L2_DATA_PF2:u": 1, "L2_DATA_PF2_MISS:u": 1, "L1_DATA_PF1:u": 0,
            "L2_DATA_PF1_MISS:u": 0},
    "pf1hit": {"L2_DATA_HIT_INFLIGHT_PF2:u": 1, "L1_DATA_HIT_INFLIGHT_PF1:u": 0},
    "pf1twice": {"L1_DATA_PF2:u": 2, "L2_DATA_PF2:u": 2, "L2_DATA_PF2_DROP:u": 1, "L2_DATA_PF2_MISS:u": 1},
}


def test_prefetch_events_per_iteration(card):
    """VPREFETCH0/1, which QEMU cannot execute (the kernel performs them, pmu/model/emul.c, and the plugin
    takes its load for the prefetch): seen, missed, dropped when in flight already, a load that
    meets one in flight; each event per iteration as the plugin's rules say (pmu/plugin_events.h)."""
    for mode, want in PREFETCH.items():
        l2 = [e for e in want if e.startswith("L2_")]
        l1 = [e for e in want if not e.startswith("L2_")] or ["L1_DATA_PF1:u"]
        pairs = [[e, l1[0]] for e in l2] + [l1[i:i + 2] for i in range(0, len(l1), 2)]
        got = {}
        for pair in pairs:
            got.update(per_iteration(card, "5", ",".join(pair), mode, n=1000)[5])
        assert {e: got[e] for e in want} == want, (mode, got)


def test_a_load_waits_for_a_prefetch_in_flight(card):
    """pf0hit: the load right after a VPREFETCH0 of a line in memory waits for the rest of its
    latency; pf0: the prefetch alone lets the thread go on."""
    hit = per_iteration(card, "5", "cycles:u,instructions:u", "pf0hit", n=1000)[5]["cycles:u"]
    alone = per_iteration(card, "5", "cycles:u,instructions:u", "pf0", n=1000)[5]["cycles:u"]
    assert alone < 0.1 * MEM_LAT and hit > alone + 0.9 * MEM_LAT, (alone, hit)


# The events no rule of the plugin's counts (docs/plugin.md says why for each).
NOT_COUNTED = {"BANK_CONFLICTS", "PIPELINE_SG_AGI_STALLS", "VPU_INSTRUCTIONS_EXECUTED_V_PIPE", "VPU_STALL_REG",
               "L2_VICTIM_REQ_WITH_DATA", "SNP_HITM_BUNIT"}


def test_the_card_counts_53_of_the_59_events(card):
    """`pmuctl events` on the card: every KNC event libpfm4 names, each counted but the six the
    plugin has no rule for (the issue asks for at least 52)."""
    p = pmuctl(card, "events")
    rows = dict(re.findall(r"^([A-Z][A-Z0-9_]+)\s+0x[0-9a-f]{4}\s+(counted|not counted)\s", p.stdout, re.M))
    assert len(rows) == 59, p.stdout
    assert {e for e, c in rows.items() if c == "not counted"} == NOT_COUNTED, p.stdout
    assert sum(c == "counted" for c in rows.values()) == 53 >= 52


def chase(card, slots):
    """The chase region's cycles, loads and L1 misses on CPU 5, and its loads' L2 misses."""
    a = region(card, "5", "cycles:u,DATA_READ_MISS:u", CHASE, str(slots))[5]
    b = region(card, "5", "L2_DATA_READ_MISS_MEM_FILL:u,DATA_READ:u", CHASE, str(slots))[5]
    return a["cycles:u"], b["DATA_READ:u"], a["DATA_READ_MISS:u"], b["L2_DATA_READ_MISS_MEM_FILL:u"]


def test_pointer_chase_latencies_are_the_published_ones(card):
    """A chase in the L1 (8 KiB), in the L2 (256 KiB) and in memory (8 MiB): the cycles per load
    over the L1 case, per load that missed, plus the L1's own latency, is the model's L2 and memory
    latency; those lie in the published ranges (Intel 671479) and the L2's by McCalpin's figure."""
    c1, loads1, miss1, _ = chase(card, 1024)
    assert miss1 < 0.001 * loads1
    per_load = c1 / loads1
    c2, loads2, miss2, mem2 = chase(card, 32768)
    assert miss2 > 0.5 * loads2 and mem2 < 0.001 * loads2
    l2 = (c2 - per_load * loads2) / miss2 + L1_LAT
    assert abs(l2 - L2_LAT) < 0.5, l2
    assert L2_PUBLISHED[0] <= l2 <= L2_PUBLISHED[1] and abs(l2 - L2_MEASURED) < 1.5
    c3, loads3, miss3, mem3 = chase(card, 1 << 20)
    assert mem3 > 0.9 * loads3
    mem = (c3 - per_load * loads3 - (L2_LAT - L1_LAT) * (miss3 - mem3)) / mem3 + L1_LAT
    assert abs(mem - MEM_LAT) < 1, mem
    assert MEM_PUBLISHED[0] <= round(mem) <= MEM_PUBLISHED[1]
    # and the raw figure a user sees: cycles per load over the L1 chase's
    assert (c2 / loads2 - per_load) > 0.8 * (L2_LAT - L1_LAT)
    assert (c3 / loads3 - per_load) > 0.9 * (MEM_LAT - L1_LAT)


def test_cycles_are_the_same_in_every_run_under_a_ping_flood(card):
    """memtest's matmul region (SPFLT-gated) 20 times on CPU 1, which shares its core with CPU 0,
    while a second pmuctl pings the card without a pause: the same cycles every time. (A flush of
    QEMU's TLB inside the region, at a TSC deadline, once put one L1 miss more into some runs on a
    loaded host: kernel/hosttlb.c.)"""
    stop = threading.Event()

    def flood():
        while not stop.is_set():
            subprocess.run([PMUCTL, "--card", card.name, "ping", "200", "0"], capture_output=True, timeout=120)

    pinger = threading.Thread(target=flood)
    pinger.start()
    try:
        seen = []
        for _ in range(20):
            p = pmuctl(card, "stat", "--spflt", "-C", "1", "-x,", "-e", "cycles:u,FE_STALLED:u", "--", MEMTEST,
                       "matmul", "100")
            seen.append(tuple(int(m[1]) for m in re.finditer(r"^(\d+),,(cycles:u|FE_STALLED:u),", p.stderr, re.M)))
    finally:
        stop.set()
        pinger.join()
    assert len(seen[0]) == 2 and seen[0][0] > seen[0][1] > 0, seen
    assert set(seen) == {seen[0]}, seen
