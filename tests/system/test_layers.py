"""The card's source tree is layered (README "Layout"): a file includes files
of its own directory, of lower layers, include/ and lib/, never of a higher
layer or of a sibling at its own layer, so the arrows run one way and there
is no import circle. This reads every #include of every card-side file
(.c, .h, .S) and checks it against LAYERS; no QEMU."""
import os
import re

from conftest import ROOT

# (directory, layer), lowest first. A file belongs to the longest directory
# that holds it. Layer 0 is usable by all: the wire formats (include/pmuos/)
# and the freestanding libraries.
LAYERS = [
    ("include", 0),        # wire formats shared with the host, the loader, programs
    ("lib", 0),            # fmt, lib, cpuset: freestanding, built for the host too
    ("arch", 1),           # x86 without devices: registers, vectors, TSC, FPU
    ("apic", 2),           # local APIC, IPIs, LVT, APIC timer, IOAPIC
    ("kernel", 3),         # the core: per-CPU data, traps, SMP, timers, memory, tasks, console
    ("platform", 4),       # platform/platform.h: the interface to what differs
    ("platform/pc", 5),    # a PC in QEMU: ACPI, PCI, PIT, UART, IOAPIC routes, power
    ("platform/knc", 5),   # a Xeon Phi card: SFI, SBOX
    ("boot", 5),           # boot protocols -> boot info
    ("pmu", 6),            # the PMU driver, model, PMI, multiplexing, events
    ("shell", 7),          # the shell and its commands
    ("mailbox", 8),        # the host's mailbox service (may carry shell lines)
    ("init", 9),           # kernel_main: wires everything
]
# Host programs that live beside card sources: not card code.
HOST_FILES = {"pmu/gen_events.c", "boot/linux/bzimage_check.c", "boot/linux/bzimage_check.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(pmuos/[^>]+)>)', re.M)


def unit_of(path):
    """The LAYERS entry (directory, layer) of a tree-relative path, or None."""
    best = None
    for d, layer in LAYERS:
        if (path == d or path.startswith(d + "/")) and (best is None or len(d) > len(best[0])):
            best = (d, layer)
    return best


def card_files(root):
    for d, _ in LAYERS:
        top = os.path.join(root, d)
        for dirpath, _, names in os.walk(top):
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(dirpath, n), root)
                if n.endswith((".c", ".h", ".S")) and rel not in HOST_FILES and unit_of(rel)[0] == d:
                    yield rel


def resolve(root, rel, name):
    """The tree-relative path an include names (by path from the top, or
    beside the including file), or None (a generated or system header)."""
    for cand in (name, os.path.join("include", name), os.path.join(os.path.dirname(rel), name)):
        if os.path.isfile(os.path.join(root, cand)):
            return os.path.normpath(cand)
    return None


def violations(root):
    """Every include that points up a layer or sideways, as text."""
    bad = []
    for rel in card_files(root):
        src_dir, src_layer = unit_of(rel)
        with open(os.path.join(root, rel), errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = resolve(root, rel, m.group(1) or m.group(2))
            if target is None:
                continue
            unit = unit_of(target)
            if unit is None:
                bad.append(f"{rel} includes {target}, which is in no layer")
                continue
            dst_dir, dst_layer = unit
            if dst_dir == src_dir or dst_layer == 0 or dst_layer < src_layer:
                continue
            line = text.count("\n", 0, m.start()) + 1
            where = "a higher layer" if dst_layer > src_layer else "a sibling at its own layer"
            bad.append(f"{rel}:{line} includes {target}: {dst_dir}/ is {where} "
                       f"({dst_layer} vs {src_dir}/ at {src_layer})")
    return bad


def test_no_back_edges():
    bad = violations(ROOT)
    assert not bad, "includes against the layering (tests/system/test_layers.py LAYERS):\n" + "\n".join(bad)


def test_every_card_directory_has_a_layer():
    """A new directory of card code must be placed in LAYERS (else it would go unchecked)."""
    built = re.findall(r"\$\(wildcard ([^)]*)\)", open(os.path.join(ROOT, "Makefile")).read())
    dirs = {os.path.dirname(p) for group in built for p in group.split() if "/" in p}
    assert dirs, "no kernel sources found in the Makefile"
    missing = sorted(d for d in dirs if unit_of(d + "/x.c") is None)
    assert not missing, f"kernel source directories with no layer: {missing}"


def _tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


def test_checker_finds_a_back_edge(tmp_path):
    """The checker itself, on a made-up tree: a lower layer that includes a
    higher one (apic/ -> kernel/, the circle this layering removed) and
    siblings that include each other are found; downward includes are not."""
    root = _tree(tmp_path, {
        "lib/lib.h": "",
        "include/pmuos/mailbox.h": "",
        "arch/x86.h": '#include "lib/lib.h"\n',
        "kernel/irq.h": '#include "arch/x86.h"\n',
        "apic/lapic.c": '#include "arch/x86.h"\n#include "kernel/irq.h"\n',
        "platform/pc/uart.c": '#include "kernel/irq.h"\n#include "platform/knc/sbox.h"\n',
        "platform/knc/sbox.h": "",
        "mailbox/mailbox.c": '#include <pmuos/mailbox.h>\n#include "lib/lib.h"\n#include "kernel/irq.h"\n',
    })
    bad = violations(root)
    assert len(bad) == 2, bad
    assert bad[0].startswith("apic/lapic.c:2 includes kernel/irq.h: kernel/ is a higher layer"), bad
    assert bad[1].startswith("platform/pc/uart.c:2 includes platform/knc/sbox.h: "
                             "platform/knc/ is a sibling at its own layer"), bad


def test_checker_passes_a_clean_tree(tmp_path):
    root = _tree(tmp_path, {
        "arch/x86.h": "",
        "kernel/trap.c": '#include "arch/x86.h"\n#include "trap.h"\n',
        "kernel/trap.h": "",
        "init/main.c": '#include "kernel/trap.h"\n#include "knc_events.h"\n',
    })
    assert violations(root) == []
