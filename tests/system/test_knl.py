"""A card presenting as a Xeon Phi x200 (Knights Landing: `make run CPU=knl`,
scripts/qemu.sh): QEMU's TCG has no PMU and reports CPUID leaf 0xA as zeros,
so the model backend presents KNL's architectural perfmon (pmu/arch/regs.h:
version 3, 2 counters of 40 bits, 3 fixed ones counting in Ring 3), at the
architectural MSRs, counting the architectural events INST_RETIRED (0xC0)
and UNHALTED_CORE_CYCLES (0x3C); pmuctl takes libpfm4's knl names on it.
What only KNL silicon can show (its own events, the arch backend's RDMSRs)
is not tested here."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, Card, pmuctl_ok as pmuctl

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")


@pytest.fixture(scope="module")
def knl():
    c = Card(cpus=4, cpu="knl")
    yield c
    c.close()


FIXED = ("INST_RETIRED.ANY:u", "CPU_CLK_UNHALTED.THREAD:u", "CPU_CLK_UNHALTED.REF_TSC:u")  # KNL's, in Ring 3


def regions(stat_x):
    """The `-x,` region lines of a stat: {(region, event): count}, and the program's total per event."""
    per = {(m[1], m[3]): int(m[2]) for m in re.finditer(r"^(\w+),(\d+),,(\S+)$", stat_x, re.M) if m[3] != "calls"}
    total = {m[2]: int(m[1]) for m in re.finditer(r"^(\d+),,(\S+),\d+,[\d.]+$", stat_x, re.M)}
    return per, total


def test_info_names_knls_pmu_and_the_knc_cards_own(knl, card):
    out = pmuctl(knl, "info").stdout
    assert re.search(r"^backend\s+model$", out, re.M), out
    assert re.search(r"^pmu\s+Intel architectural perfmon \(Knights Landing's, modelled\), version 3: 2 counters "
                     r"of 40 bits per thread, 3 fixed of 40 bits in Ring 3, no SPFLT$", out, re.M), out
    assert re.search(r"^cycles\s+the PMU's; in QEMU the model's, one per instruction", out, re.M), out
    knc = pmuctl(card, "info").stdout
    assert re.search(r"^pmu\s+KNC core PMU: 2 counters of 40 bits per thread, SPFLT$", knc, re.M), knc


def test_events_are_libpfm4s_knl_ones(knl):
    """`pmuctl events` on the KNL card lists libpfm4's knl table (its codes from
    libpfm4, which the table's names are checked against here too) and perf's
    generic names as Linux's Intel core driver maps them; the card counts
    INST_RETIRED and UNHALTED_CORE_CYCLES, and the plugin the events it maps
    (test_the_plugin_counts_knls_events_as_knc_ones), and says not counted of the rest."""
    out = pmuctl(knl, "events").stdout
    rows = {m[1]: (int(m[2], 16), m[3]) for m in re.finditer(r"^(\S+)\s+0x([0-9a-f]{4})\s+(counted|not counted)", out, re.M)}
    assert rows["INSTRUCTION_RETIRED"] == (0xc0, "counted") and rows["UNHALTED_CORE_CYCLES"] == (0x3c, "counted"), out
    assert rows["BR_MISP_RETIRED"] == (0xc5, "counted") and rows["LLC_MISSES"] == (0x412e, "not counted"), out
    assert rows["instructions"] == (0xc0, "counted") and rows["cycles"] == (0x3c, "counted"), out
    assert "DATA_READ_MISS" not in rows and "INSTRUCTIONS_EXECUTED" not in rows, out  # KNC's
    p = subprocess.run([PMUCTL, "--card", knl.name, "stat", "-e", "INSTRUCTIONS_EXECUTED", "--",
                        os.path.join(USER, "hello.elf")], capture_output=True, text=True)
    assert p.returncode == 1 and "event 'INSTRUCTIONS_EXECUTED'" in p.stderr and "closest: " in p.stderr, p.stderr


def test_regions_read_with_rdpmc_count_as_on_knc(knl, card):
    """KNL has no SPFLT: a program's named regions are read with RDPMC. The
    same program's regions count the same instructions as INST_RETIRED on the
    KNL card and as INSTRUCTIONS_EXECUTED on the KNC one, and cycles count as
    instructions (the model's: no timing model for this PMU), counted in one
    run. The totals of runs with other events differ: the library writes each
    event's name, as the card's table gives it, into the region lines, and
    "INSTRUCTION_RETIRED" is not "UNHALTED_CORE_CYCLES" or
    "INSTRUCTIONS_EXECUTED"."""
    prog = os.path.join(USER, "regions.elf")
    a, at = regions(pmuctl(knl, "stat", "-x,", "-e", "INSTRUCTION_RETIRED:u", "-C", "1", "--", prog).stderr)
    c, ct = regions(pmuctl(knl, "stat", "-x,", "-e", "r003c:u", "-C", "1", "--", prog).stderr)
    a = {(r, "r00c0:u"): v for (r, e), v in a.items() if e not in FIXED}  # libpfm4's name and the raw code alike
    at = {"r00c0:u": v for v in at.values()}
    b, bt = regions(pmuctl(card, "stat", "-x,", "-e", "INSTRUCTIONS_EXECUTED:u", "-C", "1", "--", prog).stderr)
    _, dt = regions(pmuctl(knl, "stat", "-x,", "-e", "INSTRUCTION_RETIRED:u,UNHALTED_CORE_CYCLES:u", "-C", "1", "--",
                           prog).stderr)
    assert dt["INSTRUCTION_RETIRED:u"] == dt["UNHALTED_CORE_CYCLES:u"] > 0 and at["r00c0:u"] > 0, (at, dt)
    assert ct["r003c:u"] > 0 and bt["INSTRUCTIONS_EXECUTED:u"] > 0, (bt, ct)
    for region in ("sum", "mix", "empty"):
        assert a[(region, "r00c0:u")] == b[(region, "INSTRUCTIONS_EXECUTED:u")] == c[(region, "r003c:u")], \
            (region, a, b, c)
    # per call: sum_words' 4096 loads and mix's 10,000 rounds, above the markers' cost (empty's)
    assert a[("sum", "r00c0:u")] > 4096 + a[("empty", "r00c0:u")] and a[("mix", "r00c0:u")] > 10000, a


def test_regions_read_the_fixed_counters_with_rdpmc(knl, card):
    """KNL's three fixed counters count in Ring 3 beside the general ones
    (pmu_fixed_setup) and a region reads them with RDPMC ECX 2^30 + j, around
    the general reads (user/regions.c): each call's fixed count is the
    general INSTRUCTION_RETIRED count plus the same marker instructions in
    every region, the empty one's per call, so the work they count is the
    same instructions exactly. In the model cycles and reference cycles
    count as instructions; stat's instructions and cycles agree with them.
    KNC has no fixed counters: its region lines are as before."""
    prog = os.path.join(USER, "regions.elf")
    out = pmuctl(knl, "stat", "-x,", "-e", "instructions:u,cycles:u", "-C", "1", "--", prog).stderr
    per, total = regions(out)
    calls = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+),(\d+),,calls$", out, re.M)}
    assert total["instructions:u"] == total["cycles:u"] > 0, total
    fixed = {r: [per[(r, f)] for f in FIXED] for r in calls}
    assert all(len(set(v)) == 1 for v in fixed.values()), fixed
    general = {r: per[(r, "instructions:u")] for r in calls}
    marks = fixed["empty"][0] - general["empty"]
    assert marks > 0 and marks % calls["empty"] == 0, (fixed, general)
    for r in ("sum", "mix"):
        assert fixed[r][0] - general[r] == marks // calls["empty"] * calls[r], (r, fixed, general, calls)
    knc = subprocess.run([PMUCTL, "--card", card.name, "run", "-C", "1", "--", prog], capture_output=True,
                         text=True, timeout=60)
    lines = re.findall(r"^region \w+: .*$", knc.stdout, re.M)
    assert len(lines) == 3 and all(re.fullmatch(r"region \w+: calls \d+, \S+ \d+, \S+ \d+, tsc \d+", l)
                                   for l in lines), knc.stdout


# KNL's events the plugin counts, each beside the KNC event it is counted as (pmu/plugin_events.h KNL_PLUGIN_EVENTS)
KNL_AS_KNC = {"BR_INST_RETIRED:ANY": "BRANCHES", "BR_MISP_RETIRED:ANY": "BRANCHES_MISPREDICTED",
              "MEM_UOPS_RETIRED:ALL_LOADS": "DATA_READ", "MEM_UOPS_RETIRED:ALL_STORES": "DATA_WRITE",
              "MEM_UOPS_RETIRED:L1_MISS_LOADS": "DATA_READ_MISS", "ICACHE:MISSES": "CODE_CACHE_MISS"}


def region_counts(card, events, *program):
    """{event: count} of the program's one region on CPU 1 (`stat -x,`)."""
    out = pmuctl(card, "stat", "-x,", "-e", ",".join(events), "-C", "1", "--", *program).stderr
    return {m[2]: int(m[1]) for m in re.finditer(r"^\w+,(\d+),,(\S+)$", out, re.M) if m[2] in events}


def test_the_plugin_counts_knls_events_as_knc_ones(knl, card):
    """On a KNL card the plugin counts branches, their mispredictions, loads, stores, L1D read misses
    and L1I misses under KNL's names (libpfm4's knl codes, translated to the plugin's events), each
    equal to the KNC event it shares a definition with on a KNC card, for the same program (the misses
    within a few lines, below): a chase
    through 256 KiB (4 loads a step, most missing the 32 KiB L1D, both cards' geometry) and pipes'
    chain (one branch an iteration). pmuctl events says which unit masks are counted."""
    for program in ((os.path.join(USER, "chase.elf"), "32768"), (os.path.join(USER, "pipes.elf"), "chain", "2000")):
        for pair in (("BR_INST_RETIRED:ANY", "BR_MISP_RETIRED:ANY"),
                     ("MEM_UOPS_RETIRED:ALL_LOADS", "MEM_UOPS_RETIRED:L1_MISS_LOADS"),
                     ("MEM_UOPS_RETIRED:ALL_STORES", "ICACHE:MISSES")):
            k = region_counts(knl, [e + ":u" for e in pair], *program)
            c = region_counts(card, [KNL_AS_KNC[e] + ":u" for e in pair], *program)
            assert len(k) == len(c) == 2, (program, k, c)
            for e in pair:
                mine, theirs = k[e + ":u"], c[KNL_AS_KNC[e] + ":u"]
                # the instructions' own events exactly; misses within a few lines: the kernel's emulation of the
                # KNL region's fixed-counter RDPMCs (KNC has none) leaves lines of its own in the caches
                slack = 0 if "MISS" not in KNL_AS_KNC[e] else 8 + theirs // 1000
                assert abs(mine - theirs) <= slack, (program, e, k, c)
    chase = region_counts(knl, ["MEM_UOPS_RETIRED:ALL_LOADS:u", "MEM_UOPS_RETIRED:L1_MISS_LOADS:u"],
                          os.path.join(USER, "chase.elf"), "32768")
    assert chase["MEM_UOPS_RETIRED:L1_MISS_LOADS:u"] > chase["MEM_UOPS_RETIRED:ALL_LOADS:u"] // 2 > 65536, chase
    listed = dict(re.findall(r"^(\S+)\s+0x[0-9a-f]{4}\s+(counted|not counted)\s", pmuctl(knl, "events").stdout, re.M))
    assert all(listed[e] == "counted" for e in KNL_AS_KNC), listed
    assert listed["MEM_UOPS_RETIRED:L2_MISS_LOADS"] == "not counted" and listed["LLC_MISSES"] == "not counted", listed


def test_metric_groups_of_knl_use_its_events(knl):
    """`stat -M` on a KNL card takes Knights Landing's groups (pmu/metrics.c metric_groups_knl), whose
    formulas name the KNL events the card counts: BRANCH's ratios are those of the counts beside them;
    a group KNC's table has and KNL's lacks is refused, naming KNL's."""
    out = pmuctl(knl, "stat", "-M", "BRANCH", "-x,", "-C", "1", "--", os.path.join(USER, "matmul.elf"), "32").stderr
    counts = {m[2]: int(m[1]) for m in re.finditer(r"^(\d+),,(\S+),\d+,[\d.]+$", out, re.M)}
    metric = {m[2]: float(m[1]) for m in re.finditer(r"^,,,,,([\d.]+),\S+ (.+)$", out, re.M)}
    assert counts["BR_INST_RETIRED:ANY"] > 0 and counts["BR_MISP_RETIRED:ANY"] > 0, out
    ratio = 100 * counts["BR_MISP_RETIRED:ANY"] / counts["BR_INST_RETIRED:ANY"]
    rate = counts["BR_INST_RETIRED:ANY"] / counts["INSTRUCTION_RETIRED"]
    assert abs(metric["branch misprediction ratio"] - ratio) < 1e-3 * ratio, (metric, counts)
    assert abs(metric["branch rate"] - rate) < 1e-3 * rate, (metric, counts)
    p = subprocess.run([PMUCTL, "--card", knl.name, "stat", "-M", "VPU", "--", os.path.join(USER, "hello.elf")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "the groups are CPI, L1, DATA, BRANCH (Knights Landing's" in p.stderr, p.stderr


def test_the_cards_own_names_are_knls(knl):
    """The card names events from its PMU's table (libpfm4's knl, generated at build time): the shell's
    `pmu events` and `pmu set` take KNL's names, unit masks and all, and say which the model or the
    plugin counts; a program's region lines name its counters by them."""
    listed = knl.cmd("pmu events MEM_UOPS_RETIRED:L1")
    assert re.search(r"^MEM_UOPS_RETIRED:L1_MISS_LOADS\s+umask 0x01 event 0x04\s+plugin: ", listed, re.M), listed
    assert "(libpfm4 knl)" in knl.cmd("pmu info")
    assert knl.cmd("pmu set 1 0 BR_INST_RETIRED:ANY:u") == "" and knl.cmd("pmu set 1 1 none") == ""
    assert "unknown event 'DATA_READ'" in knl.cmd("pmu set 1 0 DATA_READ")
    p = pmuctl(knl, "run", "-C", "1", "--", os.path.join(USER, "regions.elf"))
    # 0x00c4's first name in libpfm4's table: the architectural BRANCH_INSTRUCTIONS_RETIRED
    assert re.search(r"^region sum: calls 3, BRANCH_INSTRUCTIONS_RETIRED:u \d+, counter1 \d+, fixed INST_RETIRED.ANY:u",
                     p.stdout, re.M), p.stdout
    knl.cmd("pmu set 1 0 none")


def test_spflt_is_an_invalid_opcode_on_knl(knl):
    """calib's regions open with SPFLT, which a KNL core does not have: the
    task ends with #UD named, and the card goes on answering."""
    p = subprocess.run([PMUCTL, "--card", knl.name, "run", "-C", "1", "--", os.path.join(USER, "calib.elf")],
                       capture_output=True, text=True, timeout=120)
    assert "#UD invalid opcode (vector 6)" in p.stdout + p.stderr, p
    assert "calib.elf" in p.stdout + p.stderr, p
    pmuctl(knl, "ping")


def test_record_samples_open_in_perf(knl, tmp_path):
    """Sampling INST_RETIRED:u every 10,007: calls' b, c, a take 50, 30 and 20 %
    of its work, and Debian's perf reads the file with the same shares; a
    cpu-clock recording at 1 kHz samples every millisecond of card time."""
    data, perf = tmp_path / "calls.data", tmp_path / "calls.perf"
    pmuctl(knl, "record", "-e", "r00c0:u", "-c", "10007", "-o", str(data), "--", os.path.join(USER, "calls.elf"),
           "100000")
    subprocess.run([PMUCTL, "report", "-i", str(data), "--to-perf", str(perf)], check=True, capture_output=True)
    rep = subprocess.run(["perf", "report", "-i", str(perf), "--stdio", "--sort", "sym"], capture_output=True,
                         text=True, check=True).stdout
    share = {m[2]: float(m[1]) for m in re.finditer(r"^\s+([\d.]+)%\s+\[\.\]\s+(\w+)$", rep, re.M)}
    assert abs(share["b"] - 50) < 1 and abs(share["c"] - 30) < 1 and abs(share["a"] - 20) < 1, rep
    clock, clock_perf = tmp_path / "clock.data", tmp_path / "clock.perf"
    pmuctl(knl, "record", "-e", "cpu-clock,INST_RETIRED:u", "-F", "1000", "-o", str(clock), "--",
           os.path.join(USER, "matmul.elf"), "64")
    subprocess.run([PMUCTL, "report", "-i", str(clock), "--to-perf", str(clock_perf)], check=True,
                   capture_output=True)
    script = subprocess.run(["perf", "script", "-i", str(clock_perf), "-F", "event,time"], capture_output=True,
                            text=True, check=True).stdout
    assert "INST_RETIRED:u" in script, script[:300]  # the counted event, named from knl's table again
    # pmuctl report's column for the counted event gives each symbol perf's share of it (perf's own report of
    # the event, from each sample's PERF_SAMPLE_READ value)
    ours = subprocess.run([PMUCTL, "report", "-i", str(clock)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^# Overhead  INST_RETIRED:u  Symbol$", ours, re.M), ours
    col = {m[3]: float(m[2]) for m in re.finditer(r"^\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)$", ours, re.M)}
    rep = subprocess.run(["perf", "report", "-i", str(clock_perf), "--stdio", "--sort", "sym"], capture_output=True,
                         text=True, check=True).stdout
    theirs = rep[rep.index("of event 'INST_RETIRED:u'"):]
    perf_share = {m[2]: float(m[1]) for m in re.finditer(r"^\s+([\d.]+)%\s+\[\.\]\s+(\S+)$", theirs, re.M)}
    assert col and col == perf_share, (ours, theirs)
    t = [float(m[1]) for m in re.finditer(r"^\s*([\d.]+):\s+cpu-clock:", script, re.M)]
    gaps = [b - a for a, b in zip(t, t[1:])]
    assert len(t) >= 20 and all(abs(g - 0.001) <= 0.00001 for g in gaps), (len(t), gaps[:5])
