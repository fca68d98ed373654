#!/usr/bin/env python3
"""Rewrites every CMOVcc in GCC's AT&T assembly (stdin -> stdout): a KNC core
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
    out, n = [], 0
    for line in lines:
        m = CMOV.match(line.rstrip("\n"))
        if m:
            n += 1
            out += cmov(m, n)
        else:
            out.append(line)
    return out


if __name__ == "__main__":
    sys.stdout.writelines(rewrite(sys.stdin.readlines()))
