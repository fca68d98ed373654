"""The card's source tree is layered (docs/layout.md): a file includes files
of its own directory, of lower layers, include/ and lib/, never of a higher
layer or of a sibling at its own layer, so the arrows between folders run one
way. This reads every #include of every card-side file (.c, .h, .S) and
checks it against LAYERS. Inside a folder the files are layered too: a C
file that uses a function or variable another C file of its folder defines
depends on it, and no two files depend on each other, directly or round a
circle (file_circles). No QEMU."""
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



# Inside a folder. Nodes: the folder's C files; an edge: a file's use of a
# function or variable (not static) that another C file of the folder
# defines. A header's declarations are not edges (a header shared by several
# files, like pmu/internal.h, would otherwise join them all); the uses are.
# Assembly is left out: an entry stub (kernel/isr.S, kernel/user.S) is
# installed by the C file it calls, a pair by design.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\([^;{]*\)\s*\n\{", re.M)
GLOBAL = re.compile(r"^(?!static\b|extern\b|typedef\b|#)(?:const\s+)?(?:(?:struct|enum|union)\s+)?\w+[\s*]+"
                    r"(?:const\s+)?\**\s*(\w+)\s*(?:\[[^\]]*\])?\s*(?:=[^;]*)?;", re.M)
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S)
LOCAL = re.compile(r"^static\b[^;(=]*?\b(\w+)\s*[(\[=;]", re.M)
TAG = re.compile(r"\b(?:struct|enum|union)\s+\w+")
WORD = re.compile(r"\b[A-Za-z_]\w*\b")
# Circles not broken yet: (folder, files), each to be removed when it is.
KNOWN_CIRCLES = set()
# Checked for circles inside, beside the card's folders: the host tool, its library (host/) and its
# commands (host/builtin/, perf's builtin-*.c), which only the command table (host/pmuctl.c) names.
HOST_FOLDERS = ["host", "host/builtin"]
HOST_TABLE = "host/pmuctl.c"


def c_texts(root, folder):
    """{file stem: its text without comments and strings} for the C files directly in `folder`."""
    texts = {}
    for n in sorted(os.listdir(os.path.join(root, folder))):
        if n.endswith(".c") and os.path.join(folder, n) not in HOST_FILES:
            with open(os.path.join(root, folder, n), errors="replace") as f:
                texts[n[:-2]] = NOISE.sub(" ", f.read())
    return texts


def definitions(texts):
    """{function or variable: the stem of the file that defines it} of c_texts' files."""
    defined = {}
    for stem, text in texts.items():
        for m in list(DEFINITION.finditer(text)) + list(GLOBAL.finditer(text)):
            defined.setdefault(m.group(1), stem)
    return defined


def used_names(text):
    """The names a file's text uses but does not define as its own static."""
    return set(WORD.findall(TAG.sub(" ", text))) - set(LOCAL.findall(text))


def file_edges(root, folder):
    """{file stem: {stem it uses: a symbol it uses}} for the C files directly in `folder`."""
    texts = c_texts(root, folder)
    defined = definitions(texts)
    edges = {}
    for stem, text in texts.items():
        for word in used_names(text):
            other = defined.get(word)
            if other and other != stem:
                edges.setdefault(stem, {}).setdefault(other, word)
    return edges


def circles(edges):
    """The strongly connected sets of more than one file (Tarjan), each sorted."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(tuple(sorted(group)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def card_folders(root):
    yield from (d for d in HOST_FOLDERS if os.path.isdir(os.path.join(root, d)))
    for d, _ in LAYERS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            rel = os.path.relpath(dirpath, root)
            if unit_of(rel + "/x.c")[0] == d and any(n.endswith(".c") for n in names):
                yield rel


def file_circles(root, known=frozenset()):
    """Every circle between files of one folder, as text (those in `known` left out)."""
    bad = []
    for folder in card_folders(root):
        edges = file_edges(root, folder)
        for group in circles(edges):
            if (folder, group) in known:
                continue
            uses = "; ".join(f"{a}.c uses {edges[a][b]} ({b}.c)" for a in group for b in group if b in edges.get(a, {}))
            bad.append(f"{folder}/: {', '.join(group)} depend on each other: {uses}")
    return bad


def library_uses_of_commands(root):
    """Uses of a host/builtin/ command file's function or variable by a host/ library file, but the
    command table's, as text: the commands sit on the library, never under it."""
    defined, bad = definitions(c_texts(root, "host/builtin")), []
    for stem, text in c_texts(root, "host").items():
        if f"host/{stem}.c" != HOST_TABLE:
            bad += [f"host/{stem}.c uses {w} (host/builtin/{defined[w]}.c)" for w in sorted(used_names(text))
                    if w in defined]
    return bad


def test_the_host_library_is_below_its_commands():
    bad = library_uses_of_commands(ROOT)
    assert not bad, "host/ library files that use a command's code (move it into host/):\n" + "\n".join(bad)


def test_checker_finds_a_library_file_that_uses_a_command(tmp_path):
    root = _tree(tmp_path, {
        "host/builtin/stat.c": "int stat_helper(void)\n{\n\treturn 1;\n}\n",
        "host/pmuctl.c": "int main(void)\n{\n\treturn stat_helper();\n}\n",
        "host/rings.c": "int drain(void)\n{\n\treturn stat_helper();\n}\n",
    })
    assert library_uses_of_commands(root) == ["host/rings.c uses stat_helper (host/builtin/stat.c)"]


def test_no_circle_inside_a_folder():
    bad = file_circles(ROOT, KNOWN_CIRCLES)
    assert not bad, "files of one folder that use each other (tests/system/test_layers.py file_circles):\n" + \
        "\n".join(bad)


def test_known_circles_are_still_there():
    """A circle broken must leave KNOWN_CIRCLES, so the list cannot hide a new one."""
    found = {(folder, group) for folder in card_folders(ROOT) for group in circles(file_edges(ROOT, folder))}
    assert KNOWN_CIRCLES <= found, KNOWN_CIRCLES - found


def test_checker_finds_a_circle_inside_a_folder(tmp_path):
    """Two files of one folder that call each other are a circle; a header
    both include, a static function of the same name, a struct tag and a
    name in a comment or string are no edges."""
    root = _tree(tmp_path, {
        "pmu/internal.h": "int pmu_go(void);\nint mux_on(void);\n",
        "pmu/pmu.c": '#include "internal.h"\nint pmu_go(void)\n{\n\treturn mux_on();\n}\n',
        "pmu/mux.c": '#include "internal.h"\nint mux_on(void)\n{\n\treturn pmu_go();\n}\n',
        "pmu/model/share.c": '#include "internal.h"\nstruct pmu_go { int x; };\n/* pmu_go */\n'
                       'static int mux_on(void)\n{\n\treturn 1;\n}\nconst char *s = "mux_on";\n',
        "apic/lapic.c": "int apic_id(void)\n{\n\treturn 0;\n}\n",
        "apic/ipi.c": "int apic_send(void)\n{\n\treturn apic_id();\n}\n",
    })
    assert file_circles(root) == ["pmu/: mux, pmu depend on each other: mux.c uses pmu_go (pmu.c); "
                                  "pmu.c uses mux_on (mux.c)"], file_circles(root)
    assert file_circles(root, {("pmu", ("mux", "pmu"))}) == []
    assert file_edges(root, "pmu").get("share") is None
    assert file_edges(root, "apic") == {"ipi": {"lapic": "apic_id"}}


# Each wire limit and shared fact is written once (issue 24): its one
# definition, and the patterns its old copies had, which must be gone.
ONCE = [
    # (what, regex of the definition, the one file that holds it)
    ("shell line capacity", r"#\s*define\s+MBOX_SHELL_LINE_CAP\b", "include/pmuos/mailbox.h"),
    ("multiplexed events", r"#\s*define\s+MBOX_MUX_MAX\b", "include/pmuos/mailbox.h"),
    ("RUN's argv strings", r"#\s*define\s+MBOX_RUN_ARGS\b", "include/pmuos/mailbox.h"),
    ("plugin event names", r"#\s*define\s+\w+\(\s*(\w+)\s*,\s*\w+\s*\)\s*#\1\s*,", "pmu/plugin_events.h"),
    ("Multiboot information", r"struct\s+mb_info\s*\{", "boot/multiboot.h"),
    ("Multiboot header magic", r"0x1badb002", "boot/multiboot.h"),
    ("Multiboot boot magic", r"0x2badb002", "boot/multiboot.h"),
]
COPIES = [
    ("a shell line length typed as a number", r"#\s*define\s+\w*LINE_(?:CAP|MAX)\s+\(?\s*25[56]\b"),
    ("a multiplexing list length typed as a number", r"evtsel\[\s*8\s*\]|#\s*define\s+\w*(?:MUX|EVENTS)\w*\s+8\b"),
    ("a RUN argument count typed as a number", r"argv\[\s*16\s*\]|argc\s*>\s*16\b|#\s*define\s+TASK_MAX_ARGS\s+16"),
]


def source_files(root):
    skip = {"build", ".git"}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not (dirpath == root and d.startswith("."))]
        for n in sorted(names):
            if n.endswith((".c", ".h", ".S")):
                yield os.path.relpath(os.path.join(dirpath, n), root)


def written_twice(root):
    """Each ONCE item defined anywhere but its file, or not there; each COPIES pattern found."""
    texts = {rel: open(os.path.join(root, rel), errors="replace").read() for rel in source_files(root)}
    bad = []
    for what, pattern, home in ONCE:
        where = sorted(rel for rel, t in texts.items() if re.search(pattern, t))
        if where != [home]:
            bad.append(f"{what}: defined in {where or 'no file'}, should be in {home} only")
    for what, pattern in COPIES:
        for rel, t in texts.items():
            if rel == "include/pmuos/mailbox.h":
                continue
            for m in re.finditer(pattern, t):
                bad.append(f"{rel}:{t.count(chr(10), 0, m.start()) + 1}: {what} ({m.group(0)!r})")
    return bad


def test_each_limit_is_written_once():
    bad = written_twice(ROOT)
    assert not bad, "limits written more than once (tests/system/test_layers.py ONCE):\n" + "\n".join(bad)


def test_checker_finds_a_second_copy(tmp_path):
    files = {"include/pmuos/mailbox.h": "#define MBOX_SHELL_LINE_CAP 256\n#define MBOX_MUX_MAX 8\n"
                                        "#define MBOX_RUN_ARGS 16\n",
             "pmu/plugin_events.h": "#define PEV_NAME(name, def) #name,\n",
             "boot/multiboot.h": "#define A 0x1badb002\n#define B 0x2badb002\nstruct mb_info {};\n"}
    assert written_twice(_tree(tmp_path, files)) == []
    files["host/builtin/console.c"] = "#define SHELL_LINE_MAX 255\n"
    files["tests/cardsim/boot.c"] = "struct mb_info { int flags; };\n"
    bad = written_twice(_tree(tmp_path, files))
    assert bad == ["Multiboot information: defined in ['boot/multiboot.h', 'tests/cardsim/boot.c'], "
                   "should be in boot/multiboot.h only",
                   "host/builtin/console.c:1: a shell line length typed as a number ('#define SHELL_LINE_MAX 255')"], bad
