"""The kernel text contains only instructions a KNC core executes (DESIGN §3):
no SSE/AVX/x87, no PAUSE, no MFENCE/LFENCE/SFENCE, no RDTSCP."""
import os
import re
import subprocess

from conftest import BUILD

FORBIDDEN_MNEMONICS = re.compile(
    r"^(f[a-z0-9]+|wait|pause|mfence|lfence|sfence|rdtscp|movnti|emms|"
    r"ldmxcsr|stmxcsr|fxsave\w*|fxrstor\w*|xsave\w*|xrstor\w*)$")
FORBIDDEN_REGISTERS = re.compile(r"%(x|y|z)mm\d+|%mm\d|%st(\(\d\))?\b")
# kernel/fpu.c: the FXRSTOR that resets a task's x87/SSE state lives in this
# section alone and runs only where CPUID reports FXSR.
EXEMPT_SECTION = ".fpu_text"
EXEMPT_MNEMONIC = "fxrstor64"


def forbidden_instructions(elf):
    """Returns (address, instruction) for every forbidden instruction in the
    executable sections of `elf`."""
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", elf],
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
        if mnem in ("rep", "repz", "repnz", "lock", "data16", "addr32") and ops:
            mnem, _, ops = ops.partition(" ")
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
                     "movaps", "vaddps", "movnti", "fxrstor64", "fxsave64"]
