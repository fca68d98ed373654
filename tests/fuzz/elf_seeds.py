#!/usr/bin/env python3
"""Seed inputs of fuzz_elf (tests/fuzz/fuzz_elf.c), written at build time:
small pmuos programs laid out as pmuos-cc's link script lays them out (text
R+X at USER_TEXT, rodata R, data+bss R+W, PT_GNU_STACK), and the shapes the
loader must handle (segments sharing a page, bss across page-table
boundaries, unaligned segments, notes, 16 segments, a segment ending at the
stack, the card's pages or the task's limit running out). Each input is the
fuzz target's 6-byte header (free pages, the limit in pages, the heap growth
in KiB) and the image.

    elf_seeds.py OUTDIR"""
import os
import re
import struct
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The user region, from the header the kernel and pmuos-cc use.
SYSCALL_H = open(os.path.join(ROOT, "include", "pmuos", "syscall.h")).read()
C = {m[1]: eval(m[2].replace("ULL", "")) for m in re.finditer(r"^#define (USER_\w+)\s+([^/\n]+)", SYSCALL_H, re.M)}
TEXT = C["USER_TEXT"]
STACK_BOTTOM = C["USER_STACK_TOP"] - C["USER_STACK_SIZE"]

PT_LOAD, PT_NOTE, PT_PHDR, PT_GNU_STACK = 1, 4, 6, 0x6474E551
R, W, X = 4, 2, 1
BUDGET = 1000  # pages (of at most 1023): room for every seed's segments, the 1 MiB stack and their tables
LIMIT = 1000   # pages
HEAP = 64      # KiB


def image(entry, phdrs):
    """ELF64 x86-64 ET_EXEC header, program headers at 64, then each
    segment's file bytes at its offset (a byte of its own, headers kept)."""
    ph = b"".join(struct.pack("<IIQQQQQQ", t, f, off, va, va, fsz, msz, 0x1000) for t, f, off, va, fsz, msz in phdrs)
    ehdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 2, 62, 1, entry, 64, 0, 0, 64, 56, len(phdrs), 64, 0, 0)
    img = bytearray(ehdr + ph)
    for i, (t, f, off, va, fsz, msz) in enumerate(phdrs):
        if t == PT_LOAD:
            start = max(off, len(ehdr + ph))  # a segment may hold the headers, as ld's first one does
            img[len(img):] = bytes(max(0, off + fsz - len(img)))
            img[start:off + fsz] = bytes([0x90 + i]) * max(0, off + fsz - start)
    return bytes(img)


def seeds():
    # pmuos-cc's layout: text, rodata and data+bss on pages of their own.
    yield "program", (BUDGET, LIMIT, HEAP), image(TEXT + 0x10, [
        (PT_LOAD, R | X, 0x200, TEXT, 0x180, 0x180),
        (PT_LOAD, R, 0x380, TEXT + 0x1000, 0x40, 0x40),
        (PT_LOAD, R | W, 0x3c0, TEXT + 0x2000, 0x30, 0x5000),
        (PT_GNU_STACK, R | W, 0, 0, 0, 0)])
    # A smaller one with too few pages, then too low a limit, for the stack:
    # 1 + 8 pages, the PML4, PDPT, PD and page table, the stack's 256 pages and its PD and table.
    small = image(TEXT + 0x10, [
        (PT_LOAD, R | X, 0x200, TEXT, 0x180, 0x180),
        (PT_LOAD, R | W, 0x380, TEXT + 0x1000, 0x30, 0x8000)])
    yield "small-out-of-pages", (270, LIMIT, HEAP), small
    yield "small-over-limit", (BUDGET, 270, HEAP), small
    # Its heap running into the limit, then out of pages.
    yield "small-heap-over-limit", (BUDGET, 300, 200), small
    yield "small-heap-out-of-pages", (300, LIMIT, 200), small
    # Text and data on one page (a link without page alignment): their rights add up.
    yield "shared-page", (BUDGET, LIMIT, HEAP), image(TEXT, [
        (PT_LOAD, R | X, 0x100, TEXT, 0x80, 0x80),
        (PT_LOAD, R | W, 0x180, TEXT + 0x80, 0x40, 0x3000)])
    # Unaligned addresses and offsets; bss across a page table's 2 MiB boundary.
    yield "bss-across-tables", (BUDGET, LIMIT, HEAP), image(TEXT + 0x1ff123, [
        (PT_LOAD, R | X, 0x123, TEXT + 0x1ff123, 0x99, 0x99),
        (PT_LOAD, R | W, 0x1c0, TEXT + 0x1fffc0, 0x50, 0x4000)])
    # Notes and a PT_PHDR among the segments; the entry in the second PT_LOAD.
    yield "notes", (BUDGET, LIMIT, HEAP), image(TEXT + 0x1004, [
        (PT_PHDR, R, 64, TEXT + 64, 4 * 56, 4 * 56),
        (PT_LOAD, R, 0, TEXT, 0x200, 0x200),
        (PT_NOTE, R, 0x200, TEXT + 0x200, 0x20, 0x20),
        (PT_LOAD, R | X, 0x220, TEXT + 0x1000, 0x60, 0x60)])
    # The most segments a program may have.
    yield "sixteen", (BUDGET, LIMIT, HEAP), image(TEXT, [
        (PT_LOAD, (R | X) if i == 0 else (R | W), 0x400 + 0x10 * i, TEXT + 0x3000 * i, 0x10, 0x1800) for i in range(16)])
    # A data segment ending at the bottom of the stack area, far from the text.
    yield "top", (BUDGET, LIMIT, HEAP), image(TEXT, [
        (PT_LOAD, R | X, 0x100, TEXT, 0x20, 0x20),
        (PT_LOAD, R | W, 0x120, STACK_BOTTOM - 0x3000, 0x20, 0x3000)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, header, img in seeds():
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<3H", *header) + img)


if __name__ == "__main__":
    main()
