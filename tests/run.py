#!/usr/bin/env python3
"""Runs every test: the unit-test binaries (cmocka, TAP output), the fuzz
targets (libFuzzer, a fixed number of inputs) and the system tests (pytest). Prints each result and ends with the line
"N passed, N failed"; exits non-zero if anything failed or nothing ran."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))


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
FUZZ_INPUT_S = 10
FUZZ_TOTAL_S = 600


def fuzz_one(b):
    """Runs fuzz target `b`: (passed, what to print)."""
    fuzz_dir = os.path.join(BUILD, "fuzz")
    # libFuzzer adds the inputs it finds to its first corpus directory and
    # writes crash inputs to the artifact prefix: both go to a fresh
    # directory under BUILD, never into the tree, and each run starts the same.
    work = os.path.join(BUILD, "fuzz-run", b)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "new"))
    corpora = [d for d in (os.path.join(ROOT, "tests", "fuzz", "corpus", b), os.path.join(BUILD, "fuzz-seeds", b))
               if os.path.isdir(d)]
    cmd = [os.path.join(fuzz_dir, b), f"-runs={FUZZ_RUNS}", "-seed=1", f"-timeout={FUZZ_INPUT_S}",
           f"-max_total_time={FUZZ_TOTAL_S}", f"-artifact_prefix={work}/", os.path.join(work, "new")] + corpora
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=FUZZ_TOTAL_S + 60)
        done = re.search(r"^Done (\d+) runs", p.stderr, re.M)
        ok = p.returncode == 0 and done is not None and int(done[1]) >= FUZZ_RUNS
        log = p.stderr
    except subprocess.TimeoutExpired as e:
        ok, log = False, f"killed after {FUZZ_TOTAL_S + 60} s\n" + (e.stderr or b"").decode(errors="replace")
    seeds = ", ".join(os.path.relpath(d, ROOT) for d in corpora) or "no seed corpus"
    out = f"fuzz {b}: {'passed' if ok else 'FAILED'} (10^6 inputs, {seeds})"
    if not ok:
        out += "\n" + log[-3000:] + f"\n  command: {' '.join(cmd)}"
    return ok, out


def run_fuzz():
    """Each fuzz target: 10^6 inputs from a fixed seed, starting from its seed
    corpus (tests/fuzz/corpus/<target>/ and $(BUILD)/fuzz-seeds/<target>/,
    when they exist); one test each. The targets are independent processes:
    as many run at once as the host has cores, and the results print in order."""
    fuzz_dir = os.path.join(BUILD, "fuzz")
    bins = sorted(f for f in os.listdir(fuzz_dir) if os.path.isfile(os.path.join(fuzz_dir, f))
                  and os.access(os.path.join(fuzz_dir, f), os.X_OK)) if os.path.isdir(fuzz_dir) else []
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for ok, out in pool.map(fuzz_one, bins):
            print(out, flush=True)
            passed += ok
            failed += not ok
    return passed, failed


def run_system(args):
    xml = os.path.join(BUILD, "pytest.xml")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v",
           "-W", "ignore::DeprecationWarning",
           f"--junitxml={xml}", os.path.join(ROOT, "tests", "system")] + args
    subprocess.run(cmd, cwd=ROOT)
    if not os.path.exists(xml):
        return 0, 1
    suite = ET.parse(xml).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, fails, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    return total - fails - errors - skipped, fails + errors


def main():
    up, uf = run_unit()
    fp, ff = run_fuzz()
    sp, sf = run_system(sys.argv[1:])
    passed, failed = up + fp + sp, uf + ff + sf
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
