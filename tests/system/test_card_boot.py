"""pmuctl boot on a simulated Xeon Phi card (issue 11): tests/cardsim/card.py
plays the card's bootstrap over the two files pmuctl maps as the card's
BAR0 (memory) and BAR4 (DBOX, SBOX); pmuctl resets it through RGCR, waits
for its bootstrap, copies image and command line into card memory, sends
the boot interrupt and waits for the mailbox there to say READY. Each error
pmuctl boot names is produced here, and the card is not touched for a file
it could not boot."""
import glob
import mmap
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import zlib

import pytest

from conftest import BUILD, ROOT, check_calib_spflt, default_cpu, knc_report_lines

PMUCTL = os.path.join(BUILD, "pmuctl")
CARD_PY = os.path.join(ROOT, "tests", "cardsim", "card.py")
BZIMAGE = os.path.join(BUILD, "pmuos.bzImage")
CALIB = os.path.join(BUILD, "user", "calib.elf")
HELLO = os.path.join(BUILD, "user", "hello.elf")
FILL = os.path.join(BUILD, "user", "fill.elf")
MMAP_ONLY = os.path.join(BUILD, "cardsim", "mmap_only.so")
SPAD2 = 0x10000 + 0xAB28
POSTCODE = 0x242C
RGCR = 0x10000 + 0x4010
TRAIN_MS = "1500"  # the simulated GDDR training after each reset (a 3120A's: 7437 ms)
LINE = "pmuos.test=sim pmuos.mbox=0x10000000,33554432"  # --cmdline pmuos.test=sim and the mailbox's place


def image_words():
    """The words pmuctl boot adds after the mailbox's for the image at 0x4000000, as the kernel gets
    them: where image and line are (the line, these words included, and its NUL), for the kernel to
    keep, and the image's CRC-32, 0 until the card is READY."""
    words = "pmuos.image=0x04000000,0x{:08x} pmuos.image_crc=0x{:08x}"
    return words.format(os.path.getsize(BZIMAGE) + len(f"{LINE} {words.format(0, 0)}") + 1, 0)


def sealed(card, size):
    """Whether the line after the image in card memory holds the CRC-32 of the image there (zlib's)."""
    with open(card.ram, "rb") as f:
        f.seek(0x4000000)
        image, line = f.read(size), f.read(4096).split(b"\0")[0].decode()
    return f"pmuos.image_crc=0x{zlib.crc32(image):08x}" in line.split()


class SimCard:
    def __init__(self, name, *args):
        self.name = name
        self.log = f"/tmp/pmuos-{name}.log"
        if "--train-ms" not in args:
            args += ("--train-ms", TRAIN_MS)
        self.proc = subprocess.Popen([CARD_PY, name, "--log", self.log, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, env=dict(os.environ, CPU=default_cpu()))
        # Until the card shows its first state (POST code written last, tests/cardsim/card.py
        # bootstrap_ready): what a test writes to BAR4 before then, card.py overwrites.
        deadline = time.time() + 10
        while not (os.path.exists(self.mmio) and os.path.getsize(self.mmio) and self.reg(POSTCODE)) \
                and time.time() < deadline:
            time.sleep(0.05)

    @property
    def mmio(self):
        return f"/dev/shm/pmuos-{self.name}-mmio"

    def reg(self, off):
        with open(self.mmio, "rb") as f:
            f.seek(off)
            return struct.unpack("<I", f.read(4))[0]

    @property
    def ram(self):
        return f"/dev/shm/pmuos-{self.name}-ram"

    def pmuctl(self, *args, timeout=300, input=None):
        """pmuctl on this card, its files refusing read and write as a memory BAR's sysfs file does."""
        return subprocess.run([PMUCTL, "--card", f"sim:{self.name}", *args], capture_output=True, text=True,
                              timeout=timeout, input=input, env=dict(os.environ, LD_PRELOAD=MMAP_ONLY))

    def log_tail(self, n=4000):
        """The end of the card's console (QEMU's output), for a failure's message."""
        try:
            with open(self.log, errors="replace") as f:
                return "\n--- the card's console, its end:\n" + f.read()[-n:]
        except FileNotFoundError:
            return "\n(no card console)"

    def close(self):
        report = knc_report_lines(self.name)  # before QEMU ends: its keeper then removes the file
        self.proc.terminate()
        self.proc.communicate(timeout=30)
        for f in (self.log, f"/dev/shm/pmuos-{self.name}-pmu"):
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass
        assert not report, "the strict CPU ran instructions a KNC core lacks:\n" + "\n".join(report)


@pytest.fixture
def sim_card():
    cards = []

    def make(*args):
        c = SimCard(f"sim{os.getpid()}-{len(cards)}", *args)
        cards.append(c)
        return c
    yield make
    for c in cards:
        c.close()


def test_boot_stat_reset_and_boot_again(sim_card):
    card = sim_card("--cpus", "4")
    p = card.pmuctl("boot", BZIMAGE, "--cmdline", "pmuos.test=sim")
    assert p.returncode == 0, p.stderr + card.log_tail()
    assert re.search(r"pmuos \S+ READY, 4 CPUs$", p.stdout, re.M), p.stdout  # every AP online
    assert "card POST code '12'" in p.stderr and "boot interrupt sent to APIC ID 0" in p.stderr
    # SPAD2 cleared, then RGCR; the simulated bootstrap's run after it, training included, seen by pmuctl.
    assert "resetting the card (SPAD2 = 0, then RGCR)" in p.stderr
    assert re.search(r"card POST code '3[0-9A-Fa-f]'\n(.*\n)*pmuctl: card POST code '12'", p.stderr), p.stderr
    # The KNC platform's early status, through the SBOX scratchpads, shown by pmuctl as it came
    # (its first line: later ones stop for good if pmuctl is slow to take one, by design).
    assert "card: pmuos: KNC platform: SBOX at 0x8007d0000, no ACPI, no legacy devices\n" in p.stderr, p.stderr
    # QEMU's APIC is an xAPIC: the simulated card says so on its command line (card.py); on
    # a card the KNC platform's own layout holds. The APs start from the card's low RAM.
    assert "card: apic: ID layout xapic (pmuos.apic=): ID in bits 31:24" in p.stderr, p.stderr
    assert "card: smp: AP start-up code at 0xcf000 (SIPI vector 0xcf)\n" in p.stderr, p.stderr
    p = card.pmuctl("info")
    assert re.search(r"^tsc\s+1000\.000 MHz$", p.stdout, re.M), p.stdout  # SPAD4 and CURRENTRATIO, not the PIT
    assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M)       # the SFI tables' CPUs
    # Exact through the mailbox in card memory.
    p = card.pmuctl("stat", "--spflt", "-e", "INSTRUCTIONS_EXECUTED:u", "-C", "1", "--", CALIB)
    check_calib_spflt(p)
    # The kernel got our command line from card memory, with the mailbox's place.
    p = card.pmuctl("console", timeout=60, input="version\n")
    image = image_words()
    assert "Linux boot protocol via undefined loader (0xFF); command line " \
        f"'{LINE} {image} platform=knc pmuos.apic=xapic'" in p.stdout, p.stdout + p.stderr
    assert sealed(card, os.path.getsize(BZIMAGE))  # the image's CRC as its boot left it, once READY
    # reset --warm is the card's RGCR, then the same image and command line again: READY once more.
    p = card.pmuctl("reset", "--warm")
    assert p.returncode == 0 and "reset through RGCR and booted again" in p.stdout, p.stderr + card.log_tail()
    assert "resetting the card (SPAD2 = 0, then RGCR)" in p.stderr and "the image in card memory" in p.stderr
    assert f"command line '{LINE} {image}'" in p.stderr  # not added twice
    assert card.reg(RGCR) & 1 == 0
    assert len(glob.glob(os.path.join(tempfile.gettempdir(), f"pmuos-{card.name}-*"))) == 2  # this boot's image and SFI
    p = card.pmuctl("run", "-C", "1", HELLO)
    assert p.returncode == 0 and "hello from pmuos: rank 0 of 1 on CPU 1" in p.stdout, p.stderr
    p = card.pmuctl("console", timeout=60, input="version\n")
    assert f"command line '{LINE} {image} platform=knc pmuos.apic=xapic'" in p.stdout


def test_warm_reset_after_programs_filled_card_memory(sim_card):
    # The kernel keeps the image pmuctl booted (pmuos.image=) out of the RAM it hands out: three
    # tasks taking 100 MiB each (most of the 512 MiB card, the download area at 64 MiB among it)
    # leave it whole, and reset --warm boots it again. Before, the page allocator gave the area to
    # the tasks: reset said "no image in card memory to boot again" and exited 0, the card left in
    # its bootstrap. Once the image is gone, reset fails with status 1 and the reason.
    card = sim_card("--cpus", "4")
    p = card.pmuctl("boot", BZIMAGE)
    assert p.returncode == 0, p.stderr + card.log_tail()
    size = int(re.search(r"pmuos.image=0x04000000,0x([0-9a-f]{8})", p.stderr)[1], 16)
    p = card.pmuctl("console", timeout=60, input="mem\n")
    assert re.search(rf"^\s+0000000004000000-{0x4000000 + (size + 0xfff) // 0x1000 * 0x1000 - 1:016x}\s+\d+ KiB\s+boot image$",
                     p.stdout, re.M), p.stdout
    p = card.pmuctl("run", "-C", "1-3", FILL, "100")
    assert p.returncode == 0 and p.stdout.count("fill: 100 MiB written and read back") == 3, p.stdout + p.stderr
    p = card.pmuctl("reset", "--warm")
    assert p.returncode == 0 and "reset through RGCR and booted again" in p.stdout, p.stderr + card.log_tail()
    p = card.pmuctl("run", "-C", "1", HELLO)
    assert p.returncode == 0 and "hello from pmuos: rank 0 of 1 on CPU 1" in p.stdout, p.stderr
    # A byte of the kernel in the image changed (as a kernel that did not keep it let a program do; its
    # bzImage header still passes): refused by the CRC-32 boot wrote, status 1, the card left running.
    with open(card.ram, "r+b") as f:
        f.seek(0x4000000 + 0x100000)
        byte = f.read(1)
        f.seek(0x4000000 + 0x100000)
        f.write(bytes([byte[0] ^ 1]))
    p = card.pmuctl("reset", "--warm")
    assert p.returncode == 1 and re.search(r"reset --warm: no image in card memory to boot again: it changed since "
                                           r"it was booted \(CRC-32 [0-9a-f]{8}, [0-9a-f]{8} when written\); the card "
                                           r"was not reset", p.stderr), p.stderr
    assert "resetting" not in p.stderr and card.pmuctl("info").returncode == 0


def test_a_file_that_cannot_boot_leaves_the_card_alone(sim_card, tmp_path):
    card = sim_card()
    for path, why in [(CALIB, "no \"HdrS\""), (str(tmp_path / "none"), "cannot read")]:
        p = card.pmuctl("boot", path)
        assert p.returncode == 1 and why in p.stderr, p.stderr
        assert "resetting" not in p.stderr
    short = tmp_path / "short.bzImage"
    short.write_bytes(open(BZIMAGE, "rb").read()[:100000])
    p = card.pmuctl("boot", str(short))
    assert p.returncode == 1 and "is not a bzImage a card can boot" in p.stderr, p.stderr
    p = card.pmuctl("boot", "--cmdline", "x" * 300)
    assert p.returncode == 1 and "the command line is" in p.stderr and "takes at most" in p.stderr, p.stderr
    assert card.reg(SPAD2) & 1  # the bootstrap still waits: never reset
    # Nothing was ever booted: reset --warm fails, says why, and leaves the card alone.
    p = card.pmuctl("reset", "--warm")
    assert p.returncode == 1 and "reset --warm: no image in card memory to boot again: the scratchpads name none " \
        "(SPAD2's download address or SPAD5's size is 0: never booted); the card was not reset" in p.stderr, p.stderr
    assert "resetting" not in p.stderr and card.reg(SPAD2) & 1


# Each POST mark in boot order (include/pmuos/post.h), with a word of what pmuctl says it means;
# "ab" is the AP with APIC ID 1, started one at a time.
POST_MARKS = [("P1", "32-bit entry ran"), ("P2", "copied to 1 MiB"), ("P3", "64-bit mode"), ("P4", "kernel_main ran"),
              ("P5", "memory, paging"), ("P6", "starting the APs"), ("ab", "APIC ID 0x1,"), ("P7", "every AP online")]


def test_a_boot_stopped_at_each_post_mark_names_it(sim_card):
    """pmuos.stop=MARK halts the boot right after MARK (docs/knc.md "POST marks"): for each
    milestone in turn the card's POST register holds the mark, the console (once there is
    one) says so, and pmuctl boot names the mark and its meaning as soon as it shows. A
    boot without the stop ends at P8 with READY; a word that names no mark is refused
    before the card is touched."""
    card = sim_card("--cpus", "2", "--train-ms", "300")
    for mark, says in POST_MARKS:
        p = card.pmuctl("boot", BZIMAGE, "--cmdline", f"pmuos.test=sim pmuos.stop={mark}", "--timeout", "60")
        assert p.returncode == 1, p.stdout + p.stderr + card.log_tail()
        m = re.search(r"the card stopped at POST mark '(..)', as pmuos.stop= asked: (.*)$", p.stderr, re.M)
        assert m and m.group(1) == mark and says in m.group(2), p.stderr + card.log_tail()
        assert card.reg(POSTCODE) == ord(mark[0]) | ord(mark[1]) << 8
        # The KNC platform's console (SBOX status characters) exists from P5 on.
        assert (f"pmuos: stopped at POST mark '{mark}' (pmuos.stop=)\n" in p.stderr) == (mark not in ("P1", "P2", "P3", "P4")), \
            p.stderr
    p = card.pmuctl("boot", BZIMAGE, "--cmdline", "pmuos.test=sim")
    assert p.returncode == 0 and card.reg(POSTCODE) == 0x3850, p.stderr  # "P8"
    before = card.reg(SPAD2)
    p = card.pmuctl("boot", BZIMAGE, "--cmdline", "pmuos.test=sim pmuos.stop=P9")
    assert p.returncode == 1 and "pmuos.stop=P9: not a POST mark" in p.stderr and "resetting" not in p.stderr, p.stderr
    assert card.reg(SPAD2) == before


def test_boot_errors_name_their_cause(sim_card, tmp_path):
    stuck = sim_card("--stuck", "0E")
    p = stuck.pmuctl("boot", "--timeout", "3")
    assert p.returncode == 1 and "bootstrap is not ready after 3 s (last POST code '0E')" in p.stderr, p.stderr
    small = sim_card("--mem", "128M")
    p = small.pmuctl("boot", "--timeout", "5")
    assert p.returncode == 1 and "card memory (128 MiB) ends before the mailbox's place" in p.stderr, p.stderr
    tiny = sim_card("--mem", "64M")  # the download address (64 MiB) is its end
    p = tiny.pmuctl("boot", "--timeout", "5")
    assert p.returncode == 1 and re.search(r"image \(\d+ bytes\) and command line at 0x4000000 end at 0x[0-9a-f]+, "
                                           r"past card memory", p.stderr), p.stderr
    # Another user, without the files: told how to get them.
    p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", PMUCTL, "--card",
                        f"sim:{tiny.name}", "boot"], capture_output=True, text=True)
    assert p.returncode == 1 and f"cannot open {tiny.mmio}: Permission denied: run as root, or give your user " \
        f"the card's memory and registers (chown $USER /dev/shm/pmuos-{tiny.name}-ram {tiny.mmio}" in p.stderr, p.stderr
    # A kernel that halts before its mailbox (no ACPI, no SFI): no READY, and the card's POST code said.
    # It is seen halted in its log (waited for): it has stopped for good, so pmuctl's wait may be short.
    halts = sim_card("--platform", "pc")  # a PC without ACPI, and no SFI: the kernel halts
    p = halts.pmuctl("boot", "--cmdline", "acpi=off", "--timeout", "3")
    assert p.returncode == 1 and "no READY from the card within 3 s" in p.stderr, p.stderr
    # The last POST code and what it means (a PC's CPU writes no marks: the bootstrap's "FF").
    assert "last POST code 'FF': the bootstrap jumped to the image" in p.stderr, p.stderr
    deadline = time.monotonic() + 60
    while "halting" not in open(halts.log, errors="replace").read() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "halting" in open(halts.log, errors="replace").read()
    p = subprocess.run([PMUCTL, "--card", "sim:nosuch", "boot"], capture_output=True, text=True)
    assert p.returncode == 1 and "cannot open /dev/shm/pmuos-nosuch-mmio" in p.stderr, p.stderr
    p = subprocess.run([PMUCTL, "--card", "card0x", "boot"], capture_output=True, text=True)
    assert p.returncode == 1 and "has no card registers" in p.stderr, p.stderr
    p = subprocess.run([PMUCTL, "--card", "pci:0000:ff:1f.7", "boot"], capture_output=True, text=True)
    assert p.returncode == 1 and "cannot open /sys/bus/pci/devices/0000:ff:1f.7/resource4" in p.stderr, p.stderr


def old_order_host(card, image):
    """pmuctl's reset before issue 22, as a host: RGCR, 1 s, then SPAD2's ready bit alone, then the image
    to the download address. Returns SPAD2 and the POST code it saw just before writing."""
    with open(card.mmio, "r+b") as f, open(card.ram, "r+b") as r:
        regs = mmap.mmap(f.fileno(), 0x20000)
        words = memoryview(regs).cast("I")
        words[RGCR // 4] |= 1
        time.sleep(1.0)
        while not words[SPAD2 // 4] & 1:
            time.sleep(0.05)
        seen = words[SPAD2 // 4], words[POSTCODE // 4]
        at = seen[0] & 0xFFFFF000
        mem = mmap.mmap(r.fileno(), 0)
        mem[at:at + len(image)] = image
        words.release()
        return seen


def test_the_old_reset_order_would_reset_the_host(sim_card):
    """SPAD2 keeps its ready bit across the reset: a host that does not clear it, and does not wait for
    POST "12", writes card memory during training. The simulated card ends there, as a real one ends
    its host."""
    card = sim_card("--train-ms", "5000")  # "12" 6.2 s after the reset: the old order writes at about 1 s
    ready = card.reg(SPAD2)
    assert ready == 0x04000001  # ready, BSP 0, 64 MiB
    image = open(BZIMAGE, "rb").read()
    spad2, post = old_order_host(card, image)
    assert spad2 == ready and post & 0xFF == ord("3"), hex(post)  # the last run's ready bit, while training ("3x")
    _, err = card.proc.communicate(timeout=10)
    assert card.proc.returncode == 3, err
    m = re.search(r"host would have reset: the host wrote card memory at (0x[0-9a-f]+) during GDDR training "
                  r"\(POST code '3[0-9A-Fa-f]', \d+\.\d\d s after the RGCR reset", err)
    # Where the card first finds the image: a card that looks while the copy runs finds a page inside it, not
    # always the first (seen at 0x4470000 on a loaded host: glibc's memcpy may copy a large block from its end).
    assert m and 0x4000000 <= int(m[1], 16) < 0x4000000 + len(image), err
    # A read through a mapping during training is caught too (a page of the emptied file appears).
    card = sim_card("--train-ms", "5000")
    with open(card.mmio, "r+b") as f, open(card.ram, "rb") as r:
        words = memoryview(mmap.mmap(f.fileno(), 0x20000)).cast("I")
        words[SPAD2 // 4] = 0
        words[RGCR // 4] |= 1
        time.sleep(0.5)
        assert words[SPAD2 // 4] == 0  # the host's clear survives the reset: not ready until "12"
        mmap.mmap(r.fileno(), 0, prot=mmap.PROT_READ)[0x100000]
        words.release()
    _, err = card.proc.communicate(timeout=10)
    assert card.proc.returncode == 3 and "host would have reset: the host read (or wrote zeros to) card memory " \
        "at 0x100000" in err, err


def test_a_3120a_bsp_and_an_image_above_the_mailbox(sim_card):
    """A card's BSP has APIC ID 224 (0x040001C1 on a 3120A): the boot interrupt goes there. An image
    wholly above the mailbox boots; one that overlaps it is refused before anything is written."""
    card = sim_card("--bsp-apic-id", "224", "--download", "0x12000000")
    assert card.reg(SPAD2) == 0x120001C1
    p = card.pmuctl("boot", BZIMAGE, "--timeout", "120")
    assert p.returncode == 0, p.stderr + card.log_tail()
    assert re.search(r"at 0x12000000, command line .*; boot interrupt sent to APIC ID 224", p.stderr), p.stderr
    p = card.pmuctl("info")
    assert re.search(r"^cpus\s+4 \(4 online\)$", p.stdout, re.M), p.stdout
    low = sim_card("--download", "0xfe00000")  # 2 MiB below the mailbox: the 3 MB image reaches into it
    p = low.pmuctl("boot", BZIMAGE, "--timeout", "30")
    assert p.returncode == 1 and re.search(r"image \(\d+ bytes\) and command line at 0xfe00000-0x[0-9a-f]+ "
                                           r"overlap the mailbox's place \(0x10000000-0x12000000\)", p.stderr), p.stderr


def test_the_status_console_from_a_3120as_scratchpads_and_a_stale_word(sim_card):
    """SPAD6-SPAD13 as a 3120A's bootstrap leaves them (SPAD8, the status console's ctrl word,
    0x00008086: tests/cardsim/card.py SPAD_3120A): the first status line comes through whole.
    Then a word a host never took (ctrl 0x7A7A7A7A, data "OLD!"), which a reset keeps: the next
    boot shows none of it (pmuctl clears the ctrl word before the boot interrupt, the kernel
    before its first word), and its own first line whole."""
    card = sim_card("--cpus", "2")
    assert [card.reg(0x10000 + 0xAB20 + 4 * n) for n in range(6, 14)] == \
        [0x02000403, 0x373, 0x8086, 0x3664FA13, 0, 0xFF, 0x66400218, 0xB120]
    first = "card: pmuos: KNC platform: SBOX at 0x8007d0000, no ACPI, no legacy devices\n"
    p = card.pmuctl("boot", BZIMAGE, "--timeout", "120")
    assert p.returncode == 0 and first in p.stderr, p.stderr + card.log_tail()
    with open(card.mmio, "r+b") as f:
        f.seek(0x10000 + 0xAB20 + 4 * 15)
        f.write(b"OLD!")
        f.seek(0x10000 + 0xAB20 + 4 * 8)
        f.write(struct.pack("<I", 0x7A7A7A7A))
    p = card.pmuctl("boot", BZIMAGE, "--timeout", "120")
    assert p.returncode == 0 and first in p.stderr and "OLD!" not in p.stderr, p.stderr + card.log_tail()


def test_a_full_simulated_card_starts_its_aps_one_at_a_time(sim_card):
    """244 threads on the simulated card (the strict CPU, family 0x0B): the stand-in bootstrap
    parks the 243 APs in 64-bit mode first, as a card's does; the kernel starts them one at a
    time, in the SFI's order, each checked in before the next (its log names the order); each
    AP came out of the start-up code with CR0.CD and NW clear (else it would have stopped,
    named) and every one is online, the last POST mark READY's."""
    card = sim_card("--cpus", "244", "--train-ms", "300")
    p = card.pmuctl("boot", BZIMAGE, "--timeout", "240")
    assert p.returncode == 0 and re.search(r"pmuos \S+ READY, 244 CPUs$", p.stdout, re.M), p.stderr + card.log_tail()
    log = p.stderr  # the kernel's status characters, as pmuctl boot shows them ("card: ...")
    assert "card: smp: starting 243 APs one at a time (INIT, 10000 us, SIPI, 200 us, SIPI; each checked in before " \
        "the next), APIC 1-243\n" in log, log[-3000:]
    assert "KERNEL STOP" not in log and "did not start" not in log, log[-3000:]
    assert "knc_bootstrap:" not in card.log_tail()  # every AP parked (the stand-in says so on COM1 otherwise)
    assert card.reg(POSTCODE) == 0x3850  # "P8"
    p = card.pmuctl("info")
    assert re.search(r"^cpus\s+244 \(244 online\)$", p.stdout, re.M), p.stdout


def test_a_pci_card_with_memory_decoding_off(tmp_path):
    """A card no driver has enabled: command register 0x0000, its BARs reading all ones (a 3120A,
    Lasimeri/Intel-Phi-3120A docs/hardware.md). On a directory laid out as sysfs lays out a device
    (PMUOS_SYSFS), `info` and `boot` stop at once naming the register and the commands that turn
    decoding on (the `enable` written here is a plain file: it takes the 1 and changes nothing);
    with 0x0006 they go on to the card's memory. Never the 60 s wait for a heartbeat."""
    dev = tmp_path / "bus" / "pci" / "devices" / "0000:03:00.0"
    dev.mkdir(parents=True)
    with open(dev / "resource0", "wb") as f:  # 512 MiB of card memory, sparse
        f.truncate(512 << 20)
    (dev / "resource4").write_bytes(b"\xff" * 0x20000)  # what a BAR reads with decoding off
    (dev / "enable").write_text("0")
    env = dict(os.environ, PMUOS_SYSFS=str(tmp_path))

    def config(cmd):
        (dev / "config").write_bytes(struct.pack("<HHH", 0x8086, 0x225D, cmd) + bytes(58))

    config(0)
    for args in (["info"], ["boot", BZIMAGE]):
        t0 = time.monotonic()
        p = subprocess.run([PMUCTL, "--card", "pci:0000:03:00.0", *args], capture_output=True, text=True,
                           timeout=30, env=env)
        assert p.returncode == 1 and time.monotonic() - t0 < 5, p.stderr
        assert "0000:03:00.0: memory decoding is off (PCI command register 0x0000: Memory Space, bit 1, clear; " \
            "its BARs read all ones), and writing 1 to its sysfs enable did not turn it on; as root: " \
            f"echo 1 > {dev}/enable, or setpci -s 0000:03:00.0 COMMAND=0x06" in p.stderr, p.stderr
    config(6)
    p = subprocess.run([PMUCTL, "--card", "pci:0000:03:00.0", "info"], capture_output=True, text=True, timeout=30,
                       env=env)
    assert p.returncode == 1 and "memory decoding is off" not in p.stderr and \
        "no pmuos mailbox at 0x10000000" in p.stderr, p.stderr


def test_the_mmap_only_file_refuses_reads():
    """The LD_PRELOAD stand-in for a memory BAR's sysfs file: read and pread fail with EIO, as on Linux."""
    name = f"/dev/shm/pmuos-mmaponly{os.getpid()}-ram"
    with open(name, "wb") as f:
        f.truncate(8192)
    try:
        code = f"import os\nfd = os.open({name!r}, os.O_RDWR)\n" \
               "for f in (lambda: os.pread(fd, 8, 0), lambda: os.read(fd, 8), lambda: os.pwrite(fd, b'x', 0)):\n" \
               "    try:\n        f(); print('passed')\n    except OSError as e:\n        print(e.strerror)\n"
        p = subprocess.run(["python3", "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, LD_PRELOAD=MMAP_ONLY))
        assert p.stdout.split("\n")[:3] == ["Input/output error"] * 3, p.stdout + p.stderr
        p = subprocess.run(["python3", "-c", code], capture_output=True, text=True)
        assert p.stdout.split("\n")[:3] == ["passed"] * 3, p.stdout + p.stderr
    finally:
        os.unlink(name)
