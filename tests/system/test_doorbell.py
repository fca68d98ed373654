"""The mailbox's doorbell (issue 12, must-show 3): QEMU's ivshmem-doorbell,
served by scripts/ivshmem-server.py, rings the card's serving CPU; the card
rings pmuctl back. Without it (DOORBELL=0: ivshmem-plain) the card polls."""
import contextlib
import os
import re
import select
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import BUILD

PMUCTL = os.path.join(BUILD, "pmuctl")


def pmuctl(card, *args, timeout=60):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=timeout)


def service(card):
    """pmuctl info's account of the service: (rings that reached the card or None, poll period in us or 0,
    timer polls)."""
    p = pmuctl(card, "info")
    assert p.returncode == 0, p.stderr
    rings = re.search(r"^doorbell\s+yes \(card peer 0, pmuctl peer \d+\), (\d+) rings reached the card, "
                      r"the last answered \d+ TSC ticks after its interrupt$",
                      p.stdout, re.M)
    if rings is None:
        assert re.search(r"^doorbell\s+no: the card polls$", p.stdout, re.M), p.stdout
    poll = re.search(r"^poll\s+(?:every (\d+) us|off: no poll timer armed) \((\d+) timer polls\)$", p.stdout, re.M)
    assert poll, p.stdout
    return int(rings[1]) if rings else None, int(poll[1] or 0), int(poll[2])


def hmp(path, command):
    """One QEMU monitor command over its UNIX socket; its output."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.settimeout(10)
        out = b""
        while not out.endswith(b"(qemu) "):
            out += s.recv(4096)
        s.sendall(command.encode() + b"\n")
        out = b""
        while not out.endswith(b"(qemu) "):
            out += s.recv(65536)
    return out.decode("latin-1")


def all_halted(monitor, cpus):
    # QEMU's register dump (target/i386/cpu-dump.c) ends each CPU's with HLT=1 while it is halted.
    states = re.findall(r"HLT=(\d)", hmp(monitor, "info registers -a"))
    assert len(states) == cpus, states
    return all(s == "1" for s in states)


def test_a_request_is_answered_with_every_cpu_halted_and_no_poll_timer(card_factory, tmp_path):
    monitor = str(tmp_path / "monitor.sock")
    card = card_factory(cpus=4, env={"CMDLINE": "pmuos.mbox_poll=off"},
                        qemu_args=["-monitor", f"unix:{monitor},server=on,wait=off"])
    assert "mailbox: doorbell, peer 0, vector 0x50; no poll timer" in card.boot_log
    rings, period, polls = service(card)
    assert rings is not None and period == 0
    end = time.monotonic() + 30
    while not all_halted(monitor, 4):
        assert time.monotonic() < end, "the card's CPUs did not all halt"
        time.sleep(0.05)
    # Every CPU halted, no poll timer armed: only the ring can make the card serve this.
    after_rings, period, after_polls = service(card)
    assert period == 0 and after_polls == polls  # no timer poll served it
    assert after_rings > rings
    p = pmuctl(card, "ping", "200")
    assert p.returncode == 0 and "info round trips: 200," in p.stdout, p.stderr
    assert service(card)[2] == polls
    # The server ends with QEMU and takes its socket along; QEMU's own exit is clean after peers came and went.
    sock = f"/dev/shm/pmuos-{card.name}.sock"
    assert os.path.exists(sock)
    assert card.poweroff() == 0
    end = time.monotonic() + 10
    while os.path.exists(sock):
        assert time.monotonic() < end, "the doorbell server outlived QEMU"
        time.sleep(0.05)


def test_without_the_doorbell_the_poll_answers(card_factory):
    card = card_factory(cpus=4, env={"DOORBELL": "0"})
    assert "doorbell" not in card.boot_log
    assert not os.path.exists(f"/dev/shm/pmuos-{card.name}.sock")
    rings, period, polls = service(card)
    assert rings is None and period == 100
    p = pmuctl(card, "ping", "20")
    assert p.returncode == 0 and "info round trips: 20," in p.stdout, p.stderr
    assert service(card)[2] > polls


def test_the_fallback_poll_answers_a_host_that_does_not_ring(card):
    assert "mailbox: doorbell, peer 0, vector 0x50; a poll every 10 ms as its fallback" in card.boot_log
    rings, period, polls = service(card)
    assert rings is not None and period == 10000
    sock = f"/dev/shm/pmuos-{card.name}.sock"
    os.rename(sock, sock + ".away")  # pmuctl finds no server: it polls, and never rings
    try:
        p = pmuctl(card, "info")
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert re.search(r"^doorbell\s+yes \(card peer 0\), not used: pmuctl polls$", p.stdout, re.M), p.stdout
        later = int(re.search(r"^poll\s+every 10000 us \((\d+) timer polls\)$", p.stdout, re.M)[1])
        assert later > polls
    finally:
        os.rename(sock + ".away", sock)
    assert service(card)[0] >= rings


def eventfd_message(conn, value, fd):
    socket.send_fds(conn, [struct.pack("<q", value)], [fd])


# What a hostile or broken server sends after accepting pmuctl (None: nothing), and how pmuctl names it.
def wrong_version(conn, shm):
    conn.sendall(struct.pack("<q", 1))


def another_file(conn, shm):
    conn.sendall(struct.pack("<qq", 0, 1))
    with open("/dev/null", "rb") as f:
        eventfd_message(conn, -1, f.fileno())


def not_an_eventfd(conn, shm):
    conn.sendall(struct.pack("<qq", 0, 1))
    eventfd_message(conn, -1, shm)
    r, w = os.pipe()
    eventfd_message(conn, 0, w)  # the card's "eventfd": a pipe that would fill
    eventfd_message(conn, 1, os.eventfd(0))
    os.close(r)


def no_card(conn, shm):
    conn.sendall(struct.pack("<qq", 0, 1))
    eventfd_message(conn, -1, shm)
    eventfd_message(conn, 1, os.eventfd(0))


@contextlib.contextmanager
def fake_server(card, serve):
    """The card's doorbell socket replaced, for the block, by one whose
    single connection serve(conn, shm_fd) handles in a thread."""
    sock = f"/dev/shm/pmuos-{card.name}.sock"
    os.rename(sock, sock + ".away")
    fake = socket.socket(socket.AF_UNIX)
    fake.bind(sock)
    fake.listen(1)
    shm = os.open(f"/dev/shm/pmuos-{card.name}", os.O_RDWR)

    def accept():
        conn, _ = fake.accept()
        serve(conn, shm)
        conn.close()

    t = threading.Thread(target=accept)
    t.start()
    try:
        yield sock
    finally:
        t.join()
        fake.close()
        os.close(shm)
        os.unlink(sock)
        os.rename(sock + ".away", sock)


@pytest.mark.parametrize("script, why", [
    (None, "sent no complete message in 1000 ms"),
    (wrong_version, "speaks protocol version 1, not 0"),
    (another_file, "hands out another file than this mailbox: the doorbell of another card"),
    (not_an_eventfd, "sent a file descriptor that is not an eventfd"),
    (no_card, "has no peer 0, the card's (the card is not connected to it)"),
])
def test_a_broken_server_is_named_and_the_mailbox_polled(card, script, why):
    def serve(conn, shm):
        if script:
            script(conn, shm)
        time.sleep(2)

    with fake_server(card, serve) as sock:
        t0 = time.monotonic()
        p = pmuctl(card, "info")
        assert p.returncode == 0, p.stderr
        assert f"pmuctl: the doorbell server at {sock} {why}; polling the mailbox instead\n" == p.stderr
        assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M), p.stdout
        assert time.monotonic() - t0 < 5


def test_pmuctl_never_waits_on_its_eventfds_flags(card):
    """QEMU clears O_NONBLOCK on every descriptor it receives (7.2
    io/channel-socket.c, qio_channel_socket_copy_fds) and ivshmem sets it
    again a little later: the flag is shared with pmuctl through the open
    file description. pmuctl info once hung for good reading its eventfd in
    that window. Here a server hands pmuctl eventfds whose flag it keeps
    clearing; the card (not rung: the card's eventfd is the test's) answers
    by its fallback poll."""
    card_fd, own_fd = os.eventfd(0), os.eventfd(0)
    done = threading.Event()

    def serve(conn, shm):
        conn.sendall(struct.pack("<qq", 0, 1))  # version 0, ID 1
        eventfd_message(conn, -1, shm)
        eventfd_message(conn, 0, card_fd)  # the "card", peer 0
        eventfd_message(conn, 1, own_fd)   # pmuctl's own
        while not done.is_set():  # as QEMU's socket code does, again and again
            os.set_blocking(own_fd, True)
            os.set_blocking(card_fd, True)
            time.sleep(0.0001)

    try:
        with fake_server(card, serve):
            try:
                t0 = time.monotonic()
                p = pmuctl(card, "info", timeout=30)
                assert p.returncode == 0 and p.stderr == "", p.stderr
                assert re.search(r"^doorbell\s+yes \(card peer 0, pmuctl peer 1\)", p.stdout, re.M), p.stdout
                assert time.monotonic() - t0 < 5
                assert select.select([card_fd], [], [], 0)[0], "pmuctl did not ring"
            finally:
                done.set()
    finally:
        os.close(card_fd)
        os.close(own_fd)


def test_ping_takes_a_gap_of_0_to_1000_ms(card):
    for gap in ("-1", "1001", "x", ""):
        p = pmuctl(card, "ping", "3", gap)
        assert p.returncode == 2 and f"ping 3 {gap}: GAP_MS is 0 to 1000 milliseconds" in p.stderr, (gap, p.stderr)
    p = pmuctl(card, "ping", "3", "2")
    assert p.returncode == 0 and "info round trips: 3," in p.stdout, p.stderr
