"""The Linux boot protocol path (issue 11): build/pmuos.bzImage through
QEMU's Linux loader (its real-mode entry, which asks the BIOS for the e820
map) and through a KNC card bootstrap stand-in (tests/cardsim/
knc_bootstrap.c: its 32-bit entry, at a card's download address) reaches the
same kernel with the same boot info as the Multiboot path."""
import json
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, Card, cpu_rows, check_card_gone

STAND_IN = os.path.join(BUILD, "cardsim", "knc_bootstrap.elf")
BZIMAGE = os.path.join(BUILD, "pmuos.bzImage")
SFI_GEN = os.path.join(BUILD, "cardsim", "sfi_gen")
SYST_AT = "0xef180"  # where a 3120A's bootstrap left SYST (docs/knc.md "SFI")


def map_lines(mem_output):
    """The 'mem' command's memory map lines."""
    head, _, rest = mem_output.partition("memory map (")
    assert rest, mem_output
    return [line.strip() for line in rest.splitlines()[1:] if line.strip()]


@pytest.fixture(scope="module")
def bios_map():
    """The memory map the Multiboot path gets: SeaBIOS's E820 map, which the
    bzImage's real-mode entry must find too."""
    card = Card(cpus=1, boot="multiboot")
    try:
        return map_lines(card.cmd("mem"))
    finally:
        card.close()


# RAM below 1 MiB as the stand-in reports it: a card bootstrap's (0x50000-0x5FFFF and
# 0x80000-0xCFFFF, PHI3120 docs/results/2026-09-14-p4-tty-smp.md) where this machine has RAM:
# up to SeaBIOS's reserved 0x9FC00, and 0xC0000-0xCFFFF opened through PAM.
CARD_LOW_RAM = [(0x50000, 0x60000), (0x80000, 0x9FC00), (0xC0000, 0xD0000)]


def card_map(bios_map):
    """The memory map the stand-in gives: the card's low RAM, then the BIOS's from 1 MiB."""
    low = [f"{b:016x}-{e - 1:016x} {(e - b) >> 10:10d} KiB  usable" for b, e in CARD_LOW_RAM]
    return low + [line for line in bios_map if int(line[:16], 16) >= 0x100000]


def trampoline_page(boot_log):
    m = re.search(r"smp: AP start-up code at (0x[0-9a-f]+) \(SIPI vector (0x[0-9a-f]+)\)", boot_log)
    assert m, boot_log
    page = int(m.group(1), 16)
    assert int(m.group(2), 16) == page >> 12
    return page


def check_card(card, cpus, loader, cmdline, bios_map):
    rows = cpu_rows(card.cmd("cpus"))
    assert sorted(rows) == list(range(cpus))
    assert all(r[3] == "online" for r in rows.values())
    v = card.cmd("version")
    assert f"boot: Linux boot protocol via {loader}; command line '{cmdline}'\n" in v
    assert map_lines(card.cmd("mem")) == bios_map
    if cpus > 1:
        out = card.cmd("run hello on 1")
        assert "hello from pmuos: rank 0 of 1 on CPU 1" in out
        assert "exit status 0" in out


@pytest.mark.parametrize("cpus", [1, 4, 64, 244])
def test_linux_boot_through_qemus_loader(card_factory, bios_map, cpus):
    cmdline = f"pmuos.test=linux cpus={cpus} a=b,c"
    card = card_factory(cpus=cpus, boot="linux", timeout=180, env={"CMDLINE": cmdline})
    assert "boot via QEMU" in card.boot_log
    check_card(card, cpus, "QEMU", cmdline, bios_map)
    assert card.poweroff() == 0


def test_linux_boot_cuts_a_long_command_line_and_says_so(card_factory):
    cmdline = " ".join(f"word{i:03d}" for i in range(40))  # 319 characters
    card = card_factory(cpus=1, boot="linux", env={"CMDLINE": cmdline})
    assert "command line at 0x20000 is longer than 255 bytes: cut there" in card.boot_log
    assert f"command line '{cmdline[:255]}'\n" in card.cmd("version")


@pytest.mark.parametrize("where", [
    "download=0x4000000 bp=page",   # a card's usual download address, a fresh zero page
    "download=0x4000000 bp=image",  # boot_params in the image's own first page
    "download=0x4000010 bp=page",   # not page-aligned: the entry is position-independent
    "download=0x200000 bp=page",    # the copy to 1 MiB overlaps the image it copies from
])
def test_32bit_entry_at_a_download_address(card_factory, bios_map, where):
    cmdline = "pmuos.test=knc x=1"
    card = card_factory(cpus=2, boot="multiboot", env={
        "KERNEL": STAND_IN, "PROGRAMS": BZIMAGE, "CMDLINE": f"{where} -- {cmdline}"})
    # The file's type_of_loader: the stand-in, like (perhaps) the card's bootstrap, writes none.
    check_card(card, 2, "undefined loader (0xFF)", cmdline, card_map(bios_map))
    # The APs started from a page of the card's low RAM: the highest, clear of boot_params.
    assert trampoline_page(card.boot_log) == 0xCF000
    assert card.poweroff() == 0


def test_without_low_ram_only_the_boot_cpu_runs_and_says_why(card_factory):
    """No RAM below 1 MiB in the map: no page for the AP start-up code (a
    SIPI vector is a page number below 1 MiB), so the APs stay off, and
    the kernel says so rather than writing where the map has no RAM."""
    card = card_factory(cpus=2, boot="multiboot", env={
        "KERNEL": STAND_IN, "PROGRAMS": BZIMAGE, "CMDLINE": "lowram=none -- x=1"})
    assert "smp: no free 4 KiB page of RAM below 1 MiB in the memory map for the AP start-up code " \
        "(a SIPI vector is its page number): only the boot CPU runs" in card.boot_log, card.boot_log
    assert "1 of 1 CPUs online" in card.boot_log
    assert int(map_lines(card.cmd("mem"))[0][:16], 16) >= 0x100000


class Qmp:
    """QEMU's machine protocol on a Unix socket: enough to read registers."""

    def __init__(self, path, timeout=30):
        deadline = time.time() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        self.f = self.sock.makefile("rw")
        self.f.readline()  # greeting
        self.call("qmp_capabilities")

    def call(self, cmd, **args):
        self.f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
        self.f.flush()
        while True:
            r = json.loads(self.f.readline())
            if "return" in r:
                return r["return"]
            assert "error" not in r, r

    def words(self, addr, n):
        """n 32-bit words of guest physical memory at addr."""
        out = self.call("human-monitor-command", **{"command-line": f"xp /{n}wx {addr:#x}"})
        return [int(w, 16) for w in re.findall(r"\b0x([0-9a-f]{8})\b", out)][:n]

    def registers(self):
        out = self.call("human-monitor-command", **{"command-line": "info registers"})
        return {k: int(v, 16) for k, v in re.findall(r"\b(E[A-Z]{2}|HLT)=([0-9a-f]+)", out)}


# A card's CPU for the relocator: CPUID family 0x0B (QEMU's -cpu takes the last one given).
KNC_FAMILY_CPU = ["-cpu", "max,vendor=GenuineIntel,family=11,model=1"]


@pytest.mark.parametrize("where, check, at, card", [
    ("download=0x200000 bp=image", 1, lambda klen: 0x200000, False),   # boot_params where the kernel goes
    ("download=0x200000 bp=image", 1, lambda klen: 0x200000, True),
    ("cmdline=0x300000", 2, lambda klen: 0x300000, True),              # the command line there
    ("download=0x20000 cmdline=0x90000", 3,                           # the relocator itself there
     lambda klen: 0x20000 + 0x2000 + 16 + klen, True),
])
def test_32bit_entry_stops_before_overwriting_what_it_needs(tmp_path, where, check, at, card):
    """relocate (boot/linux/bzimage.S) halts with EAX = the check, EBX = the
    address at fault, both also in the image at the download address +
    0x2008 (what a card's host can read through the aperture), and the
    kernel never starts. On a card's CPU (family 0x0B) the DBOX POST code
    (BAR4 + 0x242C, here the KNC_MMIO file) says "R" and the check; on a
    PC's nothing is written there."""
    m = re.search(r"download=(0x[0-9a-f]+)", where)
    download = int(m.group(1), 16) if m else 0x4000000
    klen = os.path.getsize(os.path.join(BUILD, "linux", "kernel.bin"))
    sock = str(tmp_path / "qmp")
    name = f"test{os.getpid()}-refuse{check}{'k' if card else ''}"
    bar4 = tmp_path / "bar4"
    bar4.write_bytes(bytes(0x20000))
    env = dict(os.environ, CPUS="1", BOOT="multiboot", BUILD=BUILD, CARD=name, KERNEL=STAND_IN,
               PROGRAMS=BZIMAGE, CMDLINE=f"{where} -- x", KNC_MMIO=str(bar4))
    qemu = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu.sh"), "-qmp", f"unix:{sock},server=on,wait=off"]
                            + (KNC_FAMILY_CPU if card else []), cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        qmp = Qmp(sock)
        deadline = time.time() + 60
        regs = qmp.registers()
        while not (regs.get("HLT") == 1 and regs.get("EAX") == check) and time.time() < deadline:
            time.sleep(0.2)
            regs = qmp.registers()
        status = qmp.words(download + 0x2008, 2)
        qmp.call("quit")
        out = qemu.communicate(timeout=30)[0].decode("latin-1")
        assert regs.get("HLT") == 1 and regs.get("EAX") == check, (regs, out)
        assert regs["EBX"] == at(klen)
        assert status == [check, at(klen)], status
        post = bar4.read_bytes()[0x242C:0x2430]
        assert post == (b"R" + str(check).encode() + b"\0\0" if card else bytes(4)), post
        assert "kernel entered" not in out and "knc_bootstrap:" not in out, out
    finally:
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
        check_card_gone(name)


@pytest.fixture
def sfi_tables(tmp_path):
    """SFI tables for n CPUs made for SYST_AT (tests/cardsim/sfi_gen)."""
    def make(n):
        out = tmp_path / f"sfi{n}.bin"
        subprocess.run([SFI_GEN, "--cpus", str(n), "--addr", SYST_AT, "-o", str(out)], check=True)
        return str(out)
    return make


def no_acpi_env(tables, cmdline="acpi=off"):
    """The bootstrap stand-in leaves the SFI tables at SYST_AT, as a card's does."""
    return {"KERNEL": STAND_IN, "PROGRAMS": f"{BZIMAGE} {tables}" if tables else BZIMAGE,
            "CMDLINE": (f"sfi={SYST_AT} " if tables else "") + f"-- {cmdline}"}


def test_244_threads_come_up_without_acpi(card_factory, sfi_tables):
    """acpi=off: the processors and the I/O APIC come from the SFI tables, a
    KNC card's way (docs/knc.md "SFI"); 244 threads start, the serial line's
    interrupt reaches the shell, a task runs on the last thread."""
    card = card_factory(cpus=244, boot="multiboot", timeout=300, env=no_acpi_env(sfi_tables(244)))
    assert "acpi: off (command line)" in card.boot_log
    assert f"sfi: SYST at {SYST_AT}: 244 CPUs, 1 I/O APICs" in card.boot_log
    assert "244 of 244 CPUs online" in card.boot_log
    rows = cpu_rows(card.cmd("cpus", timeout=60))
    assert sorted(rows) == list(range(244))
    assert all(r[3] == "online" for r in rows.values())
    out = card.cmd("run hello on 243", timeout=60)
    assert "hello from pmuos: rank 0 of 1 on CPU 243" in out and "exit status 0" in out
    out = card.cmd("poweroff")
    assert "error: poweroff: no ACPI (acpi=off, or none found), so no soft-off: `reboot` still resets" in out


def test_without_acpi_the_sfi_tables_alone_name_the_cpus(card_factory, sfi_tables):
    """QEMU has 8 CPUs (and ACPI lists 8); SFI lists 6: acpi=off starts 6."""
    card = card_factory(cpus=8, boot="multiboot", env=no_acpi_env(sfi_tables(6)))
    assert "6 of 6 CPUs online" in card.boot_log
    assert sorted(cpu_rows(card.cmd("cpus"))) == list(range(6))
    # Without acpi=off the same machine goes by ACPI's MADT.
    card = card_factory(cpus=8, boot="multiboot", env=no_acpi_env(sfi_tables(6), cmdline="x=1"))
    assert "8 of 8 CPUs online" in card.boot_log and "sfi:" not in card.boot_log


def test_without_acpi_or_sfi_the_kernel_says_why_it_halts():
    env = dict(os.environ, CPUS="2", BOOT="multiboot", BUILD=BUILD, CARD=f"test{os.getpid()}-nosfi",
               **no_acpi_env(None))
    qemu = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu.sh")], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = b""
    try:
        deadline = time.time() + 60
        while b"halting." not in out and time.time() < deadline:
            chunk = qemu.stdout.read1(4096)
            if not chunk:
                break
            out += chunk
    finally:
        qemu.kill()
        qemu.wait()
        check_card_gone(env["CARD"])
    text = out.decode("latin-1")
    assert ("pmuos: no ACPI and no SFI tables (SYST in 0xE0000-0xFFFFF): the processors cannot be found; "
            "halting.") in text, text
    assert "pmuos> " not in text
