"""Every ELF that reaches a card holds only instructions a KNC core executes
(Intel 327364-001 Appendix B; scripts/knc-audit.py has the list and
docs/knc.md the table): the kernel (no x87 either, docs/design.md §3), the bzImage's
own code, the card bootstrap stand-in, newlib's and the soft-float helpers'
objects, crt0 and libpmuos, and every built-in program but the QEMU-only
ones (user/user.mk SSE_PROGRAMS). The builds rewrite CMOV (scripts/nocmov.py)
and pmuos-cc refuses a program the audit rejects."""
import glob
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT, knc_audit

PMUOS_CC = os.path.join(BUILD, "bin", "pmuos-cc")
USERLIB = os.path.join(BUILD, "user", "lib")
NEWLIB = os.path.join(BUILD, "newlib", "install", "x86_64-elf", "lib")
# user/user.mk: the programs built with --qemu-sse (SSE as the VPU's stand-in).
SSE_PROGRAMS = {"vectest", "ssefault"}


def forbidden_instructions(elf, kernel=True, least=1000):
    """Returns (address, instruction) for every instruction in `elf` a KNC
    core lacks (the kernel's rules unless kernel=False)."""
    bad, count = knc_audit.audit(str(elf), kernel)
    assert count >= least, f"objdump found only {count} instructions in {elf}"
    return [(addr, insn) for _, addr, _, insn, _ in bad]


def report(bad):
    return "instructions a KNC core cannot execute:\n" + "\n".join(f"  {a}: {i}" for a, i in bad)


@pytest.mark.parametrize("elf", ["kernel.elf", "linux/bzimage.o", "cardsim/knc_bootstrap.elf"])
def test_card_code_has_no_forbidden_instructions(elf):
    least = {"linux/bzimage.o": 100, "cardsim/knc_bootstrap.elf": 200}.get(elf, 1000)
    bad = forbidden_instructions(os.path.join(BUILD, elf), least=least)
    assert bad == [], report(bad)


@pytest.mark.parametrize("lib", ["libc.a", "libm.a", "libsoftfp.a", "libpmuos.a", "crt0.o"])
def test_libraries_have_no_forbidden_instructions(lib):
    path = os.path.join(NEWLIB if lib in ("libc.a", "libm.a") else USERLIB, lib)
    bad = forbidden_instructions(path, kernel=False, least=2 if lib == "crt0.o" else 100)
    assert bad == [], report(bad)


def programs():
    return sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(ROOT, "user", "programs", "*.c")))


@pytest.mark.parametrize("prog", programs())
def test_programs_are_card_code_unless_qemu_only(prog):
    bad = forbidden_instructions(os.path.join(BUILD, "user", f"{prog}.elf"), kernel=False)
    if prog in SSE_PROGRAMS:  # the audit sees what --qemu-sse allows
        assert any("xmm" in i for _, i in bad), bad
    else:
        assert bad == [], report(bad)

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


USER_BAD = """
fcmovb %st(1), %st
fcomi %st(1), %st
fucomip %st(1), %st
cmovael %ecx, %eax
pause
lfence
nopl 0x0(%rax)
prefetcht0 (%rdi)
clflush (%rdi)
popcnt %rax, %rdx
lzcnt %rax, %rdx
tzcnt %rax, %rdx
movbe (%rdi), %eax
cmpxchg16b (%rdi)
xsave (%rdi)
monitor
mwait
sysenter
inb $0x60, %al
outb %al, $0x80
emms
movd %eax, %mm0
pxor %xmm0, %xmm0
ldmxcsr (%rdi)
endbr64
"""


def test_checker_allows_x87_in_user_code_and_nothing_else(tmp_path):
    # Ring-3 code may use the x87 (KNC has it), not what KNC lacks, IN/OUT included.
    src = tmp_path / "user.S"
    x87 = "fldz\nfld1\nfaddp\nfsqrt\nfstpl (%rdi)\nfninit\n"
    src.write_text(".text\n.globl _start\n_start:\n" + x87 * 20 + USER_BAD + "ret\n")
    elf = tmp_path / "user.elf"
    subprocess.run(["gcc", "-nostdlib", "-static", "-o", str(elf), str(src)], check=True)
    found = [i.split()[0] for _, i in forbidden_instructions(elf, kernel=False, least=100)]
    assert found == ["fcmovb", "fcomi", "fucomip", "cmovae", "pause", "lfence", "nopl", "prefetcht0", "clflush",
                     "popcnt", "lzcnt", "tzcnt", "movbe", "cmpxchg16b", "xsave", "monitor", "mwait", "sysenter",
                     "in", "out", "emms", "movd", "pxor", "ldmxcsr", "endbr64"], found
    # The kernel's rules refuse the x87 too.
    assert sum(i.startswith("f") for _, i in forbidden_instructions(elf, least=100)) == 20 * 6 + 3


BAD_PROGRAM = r"""
#include <stdio.h>
__attribute__((noinline)) void spin(void) { __asm__ volatile("pause"); }
int main(void) { spin(); printf("%d\n", 1); return 0; }
"""


def test_pmuos_cc_refuses_a_program_a_knc_core_cannot_run(tmp_path):
    """pmuos-cc names the instruction, its address and function, writes no ELF
    and fails; --qemu-sse (QEMU only) writes it."""
    (tmp_path / "bad.c").write_text(BAD_PROGRAM)
    elf = tmp_path / "bad.elf"
    p = subprocess.run([PMUOS_CC, "-O2", "-o", str(elf), str(tmp_path / "bad.c")], capture_output=True, text=True)
    assert p.returncode == 1 and not elf.exists(), (p.returncode, p.stdout, p.stderr)
    assert re.search(r"bad\.elf: 0x[0-9a-f]+ in spin(\+0x[0-9a-f]+)?: pause: PAUSE", p.stdout), p.stdout
    p = subprocess.run([PMUOS_CC, "--qemu-sse", "-O2", "-o", str(elf), str(tmp_path / "bad.c")],
                       capture_output=True, text=True)
    assert p.returncode == 0 and elf.exists(), p.stderr


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


@pytest.mark.parametrize("cc", [["gcc"], ["clang", "-fno-integrated-as"]])
def test_cmov_rewrite_keeps_what_the_code_computes(tmp_path, cc):
    """The same functions with and without the rewrite give the same results
    over 100,000 inputs, and only the rewritten ones are free of CMOV: GCC's
    assembly (the kernel) and clang's (scripts/knc-cc, cmovgq and the like)."""
    (tmp_path / "f.c").write_text(CMOV_C)
    (tmp_path / "z.s").write_text(CMOV_ASM)
    (tmp_path / "main.c").write_text(CMOV_MAIN)
    nocmov = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "nocmov.py")
    subprocess.run([*cc, "-O2", "-S", "-o", str(tmp_path / "f.s"), str(tmp_path / "f.c")], check=True)
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


ALIGN_ASM = """.text
ret
.p2align 4
ret
.balign 32,,20
ret
.p2align 5, 0x90
ret
.section .rodata
.byte 1
.p2align 4
.byte 2
"""


def test_code_alignment_pads_with_one_byte_nops(tmp_path):
    """nocmov.py gives code alignment the fill 0x90 and knc-cc's `as -n`
    pads with it: no long NOP, where plain gas pads the same text with them.
    Data alignment keeps its zero fill."""
    nocmov = os.path.join(ROOT, "scripts", "nocmov.py")
    src, dst = tmp_path / "a.s", tmp_path / "b.s"
    src.write_text(ALIGN_ASM)
    with open(src) as i, open(dst, "w") as o:
        subprocess.run(["python3", nocmov], stdin=i, stdout=o, check=True)
    for asm, flags, long_nops in ((src, [], True), (dst, ["-n"], False)):
        obj = tmp_path / f"{asm.stem}.o"
        subprocess.run(["as", "--64", *flags, "-o", str(obj), str(asm)], check=True)
        bad = [i for _, i in forbidden_instructions(obj, kernel=False, least=4)]
        assert bool(bad) == long_nops and all(i.startswith("nop") for i in bad), bad
    text = subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(tmp_path / "b.o"), "/dev/stdout"],
                          capture_output=True, check=True).stdout
    assert text == b"\xc3" + b"\x90" * 15 + b"\xc3" + b"\x90" * 15 + b"\xc3" + b"\x90" * 31 + b"\xc3", text
    rodata = subprocess.run(["objcopy", "-O", "binary", "-j", ".rodata", str(tmp_path / "b.o"), "/dev/stdout"],
                            capture_output=True, check=True).stdout
    assert rodata == b"\x01" + b"\x00" * 15 + b"\x02"


FENCE_C = r"""
#include <stdio.h>
static long a, b;
__attribute__((noinline)) long fenced(long x)
{
    a = x;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    b = a + 1;
    return x > 3 ? b : -b; /* flags set before the fence may be used after it */
}
int main(void) { long s = 0; for (long i = 0; i < 8; i++) s += fenced(i); printf("%ld %ld %ld\n", s, a, b); return 0; }
"""


def test_a_fence_becomes_two_xchgs_that_keep_registers_flags_and_stack(tmp_path):
    """A KNC core has no MFENCE: nocmov.py makes each a pair of XCHGs with the top of the stack
    (locked, so a full barrier), which the program runs to the same results without MFENCE.
    libgomp's ordered.c has such fences (user/gomp.mk)."""
    nocmov = os.path.join(ROOT, "scripts", "nocmov.py")
    (tmp_path / "f.c").write_text(FENCE_C)
    # clang's fence is MFENCE (knc-cc's compiler; gcc 12 emits a locked OR itself)
    subprocess.run(["clang", "-O2", "-fno-integrated-as", "-S", "-o", str(tmp_path / "f.s"), str(tmp_path / "f.c")],
                   check=True)
    assert "mfence" in (tmp_path / "f.s").read_text()
    with open(tmp_path / "f.s") as i, open(tmp_path / "k.s", "w") as o:
        subprocess.run(["python3", nocmov], stdin=i, stdout=o, check=True)
    out = {}
    for name in ("f", "k"):
        subprocess.run(["gcc", "-o", str(tmp_path / name), str(tmp_path / f"{name}.s")], check=True)
        out[name] = subprocess.run([str(tmp_path / name)], capture_output=True, text=True, check=True).stdout
        dump = subprocess.run(["objdump", "-d", str(tmp_path / name)], capture_output=True, text=True).stdout
        assert ("mfence" in dump) == (name == "f")
    assert out["f"] == out["k"] == "16 7 8\n"  # -(1+2+3+4) + 5+6+7+8
