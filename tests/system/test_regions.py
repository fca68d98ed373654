"""Named regions in pmuctl stat (issue 26, likwid's marker API): the lines
pmu_region_begin/end write at exit (user/regions.c) are taken out of the
program's output and printed per region with the events' names, calls and
the -M groups' metrics (host/regions.c). Program regions: "sum" (3 calls),
"mix" (2 calls), "empty" (4 calls, the markers' own cost); with `spflt NAME`
the same calls run between SPFLT 1 and 0 without markers. One card."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
PROG = os.path.join(BUILD, "user", "regions.elf")
CALLS = {"sum": 3, "mix": 2, "empty": 4}
EVENTS = ["INSTRUCTIONS_EXECUTED:u", "DATA_READ:u"]


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=2, timeout=120)
    yield c
    c.close()


def pmuctl(card, *args):
    p = subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def csv_regions(out):
    """{region: {event or 'calls': count}} from stat -x , lines of regions."""
    regions = {}
    for line in out.splitlines():
        f = line.split(",")
        if len(f) == 4 and f[0] in CALLS:
            regions.setdefault(f[0], {})[f[3]] = int(f[1])
    return regions


def test_regions_equal_spflt_counts_of_the_same_work(card):
    p = pmuctl(card, "stat", "-x", ",", "-e", ",".join(EVENTS), "--", PROG)
    assert "region " not in p.stdout  # taken out of the program's output
    regions = csv_regions(p.stdout)
    assert {r: regions[r]["calls"] for r in regions} == CALLS, p.stdout
    spflt = {}
    for r in CALLS:
        q = pmuctl(card, "stat", "--spflt", "-x", ",", "-e", ",".join(EVENTS), "--", PROG, "spflt", r)
        spflt[r] = {f.split(",")[2]: int(f.split(",")[0]) for f in q.stdout.splitlines() if f.count(",") == 4}
    for ev in EVENTS:
        # per call, the markers add the same code to every region: an empty region's count
        marker = regions["empty"][ev] / CALLS["empty"] - spflt["empty"][ev] / CALLS["empty"]
        assert marker > 0
        for r in ("sum", "mix"):
            assert regions[r][ev] == spflt[r][ev] + CALLS[r] * marker, (r, ev, regions, spflt)
    assert spflt["sum"]["DATA_READ:u"] >= 3 * 4096  # sum_words' loads


def test_region_table_names_events_calls_and_metrics(card):
    p = pmuctl(card, "stat", "-M", "CPI", "--", PROG)
    table = p.stderr
    for r, n in CALLS.items():
        assert f" Region '{r}': {n} calls" in table, table
    part = table.split(" Region 'sum'")[1].split(" Region 'mix'")[0]
    assert re.search(r"\n +[\d,]+ +CPU_CLK_UNHALTED\n", part), part
    assert re.search(r"\n +[\d,]+ +INSTRUCTIONS_EXECUTED\n", part), part
    assert re.search(r"\n +[\d.]+ +CPI +cycles/instruction\n", part), part
    assert "counter0" not in table + p.stdout
    j = pmuctl(card, "stat", "-M", "CPI", "--json", "--", PROG)
    objs = [json.loads(line) for line in j.stdout.splitlines() if line.startswith("{")]
    sums = [o for o in objs if o.get("region") == "sum"]
    assert {o["event"] for o in sums} == {"CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED"}
    assert all(o["calls"] == 3 and float(o["counter-value"]) > 0 for o in sums)


def test_regions_with_events_taking_turns_are_not_counted(card):
    p = pmuctl(card, "stat", "-M", "L1", "--", PROG)
    part = p.stderr.split(" Region 'sum': 3 calls")[1].split(" Region 'mix'")[0]
    assert "<not counted>      DATA_READ_OR_WRITE" in part
    assert "6 events take turns on the 2 counters" in part
    assert not re.search(r"\d{4,}", part), part


def test_a_sampling_counter_is_reported_never_counted(card):
    """record samples counter 0: the region line says so (record leaves the program's
    output as it is), never the 40-bit reload value as a count."""
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "1000", "-o", os.devnull, "--", PROG)
    line = re.search(r"region sum: .*", p.stdout).group(0)
    assert line.startswith("region sum: calls 3, counter0 sampling,"), line
    lines = [x for x in p.stdout.splitlines() if x.startswith("region ")]
    assert len(lines) == 3 and all("counter0 sampling," in x for x in lines), p.stdout
