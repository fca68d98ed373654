"""Call chains and perf.data (issue 26): pmuctl record -g walks the task's
frame pointers in the PMI (pmu/callchain.c); report --folded gives the
stacks; report --to-perf writes perf.data (host/perfdata.c) that Debian's
perf reads; a hostile stack ends the walk, never the card. One card for the
file; every recording samples INSTRUCTIONS_EXECUTED:u, exact on the model."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
USER = os.path.join(BUILD, "user")
PERF = "/usr/bin/perf"
HOTSPOT_PARSER = "/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser"  # Debian's hotspot
FRAMES_MAX = 16  # PMU_CALLCHAIN_MAX, include/pmuos/sample.h


@pytest.fixture(scope="module")
def card():
    c = Card(cpus=4, timeout=120)
    yield c
    c.close()


def pmuctl(card, *args, cwd=None):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def record(card, tmp_path, name, period, *program, lost_ok=False):
    """Records program `name` on CPU 1 with call chains; (file, samples, its output). A
    sample with its chain takes 2 to 5 ring slots: under a loaded host the drain (every
    20 ms) can fall behind and the card drops the newest (lost_ok: allowed)."""
    data = tmp_path / f"{name}.data"
    p = pmuctl(card, "record", "-g", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", str(period), "-C", "1",
               "-o", str(data), "--", os.path.join(USER, f"{name}.elf"), *program)
    assert p.returncode == 0, p.stderr
    m = re.search(r"\[ pmuctl record: (\d+) samples, (\d+) lost", p.stderr)
    assert m and (lost_ok or m[2] == "0"), p.stderr
    return data, int(m[1]), p.stdout


def folded(data):
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--folded"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return {s: int(n) for s, n in (l.rsplit(" ", 1) for l in p.stdout.splitlines())}


def perf(*args):
    p = subprocess.run([PERF, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def calls_data(card, tmp_path_factory):
    """calls 1000000 recorded with -g every 20000 instructions: (recording, samples)."""
    data, n, _ = record(card, tmp_path_factory.mktemp("calls"), "calls", 20000, "1000000")
    return data, n


def source_line(text):
    """The number and text of the line of user/programs/calls.c holding `text`."""
    with open(os.path.join(ROOT, "user", "programs", "calls.c")) as f:
        return next((i, l.rstrip("\n")) for i, l in enumerate(f, 1) if text in l)


def test_folded_stacks_match_the_known_instruction_split(calls_data):
    """calls: of its 20 x UNIT instructions of work b runs 50 %, a 20 %, c 30 %
    (user/programs/calls.c); the stacks' shares match within 2 % of all samples."""
    data, n = calls_data
    stacks = folded(data)
    assert sum(stacks.values()) == n
    want = {"calls.elf;_start;main;a;b": 0.50, "calls.elf;_start;main;a": 0.20, "calls.elf;_start;main;c": 0.30}
    for stack, share in want.items():
        assert abs(stacks.get(stack, 0) / n - share) < 0.02, (stack, stacks)
    assert sum(stacks.get(s, 0) for s in want) / n > 0.98, stacks
    # The hot loop's line: b's SPIN, half of the samples (the source line read from calls.c itself).
    line, _ = source_line("SPIN(5 * unit)")
    for sort, name in (("srcline", f"calls.c:{line}"), ("sym,srcline", f"b calls.c:{line}")):
        p = subprocess.run([PMUCTL, "report", "-i", str(data), "--sort", sort], capture_output=True, text=True)
        top = re.search(r"^\s+([\d.]+)%\s+(.+)$", p.stdout, re.M)
        assert top and top[2] == name and abs(float(top[1]) - 50) < 2, p.stdout


@pytest.fixture(scope="module")
def matmul_perf(card, tmp_path_factory):
    """matmul 64 recorded with -g and converted to perf.data: (perf.data, samples)."""
    tmp = tmp_path_factory.mktemp("matmul")
    data, n, _ = record(card, tmp, "matmul", 10000, "64", lost_ok=True)
    out = tmp / "perf.data"
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--to-perf", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out, n


def text_symbols(elf):
    """The function symbols of `elf` (nm -n): [(address, name)] in address order."""
    nm = subprocess.run(["nm", "-n", elf], capture_output=True, text=True, check=True).stdout
    return [(int(a, 16), name) for a, t, name in (l.split() for l in nm.splitlines() if len(l.split()) == 3)
            if t in "tT"]


def test_annotate_gives_a_functions_lines_their_shares(calls_data):
    """annotate a: a's own samples (20 % of all) are all on its loop's line, shown with its
    text from calls.c; a's other lines (the call of b among them) have none."""
    data, n = calls_data
    p = subprocess.run([PMUCTL, "annotate", "-i", str(data), "a"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    m = re.match(r"# a: (\d+) of (\d+) samples", p.stdout)
    assert m and int(m[2]) == n and abs(int(m[1]) / n - 0.20) < 0.02, p.stdout
    rows = re.findall(r"^ *([\d.]+%)? +(\d+)  (.*)$", p.stdout, re.M)
    loop, text = source_line("SPIN(2 * unit)")
    call, _ = source_line("b(unit);")
    shares = {int(line): (share, src) for share, line, src in rows}
    assert shares[loop][1] == text and float(shares[loop][0][:-1]) > 98, p.stdout
    assert call in shares and sum(1 for share, _ in shares.values() if share) == 1, p.stdout
    assert source_line("SPIN(5 * unit)")[0] not in shares, p.stdout
    p = subprocess.run([PMUCTL, "annotate", "-i", str(data), "nosuch"], capture_output=True, text=True)
    assert p.returncode == 1 and "calls.elf has no function nosuch" in p.stderr, p.stderr


INLINED = r"""
#define SPIN(n) do { unsigned long k_ = (n); __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(k_)); } while (0)
static inline __attribute__((always_inline)) void inner(unsigned long n) { SPIN(n); }
static void __attribute__((noinline)) outer(unsigned long n) { inner(3 * n); SPIN(n); }
int main(void) { outer(1000000); return 0; }
"""


def test_inlined_frames_in_stacks(card, tmp_path):
    """A function inlined into another (DWARF's DW_TAG_inlined_subroutine) is a frame of
    its own in --folded stacks, "inner_[i]", with its loop's 3/4 of the work; srcline
    names its line."""
    src = tmp_path / "inl.c"
    src.write_text(INLINED)
    elf = tmp_path / "inl.elf"
    subprocess.run([os.path.join(BUILD, "bin", "pmuos-cc"), "-O2", "-g", "-o", str(elf), str(src)], check=True)
    data = tmp_path / "inl.data"
    p = pmuctl(card, "record", "-g", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "20000", "-C", "1", "-o", str(data),
               "--", str(elf))
    assert p.returncode == 0, p.stderr
    stacks = folded(data)
    n = sum(stacks.values())
    assert abs(stacks.get("inl.elf;_start;main;outer;inner_[i]", 0) / n - 0.75) < 0.02, stacks
    assert abs(stacks.get("inl.elf;_start;main;outer", 0) / n - 0.25) < 0.02, stacks
    line = next(i for i, l in enumerate(INLINED.splitlines(), 1) if "void inner" in l)
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--sort", "srcline"], capture_output=True, text=True)
    top = re.search(r"^\s+([\d.]+)%\s+(.+)$", p.stdout, re.M)
    assert top and top[2] == f"inl.c:{line}" and abs(float(top[1]) - 75) < 2, p.stdout
    assert "no source line" not in p.stderr, p.stderr
    # Built without -g: only newlib's code has lines (it is built with -g); report says what to do.
    bare = tmp_path / "bare.elf"
    subprocess.run([os.path.join(BUILD, "bin", "pmuos-cc"), "-O2", "-o", str(bare), str(src)], check=True)
    data = tmp_path / "bare.data"
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "20000", "-C", "1", "-o", str(data),
               "--", str(bare))
    assert p.returncode == 0, p.stderr
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--sort", "srcline"], capture_output=True, text=True)
    m = re.search(r"report: (\d+) of (\d+) samples have no source line \(\[unknown\]\): was the program's own "
                  r"code built without -g\? \(pmuos-cc -g\)", p.stderr)
    assert m and int(m[1]) > 0.99 * int(m[2]), p.stderr
    p = subprocess.run([PMUCTL, "annotate", "-i", str(data), "outer"], capture_output=True, text=True)
    assert "samples in outer have no source line: was it built without -g? (pmuos-cc -g)" in p.stderr, p.stderr
    # Its instructions all the same (objdump -d), the two of each SPIN loop holding the samples.
    dis = p.stdout.split("# Percent  Disassembly (objdump -d)\n")[1]
    insns = re.findall(r"^(?:\s+([\d.]+)%|\s{9})  [0-9a-f]+:\t(\S+)", dis, re.M)
    assert len(insns) > 4 and {op for _, op in insns} >= {"dec", "jne"}, dis
    assert sum(float(share) for share, op in insns if share and op in ("dec", "jne")) > 99, dis


def test_perf_reads_matmul_with_its_call_chains(matmul_perf):
    out, n = matmul_perf
    # Self time (no children): the soft-float helpers multiply_row calls and multiply_row itself.
    rep = perf("report", "-i", str(out), "--stdio", "--no-children", "--sort", "sym", "-g", "none")
    rows = re.findall(r"^\s+([\d.]+)%\s+\[\.\]\s+(\S+)", rep, re.M)
    assert {name for _, name in rows[:3]} == {"multiply_row", "__adddf3", "__muldf3"}, rep
    # perf rounds the sample count (5K); the event count is exact: samples x period.
    assert "of event 'INSTRUCTIONS_EXECUTED:u'" in rep and f"Event count (approx.): {n * 10000}\n" in rep, rep
    # With children: multiply_row holds the helpers' time, main calls it.
    rep = perf("report", "-i", str(out), "--stdio", "--children", "--sort", "sym", "-g", "caller,0.5,callee")
    rows = re.findall(r"^\s+([\d.]+)%\s+([\d.]+)%\s+\[\.\]\s+(\S+)", rep, re.M)
    children = {name: float(c) for c, _, name in rows}
    assert children["main"] > 95 and children["multiply_row"] > 95, rep
    script = perf("script", "-i", str(out), "-F", "comm,tid,cpu,ip,sym,period")
    stacks = script.strip().split("\n\n")
    assert len(stacks) == n
    hot = [s for s in stacks if "__muldf3" in s.splitlines()[1]]
    assert hot and all(re.search(r"multiply_row\n.*main\n", s) for s in hot), stacks[:3]


def test_perf_script_addresses_are_the_programs(matmul_perf):
    """perf script -G prints each sample's IP: the virtual address, inside the function nm
    gives for it. In call chains Debian's perf 6.1 prints a user address as its offset in
    the file (as for its own recordings): the address less the text segment's
    p_vaddr - p_offset (readelf), inside the same function."""
    out, n = matmul_perf
    elf = os.path.join(USER, "matmul.elf")
    starts = {}
    for a, name in text_symbols(elf):  # aliases (__eqdf2, __nedf2) share an address
        starts.setdefault(a, set()).add(name)
    bounds = sorted(starts) + [1 << 64]
    def holds(addr, sym):
        return any(a <= addr < b and sym in starts[a] for a, b in zip(bounds, bounds[1:]))
    ips = re.findall(r"^\s*([0-9a-f]+) (\S+)$", perf("script", "-i", str(out), "-G", "-F", "ip,sym"), re.M)
    assert len(ips) == n and not [(ip, sym) for ip, sym in ips if not holds(int(ip, 16), sym)], ips[:5]
    phdrs = subprocess.run(["readelf", "-lW", elf], capture_output=True, text=True, check=True).stdout
    off, vaddr = re.findall(r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) .* R E ", phdrs)[0]
    shift = int(vaddr, 16) - int(off, 16)
    frames = re.findall(r"^\s+([0-9a-f]+) (\S+)$", perf("script", "-i", str(out), "-F", "ip,sym"), re.M)
    assert len(frames) > n and not [(a, sym) for a, sym in frames if not holds(int(a, 16) + shift, sym)], frames[:5]


def test_hotspot_reads_matmul(matmul_perf):
    """Hotspot's parser (Debian's hotspot) reads the file without a warning and names
    multiply_row in its output (a binary stream: the name's bytes are in it)."""
    out, _ = matmul_perf
    parsed = out.parent / "hotspot.out"
    p = subprocess.run([HOTSPOT_PARSER, "--input", str(out), "--output", str(parsed)], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, QT_MESSAGE_PATTERN="%{type}: %{message}"))
    assert p.returncode == 0, p.stderr
    bad = [l for l in p.stderr.splitlines() if not l.startswith(("debug:", "info:"))]
    assert not bad, p.stderr
    assert b"multiply_row" in parsed.read_bytes()


def test_a_hostile_stack_ends_the_walk_not_the_card(card, tmp_path):
    data, n, out = record(card, tmp_path, "badstack", 10000, "all", "200000")
    stacks = folded(data)
    by_kind = {}
    for s, count in stacks.items():
        frames = s.split(";")
        by_kind.setdefault(frames[-1], []).append((frames[1:-1], count))
    # No frame on a kernel address, an unmapped page or an unaligned one; 2 for the loop; 16 of the 64 deep.
    for kind, chains in (("spin_kernel", [[]]), ("spin_unmapped", [[]]), ("spin_unaligned", [[]]),
                         ("spin_loop", [["main", "main"]]), ("spin_deep", [["main"] * FRAMES_MAX])):
        assert [f for f, _ in by_kind.get(kind, [])] == chains, (kind, stacks)
        assert sum(c for _, c in by_kind[kind]) >= 200000 * 2 // 10000 - 1, (kind, stacks)
    assert pmuctl(card, "info").returncode == 0
    again, _, _ = record(card, tmp_path, "calls", 20000, "100000")
    assert folded(again)


def test_the_shell_records_chains_too(card):
    """The shell's record -g: `pmu callchain CPUS N`; `pmu callchain CPU` shows the newest chain."""
    assert "0-16 frames" in card.cmd("pmu callchain 1 x")
    assert "a call chain of 17 frames: 0 (none) to 16" in card.cmd("pmu callchain 1 17")
    for line in ("pmu callchain 1 16", "pmu set 1 0 INSTRUCTIONS_EXECUTED:u period=10000", "pmu start 1"):
        assert card.cmd(line).strip() == "", line
    out = card.cmd("run calls 100000", timeout=60)
    assert "calls: 2000000 instructions of work" in out, out
    card.cmd("pmu stop 1")
    text = [int(l.split()[0], 16) for l in subprocess.run(["nm", "-n", os.path.join(USER, "calls.elf")],
            capture_output=True, text=True, check=True).stdout.splitlines() if l.split()[1] in "tT"]
    newest = card.cmd("pmu samples 1 1").splitlines()[1].split()
    chain = card.cmd("pmu callchain 1")
    addrs = [int(a, 16) for a in re.findall(r"#\d+ (0x[0-9a-f]+)", chain)]
    assert len(addrs) == int(newest[-1]) and all(text[0] < a <= text[-1] for a in addrs), (newest, chain)
    # 2 frames (_start, main) in a and c, 3 in b: every sample of the work has one of them.
    frames = [int(l.split()[-1]) for l in card.cmd("pmu samples 1 100").splitlines()[1:-1]]
    # The newest may fall in printf or exit, after the work (newlib keeps no frame pointers):
    # a few thousand instructions, a sample or two.
    while frames and frames[-1] not in (2, 3):
        frames.pop()
    assert len(frames) >= 97 and set(frames) <= {2, 3} and frames.count(2) > 20, frames
    card.cmd("pmu set 1 0 none")
    card.cmd("pmu callchain 1 off")


def test_report_keeps_to_the_program_recorded(card, tmp_path):
    """The recording holds the program's absolute path and build ID: report works from
    another directory, refuses a program rebuilt since, and takes the recorded one from
    --symfs DIR (DIR + the absolute path, or DIR/its name)."""
    work = tmp_path / "work"
    work.mkdir()
    prog = work / "calls.elf"
    shutil.copy(os.path.join(USER, "calls.elf"), prog)
    data = tmp_path / "calls.data"
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED:u", "-c", "20000", "-o", str(data), "--", "calls.elf",
               "100000", cwd=work)
    assert p.returncode == 0, p.stderr
    elsewhere = subprocess.run([PMUCTL, "report", "-i", str(data)], capture_output=True, text=True, cwd="/")
    assert elsewhere.returncode == 0 and re.search(r"^\s+[\d.]+%\s+b$", elsewhere.stdout, re.M), elsewhere
    kept = tmp_path / "kept"
    kept.mkdir()
    shutil.copy(prog, kept / "calls.elf")
    shutil.copy(os.path.join(USER, "badstack.elf"), prog)  # "rebuilt": another build ID at the same path
    rebuilt = subprocess.run([PMUCTL, "report", "-i", str(data)], capture_output=True, text=True)
    assert rebuilt.returncode == 1 and f"pmuctl: report: {prog} is not the program recorded: its build ID is" \
        in rebuilt.stderr, rebuilt.stderr
    for symfs in (kept, tmp_path / "root"):
        if symfs.name == "root":
            shutil.copytree(kept, symfs / str(work).lstrip("/"))
        p = subprocess.run([PMUCTL, "report", "-i", str(data), "--symfs", str(symfs)], capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout == elsewhere.stdout, (symfs, p.stderr)


def test_kernel_samples_are_named_from_system_map(card, tmp_path):
    """steady makes a system call a round: samples of INSTRUCTIONS_EXECUTED (user and
    kernel) in the kernel are named from build/System.map, beside pmuctl, and with -g
    carry the kernel's own chain (its frame pointers, on the stack the sample is on).
    The period keeps below the PMI limit: throttled, the samples' phase in the round
    follows the limit's 1 ms windows of card time, which count every CPU's instructions
    (-icount), so whether any falls where the kernel has interrupts on varied by run."""
    data = tmp_path / "steady.data"
    p = pmuctl(card, "record", "-g", "-e", "INSTRUCTIONS_EXECUTED", "-c", "10007", "-o", str(data), "--",
               os.path.join(USER, "steady.elf"), "6000", "20")
    assert "throttled" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stderr
    rep = subprocess.run([PMUCTL, "report", "-i", str(data)], capture_output=True, text=True)
    kernel = re.findall(r"^\s+[\d.]+%\s+(\S+)_\[k\]$", rep.stdout, re.M)
    with open(os.path.join(BUILD, "System.map")) as f:
        text = {l.split()[2] for l in f if l.split()[1] in "tTwW"}
    assert kernel and set(kernel) <= text, rep.stdout
    assert "[kernel]" not in rep.stdout
    chains = [s.split(";")[1:] for s in folded(data) if s.endswith("_[k]")]
    assert all(f.endswith("_[k]") and f[:-4] in text for c in chains for f in c), chains
    assert max(len(c) for c in chains) >= 2, chains
    # perf.data maps the kernel as perf maps the host's: perf names its samples from the
    # same System.map, or from the kernel ELF, with the shares pmuctl gives.
    out = tmp_path / "perf.data"
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--to-perf", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    ours = dict((name, float(pc)) for pc, name in re.findall(r"^\s+([\d.]+)%\s+(\S+)_\[k\]$", rep.stdout, re.M))
    for source in (("--kallsyms", os.path.join(BUILD, "System.map")), ("--vmlinux", os.path.join(BUILD, "kernel.elf"))):
        rep_perf = perf("report", "-i", str(out), *source, "--stdio", "--no-children", "--sort", "sym", "-g", "none")
        theirs = dict((name, float(pc)) for pc, name in re.findall(r"^\s+([\d.]+)%\s+\[k\]\s+(\S+)$", rep_perf, re.M))
        assert theirs.keys() == ours.keys() and all(abs(theirs[k] - ours[k]) < 0.01 for k in ours), (source, rep_perf)


def test_report_takes_perfs_stdio_n_and_sort_keys(card, tmp_path):
    """perf report's --stdio (pmuctl's only output), -n (a sample count column) and --sort
    dso,comm: user samples under the program, kernel ones under [kernel.kallsyms], all of
    them the program's; the counts sum to the samples; a key that is none is named."""
    data = tmp_path / "both.data"
    p = pmuctl(card, "record", "-e", "INSTRUCTIONS_EXECUTED", "-c", "2000", "-C", "1", "-o", str(data), "--",
               os.path.join(USER, "hello.elf"))
    assert p.returncode == 0, p.stderr
    n = int(re.search(r"\[ pmuctl record: (\d+) samples", p.stderr)[1])
    p = subprocess.run([PMUCTL, "report", "--stdio", "-n", "-i", str(data), "--sort", "dso,comm"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "# Overhead  Samples  Shared Object Command\n" in p.stdout, p.stdout
    rows = {m[3]: int(m[2]) for m in re.finditer(r"^\s+([\d.]+)%\s+(\d+)\s+(.+)$", p.stdout, re.M)}
    assert set(rows) == {"hello.elf hello.elf", "[kernel.kallsyms] hello.elf"} and sum(rows.values()) == n, p.stdout
    p = subprocess.run([PMUCTL, "report", "-i", str(data), "--sort", "sym,pid"], capture_output=True, text=True)
    assert p.returncode == 2 and "--sort sym,pid: 'pid' is not a key; keys are sym, srcline, dso and comm" in p.stderr
