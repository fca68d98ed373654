"""The strict simulated card (issue 22): scripts/qemu.sh CPU=knc is QEMU's
CPU stripped to a KNC core's scalar ISA and CPUID (family 0x0B, maximum basic
leaf 4). QEMU's TCG raises #UD for CMOV and SSE there; what it runs anyway
(PAUSE, long NOPs, PREFETCH, MMX) the plugin reports (plugin/isacheck.c). The
kernel takes the model PMU backend (family 0x0B under a hypervisor: QEMU has
no KNC PMU MSRs) and its topology from CPUID leaves 1 and 4 (no leaf
0xB)."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT, cpu_rows

PLUGIN = os.environ.get("PLUGIN", "1") != "0"
QEMU_SH = os.path.join(ROOT, "scripts", "qemu.sh")
ISA_PROBE = os.path.join(ROOT, "tests", "system", "tools", "isa_probe.S")

# What QEMU 7.2's TCG does on the strict CPU with each probe of isa_probe.S
# (docs/knc.md "The strict CPU"): the instructions a KNC core lacks either
# raise #UD or run; those that run the plugin reports, in this order, with
# these mnemonics (plugin/decode.c knc_missing). KNC has the last four.
TRAPPED = ["cmove", "fcmovb", "fcomi", "fucomi", "fcomip", "pxor_xmm", "movaps", "movnti", "stmxcsr", "crc32",
           "lfence", "mfence", "sfence", "clflush", "popcnt", "movbe", "rdtscp", "monitor", "femms", "pfadd"]
RUN_ANYWAY = [("emms", "emms"), ("movq_mm", "MMX"), ("paddb_mm", "MMX"), ("movd_mm", "MMX"), ("pshufw", "MMX"),
              ("nopl", "nop r/m (0F 1F)"), ("nopw", "nop r/m (0F 1F)"), ("hint_nop_0f19", "hint nop (0F 18-1E)"),
              ("hint_nop_0f18_4", "hint nop (0F 18-1E)"), ("endbr32", "endbr32"), ("pause", "pause"),
              ("prefetcht0", "prefetcht0"), ("prefetchnta", "prefetchnta"), ("prefetchw", "prefetchw")]
KNC_HAS = ["fxsave", "rdtsc", "lzcnt_bsr", "tzcnt_bsf"]

# A Ring-3 program without a C library: one of the instructions below, then
# exit(0) (include/pmuos/syscall.h: SYSCALL, number in RAX, SYS_EXIT 2).
PROGRAM = r"""
	.globl _start
_start:
#if defined(CMOV)
	cmove %rax, %rax
#elif defined(SSE)
	pxor %xmm0, %xmm0
#else
	.globl at_pause, at_nop, at_prefetch, at_mmx
at_pause:	pause
at_nop:		nopl 0(%rax)
at_prefetch:	prefetcht0 (%rsp)
at_mmx:		movq %mm0, %mm1
	emms
#endif
	movl $2, %eax
	xorl %edi, %edi
	syscall
"""


def build(tmp_path, name, define):
    src = tmp_path / "prog.S"
    src.write_text(PROGRAM)
    elf = tmp_path / f"{name}.elf"
    subprocess.run(["gcc", f"-D{define}", "-nostdlib", "-static", "-no-pie", "-Wl,-Ttext=0x8000400000",
                    "-Wl,--build-id=none", "-Wl,-z,noexecstack", "-o", str(elf), str(src)], check=True)
    return str(elf)


def symbols(elf):
    out = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout
    return {name: int(addr, 16) for addr, _, name in (l.split() for l in out.splitlines())}


@pytest.mark.parametrize("kind", ["CMOV", "SSE"])
def test_cmov_and_sse_raise_ud_on_the_strict_cpu_only(card_factory, tmp_path, kind):
    elf = build(tmp_path, "strict", kind)
    knc = card_factory(cpus=2, cpu="knc", env={"PROGRAMS": elf})
    out = knc.cmd("run strict on 1")
    at = symbols(elf)["_start"]
    assert f"#UD invalid opcode (vector 6) at RIP {at:#x}" in out, out
    assert "ended by exception vector 6" in out, out
    full = card_factory(cpus=2, cpu="max", env={"PROGRAMS": elf})
    assert "exit status 0" in full.cmd("run strict on 1")


@pytest.mark.skipif(not PLUGIN, reason="PLUGIN=0: QEMU runs without the plugin")
def test_the_plugin_reports_what_qemu_runs_anyway(card_factory, tmp_path):
    elf = build(tmp_path, "missing", "MISSING")
    card = card_factory(cpus=2, cpu="knc", env={"PROGRAMS": elf})
    assert card.knc_report() == []  # the kernel's boot ran none
    assert "exit status 0" in card.cmd("run missing on 1")
    card.knc_expected = True
    report = card.knc_report()
    at = symbols(elf)
    want = [f"pmuos-pmu: knc: CPU 1 CPL 3 at {at[label]:#x}: {mnemonic}, which a KNC core lacks"
            for label, mnemonic in (("at_pause", "pause"), ("at_nop", "nop r/m (0F 1F)"),
                                    ("at_prefetch", "prefetcht0"), ("at_mmx", "MMX"))]
    assert report[:4] == want, report
    assert re.search(r"CPL 3 at 0x[0-9a-f]+: emms, which", report[4]), report
    assert len(report) == 5, report


def test_topology_from_apic_ids_without_leaf_b(card_factory):
    card = card_factory(cpus=8, cpu="knc")
    rows = cpu_rows(card.cmd("cpus"))
    assert rows == {i: (i, i // 4, i % 4, "online") for i in range(8)}, rows


def test_strict_cpu_takes_the_model_backend_and_the_pc_and_says_why(card_factory):
    card = card_factory(cpus=1, cpu="knc")
    assert "pmu: backend model: CPUID family 0xb under a hypervisor (QEMU's strict KNC CPU: no KNC PMU MSRs)" \
        in card.boot_log
    assert "KNC platform" not in card.boot_log and "platform=" not in card.cmd("version")
    assert re.search(r"^backend\s+model$", card.cmd("pmu info"), re.M)
    forced = card_factory(cpus=1, cpu="knc", env={"CMDLINE": "pmuos.pmu=model"})
    assert "pmu: backend model: pmuos.pmu=model" in forced.boot_log


@pytest.mark.parametrize("line, said", [
    ("pmuos.pmu=knc", r"pmu: pmuos\.pmu=knc refused: CPUID family 0x[0-9a-f]+ is not a KNC core's 0xb "
                      r"\(its PMU MSRs would fault\)"),
    ("pmuos.pmu=fast", r"pmu: pmuos\.pmu=fast: not model, knc or arch; ignored"),
    # QEMU's TCG reports CPUID leaf 0xA as zeros: no architectural perfmon to drive
    ("pmuos.pmu=arch", r"pmu: pmuos\.pmu=arch refused: CPUID leaf 0xa reports no architectural perfmon of "
                       r"version 2 or later \(its PMU MSRs would fault\)"),
])
def test_a_bad_backend_choice_is_refused_with_why(card_factory, line, said):
    card = card_factory(cpus=1, cpu="max", env={"CMDLINE": line})
    assert re.search(said, card.boot_log), card.boot_log
    assert re.search(r"pmu: backend model: CPUID family 0x[0-9a-f]+, not a KNC core \(0xb\)", card.boot_log)


@pytest.mark.parametrize("env, said", [
    ({"CPU": "p54c"}, "CPU must be max, knl or knc, got 'p54c'"),
    ({"CPU": "knc", "ACCEL": "kvm"}, "CPU=knc is QEMU's TCG CPU stripped to KNC's: ACCEL=tcg"),
    ({"CPU": "knc", "BOOT": "uefi"}, "CPU=knc cannot run OVMF, which is SSE code"),
])
def test_qemu_sh_refuses_what_cannot_be_strict(env, said):
    p = subprocess.run([QEMU_SH], env=dict(os.environ, BUILD=BUILD, CARD=f"bad{os.getpid()}", **env),
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and said in p.stderr, p.stderr


def test_the_simulated_card_runs_on_the_strict_cpu():
    # tests/cardsim/card.py starts QEMU with CPU=knc (default_cpu() here): the kernel boots
    # on the card platform (platform=knc), takes the model backend, numbers 2 cores of 4
    # threads, and the plugin reports nothing, port I/O included: SimCard.close checks.
    from test_card_boot import BZIMAGE, SimCard
    card = SimCard(f"simknc{os.getpid()}", "--cpus", "8")
    try:
        p = card.pmuctl("boot", BZIMAGE)
        assert p.returncode == 0 and re.search(r"pmuos \S+ READY, 8 CPUs$", p.stdout, re.M), p.stderr
        p = card.pmuctl("console", timeout=60, input="cpus\npmu info\n")
        assert cpu_rows(p.stdout) == {i: (i, i // 4, i % 4, "online") for i in range(8)}, p.stdout
        assert re.search(r"^backend\s+model$", p.stdout, re.M), p.stdout
        assert os.path.exists(f"/dev/shm/pmuos-{card.name}-knc")  # the plugin reports: CPU=knc
    finally:
        card.close()


def run_probe(tmp_path, cpu):
    """Boots isa_probe.S on `cpu`: ({probe: "ran" | "#UD" | "#GP" | "other"}, the plugin's report lines)."""
    obj, elf = tmp_path / "probe.o", tmp_path / "probe.elf"
    if not elf.exists():
        subprocess.run(["gcc", "-m32", "-c", ISA_PROBE, "-o", str(obj)], check=True)
        subprocess.run(["ld", "-m", "elf_i386", "-Ttext=0x100000", "-e", "_start", str(obj), "-o", str(elf)], check=True)
    p = subprocess.run([QEMU_SH], env=dict(os.environ, BUILD=BUILD, KERNEL=str(elf), BOOT="multiboot", CPU=cpu, CPUS="1",
                                          CARD=f"probe{os.getpid()}-{cpu}"),
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    got = dict(re.findall(r"^probe (\S+) (ran|#UD|#GP|other)\r?$", p.stdout, re.M))
    assert len(got) == len(TRAPPED) + len(RUN_ANYWAY) + len(KNC_HAS), p.stdout
    return got, re.findall(r"^pmuos-pmu: knc: CPU 0 CPL 0 at 0x[0-9a-f]+: (.*), which a KNC core lacks$",
                           p.stderr, re.M)


@pytest.mark.skipif(not PLUGIN, reason="PLUGIN=0: QEMU runs without the plugin")
def test_qemu_traps_or_runs_each_missing_instruction_and_the_plugin_names_what_runs(tmp_path):
    got, report = run_probe(tmp_path, "knc")
    assert [n for n in got if got[n] == "#UD"] == TRAPPED, got
    assert [n for n in got if got[n] == "ran"] == [n for n, _ in RUN_ANYWAY] + KNC_HAS, got
    assert report == [m for _, m in RUN_ANYWAY]
    full, report = run_probe(tmp_path, "max")  # QEMU's full CPU runs every one, and nothing is reported
    assert all(r == "ran" for r in full.values()), full
    assert report == []
