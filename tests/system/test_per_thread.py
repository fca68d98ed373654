"""Many threads counted truly (issue 36): with the QEMU plugin every thread's
counts are its own however many threads run at once. The model counts by the
thread's own instruction clock, which the plugin keeps per vCPU
(include/pmuos/pmushare.h `clock`, docs/design.md §5.2), not by -icount's one
virtual clock, which every vCPU advances.

`calib rank` runs one SPFLT region whose size its rank picks (rank r, on CPU
r + 1: N = (r + 1) x 100,000 rounds of a load, a decrement and a branch, so
3N + 1 instructions and N reads): CPUs doing different amounts of work at
once, each count checked exactly. The instructions come from the plugin's
block callbacks (the clock switch), the reads from its memory callbacks: a
QEMU that hands block callbacks another vCPU's index (10.0's baked index,
issue 36) makes the instruction counts wrong while the reads stay right.
One 8-CPU card on the strict KNC CPU serves the tests, one more shows that the
check of `calib rank` fails where block callbacks go to the wrong vCPU, and a
4-CPU card without the plugin the last one: there the counts of several CPUs at
once are marked."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, Card, plugin_card, pmuctl_ok as pmuctl

PMUCTL = os.path.join(BUILD, "pmuctl")
CALIB = os.path.join(BUILD, "user", "calib.elf")
MATMUL = os.path.join(BUILD, "user", "matmul.elf")
STEADY = os.path.join(BUILD, "user", "steady.elf")
ROW = re.compile(r"^CPU(\d+)\s+([\d,]+)\s+(\S+)(?:\s+\(([\d.]+)%\))?$", re.M)


@pytest.fixture(scope="module")
def card():
    c = plugin_card(cpus=8, timeout=120)
    yield c
    c.close()



def per_cpu(p):
    """{(cpu, event): count} of a `stat -A` table (stderr)."""
    return {(int(m[1]), m[3]): int(m[2].replace(",", "")) for m in ROW.finditer(p.stderr)}


def total(p, event):
    m = re.search(rf"^\s+([\d,]+)\s+{re.escape(event)}(?:\s|$)", p.stderr, re.M)
    assert m, p.stderr
    return int(m[1].replace(",", ""))


RANK_EVENTS = "INSTRUCTIONS_EXECUTED:u,DATA_READ:u"


def test_per_core_sums_each_cores_threads(card):
    """perf's --per-core on 8 threads, 2 cores of 4 (the shell's `cpus` says which): CPUs 1-3 sum to
    core 0 and 4-7 to core 1, each line the sum of its CPUs' per-thread counts (each CPU counts its own
    instructions exactly, so both runs give the same)."""
    cores = {}
    for m in re.finditer(r"^\s*(\d+)\s+\d+\s+(\d+)\s+\d+\s+online", card.cmd("cpus"), re.M):
        cores.setdefault(int(m[2]), []).append(int(m[1]))
    assert cores == {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]}, cores
    args = ("-C", "1-7", "-e", "INSTRUCTIONS_EXECUTED:u", "--", STEADY, "200")
    each = per_cpu(pmuctl(card, "stat", "-A", *args))
    p = pmuctl(card, "stat", "--per-core", *args)
    rows = re.findall(r"^S0-D0-C(\d+)\s+(\d+)\s+([\d,]+)\s+INSTRUCTIONS_EXECUTED:u$", p.stderr, re.M)
    want = [(core, len([c for c in cpus if c]), sum(each[(c, "INSTRUCTIONS_EXECUTED:u")] for c in cpus if c))
            for core, cpus in sorted(cores.items())]
    assert [(int(c), int(n), int(v.replace(",", ""))) for c, n, v in rows] == want, p.stderr
    p = subprocess.run([PMUCTL, "--card", card.name, "stat", "--per-core", "-A", *args], capture_output=True, text=True)
    assert p.returncode == 2 and "-A and --per-core together" in p.stderr, p.stderr


def rank_miscounts(card, last):
    """`calib rank` on CPUs 1 to `last` at once: {(cpu, event): (counted, exact)} of every
    count that is not its CPU's own region's, exactly (CPU c: 3N + 1 instructions, N reads,
    N = c x 100,000)."""
    got = per_cpu(pmuctl(card, "stat", "-A", "-C", f"1-{last}", "--spflt", "-e", RANK_EVENTS, "--", CALIB, "rank"))
    bad = {}
    for cpu in range(1, last + 1):
        n = cpu * 100000
        for event, exact in (("INSTRUCTIONS_EXECUTED:u", 3 * n + 1), ("DATA_READ:u", n)):
            if got.get((cpu, event)) != exact:
                bad[(cpu, event)] = (got.get((cpu, event)), exact)
    return bad


def test_cpus_at_once_count_their_own_regions_exactly(card):
    """Must-show 1 and 6: seven CPUs at once, each region of its own size counted
    exactly, instructions and reads; the one-CPU run of the same program the same."""
    one = pmuctl(card, "stat", "-C", "1", "--spflt", "-e", RANK_EVENTS, "--", CALIB, "rank")
    assert total(one, "INSTRUCTIONS_EXECUTED:u") == 300001, one.stderr
    assert total(one, "DATA_READ:u") == 100000, one.stderr
    assert rank_miscounts(card, 7) == {}


def test_the_check_fails_when_blocks_are_credited_to_the_translating_vcpu():
    """Must-show 6: the check above on the setup it guards against. The plugin's
    vcpu=translating hands each block's callbacks the index of the vCPU that
    translated the block, as QEMU 10.0's round-robin TCG does (its gen_cpu_index
    bakes that index into the block; memory callbacks keep the running vCPU's).
    The kernel's blocks, which every CPU runs, then switch the clock to another
    thread's: the check finds the instruction counts of four CPUs at once wrong."""
    c = plugin_card(cpus=8, timeout=120, env={"PLUGIN_ARGS": "vcpu=translating"})
    try:
        bad = rank_miscounts(c, 4)
    finally:
        c.close()
    assert any(event == "INSTRUCTIONS_EXECUTED:u" for _, event in bad), bad


def test_cpus_at_once_count_what_one_counts(card):
    """The calibrated program on seven CPUs at once: every CPU's counts, its regions'
    and the whole run's, are the one-CPU run's."""
    events = "INSTRUCTIONS_EXECUTED:u,DATA_READ:u"
    one = pmuctl(card, "stat", "-C", "1", "--spflt", "-e", events, "--", CALIB)
    seven = pmuctl(card, "stat", "-A", "-C", "1-7", "--spflt", "-e", events, "--", CALIB)
    for k in (1, 10, 1000, 1000000):
        line = f"calib: region of {k} user instructions counted {k}"
        assert len(re.findall(rf"^\[rank \d\] {line}$", seven.stdout, re.M)) == 7, seven.stdout
    counts = per_cpu(seven)
    for e in ("INSTRUCTIONS_EXECUTED:u", "DATA_READ:u"):
        assert [counts[(cpu, e)] for cpu in range(1, 8)] == [total(one, e)] * 7, seven.stderr


def test_cycles_and_instructions_of_a_longer_program_are_each_cpus_own(card):
    """matmul on three CPUs at once: instructions:u exactly the one-CPU run's on each;
    and on two CPUs of different cores at once, each CPU's user cycles within 5 % of the
    one-CPU run's, not twice them, and its kernel cycles a small share beside them.
    (Threads of one core share its issue turns: docs/design.md §11, test_timing_model.)
    Cycles are not exact run to run: a core's L2 keeps lines of its last run (CPU 5's core,
    idle between runs, ~1,200 -> ~400 L2 read misses over three runs, 2 % of the user
    cycles), and the kernel's cycles (its start-up, the host's requests served on the
    task's CPU at host-timed points) were 0.3-0.9 million of ~9.8 million in one session."""
    # Apart: the program prints its region's counts at exit, and printf's instructions depend on the digits.
    one = pmuctl(card, "stat", "-C", "1", "-e", "instructions:u", "--", MATMUL, "32")
    three = per_cpu(pmuctl(card, "stat", "-A", "-C", "1-3", "-e", "instructions:u", "--", MATMUL, "32"))
    one_cycles = pmuctl(card, "stat", "-C", "1", "-e", "cycles:u,cycles:k", "--", MATMUL, "32")
    two = per_cpu(pmuctl(card, "stat", "-A", "-C", "1,5", "-e", "cycles:u,cycles:k", "--", MATMUL, "32"))
    insns, user = total(one, "instructions:u"), total(one_cycles, "cycles:u")
    for cpu in (1, 2, 3):
        assert three[(cpu, "instructions:u")] == insns, (three, insns)
    for cpu in (1, 5):
        assert abs(two[(cpu, "cycles:u")] - user) < 0.05 * user, (two, user)
        assert 0 < two[(cpu, "cycles:k")] < 0.15 * user, (two, user)


def test_multiplexed_counts_on_seven_cpus_are_each_cpus_own(card):
    """Four events on two counters, seven CPUs at once: each CPU's scaled counts are
    within the multiplexing's own error (that of the one-CPU run, at most 3 %) of
    the exact counts of one CPU, which two runs of two events give."""
    events = ["instructions:u", "DATA_READ:u", "DATA_WRITE:u", "BRANCHES:u"]
    exact = {}
    for pair in (events[:2], events[2:]):
        p = pmuctl(card, "stat", "-C", "1", "-e", ",".join(pair), "--", STEADY, "4000")
        exact.update({e: total(p, e) for e in pair})
    one = pmuctl(card, "stat", "-C", "1", "-e", ",".join(events), "--", STEADY, "4000")
    err = max(abs(total(one, e) - exact[e]) / exact[e] for e in events)
    assert err < 0.03, one.stderr
    seven = per_cpu(pmuctl(card, "stat", "-A", "-C", "1-7", "-e", ",".join(events), "--", STEADY, "4000"))
    for cpu in range(1, 8):
        for e in events:
            assert abs(seven[(cpu, e)] - exact[e]) <= max(2 * err, 0.01) * exact[e], (cpu, e, seven, exact)


def test_record_on_three_cpus_samples_each_cpus_own_events(card, tmp_path):
    """Must-show 2: `record -C 1-3` of `calib rank 1000000` (3, 6 and 9 million
    instructions: a different amount of work on each CPU): each CPU's samples are
    its own count / period (±1), most of them in its own region's loop."""
    period = 10000  # 3 CPUs at once: each under the card's PMI limit (125,000/s of TSC time) at 10^5 samples/s
    counts = per_cpu(pmuctl(card, "stat", "-A", "-C", "1-3", "-e", "instructions:u", "--", CALIB, "rank", "1000000"))
    data, perf = tmp_path / "rank.data", tmp_path / "rank.perf"
    rec = pmuctl(card, "record", "-C", "1-3", "-e", "instructions:u", "-c", str(period), "-o", str(data), "--",
                 CALIB, "rank", "1000000")
    # Under a loaded host the drain can fall behind and the card drops the newest samples, counted as lost
    # (once a 598 of 600 here): those a CPU lacks are among them.
    lost = int(re.search(r"\[ pmuctl record: \d+ samples, (\d+) lost", rec.stderr)[1])
    subprocess.run([PMUCTL, "report", "-i", str(data), f"--to-perf={perf}"], check=True, capture_output=True)
    script = subprocess.run(["perf", "script", "-i", str(perf), "-F", "cpu,ip"], capture_output=True, text=True,
                            check=True).stdout
    # The region's loop is in main (calib.c's ranked(), inlined): its address range from the symbol table.
    nm = subprocess.run(["nm", "-S", CALIB], capture_output=True, text=True, check=True).stdout
    start, size = (int(x, 16) for x in re.search(r"^([0-9a-f]+) ([0-9a-f]+) T main$", nm, re.M).groups())
    for cpu in (1, 2, 3):
        ips = [int(ip, 16) for ip in re.findall(rf"^\s*\[{cpu:03d}\]\s+([0-9a-f]+)$", script, re.M)]
        want = counts[(cpu, "instructions:u")] // period
        # A Ring-3 PMI can come more than a period late (the slack, docs/design.md §5.2): then one
        # sample stands for two wraps. Seen: CPU 3 short by 2 or 3 of 900 in about one run of four of
        # this module, 0 lost; which stretch's slack grew so far is not known. At most 1 % short.
        assert want - 1 - lost - want // 100 <= len(ips) <= want + 1, (cpu, len(ips), lost, counts, rec.stderr[-300:])
        assert sum(start <= ip < start + size for ip in ips) > 0.9 * len(ips), cpu


@pytest.fixture(scope="module")
def tsc_card():
    """A card without the plugin: the model counts by the TSC, which every CPU advances."""
    c = Card(cpus=4, timeout=120, env={"PLUGIN": "0"})
    yield c
    c.close()


NOTE = "includes other CPUs' instructions: no per-thread clock without the QEMU plugin"


def test_without_the_plugin_counts_that_include_other_threads_say_so(tsc_card):
    """Must-show 3: PLUGIN=0, where a thread's count cannot be its own while others
    run: a multi-CPU stat marks every count, in the table, -x and --json, and the
    shell's `pmu read` marks them too; a single-CPU stat marks none."""
    card = tsc_card
    info = pmuctl(card, "info")
    assert re.search(r"^per-thread no\b", info.stdout, re.M), info.stdout
    one = pmuctl(card, "stat", "-C", "1", "-e", "instructions:u,cycles", "--", CALIB, "rank")
    assert NOTE not in one.stderr + one.stdout, one.stderr
    assert total(one, "instructions:u") > 0
    three = pmuctl(card, "stat", "-A", "-C", "1-3", "-e", "instructions:u,cycles", "--", CALIB, "rank")
    lines = [l for l in three.stderr.splitlines() if l.startswith("CPU")]
    assert len(lines) == 6 and all(l.endswith(f"({NOTE})") for l in lines), three.stderr
    csv = pmuctl(card, "stat", "-x,", "-A", "-C", "1-3", "-e", "instructions:u", "--", CALIB, "rank")
    rows = [l for l in csv.stderr.splitlines() if l.startswith("CPU")]
    assert len(rows) == 3 and all(l.split(",")[-1] == NOTE for l in rows), csv.stderr
    js = pmuctl(card, "stat", "--json", "-A", "-C", "1-3", "-e", "instructions:u", "--", CALIB, "rank")
    objs = [json.loads(l) for l in js.stderr.splitlines() if l.startswith("{")]
    assert len(objs) == 3 and all(o["note"] == NOTE for o in objs), js.stderr
    out = card.cmd("pmu read 1-3")
    rows = [l for l in out.splitlines() if "INSTRUCTIONS_EXECUTED" in l]
    assert len(rows) == 3 and all(l.endswith(f"({NOTE})") for l in rows), out
    single = pmuctl(card, "stat", "-C", "2", "-e", "instructions:u", "--", CALIB, "rank")
    assert NOTE not in single.stderr, single.stderr
    out = card.cmd("pmu read 2")
    assert "INSTRUCTIONS_EXECUTED" in out and NOTE not in out, out
