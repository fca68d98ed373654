#!/usr/bin/env python3
"""knc-audit: finds the instructions a Knights Corner core cannot execute in
ELF files (executables, objects, archives), as GNU objdump decodes them.

  knc-audit.py [--kernel] FILE...

Prints one line per instruction found, "FILE[member]: ADDRESS in
function+offset: instruction: what it is", and exits with status 1 if there is any, 2 if a
file cannot be read. docs/knc.md has the table of what is checked and why.

The sources: Intel Xeon Phi Coprocessor Instruction Set Architecture
Reference Manual (327364-001), Appendix B, lists what KNC removed from the
x86-64 ISA (CMOV, FCMOV, FCOMI/FUCOMI, PAUSE, MONITOR/MWAIT, CMPXCHG16B,
SYSENTER/SYSEXIT, IN/OUT in the sense that pmuos's card code must not
assume a PC's ports, and every MMX, SSE and AVX instruction and register);
what came after the P6 and is not in its table of supported instructions
is missing too (fences, PREFETCHh, CLFLUSH, POPCNT/LZCNT/TZCNT, MOVBE,
XSAVE, the multi-byte NOP 0F 1F, RDTSCP, BMI, CRC32, ...). KNC has the
x87: Ring-3 code may use it (not FCMOV/FCOMI); the kernel does not
(docs/design.md §3: general registers only).

Two profiles: user (the default: pmuos-cc's programs, newlib) and --kernel
(kernel.elf, the bzImage's own code, the card bootstrap stand-in): no x87 at
all, and IN/OUT allowed (the PC platform's serial port and PIT, QEMU only;
platform/ keeps them off a KNC card's path).
"""
import re
import subprocess
import sys

FORBIDDEN = [  # (mnemonic pattern, what it is)
    (r"cmov\w*", "CMOVcc (App. B)"),
    (r"fcmov\w*", "FCMOVcc (App. B)"),
    (r"f(u)?comip?", "FCOMI/FUCOMI (App. B)"),
    (r"pause", "PAUSE (App. B)"),
    (r"[lms]fence", "fence (SSE2)"),
    (r"nop[wlq]?", "multi-byte NOP 0F 1F (P6)"),
    (r"prefetch\w*", "PREFETCHh (SSE/3DNow!)"),
    (r"clflush\w*|clwb", "cache-line flush"),
    (r"popcnt\w*|lzcnt\w*|tzcnt\w*", "POPCNT/LZCNT/TZCNT"),
    (r"andn|bextr|blsi|blsr|blsmsk|bzhi|pdep|pext|sarx|shlx|shrx|rorx|adcx|adox", "BMI/ADX"),
    (r"movbe\w*", "MOVBE"),
    (r"cmpxchg16b", "CMPXCHG16B (App. B)"),
    (r"xsave\w*|xrstor\w*|xgetbv|xsetbv", "XSAVE"),
    (r"fxsave\w*|fxrstor\w*", "FXSAVE/FXRSTOR (task state is the kernel's, arch/fpu.c)"),
    (r"monitor\w*|mwait\w*", "MONITOR/MWAIT (App. B)"),
    (r"sysenter|sysexit\w*", "SYSENTER/SYSEXIT (App. B)"),
    (r"rdtscp", "RDTSCP"),
    (r"rdrand|rdseed", "RDRAND/RDSEED"),
    (r"crc32\w*", "CRC32 (SSE4.2)"),
    (r"[rw]d[fg]sbase", "FSGSBASE"),
    (r"endbr(32|64)", "ENDBR (CET, a 0F 1E hint NOP)"),
    (r"movnt\w*|[ls]dmxcsr|emms|femms", "SSE/MMX"),
    (r"v(?!err$|erw$)\w+", "VEX/EVEX (AVX)"),
]
USER_ONLY = [(r"(in|out)s?[bwl]?", "IN/OUT (App. B)")]
KERNEL_ONLY = [(r"f\w+|wait", "x87 (the kernel uses general registers only)")]
REGISTERS = [(r"%(x|y|z)mm\d+|%mm\d|%k[0-7]\b", "MMX/XMM/YMM/ZMM register")]
KERNEL_REGISTERS = [(r"%st\b", "x87 register")]
PREFIXES = {"rep", "repz", "repnz", "repe", "repne", "lock", "data16", "addr32", "cs", "ds", "es", "ss",
            "fs", "gs", "rex", "rex.W", "notrack", "bnd"}

# arch/fpu.c: the FXRSTOR that resets a task's x87/SSE state lives in this
# section alone and runs only where CPUID reports FXSR.
EXEMPT = (".fpu_text", "fxrstor64")

# Code that is not 64-bit, by the symbols that bound it (objdump decodes
# [first, end) with -M i386 or i8086). A layout applies when its first
# symbol exists; with `only`, nothing else in the file is code.
LAYOUTS = [
    # boot/entry.S: the 32-bit entries run from multiboot_entry up to
    # kernel_entry64 (.code32). Read as 64-bit code their bytes can look like
    # anything (a far jump's pointer decodes as x87 once addresses move).
    {"ranges": [("multiboot_entry", "kernel_entry64", "i386")], "only": False},
    # boot/linux/bzimage.S (build/linux/bzimage.o, the bzImage's code at its
    # file offsets): the real-mode setup, the 32-bit parts; the rest is the
    # setup header, GDTs, strings and kernel_image, the kernel's flat image
    # (audited as kernel.elf).
    {"ranges": [("header_end", "pm32", "i8086"), ("pm32", "gdt16", "i386"),
                ("startup_32", "kernel_image", "i386"), ("relocate", "gdt32", "i386")], "only": True},
]


def rules(kernel):
    mnem = FORBIDDEN + (KERNEL_ONLY if kernel else USER_ONLY)
    regs = REGISTERS + (KERNEL_REGISTERS if kernel else [])
    return ([(re.compile(f"^(?:{p})$"), why) for p, why in mnem],
            [(re.compile(p), why) for p, why in regs])


def symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines()) if len(f) == 3}


def objdump(path, *args):
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "att", *args, path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(p.stderr.strip() or f"objdump failed on {path}")
    return p.stdout


def disassembly(path):
    """objdump's text for `path`, each range of LAYOUTS decoded in its mode."""
    syms = symbols(path)
    for layout in LAYOUTS:
        first = layout["ranges"][0][0]
        if first not in syms:
            continue
        ranges = [(syms[a], syms[b], mode) for a, b, mode in layout["ranges"]]
        parts = [] if layout["only"] else [drop_ranges(objdump(path), ranges)]
        for lo, hi, mode in ranges:
            parts.append(objdump(path, "-M", mode, f"--start-address={lo:#x}", f"--stop-address={hi:#x}"))
        return "\n".join(parts)
    dump = objdump(path)
    return knc_own(path, dump) if "(bad)" in dump else dump


# KNC's own instructions that objdump does not know for x86-64 (it prints "(bad)" and decodes what
# follows out of step): VPREFETCHh, VEX 0F 18 /r with a memory operand (327364-001), by hint.
VPREFETCH = ["vprefetchnta", "vprefetch0", "vprefetch1", "vprefetch2", "vprefetchenta", "vprefetche0",
             "vprefetche1", "vprefetche2"]


def vprefetch(b):
    """(mnemonic, length) of the VPREFETCHh at the start of bytes b, or None."""
    if len(b) >= 4 and b[0] == 0xc5 and b[1] & 0x7f == 0x78 and b[2] == 0x18:
        i = 3
    elif len(b) >= 5 and b[0] == 0xc4 and b[1] & 0x1f == 1 and b[2] & 0x7f == 0x78 and b[3] == 0x18:
        i = 4
    else:
        return None
    mod, reg, rm = b[i] >> 6, b[i] >> 3 & 7, b[i] & 7
    i += 1
    if mod == 3:
        return None
    if rm == 4:
        i += 1
        if mod == 0 and b[i - 1] & 7 == 5:
            i += 4
    elif mod == 0 and rm == 5:
        i += 4
    return VPREFETCH[reg], i + (1 if mod == 1 else 4 if mod == 2 else 0)


def raw_bytes(path, addr, n):
    """The n bytes at address addr of path (an executable or object), by objdump -s."""
    dump = objdump_s(path, f"--start-address={addr:#x}", f"--stop-address={addr + n:#x}")
    out = bytearray()
    for m in re.finditer(r"^ ([0-9a-f]+) ((?:[0-9a-f]{2,8} ){1,4})", dump, re.M):
        out += bytes.fromhex(m[2].replace(" ", ""))
    return bytes(out)


def objdump_s(path, *args):
    return subprocess.run(["objdump", "-s", *args, path], capture_output=True, text=True).stdout


def knc_own(path, dump):
    """objdump's text with each VPREFETCHh it could not decode in its place, and the rest of its
    function decoded again from the instruction after it."""
    syms = sorted(set(symbols(path).values()))
    lines, out, i = dump.splitlines(), [], 0
    while i < len(lines):
        m = re.match(r"^\s*([0-9a-f]+):\s+\(bad\)", lines[i])
        found = m and vprefetch(raw_bytes(path, int(m[1], 16), 15))
        if not found:
            out.append(lines[i])
            i += 1
            continue
        addr = int(m[1], 16)
        out.append(f"{addr:x}:\t{found[0]}")
        end = next((s for s in syms if s > addr), addr + 4096)
        while i + 1 < len(lines) and re.match(r"^\s*([0-9a-f]+):", lines[i + 1]) and \
                int(re.match(r"^\s*([0-9a-f]+):", lines[i + 1])[1], 16) < end:
            i += 1
        rest = objdump(path, f"--start-address={addr + found[1]:#x}", f"--stop-address={end:#x}")
        out += [l for l in knc_own(path, rest).splitlines() if re.match(r"^\s*[0-9a-f]+:", l)]
        i += 1
    return "\n".join(out)


def drop_ranges(dump, ranges):
    def inside(line):
        m = re.match(r"^\s*([0-9a-f]+):", line)
        return m and any(lo <= int(m[1], 16) < hi for lo, hi, _ in ranges)
    return "\n".join(l for l in dump.splitlines() if not inside(l))


def audit(path, kernel=False):
    """[(where, address, function, instruction, what)] for `path`, and the
    number of instructions decoded."""
    mnem_rules, reg_rules = rules(kernel)
    bad, count, member, section, func, start = [], 0, "", None, "?", 0
    for line in disassembly(path).splitlines():
        if m := re.match(r"^(\S+):\s+file format", line):
            member = m[1] if m[1] != path else ""
            continue
        if m := re.match(r"^Disassembly of section (\S+):", line):
            section = m[1]
            continue
        if m := re.match(r"^([0-9a-f]+) <(.+)>:$", line):
            start, func = int(m[1], 16), m[2]
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        count += 1
        addr, mnem, ops = m.groups()
        ops = re.sub(r"\s*#.*$", "", ops)
        mnem = mnem.split(",")[0]
        while mnem in PREFIXES and ops:
            mnem, _, ops = ops.partition(" ")
            ops = ops.strip()
        if (section, mnem) == EXEMPT:
            continue
        if mnem == "nop" and not ops:  # the one-byte NOP (90) every x86 has
            continue
        if mnem in VPREFETCH:  # KNC's own (knc_own)
            continue
        why = next((w for r, w in mnem_rules if r.match(mnem)), None) or \
            next((w for r, w in reg_rules if r.search(ops)), None)
        if why:
            where = f"{path}[{member}]" if member else path
            off = int(addr, 16) - start
            bad.append((where, f"{int(addr, 16):#x}", f"{func}+{off:#x}" if off else func,
                        f"{mnem} {ops}".strip(), why))
    return bad, count


def main(argv):
    kernel = "--kernel" in argv
    files = [a for a in argv if a != "--kernel"]
    if not files:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    found = False
    for path in files:
        try:
            bad, _ = audit(path, kernel)
        except OSError as e:
            print(f"knc-audit: {path}: {e}", file=sys.stderr)
            return 2
        for where, addr, func, insn, why in bad:
            print(f"{where}: {addr} in {func}: {insn}: {why}, which a KNC core lacks")
        found |= bool(bad)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
