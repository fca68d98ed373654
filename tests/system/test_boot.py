"""Boot on every hardware thread and the basic shell commands (issue: boot)."""
import os
import re
import subprocess

import pytest

from conftest import ROOT, Card, cpu_rows, check_card_gone


@pytest.fixture(scope="module")
def card_244():
    """One 244-thread card for the file's tests of a full card's CPUs (its boot is most of what
    each costs): the topology's first, then test_all_cpus_online[244], which powers it off."""
    c = Card(cpus=244, timeout=120)
    yield c
    c.close()


def test_knc_topology_numbering(card_244):
    # CPUS=244 boots as 61 cores x 4 threads (scripts/qemu.sh).
    rows = cpu_rows(card_244.cmd("cpus"))
    assert {r[1] for r in rows.values()} == set(range(61))
    assert {r[2] for r in rows.values()} == {0, 1, 2, 3}


@pytest.mark.parametrize("cpus", [244, 1, 4, 64])  # 244 first: the idle full card ends before the others boot
def test_all_cpus_online(card_factory, request, cpus):
    card = request.getfixturevalue("card_244") if cpus == 244 else card_factory(cpus=cpus, timeout=120)
    rows = cpu_rows(card.cmd("cpus"))
    assert sorted(rows) == list(range(cpus))
    assert all(r[3] == "online" for r in rows.values())
    # APIC IDs are unique: each row is a different hardware thread.
    assert len({r[0] for r in rows.values()}) == cpus
    assert card.poweroff() == 0


def test_apic_layout_and_its_switch(card_factory):
    """A PC runs the xAPIC layout and says so; pmuos.apic= with a value that
    names no layout is refused by name and the platform's stays; the AP
    start-up code goes to the highest page of a PC's low RAM below the EBDA."""
    card = card_factory(cpus=2, env={"CMDLINE": "pmuos.apic=x2apic"})
    assert "pmuos.apic=x2apic: not xapic or knc; the pc platform's xapic layout stays\r\n" in card.boot_log
    assert "apic: ID layout xapic (the platform's): ID in bits 31:24, IPI destination in bits 31:24; " \
        "boot CPU APIC ID 0\r\n" in card.boot_log
    assert "smp: AP start-up code at 0x9e000 (SIPI vector 0x9e)\r\n" in card.boot_log
    card = card_factory(cpus=2, env={"CMDLINE": "pmuos.apic=xapic"})
    assert "apic: ID layout xapic (pmuos.apic=)" in card.boot_log
    assert "2 of 2 CPUs online" in card.boot_log


def test_version_and_mem(card):
    v = card.cmd("version")
    assert re.search(r"pmuos \d+\.\d+\.\d+", v)
    assert "Multiboot" in v
    m = card.cmd("mem")
    usable = int(re.search(r"usable (\d+) KiB", m)[1])
    free = int(re.search(r"free (\d+) KiB", m)[1])
    # QEMU gets MEM=512M; the map leaves out the BIOS areas and the PCI hole.
    assert 500 * 1024 < usable <= 512 * 1024
    assert 0 < free < usable
    assert "memory map" in m


def test_uptime_advances_and_sleep_waits(card):
    def up_us(out):
        m = re.search(r"up (\d+)\.(\d+) s", out)
        return int(m[1]) * 1000000 + int(m[2])

    a = up_us(card.cmd("uptime"))
    assert card.cmd("sleep 300") == ""
    b = up_us(card.cmd("uptime"))
    assert b - a >= 300000


def test_echo(card):
    assert card.cmd("echo hello   card  0") == "hello card 0\n"


def test_help_lists_every_command(card):
    out = card.cmd("help")
    for name in ["help", "version", "cpus", "mem", "uptime", "echo", "reboot", "poweroff", "debug"]:
        assert re.search(rf"^\s+{name}\b", out, re.M), name


def test_reboot_is_a_warm_reset(fresh_card):
    card = fresh_card
    card.child.send("reboot\r")
    card.child.expect_exact("rebooting")
    # The firmware runs again and boots the kernel anew.
    card.child.expect_exact("kernel entered", timeout=60)
    card.wait_prompt(60)
    rows = cpu_rows(card.cmd("cpus"))
    assert len(rows) == 4 and all(r[3] == "online" for r in rows.values())


def test_make_run_with_piped_stdin_exits_zero():
    # A card of its own: not card0, which a person's `make run` may be using.
    env = dict(os.environ, CPUS="4", CARD=f"test{os.getpid()}-makerun")
    try:
        p = subprocess.run(["make", "--no-print-directory", "run"], cwd=ROOT, env=env,
                           input=b"cpus\npoweroff\n", capture_output=True, timeout=300)
    finally:
        check_card_gone(env["CARD"])
    out = p.stdout.decode("latin-1")
    assert p.returncode == 0, out + p.stderr.decode("latin-1")
    assert "4 CPUs, 4 online" in out
