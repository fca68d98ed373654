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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_sse),
		cmocka_unit_test(test_avx),
		cmocka_unit_test(test_translation_changes),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
