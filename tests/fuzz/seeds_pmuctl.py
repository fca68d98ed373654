#!/usr/bin/env python3
"""Writes the hand-made seed inputs of build/fuzz/fuzz_pmuctl into
tests/fuzz/corpus/fuzz_pmuctl/. An input is XORed onto the target's valid
card (template() in tests/fuzz/fuzz_pmuctl.c), so each seed is the change
that makes the valid card reboot, stop or lie; the offsets are those of
its struct input (little-endian, 616 bytes). Regression inputs (crashes
the fuzzer found, named crash-<sha1>) live beside them and are not made here."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_pmuctl")
SIZE = 616

# struct input
STATE, HEARTBEAT, UPLOAD_OFF, OUTPUT_OFF = 12, 16, 120, 128  # in the header
REQ_CTL, RESP_CTL = 168, 176
ANSWER = 184               # 4 x { seq_delta, status, len, extra, pad[3], payload[64] }, 80 bytes each
BEAT, ANSWER_AFTER, CHANGE_AT, CHANGE_WORD, CHANGE_VALUE = 504, 505, 506, 507, 508
SAMPLES = 576              # 2 x { head, tail, lost }, 16 bytes each
CONSOLE_FROM = 608

# What template() holds there.
ANSWER_LEN = (56, 64, 48, 0)  # INFO, STATUS (2 tasks of 32 bytes), PMU_READ (1 count), SHELL
TASK = ANSWER + 80 + 16    # STATUS's tasks: { id, cpu, rank, state, exit_status, output_ring, thread, reserved }
SAMPLE_RINGS = ((5, 2, 0), (30, 1, 7))
UPLOAD, OUTPUT = 0x196000, 0x596000  # mailbox/mailbox.c's offsets
BOOTING, PANIC = 1, 3


class Seed:
    def __init__(self):
        self.b = bytearray(SIZE)

    def set(self, off, fmt, old, new):
        """Field at `off` (struct format `fmt`) goes from template value `old` to `new`."""
        for i, (x, y) in enumerate(zip(struct.pack("<" + fmt, old), struct.pack("<" + fmt, new))):
            self.b[off + i] ^= x ^ y
        return self

    def answer(self, k, field, new):
        off, fmt, old = {"seq_delta": (0, "i", 0), "status": (4, "i", 0), "len": (8, "I", ANSWER_LEN[k]),
                         "extra": (12, "B", 0)}[field]
        return self.set(ANSWER + 80 * k + off, fmt, old, new)

    def change(self, at_nap, word, value):
        """At that pause of pmuctl's, the card writes `value` into 32-bit word `word` of its header."""
        return self.set(CHANGE_AT, "B", 0, at_nap).set(CHANGE_WORD, "B", 0, word).set(CHANGE_VALUE, "I", 0, value)


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "valid": Seed(),
        "rebooting": Seed().change(3, STATE // 4, BOOTING),   # state leaves READY while pmuctl waits
        "panicking": Seed().change(2, STATE // 4, PANIC),
        "heartbeat-back": Seed().change(2, HEARTBEAT // 4, 0),  # a fresh boot's heartbeat
        "stopped": Seed().set(BEAT, "B", 1, 0),
        "slow": Seed().set(ANSWER_AFTER, "B", 0, 30),         # answers come after pmuctl gave up
        "wrong-seq": Seed().answer(0, "seq_delta", 1),
        "bad-lengths": Seed().answer(0, "len", 99999).answer(1, "len", 25).answer(2, "status", -5)
                             .answer(2, "len", 47).answer(3, "status", 3),
        "hostile-heads": Seed().answer(0, "extra", 200).set(REQ_CTL, "I", 0, 5)
                               .set(REQ_CTL + 4, "I", 0, 30).set(RESP_CTL, "I", 0, 9)
                               .set(SAMPLES, "I", SAMPLE_RINGS[0][0], 100000)
                               .set(SAMPLES + 16 + 4, "I", SAMPLE_RINGS[1][1], 40)
                               .set(CONSOLE_FROM, "Q", 50, 1 << 40),
        "overlap": Seed().set(UPLOAD_OFF, "I", UPLOAD, OUTPUT),
        # PMU_READ refused with the card's verdict (struct mbox_verdict over the template's count):
        # a period of 2^40 + 1 (PMU_ERR_PERIOD), then one that is no verdict (kind 200, 5 of 2 CPUs done).
        "verdict": Seed().answer(2, "status", -6).answer(2, "len", 24)
                         .set(ANSWER + 160 + 16, "I", 1, 4).set(ANSWER + 160 + 24, "Q", 0x16 | 3 << 32, (1 << 40) + 1)
                         .set(ANSWER + 160 + 32, "Q", 1234, 0),
        "bad-verdict": Seed().answer(2, "status", -4).answer(2, "len", 24)
                             .set(ANSWER + 160 + 16, "I", 1, 200).set(ANSWER + 160 + 32, "Q", 1234, 5 | 2 << 32),
        "many-tasks": Seed().answer(1, "len", 96 << 10).set(TASK + 20, "I", 0, 300),
        # a process's threads: the second task, thread 1 of rank 0, shares the first's output ring
        "threads": Seed().set(TASK + 32 + 8, "I", 1, 0).set(TASK + 32 + 20, "I", 1, 0).set(TASK + 32 + 24, "I", 0, 1),
    }
    for name, seed in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(seed.b)


if __name__ == "__main__":
    main()
