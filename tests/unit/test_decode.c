/*
 * plugin/decode.c on the host: branch kinds and targets, SSE/AVX classes and
 * element counts, translation changes, from instruction bytes (encodings
 * from the Intel SDM vol. 2; each line says which instruction it is).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/decode.h"

#define PC 0x8000401000ULL

struct want {
	const char *what;
	uint8_t b[15];
	size_t len;
	enum br_kind branch;
	uint64_t target;
	uint8_t vec_bytes, elements;
	bool flush;
};

static void check(const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct x86_insn d;
		x86_decode(w[i].b, w[i].len, PC, &d);
		if (d.branch != w[i].branch || d.vec_bytes != w[i].vec_bytes || d.flush_tlb != w[i].flush ||
		    (w[i].vec_bytes && d.elements != w[i].elements) || (w[i].target && d.target != w[i].target))
			fail_msg("%s: branch %d target %#llx vector %u bytes %u elements flush %d", w[i].what, d.branch,
				 (unsigned long long)d.target, d.vec_bytes, d.elements, d.flush_tlb);
	}
}

static void test_branches(void **state)
{
	(void)state;
	static const struct want w[] = {
		{ .what = "jz +5", .b = { 0x74, 0x05 }, .len = 2, .branch = BR_COND, .target = PC + 7 },
		{ .what = "jnz -2 (to itself)", .b = { 0x75, 0xfe }, .len = 2, .branch = BR_COND, .target = PC },
		{ .what = "jg rel32", .b = { 0x0f, 0x8f, 0x10, 0x00, 0x00, 0x00 }, .len = 6, .branch = BR_COND, .target = PC + 6 + 0x10 },
		{ .what = "jb rel32 backwards", .b = { 0x0f, 0x82, 0x00, 0xff, 0xff, 0xff }, .len = 6, .branch = BR_COND, .target = PC + 6 - 0x100 },
		{ .what = "jrcxz", .b = { 0xe3, 0x10 }, .len = 2, .branch = BR_COND, .target = PC + 0x12 },
		{ .what = "loop", .b = { 0xe2, 0xf0 }, .len = 2, .branch = BR_COND, .target = PC + 2 - 0x10 },
		{ .what = "jmp rel8", .b = { 0xeb, 0x10 }, .len = 2, .branch = BR_JMP, .target = PC + 0x12 },
		{ .what = "jmp rel32", .b = { 0xe9, 0x00, 0x10, 0x00, 0x00 }, .len = 5, .branch = BR_JMP, .target = PC + 5 + 0x1000 },
		{ .what = "call rel32 backwards", .b = { 0xe8, 0xfb, 0xff, 0xff, 0xff }, .len = 5, .branch = BR_CALL, .target = PC },
		{ .what = "bnd jmp (f2 prefix)", .b = { 0xf2, 0xe9, 0x01, 0x00, 0x00, 0x00 }, .len = 6, .branch = BR_JMP, .target = PC + 7 },
		{ .what = "call *%rax", .b = { 0xff, 0xd0 }, .len = 2, .branch = BR_CALL_IND },
		{ .what = "call *%r11", .b = { 0x41, 0xff, 0xd3 }, .len = 3, .branch = BR_CALL_IND },
		{ .what = "call *0x10(%rip)", .b = { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00 }, .len = 6, .branch = BR_CALL_IND },
		{ .what = "jmp *%rax", .b = { 0xff, 0xe0 }, .len = 2, .branch = BR_JMP_IND },
		{ .what = "jmp *(%rax,%rcx,8)", .b = { 0xff, 0x24, 0xc8 }, .len = 3, .branch = BR_JMP_IND },
		{ .what = "ret", .b = { 0xc3 }, .len = 1, .branch = BR_RET },
		{ .what = "ret $8", .b = { 0xc2, 0x08, 0x00 }, .len = 3, .branch = BR_RET },
		{ .what = "rep ret", .b = { 0xf3, 0xc3 }, .len = 2, .branch = BR_RET },
		{ .what = "int3", .b = { 0xcc }, .len = 1, .branch = BR_OTHER },
		{ .what = "int $0x80", .b = { 0xcd, 0x80 }, .len = 2, .branch = BR_OTHER },
		{ .what = "syscall", .b = { 0x0f, 0x05 }, .len = 2, .branch = BR_OTHER },
		{ .what = "sysretq", .b = { 0x48, 0x0f, 0x07 }, .len = 3, .branch = BR_OTHER },
		{ .what = "iretq", .b = { 0x48, 0xcf }, .len = 2, .branch = BR_OTHER },
		{ .what = "lret", .b = { 0xcb }, .len = 1, .branch = BR_OTHER },
		{ .what = "ljmp *(%rax)", .b = { 0xff, 0x28 }, .len = 2, .branch = BR_OTHER },
		{ .what = "inc %eax (ff /0)", .b = { 0xff, 0xc0 }, .len = 2 },
		{ .what = "push (%rax) (ff /6)", .b = { 0xff, 0x30 }, .len = 2 },
		{ .what = "mov (%rdi),%rax", .b = { 0x48, 0x8b, 0x07 }, .len = 3 },
		{ .what = "nopw", .b = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, .len = 6 },
		{ .what = "jmp rel32, truncated", .b = { 0xe9, 0x00, 0x10 }, .len = 3 },
		{ .what = "prefixes only", .b = { 0x66, 0x66 }, .len = 2 },
	};
	check(w, sizeof(w) / sizeof(w[0]));
}

static void test_sse(void **state)
{
	(void)state;
	static const struct want w[] = {
		{ .what = "addps", .b = { 0x0f, 0x58, 0xc1 }, .len = 3, .vec_bytes = 16, .elements = 4 },
		{ .what = "addpd", .b = { 0x66, 0x0f, 0x58, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 2 },
		{ .what = "addss", .b = { 0xf3, 0x0f, 0x58, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "mulsd", .b = { 0xf2, 0x0f, 0x59, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "mulsd with REX", .b = { 0xf2, 0x41, 0x0f, 0x59, 0xc1 }, .len = 5, .vec_bytes = 16, .elements = 1 },
		{ .what = "movaps (%rdi),%xmm0", .b = { 0x0f, 0x28, 0x07 }, .len = 3, .vec_bytes = 16, .elements = 4 },
		{ .what = "movapd", .b = { 0x66, 0x0f, 0x28, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 2 },
		{ .what = "movups", .b = { 0x0f, 0x10, 0x07 }, .len = 3, .vec_bytes = 16, .elements = 4 },
		{ .what = "movsd (%rdi),%xmm0", .b = { 0xf2, 0x0f, 0x10, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "xorps", .b = { 0x0f, 0x57, 0xc0 }, .len = 3, .vec_bytes = 16, .elements = 4 },
		{ .what = "ucomiss", .b = { 0x0f, 0x2e, 0xc1 }, .len = 3, .vec_bytes = 16, .elements = 1 },
		{ .what = "comisd", .b = { 0x66, 0x0f, 0x2f, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "cvtsi2sd", .b = { 0xf2, 0x48, 0x0f, 0x2a, 0xc0 }, .len = 5, .vec_bytes = 16, .elements = 1 },
		{ .what = "movlps", .b = { 0x0f, 0x12, 0x07 }, .len = 3, .vec_bytes = 16, .elements = 2 },
		{ .what = "movhpd", .b = { 0x66, 0x0f, 0x16, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "movddup", .b = { 0xf2, 0x0f, 0x12, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 2 },
		{ .what = "shufps", .b = { 0x0f, 0xc6, 0xc1, 0x00 }, .len = 4, .vec_bytes = 16, .elements = 4 },
		{ .what = "paddb", .b = { 0x66, 0x0f, 0xfc, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 16 },
		{ .what = "paddw", .b = { 0x66, 0x0f, 0xfd, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 8 },
		{ .what = "paddd", .b = { 0x66, 0x0f, 0xfe, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 4 },
		{ .what = "paddq", .b = { 0x66, 0x0f, 0xd4, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 2 },
		{ .what = "pmullw", .b = { 0x66, 0x0f, 0xd5, 0xc1 }, .len = 4, .vec_bytes = 16, .elements = 8 },
		{ .what = "pxor (no element size: 4 bytes)", .b = { 0x66, 0x0f, 0xef, 0xc0 }, .len = 4, .vec_bytes = 16, .elements = 4 },
		{ .what = "movdqa", .b = { 0x66, 0x0f, 0x6f, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 4 },
		{ .what = "movdqu", .b = { 0xf3, 0x0f, 0x6f, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 4 },
		{ .what = "pshufd", .b = { 0x66, 0x0f, 0x70, 0xc1, 0x1b }, .len = 5, .vec_bytes = 16, .elements = 4 },
		{ .what = "pshuflw", .b = { 0xf2, 0x0f, 0x70, 0xc1, 0x1b }, .len = 5, .vec_bytes = 16, .elements = 8 },
		{ .what = "movd %eax,%xmm0", .b = { 0x66, 0x0f, 0x6e, 0xc0 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "movq %rax,%xmm0", .b = { 0x66, 0x48, 0x0f, 0x6e, 0xc0 }, .len = 5, .vec_bytes = 16, .elements = 1 },
		{ .what = "movq (%rdi),%xmm0", .b = { 0xf3, 0x0f, 0x7e, 0x07 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "pshufb", .b = { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, .len = 5, .vec_bytes = 16, .elements = 16 },
		{ .what = "pmulld", .b = { 0x66, 0x0f, 0x38, 0x40, 0xc1 }, .len = 5, .vec_bytes = 16, .elements = 4 },
		{ .what = "palignr", .b = { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x04 }, .len = 6, .vec_bytes = 16, .elements = 16 },
		{ .what = "roundsd", .b = { 0x66, 0x0f, 0x3a, 0x0b, 0xc1, 0x00 }, .len = 6, .vec_bytes = 16, .elements = 1 },
		/* not SSE: MMX, state, general-register instructions in the 0F 38 map */
		{ .what = "paddd %mm1,%mm0", .b = { 0x0f, 0xfe, 0xc1 }, .len = 3 },
		{ .what = "movq %mm0 (0f 6f)", .b = { 0x0f, 0x6f, 0xc1 }, .len = 3 },
		{ .what = "pshufb %mm1,%mm0", .b = { 0x0f, 0x38, 0x00, 0xc1 }, .len = 4 },
		{ .what = "emms", .b = { 0x0f, 0x77 }, .len = 2 },
		{ .what = "fxsave (%rax)", .b = { 0x0f, 0xae, 0x00 }, .len = 3 },
		{ .what = "ldmxcsr (%rax)", .b = { 0x0f, 0xae, 0x10 }, .len = 3 },
		{ .what = "movbe (%rax),%eax", .b = { 0x0f, 0x38, 0xf0, 0x00 }, .len = 4 },
		{ .what = "crc32b", .b = { 0xf2, 0x0f, 0x38, 0xf0, 0xc1 }, .len = 5 },
		{ .what = "prefetcht0", .b = { 0x0f, 0x18, 0x08 }, .len = 3 },
		{ .what = "movnti", .b = { 0x0f, 0xc3, 0x07 }, .len = 3 },
		{ .what = "popcnt", .b = { 0xf3, 0x0f, 0xb8, 0xc1 }, .len = 4 },
	};
	check(w, sizeof(w) / sizeof(w[0]));
}

static void test_avx(void **state)
{
	(void)state;
	static const struct want w[] = {
		{ .what = "vaddps %ymm2,%ymm1,%ymm0", .b = { 0xc5, 0xf4, 0x58, 0xc2 }, .len = 4, .vec_bytes = 32, .elements = 8 },
		{ .what = "vaddpd %ymm2,%ymm1,%ymm0", .b = { 0xc5, 0xf5, 0x58, 0xc2 }, .len = 4, .vec_bytes = 32, .elements = 4 },
		{ .what = "vaddpd %xmm (L0)", .b = { 0xc5, 0xf1, 0x58, 0xc2 }, .len = 4, .vec_bytes = 16, .elements = 2 },
		{ .what = "vaddss", .b = { 0xc5, 0xf2, 0x58, 0xc2 }, .len = 4, .vec_bytes = 16, .elements = 1 },
		{ .what = "vmovdqu (%rdi),%ymm0", .b = { 0xc5, 0xfe, 0x6f, 0x07 }, .len = 4, .vec_bytes = 32, .elements = 8 },
		{ .what = "vpaddq %ymm", .b = { 0xc5, 0xf5, 0xd4, 0xc2 }, .len = 4, .vec_bytes = 32, .elements = 4 },
		{ .what = "vbroadcastss (%rdi),%ymm0", .b = { 0xc4, 0xe2, 0x7d, 0x18, 0x07 }, .len = 5, .vec_bytes = 32, .elements = 8 },
		{ .what = "vfmadd231pd %ymm", .b = { 0xc4, 0xe2, 0xf5, 0xb8, 0xc2 }, .len = 5, .vec_bytes = 32, .elements = 4 },
		{ .what = "vfmadd231ps %ymm", .b = { 0xc4, 0xe2, 0x75, 0xb8, 0xc2 }, .len = 5, .vec_bytes = 32, .elements = 8 },
		{ .what = "vfmadd231sd", .b = { 0xc4, 0xe2, 0xf1, 0xb9, 0xc2 }, .len = 5, .vec_bytes = 16, .elements = 1 },
		{ .what = "vextractf128", .b = { 0xc4, 0xe3, 0x7d, 0x19, 0xc1, 0x01 }, .len = 6, .vec_bytes = 32, .elements = 4 },
		{ .what = "vzeroupper", .b = { 0xc5, 0xf8, 0x77 }, .len = 3 },
		{ .what = "andn (BMI1)", .b = { 0xc4, 0xe2, 0x78, 0xf2, 0xc1 }, .len = 5 },
		{ .what = "rorx (BMI2)", .b = { 0xc4, 0xe3, 0x7b, 0xf0, 0xc1, 0x03 }, .len = 6 },
		{ .what = "spflt eax (KNC)", .b = { 0xc5, 0xfb, 0xae, 0xf0 }, .len = 4 },
		{ .what = "spflt r8 (KNC)", .b = { 0xc4, 0xc1, 0xfb, 0xae, 0xf0 }, .len = 5 },
		{ .what = "VEX truncated", .b = { 0xc4, 0xe2 }, .len = 2 },
	};
	check(w, sizeof(w) / sizeof(w[0]));
}

static void test_translation_changes(void **state)
{
	(void)state;
	static const struct want w[] = {
		{ .what = "mov %rax,%cr3", .b = { 0x0f, 0x22, 0xd8 }, .len = 3, .flush = true },
		{ .what = "mov %rax,%cr0", .b = { 0x0f, 0x22, 0xc0 }, .len = 3, .flush = true },
		{ .what = "mov %rax,%cr4", .b = { 0x0f, 0x22, 0xe0 }, .len = 3, .flush = true },
		{ .what = "invlpg (%rax)", .b = { 0x0f, 0x01, 0x38 }, .len = 3, .flush = true },
		{ .what = "invpcid (%rdx),%rcx", .b = { 0x66, 0x0f, 0x38, 0x82, 0x0a }, .len = 5, .flush = true },
		{ .what = "mov %rax,%cr2", .b = { 0x0f, 0x22, 0xd0 }, .len = 3 },
		{ .what = "mov %cr3,%rax", .b = { 0x0f, 0x20, 0xd8 }, .len = 3 },
		{ .what = "swapgs (0f 01 f8)", .b = { 0x0f, 0x01, 0xf8 }, .len = 3 },
		{ .what = "lidt (%rax)", .b = { 0x0f, 0x01, 0x18 }, .len = 3 },
	};
	check(w, sizeof(w) / sizeof(w[0]));
}

/*
 * KNC-missing instructions QEMU's strict CPU runs anyway (decode.c
 * knc_missing): their encodings from the SDM vol. 2 (NOP's Table 4-12
 * "Recommended Multi-Byte Sequence of NOP Instruction"; PAUSE; PREFETCHh
 * 0F 18 /1 /2 /3 /0; PREFETCHW 0F 0D /1; ENDBR64; EMMS, MOVD, MOVQ, PADDB,
 * PSHUFW in their MMX forms; IN, OUT, INS, OUTS), and neighbours that are
 * not flagged: KNC instructions, and what QEMU traps itself (CMOV, SSE2's
 * PADDB on XMM, LFENCE, VMREAD) or KNC's own (SPFLT).
 */
struct knc_want {
	const char *what;
	uint8_t b[15];
	size_t len;
	const char *mnemonic; /* NULL: not flagged */
	bool port_io;
};

static void test_knc_missing(void **state)
{
	(void)state;
	static const struct knc_want w[] = {
		{ "nop (0F 1F 00), 3 bytes", { 0x0f, 0x1f, 0x00 }, 3, "nop r/m (0F 1F)", false },
		{ "nop, 4 bytes", { 0x0f, 0x1f, 0x40, 0x00 }, 4, "nop r/m (0F 1F)", false },
		{ "nop, 5 bytes", { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, "nop r/m (0F 1F)", false },
		{ "nop, 6 bytes", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, "nop r/m (0F 1F)", false },
		{ "nop, 7 bytes", { 0x0f, 0x1f, 0x80, 0, 0, 0, 0 }, 7, "nop r/m (0F 1F)", false },
		{ "nop, 8 bytes", { 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 8, "nop r/m (0F 1F)", false },
		{ "nop, 9 bytes", { 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 9, "nop r/m (0F 1F)", false },
		{ "nopw %cs:(%rax,%rax) (11 bytes)", { 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 11,
		  "nop r/m (0F 1F)", false },
		{ "hint nop 0F 19", { 0x0f, 0x19, 0xc0 }, 3, "hint nop (0F 18-1E)", false },
		{ "hint nop 0F 18 /4", { 0x0f, 0x18, 0x20 }, 3, "hint nop (0F 18-1E)", false },
		{ "0F 18 /1 with a register: no prefetch, a hint nop", { 0x0f, 0x18, 0xc8 }, 3, "hint nop (0F 18-1E)", false },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, "endbr64", false },
		{ "endbr32", { 0xf3, 0x0f, 0x1e, 0xfb }, 4, "endbr32", false },
		{ "pause", { 0xf3, 0x90 }, 2, "pause", false },
		{ "prefetchnta (%rax)", { 0x0f, 0x18, 0x00 }, 3, "prefetchnta", false },
		{ "prefetcht0 (%rax)", { 0x0f, 0x18, 0x08 }, 3, "prefetcht0", false },
		{ "prefetcht1 0x40(%rdi)", { 0x0f, 0x18, 0x57, 0x40 }, 4, "prefetcht1", false },
		{ "prefetcht2 (%rax)", { 0x0f, 0x18, 0x18 }, 3, "prefetcht2", false },
		{ "prefetchw (%rax)", { 0x0f, 0x0d, 0x08 }, 3, "prefetchw", false },
		{ "emms", { 0x0f, 0x77 }, 2, "emms", false },
		{ "movd %eax, %mm0", { 0x0f, 0x6e, 0xc0 }, 3, "MMX", false },
		{ "movq %mm1, %mm0", { 0x0f, 0x6f, 0xc1 }, 3, "MMX", false },
		{ "movq %mm0, (%rax)", { 0x0f, 0x7f, 0x00 }, 3, "MMX", false },
		{ "paddb %mm1, %mm0", { 0x0f, 0xfc, 0xc1 }, 3, "MMX", false },
		{ "pshufw $0, %mm1, %mm0", { 0x0f, 0x70, 0xc1, 0x00 }, 4, "MMX", false },
		{ "pextrw $0, %mm1, %eax", { 0x0f, 0xc5, 0xc1, 0x00 }, 4, "MMX", false },
		{ "in $0x60, %al", { 0xe4, 0x60 }, 2, "in", true },
		{ "in (%dx), %eax", { 0xed }, 1, "in", true },
		{ "out %al, (%dx)", { 0xee }, 1, "out", true },
		{ "out %al, $0x80", { 0xe6, 0x80 }, 2, "out", true },
		{ "insb", { 0x6c }, 1, "ins", true },
		{ "rep outsb", { 0xf3, 0x6e }, 2, "outs", true },
		{ "nop (90)", { 0x90 }, 1, NULL, false },
		{ "xchg %ax, %ax (66 90)", { 0x66, 0x90 }, 2, NULL, false },
		{ "xchg %r8, %rax with F3: not pause", { 0xf3, 0x49, 0x90 }, 3, NULL, false },
		{ "cmove %eax, %eax (QEMU traps)", { 0x0f, 0x44, 0xc0 }, 3, NULL, false },
		{ "paddb %xmm1, %xmm0 (QEMU traps)", { 0x66, 0x0f, 0xfc, 0xc1 }, 4, NULL, false },
		{ "lfence (QEMU traps)", { 0x0f, 0xae, 0xe8 }, 3, NULL, false },
		{ "vmread (QEMU traps)", { 0x0f, 0x78, 0xc0 }, 3, NULL, false },
		{ "spflt %eax (KNC's)", { 0xc5, 0xfb, 0xae, 0xf0 }, 4, NULL, false },
		{ "lock xadd", { 0xf0, 0x0f, 0xc1, 0x07 }, 4, NULL, false },
		{ "int3", { 0xcc }, 1, NULL, false },
		{ "hlt", { 0xf4 }, 1, NULL, false },
		{ "truncated 0F", { 0x0f }, 1, NULL, false },
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct x86_insn d;
		x86_decode(w[i].b, w[i].len, PC, &d);
		bool same = w[i].mnemonic ? d.knc_missing && strcmp(d.knc_missing, w[i].mnemonic) == 0 : !d.knc_missing;
		if (!same || d.port_io != w[i].port_io)
			fail_msg("%s: knc_missing %s port_io %d", w[i].what, d.knc_missing ? d.knc_missing : "NULL",
				 d.port_io);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_sse),
		cmocka_unit_test(test_avx),
		cmocka_unit_test(test_translation_changes),
		cmocka_unit_test(test_knc_missing),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
