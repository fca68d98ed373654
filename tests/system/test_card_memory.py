"""The mailbox in card memory (issue 11): the host chooses its place and
tells the kernel with pmuos.mbox=BASE,SIZE; the kernel takes it out of the
RAM it allocates and serves the same wire format there; pmuctl --card
sim:NAME maps the simulated card's RAM file as a KNC host maps the card's
aperture (BAR0) and finds the mailbox at BASE. scripts/qemu.sh MBOX=card."""
import os
import re
import subprocess

from conftest import BUILD, check_calib_spflt

PMUCTL = os.path.join(BUILD, "pmuctl")
CALIB = os.path.join(BUILD, "user", "calib.elf")
BASE = 0x10000000  # MBOX_CARD_BASE
SIZE = 32 << 20


def pmuctl(target, *args, timeout=120):
    return subprocess.run([PMUCTL, "--card", target, *args], capture_output=True, text=True, timeout=timeout)


def mem_entries(out):
    """The `mem` command's map: (base, last byte, type) per entry."""
    return [(int(a, 16), int(b, 16), t.strip())
            for a, b, t in re.findall(r"^\s+([0-9a-f]{16})-([0-9a-f]{16})\s+\d+ KiB\s+(.+)$", out, re.M)]


def test_the_mailbox_is_served_from_card_memory(card_factory):
    card = card_factory(cpus=4, env={"MBOX": "card"})
    assert f"mailbox: 32768 KiB of card memory (pmuos.mbox) at {BASE:#x}" in card.boot_log
    assert not os.path.exists(f"/dev/shm/pmuos-{card.name}")  # no ivshmem mailbox
    # Out of the RAM the kernel hands out, and shown as such.
    rows = mem_entries(card.cmd("mem"))
    assert (BASE, BASE + SIZE - 1, "host mailbox") in rows, rows
    assert (BASE - 1, "usable") in [(b, t) for a, b, t in rows] and (BASE + SIZE, "usable") in [(a, t) for a, b, t in rows]
    p = pmuctl(f"sim:{card.name}", "info")
    assert p.returncode == 0, p.stderr
    assert re.search(r"^card\s+/dev/shm/pmuos-" + re.escape(card.name) + r"-ram$", p.stdout, re.M)
    assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M)
    # Exact through card memory, as through the ivshmem BAR (test_pmuctl).
    p = pmuctl(f"sim:{card.name}", "stat", "--spflt", "-e", "INSTRUCTIONS_EXECUTED:u", "-C", "1", "--", CALIB)
    check_calib_spflt(p)
    # A warm reset keeps card memory: the card comes back to READY at the same place.
    p = pmuctl(f"sim:{card.name}", "reset", "--warm")
    assert p.returncode == 0 and "READY again" in p.stdout, p.stderr
    card.wait_prompt(60)
    p = pmuctl(f"sim:{card.name}", "info")
    assert p.returncode == 0, p.stderr
    # Elsewhere in card memory there is no mailbox, and pmuctl says where it looked.
    p = pmuctl(f"sim:{card.name}@0x8000000", "info")
    assert p.returncode != 0
    assert "no pmuos mailbox at 0x8000000 of card memory" in p.stderr and "--card ...@BASE" in p.stderr


def test_a_bad_place_is_refused_and_the_mailbox_stays_on_the_bar(card_factory):
    """Each wrong pmuos.mbox= is named at boot, the map is left alone, and
    the mailbox is where the platform shares memory (the ivshmem BAR)."""
    for value, why in [("0x10000800,0x2000000", "BASE is not a multiple of 4 KiB"),
                       ("0x10000000,0x3000000", "SIZE is not a power of two of at least 1 MiB"),
                       ("0x10000000", "not BASE,SIZE (two numbers, decimal or 0x hex)"),
                       ("0x40000000,0x2000000", "the range is not inside one usable RAM range of the memory map")]:
        card = card_factory(cpus=1, env={"CMDLINE": f"pmuos.mbox={value}"})
        assert f"pmuos.mbox: {why}; the mailbox stays in the memory the platform shares with the host" \
            in card.boot_log, card.boot_log
        assert "mailbox: 32768 KiB of shared memory at" in card.boot_log
        assert "host mailbox" not in card.cmd("mem")
        assert pmuctl(card.name, "info").returncode == 0
        card.close()


def test_pmuctl_names_what_is_wrong_with_a_card_argument():
    for target, msg in [
        ("sim:nosuch", "no card memory at /dev/shm/pmuos-nosuch-ram: No such file or directory"),
        ("sim:a/b", "a simulated card's name is letters, digits, '.', '_' or '-'"),
        ("sim:x@0x1001", "BASE 0x1001 is not a multiple of 4 KiB"),
        ("sim:x@ten", "BASE 'ten' is not a number"),
        ("pci:3:0.0", "'3:0.0' is not a PCI address DDDD:BB:DD.F"),
        ("pci:0000:ff:1f.7", "cannot open /sys/bus/pci/devices/0000:ff:1f.7/resource0"),
        ("usb:1", "a card is NAME, PATH, sim:NAME[@BASE] or pci:BDF[@BASE]"),
    ]:
        p = pmuctl(target, "info")
        assert p.returncode != 0 and msg in p.stderr, (target, p.stderr)
