"""Floating point in card-correct programs (issue 22, must-show 2): pmuos-cc's
soft-float ABI (scripts/knc-cc; glibc's soft-fp helpers, user/softfp/) gives
the IEEE 754 results SSE gives, and user/programs/softfloat.c, built with
pmuos-cc, holds no instruction a KNC core lacks, runs on a CPU stripped to
KNC's scalar ISA, prints the IEEE-exact lines the Linux build prints and
everything the QEMU-only SSE build (same newlib) prints."""
import os
import re
import subprocess

from conftest import BUILD, ROOT, knc_audit

PMUOS_CC = os.path.join(BUILD, "bin", "pmuos-cc")
KNC_CC = os.path.join(ROOT, "scripts", "knc-cc")
SOFTFP = os.path.join(BUILD, "user", "lib", "libsoftfp.a")
SOURCE = os.path.join(ROOT, "user", "programs", "softfloat.c")

# QEMU 7.2's CPU with what a KNC core lacks taken away (Intel 327364-001
# App. B): no CMOV, MMX, SSE*, AVX*, FXSR, CLFLUSH, POPCNT, MOVBE, XSAVE,
# MONITOR, CX16, LZCNT (abm), BMI. TCG raises #UD for CMOV, MMX and SSE with these off.
STRICT_CPU = ("max,vendor=GenuineIntel," + ",".join(
    f"-{f}" for f in ("cmov", "mmx", "sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2",
                      "avx512f", "fma", "f16c", "fxsr", "clflush", "clflushopt", "popcnt", "movbe", "xsave",
                      "monitor", "cx16", "abm", "bmi1", "bmi2", "aes", "pclmulqdq", "sha-ni")))

# Each helper against the SSE instruction, the SSE operand order fixed by
# inline assembly (of two NaNs SSE returns the first source operand).
OPS_C = r"""
double add(double a, double b) { return a + b; }
double sub(double a, double b) { return a - b; }
double mul(double a, double b) { return a * b; }
double dvd(double a, double b) { return a / b; }
float fadd(float a, float b) { return a + b; }
float fmul(float a, float b) { return a * b; }
float fdiv(float a, float b) { return a / b; }
int lt(double a, double b) { return a < b; }
int le(double a, double b) { return a <= b; }
int eq(double a, double b) { return a == b; }
int un(double a, double b) { return __builtin_isunordered(a, b); }
long long d2ll(double a) { return (long long)a; }
unsigned long long d2ull(double a) { return (unsigned long long)a; }
int d2i(double a) { return (int)a; }
double ll2d(long long a) { return (double)a; }
double ull2d(unsigned long long a) { return (double)a; }
float d2f(double a) { return (float)a; }
double f2d(float a) { return a; }
#include <stdarg.h>
static double vsum(int n, ...)
{
	va_list ap;
	double s = 0;
	va_start(ap, n);
	while (n--) {
		double d = va_arg(ap, double);
		int i = va_arg(ap, int);
		s = s * 10 + d + i;
	}
	va_end(ap);
	return s;
}
/* Doubles and ints through `...`, past the six argument registers. */
double vcall(void) { return vsum(5, 1.0, 2, 3.5, 4, 5.0, 6, 7.25, 8, 9.0, 10); }
"""

HARNESS_C = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef uint64_t u64;
typedef uint32_t u32;
/* The soft-float ABI passes and returns a double's (a float's) bits in a general register. */
u64 add(u64, u64), sub(u64, u64), mul(u64, u64), dvd(u64, u64), ll2d(long long), ull2d(u64), f2d(u32);
u32 fadd(u32, u32), fmul(u32, u32), fdiv(u32, u32), d2f(u64);
int lt(u64, u64), le(u64, u64), eq(u64, u64), un(u64, u64), d2i(u64);
long long d2ll(u64);
u64 d2ull(u64), vcall(void);
#define SSE(insn, T, a, b) ({ T x_ = (a); __asm__(insn " %1, %0" : "+x"(x_) : "x"(b)); x_; })
static u64 B(double d) { u64 b; memcpy(&b, &d, 8); return b; }
static double D(u64 b) { double d; memcpy(&d, &b, 8); return d; }
static u32 BF(float f) { u32 b; memcpy(&b, &f, 4); return b; }
static float F(u32 b) { float f; memcpy(&f, &b, 4); return f; }
static u64 s = 88172645463325252ull;
static u64 rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static const u64 SPECIAL[] = {0, 1ull << 63, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
	0xfff8000000000001, 0x7ff0000000000001, 1, 0x000fffffffffffff, 0x0010000000000000, 0x3ff0000000000000,
	0x7fefffffffffffff, 0x43e0000000000000, 0xc3e0000000000000, 0x41e0000000000000, 0x3fe0000000000000};
static u64 pick(void)
{
	u64 r = rnd();
	switch (r & 7) {
	case 0: return SPECIAL[(r >> 3) % 16];
	case 1: return (r & 0x800fffffffffffffull) | ((0x3ffull + (r >> 52) % 128 - 64) << 52); /* near 1 */
	case 2: return (r & 0x800fffffffffffffull) | (((r >> 20) % 64) << 52);               /* tiny */
	case 3: return (r & 0x8000000000000000ull) | (0x3ffull + (r >> 8) % 64) << 52;        /* integers */
	default: return r;
	}
}
int main(void)
{
	long bad = 0, n = 2000000;
	for (long i = 0; i < n; i++) {
		u64 a = pick(), b = pick();
		u32 fa = (u32)(a >> 32), fb = (u32)(b >> 32);
		double x = D(a), y = D(b);
#define CHK(c) if (!(c) && bad++ < 10) printf("mismatch %s a=%016llx b=%016llx\n", #c, \
		(unsigned long long)a, (unsigned long long)b);
		CHK(add(a, b) == B(SSE("addsd", double, x, y)));
		CHK(sub(a, b) == B(SSE("subsd", double, x, y)));
		CHK(mul(a, b) == B(SSE("mulsd", double, x, y)));
		CHK(dvd(a, b) == B(SSE("divsd", double, x, y)));
		CHK(fadd(fa, fb) == BF(SSE("addss", float, F(fa), F(fb))));
		CHK(fmul(fa, fb) == BF(SSE("mulss", float, F(fa), F(fb))));
		CHK(fdiv(fa, fb) == BF(SSE("divss", float, F(fa), F(fb))));
		CHK(lt(a, b) == (x < y));
		CHK(le(a, b) == (x <= y));
		CHK(eq(a, b) == (x == y));
		CHK(un(a, b) == isunordered(x, y));
		CHK(d2f(a) == BF((float)x));
		CHK(f2d(fa) == B((double)F(fa)));
		CHK(ll2d((long long)a) == B((double)(long long)a));
		CHK(ull2d(a) == B((double)a));
		if (fabs(x) < 0x1p63)
			CHK(d2ll(a) == (long long)x);
		if (x >= 0 && x < 0x1p64)
			CHK(d2ull(a) == (u64)x);
		if (fabs(x) < 0x1p31)
			CHK(d2i(a) == (int)x);
	}
	printf("varargs: %.17g\n", D(vcall()));
	printf("%ld cases, %ld mismatches\n", n, bad);
	return 0;
}
"""


def test_helpers_give_what_sse_gives_bit_for_bit(tmp_path):
    """2,000,000 operand pairs (random bits, specials, subnormals, NaNs,
    integers) through each helper, called with the soft-float ABI, against
    the SSE instruction on this host, NaN bits included; and doubles through
    `...` (user/knc-include/stdarg.h)."""
    (tmp_path / "ops.c").write_text(OPS_C)
    (tmp_path / "harness.c").write_text(HARNESS_C)
    subprocess.run([KNC_CC, "-O2", "-c", str(tmp_path / "ops.c"), "-o", str(tmp_path / "ops.o")], check=True)
    undefined = subprocess.run(["nm", "-u", str(tmp_path / "ops.o")], capture_output=True, text=True).stdout
    assert "__adddf3" in undefined and "__ltdf2" in undefined, undefined  # the helpers, not SSE
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(tmp_path / "harness.c"), str(tmp_path / "ops.o"),
                    SOFTFP, "-lm"], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    # ((((1+2)*10 + 3.5+4)*10 + 5+6)*10 + 7.25+8)*10 + 9+10
    assert out.endswith("varargs: 38771.5\n2000000 cases, 0 mismatches\n"), out


def lines(out):
    """The program's own lines, without the card's task reports."""
    return [l for l in out.splitlines() if re.match(r"^(exact|libm|lib): ", l)]


def test_softfloat_program_on_the_strict_cpu(card_factory, tmp_path):
    card_elf = os.path.join(BUILD, "user", "softfloat.elf")
    bad, _ = knc_audit.audit(card_elf)
    assert bad == [], bad
    # The same source for Linux (glibc, SSE) and QEMU-only (newlib, SSE).
    linux = tmp_path / "softfloat-linux"
    subprocess.run(["gcc", "-std=gnu11", "-O2", "-o", str(linux), SOURCE, "-lm"], check=True)
    linux_out = lines(subprocess.run([str(linux)], capture_output=True, text=True, check=True).stdout)
    sse_elf = tmp_path / "sfsse.elf"
    subprocess.run([PMUOS_CC, "--qemu-sse", "-O2", "-o", str(sse_elf), SOURCE], check=True)
    assert any("xmm" in i for _, _, _, i, _ in knc_audit.audit(str(sse_elf))[0])

    strict = card_factory(cpus=2, qemu_args=("-cpu", STRICT_CPU))
    card_out = strict.cmd("run softfloat", timeout=120)
    assert "exit status 0" in card_out, card_out
    card_out = lines(card_out)
    sse = card_factory(cpus=2, boot="multiboot", env={"PROGRAMS": str(sse_elf)}, cpu="max")  # QEMU-only: SSE
    sse_out = sse.cmd("run sfsse", timeout=120)
    assert "exit status 0" in sse_out, sse_out
    sse_out = lines(sse_out)

    exact = [l for l in card_out if l.startswith("exact: ")]
    assert len(exact) > 300, card_out
    assert exact == [l for l in linux_out if l.startswith("exact: ")]
    assert card_out == sse_out
    # The SSE build really is not card code: the strict CPU ends it with #UD (the
    # plugin may first report a long NOP of gcc's code: expected here, not before).
    assert strict.knc_report() == [], strict.knc_report()
    strict.knc_expected = True
    out = strict.cmd("run vectest vec 16", timeout=60)
    assert re.search(r"#UD|invalid opcode", out), out


# Every built-in program but the QEMU-only ones (user/user.mk SSE_PROGRAMS), with small arguments.
CARD_PROGRAMS = ["hello", "triad 20000", "matmul 32", "chase 4096", "steady 200", "softfloat", "memtest ops 16",
                 "fault fpu-check", "smc 100", "fill 4", "calls 1000", "badstack all 1000",
                 "regions", "badcounts", "pipes chain 100", "threads 1", "omp 1000", "calib"]  # calib last: its lines are checked below


def test_built_in_programs_run_on_the_strict_cpu(card_factory):
    """Card-correct programs run where CMOV, MMX and SSE raise #UD, and
    calib's SPFLT regions still count exactly (must-show 5)."""
    programs = sorted(os.path.basename(p)[:-2] for p in os.listdir(os.path.join(ROOT, "user", "programs")))
    assert sorted(p.split()[0] for p in CARD_PROGRAMS) == sorted(set(programs) - {"vectest", "ssefault"})
    card = card_factory(cpus=2, qemu_args=("-cpu", STRICT_CPU))
    for line in ("pmu set 1 0 INSTRUCTIONS_EXECUTED:u", "pmu spflt 1 0", "pmu start 1"):
        card.cmd(line)
    for program in CARD_PROGRAMS:
        out = card.cmd(f"run {program} on 1", timeout=120)
        assert re.search(r"^task \d+ \(\w+, rank 0, CPU 1\): exit status 0$", out, re.M), (program, out)
    for k in (0, 1, 10, 1000, 1000000):
        assert f"calib: region of {k} user instructions counted {k}\n" in out, out
    # The QEMU-only programs (SSE code, pmuos-cc --qemu-sse) are refused by name where there is
    # no SSE, as on a card, rather than started to end with #UD.
    for program in ("vectest", "ssefault"):
        out = card.cmd(f"run {program} on 1")
        assert f"error: run: {program} is a QEMU-only program (SSE code, pmuos-cc --qemu-sse): this CPU has no " \
               "SSE and would end it with #UD" in out and "task" not in out, out


LIBM_SOURCE = r"""
#include <math.h>
#include <stdio.h>
int main(void)
{
	volatile double x = 2.0;
	printf("libm: sqrt %f exp %f log %.9f\n", sqrt(x), exp(x), log(x));
	return 0;
}
"""


def test_pmuos_cc_takes_lm_as_cc_does(card_factory, tmp_path):
    """`pmuos-cc -O2 -g x.c -lm -o x.elf`, as a C user types it (issue 39 must-show 3): -lm and -lc
    are newlib's (not the build machine's glibc, whose libm.a does not link with newlib); a
    compile with -c and a link of its object with -lm work too. The program prints what the
    host's own build prints."""
    src = tmp_path / "fp.c"
    src.write_text(LIBM_SOURCE)
    elf = tmp_path / "fpm.elf"
    p = subprocess.run([PMUOS_CC, "-O2", "-g", str(src), "-lm", "-lc", "-o", str(elf)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    obj = tmp_path / "fp.o"
    subprocess.run([PMUOS_CC, "-O2", "-c", str(src), "-o", str(obj)], check=True)
    p = subprocess.run([PMUOS_CC, str(obj), "-lm", "-o", str(tmp_path / "fpo.elf")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    host = tmp_path / "fp-host"
    subprocess.run(["gcc", "-O2", "-o", str(host), str(src), "-lm"], check=True)
    want = lines(subprocess.run([str(host)], capture_output=True, text=True, check=True).stdout)
    card = card_factory(cpus=2, boot="multiboot", env={"PROGRAMS": str(elf)})
    out = card.cmd("run fpm", timeout=60)
    assert "exit status 0" in out and lines(out) == want, out
