#!/usr/bin/python3
"""A simulated Xeon Phi (KNC) card for pmuctl boot: it plays the card's side
of the boot, as docs/knc.md describes a card's bootstrap, over two files the
host maps as a card's two PCI BARs.

  /dev/shm/pmuos-NAME-ram    card memory (BAR0, the aperture): also QEMU's
                             guest RAM once the card runs (scripts/qemu.sh MBOX=card)
  /dev/shm/pmuos-NAME-mmio   BAR4: DBOX at +0, SBOX at +0x10000 (platform/knc/sbox.h)

At power-on it shows what a bootstrap waiting for an image shows: POST code
"12", SPAD0 (memory size), SPAD4 (threads, cores, ICC divider 20), SPAD2
(ready, the BSP's APIC ID, the download address, 64 MiB) and SPAD6-SPAD13
as a 3120A's (SPAD_3120A). After an RGCR
reset it plays a 3120A's bootstrap run (PHI3120 results/2026-09-13-reset-2.md,
BF xeon_phi_boot.dev names): about 0.2 s on, 10 ms off the bus (BAR4 reads all
ones), "0c", GDDR training "30" "39" "34" "37" "39" "3C" "3d" "3E" "3F", then
"16" "09" "0F" "10" and "12", at the card's times scaled so that training
takes --train-ms (the card's: 7437 ms, "12" at 9.3 s). The scratchpads keep
their values across the reset, as a card's do: a host that did not clear
SPAD2 sees the last boot's ready bit all through training. The bootstrap
writes SPAD2 anew when it reaches "12".

Card memory is the host's only at "12": the reset empties the memory file
(a hole punched over all of it, an empty file's tmpfs pages) and, until "12",
the card looks at the file's allocated blocks every 5 ms. Any host access
to card memory in that time, a write or a read through a mapping, allocates
a page: the simulation then ends with exit status 3 and says where and at
which POST code, and that on a card the host would have reset (a 3120A's
host did, on aperture writes during GDDR training: PHI3120
results/2026-09-14-first-boot.md). Card memory does not survive a reset.

When the host sends the boot interrupt (APICICR7: vector 229 with SEND to
the BSP's APIC ID from SPAD2), it takes the image (SPAD5 bytes at the
download address) and the NUL-terminated command line right after it out
of card memory, exactly where the host put them, and starts QEMU on them
with guest RAM = the card memory file. With --platform knc (the default) it
boots them as a card's bootstrap would, through tests/cardsim/knc_bootstrap.elf:
SFI tables for the CPUs at 0xEF180, the image's 32-bit entry at the
download address, the BAR4 file at the card's SBOX address (scripts/qemu.sh
KNC_MMIO), and platform=knc pmuos.apic=xapic on the command line (QEMU's
CPUs are not family 0x0B, and its local APIC has the xAPIC's ID layout, not
a card's: docs/knc.md); with --platform pc, through QEMU's Linux loader as a PC. The status
characters the kernel writes to SPAD8/SPAD15 are the host's to read
(pmuctl boot shows them). RGCR bit 0 stops QEMU and starts over.

    tests/cardsim/card.py NAME [--cpus N] [--mem 512M] [--log FILE] [--stuck CODE] [--platform knc|pc]
                          [--train-ms MS] [--bsp-apic-id ID] [--download ADDR]

--stuck CODE: a bootstrap that never gets ready, showing POST code CODE.
--bsp-apic-id: the APIC ID SPAD2 names (a 3120A's: 224); the boot interrupt
must go there. QEMU's boot CPU is APIC ID 0 whatever it says: the number is
the host's to honour, the kernel never reads SPAD2.

Runs until SIGTERM or SIGINT, then removes its files. Not a model of the
card's hardware: only of what its bootstrap shows the host through these
registers (the values follow a 3120A's readings, PHI3120 in docs/knc.md).
"""
import argparse
import ctypes
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
# A 3120A's bootstrap after an RGCR write: seconds, POST code (PHI3120 results/2026-09-13-reset-2.md,
# 10 ms samples). None: off the bus (all ones) until the next step.
RESET_TRACE = [(0.201, None), (0.211, "0c"), (0.362, "30"), (0.372, "39"), (0.443, "34"), (0.463, "37"),
               (0.483, "39"), (0.554, "3C"), (2.389, "3d"), (5.797, "3E"), (7.799, "3F"), (7.971, "16"),
               (7.992, "09"), (9.031, "0F"), (9.042, "10"), (9.296, "12")]
# SPAD6-SPAD13 as a 3120A's bootstrap left them (PHI3120 results/2026-09-13-first-contact.md, the
# only full reading: POST "0c" with SPAD2 already ready), written at power-on: SPAD8's 0x8086 is the
# status console's ctrl word, whose bit 7 marks both bytes not valid (platform/knc/sbox.h).
SPAD_3120A = {6: 0x02000403, 7: 0x00000373, 8: 0x00008086, 9: 0x3664FA13, 10: 0, 11: 0x000000FF,
              12: 0x66400218, 13: 0x0000B120}
TRAIN_S = 7.799 - 0.362      # its GDDR training, "30" to "3F"
OFF_BUS_MIN_S = 0.010        # off the bus at least this long (the card's 10 ms), however scaled
FALLOC_PUNCH = 0x01 | 0x02   # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE (linux/falloc.h)
HOST_RESET_EXIT = 3          # the simulation's exit status when the host touched card memory too early


def remove(*paths):
    """Unlinks each path that is not None and still exists."""
    for p in paths:
        if p:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


def mem_bytes(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)


def punch(fd, size):
    """Empties [0, size) of the file: a hole, no pages allocated (tmpfs: st_blocks 0)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    if libc.fallocate(fd, FALLOC_PUNCH, 0, size) != 0:
        raise OSError(ctypes.get_errno(), "card.py: cannot punch a hole in the card memory file")


class HostWouldReset(Exception):
    pass


class Card:
    def __init__(self, name, cpus, mem, log, stuck=None, platform="knc", train_ms=TRAIN_S * 1000, bsp_apic_id=0,
                 download=DOWNLOAD):
        self.name, self.cpus, self.mem, self.log, self.stuck = name, cpus, mem, log, stuck
        self.platform, self.bsp_apic_id, self.download = platform, bsp_apic_id, download
        self.scale = train_ms / 1000 / TRAIN_S
        self.sfi = None
        self.ram_path = f"/dev/shm/pmuos-{name}-ram"
        self.mmio_path = f"/dev/shm/pmuos-{name}-mmio"
        # The card's BARs are this user's alone (0600), as scripts/card-keeper.py makes QEMU's files.
        for path, size in ((self.mmio_path, BAR4_BYTES), (self.ram_path, mem_bytes(mem))):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            os.fchmod(fd, 0o600)
            os.ftruncate(fd, size)
            os.close(fd)
        self.mmio_file = open(self.mmio_path, "r+b")
        self.mmio = mmap.mmap(self.mmio_file.fileno(), BAR4_BYTES)
        # Registers as 32-bit words, each read and written whole (struct.pack_into goes byte by byte,
        # and the kernel would see a half-acknowledged status word).
        self.words = memoryview(self.mmio).cast("I")
        self.ram_file = open(self.ram_path, "r+b")
        self.ram = mmap.mmap(self.ram_file.fileno(), mem_bytes(mem))
        self.qemu = None
        self.image = None
        self.reset_at = None     # while the bootstrap runs after a reset: when RGCR was written
        self.step = 0            # the next RESET_TRACE step

    def rd(self, off):
        return self.words[off // 4]

    def wr(self, off, v):
        self.words[off // 4] = v

    def say(self, text):
        print(f"card.py: {text}", file=sys.stderr, flush=True)
        if self.log:
            self.log.write(f"card.py: {text}\n".encode())
            self.log.flush()

    def bootstrap_ready(self):
        """What a card's bootstrap shows once it waits for an image."""
        if self.stuck:
            self.wr(POSTCODE, ord(self.stuck[0]) | ord(self.stuck[1]) << 8)
            return
        self.wr(SPAD(0), (mem_bytes(self.mem) >> 10) << 3)              # KiB in 31:3
        cores = max(1, self.cpus // 4)
        self.wr(SPAD(4), 0xF | (11 << 6) | (cores << 10) | (20 << 25))   # 4 threads, 12 channels, ICC 20
        self.wr(CURRENTRATIO, RATIO_1000MHZ)
        self.wr(APICICR7_LO, 0)            # an interrupt sent before "12" reached no bootstrap
        self.wr(SPAD(2), self.download | self.bsp_apic_id << 1 | 1)      # 31:12, 9:1, ready
        self.wr(POSTCODE, POST_READY)

    def stop_qemu(self):
        """QEMU ended, and the files it booted from removed (each boot makes its own: 386 of them, 869 MB in
        /tmp, after a soak's warm resets when only the last was removed)."""
        if self.qemu and self.qemu.poll() is None:
            self.qemu.kill()
            self.qemu.wait()
        self.qemu = None
        remove(self.image, self.sfi)
        self.image = self.sfi = None

    def reset(self):
        """RGCR bit 0: QEMU stops, card memory is emptied, the bootstrap runs again (step())."""
        self.stop_qemu()
        self.wr(RGCR, self.rd(RGCR) & ~1)  # the reset bit clears itself
        self.wr(APICICR7_LO, 0)
        punch(self.ram_file.fileno(), len(self.ram))
        self.reset_at, self.step = time.monotonic(), 0

    def off_bus(self, seconds):
        """All ones from BAR4 for a while; then the registers as they were (writes meanwhile are lost)."""
        kept = self.words.tolist()
        self.words[:] = memoryview(bytes(b"\xff" * BAR4_BYTES)).cast("I")
        time.sleep(seconds)
        for i, v in enumerate(kept):
            self.words[i] = v

    def step_bootstrap(self):
        """The bootstrap's run after a reset, as far as the clock says; "12" ends it."""
        while self.reset_at is not None and self.step < len(RESET_TRACE):
            at, code = RESET_TRACE[self.step]
            if time.monotonic() - self.reset_at < at * self.scale:
                return
            self.step += 1
            if code is None:
                self.off_bus(max(OFF_BUS_MIN_S, (RESET_TRACE[self.step][0] - at) * self.scale))
            elif code == "12" or self.stuck:
                self.check_memory()
                self.reset_at = None
                self.bootstrap_ready()
            else:
                self.wr(POSTCODE, ord(code[0]) | ord(code[1]) << 8)

    def check_memory(self):
        """Card memory untouched since the reset, or HostWouldReset saying where and when."""
        if os.fstat(self.ram_file.fileno()).st_blocks == 0:
            return
        fd = self.ram_file.fileno()
        at = os.lseek(fd, 0, os.SEEK_DATA) & ~0xFFF
        page = os.pread(fd, 4096, at)
        code = self.rd(POSTCODE)
        two = bytes([code & 0xFF, code >> 8 & 0xFF]).decode("latin-1") if code != POST_OFF_BUS else "off the bus"
        when = "during GDDR training" if two[0] == "3" else "before the bootstrap was ready"
        what = "wrote" if page.strip(b"\0") else "read (or wrote zeros to)"
        raise HostWouldReset(
            f"the host {what} card memory at {at:#x} {when} (POST code '{two}', "
            f"{time.monotonic() - self.reset_at:.2f} s after the RGCR reset; card memory is the host's only at "
            f"POST '12' with SPAD2 ready): a 3120A's host reset on aperture writes during GDDR training")

    def boot(self):
        size = self.rd(SPAD(5))
        # Delivered. SPAD2 stays as it is: no source has a bootstrap clear its ready bit (MPSS and BF
        # clear it from the host before the interrupt; Linux does not).
        self.wr(APICICR7_LO, self.rd(APICICR7_LO) & ~ICR_SEND)
        dest = self.rd(APICICR7_HI)
        if dest != self.bsp_apic_id or not 0 < size <= len(self.ram) - self.download:
            self.say(f"boot interrupt ignored: APIC ID {dest} (the BSP is {self.bsp_apic_id}), image size {size}")
            self.wr(POSTCODE, 0x3145)  # "E1": the simulated bootstrap refused
            return
        at = self.download
        image = bytes(self.ram[at:at + size])
        end = self.ram.find(b"\0", at + size, at + size + 4096)
        cmdline = bytes(self.ram[at + size:end if end >= 0 else at + size]).decode("latin-1")
        self.wr(POSTCODE, POST_DONE)
        fd, self.image = tempfile.mkstemp(prefix=f"pmuos-{self.name}-", suffix=".bzImage")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        # The strict KNC CPU (scripts/qemu.sh CPU=knc) unless the environment names another; its
        # report leaves out the stand-in (linked at 16 MiB, knc_bootstrap.ld), not pmuos's code.
        env = dict(os.environ, BOOT="linux", KERNEL=self.image, CMDLINE=cmdline, MBOX="card", RAM_KEEP="1",
                   CARD=self.name, CPUS=str(self.cpus), MEM=self.mem, CPU=os.environ.get("CPU") or "knc",
                   KNC_IGNORE="0x1000000-0x1100000")
        if self.platform == "knc":
            self.sfi = self.image + ".sfi"
            subprocess.run([SFI_GEN, "--cpus", str(self.cpus), "--addr", hex(SYST_AT), "--ram", str(mem_bytes(self.mem)),
                            "-o", self.sfi], check=True)
            env.update(BOOT="multiboot", KERNEL=STAND_IN, PROGRAMS=f"{self.image} {self.sfi}", KNC_MMIO=self.mmio_path,
                       # The stand-in's own copy of the line (with platform=knc) goes below the download
                       # address: what the host left after the image stays as it left it.
                       CMDLINE=f"download={at:#x} sfi={SYST_AT:#x} cmdline={CMDLINE_COPY:#x} -- "
                               f"{cmdline} platform=knc pmuos.apic=xapic")
        self.qemu = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu.sh")], env=env, cwd=ROOT,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    def run(self):
        for n, v in SPAD_3120A.items():   # at power-on; a reset keeps them, as it keeps SPAD2
            self.wr(SPAD(n), v)
        self.bootstrap_ready()
        while True:
            if self.rd(RGCR) & 1:
                self.reset()
            if self.reset_at is not None:
                self.step_bootstrap()
                if self.reset_at is not None:
                    self.check_memory()
            lo = self.rd(APICICR7_LO)
            if lo & ICR_SEND and lo & 0xFF == BOOT_VECTOR and self.reset_at is None and self.rd(SPAD(2)) & 1:
                self.boot()
            time.sleep(0.005)

    def close(self):
        self.stop_qemu()
        self.words.release()
        remove(self.ram_path, self.mmio_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--log", default=None, help="the card's serial console (default: this stdout)")
    ap.add_argument("--stuck", default=None, help="never ready; this two-character POST code instead")
    ap.add_argument("--platform", choices=("knc", "pc"), default="knc",
                    help="boot as a card (SFI, SBOX; the default) or as a PC (ACPI, UART)")
    ap.add_argument("--train-ms", type=float, default=TRAIN_S * 1000,
                    help="GDDR training after a reset, ms (a 3120A: 7437); the rest of its run scales with it")
    ap.add_argument("--bsp-apic-id", type=int, default=0, help="the BSP's APIC ID in SPAD2 (a 3120A: 224)")
    ap.add_argument("--download", type=lambda v: int(v, 0), default=DOWNLOAD,
                    help="the download address in SPAD2 (default 0x4000000, a 3120A's)")
    a = ap.parse_args()
    if a.stuck is not None and len(a.stuck) != 2:
        ap.error("--stuck takes a two-character POST code")
    if not 0 <= a.bsp_apic_id < 512:
        ap.error("--bsp-apic-id: SPAD2 has 9 bits for it (0-511)")
    if a.download & 0xFFF or not CMDLINE_COPY + 0x1000 <= a.download < 1 << 31:
        ap.error(f"--download: 4 KiB-aligned, below 2 GiB (SPAD2 bits 31:12), from {CMDLINE_COPY + 0x1000:#x} "
                 f"(the stand-in's command line copy is at {CMDLINE_COPY:#x})")
    if a.train_ms <= 0:
        ap.error("--train-ms: more than 0")
    log = open(a.log, "ab") if a.log else None
    card = Card(a.name, a.cpus, a.mem, log, a.stuck, a.platform, a.train_ms, a.bsp_apic_id, a.download)

    def stop(*_):
        card.close()
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        card.run()
    except HostWouldReset as e:
        card.say(f"host would have reset: {e}")
        sys.exit(HOST_RESET_EXIT)
    finally:
        card.close()


if __name__ == "__main__":
    main()
