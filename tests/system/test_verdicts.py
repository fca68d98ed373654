"""One check, one verdict (issue 10): the same PMU configurations, typed at
the shell and sent as raw mailbox requests, get the same verdict from both,
because both ask the PMU (pmu/rules.c) and only translate its answer: the
shell into its text (pmu/events.c), the mailbox into a status (one
table, mailbox/mailbox_proto.c) and the verdict itself in the answer
(struct mbox_verdict), which pmuctl prints in the shell's words. CPU 3 is taken offline first (a kernel
fault stops it), so the offline-CPU rule is tried through both as well.

Events are given raw ("r30016": EvtSel 0x30016, INSTRUCTIONS_EXECUTED at
USR and OS) so that the shell and the mailbox carry the very same EvtSel."""
import os
import re
import struct

import pytest

from conftest import ROOT
from mbox import Mailbox

# enum pmu_err's names in their order (pmu/rules.h): the verdict an answer carries is one of them.
with open(os.path.join(ROOT, "pmu", "rules.h")) as f:
    PMU_ERR = re.findall(r"^\s*(PMU_(?:OK|ERR_\w+))\b", re.search(r"enum pmu_err \{(.*?)\};", f.read(), re.S)[1], re.M)

INSTR = 0x30016        # INSTRUCTIONS_EXECUTED, USR|OS (327357-001 Table 1-6)
CLK = 0x3002a          # CPU_CLK_UNHALTED
L2 = 0x310cb           # an L2 event: counter 0 only (docs/design.md §5.1)
L2B = 0x310cc
EN, INT, BIT19 = 1 << 22, 1 << 20, 1 << 19  # EvtSel bits the driver owns or reserved (327357-001 Table 1-5)
OFFLINE = 3

# Each verdict: the shell's words for it (its one text), the mailbox's status and the verdict it carries.
VERDICTS = {
    "ok": (None, "MBOX_OK", "PMU_OK"),
    "event": ("sets EN, INT or reserved bit 19", "MBOX_E_EVENT", "PMU_ERR_EVENT"),
    "counter": ("must be 0 or 1", "MBOX_E_RANGE", "PMU_ERR_COUNTER"),
    "l2": ("is an L2 event and counts only on counter 0", "MBOX_E_EVENT", "PMU_ERR_L2_COUNTER"),
    "period": ("should be period=N with N from 1 to 2^40", "MBOX_E_RANGE", "PMU_ERR_PERIOD"),
    "no event": ("a period needs an event", "MBOX_E_RANGE", "PMU_ERR_PERIOD"),
    "too many": ("at most 8 events take turns", "MBOX_E_RANGE", "PMU_ERR_TOO_MANY"),
    "slice": ("should be slice=MS with MS from 1 to 1000", "MBOX_E_RANGE", "PMU_ERR_SLICE"),
    "spflt mux": ("SPFLT gating needs them on the counters", "MBOX_E_EVENT", "PMU_ERR_SPFLT_MUX"),
    "offline": (f"CPU {OFFLINE} is not online", "MBOX_E_CPUSET", "PMU_ERR_OFFLINE"),
    "no cpu": ("no CPU 9", "MBOX_E_CPUSET", "PMU_ERR_CPUSET"),
}


def cpus_of(spec):
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


# A step is (shell line, opcode name, CPUs, payload); builders give both forms of one request.
def pmu_set(cpus, ctr, evtsel, period=None):
    ev = "none" if evtsel == 0 else f"r{evtsel:x}"
    line = f"pmu set {cpus} {ctr} {ev}" + ("" if period is None else f" period={period}")
    return line, "MBOX_OP_PMU_CONFIG", cpus_of(cpus), struct.pack("<IIQ", ctr, evtsel, period or 0)


def pmu_mux(cpus, evtsels, slice_ms=4):
    line = f"pmu mux {cpus} " + ",".join(f"r{e:x}" for e in evtsels) + f" slice={slice_ms}"
    # The wire list holds 8; nev says how many were given, and the PMU judges that.
    wire = (list(evtsels) + [0] * 8)[:8]
    # struct mbox_pmu_mux: nev, slice_us, evtsel[8], paired (no groups: the shell's mux has none)
    return line, "MBOX_OP_PMU_MUX", cpus_of(cpus), struct.pack("<II8II", len(evtsels), slice_ms * 1000, *wire, 0)


def pmu_spflt(cpus, mode):
    mask = {"off": 0, "0": 1, "1": 2, "both": 3}[mode]
    return f"pmu spflt {cpus} {mode}", "MBOX_OP_PMU_SPFLT", cpus_of(cpus), struct.pack("<I", mask)


def pmu_ctl(op, cpus):
    return f"pmu {op} {cpus}", f"MBOX_OP_PMU_{op.upper()}", cpus_of(cpus), b""


# (name, steps before the one judged (each must be accepted), the judged step, its verdict)
CONFIGS = [
    ("count on counter 0", [], pmu_set("1", 0, INSTR), "ok"),
    ("count on counter 1", [], pmu_set("1", 1, INSTR), "ok"),
    ("sample on two CPUs", [], pmu_set("1-2", 0, INSTR, 1000), "ok"),
    ("longest period", [], pmu_set("1", 0, INSTR, 1 << 40), "ok"),
    ("period one past 2^40", [], pmu_set("1", 0, INSTR, (1 << 40) + 1), "period"),
    ("period 2^64-1", [], pmu_set("1", 1, CLK, (1 << 64) - 1), "period"),
    ("counter 2", [], pmu_set("1", 2, INSTR), "counter"),
    ("counter 7", [], pmu_set("2", 7, CLK), "counter"),
    ("EvtSel with EN", [], pmu_set("1", 0, INSTR | EN), "event"),
    ("EvtSel with INT", [], pmu_set("1", 1, INSTR | INT), "event"),
    ("EvtSel with bit 19", [], pmu_set("1", 0, CLK | BIT19), "event"),
    ("L2 event on counter 1", [], pmu_set("1", 1, L2), "l2"),
    ("L2 event on counter 0", [], pmu_set("1", 0, L2), "ok"),
    ("L2 event sampling on counter 1", [], pmu_set("2", 1, L2, 1000), "l2"),
    ("period without an event", [], pmu_set("1", 0, 0, 1000), "no event"),
    ("free a counter", [], pmu_set("1", 0, 0), "ok"),
    ("offline CPU", [], pmu_set("3", 0, INSTR), "offline"),
    ("offline CPU among online ones", [], pmu_set("1-3", 0, INSTR), "offline"),
    ("CPU the card does not have", [], pmu_set("9", 0, INSTR), "no cpu"),
    ("start", [], pmu_ctl("start", "1-2"), "ok"),
    ("stop", [], pmu_ctl("stop", "1-2"), "ok"),
    ("clear", [], pmu_ctl("clear", "1"), "ok"),
    ("start an offline CPU", [], pmu_ctl("start", "3"), "offline"),
    ("stop with an offline CPU", [], pmu_ctl("stop", "0-3"), "offline"),
    ("clear with an offline CPU", [], pmu_ctl("clear", "2-3"), "offline"),
    ("two events without counters", [], pmu_mux("1", [INSTR, CLK]), "ok"),
    ("three events take turns", [], pmu_mux("1", [INSTR, CLK, L2], 1), "ok"),
    ("eight events", [], pmu_mux("1", [INSTR, CLK] * 4), "ok"),
    ("nine events", [], pmu_mux("1", [INSTR, CLK] * 4 + [L2]), "too many"),
    ("mux event with bit 19", [], pmu_mux("1", [INSTR, CLK | BIT19]), "event"),
    ("mux event with EN", [], pmu_mux("2", [INSTR | EN]), "event"),
    ("slice 0 ms", [], pmu_mux("1", [INSTR], 0), "slice"),
    ("slice 1001 ms", [], pmu_mux("1", [INSTR], 1001), "slice"),
    ("slice 1000 ms", [], pmu_mux("1", [INSTR], 1000), "ok"),
    ("mux on an offline CPU", [], pmu_mux("3", [INSTR]), "offline"),
    ("SPFLT on events that take turns", [pmu_mux("1", [L2, L2B])], pmu_spflt("1", "0"), "spflt mux"),
    ("SPFLT off on events that take turns", [pmu_mux("1", [L2, L2B])], pmu_spflt("1", "off"), "ok"),
    ("SPFLT on events that fit", [pmu_mux("1", [INSTR, L2])], pmu_spflt("1", "both"), "ok"),
    ("SPFLT on counters", [pmu_set("2", 0, INSTR)], pmu_spflt("2", "0"), "ok"),
    ("SPFLT on an offline CPU", [], pmu_spflt("1,3", "both"), "offline"),
]


@pytest.fixture(scope="module")
def card_offline():
    from conftest import Card
    card = Card(cpus=4)
    card.child.send(f"debug fault {OFFLINE}\r")
    card.child.expect_exact(f"*** CPU {OFFLINE} stopped")
    card.sync()
    mb = Mailbox(card.name)
    yield card, mb
    mb.close()
    card.close()


def shell_verdict(card, line):
    out = card.cmd(line)
    if not out.startswith("error: "):
        return "ok", out
    found = [v for v, (words, _, _) in VERDICTS.items() if words and words in out]
    return (found[0] if len(found) == 1 else f"unclear: {found}"), out


def mbox_status(card, mb, step):
    return mbox_answer(mb, step)[0]


def mbox_answer(mb, step):
    """(status, the verdict's enum pmu_err name or None, the payload before it)."""
    _, op, cpus, payload = step
    r = mb.call(mb.C[op], cpus=cpus, payload=payload)
    assert r is not None, "no answer from the card"
    status, data = r
    if status == mb.C["MBOX_OK"]:
        return status, None, data
    assert len(data) >= 24, (step[0], data)  # struct mbox_verdict: err, cpu, value, done, wanted
    err, cpu, value, done, wanted = struct.unpack("<IIQII", data[-24:])
    assert err < PMU_ERR.index("PMU_ERR_COUNT") and done <= wanted <= 256, (step[0], err, done, wanted)
    return status, PMU_ERR[err], data[:-24]


def test_there_are_enough_configurations():
    assert len(CONFIGS) >= 30
    assert {c[3] for c in CONFIGS} == set(VERDICTS)  # every verdict is tried


@pytest.mark.parametrize("name,before,step,want", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_shell_and_mailbox_give_the_same_verdict(card_offline, name, before, step, want):
    card, mb = card_offline
    status = {v: mb.C[s] for v, (_, s, _) in VERDICTS.items()}
    # Through the shell...
    for b in before:
        assert shell_verdict(card, b[0])[0] == "ok", b[0]
    got, out = shell_verdict(card, step[0])
    assert got == want, (step[0], out)
    assert out.count("\n") <= 1 or want == "ok", out
    # ...and through the mailbox, from the same state.
    for b in before:
        assert mbox_status(card, mb, b) == mb.C["MBOX_OK"], b[0]
    got_status, verdict, _ = mbox_answer(mb, step)
    assert got_status == status[want], step[0]
    assert (verdict or "PMU_OK") == VERDICTS[want][2], step[0]
