"""pmuctl as a perf user expects it (issue 25): perf's event aliases and raw events, stat -r/-A/
--metric-only/-x/--json in perf's layouts (every --json line parsed, perf's keys and value types),
record's defaults and its throttling report, and bad input named by its real cause."""
import json
import os
import re
import shutil
import struct
import subprocess

import pytest

from conftest import BUILD, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
HELLO = os.path.join(BUILD, "user", "hello.elf")
STEADY = os.path.join(BUILD, "user", "steady.elf")
MATMUL = os.path.join(BUILD, "user", "matmul.elf")
# perf stat -j's keys and the JSON type of each value (tools/perf/util/stat-display.c).
PERF_JSON = {"counter-value": str, "unit": str, "event": str, "event-runtime": int, "pcnt-running": float}


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=4)
    yield c
    c.close()


def pmuctl(card, *args, timeout=120):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=timeout)


def csv_rows(err):
    """pmuctl's -x lines, on stderr as perf's are (pmuctl's own messages there too, not its)."""
    return [l.split(",") for l in err.splitlines() if "," in l and not l.startswith("pmuctl")]


def test_perf_aliases_and_raw_events_count_what_the_knc_names_count(card):
    """cycles, instructions... are Linux's KNC events for perf's generic ones; rUUEE is EvtSel's
    unit mask and event. Same user instructions, exactly (-icount)."""
    counts = {}
    for pair in ("instructions:u,INSTRUCTIONS_EXECUTED:u", "r16:u,cycles"):  # two: both on a counter, unscaled
        p = pmuctl(card, "stat", "-x", ",", "-e", pair, "--", STEADY, "200")
        assert p.returncode == 0, p.stderr
        rows = csv_rows(p.stderr)
        assert [r[2] for r in rows] == pair.split(","), p.stderr
        # perf's -x columns (perf-stat(1) "CSV FORMAT"): value, unit, event, run time, running percentage.
        assert all(len(r) == 5 and r[1] == "" and re.fullmatch(r"\d+", r[3]) and r[4] == "100.00" for r in rows), rows
        counts.update((r[2], int(r[0])) for r in rows)
    assert counts["instructions:u"] > 1000
    assert counts["instructions:u"] == counts["INSTRUCTIONS_EXECUTED:u"] == counts["r16:u"], counts
    for ev in ("branches", "branch-misses", "cache-references", "cache-misses", "r10cb"):
        p = pmuctl(card, "stat", "-x", ",", "-e", ev, "--", STEADY, "10")
        assert p.returncode == 0 and csv_rows(p.stderr)[0][2] == ev, (ev, p.stderr)


# perf's cache events and the KNC events Linux's knc_hw_cache_event_ids counts for them.
CACHE_EVENTS = [("L1-dcache-loads", "DATA_READ"), ("L1-dcache-load-misses", "DATA_READ_MISS"),
                ("L1-dcache-stores", "DATA_WRITE"), ("L1-icache-loads", "CODE_READ"),
                ("LLC-load-misses", "L2_READ_MISS"), ("dTLB-load-misses", "DATA_PAGE_WALK"),
                ("iTLB-load-misses", "CODE_PAGE_WALK"), ("branch-load-misses", "BRANCHES_MISPREDICTED")]


def test_perfs_cache_events_count_what_linuxs_knc_driver_counts(card):
    """perf's generic cache events are the KNC events Linux's driver maps them to: the same
    count in one run, each on a counter of its own (the L2 events, which share counter 0: the
    same event code in pmuctl events); one it maps to nothing is refused, named."""
    codes = {m[1]: m[2] for m in re.finditer(r"^(\S+)\s+(0x[0-9a-f]{4})\s", pmuctl(card, "events").stdout, re.M)}
    for perf_name, knc_name in CACHE_EVENTS:
        assert codes[perf_name] == codes[knc_name], (perf_name, codes[perf_name], codes[knc_name])
        if knc_name.startswith("L2_"):
            continue
        p = pmuctl(card, "stat", "-x", ",", "-e", f"{perf_name}:u,{knc_name}:u", "--", STEADY, "200")
        assert p.returncode == 0, p.stderr
        rows = {r[2]: r[0] for r in csv_rows(p.stderr)}
        assert rows[f"{perf_name}:u"] == rows[f"{knc_name}:u"] and re.fullmatch(r"\d+", rows[f"{knc_name}:u"]), rows
    p = pmuctl(card, "stat", "-e", "LLC-loads", "--", STEADY, "200")
    assert p.returncode == 1 and "event 'LLC-loads': Linux's KNC driver counts no event for it" in p.stderr, p.stderr


def check_perf_json(line):
    o = json.loads(line)
    if "metric-value" in o:
        return o
    for key, kind in PERF_JSON.items():
        assert isinstance(o[key], kind), (key, line)
    assert re.fullmatch(r"\d+\.\d{6}|<not supported>|<not counted>", o["counter-value"]), line
    return o


def test_json_is_perfs_and_valid_for_any_program_path(card, tmp_path):
    odd = tmp_path / 'it"s a \\ program.elf'
    shutil.copy(HELLO, odd)
    for extra in ([], ["-r", "2"], ["-I", "10"], ["-M", "CPI"]):
        p = pmuctl(card, "stat", "--json", "-C", "1-2", "-e", "cycles,instructions", *extra, "--", str(odd))
        assert p.returncode == 0, (extra, p.stderr)
        # perf's place for them, stderr: every line of it an object; stdout the program's alone
        objs = [check_perf_json(l) for l in p.stderr.splitlines()]
        assert "hello from pmuos" in p.stdout and "{" not in p.stdout, p.stdout
        events = [o for o in objs if "event" in o]
        assert len(events) >= 4 and {o["cpu"] for o in events} == {"1", "2"}, (extra, p.stderr)
        if extra and extra[0] == "-r":
            assert all(isinstance(o["variance"], float) for o in events), p.stderr
        if extra and extra[0] == "-I":
            assert all(isinstance(o["interval"], float) for o in objs), p.stderr
        if extra and extra[0] == "-M":
            assert any(o.get("metric-group") == "CPI" for o in objs), p.stderr


def table_counts(text):
    """The count lines of pmuctl stat's table: {event: count}."""
    return {m[2]: int(m[1].replace(",", "")) for m in re.finditer(r"^\s+([\d,]+)\s+(\S+)\s*$", text, re.M)}


def test_perfs_stat_habits(card, tmp_path):
    """What a perf user types: stat without -e (perf's first two hardware events), -e given
    twice (both counted, as `-e a,b`), -a (every CPU programs run on) and -o FILE (the table
    or machine format there, the program's own lines alone on stdout)."""
    p = pmuctl(card, "stat", "--", HELLO)
    assert p.returncode == 0 and set(table_counts(p.stderr)) == {"cycles", "instructions"}, p.stderr
    both = pmuctl(card, "stat", "-e", "cycles", "-e", "instructions:u", "--", HELLO)
    one = pmuctl(card, "stat", "-e", "cycles,instructions:u", "--", HELLO)
    assert both.returncode == 0 and table_counts(both.stderr)["instructions:u"] == table_counts(one.stderr)["instructions:u"]
    assert set(table_counts(both.stderr)) == {"cycles", "instructions:u"}, both.stderr
    p = pmuctl(card, "stat", "-a", "-A", "-e", "instructions:u", "--", HELLO)
    rows = re.findall(r"^CPU(\d+)\s+([\d,]+)\s+instructions:u", p.stderr, re.M)
    assert p.returncode == 0 and [int(c) for c, _ in rows] == [1, 2, 3], p.stderr
    out = tmp_path / "s.json"
    p = pmuctl(card, "stat", "--json", "-o", str(out), "-e", "instructions:u", "--", HELLO)
    assert p.returncode == 0 and p.stdout.startswith("hello from pmuos") and "{" not in p.stdout, p.stdout
    objs = [check_perf_json(l) for l in out.read_text().splitlines()]
    assert [o["event"] for o in objs] == ["instructions:u"], objs
    out = tmp_path / "s.txt"
    p = pmuctl(card, "stat", "-o", str(out), "-e", "instructions:u", "--", HELLO)
    assert p.returncode == 0 and "Performance counter stats" not in p.stderr, p.stderr
    assert "instructions:u" in table_counts(out.read_text()), out.read_text()


def test_repeat_prints_the_mean_and_perfs_spread(card):
    p = pmuctl(card, "stat", "-r", "5", "-e", "instructions:u,cycles", "--", STEADY, "2000")
    assert p.returncode == 0, p.stderr
    assert "(CPUs 1, 5 runs):" in p.stderr, p.stderr
    # -icount: the same user instructions every run, so no spread at all.
    assert re.search(r"^\s+[\d,]+\s+instructions:u\s+\( \+-  0\.00% \)$", p.stderr, re.M), p.stderr
    assert re.search(r"^\s+[\d,]+\s+cycles\s+\( \+- +\d+\.\d\d% \)$", p.stderr, re.M), p.stderr
    assert re.search(r"\d\.\d{9} \+- \d\.\d{9} seconds time elapsed  \( \+- +\d+\.\d\d% \)", p.stderr), p.stderr
    single = pmuctl(card, "stat", "-x", ",", "-e", "instructions:u", "--", STEADY, "2000")
    p = pmuctl(card, "stat", "-r", "3", "-x", ",", "-e", "instructions:u", "--", STEADY, "2000")
    rows = csv_rows(p.stderr)
    # -r adds perf's variance column after the event name
    assert len(rows) == 1 and len(rows[0]) == 6 and rows[0][3] == "0.00%", p.stderr
    assert rows[0][0] == csv_rows(single.stderr)[0][0]


def test_per_cpu(card):
    p = pmuctl(card, "stat", "-A", "-C", "1-2", "-e", "instructions:u", "--", STEADY, "2000")
    assert p.returncode == 0, p.stderr
    lines = re.findall(r"^(CPU\d)\s+([\d,]+)\s+instructions:u$", p.stderr, re.M)
    assert [l[0] for l in lines] == ["CPU1", "CPU2"] and all(int(l[1].replace(",", "")) > 0 for l in lines), p.stderr
    p = pmuctl(card, "stat", "-A", "-x", ",", "-C", "1-2", "-e", "instructions:u", "--", STEADY, "2000")
    rows = csv_rows(p.stderr)
    assert [r[0] for r in rows] == ["CPU1", "CPU2"] and all(len(r) == 6 for r in rows), p.stderr


def test_per_thread_of_an_instance_per_cpu(card):
    """perf's --per-thread of an SPMD launch: each instance a thread, COMM-TID with perf.data's tids
    (1000 + CPU), its count exactly its CPU's -A count (the plugin counts each CPU's own instructions);
    -x and --json label them the same; with -A or --per-core a usage error."""
    args = ("-C", "1-3", "-e", "instructions:u", "--", STEADY, "2000")
    p = pmuctl(card, "stat", "-A", *args)
    each = {1000 + int(c): int(v.replace(",", ""))
            for c, v in re.findall(r"^CPU(\d)\s+([\d,]+)\s+instructions:u$", p.stderr, re.M)}
    assert sorted(each) == [1001, 1002, 1003], p.stderr
    p = pmuctl(card, "stat", "--per-thread", *args)
    rows = re.findall(r"^\s+steady\.elf-(\d+)\s+([\d,]+)\s+instructions:u$", p.stderr, re.M)
    assert {int(t): int(v.replace(",", "")) for t, v in rows} == each and len(rows) == 3, p.stderr
    p = pmuctl(card, "stat", "--per-thread", "-x", ",", *args)
    assert {r[0]: int(r[1]) for r in csv_rows(p.stderr)} == {f"steady.elf-{t}": v for t, v in each.items()}, p.stderr
    p = pmuctl(card, "stat", "--per-thread", "--json", *args)
    objs = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    assert {o["thread"]: round(float(o["counter-value"])) for o in objs} == \
        {f"steady.elf-{t}": v for t, v in each.items()}, p.stderr
    for other, why in (("-A", "--per-thread and -A together"), ("--per-core", "--per-thread and --per-core together")):
        p = pmuctl(card, "stat", "--per-thread", other, *args)
        assert p.returncode == 2 and why in p.stderr, p.stderr


def test_record_of_an_instance_per_cpu_has_a_thread_each(card, tmp_path):
    """record -C 1-2: perf.data's samples carry tid 1000 + CPU, each with its COMM, so that
    `perf report --sort pid` has a row per instance (Debian's perf 6.1 has no `tid` key: its `pid` key
    is the thread, tid:comm); report --folded --per-thread roots each
    stack at its thread, COMM-TID (FlameGraph's per-thread towers)."""
    data, perf = tmp_path / "two.data", tmp_path / "two.perf"
    rec = pmuctl(card, "record", "-C", "1-2", "-e", "instructions:u", "-c", "10000", "-o", str(data), "--",
                 STEADY, "2000")
    assert rec.returncode == 0, rec.stderr
    subprocess.run([PMUCTL, "report", "-i", str(data), f"--to-perf={perf}"], check=True, capture_output=True)
    rep = subprocess.run(["perf", "report", "-i", str(perf), "--stdio", "--sort", "pid"], capture_output=True,
                         text=True, check=True).stdout
    assert sorted(re.findall(r"^\s+[\d.]+%\s+(\d+):steady\.elf\s*$", rep, re.M)) == ["1001", "1002"], rep
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--folded", "--per-thread"], capture_output=True,
                       text=True, check=True)
    assert {l.split(";")[0] for l in p.stdout.splitlines()} == {"steady.elf-1001", "steady.elf-1002"}, p.stdout
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--per-thread"], capture_output=True, text=True)
    assert p.returncode == 2 and "give --folded or --svg" in p.stderr, p.stderr


def test_metric_only_puts_the_metrics_in_columns(card):
    p = pmuctl(card, "stat", "--metric-only", "-M", "CPI", "--", STEADY, "2000")
    assert p.returncode == 0, p.stderr
    head = re.search(r"^\s*cycles/instruction CPI\s+instructions/cycle IPC$", p.stderr, re.M)
    assert head, p.stderr
    values = p.stderr[head.end():].split("\n")[1].split()
    assert len(values) == 2 and abs(float(values[0]) * float(values[1]) - 1) < 1e-3, p.stderr
    assert "INSTRUCTIONS_EXECUTED" not in p.stderr
    p = pmuctl(card, "stat", "--metric-only", "-x", ",", "-M", "CPI", "--", STEADY, "2000")
    rows = csv_rows(p.stderr)
    assert rows[0] == ["cycles/instruction CPI", "instructions/cycle IPC"] and len(rows) == 2, p.stderr
    assert abs(float(rows[1][0]) * float(rows[1][1]) - 1) < 1e-3, p.stderr


def test_a_run_shorter_than_a_slice_is_named(card):
    events = "INSTRUCTIONS_EXECUTED,CPU_CLK_UNHALTED,BRANCHES,DATA_READ,DATA_WRITE,BRANCHES_MISPREDICTED"
    p = pmuctl(card, "stat", "--mux-interval", "1000", "-e", events, "--", HELLO)
    assert p.returncode == 0, p.stderr
    assert "<not counted>" in p.stderr and "in 1000 ms multiplexing slices" in p.stderr, p.stderr
    p = pmuctl(card, "stat", "-e", "INSTRUCTIONS_EXECUTED", "--", HELLO)
    assert "multiplexing slice" not in p.stderr


def test_a_group_is_on_the_counters_together(card):
    """perf's {a,b}: a group's events share every multiplexing slice and no other event joins
    them. Three events on two counters: without the group each is on a counter 2 slices of 3
    (66.67% of the time); with {cycles,instructions:u} the group has one slice and BRANCHES the
    other (50% each), the group's two running times the same to the tick."""
    def running(events):
        p = pmuctl(card, "stat", "-x", ",", "--mux-interval", "1", "-e", events, "--", STEADY, "20000")
        assert p.returncode == 0, p.stderr
        return {r[2]: (int(r[3]), float(r[4])) for r in csv_rows(p.stderr)}
    grouped = running("{cycles,instructions:u},BRANCHES")
    assert grouped["cycles"][0] == grouped["instructions:u"][0], grouped
    assert all(abs(pct - 50) < 2 for _, pct in grouped.values()), grouped
    free = running("cycles,instructions:u,BRANCHES")
    assert all(abs(pct - 200 / 3) < 2 for _, pct in free.values()), free
    assert running("{cycles},{instructions:u}")["cycles"][1] == 100.0  # groups of one, two counters: no turns


def test_record_defaults_and_throttling(card, tmp_path):
    data = tmp_path / "d.data"
    p = pmuctl(card, "record", "-o", str(data), "--", STEADY, "20000")
    assert p.returncode == 0, p.stderr
    m = re.search(r"\[ pmuctl record: (\d+) samples, 0 lost", p.stderr)
    assert m and int(m[1]) > 0 and "throttled" not in p.stderr, p.stderr
    rep = subprocess.run([PMUCTL, "report", "-i", str(data)], capture_output=True, text=True)
    assert rep.returncode == 0 and "of cycles every" in rep.stdout, rep.stdout
    p = pmuctl(card, "record", "-e", "instructions:u", "-c", "1", "-o", str(data), "--", STEADY, "20000")
    assert p.returncode == 0, p.stderr
    assert "[ pmuctl record: throttled on CPU 1:" in p.stderr, p.stderr


def test_cpu_clock_samples_every_period_of_card_time_with_the_counts(card, tmp_path):
    # perf's time-based sampling (Intel 327357-001 §1.3.1.2): a sample every ms of card time, each
    # with the count of the event beside it, and perf.data that perf reads as cpu-clock.
    data, perf_data = tmp_path / "cc.data", tmp_path / "cc.perf"
    p = pmuctl(card, "record", "-e", "cpu-clock,INSTRUCTIONS_EXECUTED:u", "-F", "1000", "-o", str(data),
               "--", MATMUL, "64")
    assert p.returncode == 0, p.stderr
    n = int(re.search(r"\[ pmuctl record: (\d+) samples, 0 lost", p.stderr)[1])
    # matmul 64 runs about 50 M instructions, 1 ns each under -icount shift=0: about 50 ms
    assert 40 <= n <= 60, n
    raw = data.read_bytes()[-40 * n:]  # struct pmu_sample, 40 bytes, no chains without -g
    s = [struct.unpack_from("<QQQQIBBH", raw, 40 * i) for i in range(n)]
    gaps = {b[0] - a[0] for a, b in zip(s, s[1:])}
    assert all(abs(g - 10 ** 6) <= 10 ** 4 for g in gaps), gaps  # TSC ticks: 1 ms at about 1 GHz, +-1 %
    assert all(x[6] == 0 and x[4] == 1 and x[5] == 3 for x in s)  # no overflow, CPU 1, Ring 3
    counts = [x[2] for x in s]
    steps = [b - a for a, b in zip(counts, counts[1:])]
    # a ms of Ring-3 instructions, less what the kernel ran in it (the sample itself among it)
    assert all(0.95e6 < d <= 1e6 for d in steps), steps
    assert all(x[3] == 0 for x in s)  # counter 1 counts nothing
    # The card's own view holds them too: with no sampling counter the CPU had no sample ring before
    # cpu-clock asked for one (a sample then went through a null ring pointer into low memory).
    own = card.cmd("pmu samples 1 3")
    rows = [l.split() for l in own.splitlines() if re.match(r"^\d+\s+0x", l)]
    assert "3 samples shown" in own and len(rows) == 3 and int(rows[-1][4]) == s[-1][2], own
    rep = subprocess.run([PMUCTL, "report", "-i", str(data), "--to-perf", str(perf_data)], capture_output=True,
                         text=True)
    assert rep.returncode == 0, rep.stderr
    if shutil.which("perf"):
        script = subprocess.run(["perf", "script", "-i", str(perf_data), "-F", "event,time"], capture_output=True,
                                text=True)
        times = [float(t) for t in re.findall(r"([\d.]+):\s+cpu-clock", script.stdout)]
        assert len(times) == n, script.stdout + script.stderr
        assert all(abs(b - a - 0.001) <= 0.00001 for a, b in zip(times, times[1:])), times
        # the group read (PERF_SAMPLE_READ): perf gives the counted event its own report, its total
        # the count at the last sample
        rep = subprocess.run(["perf", "report", "-i", str(perf_data), "--stdio"], capture_output=True, text=True)
        totals = dict(re.findall(r"^# Samples: \d+\s+of event '([^']+)'\n# Event count \(approx\.\): (\d+)",
                                 rep.stdout, re.M))
        assert int(totals["INSTRUCTIONS_EXECUTED:u"]) == counts[-1], rep.stdout + rep.stderr
        assert int(totals["cpu-clock"]) == n * 10 ** 6, rep.stdout


# Bad input -> (exit status, the words that name its real cause). Each is a case the issue found
# named wrongly or vaguely.
ERRORS = [
    (["stat", "-C", "0-3", "-e", "instructions", "--", HELLO], 1, ["CPU 0 runs the shell", "APs (1-3)", "the card did not start the program"]),
    (["report", "-i", "/nonexistent/nosuch.data"], 1,
     ["cannot open /nonexistent/nosuch.data: No such file or directory"]),
    # -c's top is the card's to judge (below, in its words); pmuctl refuses what the wire cannot carry.
    (["record", "-c", "99999999999999999999999", "--", HELLO], 2,
     ["-c 99999999999999999999999: out of range; -c takes 1 to 18446744073709551615"]),
    (["record", "-c", "0", "--", HELLO], 2, ["-c 0: out of range; -c takes 1 to"]),
    (["record", "-c", "1", "-F", "10", "--", HELLO], 2, ["-c PERIOD and -F FREQ: give one"]),
    (["stat", "-e", "INSTRUCTIONS_EXECUTED:q", "--", HELLO], 2,
     ["invalid event attribute", "the modifiers of INSTRUCTIONS_EXECUTED are", ":u (", ":c=N (counter-mask in range [0-255])"]),
    (["stat", "-e", "INSTRUCTIONS_EXECUTED:c=999999", "--", HELLO], 2,
     ["invalid event attribute value", "counter-mask in range [0-255]"]),
    (["stat", "-e", "r1ff0016", "--", HELLO], 2, ["a raw event is rUUEE", "without EN (bit 22)"]),
    (["stat", "-r", "0", "-e", "cycles", "--", HELLO], 2, ["-r 0: out of range; -r takes 1 to 1000"]),
    (["stat", "--metric-only", "-e", "cycles", "--", HELLO], 2, ["--metric-only prints the metrics of -M GROUP"]),
    (["stat", "-e", "cycles", "-C", "9", "--", HELLO], 2, ["-C 9", "no CPU 9"]),
    (["stat", "-C", "9", "--", HELLO], 2, ["-C 9", "no CPU 9"]),  # without -e: the same error, not the usage
    (["stat", "-a", "-C", "1", "--", HELLO], 2, ["-a and -C 1 together"]),
    (["stat", "-o", "/nonexistent/s.txt", "--", HELLO], 2, ["-o /nonexistent/s.txt: No such file or directory"]),
    (["stat", "-e", "{cycles,instructions,branches}", "--", HELLO], 2,
     ["a group of 3 events ({cycles,...})", "a KNC hardware thread has 2 counters"]),
    (["stat", "-e", "{L2_VICTIM_REQ_WITH_DATA,SNP_HITM_BUNIT}", "--", HELLO], 2,
     ["group {L2_VICTIM_REQ_WITH_DATA,SNP_HITM_BUNIT} cannot be counted at once", "count only on counter 0"]),
    (["stat", "-e", "{cycles,instructions", "--", HELLO], 2, ["-e {cycles,instructions: a group is {EV,EV}"]),
    (["stat", "-e", "{cycles,instructions}:u", "--", HELLO], 2, ["modifiers go on each event"]),
    (["record", "-e", "cpu-clock", "-c", "5000", "--", HELLO], 2,
     ["a cpu-clock period of 5000 ns: should be 10000 ns to 1000000000 ns"]),
    (["record", "-e", "cpu-clock,cycles,instructions,branches", "--", HELLO], 2,
     ["cpu-clock counts at most 2 events beside it"]),
]


@pytest.mark.parametrize("args,status,words", ERRORS, ids=[" ".join(e[0][:4]) for e in ERRORS])
def test_bad_input_names_its_cause(card, args, status, words):
    p = pmuctl(card, *args)
    assert p.returncode == status, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


# A PMU refusal reaches pmuctl as the card's verdict (struct mbox_verdict): pmuctl prints the text
# the shell prints for the same configuration (pmu_result_text). (pmuctl args, exit status, shell lines
# whose last one is refused.)
L2A, L2B = "L2_VICTIM_REQ_WITH_DATA", "SNP_HITM_BUNIT"  # two L2 events: they take turns on counter 0
REFUSALS = [
    (["record", "-e", "INSTRUCTIONS_EXECUTED", "-c", str((1 << 40) + 1), "--", HELLO], 2,
     [f"pmu set 1 0 INSTRUCTIONS_EXECUTED period={(1 << 40) + 1}"]),
    (["stat", "--spflt", "-e", f"{L2A},{L2B}", "--", HELLO], 2, [f"pmu mux 1 {L2A},{L2B}", "pmu spflt 1 both"]),
    (["stat", "--mux-interval", "1001", "-e", "cycles", "--", HELLO], 2, ["pmu mux 1 CPU_CLK_UNHALTED slice=1001"]),
    (["stat", "--mux-interval", "0", "-e", "cycles", "--", HELLO], 2, ["pmu mux 1 CPU_CLK_UNHALTED slice=0"]),
    (["record", "-e", "cpu-clock", "-c", "5000", "--", HELLO], 2, ["pmu cpu-clock 1 5000"]),
]


@pytest.mark.parametrize("args,status,lines", REFUSALS, ids=[" ".join(r[0][:3]) for r in REFUSALS])
def test_pmu_refusals_reach_pmuctl_in_the_shells_words(card, args, status, lines):
    for line in lines[:-1]:
        assert not card.cmd(line).startswith("error:"), line
    out = card.cmd(lines[-1])
    refused = re.findall(r"^error: pmu: (.+)$", out, re.M)  # (a long line's echo wraps: searched, not split)
    assert len(refused) == 1, out
    words = refused[0].strip()
    p = pmuctl(card, *args)
    assert p.returncode == status, p.stderr
    assert words in p.stderr, (words, p.stderr)


def test_a_card_that_is_not_where_card_looks_is_named(tmp_path):
    """A card started with MBOX=card has its mailbox in its memory file: --card NAME says to give
    --card sim:NAME. A simulated card's memory without a mailbox: not booted, pmuctl boot does it.
    (Only the files pmuctl looks at are made here.)"""
    name = f"errs{os.getpid()}"
    ram = f"/dev/shm/pmuos-{name}-ram"
    try:
        with open(ram, "wb") as f:
            f.truncate(0x10000000 + (1 << 20))  # sparse: card memory up to past the mailbox's place
        p = subprocess.run([PMUCTL, "--card", name, "info"], capture_output=True, text=True)
        assert p.returncode == 1 and f"give --card sim:{name}" in p.stderr, p.stderr
        p = subprocess.run([PMUCTL, "--card", f"sim:{name}", "info"], capture_output=True, text=True)
        assert p.returncode == 1 and f"has not booted pmuos (pmuctl --card sim:{name} boot)" in p.stderr, p.stderr
    finally:
        os.unlink(ram)
