"""The kernel text contains only instructions a KNC core executes (docs/design.md §3):
no SSE/AVX/x87, no PAUSE, no MFENCE/LFENCE/SFENCE, no RDTSCP, and no CMOV or
multi-byte NOP (0F 1F), which a KNC core lacks too (ISA reference 327364
Appendix B; the build rewrites CMOV, scripts/nocmov.py)."""
import os
import re
import subprocess

from conftest import BUILD

FORBIDDEN_MNEMONICS = re.compile(
    r"^(f[a-z0-9]+|wait|pause|mfence|lfence|sfence|rdtscp|movnti|emms|"
    r"ldmxcsr|stmxcsr|fxsave\w*|fxrstor\w*|xsave\w*|xrstor\w*|cmov\w+|nop[wlq])$")
PREFIXES = {"rep", "repz", "repnz", "lock", "data16", "addr32", "cs", "ds", "es", "ss", "fs", "gs"}
FORBIDDEN_REGISTERS = re.compile(r"%(x|y|z)mm\d+|%mm\d|%st(\(\d\))?\b")
# arch/fpu.c: the FXRSTOR that resets a task's x87/SSE state lives in this
# section alone and runs only where CPUID reports FXSR.
EXEMPT_SECTION = ".fpu_text"
EXEMPT_MNEMONIC = "fxrstor64"


# boot/entry.S: the 32-bit entries run from multiboot_entry up to kernel_entry64
# (.code32). Read as 64-bit code their bytes can look like anything (a far
# jump's pointer decodes as x87 once addresses move), so they are read as i386.
CODE32 = ("multiboot_entry", "kernel_entry64")


def code32_range(elf):
    """[start, end) of the kernel's 32-bit code, or None (another ELF)."""
    syms = dict((name, int(addr, 16)) for addr, _, name in
                (l.split()[:3] for l in subprocess.run(["nm", elf], capture_output=True, text=True,
                                                       check=True).stdout.splitlines() if len(l.split()) == 3))
    return (syms[CODE32[0]], syms[CODE32[1]]) if all(n in syms for n in CODE32) else None


def forbidden_instructions(elf):
    """Returns (address, instruction) for every forbidden instruction in the
    executable sections of `elf` (its 32-bit code decoded as such)."""
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", elf],
                          capture_output=True, text=True, check=True).stdout
    r32 = code32_range(elf)
    if r32:
        dump = "\n".join(l for l in dump.splitlines()
                         if not (re.match(r"^\s*([0-9a-f]+):", l) and
                                 r32[0] <= int(re.match(r"^\s*([0-9a-f]+):", l)[1], 16) < r32[1]))
        dump += "\n" + subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att,i386",
                                        f"--start-address={r32[0]:#x}", f"--stop-address={r32[1]:#x}", elf],
                                       capture_output=True, text=True, check=True).stdout
    bad, count, section = [], 0, None
    for line in dump.splitlines():
        s = re.match(r"^Disassembly of section (\S+):", line)
        if s:
            section = s[1]
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        count += 1
        addr, mnem, ops = m.groups()
        mnem = mnem.split(",")[0]
        while mnem in PREFIXES and ops:
            mnem, _, ops = ops.partition(" ")
        if mnem == "nop" and ops:  # NOP with an operand: the 0F 1F form
            mnem = "nopl"
        if section == EXEMPT_SECTION and mnem == EXEMPT_MNEMONIC:
            continue
        if FORBIDDEN_MNEMONICS.match(mnem) or FORBIDDEN_REGISTERS.search(ops):
            bad.append((addr, f"{mnem} {ops}".strip()))
    assert count > 1000, f"objdump found only {count} instructions in {elf}"
    return bad


def test_kernel_text_has_no_forbidden_instructions():
    bad = forbidden_instructions(os.path.join(BUILD, "kernel.elf"))
    assert bad == [], "instructions a KNC core cannot execute:\n" + \
        "\n".join(f"  {a}: {i}" for a, i in bad)


def test_checker_catches_each_forbidden_kind(tmp_path):
    # The checker itself must fail on a kernel that uses these instructions.
    src = tmp_path / "bad.S"
    body = "\n".join(["nop"] * 1100)
    src.write_text(f""".text
.globl _start
_start:
{body}
pause
mfence
lfence
sfence
rdtscp
fldz
fstp %st(0)
movaps %xmm0, %xmm1
vaddps %ymm0, %ymm1, %ymm2
movnti %eax, (%rdi)
cmovne %rax, %rdx
nopw 0x0(%rax,%rax,1)
.byte 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0
fxrstor64 (%rdi)
.section .fpu_text, "ax"
fxrstor64 (%rdi)
fxsave64 (%rdi)
ret
""")
    elf = tmp_path / "bad.elf"
    subprocess.run(["gcc", "-nostdlib", "-static", "-o", str(elf), str(src)], check=True)
    found = [i.split()[0] for _, i in forbidden_instructions(str(elf))]
    # The exempt section allows its one FXRSTOR, not other instructions and not elsewhere.
    assert found == ["pause", "mfence", "lfence", "sfence", "rdtscp", "fldz", "fstp",
                     "movaps", "vaddps", "movnti", "cmovne", "nopw", "nopw", "fxrstor64", "fxsave64"]


CMOV_C = r"""
#include <stdint.h>
#define N __attribute__((noinline))
N long smax(long a, long b) { return a > b ? a : b; }
N unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
N int sel(int c, int a, int b) { return c ? a : b; }
N short sel16(short c, short a, short b) { return c < 0 ? a : b; }
N uint64_t clamp(uint64_t x, uint64_t lo, uint64_t hi) { return x < lo ? lo : x > hi ? hi : x; }
N long pick(const long *p, long a, int c) { long v = *p; return c ? v : a; }
N int sgn(long x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
"""

# A 32-bit CMOV clears bits 63:32 of its destination even when the condition
# is false: the rewrite must too (here RAX starts with its upper half set).
CMOV_ASM = """
.text
.globl zext
zext:
	movabsq $0xffffffff00000005, %rax
	testl %esi, %esi
	cmovne %edi, %eax
	ret
"""

CMOV_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
long smax(long, long); unsigned umin(unsigned, unsigned); int sel(int, int, int);
short sel16(short, short, short); uint64_t clamp(uint64_t, uint64_t, uint64_t);
long pick(const long *, long, int); int sgn(long); uint64_t zext(uint32_t, int);
int main(void)
{
	uint64_t x = 88172645463325252ull, h = 0;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		long a = (long)x, b = (long)(x * 2654435761u);
		h = h * 31 + smax(a, b) + umin(a, b) + sel(i & 1, a, b) + sel16(a, a >> 16, b)
		    + clamp(x, 1000, x >> 1) + pick(&a, b, i & 2) + sgn(a) + zext(a, i & 4);
	}
	printf("%llx %llx %llx\n", (unsigned long long)h, (unsigned long long)zext(7, 0),
	       (unsigned long long)zext(7, 1));
	return 0;
}
"""


def test_cmov_rewrite_keeps_what_the_code_computes(tmp_path):
    """The same functions with and without the rewrite give the same results
    over 100,000 inputs, and only the rewritten ones are free of CMOV."""
    (tmp_path / "f.c").write_text(CMOV_C)
    (tmp_path / "z.s").write_text(CMOV_ASM)
    (tmp_path / "main.c").write_text(CMOV_MAIN)
    nocmov = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "nocmov.py")
    subprocess.run(["gcc", "-O2", "-S", "-o", str(tmp_path / "f.s"), str(tmp_path / "f.c")], check=True)
    outputs, cmovs = {}, {}
    for variant in ("plain", "rewritten"):
        srcs = []
        for name in ("f.s", "z.s"):
            src = tmp_path / name
            if variant == "rewritten":
                dst = tmp_path / f"nocmov-{name}"
                with open(src) as i, open(dst, "w") as o:
                    subprocess.run(["python3", nocmov], stdin=i, stdout=o, check=True)
                src = dst
            srcs.append(str(src))
        exe = tmp_path / variant
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(tmp_path / "main.c"), *srcs], check=True)
        outputs[variant] = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
        dump = subprocess.run(["objdump", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
        cmovs[variant] = len(re.findall(r"\tcmov", dump))
    assert outputs["plain"] == outputs["rewritten"]
    assert outputs["plain"].split()[1:] == ["5", "7"]  # zext: upper half cleared on both paths
    assert cmovs["plain"] >= 5 and cmovs["rewritten"] == 0, cmovs
