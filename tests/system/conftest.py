"""System-test helpers: boot the card in QEMU through scripts/qemu.sh and
drive its serial shell with pexpect over pipes (as piped input would, so
every byte reaches the card unchanged: no terminal signals or translation),
on the strict KNC CPU but for the tests FULL_CPU names."""
import importlib.util
import os
import re
import subprocess
import time

import pexpect
from pexpect.popen_spawn import PopenSpawn
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# make exports BUILD relative to the tree (build): absolute, so a test may run pmuctl from another directory.
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PROMPT = "pmuos> "

# scripts/knc-audit.py (a file name that is no module name): the audit of
# what a KNC core cannot execute, for test_knc_text and test_softfloat.
_spec = importlib.util.spec_from_file_location("knc_audit", os.path.join(ROOT, "scripts", "knc-audit.py"))
knc_audit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(knc_audit)
# The tests that run on QEMU's full CPU (scripts/qemu.sh CPU=max); every other
# one runs on the strict KNC CPU (CPU=knc) unless the environment says
# CPU=max (`make test CPU=max`). An entry is a test file, or file::test (a
# module-scoped card is made for the first test of its file: a test named
# here alone that shares one needs a card of its own, Card(cpu="max")).
FULL_CPU = {
    # Needed for good: the firmware, OVMF, is SSE code (and a card boots no UEFI).
    "test_uefi.py": "OVMF runs SSE",
    # The VPU's stand-ins: the plugin's VPU events count SSE/AVX instructions;
    # both run vectest (pmuos-cc --qemu-sse, user/user.mk SSE_PROGRAMS) on a
    # card of their own.
    "test_plugin.py::test_vector_events": "SSE as the VPU's stand-in",
    "test_plugin.py::test_vector_loads_and_stores_equal_valgrinds": "SSE as the VPU's stand-in",
    # XMM and MXCSR isolation between tasks: ssefault (QEMU-only) writes and reads them.
    "test_hostile.py::test_sse_state_does_not_pass_to_the_next_task": "SSE state isolation",
}
_item = None  # the test being set up (pytest_runtest_setup below)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    global _item
    _item = item


def default_cpu():
    """max for the test being set up if FULL_CPU names it or its file, else
    the environment's CPU, knc unless set."""
    if _item is not None:
        path, _, name = _item.nodeid.partition("::")
        base = os.path.basename(path)
        if base in FULL_CPU or f"{base}::{name.split('[')[0]}" in FULL_CPU:
            return "max"
    return os.environ.get("CPU") or "knc"


def knc_report_lines(name):
    """What the plugin reported of card `name`'s instructions a KNC core lacks
    (scripts/qemu.sh CPU=knc): one line each, without the summary at exit."""
    try:
        with open(f"/dev/shm/pmuos-{name}-knc") as f:
            return [l for l in f.read().splitlines() if " ran, " not in l]
    except FileNotFoundError:
        return []


class Card:
    """One QEMU instance with the shell on its serial port. Without a boot
    path it boots the one BOOT names in the environment (multiboot unless
    set: `make test BOOT=linux TESTS=...` runs those tests on the bzImage).
    Without a CPU, default_cpu()'s. On the strict CPU, close() fails the test
    if the plugin saw an instruction a KNC core lacks, unless the test
    expected it (knc_expected)."""
    count = 0

    def __init__(self, cpus=4, boot=None, timeout=60, env=None, qemu_args=(), cpu=None):
        # A mailbox of its own (/dev/shm/pmuos-<name>), apart from `make run`'s.
        Card.count += 1
        self.name = f"test{os.getpid()}-{Card.count}"
        self.knc_expected = False
        boot = boot or os.environ.get("BOOT", "multiboot")
        e = dict(os.environ, CPUS=str(cpus), BOOT=boot, BUILD=BUILD, CARD=self.name, CPU=cpu or default_cpu())
        e.update(env or {})
        self.cpu = e["CPU"]
        self.child = PopenSpawn([os.path.join(ROOT, "scripts", "qemu.sh"), *qemu_args], cwd=ROOT,
                                env=e, encoding="latin-1", timeout=timeout)
        try:
            self.boot_log = self.wait_prompt(timeout)
        except BaseException as e:
            # Nobody holds a card that never came up: end its QEMU here, or it runs on after the test.
            self.child.kill(9)
            self.child.proc.wait()
            if isinstance(e, pexpect.TIMEOUT):
                raise AssertionError(f"card {self.name}: no prompt within {timeout} s; what it printed, its end:\n"
                                     + (self.child.before or "")[-3000:]) from None
            if isinstance(e, pexpect.EOF):
                raise AssertionError(f"card {self.name}: ended before its prompt (status {self.child.proc.returncode}); "
                                     "what it printed, its end:\n" + (self.child.before or "")[-3000:]) from None
            raise

    def wait_prompt(self, timeout=30):
        self.child.expect_exact(PROMPT, timeout=timeout)
        return self.child.before

    def cmd(self, line, timeout=30):
        """Sends one line and returns what the card printed before the next
        prompt, without the echoed command line."""
        self.child.send(line + "\r")
        out = self.wait_prompt(timeout).replace("\r\n", "\n")
        echo, _, rest = out.partition("\n")
        return rest

    def sync(self, timeout=60):
        """Returns everything printed up to a fresh marker's echo, then the
        prompt after it: a known state however many prompts came before."""
        self.marker = getattr(self, "marker", 0) + 1
        self.child.send(f"\x15echo sync-{self.marker}\r")
        self.child.expect_exact(f"\r\nsync-{self.marker}\r\n", timeout=timeout)
        before = self.child.before
        self.wait_prompt(timeout)
        return before

    def send_raw(self, data: bytes):
        self.child.proc.stdin.write(data)
        self.child.proc.stdin.flush()

    def poweroff(self, timeout=30):
        self.child.send("poweroff\r")
        self.child.expect(pexpect.EOF, timeout=timeout)
        return self.child.proc.wait(timeout)

    def knc_report(self):
        """The plugin's lines so far, one per instruction a KNC core lacks."""
        return knc_report_lines(self.name)

    def close(self):
        report = self.knc_report()  # before QEMU ends: its keeper then removes the file
        if self.child.proc.poll() is None:
            self.child.kill(9)
            self.child.proc.wait()
        check_card_gone(self.name)
        assert self.knc_expected or not report, \
            "the strict CPU ran instructions a KNC core lacks:\n" + "\n".join(report)


PLUGIN = os.environ.get("PLUGIN", "1") != "0"  # `make test PLUGIN=0`: QEMU without the plugin


def plugin_card(**kw):
    """A Card (its arguments) that the plugin counts on; the test is skipped under PLUGIN=0."""
    if not PLUGIN:
        pytest.skip("PLUGIN=0: QEMU runs without the plugin")
    return Card(**kw)


def pmuctl_ok(card, *args, timeout=600):
    """pmuctl ARGS against `card` (a Card), which must succeed: the finished process."""
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card.name, *args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def card_files(name):
    """What card `name` has in /dev/shm of the files scripts/card-keeper.py makes: its mailbox, -pmu, -knc,
    -ram, .sock, .lock (not what a test or the simulated card makes beside them)."""
    base = f"pmuos-{name}"
    return sorted(f for f in os.listdir("/dev/shm") if f in (base, base + "-pmu", base + "-knc", base + "-ram",
                                                              base + ".sock", base + ".lock"))


def check_card_gone(name, timeout=10):
    """Nothing of card `name` stays in /dev/shm once its QEMU has ended, however it ended: its
    keeper's watcher removes it all. Waits up to `timeout` s for that; a file left fails the test."""
    end = time.monotonic() + timeout
    while card_files(name) and time.monotonic() < end:
        time.sleep(0.05)
    assert not card_files(name), f"card {name} left {card_files(name)} in /dev/shm"


@pytest.fixture
def card_factory():
    cards = []

    def make(**kw):
        c = Card(**kw)
        cards.append(c)
        return c

    yield make
    close_all(cards)


def close_all(cards):
    """Closes every card, then raises the first failed close's report."""
    errors = []
    for c in cards:
        try:
            c.close()
        except AssertionError as e:
            errors.append(e)
    if errors:
        raise errors[0]


@pytest.fixture
def fresh_card(card_factory):
    """A 4-CPU card of the test's own, for a test that ends the card, resets it,
    stops it or leaves it changed in a way a later test could see."""
    return card_factory(cpus=4)


@pytest.fixture(scope="module")
def _shared_cards():
    """The 4-CPU cards `card` hands out, one per CPU model, kept for one test file."""
    cards = {}
    yield cards
    close_all(cards.values())


@pytest.fixture
def card(_shared_cards):
    """A 4-CPU card booted once for all the tests of a file that take it (one
    each for the strict CPU and, for a test FULL_CPU names, QEMU's full CPU):
    a boot is most of what such a test costs. Each test gets it running, at
    a fresh prompt and with no task running or waiting; one that a test left
    ended, not answering or busy (a failed test's program runs on) is
    replaced. The check close() makes for instructions a KNC core lacks is
    made after each test, on the lines the plugin reported during it."""
    cpu = default_cpu()
    c = _shared_cards.get(cpu)
    if c is not None:
        try:
            usable = c.child.proc.poll() is None and c.sync(timeout=30) is not None and \
                not re.search(r"^\s*\d+\s+\S+\s+\d+\s+\d+\s+(ready|running)\b", c.cmd("tasks"), re.M)
        except (pexpect.TIMEOUT, pexpect.EOF):
            usable = False
        if not usable:
            c.knc_expected = True  # what it reported was checked after the test that ran it
            c.close()
            c = None
    if c is None:
        c = _shared_cards[cpu] = Card(cpus=4, cpu=cpu)
    seen = len(c.knc_report())
    yield c
    report = c.knc_report()[seen:]
    assert c.knc_expected or not report, \
        "the strict CPU ran instructions a KNC core lacks:\n" + "\n".join(report)


def running(card, cpu, timeout=30):
    """Waits until `cpu` runs a task (the shell's task table says so)."""
    end = time.time() + timeout
    while time.time() < end:
        if re.search(rf"^\s*\d+\s+\S+\s+{cpu}\s+\d+\s+running", card.cmd("tasks"), re.M):
            return
        time.sleep(0.2)
    raise AssertionError(f"no task running on CPU {cpu}")


def check_calib_spflt(p):
    """pmuctl stat --spflt -e INSTRUCTIONS_EXECUTED:u... of calib (its result p): every
    SPFLT region counted exactly, and the table's count is the kernel's reading of the
    counter that calib printed last."""
    assert p.returncode == 0, p.stderr
    for k in (1, 10, 1000, 1000000):
        assert f"calib: region of {k} user instructions counted {k}\n" in p.stdout, p.stdout
    final = int(re.search(r"final counter 0 = (\d+)", p.stdout)[1])
    m = re.search(r"^\s+([\d,]+)\s+INSTRUCTIONS_EXECUTED:u$", p.stderr, re.M)
    assert m and int(m[1].replace(",", "")) == final, p.stderr


def cpu_rows(output):
    """Parses the 'cpus' table into {cpu: (apic, core, thread, state)}."""
    rows = {}
    for m in re.finditer(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\w+)", output, re.M):
        rows[int(m[1])] = (int(m[2]), int(m[3]), int(m[4]), m[5])
    return rows
