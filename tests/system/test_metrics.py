"""pmuctl stat -M (issue 13): metric groups over matmul, triad and chase.

No number here is written down: each metric printed must equal its formula,
as `pmuctl stat -M list` prints it, applied to the counts printed in the same
output (in the table, with -x and with --json), and be "n/a" exactly when an
event it names was not counted or its denominator is 0. Where the model is
exact it is checked exactly: CPU_CLK_UNHALTED and INSTRUCTIONS_EXECUTED, on
the counters together, are equal under -icount, so CPI is 1.

The runs are long enough for every event to get a counter at 1 ms slices
(--mux-interval 1) while the program runs; with the plugin (not PLUGIN=0)
every event must then have a count."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")
PLUGIN = os.environ.get("PLUGIN", "1") != "0" and os.environ.get("ACCEL", "tcg") == "tcg"

RUNS = [  # every group, every one of the three programs
    ("CPI,VPU,BRANCH", ["matmul.elf", "128"]),
    ("MEM,TLB", ["triad.elf"]),
    # 8 events, 4 of them L2 (counter 0 only): at least 4 slices of 1 ms each;
    # 262144 slots run about 10 ms (131072 ran 4.8-5.1 ms: the last event's
    # turn came or not with the kernel's instruction count).
    ("L2,TLB", ["chase.elf", "262144"]),
    ("L1,CPI", ["chase.elf", "131072"]),
]


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=4, timeout=120)
    yield c
    c.close()


def pmuctl(card_name, *args):
    return subprocess.run([PMUCTL, "--card", card_name, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def formulas():
    """{group: [(name, unit, formula)]} from `pmuctl stat -M list`, which needs no card."""
    p = pmuctl("nosuchcard", "stat", "-M", "list")
    assert p.returncode == 0, p.stderr
    groups, group = {}, None
    for line in p.stdout.splitlines():
        if m := re.fullmatch(r"(\w+): .+", line):
            group = groups.setdefault(m[1], [])
        else:
            m = re.fullmatch(r"  (.{34}) (.{28}) = (.+)", line)
            assert m and group is not None, line
            group.append((m[1].rstrip(), m[2].rstrip(), m[3]))
    assert len(groups) >= 7 and all(groups.values()), p.stdout
    return groups


@pytest.fixture(scope="module")
def tsc_hz(card):
    p = pmuctl(card.name, "info")
    assert p.returncode == 0, p.stderr
    return float(re.search(r"^tsc\s+([\d.]+) MHz$", p.stdout, re.M)[1]) * 1e6


def evaluate(formula, counts, tsc_hz):
    """The formula over the counts ({event: int, or None when not counted}); None: n/a."""
    missing = []

    def value(m):
        if m[0] == "TSC_Hz":
            return repr(tsc_hz)
        if counts.get(m[0]) is None:
            missing.append(m[0])
            return "0"
        return str(counts[m[0]])

    expr = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", value, formula)
    assert re.fullmatch(r"[\d.+\-*/() ]+", expr), (formula, expr)
    if missing:
        return None
    try:
        return eval(expr, {"__builtins__": {}})  # digits and operators only, checked above
    except ZeroDivisionError:
        return None


def check_metrics(groups, printed, counts, formulas, tsc_hz, places=None):
    """printed: {group: [(value, name, unit)]} in the order shown; each agrees with its formula
    (to 6 significant digits, or rounded to `places` decimals)."""
    assert list(printed) == groups, printed
    for g in groups:
        assert [(n, u) for _, n, u in printed[g]] == [(n, u) for n, u, _ in formulas[g]], printed[g]
        for (shown, name, unit), (_, _, formula) in zip(printed[g], formulas[g]):
            want = evaluate(formula, counts, tsc_hz)
            if want is None:
                assert shown == "n/a", (g, name, formula, counts)
                continue
            got = float(shown)
            tol = 0.5 if abs(want) >= 1e6 else 1e-5 * abs(want)
            if places is not None:
                tol = 0.5 * 10 ** -places + 1e-9
            assert abs(got - want) <= tol, (g, name, shown, want, formula, counts)
            if PLUGIN and unit == "%":
                assert 0 <= got <= 100, (g, name, shown)


def parse_table(text):
    """The counts and metrics of stat's table (stderr), before any named region's table."""
    counts, printed, group = {}, {}, None
    for line in text.split("\n Region '")[0].splitlines():
        if m := re.fullmatch(r" (\w+): .+", line):
            group = printed.setdefault(m[1], [])
        elif group is None:
            if m := re.fullmatch(r"\s+([\d,]+|<not counted>|<not supported>)      (\S+)(?:\s+\(\d+\.\d\d%\))?", line):
                counts[m[2]] = int(m[1].replace(",", "")) if m[1][0] != "<" else None
        elif m := re.fullmatch(r"(.{20})      (.{34}) (.+)", line):
            group.append((m[1].strip(), m[2].rstrip(), m[3]))
    return counts, printed


def check_counts(groups, counts, formulas):
    """Every event the groups' formulas name was counted (with the plugin)."""
    needed = {ev for g in groups for _, _, f in formulas[g] for ev in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f)}
    assert needed - {"TSC_Hz"} <= set(counts), (needed, counts)
    if PLUGIN:
        assert all(v is not None for v in counts.values()), counts
    if "CPI" in groups and PLUGIN:
        # The plugin's timing model: a thread issues at most a pair every other cycle (plugin/timing.h).
        assert counts["CPU_CLK_UNHALTED"] >= counts["INSTRUCTIONS_EXECUTED"] > 0, counts
    elif "CPI" in groups:
        # Without the plugin both are ticks of the TSC while the thread runs, under -icount: equal.
        assert counts["CPU_CLK_UNHALTED"] == counts["INSTRUCTIONS_EXECUTED"] > 0, counts


@pytest.mark.parametrize("groups,program", RUNS, ids=[f"{g}-{p[0]}" for g, p in RUNS])
def test_metric_table_follows_the_counts(card, formulas, tsc_hz, groups, program):
    p = pmuctl(card.name, "stat", "--mux-interval", "1", "-M", groups, "--", os.path.join(USER, program[0]),
               *program[1:])
    assert p.returncode == 0, p.stderr
    counts, printed = parse_table(p.stderr)
    check_counts(groups.split(","), counts, formulas)
    check_metrics(groups.split(","), printed, counts, formulas, tsc_hz)
    if "CPI" in groups and not PLUGIN:
        assert [v for v, n, _ in printed["CPI"] if n == "CPI"] == ["1"]


def test_metrics_in_csv_and_json(card, formulas, tsc_hz):
    triad = [os.path.join(USER, "triad.elf")]
    units = {f"{u} {n}": (g, n, u) for g, ms in formulas.items() for n, u, _ in ms}
    # -x: perf's columns; a metric's line has the five count columns empty, then metric-value, metric-unit.
    p = pmuctl(card.name, "stat", "-x", ";", "--mux-interval", "1", "-e", "BRANCHES", "-M", "L1", "--", *triad)
    assert p.returncode == 0, p.stderr
    counts, printed = {}, {}
    for line in p.stderr.splitlines():  # perf's: -x on stderr
        f = line.split(";")
        if len(f) == 5 and f[2]:
            counts[f[2]] = int(f[0]) if f[0][0] != "<" else None
        elif len(f) == 7 and f[:5] == [""] * 5:
            g, n, u = units[f[6]]
            printed.setdefault(g, []).append((f[5], n, u))
    assert list(counts) == ["BRANCHES", "DATA_READ_OR_WRITE", "DATA_READ_MISS_OR_WRITE_MISS", "DATA_READ_MISS",
                            "DATA_READ", "DATA_WRITE_MISS", "DATA_WRITE"], p.stderr
    check_metrics(["L1"], printed, counts, formulas, tsc_hz)
    # --json: perf's metric-value and metric-unit keys; the counts one object per CPU (CPU 1 here).
    p = pmuctl(card.name, "stat", "--json", "--mux-interval", "1", "-M", "MEM", "--", *triad)
    assert p.returncode == 0, p.stderr
    counts, printed = {}, {}
    for line in p.stderr.splitlines():
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if "region" in o:  # triad's named region: its own object (test_views.py)
            continue
        if "event" in o:
            v = o["counter-value"]
            counts[o["event"]] = int(float(v) + 0.5) if v[0] != "<" else None  # as the table rounds
        else:
            g, n, u = units[o["metric-unit"]]
            assert o["metric-group"] == g
            printed.setdefault(g, []).append((o["metric-value"], n, u))
    check_counts(["MEM"], counts, formulas)
    check_metrics(["MEM"], printed, counts, formulas, tsc_hz)


def test_group_errors(card, formulas):
    hello = os.path.join(USER, "hello.elf")
    p = pmuctl(card.name, "stat", "-M", "CPI,NOSUCH", "--", hello)
    assert p.returncode == 2 and "no metric group 'NOSUCH'" in p.stderr, p.stderr
    assert all(g in p.stderr for g in formulas), p.stderr
    assert "hello from pmuos" not in p.stdout
    # -e and -M together count at most 8 events: L1 has 6, CPI 2 more.
    p = pmuctl(card.name, "stat", "-e", "BRANCHES", "-M", "L1,CPI", "--", hello)
    assert p.returncode == 2 and "with group CPI that makes 9 events; at most 8" in p.stderr, p.stderr
    p = pmuctl(card.name, "stat", "-M", ",", "--", hello)
    assert p.returncode == 2 and "no events" in p.stderr, p.stderr
    # A group named twice, or case aside, is counted once.
    p = pmuctl(card.name, "stat", "-M", "cpi,CPI", "--", hello)
    assert p.returncode == 0, p.stderr
    counts, printed = parse_table(p.stderr)
    assert list(counts) == ["CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED"] and list(printed) == ["CPI"], p.stderr
    # perf's aliases for a group's events are its events: counted once, under the names -e gave.
    p = pmuctl(card.name, "stat", "-e", "cycles,instructions", "-M", "CPI", "--", hello)
    assert p.returncode == 0, p.stderr
    alias_counts, printed = parse_table(p.stderr)
    assert list(alias_counts) == ["cycles", "instructions"] and list(printed) == ["CPI"], p.stderr
    assert re.search(r"^\s+[\d.]+\s+CPI\s", p.stderr, re.M), p.stderr  # a number, not n/a
    # -e's raw code for one of them too, and the group limit counts them once.
    p = pmuctl(card.name, "stat", "-e", "r2a,BRANCHES", "-M", "L1,CPI", "--", hello)
    assert p.returncode == 2 and "with group CPI that makes 9 events; at most 8" in p.stderr, p.stderr


def test_shell_metrics(formulas, tsc_hz):
    """`pmu metrics`, the shell's stat -M: pmuctl's table (the same one, pmu/metrics.c), the events
    its groups need counted on the CPUs given, and each metric its formula over the counts it
    prints, in thousandths (the kernel computes them without floating point)."""
    listing = pmuctl("nosuchcard", "stat", "-M", "list").stdout
    c = Card(cpus=4, boot="multiboot", timeout=120, env={"PROGRAMS": os.path.join(USER, "chase.elf")})
    try:
        assert c.cmd("pmu metrics list") == listing
        assert "no metric groups chosen yet" in c.cmd("pmu metrics")
        assert "no metric group 'NOSUCH' (pmu metrics list shows them)" in c.cmd("pmu metrics 1 CPI,NOSUCH")
        assert "these groups need more than 8 events" in c.cmd("pmu metrics 1 L1,L2")
        assert "is not slice=MS" in c.cmd("pmu metrics 1 CPI slice=x")
        assert c.cmd("pmu metrics 1 L1,CPI slice=1") == ""
        c.cmd("pmu start 1")
        assert "exit status 0" in c.cmd("run chase 131072", timeout=120)
        c.cmd("pmu stop 1")
        out = c.cmd("pmu metrics 1")
    finally:
        c.close()
    assert out.startswith("CPU 1\n"), out
    counts, printed = parse_table(out)
    check_counts(["L1", "CPI"], counts, formulas)
    check_metrics(["L1", "CPI"], printed, counts, formulas, tsc_hz, places=3)
    if not PLUGIN:
        assert [v for v, n, _ in printed["CPI"] if n == "CPI"] == ["1.000"]
