#!/usr/bin/python3
"""A simulated Xeon Phi (KNC) card for pmuctl boot: it plays the card's side
of the boot, as docs/knc.md describes a card's bootstrap, over two files the
host maps as a card's two PCI BARs.

  /dev/shm/pmuos-NAME-ram    card memory (BAR0, the aperture): also QEMU's
                             guest RAM once the card runs (scripts/qemu.sh MBOX=card)
  /dev/shm/pmuos-NAME-mmio   BAR4: DBOX at +0, SBOX at +0x10000 (platform/knc/sbox.h)

At power-on and after each RGCR reset it does what a bootstrap shows the
host: POST code "12", SPAD0 (memory size), SPAD4 (threads, cores, ICC
divider 20) and SPAD2 (ready, BSP APIC ID 0, download address 64 MiB).
When the host sends the boot interrupt (APICICR7: vector 229 with SEND to
the BSP), it takes the image (SPAD5 bytes at the download address) and the
NUL-terminated command line right after it out of card memory, exactly
where the host put them, and starts QEMU on them with guest RAM = the card
memory file. With --platform knc (the default) it boots them as a card's
bootstrap would, through tests/cardsim/knc_bootstrap.elf: SFI tables for
the CPUs at 0xEF180, the image's 32-bit entry at the download address, the
BAR4 file at the card's SBOX address (scripts/qemu.sh KNC_MMIO), and
platform=knc on the command line (QEMU's CPUs are not family 0x0B); with
--platform pc, through QEMU's Linux loader as a PC. The status characters
the kernel writes to SPAD8/SPAD15 are the host's to read (pmuctl boot
shows them). RGCR bit 0 stops QEMU and starts over.

    tests/cardsim/card.py NAME [--cpus N] [--mem 512M] [--log FILE] [--stuck CODE] [--platform knc|pc]

--stuck CODE: a bootstrap that never gets ready, showing POST code CODE.

Runs until SIGTERM or SIGINT, then removes its files. Not a model of the
card's hardware: only of what its bootstrap shows the host through these
registers (the values follow a 3120A's readings, PHI3120 in docs/knc.md).
"""
import argparse
import mmap
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# platform/knc/sbox.h (each with its source there)
BAR4_BYTES = 0x20000
SBOX = 0x10000
POSTCODE = 0x242C            # DBOX
SPAD = lambda n: SBOX + 0xAB20 + 4 * n
RGCR = SBOX + 0x4010
APICICR7_LO, APICICR7_HI = SBOX + 0xAA08, SBOX + 0xAA0C
BOOT_VECTOR, ICR_SEND = 229, 1 << 13
CURRENTRATIO = SBOX + 0x402C
DOWNLOAD = 0x4000000         # 64 MiB, a 3120A's
SYST_AT = 0xEF180            # where a 3120A's bootstrap left SFI's SYST
CMDLINE_COPY = 0x3F00000     # the stand-in's copy of the command line: free RAM below the download address
# The core clock from SPAD4's ICC divider 20 and this ratio: 4000 MHz / 20 x fb 10 / 2 = 1000 MHz,
# the TSC rate QEMU's -icount shift=0 gives (knc_core_khz, platform/knc/sbox.h)
RATIO_1000MHZ = 0x04140414
STAND_IN = os.path.join(ROOT, "build", "cardsim", "knc_bootstrap.elf")
SFI_GEN = os.path.join(ROOT, "build", "cardsim", "sfi_gen")
POST_READY, POST_DONE, POST_OFF_BUS = 0x3231, 0x4646, 0xFFFFFFFF   # "12", "FF", all ones
RESET_MS = 300               # how long the simulated card stays off the bus after RGCR


def mem_bytes(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)


class Card:
    def __init__(self, name, cpus, mem, log, stuck=None, platform="knc"):
        self.name, self.cpus, self.mem, self.log, self.stuck = name, cpus, mem, log, stuck
        self.platform = platform
        self.sfi = None
        self.ram_path = f"/dev/shm/pmuos-{name}-ram"
        self.mmio_path = f"/dev/shm/pmuos-{name}-mmio"
        with open(self.mmio_path, "wb") as f:
            f.truncate(BAR4_BYTES)
        with open(self.ram_path, "wb") as f:
            f.truncate(mem_bytes(mem))
        self.mmio_file = open(self.mmio_path, "r+b")
        self.mmio = mmap.mmap(self.mmio_file.fileno(), BAR4_BYTES)
        # Registers as 32-bit words, each read and written whole (struct.pack_into goes byte by byte,
        # and the kernel would see a half-acknowledged status word).
        self.words = memoryview(self.mmio).cast("I")
        self.ram_file = open(self.ram_path, "r+b")
        self.ram = mmap.mmap(self.ram_file.fileno(), mem_bytes(mem))
        self.qemu = None
        self.image = None

    def rd(self, off):
        return self.words[off // 4]

    def wr(self, off, v):
        self.words[off // 4] = v

    def bootstrap_ready(self):
        """What a card's bootstrap shows once it waits for an image."""
        if self.stuck:
            self.wr(POSTCODE, ord(self.stuck[0]) | ord(self.stuck[1]) << 8)
            return
        self.wr(SPAD(0), (mem_bytes(self.mem) >> 10) << 3)              # KiB in 31:3
        cores = max(1, self.cpus // 4)
        self.wr(SPAD(4), 0xF | (11 << 6) | (cores << 10) | (20 << 25))   # 4 threads, 12 channels, ICC 20
        self.wr(CURRENTRATIO, RATIO_1000MHZ)
        self.wr(SPAD(2), 1 | (0 << 1) | DOWNLOAD)                         # ready, BSP APIC ID 0
        self.wr(POSTCODE, POST_READY)

    def stop_qemu(self):
        if self.qemu and self.qemu.poll() is None:
            self.qemu.kill()
            self.qemu.wait()
        self.qemu = None

    def reset(self):
        self.stop_qemu()
        self.wr(POSTCODE, POST_OFF_BUS)
        self.wr(SPAD(2), 0)
        self.wr(APICICR7_LO, 0)
        self.wr(RGCR, self.rd(RGCR) & ~1)  # the reset bit clears itself
        time.sleep(RESET_MS / 1000)
        self.bootstrap_ready()

    def boot(self):
        size = self.rd(SPAD(5))
        self.wr(APICICR7_LO, self.rd(APICICR7_LO) & ~ICR_SEND)  # delivered
        self.wr(SPAD(2), self.rd(SPAD(2)) & ~1)
        if self.rd(APICICR7_HI) != 0 or not 0 < size <= len(self.ram) - DOWNLOAD:
            print(f"card.py: boot interrupt ignored: APIC ID {self.rd(APICICR7_HI)}, image size {size}",
                  file=sys.stderr)
            self.wr(POSTCODE, 0x3145)  # "E1": the simulated bootstrap refused
            return
        image = bytes(self.ram[DOWNLOAD:DOWNLOAD + size])
        end = self.ram.find(b"\0", DOWNLOAD + size, DOWNLOAD + size + 4096)
        cmdline = bytes(self.ram[DOWNLOAD + size:end if end >= 0 else DOWNLOAD + size]).decode("latin-1")
        self.wr(POSTCODE, POST_DONE)
        fd, self.image = tempfile.mkstemp(prefix=f"pmuos-{self.name}-", suffix=".bzImage")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        env = dict(os.environ, BOOT="linux", KERNEL=self.image, CMDLINE=cmdline, MBOX="card", RAM_KEEP="1",
                   CARD=self.name, CPUS=str(self.cpus), MEM=self.mem)
        if self.platform == "knc":
            self.sfi = self.image + ".sfi"
            subprocess.run([SFI_GEN, "--cpus", str(self.cpus), "--addr", hex(SYST_AT), "--ram", str(mem_bytes(self.mem)),
                            "-o", self.sfi], check=True)
            env.update(BOOT="multiboot", KERNEL=STAND_IN, PROGRAMS=f"{self.image} {self.sfi}", KNC_MMIO=self.mmio_path,
                       # The stand-in's own copy of the line (with platform=knc) goes below the download
                       # address: what the host left after the image stays as it left it.
                       CMDLINE=f"download={DOWNLOAD:#x} sfi={SYST_AT:#x} cmdline={CMDLINE_COPY:#x} -- "
                               f"{cmdline} platform=knc")
        self.qemu = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu.sh")], env=env, cwd=ROOT,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    def run(self):
        self.bootstrap_ready()
        while True:
            if self.rd(RGCR) & 1:
                self.reset()
            lo = self.rd(APICICR7_LO)
            if lo & ICR_SEND and lo & 0xFF == BOOT_VECTOR and self.rd(SPAD(2)) & 1:
                self.boot()
            time.sleep(0.005)

    def close(self):
        self.stop_qemu()
        self.words.release()
        for p in (self.ram_path, self.mmio_path, self.image, self.sfi):
            if p:
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--log", default=None, help="the card's serial console (default: this stdout)")
    ap.add_argument("--stuck", default=None, help="never ready; this two-character POST code instead")
    ap.add_argument("--platform", choices=("knc", "pc"), default="knc",
                    help="boot as a card (SFI, SBOX; the default) or as a PC (ACPI, UART)")
    a = ap.parse_args()
    if a.stuck is not None and len(a.stuck) != 2:
        ap.error("--stuck takes a two-character POST code")
    log = open(a.log, "ab") if a.log else None
    card = Card(a.name, a.cpus, a.mem, log, a.stuck, a.platform)

    def stop(*_):
        card.close()
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        card.run()
    finally:
        card.close()


if __name__ == "__main__":
    main()
