#!/usr/bin/env python3
"""Rewrites every CMOVcc in GCC's or clang's AT&T assembly (stdin -> stdout),
and pads code alignment with one-byte NOPs: a KNC core
has no CMOV (CPUID.1:EDX bit 15 clear; Intel Xeon Phi Coprocessor ISA
Reference Manual 327364, Appendix B, as gathered with hardware confirmation
by the public Intel-Phi-3120A project, docs/research/isa-deletions.md), and
GCC has no switch that stops it emitting CMOV in 64-bit code (docs/design.md §3).
Each becomes a branch and a MOV, which leaves the flags alone as CMOV does:

  cmovCC SRC, %r64/%r16  ->  jNCC 1f; mov SRC, DST; 1:
  cmovCC SRC, %r32       ->  jCC 1f; movl DST, DST; jmp 2f; 1: movl SRC, DST; 2:

A 32-bit CMOV writes its destination whatever the condition, clearing bits
63:32 (SDM Vol. 2A, CMOVcc), so its false path moves the register onto
itself. A memory source is read only when the condition holds (CMOV always
reads it): never less safe.

GNU as pads code alignment with long NOPs (0F 1F, which came with the P6
and which KNC lacks too): always without a fill byte (read.c do_align), and
with the fill 0x90 too unless run with -n (tc-i386.h md_do_align); with -n
and the fill 0x90 it pads with one-byte NOPs. So every code alignment gets
that fill (scripts/knc-cc runs `as -n`):

  .p2align 4[,,MAX] / .balign 16[,,MAX]  ->  .p2align 4, 0x90[, MAX] ...

A KNC core has no MFENCE either (SSE2). A sequentially consistent fence
(__atomic_thread_fence, __sync_synchronize) becomes two XCHGs of a register
with the top of the stack: an XCHG with memory is locked, and a locked
instruction orders every load and store before it against every one after
it (SDM Vol. 3A §8.2.2, §8.2.3.8-9); the second puts both back. Unlike the
usual `lock or $0, (%rsp)` it leaves the flags alone, as MFENCE does, and
unlike a PUSHF it writes nothing below RSP (a leaf's red zone):

  mfence  ->  xchgq %rax, (%rsp); xchgq %rax, (%rsp)
"""
import re
import sys

INVERSE = {
    "o": "no", "no": "o", "b": "nb", "nb": "b", "c": "nc", "nc": "c", "nae": "ae", "ae": "nae",
    "e": "ne", "ne": "e", "z": "nz", "nz": "z", "be": "nbe", "nbe": "be", "na": "a", "a": "na",
    "s": "ns", "ns": "s", "p": "np", "np": "p", "pe": "po", "po": "pe",
    "l": "nl", "nl": "l", "nge": "ge", "ge": "nge", "le": "nle", "nle": "le", "ng": "g", "g": "ng",
}
CC = "|".join(sorted(INVERSE, key=len, reverse=True))
CMOV = re.compile(rf"^(\s*)cmov({CC})([wlq]?)\s+(.*\S)\s*$")
REG32 = re.compile(r"^%(e[a-z]{2}|r\d+d)$")
REG16 = re.compile(r"^%([a-d]x|[sd]i|[sb]p|r\d+w)$")
ALIGN = re.compile(r"^(\s*)\.(p2align|balign|align)\s+([^,\s]+)\s*(?:,\s*(?:,\s*(\S+))?)?\s*$")
MFENCE = re.compile(r"^(\s*)mfence\s*$")
SECTION = re.compile(r"^\s*(\.text|\.data|\.bss|\.section\s+([^,\s]+)\s*(?:,\s*\"([^\"]*)\")?)")


def is_code(m):
    """Whether the section a .text/.data/.bss/.section directive enters holds code."""
    if m[1] in (".text", ".data", ".bss"):
        return m[1] == ".text"
    return m[2].startswith(".text") or "x" in (m[3] or "")


def cmov(m, n):
    indent, cc, _, operands = m.groups()
    src, dst = (s.strip() for s in operands.rsplit(",", 1))
    label = f".Lknc_cmov{n}"
    if REG32.match(dst):
        return [f"{indent}j{cc}\t{label}t\n", f"{indent}movl\t{dst}, {dst}\n", f"{indent}jmp\t{label}e\n",
                f"{label}t:\n", f"{indent}movl\t{src}, {dst}\n", f"{label}e:\n"]
    size = "w" if REG16.match(dst) else "q"
    return [f"{indent}j{INVERSE[cc]}\t{label}\n", f"{indent}mov{size}\t{src}, {dst}\n", f"{label}:\n"]


def rewrite(lines):
    out, n, code = [], 0, True
    for line in lines:
        s = SECTION.match(line)
        if s:
            code = is_code(s)
        m = CMOV.match(line.rstrip("\n"))
        a = ALIGN.match(line.rstrip("\n")) if code else None
        f = MFENCE.match(line.rstrip("\n"))
        if m:
            n += 1
            out += cmov(m, n)
        elif f:
            out += [f"{f[1]}xchgq\t%rax, (%rsp)\n"] * 2
        elif a:
            indent, directive, align, limit = a.groups()
            out.append(f"{indent}.{directive}\t{align}, 0x90{', ' + limit if limit else ''}\n")
        else:
            out.append(line)
    return out


if __name__ == "__main__":
    sys.stdout.writelines(rewrite(sys.stdin.readlines()))
