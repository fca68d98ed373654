"""A minimal mailbox client for system tests that play a careless or hostile
host: it writes raw requests, header fields and ring indices that pmuctl
never would. The layout comes from include/pmuos/mailbox.h through
build/gen/mbox_layout.json (tests/system/tools/mbox_layout.c)."""
import ctypes
import json
import mmap
import os
import time

from conftest import BUILD

LAYOUT = None


def layout():
    global LAYOUT
    if LAYOUT is None:
        with open(os.path.join(BUILD, "gen", "mbox_layout.json")) as f:
            LAYOUT = json.load(f)
    return LAYOUT


# One load or store per field, as the card and pmuctl make them: struct's
# pack_into zero-fills a field before it writes it a byte at a time, and a
# pmuctl reading meanwhile saw a heartbeat that a test kept moving go back to 0.
CTYPE = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}


class Mailbox:
    def __init__(self, card_name):
        self.L = layout()
        self.C = self.L["const"]
        fd = os.open(f"/dev/shm/pmuos-{card_name}", os.O_RDWR)
        self.m = mmap.mmap(fd, 0)
        os.close(fd)
        self.seq = 0x7e570000

    def close(self):
        self.m.close()

    def _rd(self, off, size, signed=False):
        v = CTYPE[size].from_buffer(self.m, off).value
        return v - (1 << (8 * size)) if signed and v >> (8 * size - 1) else v

    def _wr(self, off, size, value):
        CTYPE[size].from_buffer(self.m, off).value = value & ((1 << (8 * size)) - 1)

    def get(self, field):
        off, size = self.L["header"][field]
        return self._rd(off, size)

    def put(self, field, value):
        off, size = self.L["header"][field]
        self._wr(off, size, value)

    def ring(self, which):
        """(ctl offset, slots offset, slot size, slot count) of 'req' or 'resp'."""
        if which == "req":
            return (self.get("req_ctl_off"), self.get("req_off"), self.L["sizes"]["request"],
                    self.C["MBOX_REQ_SLOTS"])
        return (self.get("resp_ctl_off"), self.get("resp_off"), self.L["sizes"]["response"],
                self.C["MBOX_RESP_SLOTS"])

    def index(self, which, name):
        ctl = self.ring(which)[0]
        return self._rd(ctl + (0 if name == "head" else 4), 4)

    def set_index(self, which, name, value):
        ctl = self.ring(which)[0]
        self._wr(ctl + (0 if name == "head" else 4), 4, value)

    def post(self, opcode, cpus=(), payload=b"", flags=0, reserved=0, length=None):
        """Writes one request and advances the request head; returns its seq."""
        ctl, slots, size, count = self.ring("req")
        head = self.index("req", "head")
        base = slots + (head % count) * size
        R = self.L["request"]
        self.m[base:base + size] = bytes(size)
        self.seq += 1
        self._wr(base + R["seq"][0], 4, self.seq)
        self._wr(base + R["opcode"][0], 2, opcode)
        self._wr(base + R["flags"][0], 2, flags)
        for c in cpus:
            self._wr(base + R["cpuset"][0] + (c // 64) * 8, 8,
                     self._rd(base + R["cpuset"][0] + (c // 64) * 8, 8) | 1 << (c % 64))
        self._wr(base + R["len"][0], 4, len(payload) if length is None else length)
        self._wr(base + R["reserved"][0], 4, reserved)
        self.m[base + R["payload"][0]:base + R["payload"][0] + len(payload)] = payload
        self.set_index("req", "head", head + 1)
        return self.seq

    def wait(self, seq, timeout=10):
        """(status, payload) of the answer to `seq`, skipping others; None on a timeout."""
        ctl, slots, size, count = self.ring("resp")
        R = self.L["response"]
        end = time.time() + timeout
        while time.time() < end:
            head, tail = self.index("resp", "head"), self.index("resp", "tail")
            if head != tail:
                base = slots + (tail % count) * size
                got = self._rd(base + R["seq"][0], 4)
                status = self._rd(base + R["status"][0], 4, signed=True)
                n = min(self._rd(base + R["len"][0], 4), R["payload"][1])
                data = bytes(self.m[base + R["payload"][0]:base + R["payload"][0] + n])
                self.set_index("resp", "tail", tail + 1)
                if got == seq:
                    return status, data
                continue
            time.sleep(0.001)
        return None

    def call(self, opcode, cpus=(), payload=b"", timeout=10, **kw):
        self.set_index("resp", "tail", self.index("resp", "head"))  # answers nobody collected
        return self.wait(self.post(opcode, cpus, payload, **kw), timeout)
