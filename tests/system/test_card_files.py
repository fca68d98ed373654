"""A card's files in /dev/shm (issue 23, points 3, 6 and 7; scripts/card-keeper.py):
one card per name, the files this user's only (0600, no other user's file or
a symbolic link taken in their place), and nothing of a card left once it has
ended, however it ended."""
import os
import re
import signal
import socket
import stat
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, card_files, check_card_gone
from test_doorbell import server_pid

PMUCTL = os.path.join(BUILD, "pmuctl")
NOBODY = 65534  # Debian's nobody/nogroup


def qemu_sh(name, **env):
    """scripts/qemu.sh for card `name`, run to its end (a refusal ends it at once)."""
    e = dict(os.environ, CPUS="1", BUILD=BUILD, CARD=name, **env)
    return subprocess.run([os.path.join(ROOT, "scripts", "qemu.sh")], cwd=ROOT, env=e, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def info(card):
    return subprocess.run([PMUCTL, "--card", card, "info"], capture_output=True, text=True, timeout=30)


def as_nobody(*argv):
    return subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=30)


def test_a_second_card_of_the_same_name_is_refused(card):
    name = card.name
    mbox = os.stat(f"/dev/shm/pmuos-{name}").st_ino
    for env in ({}, {"DOORBELL": "0"}, {"MBOX": "card"}):
        p = qemu_sh(name, **env)
        assert p.returncode == 2, p.stdout + p.stderr
        assert (f"qemu.sh: card {name} is in use by PID {card.child.proc.pid} (it holds /dev/shm/pmuos-{name}.lock)"
                in p.stderr), p.stderr
    # The first card's files untouched, and it still answers through them.
    assert os.stat(f"/dev/shm/pmuos-{name}").st_ino == mbox
    p = info(name)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert re.search(r"^doorbell\s+yes \(card peer 0, pmuctl peer \d+\)", p.stdout, re.M), p.stdout


def test_files_a_dead_card_left_are_replaced(card_factory):
    """A card whose keeper was killed too leaves its files; the next card of the name takes them over
    only after it holds the lock: new files, 0600."""
    name = f"test{os.getpid()}-stale"
    base = f"/dev/shm/pmuos-{name}"
    card = None
    try:
        for f, data in ((base, b"old mailbox"), (base + "-pmu", b"old page"), (base + ".lock", b"999999999\n")):
            fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, data)
            os.fchmod(fd, 0o644)
            os.close(fd)
        s = socket.socket(socket.AF_UNIX)
        s.bind(base + ".sock")  # no one listens: stale
        s.close()
        old = {f: os.stat(f).st_ino for f in (base, base + "-pmu", base + ".sock")}
        card = card_factory(cpus=1, env={"CARD": name})
        card.name = name
        assert card_files(name) == sorted([f"pmuos-{name}", f"pmuos-{name}-pmu", f"pmuos-{name}.lock",
                                           f"pmuos-{name}.sock"] + [f"pmuos-{name}{f}" for f in knc_report(card)])
        for f, ino in old.items():
            st = os.lstat(f)
            assert st.st_ino != ino and stat.S_IMODE(st.st_mode) & 0o077 == 0, (f, oct(st.st_mode))
        assert open(base + ".lock").read() == f"{card.child.proc.pid}\n"
        p = info(name)
        assert p.returncode == 0, p.stderr
    finally:
        if card is None:  # it did not start: what the test made
            for f in card_files(name):
                os.unlink("/dev/shm/" + f)


def knc_report(card):
    """The plugin's report of KNC-missing instructions, a file of the strict CPU's (scripts/qemu.sh CPU=knc)."""
    return ["-knc"] if card.cpu == "knc" and os.environ.get("PLUGIN", "1") != "0" else []


@pytest.mark.parametrize("env, files", [
    ({}, ["", "-pmu", ".sock", ".lock"]),
    ({"DOORBELL": "0"}, ["", "-pmu", ".lock"]),
    ({"MBOX": "card"}, ["-ram", "-pmu", ".lock"]),
])
def test_the_files_are_this_users_only(card_factory, env, files):
    card = card_factory(cpus=1, env=env)
    base = f"/dev/shm/pmuos-{card.name}"
    files = files + knc_report(card)
    assert card_files(card.name) == sorted(f"pmuos-{card.name}{f}" for f in files)
    for f in files:
        st = os.lstat(base + f)
        assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0, (f, oct(st.st_mode))
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root (setpriv --reuid)")
    target = card.name if "MBOX" not in env else f"sim:{card.name}"
    p = as_nobody(PMUCTL, "--card", target, "info")
    where = "no card memory at" if "MBOX" in env else "no card at"
    assert p.returncode != 0 and f"pmuctl: {where} {base}{files[0]}: Permission denied" in p.stderr, p.stderr
    for f in files:
        p = as_nobody("/usr/bin/python3", "-c", "import socket, sys; p = sys.argv[1]\n"
                      "if p.endswith('.sock'): socket.socket(socket.AF_UNIX).connect(p)\n"
                      "else: open(p, 'rb')", base + f)
        assert p.returncode != 0 and "PermissionError" in p.stderr, (f, p.stderr)
    assert info(target).returncode == 0  # and the card's user still gets in


@pytest.mark.skipif(os.geteuid() != 0, reason="a file of another user's needs root to make (chown)")
@pytest.mark.parametrize("suffix", ["", "-pmu", ".lock", ".sock"])
def test_another_users_file_or_a_link_in_the_cards_place_is_refused(suffix):
    name = f"test{os.getpid()}-planted"
    path = f"/dev/shm/pmuos-{name}{suffix}"
    victim = f"/dev/shm/pmuos-{name}-victim"
    try:
        # Another user's file, open to everyone, where the card's would be.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        os.fchmod(fd, 0o666)
        os.fchown(fd, NOBODY, NOBODY)
        os.close(fd)
        p = qemu_sh(name)
        assert p.returncode == 2, p.stdout + p.stderr
        assert f"qemu.sh: {path} belongs to user {NOBODY}, not this one ({os.geteuid()}): refused" in p.stderr, p.stderr
        st = os.stat(path)
        assert st.st_uid == NOBODY and st.st_size == 0 and stat.S_IMODE(st.st_mode) == 0o666
        os.unlink(path)
        # A symbolic link there, to a file of ours: neither followed nor replaced.
        with open(victim, "wb") as f:
            f.write(b"keep")
        os.symlink(victim, path)
        p = qemu_sh(name)
        assert p.returncode == 2, p.stdout + p.stderr
        assert path in p.stderr and "symbolic link" in p.stderr, p.stderr
        assert os.path.islink(path) and open(victim, "rb").read() == b"keep"
        assert [f for f in card_files(name) if f not in (os.path.basename(path), os.path.basename(victim))] == []
    finally:
        for f in (path, victim):
            if os.path.lexists(f):
                os.unlink(f)


def test_pmuctl_does_not_follow_a_link_to_a_mailbox(card):
    link = f"/dev/shm/pmuos-{card.name}-link"
    os.symlink(f"/dev/shm/pmuos-{card.name}", link)
    try:
        p = subprocess.run([PMUCTL, "--card", link, "info"], capture_output=True, text=True, timeout=30)
        assert p.returncode != 0 and "Too many levels of symbolic links" in p.stderr, p.stderr
    finally:
        os.unlink(link)


@pytest.mark.parametrize("env", [{}, {"DOORBELL": "0"}, {"MBOX": "card"}])
def test_nothing_stays_after_a_sigkill_of_qemu(card_factory, env):
    card = card_factory(cpus=1, env=env)
    assert card_files(card.name)
    os.kill(card.child.proc.pid, signal.SIGKILL)  # qemu.sh's PID: QEMU's (it execs the keeper, which execs QEMU)
    card.child.proc.wait()
    t0 = time.monotonic()
    check_card_gone(card.name, timeout=5)
    assert time.monotonic() - t0 < 5


def test_nothing_stays_after_a_pkill_of_qemu(card_factory):
    """`pkill -f qemu-system`, as a user ends stray QEMUs, also matches the keeper's watcher (its
    command line holds QEMU's): both get SIGTERM, and the watcher still removes the card's files."""
    card = card_factory(cpus=1)
    assert card_files(card.name)
    watcher = server_pid(card.name)
    assert b"qemu-system" in open(f"/proc/{watcher}/cmdline", "rb").read()  # what pkill -f matches
    for pid in (card.child.proc.pid, watcher):
        os.kill(pid, signal.SIGTERM)
    card.child.proc.wait(30)
    check_card_gone(card.name, timeout=5)


def test_nothing_stays_after_poweroff(fresh_card):
    card = fresh_card
    assert card.poweroff() == 0
    check_card_gone(card.name, timeout=5)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_nothing_stays_after_a_kill_of_make_run(sig):
    """`make run` killed as a terminal kills it (its process group, SIGKILL) or as `kill` does (make alone,
    SIGTERM: make passes it to QEMU)."""
    name = f"test{os.getpid()}-make{int(sig)}"
    env = dict(os.environ, CPUS="1", CARD=name, BUILD=BUILD)
    make = subprocess.Popen(["make", "--no-print-directory", "run"], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out = b""
        while b"pmuos> " not in out:
            chunk = make.stdout.read1(4096)
            assert chunk, out.decode("latin-1")
            out += chunk
        assert info(name).returncode == 0
        if sig == signal.SIGKILL:
            os.killpg(make.pid, sig)
        else:
            make.send_signal(sig)
        make.wait(30)
        check_card_gone(name, timeout=5)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait()
