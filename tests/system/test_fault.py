"""A kernel exception on one AP stops only that CPU (issue: boot, must show 3)."""
import os
import re
import subprocess

from conftest import BUILD, cpu_rows


def test_page_fault_on_an_ap_is_reported_and_contained(fresh_card):
    card = fresh_card
    card.child.send("debug fault 2\r")
    card.child.expect(r"\*\*\* CPU 2 stopped; the other CPUs go on\.")
    report = card.child.before
    assert "KERNEL EXCEPTION on CPU 2 (APIC 2): #PF page fault, vector 14" in report
    assert re.search(r"CR2 00000dead0000000", report)
    assert re.search(r"RIP [0-9a-f]{16}", report)
    for reg in ["RAX", "RBX", "RSP", "R15"]:
        assert reg in report
    # The shell's prompt and CPU 2's report race on the console: start from a known state.
    card.sync()
    rows = cpu_rows(card.cmd("cpus"))
    assert rows[2][3] == "faulted"
    assert [rows[i][3] for i in (0, 1, 3)] == ["online"] * 3
    assert card.cmd("echo ok") == "ok\n"


def test_each_fault_kind_names_its_vector(card_factory):
    card = card_factory(cpus=4)
    for cpu, kind, name in [(1, "ud", "#UD invalid opcode, vector 6"),
                            (2, "gp", "#GP general protection, vector 13"),
                            (3, "de", "#DE divide error, vector 0")]:
        card.child.send(f"debug fault {cpu} {kind}\r")
        card.child.expect_exact(f"*** CPU {cpu} stopped")
        assert name in card.child.before
        # The prompt after `debug fault` may come before or after the report:
        # a stale prompt left behind made the next cmd() return "" (seen once).
        card.sync()
    out = card.cmd("cpus")
    assert "4 CPUs, 1 online" in out
    # A stopped CPU refuses further work with an error instead of hanging the shell.
    assert card.cmd("debug fault 1") == "error: debug: CPU 1 is not online\n"
    assert card.poweroff() == 0


def test_a_kernel_exception_on_cpu_0_is_the_cards_panic(card_factory):
    # CPU 0 runs the shell and is the mailbox service's home: its stop is the card's panic,
    # which the mailbox says (state PANIC), so a host stops waiting for it.
    card = card_factory(cpus=2)
    assert subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card.name, "info"],
                          capture_output=True, text=True, timeout=60).returncode == 0
    card.child.send("debug fault 0\r")
    card.child.expect_exact("*** CPU 0 stopped")
    p = subprocess.run([os.path.join(BUILD, "pmuctl"), "--card", card.name, "info"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "is not READY (state 3: panic)" in p.stderr, p.stderr
