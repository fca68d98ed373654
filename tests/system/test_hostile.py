"""Hostile Ring-3 programs (issue 9): whatever a task does with the flags, the
FPU or its CPU, the card stays up, the task ends with a report or goes on,
and the next task starts clean."""
import re

import pytest

from conftest import cpu_rows


def status(out):
    m = re.search(r"^task \d+ \((?:fault|ssefault), rank 0, CPU \d+\): (.*)$", out, re.M)
    return m[1] if m else None


def healthy(card):
    assert card.cmd("echo ok") == "ok\n"
    rows = cpu_rows(card.cmd("cpus"))
    assert all(r[3] == "online" for r in rows.values()), rows
    assert status(card.cmd("run fault")) == "exit status 2"  # a new task runs


def test_rflags_before_syscall_and_trap(card):
    # NT before SYSCALL used to make the return IRETQ fault after SWAPGS: a triple fault.
    out = card.cmd("run fault flags on 1", timeout=60)
    for name in ("NT", "AC", "DF", "NT+AC+DF"):
        for way in ("SYSCALL", "a trap"):
            assert f"flags: {name} before {way}: survived" in out, out
    assert "flags: IOPL after POPF of 3: 0" in out
    assert status(out) == "exit status 0", out
    healthy(card)


@pytest.mark.parametrize("kind,report", [
    ("tf", "#DB debug (vector 1)"),
    ("iopl", "#GP general protection (vector 13)"),
    ("x87", "#MF x87 error (vector 16)"),
])
def test_fatal_flags_and_fpu_end_only_the_task(card, kind, report):
    out = card.cmd(f"run fault {kind} on 2", timeout=60)
    assert re.search(rf"task \d+ \(fault, rank 0\) on CPU 2: {re.escape(report)} at RIP 0x[0-9a-f]+", out), out
    vector = re.search(r"vector (\d+)", report)[1]
    assert status(out) == f"ended by exception vector {vector}"
    healthy(card)


def fpu_state_does_not_pass_to_the_next_task(card, program, line):
    clean = card.cmd(f"run {program} fpu-check on 3")
    assert line in clean, clean
    assert status(card.cmd(f"run {program} fpu-dirty on 3")) == "exit status 0"
    after = card.cmd(f"run {program} fpu-check on 3")
    assert line in after, after


def test_fpu_state_does_not_pass_to_the_next_task(card):
    # fault, card code: the x87's control word, status and tags.
    fpu_state_does_not_pass_to_the_next_task(card, "fault", "fpu: x87 control 0x37f, status 0, tags 0xffff\n")


def test_sse_state_does_not_pass_to_the_next_task(card):
    # ssefault (QEMU's full CPU, conftest FULL_CPU): MXCSR and every XMM register too.
    fpu_state_does_not_pass_to_the_next_task(
        card, "ssefault",
        "fpu: mxcsr 0x1f80, x87 control 0x37f, status 0, tags 0xffff, 0 of 16 XMM registers not zero")
