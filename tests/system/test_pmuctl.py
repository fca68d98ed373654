"""The host tool over the card mailbox (issue: mailbox and pmuctl; the parts built so far)."""
import os
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pexpect

from conftest import BUILD

PMUCTL = os.path.join(BUILD, "pmuctl")
CALIB = os.path.join(BUILD, "user", "calib.elf")
HELLO = os.path.join(BUILD, "user", "hello.elf")
STEADY = os.path.join(BUILD, "user", "steady.elf")


def pmuctl(card, *args, timeout=120):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True,
                          timeout=timeout)


def test_info(card):
    p = pmuctl(card, "info")
    assert p.returncode == 0, p.stderr
    assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M)
    assert re.search(r"^backend\s+model$", p.stdout, re.M)
    assert re.search(r"^exact\s+yes$", p.stdout, re.M)


def test_stat_counts_calib_regions_exactly_with_spflt(card):
    p = pmuctl(card, "stat", "-e", "INSTRUCTIONS_EXECUTED:u,CPU_CLK_UNHALTED", "--spflt", "-C", "1",
               "--", CALIB)
    assert p.returncode == 0, p.stderr
    for k in (1, 10, 1000, 1000000):
        assert f"calib: region of {k} user instructions counted {k}\n" in p.stdout
    final = int(re.search(r"final counter 0 = (\d+)", p.stdout)[1])
    # The table's count is the kernel's reading of the same counter.
    m = re.search(r"^\s+([\d,]+)\s+INSTRUCTIONS_EXECUTED:u$", p.stderr, re.M)
    assert m and int(m[1].replace(",", "")) == final, p.stderr
    assert re.search(r"^\s+[\d,]+\s+CPU_CLK_UNHALTED$", p.stderr, re.M)


def test_stat_json_and_not_supported(card):
    p = pmuctl(card, "stat", "-e", "L2_VICTIM_REQ_WITH_DATA,INSTRUCTIONS_EXECUTED:u", "--json", "-C", "1-2", "--", HELLO)
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith("{")]
    assert len(rows) == 4
    assert sum('"counter-value" : "<not supported>"' in r and '"event" : "L2_VICTIM_REQ_WITH_DATA"' in r for r in rows) == 2
    assert all('"pcnt-running" : 100.00' in r and '"cpu" : "' in r for r in rows)


def test_run_streams_output_and_exits_with_the_status(card):
    p = pmuctl(card, "run", "-C", "1-2", HELLO, "fail")
    assert p.returncode == 3
    assert "[rank 1] hello from pmuos: rank 1 of 2 on CPU 2 fail" in p.stdout


def test_clear_errors(card, tmp_path):
    p = pmuctl(card, "stat", "-e", "INSTRUCTON_EXECUTED", "--", HELLO)
    assert p.returncode != 0 and "closest: INSTRUCTIONS_EXECUTED" in p.stderr
    # An L2 event listed second still goes on counter 0; two of them cannot share the counters.
    p = pmuctl(card, "stat", "-e", "INSTRUCTIONS_EXECUTED,L2_VICTIM_REQ_WITH_DATA", "--", HELLO)
    assert p.returncode == 0 and re.search(r"<not supported>\s+L2_VICTIM_REQ_WITH_DATA", p.stderr), p.stderr
    # Two L2 events cannot share the counters: they take turns (multiplexed), with --spflt they cannot.
    p = pmuctl(card, "stat", "-x", ",", "-e", "L2_VICTIM_REQ_WITH_DATA,SNP_HITM_BUNIT", "--", STEADY, "20000")
    assert p.returncode == 0, p.stderr
    shares = re.findall(r"^<not supported>,,(?:L2_VICTIM_REQ_WITH_DATA|SNP_HITM_BUNIT),\d+,(\d+\.\d\d)$", p.stdout, re.M)
    assert len(shares) == 2 and 0 < min(map(float, shares)) and abs(sum(map(float, shares)) - 100) < 0.02, p.stdout
    p = pmuctl(card, "stat", "--spflt", "-e", "L2_VICTIM_REQ_WITH_DATA,SNP_HITM_BUNIT", "--", HELLO)
    assert p.returncode == 2 and "--spflt needs the events on the counters" in p.stderr
    p = pmuctl(card, "run", "/bin/true")
    assert p.returncode != 0 and "not a pmuos program" in p.stderr
    big = tmp_path / "big.elf"
    big.write_bytes(open(HELLO, "rb").read() + bytes(5 << 20))
    p = pmuctl(card, "run", str(big))
    assert p.returncode != 0 and "too large" in p.stderr
    p = pmuctl(card, "run", "-C", "9", HELLO)
    assert p.returncode != 0 and "no CPU 9" in p.stderr
    p = subprocess.run([PMUCTL, "--card", "nosuchcard", "info"], capture_output=True, text=True)
    assert p.returncode != 0 and "no card at /dev/shm/pmuos-nosuchcard" in p.stderr


def test_eight_processes_at_once(card):
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: pmuctl(card, "info"), range(8)))
    for p in results:
        assert p.returncode == 0, p.stderr
        assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M)


def test_stale_heartbeat_is_reported_within_a_second(card):
    assert card.poweroff() == 0
    t0 = time.monotonic()
    p = pmuctl(card, "info")
    assert p.returncode != 0 and "heartbeat stale" in p.stderr
    assert time.monotonic() - t0 < 2.0


def test_record_and_report_name_the_inner_loop_hottest(card, tmp_path):
    data = tmp_path / "matmul.data"
    matmul = os.path.join(BUILD, "user", "matmul.elf")
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "10000", "-C", "1", "-o", str(data),
               "--", matmul, "64")
    assert p.returncode == 0, p.stderr
    m = re.search(r"\[ pmuctl record: (\d+) samples, 0 lost", p.stderr)
    assert m and int(m[1]) > 100, p.stderr
    rep = subprocess.run([PMUCTL, "report", "-i", str(data)], capture_output=True, text=True)
    rows = re.findall(r"^\s+([\d.]+)%\s+(\S+)$", rep.stdout, re.M)
    assert rows and rows[0][1] == "multiply_row" and float(rows[0][0]) > 50, rep.stdout
    assert abs(sum(float(r[0]) for r in rows) - 100) < 0.1
    folded = subprocess.run([PMUCTL, "report", "-i", str(data), "--folded"], capture_output=True, text=True)
    lines = dict(l.rsplit(" ", 1) for l in folded.stdout.splitlines())
    assert sum(int(v) for v in lines.values()) == int(m[1])
    assert "matmul.elf;multiply_row" in lines


def test_report_refuses_a_file_that_is_not_a_recording(tmp_path):
    bad = tmp_path / "x.data"
    bad.write_bytes(b"not a recording")
    p = subprocess.run([PMUCTL, "report", "-i", str(bad)], capture_output=True, text=True)
    assert p.returncode != 0 and "is not a pmuctl recording" in p.stderr


def test_more_events_than_counters_are_multiplexed(card):
    evs = "INSTRUCTIONS_EXECUTED:u,CPU_CLK_UNHALTED:u,INSTRUCTIONS_EXECUTED:k,CPU_CLK_UNHALTED:k,L2_VICTIM_REQ_WITH_DATA"
    p = pmuctl(card, "stat", "-e", evs, "-x", ",", "-C", "1", "--", os.path.join(BUILD, "user", "triad.elf"),
               "500000")
    assert p.returncode == 0, p.stderr
    rows = {r.split(",")[2]: r.split(",") for r in p.stdout.splitlines() if r.count(",") == 4}
    assert rows["L2_VICTIM_REQ_WITH_DATA"][0] == "<not supported>"
    for ev in evs.split(",")[:4]:
        value, _, _, runtime, pcnt = rows[ev]
        # Each event was on a counter for part of the run, and is scaled up from that part.
        assert int(value) > 0 and int(runtime) > 0 and 0 < float(pcnt) < 100, rows[ev]


def csv_counts(out):
    """{event: (value, runtime ns, running %)} from `stat -x ,` lines."""
    rows = [r.split(",") for r in out.splitlines() if r.count(",") == 4]
    return {r[2]: (int(r[0]), int(r[3]), float(r[4])) for r in rows if r[0].isdigit()}


def test_multiplexed_estimates_are_within_5_percent_of_separate_runs(card):
    pairs = ["INSTRUCTIONS_EXECUTED:u,INSTRUCTIONS_EXECUTED:k", "CPU_CLK_UNHALTED:u,CPU_CLK_UNHALTED:k"]
    alone = {}
    for evs in pairs:  # two events: on the counters for the whole run, exact
        p = pmuctl(card, "stat", "-x", ",", "-e", evs, "--", STEADY, "100000")
        assert p.returncode == 0, p.stderr
        alone.update(csv_counts(p.stdout))
    p = pmuctl(card, "stat", "-x", ",", "-e", ",".join(pairs), "--", STEADY, "100000")
    assert p.returncode == 0, p.stderr
    mux = csv_counts(p.stdout)
    assert len(alone) == len(mux) == 4, p.stdout
    for ev, (value, runtime, pcnt) in mux.items():
        assert alone[ev][2] == 100.0 and 40 < pcnt < 60, (ev, alone[ev], mux[ev])
        assert abs(value - alone[ev][0]) <= 0.05 * alone[ev][0], (ev, value, alone[ev][0])


def test_interval_counts_add_up_to_the_total(card):
    ev = "INSTRUCTIONS_EXECUTED:u"
    p = pmuctl(card, "stat", "-x", ",", "-e", ev, "--", STEADY, "50000")
    total = csv_counts(p.stdout)[ev][0]
    p = pmuctl(card, "stat", "-I", "100", "-x", ",", "-e", ev, "--", STEADY, "50000")
    assert p.returncode == 0, p.stderr
    rows = [r.split(",") for r in p.stdout.splitlines() if r.count(",") == 5]
    times = [float(r[0]) for r in rows]
    assert len(rows) >= 3 and times == sorted(times), p.stdout
    # User instructions are exact: every interval's share adds up to the run's total.
    assert sum(int(r[1]) for r in rows if r[1].isdigit()) == total, (rows, total)


def test_run_shows_each_task_output_and_the_fault_report(card):
    p = pmuctl(card, "run", "-C", "1-3", HELLO)
    assert p.returncode == 0, p.stderr
    for rank in range(3):
        assert f"[rank {rank}] hello from pmuos: rank {rank} of 3 on CPU {rank + 1}" in p.stdout, p.stdout
    p = pmuctl(card, "run", "-C", "2", os.path.join(BUILD, "user", "fault.elf"), "pf")
    assert p.returncode == 128 + 11, p.stderr
    assert re.search(r"task \d+ \(fault\.elf, rank 0\) on CPU 2: #PF page fault", p.stdout), p.stdout


def test_a_signal_ends_the_program_on_the_card(card):
    child = subprocess.Popen([PMUCTL, "--card", card.name, "run", "-C", "3", STEADY, "100000000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 128 + signal.SIGINT and "ending the program on the card" in err, err
    # CPU 3 is free again: a new program starts and ends at once.
    p = pmuctl(card, "run", "-C", "3", HELLO, timeout=30)
    assert p.returncode == 0 and "on CPU 3" in p.stdout, p.stderr


def test_progress_is_shown_on_a_terminal_only(card):
    child = pexpect.spawn(PMUCTL, ["--card", card.name, "run", STEADY, "150000"], encoding="utf-8", timeout=120)
    child.expect(r"\r\x1b\[Kpmuctl: steady\.elf on 1 CPU\(s\): [\d.]+ s")
    child.expect_exact("steady: 150000 rounds")
    child.expect(pexpect.EOF)
    p = pmuctl(card, "run", STEADY, "150000")
    assert p.returncode == 0 and "CPU(s)" not in p.stderr, p.stderr


def test_console_runs_shell_lines_through_the_mailbox(card):
    p = subprocess.run([PMUCTL, "--card", card.name, "console"], input="cpus\necho via mailbox\nfrob\n",
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "4 CPUs, 4 online" in p.stdout and "via mailbox" in p.stdout
    assert "error: unknown command 'frob'" in p.stdout


def test_reset_init_keeps_and_warm_clears_the_pmu(card):
    def regs1(out):
        return int(re.search(r"IA32_PerfEvtSel0\s+\(0x28\)\s+(0x[0-9a-f]+|0+)", out)[1], 16)

    subprocess.run([PMUCTL, "--card", card.name, "console"], input="pmu set 2 0 INSTRUCTIONS_EXECUTED:k\n",
                   capture_output=True, text=True, timeout=60, check=True)
    p = pmuctl(card, "reset", "--init", "2")
    assert p.returncode == 0 and "CPU 2 back after INIT; PMU state kept as found: EvtSel0=0x520016" in p.stdout
    assert regs1(card.cmd("pmu regs 2")) == 0x520016
    p = pmuctl(card, "reset", "--init", "0")
    assert p.returncode != 0 and "INIT reaches APs" in p.stderr
    p = pmuctl(card, "reset", "--warm")
    assert p.returncode == 0 and "READY again" in p.stdout, p.stderr
    card.wait_prompt(60)
    assert regs1(card.cmd("pmu regs 2")) == 0
