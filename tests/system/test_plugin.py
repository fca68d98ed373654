"""The QEMU plugin (build/pmuos-pmu.so, issue 13): every event it counts, over
a program whose count is known (memtest: user/programs/memtest.c running
user/measured.c in SPFLT regions; vectest, memtest with `vec`, for the VPU's
stand-in), and the comparisons with valgrind on the same object code
(memtest's Linux twin, build/test/memtest-linux).

The reference is valgrind's callgrind with its cache simulation:
    valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64
             --D1=32768,8,64 --LL=524288,8,64 --toggle-collect=FUNCTION
(LRU, write-allocate; it counts the events of FUNCTION and what it calls).
A memtest region also holds the CALL of the function (one write, the
return address) and the SPFLT that ends it; the counts below say so.

One card with 8 CPUs (2 cores of 4 threads), on the strict KNC CPU, serves
the tests: CPU 1 is on core 0 with the shell's CPU 0, CPU 4 on core 1. The
VPU tests run vectest (SSE2, QEMU-only) on a card of their own on QEMU's
full CPU (conftest FULL_CPU). With PLUGIN=0 in the
environment (`make test PLUGIN=0`) the tests that need the plugin are
skipped."""
import os
import re
import struct
import subprocess

import pexpect
import pytest

from conftest import BUILD, PLUGIN, plugin_card

LINUX_TWIN = os.path.join(BUILD, "test", "memtest-linux")
MEMTEST_ELF = os.path.join(BUILD, "user", "memtest.elf")
VALGRIND = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64",
            "--LL=524288,8,64"]


@pytest.fixture(scope="module")
def card():
    c = plugin_card(cpus=8, timeout=120)
    yield c
    c.close()


@pytest.fixture(scope="module")
def vpu_card():
    """The VPU tests' card: QEMU's full CPU, whose SSE stands in for the VPU."""
    c = plugin_card(cpus=4, timeout=120, cpu="max")
    yield c
    c.close()


def counters(card, cpu, ev0, ev1, spflt):
    """Counters 0 and 1 of `cpu` on ev0 and ev1 (None: free), gated by SPFLT
    ("both") or not ("off"), started at 0."""
    for ctr, ev in ((0, ev0), (1, ev1)):
        out = card.cmd(f"pmu set {cpu} {ctr} {ev or 'none'}")
        assert not out.startswith("error"), out
    card.cmd(f"pmu spflt {cpu} {spflt}")
    card.cmd(f"pmu start {cpu}")
    card.cmd(f"pmu clear {cpu}")


def run(card, args, cpu):
    program = "vectest" if args.startswith("vec ") else "memtest"  # vec is vectest's alone
    out = card.cmd(f"run {program} {args} on {cpu}", timeout=120)
    assert "exit status 0" in out, out
    return out


def region(card, cpu, ev0, ev1, args):
    """Runs `memtest ARGS` (`vectest vec N`) on `cpu` with counters 0 and 1 on
    ev0 and ev1, gated by the program's SPFLT regions; returns what they
    counted over the regions."""
    counters(card, cpu, ev0, ev1, "both")
    m = re.search(r"(?:memtest|vectest): counter0 +(\d+) counter1 +(\d+)", run(card, args, cpu))
    return int(m[1]), int(m[2])


def whole_run(card, cpu, event, args, where=None):
    """What counter 0 of CPU `where` (default: `cpu`) counted of `event` over a
    whole run of `memtest ARGS` on `cpu` (no SPFLT gating)."""
    where = cpu if where is None else where
    counters(card, where, event, None, "off")
    run(card, args, cpu)
    m = re.search(rf"^\s*{where}\s+0\s+\S+\s+(\d+)\s", card.cmd(f"pmu read {where}"), re.M)
    card.cmd(f"pmu set {where} 0 none")
    return int(m[1])


def valgrind(args, function):
    """callgrind's event totals for `function` of the Linux twin run with memtest's ARGS."""
    out = f"/tmp/pmuos-callgrind-{os.getpid()}.out"
    try:
        p = subprocess.run(VALGRIND + [f"--toggle-collect={function}", f"--callgrind-out-file={out}",
                                       LINUX_TWIN] + args.split(), capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        text = open(out).read()
    finally:
        if os.path.exists(out):
            os.unlink(out)
    events = re.search(r"^events: (.*)$", text, re.M)[1].split()
    summary = [int(v) for v in re.search(r"^summary: (.*)$", text, re.M)[1].split()]
    return dict(zip(events, summary))


def symbol(name):
    """Address of a symbol of memtest.elf."""
    out = subprocess.run(["nm", MEMTEST_ELF], capture_output=True, text=True, check=True).stdout
    return int(re.search(rf"^([0-9a-f]+) \w {name}$", out, re.M)[1], 16)


# ---- must show 1: loads and stores equal valgrind's ----

def loads_and_stores_equal_valgrinds(card, args, function):
    reads, writes = region(card, 1, "DATA_READ:u", "DATA_WRITE:u", args)
    vg = valgrind(args, function)
    # Integer code: exactly callgrind's data reads (Dr) and writes (Dw), plus the CALL's
    # write of its return address. vec: SSE2 16-byte accesses, which QEMU performs as two
    # 8-byte ones, still one read or write each, as for callgrind.
    assert (reads, writes) == (vg["Dr"], vg["Dw"] + 1), (reads, writes, vg)
    both, _ = region(card, 1, "DATA_READ_OR_WRITE:u", None, args)
    assert both == reads + writes


@pytest.mark.parametrize("args,function", [
    ("ops 1024", "ms_ops"), ("ops 4096", "ms_ops"), ("walk 16384 8 2", "ms_walk"), ("store 16384 8 2", "ms_store"),
])
def test_loads_and_stores_equal_valgrinds(card, args, function):
    loads_and_stores_equal_valgrinds(card, args, function)


def test_vector_loads_and_stores_equal_valgrinds(vpu_card):
    loads_and_stores_equal_valgrinds(vpu_card, "vec 1024", "ms_vec")


def test_read_modify_write_counts_a_read_and_a_write(card):
    # ADD to memory: QEMU reads, then writes the word; callgrind counts such a "modify"
    # as one write (Dw) only. So DATA_READ is callgrind's Dr plus one per such instruction.
    n = 1024
    reads, writes = region(card, 1, "DATA_READ:u", "DATA_WRITE:u", f"rmw {n}")
    vg = valgrind(f"rmw {n}", "ms_rmw")
    assert (reads, writes) == (vg["Dr"] + n, vg["Dw"] + 1), (reads, writes, vg)


# ---- must show 2: L1 data misses within 1 %, L2 misses within 2 % of valgrind's ----

SIZES = (16 << 10, 256 << 10, 4 << 20)
PATTERNS = {
    "sequential": lambda size: f"walk {size} 8 2",
    "64-byte strided": lambda size: f"walk {size} 64 2",
    "4-KiB strided": lambda size: f"walk {size} 4096 2",
    "random": lambda size: f"random {size} 32768",
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_read_misses_match_valgrind(card, pattern, size):
    args = PATTERNS[pattern](size)
    vg = valgrind(args, "ms_random" if pattern == "random" else "ms_walk")
    # callgrind D1mr: L1 data read misses; DLmr: last-level data read misses. One core,
    # so every L2 miss is filled from memory.
    close = lambda l1, l2: abs(l1 - vg["D1mr"]) <= 0.01 * vg["D1mr"] and abs(l2 - vg["DLmr"]) <= 0.02 * vg["DLmr"]
    # The kernel's own work on the core during a region (the service CPU's timer, whose
    # phase against the region follows the host's timing of each shell line) evicts lines
    # of the program's: misses valgrind, simulating the program alone, cannot see, and only
    # ever more of them. 16 KiB random has 256 misses, so a few such lines are over 1 %
    # (seen once in a full `make test`: 261; in 150 runs of that region, the 2 that
    # missed 258 times had 1,583 kernel instructions in the region, not 681, the two
    # SPFLTs' emulation). The least of up to three runs is the program's own.
    runs = []
    while len(runs) < 3:
        runs.append(region(card, 1, "L2_DATA_READ_MISS_MEM_FILL:u", "DATA_READ_MISS:u", args))
        l2, l1 = min(r[0] for r in runs), min(r[1] for r in runs)
        if close(l1, l2):
            break
    assert abs(l1 - vg["D1mr"]) <= 0.01 * vg["D1mr"], (pattern, size, runs, vg)
    assert abs(l2 - vg["DLmr"]) <= 0.02 * vg["DLmr"], (pattern, size, runs, vg)


@pytest.mark.parametrize("args", ["store 262144 64 2", "store 4194304 4096 1"])
def test_write_misses_match_valgrind(card, args):
    l2, l1 = region(card, 1, "L2_DATA_WRITE_MISS_MEM_FILL:u", "DATA_WRITE_MISS:u", args)
    vg = valgrind(args, "ms_store")
    # Write-allocate on both sides: a write miss fetches the line (a read for ownership here).
    assert abs(l1 - vg["D1mw"]) <= 0.01 * vg["D1mw"], (l1, vg)
    assert abs(l2 - vg["DLmw"]) <= 0.02 * vg["DLmw"], (l2, vg)
    either, _ = region(card, 1, "DATA_READ_MISS_OR_WRITE_MISS:u", None, args)
    reads, _ = region(card, 1, "DATA_READ_MISS:u", None, args)
    assert either == l1 + reads


def test_l2_read_miss_is_data_and_code(card):
    args = "walk 262144 64 1"
    misses, _ = region(card, 1, "L2_READ_MISS:u", None, args)
    vg = valgrind(args, "ms_walk")
    # The buffer's lines and ms_walk's one line of code (the scratch buffer evicted both).
    assert misses == vg["DLmr"] + vg["ILmr"] == 4096 + 1, (misses, vg)


# ---- the same region, the same counts, whatever the host does (issue 23.9) ----

def pmuctl_region(card, cpu, events, args):
    """pmuctl stat --spflt of `memtest ARGS` on `cpu` (pmuctl polls the card meanwhile): {event: count}."""
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card.name, "stat", "--spflt", "-C", str(cpu), "-e",
                        ",".join(events), "-x", ",", "--", MEMTEST_ELF] + args.split(),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return {m[2]: int(m[1]) for m in re.finditer(r"^(\d+),[^,]*,([\w:]+),", p.stderr, re.M)}


def test_counts_are_the_same_while_the_host_pings(card):
    # A 4 MiB scattered walk, run again and again while a second pmuctl pings the card
    # without a pause. Before: every doorbell the walk's CPU took added 3 reads and 5
    # writes (QEMU reported its interrupt delivery's accesses as an instruction's,
    # plugin/exec.c executing), and the host's requests served inside the region evicted
    # the walk's lines (mailbox/service.c): +30 to +654 reads, +50 to +1,090 writes and a
    # few misses more, different in every run. CPU 1 shares core 0 (its caches) with CPU 0.
    args = "random 4194304 200000"
    pinger = subprocess.Popen([os.path.join(BUILD, "pmuctl"), "--card", card.name, "ping", "1000000", "0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runs = [pmuctl_region(card, 1, ["DATA_READ:u", "DATA_WRITE:u"], args) for _ in range(3)]
        runs += [pmuctl_region(card, 1, ["DATA_READ_MISS:u", "DATA_READ:u"], args) for _ in range(3)]
        assert pinger.poll() is None, "the second client stopped pinging"
    finally:
        pinger.kill()
        pinger.wait()
    vg = valgrind(args, "ms_random")
    reads = {r["DATA_READ:u"] for r in runs}
    writes = {r["DATA_WRITE:u"] for r in runs[:3]}
    misses = {r["DATA_READ_MISS:u"] for r in runs[3:]}
    assert (reads, writes) == ({vg["Dr"]}, {vg["Dw"] + 1}), (runs, vg)  # + the CALL's return address
    assert len(misses) == 1, runs
    assert abs(misses.pop() - vg["D1mr"]) <= 0.01 * vg["D1mr"], (runs, vg)


# ---- code ----

def test_code_reads_and_misses(card):
    # ms_nops: 16384 NOPs, XOR, RET from a 4 KiB boundary. The region: the CALL, those
    # 16386 instructions, and the SPFLT that ends it, which is fetched (CODE_READ) while
    # INSTRUCTIONS_EXECUTED has stopped (its #UD).
    reads, insns = region(card, 1, "CODE_READ:u", "INSTRUCTIONS_EXECUTED:u", "nops")
    assert (reads, insns) == (16388, 16387)
    assert valgrind("nops", "ms_nops")["Ir"] == 16386
    # 16 KiB of code is 256 lines, and the XOR and RET a 257th; the scratch buffer evicted
    # them from the L2, and with it from the L1I (inclusion).
    l2, l1 = region(card, 1, "L2_CODE_READ_MISS_MEM_FILL:u", "CODE_CACHE_MISS:u", "nops")
    assert (l2, l1) == (257, 257)


def test_code_page_walks(card):
    # Pages of ms_nops that no code ran on before the region: its own 4, except the one
    # with its RET if that holds ms_fill too (which ran before the region). Code runs in
    # one 2 MiB region, walked once when the task starts: no long walk in the region.
    start, fill = symbol("ms_nops"), symbol("ms_fill")
    pages = {a >> 12 for a in range(start, start + 16387)} - {fill >> 12}
    long_walks, walks = region(card, 1, "LONG_CODE_PAGE_WALK:u", "CODE_PAGE_WALK:u", "nops")
    assert (long_walks, walks) == (0, len(pages))
    # Over the whole run: the first instruction after the task's CR3 load misses both TLBs.
    assert whole_run(card, 1, "LONG_CODE_PAGE_WALK:u", "nops") == 1


# ---- data TLB ----

def test_data_page_walks(card):
    # A 4 MiB buffer, 2 MiB-aligned, never touched: 1024 pages, each a walk; two 2 MiB
    # regions, each a long walk. One more walk: the RET reads the stack, whose page the
    # 1024 new ones evicted from the 64-entry TLB.
    long_walks, walks = region(card, 1, "LONG_DATA_PAGE_WALK:u", "DATA_PAGE_WALK:u", "tlb")
    assert (long_walks, walks) == (2, 1025)


# ---- branches ----

@pytest.mark.parametrize("n", [1000, 5000])
def test_branches_and_mispredictions(card, n):
    # ms_branches(n): n times JZ (alternating taken / not taken) and JNZ (taken but the
    # last time), plus the region's CALL and RET: 2n + 2 branches. The BTB (plugin/bpred.h):
    # the JZ's first run allocates it, each later one is mispredicted (n - 1); the JNZ
    # is mispredicted once, at the loop's end; the CALL and RET run once (BTB misses).
    branches, wrong = region(card, 1, "BRANCHES:u", "BRANCHES_MISPREDICTED:u", f"branches {n}")
    assert (branches, wrong) == (2 * n + 2, n)


# ---- the VPU's stand-ins ----

def test_vector_events(vpu_card):
    # ms_vec: n times MOVAPD load, ADDPD from memory, MOVAPD store, 2 doubles each, over
    # a and b of 16 n bytes each, out of the caches: the loads miss once per line
    # (4 operands a line, a and b: n / 2), the stores hit the lines the ADDPD read.
    card, n = vpu_card, 1024
    assert region(card, 1, "VPU_INSTRUCTIONS_EXECUTED:u", "VPU_ELEMENTS_ACTIVE:u", f"vec {n}") == (3 * n, 6 * n)
    assert region(card, 1, "VPU_DATA_READ:u", "VPU_DATA_WRITE:u", f"vec {n}") == (2 * n, n)
    assert region(card, 1, "VPU_DATA_READ_MISS:u", "VPU_DATA_WRITE_MISS:u", f"vec {n}") == (n // 2, 0)


# ---- L2 hits, write-backs: one core ----

def test_l2_hits_and_write_backs(card):
    # 256 KiB = 4096 lines, 8 times the L1D: each pass after the first misses the L1D in
    # every line and hits the L2. So one more pass adds exactly 4096 hits, in state E
    # (read from memory by the first pass), M (`keep`: written before the region), or,
    # for writes, L2_WRITE_HIT (a read for ownership that hits).
    def more(event, args):
        return region(card, 1, event, None, args.format(3))[0] - region(card, 1, event, None, args.format(2))[0]
    assert more("L2_READ_HIT_E:u", "walk 262144 64 {}") == 4096
    assert more("L2_READ_HIT_M:u", "walk 262144 64 {} keep") == 4096
    assert more("L2_WRITE_HIT:u", "store 262144 64 {}") == 4096
    # Writing 1024 lines more (well past the L1D's 512) writes back 1024 dirty lines more.
    # Both regions also evict every line the L1D held when they began, the dirty ones
    # written back: the scratch buffer's, and a handful the kernel wrote (the RDPMC
    # emulation's, an interrupt's), which is why the difference may be a few lines off.
    small, _ = region(card, 1, "DATA_CACHE_LINES_WRITTEN_BACK:u", None, "store 65536 64 1")
    large, _ = region(card, 1, "DATA_CACHE_LINES_WRITTEN_BACK:u", None, "store 131072 64 1")
    assert abs(large - small - 1024) <= 16 and small >= 1024 - 512, (small, large)


# ---- two cores: MESI and snoops ----

def test_lines_from_the_other_core(card):
    # The loader (on CPU 0, core 0) zeroed the task's stack last, so the 64 KiB below
    # memtest's frame are M in core 0's L2 and untouched by the task on CPU 4 (core 1).
    fills, l1 = region(card, 4, "L2_DATA_READ_MISS_CACHE_FILL:u", "DATA_READ_MISS:u", "stack 65536 1")
    assert fills == 1024 and l1 == 1024 + 1  # + the RET's stack line, which the walk evicted
    hits_s, _ = region(card, 4, "L2_READ_HIT_S:u", None, "stack 65536 2")
    assert hits_s == 1024  # the second pass: both cores hold the lines S now
    upgrades, _ = region(card, 4, "L2_WRITE_HIT:u", None, "stack 65536 1 write")
    assert upgrades == 1024  # writes to S lines: ownership from the L2, core 0's copies invalidated
    rfo_fills, _ = region(card, 4, "L2_DATA_WRITE_MISS_CACHE_FILL:u", None, "stackstore 65536")
    assert rfo_fills == 1024


@pytest.mark.parametrize("event,args", [("SNP_HITM_L2", "stackstore 65536"), ("SNP_HIT_L2", "stack 65536 1 write")])
def test_snoops_seen_by_the_other_core(card, event, args):
    # Core 0's threads (here the halted CPU 1) see every snoop of its L2: the task's 1024
    # (HITM: the lines it takes from core 0's M copies; HIT: its ownership requests for
    # lines both hold S), plus those of the kernel's own work on CPU 4 (a few dozen).
    snoops = whole_run(card, 4, event, args, where=1)
    assert 1024 <= snoops <= 1024 + 128, snoops


def test_kernel_code_from_the_other_core(card):
    # Kernel code core 0 ran last (the loader's, on CPU 0) is in its L2; core 1's L2 is
    # emptied first (memtest's 1 MiB scratch buffer, on CPU 5): the kernel on CPU 4 then
    # fetches some of that code from core 0's L2. No user code can come from there: each
    # launch has its own copy of its program (docs/design.md §6).
    run(card, "walk 64 8 1", 5)
    assert whole_run(card, 4, "L2_CODE_READ_MISS_CACHE_FILL:k", "branches 2") > 0


# ---- the counting rules on plugin events ----

def test_cmask_inv_edge(card):
    # The plugin's cycle is an instruction (plugin/count.h). ms_ops: every reading
    # instruction reads one word.
    reads_ops, c1 = region(card, 1, "DATA_READ:u", "DATA_READ:u:c=1", "ops 1024")
    assert c1 == reads_ops
    c2, inv = region(card, 1, "DATA_READ:u:c=2", "DATA_READ:u:c=1:i", "ops 1024")
    code, _ = region(card, 1, "CODE_READ:u", None, "ops 1024")
    assert c2 == 0 and inv == code - reads_ops
    # ms_walk's loop reads once in 6 instructions: each read starts a run of reading instructions.
    reads, edges = region(card, 1, "DATA_READ:u", "DATA_READ:u:e", "walk 16384 8 2")
    assert edges == reads
    # A region's OS share: the kernel's SPFLT emulation while USER_PREF is 1 (after it
    # sets it, before it clears it). Same run: all levels = USR (as above) + OS.
    os_reads, all_reads = region(card, 1, "DATA_READ:k", "DATA_READ", "ops 1024")
    assert os_reads > 0 and all_reads == reads_ops + os_reads


def test_sampling_a_plugin_event(card):
    # A counter of a plugin event samples: its PMIs come at the next kernel entry or poll
    # after the wrap (pmu/model/backend.c), the reload keeps what was counted since, so samples
    # are exactly a period apart and the total stays exact.
    counters(card, 1, "DATA_READ:u period=10000", "DATA_READ:u", "off")
    run(card, "walk 4194304 8 1", 1)
    rows = {int(m[1]): (int(m[2]), m[3]) for m in
            re.finditer(r"^\s*1\s+(\d)\s+DATA_READ:u\s+(\d+)\s+(\d+|-)", card.cmd("pmu read 1"), re.M)}
    (count, samples), (reads, _) = rows[0], rows[1]
    assert count == reads and int(samples) == count // 10000 and count >= 524288, rows
    out = card.cmd("pmu samples 1 50")
    walk = symbol("ms_walk")
    rips = [int(m[1], 16) for m in re.finditer(r"^\d+\s+(0x[0-9a-f]+)\s+3\s", out, re.M)]
    assert len(rips) == 50 and all(walk <= r < walk + 64 for r in rips), out
    card.cmd("pmu set 1 0 none")
    card.cmd("pmu set 1 1 none")


def test_record_a_plugin_event_from_the_host(card, tmp_path):
    # The example: pmuctl records data-read misses of chase, whose pointer-chasing
    # loop (and the shuffle before it) are in main; nearly every read there misses.
    card.cmd("pmu spflt 1 off")
    data = tmp_path / "chase.data"
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card.name, "record", "-e", "DATA_READ_MISS",
                        "-c", "1000", "-o", str(data), "--", os.path.join(BUILD, "user", "chase.elf")],
                       capture_output=True, text=True, timeout=300)
    # A plugin event's wraps are taken at the overflow timer's polls (SHARE_POLL_TICKS apart,
    # pmu/model/backend.c) or at a kernel entry, whichever comes first; several wraps between two
    # make one sample. chase runs about 100 polls long; host-timed entries (pmuctl's status
    # polls, doorbells) add a few more, fewer on a loaded host (exactly 100 seen under load).
    m = re.search(r"\[ pmuctl record: (\d+) samples, 0 lost", p.stderr)
    assert p.returncode == 0 and m and int(m[1]) >= 90, p.stderr
    rep = subprocess.run([os.path.join(BUILD, "pmuctl"), "report", "-i", str(data)], capture_output=True, text=True)
    rows = re.findall(r"^\s+([\d.]+)%\s+(\S+)$", rep.stdout, re.M)
    assert rows and rows[0][1] == "main" and float(rows[0][0]) > 50, rep.stdout


# ---- without the plugin, and the plugin's own checks ----

def test_without_the_plugin_the_events_are_not_counted(card_factory):
    c = card_factory(cpus=4, env={"PLUGIN": "0"})
    assert re.search(r"^plugin\s+no", c.cmd("pmu info"), re.M)
    assert "does not count this event" in c.cmd("pmu set 1 0 DATA_READ:u")
    c.cmd("pmu start 1")
    c.cmd("run memtest ops 64 on 1")
    assert re.search(r"^\s*1\s+0\s+DATA_READ:u\s+<not counted>", c.cmd("pmu read 1"), re.M)


def test_translation_cache_matches_qemus(card_factory):
    # verify=on: the plugin checks each cached translation against QEMU's; the page's
    # header counts the checks and the mismatches (include/pmuos/pmushare.h).
    if not PLUGIN:
        pytest.skip("PLUGIN=0: QEMU runs without the plugin")
    c = card_factory(cpus=4, env={"PLUGIN_ARGS": "verify=on"})
    for args in ("random 4194304 20000", "stack 65536 1 write", "ops 64"):
        assert "exit status 0" in c.cmd(f"run memtest {args} on 1", timeout=120)
    assert "exit status 0" in c.cmd("run hello on 2")
    with open(f"/dev/shm/pmuos-{c.name}-pmu", "rb") as f:
        magic, _, _, _, _, insns, checks, mismatches = struct.unpack("<QIIIIQQQ", f.read(48))
    assert magic == 0x4548535f554d5050 and insns > 0
    assert checks > 100000 and mismatches == 0, (checks, mismatches)


def qemu_rss_mib(card):
    with open(f"/proc/{card.child.proc.pid}/status") as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)[1]) / 1024


def test_self_modifying_code_keeps_qemus_memory_bounded(card_factory):
    # smc (W+X, asked for with -z execstack) rewrites an immediate of a 400-instruction block each
    # round: each round is code QEMU has not seen, a new translation and a new block record. The
    # plugin frees its records when QEMU flushes its translation cache and asks for a flush at
    # 32 MiB of them (plugin/translate.c), so QEMU's memory stays within a bound while the program
    # runs (before: 80 to 600 MiB in 30 s); and counts stay exact across the flushes.
    if not PLUGIN:
        pytest.skip("PLUGIN=0: QEMU runs without the plugin")
    c = card_factory(cpus=4)
    exact = region(c, 1, "DATA_READ:u", "DATA_WRITE:u", "ops 64")
    assert "exit status 0" in c.cmd("run smc 2000 on 1", timeout=60)  # the records of everything else made
    start = qemu_rss_mib(c)
    c.child.send("run smc 120000 on 1\r")  # about 25 s on an idle host, 38 to over 45 on a loaded one
    samples, ended = [], False
    while not ended and len(samples) < 120:
        try:
            c.wait_prompt(1)
            ended = True
        except pexpect.TIMEOUT:
            samples.append(qemu_rss_mib(c))
    assert max(samples) - start <= 50, f"QEMU's RSS (MiB) from {start:.0f}: {[round(s) for s in samples]}"
    assert ended and len(samples) >= 10, samples  # done, after long enough to have grown by GiBs before
    assert region(c, 1, "DATA_READ:u", "DATA_WRITE:u", "ops 64") == exact
