#!/usr/bin/env python3
"""Runs every test: the unit-test binaries (cmocka, TAP output), the fuzz
targets (libFuzzer, a fixed number of inputs) and the system tests (pytest). Prints each result and ends with the line
"N passed, N failed"; exits non-zero if anything failed or nothing ran."""
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# make exports BUILD relative to the tree (build): absolute, so a test may run pmuctl from another directory.
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))


def run_unit():
    passed = failed = 0
    unit_dir = os.path.join(BUILD, "unit")
    bins = sorted(f for f in os.listdir(unit_dir) if f.startswith("test_")
                  and os.access(os.path.join(unit_dir, f), os.X_OK)) if os.path.isdir(unit_dir) else []
    for b in bins:
        p = subprocess.run([os.path.join(unit_dir, b)], capture_output=True, text=True,
                           env=dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP"), timeout=300)
        ok = len(re.findall(r"^ok \d+ ", p.stdout, re.M))
        bad = len(re.findall(r"^not ok \d+ ", p.stdout, re.M))
        plan = re.search(r"^1\.\.(\d+)", p.stdout, re.M)
        # A crash (sanitizer, alarm) ends the TAP stream early or exits non-zero.
        if (p.returncode != 0 or not plan or ok + bad < int(plan[1])) and bad == 0:
            bad = 1
        print(f"unit {b}: {ok} passed, {bad} failed")
        if bad:
            print(p.stdout + p.stderr)
        passed += ok
        failed += bad
    return passed, failed


# libFuzzer counts every input it runs, the seed corpus (and one empty input
# before it) included, so 10^6 runs are 10^6 inputs whatever the corpus holds.
FUZZ_RUNS = 1000000
# Time bounds (tests/fuzz.mk): one input may take FUZZ_INPUT_S seconds (else
# libFuzzer reports a hang), a whole run FUZZ_TOTAL_S (else it stops short of
# FUZZ_RUNS, which fails), and the process gets a minute more before it is killed.
# Both are wall time, and a fuzz process waits at FUZZ_NICE while both system-test
# streams run: an input of 0.1 CPU-s can then take seconds, and a process minutes
# more than its CPU time. They are guards against hangs, far above what a run needs.
FUZZ_INPUT_S = 60
FUZZ_TOTAL_S = 1200
# Their niceness (nice(1)): below every test's process, so that fuzzing on a
# core never delays a card or pmuctl (both wait on host time).
FUZZ_NICE = 19


# Processes per target, each of FUZZ_RUNS / n inputs from a seed of its own
# (1, 2, ...; -seed=1 alone when n is 1): the slow targets are split so that
# they spread over the cores. The same inputs on any host, whatever its cores.
FUZZ_SPLIT = {"fuzz_shell": 2, "fuzz_elf": 2, "fuzz_pmuctl": 2}


def fuzz_jobs():
    """(target, seed, inputs) for each fuzz process, the longest first: the
    split targets' (each process most of a minute of a core), then the rest."""
    fuzz_dir = os.path.join(BUILD, "fuzz")
    bins = sorted(f for f in os.listdir(fuzz_dir) if os.path.isfile(os.path.join(fuzz_dir, f))
                  and os.access(os.path.join(fuzz_dir, f), os.X_OK)) if os.path.isdir(fuzz_dir) else []
    jobs = [(b, seed, FUZZ_RUNS // FUZZ_SPLIT.get(b, 1)) for b in bins for seed in range(1, FUZZ_SPLIT.get(b, 1) + 1)]
    return sorted(jobs, key=lambda j: (j[0] not in FUZZ_SPLIT, j[0], j[1]))


def fuzz_one(job):
    """Runs one fuzz process (fuzz_jobs): (passed, what to print)."""
    b, seed, runs = job
    fuzz_dir = os.path.join(BUILD, "fuzz")
    # libFuzzer adds the inputs it finds to its first corpus directory and
    # writes crash inputs to the artifact prefix: both go to a fresh
    # directory under BUILD, never into the tree, and each run starts the same.
    work = os.path.join(BUILD, "fuzz-run", f"{b}-{seed}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "new"))
    corpora = [d for d in (os.path.join(ROOT, "tests", "fuzz", "corpus", b), os.path.join(BUILD, "fuzz-seeds", b))
               if os.path.isdir(d)]
    cmd = [os.path.join(fuzz_dir, b), f"-runs={runs}", f"-seed={seed}", f"-timeout={FUZZ_INPUT_S}",
           f"-max_total_time={FUZZ_TOTAL_S}", f"-artifact_prefix={work}/", os.path.join(work, "new")] + corpora
    t0 = time.monotonic()
    try:
        # nice(1) rather than a preexec_fn: the workers start processes from several threads.
        p = subprocess.run(["nice", "-n", str(FUZZ_NICE)] + cmd, capture_output=True, text=True, errors="replace",
                           timeout=FUZZ_TOTAL_S + 60)
        done = re.search(r"^Done (\d+) runs", p.stderr, re.M)
        ok = p.returncode == 0 and done is not None and int(done[1]) >= runs
        log = p.stderr
    except subprocess.TimeoutExpired as e:
        ok, log = False, f"killed after {FUZZ_TOTAL_S + 60} s\n" + (e.stderr or b"").decode(errors="replace")
    seeds = ", ".join(os.path.relpath(d, ROOT) for d in corpora) or "no seed corpus"
    out = (f"fuzz {b} seed {seed}: {'passed' if ok else 'FAILED'} ({runs} inputs, {seeds}; "
           f"{time.monotonic() - t0:.0f} s)")
    if not ok:
        out += "\n" + log[-3000:] + f"\n  command: {' '.join(cmd)}"
    return ok, out


def start_pool(jobs, workers, run, done):
    """Starts `workers` threads that take jobs in order, each the next one
    when it is free, and call done(job, run(job)) (under one lock, so done
    may print and count). Returns the threads, for the caller to join."""
    pending = list(jobs)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                job = pending.pop(0)
            result = run(job)
            with lock:
                done(job, result)

    threads = [threading.Thread(target=worker) for _ in range(min(workers, len(pending)))]
    for t in threads:
        t.start()
    return threads


def run_fuzz_beside(tests):
    """The fuzz processes (fuzz_jobs), one per core at a time, beside
    tests(), which runs the unit and system tests: the fuzz processes run at
    the lowest priority (FUZZ_NICE), so the tests get a core whenever they
    want one and the fuzzing takes what they leave (waits on cards and
    programs in the system tests' streams, then the cores once the system
    tests have ended). Each process is one test; the
    results print in order once all have ended. Returns (passed, failed, tests()'s value)."""
    results = {}
    workers = start_pool(fuzz_jobs(), os.cpu_count() or 1, fuzz_one, results.__setitem__)
    try:
        value = tests()
    finally:
        for w in workers:
            w.join()
    passed = failed = 0
    for job in fuzz_jobs():
        ok, out = results[job]
        print(out, flush=True)
        passed += ok
        failed += not ok
    return passed, failed, value


# The system-test files run in SYSTEM_STREAMS pytest processes at once,
# one file per process, the next file to whichever stream ends first: a
# card's QEMU runs its vCPUs on one host thread (-icount), and many tests
# wait on a card, so one stream left a core to the fuzzing alone. Files keep
# their module-scoped cards (conftest.py), and every card has names of its
# own (conftest.py Card: the pytest process's PID), so two streams share
# nothing. The files SLOW_FIRST names start first (the longest in wall time
# on a quiet host, measured), so that the short ones fill the end.
SYSTEM_STREAMS = 2
SLOW_FIRST = ["test_races.py", "test_pmuctl.py", "test_card_boot.py", "test_soak.py", "test_linux_boot.py",
              "test_plugin.py", "test_full_card.py", "test_uefi.py", "test_boot.py", "test_doorbell.py",
              "test_knc_cpu.py", "test_card_files.py", "test_tasks.py", "test_pmu.py"]


def system_streams(args):
    """The pytest argument lists to run, each a stream's share: one list per
    system-test file (SLOW_FIRST's first), or `args` alone when they name
    files or tests themselves (make test TESTS=tests/system/test_x.py::y)."""
    if any(a.endswith(".py") or "::" in a or a.startswith("tests/") for a in args):
        return [("selected", list(args))]
    sysdir = os.path.join(ROOT, "tests", "system")
    files = sorted(f for f in os.listdir(sysdir) if f.startswith("test_") and f.endswith(".py"))
    files.sort(key=lambda f: SLOW_FIRST.index(f) if f in SLOW_FIRST else len(SLOW_FIRST))
    return [(f[:-3], [os.path.join(sysdir, f)] + list(args)) for f in files]


def run_pytest(name, args):
    """One pytest process (output kept, printed whole): (passed, failed, output)."""
    os.makedirs(os.path.join(BUILD, "pytest"), exist_ok=True)
    xml = os.path.join(BUILD, "pytest", f"{name}.xml")
    if os.path.exists(xml):
        os.remove(xml)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "--no-header",
           "-W", "ignore::DeprecationWarning", f"--junitxml={xml}"] + args
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    took = f"{time.monotonic() - t0:.0f} s"
    if p.returncode == 5:  # pytest: no test selected here (TESTS="-k ...")
        return 0, 0, ""
    if not os.path.exists(xml):
        return 0, 1, p.stdout + f"system {name}: pytest ended ({p.returncode}) without a report ({took})\n"
    suite = ET.parse(xml).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, fails, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    return total - fails - errors - skipped, fails + errors, p.stdout + f"system {name}: {took}\n"


def run_system(args):
    """The system tests (system_streams), SYSTEM_STREAMS at a time; each
    file's output prints whole when it ends. Returns (passed, failed)."""
    totals = [0, 0]

    def done(_, result):
        passed, failed, out = result
        print(out, end="", flush=True)
        totals[0] += passed
        totals[1] += failed

    for t in start_pool(system_streams(args), SYSTEM_STREAMS, lambda job: run_pytest(*job), done):
        t.join()
    return totals[0], totals[1]


def main():
    t0 = time.monotonic()
    times = {}

    def tests():
        unit = run_unit()
        times["unit"] = time.monotonic() - t0
        system = run_system(sys.argv[1:])
        times["system"] = time.monotonic() - t0 - times["unit"]
        return unit, system

    fp, ff, ((up, uf), (sp, sf)) = run_fuzz_beside(tests)
    print(f"time: unit tests {times['unit']:.0f} s, system tests {times['system']:.0f} s, fuzzing beside them "
          f"and after: {time.monotonic() - t0:.0f} s in all")
    passed, failed = up + fp + sp, uf + ff + sf
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
