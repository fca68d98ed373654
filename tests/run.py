#!/usr/bin/env python3
"""Runs every test: the unit-test binaries (cmocka, TAP output), the fuzz
targets (libFuzzer, a fixed number of inputs) and the system tests (pytest). Prints each result and ends with the line
"N passed, N failed"; exits non-zero if anything failed or nothing ran."""
import os
import re
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


def run_fuzz():
    """Each fuzz target: 10^6 inputs from a fixed seed; one test each."""
    passed = failed = 0
    fuzz_dir = os.path.join(BUILD, "fuzz")
    for b in sorted(os.listdir(fuzz_dir)) if os.path.isdir(fuzz_dir) else []:
        p = subprocess.run([os.path.join(fuzz_dir, b), "-runs=1000000", "-seed=1"], capture_output=True,
                           text=True, timeout=600)
        ok = p.returncode == 0 and "Done 1000000 runs" in p.stderr
        print(f"fuzz {b}: {'passed' if ok else 'FAILED'} (10^6 inputs)")
        if not ok:
            print(p.stderr[-3000:])
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
