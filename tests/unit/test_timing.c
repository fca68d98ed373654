/*
 * plugin/timing.c and plugin/classify.c on the host: real instruction bytes
 * (as the assembler encodes them, Intel SDM vol. 2) through Capstone into
 * the schedule, with the cycles plugin/timing.h's rules give by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "plugin/classify.h"
#include "plugin/timing.h"

#define RAX (1u << 0)
#define RCX (1u << 1)
#define RBX (1u << 3)
#define RSP (1u << 4)

/* Instructions by their bytes: one string of hex pairs per instruction. */
struct code {
	const char *hex[8];
};

static uint32_t decode(const struct code *c, struct tm_insn *out)
{
	uint32_t n = 0;

	for (; n < 8 && c->hex[n]; n++) {
		uint8_t b[16];
		size_t len = strlen(c->hex[n]) / 2;
		for (size_t i = 0; i < len; i++)
			sscanf(c->hex[n] + 2 * i, "%2hhx", &b[i]);
		assert_true(classify(b, len, 0x401000, false, &out[n]));
	}
	return n;
}

static struct tm_block schedule(struct code c)
{
	struct tm_insn in[8];
	struct tm_block b;

	tm_schedule(in, decode(&c, in), &b, NULL);
	return b;
}

static int setup(void **state)
{
	(void)state;
	return classify_init() ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	classify_free();
	return 0;
}

/* add rax, 1: the registers, explicit and implicit, and its class. */
static void test_classify(void **state)
{
	(void)state;
	struct tm_insn t;
	struct code c = { { "4883c001" } };

	decode(&c, &t);
	assert_int_equal(t.pipe, TM_UV);
	assert_int_equal(t.rd, RAX);
	assert_int_equal(t.wr, RAX | TM_FLAGS);
	assert_false(t.mem);
	c = (struct code){ { "488b03" } }; /* mov rax, [rbx] */
	decode(&c, &t);
	assert_true(t.mem);
	assert_int_equal(t.agen, RBX);
	assert_int_equal(t.wr, RAX);
	c = (struct code){ { "48d3e0" } }; /* shl rax, cl: pairs with nothing; by a constant only in U */
	decode(&c, &t);
	assert_int_equal(t.pipe, TM_NP);
	c = (struct code){ { "48c1e003" } }; /* shl rax, 3 */
	decode(&c, &t);
	assert_int_equal(t.pipe, TM_PU);
	c = (struct code){ { "7505" } }; /* jne +5 */
	decode(&c, &t);
	assert_int_equal(t.pipe, TM_PV);
	assert_true(t.branch);
	assert_int_equal(t.rd, TM_FLAGS);
	c = (struct code){ { "ffe0" } }; /* jmp rax */
	decode(&c, &t);
	assert_int_equal(t.pipe, TM_NP);
	c = (struct code){ { "48f7f3" } }; /* div rbx: microcoded, the Pentium's 41 */
	decode(&c, &t);
	assert_true(t.micro);
	assert_int_equal(t.exec, 41);
	c = (struct code){ { "480103" } }; /* add [rbx], rax: read-modify-write, 3 cycles */
	decode(&c, &t);
	assert_int_equal(t.exec, 3);
}

/* A chain of dependent adds: one group each, gap cycles each (CPI 2, 3, 4 for 1-2, 3, 4 busy threads). */
static void test_dependent_chain(void **state)
{
	(void)state;
	struct tm_block b = schedule((struct code){ { "4883c001", "4883c001", "4883c001", "4883c001" } });

	assert_int_equal(b.at[0].groups, 4);
	assert_int_equal(b.at[0].vpipe, 0);
	assert_int_equal(b.at[0].cycles, 8);
	assert_int_equal(b.at[1].cycles, 12);
	assert_int_equal(b.at[2].cycles, 16);
	assert_int_equal(b.at[0].exec, 4);
}

/* Independent simple instructions pair: add rax,1 / add rbx,1 twice is two groups. */
static void test_pairs(void **state)
{
	(void)state;
	struct tm_block b = schedule((struct code){ { "4883c001", "4883c301", "4883c001", "4883c301" } });

	assert_int_equal(b.at[0].groups, 2);
	assert_int_equal(b.at[0].vpipe, 2);
	assert_int_equal(b.at[0].cycles, 4);
	/* cmp rax, rbx / jne: a branch in V reads the flags its partner writes */
	b = schedule((struct code){ { "4839d8", "7505" } });
	assert_int_equal(b.at[0].vpipe, 1);
	/* add rax, 1 / add rax, 1: a read of the partner's result does not pair */
	b = schedule((struct code){ { "4883c001", "4883c001" } });
	assert_int_equal(b.at[0].vpipe, 0);
	/* push rax / push rbx: the Pentium pairs stack operations despite RSP */
	b = schedule((struct code){ { "50", "53" } });
	assert_int_equal(b.at[0].vpipe, 1);
	assert_int_equal(b.at[0].both_mem, 1);
	/* mov rax, [rsi] / mov rbx, [rdi]: both pipes access memory */
	b = schedule((struct code){ { "488b06", "488b1f" } });
	assert_int_equal(b.at[0].both_mem, 1);
	/* jne first: a V-only instruction cannot lead a pair */
	b = schedule((struct code){ { "7505", "4883c001" } });
	assert_int_equal(b.at[0].vpipe, 0);
}

/* imul rax, rbx (10 cycles) then add rax, 1: the add waits for the product. */
static void test_latency(void **state)
{
	(void)state;
	struct tm_block b = schedule((struct code){ { "480fafc3", "4883c001" } });

	assert_int_equal(b.at[0].cycles, 12);
	assert_int_equal(b.at[0].exec, 11);
	/* imul rbx, rcx then mov rax, [rbx]: the address waits one cycle more (AGI) */
	b = schedule((struct code){ { "480fafd9", "488b03" } });
	assert_int_equal(b.at[0].agi, 1);
	assert_int_equal(b.at[0].cycles, 13);
	/* add rbx, 1 then mov rax, [rbx]: the gap hides the AGI of a one-cycle result */
	b = schedule((struct code){ { "4883c301", "488b03" } });
	assert_int_equal(b.at[0].agi, 0);
	assert_int_equal(b.at[0].cycles, 4);
	/* mov rax, [rbx] first in a block: its address register is long ready, no AGI */
	b = schedule((struct code){ { "488b03" } });
	assert_int_equal(b.at[0].agi, 0);
	assert_int_equal(b.at[0].cycles, 2);
	/* div rbx: its cycles are microcode cycles */
	b = schedule((struct code){ { "48f7f3" } });
	assert_int_equal(b.at[0].micro, 41);
	assert_int_equal(b.at[0].cycles, 41);
}

/*
 * A block QEMU cut in two schedules as the whole one does: for every cut
 * point, the first part's end state carried into the second gives the
 * same counts at every gap (a pair across the cut, a result in flight).
 */
static void test_cut_anywhere(void **state)
{
	(void)state;
	/* imul rbx,rcx; add rax,1; add rdx,1; mov rsi,[rbx]; add rax,1; push rax; push rdx; div rbx */
	struct code c = { { "480fafd9", "4883c001", "4883c201", "488b33", "4883c001", "50", "52", "48f7f3" } };
	struct tm_insn in[8];
	uint32_t n = decode(&c, in);

	for (unsigned gap = 2; gap <= 4; gap++) {
		struct tm_counts whole, a, b;
		tm_run(in, n, gap, NULL, &whole, NULL);
		for (uint32_t k = 1; k < n; k++) {
			struct tm_carry mid;
			tm_run(in, k, gap, NULL, &a, &mid);
			tm_run(in + k, n - k, gap, &mid, &b, NULL);
			assert_int_equal(a.cycles + b.cycles, whole.cycles);
			assert_int_equal(a.groups + b.groups, whole.groups);
			assert_int_equal(a.vpipe + b.vpipe, whole.vpipe);
			assert_int_equal(a.both_mem + b.both_mem, whole.both_mem);
			assert_int_equal(a.agi + b.agi, whole.agi);
			assert_int_equal(a.exec + b.exec, whole.exec);
			assert_int_equal(a.micro + b.micro, whole.micro);
		}
		assert_true(whole.vpipe >= 2); /* the sequence has pairs to break */
	}
}

/*
 * tm_carry_same, by which a block's run after a cut is remembered
 * (plugin/exec.c continuation): for every cut of the sequence, its end
 * state is the same as itself copied, differs from every other cut's that
 * schedules the rest otherwise, and two states that schedule alike give
 * the same run of what follows.
 */
static void test_carry_same(void **state)
{
	(void)state;
	struct code c = { { "480fafd9", "4883c001", "4883c201", "488b33", "4883c001", "50", "52", "48f7f3" } };
	struct tm_insn in[8];
	uint32_t n = decode(&c, in);
	struct tm_carry mid[8];
	struct tm_counts a;

	for (uint32_t k = 1; k < n; k++) {
		tm_run(in, k, 2, NULL, &a, &mid[k]);
		struct tm_carry copy = mid[k];
		assert_true(tm_carry_same(&copy, &mid[k]));
		copy.ready[3]++;
		assert_false(tm_carry_same(&copy, &mid[k]));
	}
	for (uint32_t j = 1; j < n; j++)
		for (uint32_t k = 1; k < n; k++) {
			if (!tm_carry_same(&mid[j], &mid[k]))
				continue;
			struct tm_counts x, y;
			tm_run(in, n, 2, &mid[j], &x, NULL);
			tm_run(in, n, 2, &mid[k], &y, NULL);
			assert_memory_equal(&x, &y, sizeof(x));
		}
}

/* The same over random sequences of a mix of classes and random cuts (up to three): a property, not a case. */
static void test_cuts_random(void **state)
{
	(void)state;
	static const char *const pool[] = { "4883c001", "4883c301", "4889d8", "488b03", "480fafd9", "50", "5b",
					    "4839d8", "48c1e003", "480103", "4883c201", "488b33" };
	struct tm_insn kinds[12], in[64];
	uint32_t seed = 12345;

	for (int i = 0; i < 12; i++) {
		struct code c = { { pool[i] } };
		decode(&c, &kinds[i]);
	}
	for (int round = 0; round < 2000; round++) {
		uint32_t n = 2 + (seed = seed * 1103515245 + 12345) % 60;
		for (uint32_t i = 0; i < n; i++)
			in[i] = kinds[((seed = seed * 1103515245 + 12345) >> 16) % 12];
		unsigned gap = 2 + round % 3;
		struct tm_counts whole, part, sum = { 0 };
		struct tm_carry carry;
		tm_run(in, n, gap, NULL, &whole, NULL);
		uint32_t at = 0;
		bool carried = false;
		while (at < n) {
			uint32_t k = 1 + (seed = seed * 1103515245 + 12345) % (n - at);
			tm_run(in + at, k, gap, carried ? &carry : NULL, &part, &carry);
			carried = true;
			sum.cycles += part.cycles;
			sum.vpipe += part.vpipe;
			sum.groups += part.groups;
			sum.agi += part.agi;
			at += k;
		}
		assert_int_equal(sum.cycles, whole.cycles);
		assert_int_equal(sum.vpipe, whole.vpipe);
		assert_int_equal(sum.groups, whole.groups);
		assert_int_equal(sum.agi, whole.agi);
	}
}

/* The gap of a core's busy threads, and the miss latencies over an L1 hit. */
static void test_gap_and_latency(void **state)
{
	(void)state;
	assert_int_equal(tm_gap_index(1), 0);
	assert_int_equal(tm_gap_index(2), 0);
	assert_int_equal(tm_gap_index(3), 1);
	assert_int_equal(tm_gap_index(4), 2);
	assert_int_equal(tm_latency(TM_FROM_L2), TM_L2_LAT - TM_L1_LAT);
	assert_int_equal(tm_latency(TM_FROM_MEM), TM_MEM_LAT - TM_L1_LAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_dependent_chain),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_cut_anywhere),
		cmocka_unit_test(test_carry_same),
		cmocka_unit_test(test_cuts_random),
		cmocka_unit_test(test_gap_and_latency),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
