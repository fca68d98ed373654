"""Races and a hostile host (issue 9): requests that arrive while CPUs run
tasks, INIT of busy CPUs, several pmuctl processes at once, processes killed
mid-way, and a host that writes nonsense into the mailbox. Each case ends
with every process answered (a result or a named error) and the card
healthy (`pmuctl info` answers at once). The tests that INIT or reset CPUs,
or write nonsense into the mailbox, take a card of their own (fresh_card);
the others share the file's card (conftest.py `card`: each starts with no
task running or waiting, so CPU 0 serves the mailbox as on a fresh card)."""
import fcntl
import os
import re
import signal
import struct
import subprocess
import time

import pexpect
import pytest

from conftest import BUILD, cpu_rows, running
from mbox import Mailbox

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")


def pmuctl(card, *args, timeout=120):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True,
                          timeout=timeout)


def pmuctl_bg(card, *args):
    return subprocess.Popen([PMUCTL, "--card", card.name, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def elf(name):
    return os.path.join(USER, f"{name}.elf")


def answers(card, online=None):
    """The card answers a host request within 2 s and says how many CPUs are online."""
    t = time.time()
    p = pmuctl(card, "info", timeout=30)
    assert p.returncode == 0, p.stderr
    assert time.time() - t < 2.5, f"info took {time.time() - t:.1f} s"
    m = re.search(r"^cpus\s+(\d+) \((\d+) online\)$", p.stdout, re.M)
    if online is not None:
        assert int(m[2]) == online, p.stdout
    return p


@pytest.mark.parametrize("target", [1, 2])
def test_run_on_a_cpu_that_runs_a_task_waits_its_turn(card, target):
    # Tasks run on CPUs 1 and 2; the CPU that started last (2) serves the
    # mailbox. A RUN for a busy CPU, served there, must leave the service
    # with a CPU that serves: it used to be handed to the busy CPU (1) with
    # no heartbeat, or (2) cancel the server's own heartbeat, and every
    # pmuctl then said "no answer".
    first = [pmuctl_bg(card, "run", "-C", str(c), elf("steady"), "100000") for c in (1, 2)]
    for c in (1, 2):
        running(card, c)
    # Both tasks (about 8 s each) must still run when the second RUN arrives.
    assert all(p.poll() is None for p in first), "the tasks ended before the second RUN"
    second = pmuctl(card, "run", "-C", str(target), elf("hello"), "x")
    assert second.returncode == 0, second.stderr
    assert f"hello from pmuos: rank 0 of 1 on CPU {target} x" in second.stdout
    for p in first:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "steady: 100000 rounds" in out
    answers(card, online=4)


def test_init_of_a_cpu_that_runs_a_task_from_the_host(fresh_card):
    card = fresh_card
    # CPU 1 runs the task and serves the mailbox: the INIT request is served
    # there, and used to INIT the serving CPU itself, holding the service.
    spin = pmuctl_bg(card, "run", "-C", "1", elf("fault"), "spin")
    running(card, 1)
    p = pmuctl(card, "reset", "--init", "1", timeout=60)
    assert p.returncode == 0, p.stderr
    out, err = spin.communicate(timeout=60)
    assert spin.returncode == 128 + 9, (out, err)  # the task was killed by the INIT
    answers(card, online=4)
    assert "ended by INIT" in card.sync()
    # The CPU runs tasks again.
    p = pmuctl(card, "run", "-C", "1", elf("hello"))
    assert p.returncode == 0 and "on CPU 1" in p.stdout, p.stderr


def test_init_of_a_cpu_that_runs_a_task_from_the_shell(fresh_card):
    card = fresh_card
    spin = pmuctl_bg(card, "run", "-C", "2", elf("fault"), "spin")
    running(card, 2)
    out = card.cmd("cpu init 2", timeout=60)
    assert "CPU 2 is back online" in out, out
    out, err = spin.communicate(timeout=60)
    assert spin.returncode == 128 + 9, (out, err)  # the task was killed by the INIT
    answers(card, online=4)
    assert cpu_rows(card.cmd("cpus"))[2][3] == "online"


def test_hostile_layout_fields_are_not_followed(fresh_card):
    card = fresh_card
    # The card keeps its own copy of the layout: an upload offset the host
    # writes afterwards must not make it read outside the mailbox.
    mb = Mailbox(card.name)
    try:
        good = mb.get("upload_off")
        mb.put("upload_off", 0xfffff000)
        run = struct.pack("<IIII", 4096, 1, 0, 0) + b"hello\0".ljust(192, b"\0")  # image_len, argc, flags, reserved
        r = mb.call(mb.C["MBOX_OP_RUN"], cpus=[1], payload=run)
        assert r is not None, "no answer: the card followed the host's offset"
        assert r[0] == mb.C["MBOX_E_PROGRAM"]  # the (empty) upload area is no program
        mb.put("upload_off", good)
        # Ring indices far apart: the card skips the garbage and serves on.
        mb.set_index("req", "head", mb.index("req", "head") + 100000)
        time.sleep(0.5)
        r = mb.call(mb.C["MBOX_OP_INFO"])
        assert r is not None and r[0] == mb.C["MBOX_OK"]
    finally:
        mb.close()
    answers(card, online=4)
    assert cpu_rows(card.cmd("cpus"))[0][3] == "online"


def test_a_long_shell_line_from_the_host_blocks_nothing(card):
    # It used to run inside the mailbox service: `sleep` blocked every request.
    con = subprocess.Popen([PMUCTL, "--card", card.name, "console"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    con.stdin.write("sleep 600000\n")
    con.stdin.flush()
    card.child.expect_exact("(host) sleep 600000", timeout=30)
    answers(card, online=4)
    p = pmuctl(card, "run", "-C", "1", elf("hello"), "meanwhile")
    assert p.returncode == 0 and "meanwhile" in p.stdout, p.stderr
    # One host line at a time: a second console is told so and runs nothing.
    p = subprocess.run([PMUCTL, "--card", card.name, "console"], input="echo second\n",
                       capture_output=True, text=True, timeout=30)
    assert "a shell line from the host is still running" in p.stderr and "second" not in p.stdout
    con.send_signal(signal.SIGINT)  # Ctrl-C reaches the line on the card
    card.child.expect_exact("^C: sleep interrupted", timeout=30)
    out, err = con.communicate(input="echo after\n", timeout=30)
    assert con.returncode == 0, err
    assert "^C: sleep interrupted" in out and "after" in out, out
    answers(card, online=4)


def test_ctrl_c_at_a_terminal_console_ends_the_running_program(card):
    """`run` of a long program from `pmuctl console` at a terminal: Ctrl-C ends it. While a task
    runs its CPU serves the mailbox and CPU 0 halts until the launch ends, so the interrupt must
    wake CPU 0 (it did not: the program ran on, and a second console was refused)."""
    prompt = f"pmuos({card.name})> "
    con = pexpect.spawn(PMUCTL, ["--card", card.name, "console"], encoding="utf-8", timeout=30)
    try:
        con.expect_exact(prompt)
        con.sendline("run steady 100000000")
        con.expect_exact("(host) run steady 100000000")
        time.sleep(2)  # the task running, CPU 0 halted in the wait (its start takes milliseconds)
        con.sendintr()
        con.expect_exact("^C: launch")
        con.expect(r"task \d+ \(steady, rank 0, CPU 1\): killed")
        con.expect_exact(prompt)
        p = subprocess.run([PMUCTL, "--card", card.name, "console"], input="echo second\n",
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and "second" in p.stdout, p.stderr
        con.sendeof()
        con.expect(pexpect.EOF)
    finally:
        con.close(force=True)
    answers(card, online=4)


def test_many_pmuctl_at_once_on_overlapping_and_disjoint_cpus(card, tmp_path):
    jobs = [
        ("run", "-C", "1", elf("hello"), "a"),
        ("run", "-C", "1-2", elf("hello"), "b"),
        ("run", "-C", "2-3", elf("steady"), "20000"),
        ("stat", "-e", "INSTRUCTIONS_EXECUTED:u", "-C", "3", "--", elf("steady"), "20000"),
        ("record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "100000", "-C", "1", "-o",
         str(tmp_path / "rec.data"), "--", elf("steady"), "20000"),
        ("run", "-C", "1-3", elf("hello"), "c"),
        ("info",),
        ("console",),
    ]
    procs = [subprocess.Popen([PMUCTL, "--card", card.name, *j], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for j in jobs]
    for j, p in zip(jobs, procs):
        out, err = p.communicate(input="echo console-line\n" if j[0] == "console" else "", timeout=300)
        assert p.returncode == 0, (j, err)
        assert "no answer" not in err
    answers(card, online=4)


def test_kill9_of_pmuctl_mid_record_leaves_the_card_serving(card, tmp_path):
    rec = pmuctl_bg(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "10000", "-C", "1", "-o",
                    str(tmp_path / "rec.data"), "--", elf("steady"), "100000")
    running(card, 1)
    rec.send_signal(signal.SIGKILL)
    rec.wait(timeout=30)
    answers(card, online=4)
    # The orphaned program still ends, and the CPU takes the next one.
    p = pmuctl(card, "run", "-C", "1", elf("hello"), "next")
    assert p.returncode == 0 and "next" in p.stdout, p.stderr
    answers(card, online=4)


def test_a_program_spinning_on_the_serving_cpu_does_not_stop_the_mailbox(card):
    # CPU 1 runs the only task, so it serves the mailbox, from Ring 0 between
    # the task's instructions: requests are answered, other CPUs take work.
    spin = pmuctl_bg(card, "run", "-C", "1", elf("fault"), "spin")
    running(card, 1)
    for _ in range(3):
        answers(card, online=4)
    p = pmuctl(card, "stat", "-e", "INSTRUCTIONS_EXECUTED:u", "-C", "2", "--", elf("hello"))
    assert p.returncode == 0 and "INSTRUCTIONS_EXECUTED:u" in p.stderr, p.stderr
    spin.send_signal(signal.SIGINT)  # pmuctl ends its program on the card
    spin.communicate(timeout=60)
    assert spin.returncode == 128 + signal.SIGINT
    answers(card, online=4)


def test_a_card_reset_under_a_running_pmuctl_is_named(fresh_card):
    card = fresh_card
    steady = pmuctl_bg(card, "run", "-C", "1", elf("steady"), "1000000")
    running(card, 1)
    p = pmuctl(card, "reset", "--warm", timeout=180)
    assert p.returncode == 0 and "READY again" in p.stdout, p.stderr
    out, err = steady.communicate(timeout=60)
    assert steady.returncode != 0 and "rebooted/reset while pmuctl was waiting" in err, err
    card.wait_prompt(60)
    answers(card, online=4)


def hold_the_host_lock(card):
    """This process takes the host lock as pmuctl does (an OFD lock on the whole mailbox file,
    header.host_lock our PID): the descriptor to close to let it go."""
    fd = os.open(f"/dev/shm/pmuos-{card.name}", os.O_RDWR)
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhxxxxqqixxxx", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    return fd


def test_a_holder_whose_request_the_card_is_serving_is_waited_for(card):
    """Waiters judge the lock's holder by progress: a request it sent, or the card at work on one
    (a request unanswered, the heartbeat moving). Here the holder's request waits longer than the
    waiter's patience (5 s) because the card answers only while the host has room for the answer:
    the holder has left the 16 answers before it uncollected. The soak (soak.py) found waiters
    giving up on a holder whose RUN the card was serving on a loaded host: a `pmuctl run` ended
    with its program still running on the card."""
    m = Mailbox(card.name)
    fd = hold_the_host_lock(card)
    try:
        m.put("host_lock", os.getpid())
        m.set_index("resp", "tail", m.index("resp", "head"))
        for i in range(m.C["MBOX_RESP_SLOTS"] + 1):  # the last one stays unanswered: no room
            m.post(m.C["MBOX_OP_INFO"])
            end = time.monotonic() + 10
            # Each taken in turn but the last, which the card leaves in the ring (mailbox_request_peek).
            while i < m.C["MBOX_RESP_SLOTS"] and m.index("req", "tail") != m.index("req", "head") \
                    and time.monotonic() < end:
                time.sleep(0.01)
        waiter = pmuctl_bg(card, "info")
        time.sleep(8)
        assert m.index("req", "head") - m.index("resp", "head") == 1  # after 8 s, still: no room
        assert waiter.poll() is None, waiter.communicate()[1]  # still waiting: the card is at work
        m.set_index("resp", "tail", m.index("resp", "head"))  # room: the card answers, the holder is done
        end = time.monotonic() + 10
        while m.index("req", "head") != m.index("resp", "head") and time.monotonic() < end:
            time.sleep(0.01)
        m.set_index("resp", "tail", m.index("resp", "head"))
        m.put("host_lock", 0)
    finally:
        os.close(fd)
        m.close()
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and re.search(r"^cpus\s+4 \(4 online\)$", out, re.M), err


def test_an_idle_holder_is_named_after_5_s(card):
    fd = hold_the_host_lock(card)
    m = Mailbox(card.name)
    try:
        m.put("host_lock", os.getpid())
        t0 = time.monotonic()
        p = pmuctl(card, "info", timeout=30)
        took = time.monotonic() - t0
        # pmuctl names the time it waited: 5 s of patience by its clock, more on a loaded host, and
        # within the time it ran (a bound of 10 s of host time failed once at load 8-12).
        held = re.search(rf"pmuctl: info: the card's mailbox is in use: process {os.getpid()} \(as it noted in the "
                         r"mailbox\) has held its lock for more than (\d+\.\d) s", p.stderr)
        assert p.returncode != 0 and held and 5 <= float(held[1]) <= took + 0.1 and took < 20, (took, p.stderr)
        m.put("host_lock", 0)
    finally:
        os.close(fd)
        m.close()
    answers(card)


def test_a_waiting_run_needs_no_lock_and_its_program_ends_with_it(card):
    """A `pmuctl run` waits for its program's end without requests (header.tasks_ended), so
    another process that keeps the mailbox lock for longer than pmuctl's patience (5 s) does not
    stop it; and the program never outlives pmuctl: a signal, once the lock is free, ends it on
    the card. (The soak found programs running on after a pmuctl whose STATUS polls failed
    had left; there are no such polls now.)"""
    p = pmuctl_bg(card, "run", "-C", "1", elf("steady"), "100000000")
    running(card, 1)
    assert p.poll() is None, p.communicate()
    fd = hold_the_host_lock(card)
    m = Mailbox(card.name)
    try:
        m.put("host_lock", os.getpid())
        time.sleep(7)
        assert p.poll() is None, p.communicate()  # still following its program
    finally:
        m.put("host_lock", 0)
        os.close(fd)
        m.close()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "ending the program on the card" in err, err
    assert not re.search(r"^\s*\d+\s+steady\.elf\s+1\s+\d+\s+(running|ready|waiting)", card.cmd("tasks"), re.M)
    answers(card)


def test_a_card_whose_qemu_ends_is_seen_at_once(fresh_card):
    """Its QEMU quit (Ctrl-A x, or killed) while pmuctl waits on a long program: the card's
    keeper removes its files, and pmuctl says so within a second or two, not after the
    heartbeat's 60 s (issue 39 item 4)."""
    p = pmuctl_bg(fresh_card, "stat", "-e", "instructions", "--", elf("steady"), "100000000")
    deadline = time.monotonic() + 60
    while not re.search(r"^\s*\d+\s+\S+\s+\d+\s+\d+\s+running\b", fresh_card.cmd("tasks"), re.M):
        assert time.monotonic() < deadline and p.poll() is None, p.communicate()
        time.sleep(0.2)
    # QEMU itself, not its keeper (whose command line holds QEMU's)
    qemu = subprocess.run(["pgrep", "-f", rf"^\S*qemu-system-x86_64 .*pmuos-{fresh_card.name}\b"],
                          capture_output=True, text=True).stdout.split()
    assert len(qemu) == 1, qemu
    os.kill(int(qemu[0]), signal.SIGKILL)
    gone = time.monotonic()
    _, err = p.communicate(timeout=30)
    assert time.monotonic() - gone < 5, err
    assert p.returncode == 1 and re.search(r"pmuctl: status: the card is gone: its mailbox file /dev/shm/pmuos-"
                                           + re.escape(fresh_card.name) + r" was removed \(its QEMU has ended\)$",
                                           err, re.M), err
