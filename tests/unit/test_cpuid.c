/*
 * arch/cpuid.c: threads per core from CPUID, and arch/x86.h's
 * cpuid_knc_card. Register values as QEMU 7.2
 * returns them (read in a guest with CPUID): scripts/qemu.sh's strict KNC
 * CPU with -smp 8,sockets=1,cores=2,threads=4 (maximum basic leaf 4),
 * and -cpu max with 4 threads a core (leaf 0xB); and a KNC card's leaves 1
 * and 4 as Linux on a card reports them (cpuinfo "siblings 240", "cpu
 * cores 60": CPUID.1:EBX[23:16] = 240, CPUID.4:EAX[31:26] = 59).
 * And arch/x86.h's control-register guards: CR4.PGE, which a card
 * faults on (SSDG 328207-002 §4.2.10), and CR0.CD/NW, which an INIT keeps
 * (SDM Vol. 3A Table 9-1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86.h"

static const struct cpuid_regs none;

static void test_strict_knc_cpu_has_no_leaf_b(void **state __attribute__((unused)))
{
	struct cpuid_regs l1 = { 0x00000b11, 0x00080800, 0x80000000, 0x110153fd };  /* 8 logical, HTT */
	struct cpuid_regs l4 = { 0x04000121, 0x01c0003f, 0x3f, 1 };      /* 2 cores, L1D */
	assert_int_equal(cpuid_threads_per_core(4, l1, l4, none), 4);
	/* what leaf 0xB returns there is leaf 4's (beyond the maximum leaf): never read */
	assert_int_equal(cpuid_threads_per_core(4, l1, l4, l4), 4);
}

static void test_knc_card(void **state __attribute__((unused)))
{
	struct cpuid_regs l1 = { 0x00000b12, 240u << 16, 0, 0x110153ff };
	struct cpuid_regs l4 = { (59u << 26) | 0x121, 0, 0, 0 };
	assert_int_equal(cpuid_threads_per_core(4, l1, l4, none), 4);
}

static void test_leaf_b_counts(void **state __attribute__((unused)))
{
	struct cpuid_regs l1 = { 0x000806f8, 0x00100800, 0, 0x1fcbfbfd };
	struct cpuid_regs l4 = { 0x04000121, 0, 0, 0 };
	struct cpuid_regs lb = { 2, 4, 0x100, 0 };
	assert_int_equal(cpuid_threads_per_core(0xd, l1, l4, lb), 4);
	lb.ebx = 1;
	assert_int_equal(cpuid_threads_per_core(0xd, l1, l4, lb), 1);
	lb.ebx = 0; /* a leaf 0xB that says nothing */
	assert_int_equal(cpuid_threads_per_core(0xd, l1, l4, lb), 1);
}

static void test_one_thread_when_unknown(void **state __attribute__((unused)))
{
	struct cpuid_regs l1 = { 0x00000b11, 0x00080800, 0, 0x110153fd };
	struct cpuid_regs l4 = { 0x04000121, 0, 0, 0 };
	struct cpuid_regs no_htt = l1;
	no_htt.edx &= ~(1u << 28);
	assert_int_equal(cpuid_threads_per_core(4, no_htt, l4, none), 1);
	assert_int_equal(cpuid_threads_per_core(3, l1, l4, none), 1);       /* no leaf 4 */
	assert_int_equal(cpuid_threads_per_core(4, l1, none, none), 1);     /* leaf 4 without a cache */
	struct cpuid_regs one = { 0x00000b11, 0x00010800, 0, 0x110153fd };  /* -smp 1: 1 logical */
	assert_int_equal(cpuid_threads_per_core(4, one, l4, none), 1);
}

static void test_knc_card_is_family_0b_without_a_hypervisor(void **state __attribute__((unused)))
{
	struct cpuid_regs card = { 0x00000b12, 240u << 16, 0, 0x110153ff };              /* no ECX bits */
	struct cpuid_regs strict = { 0x00000b11, 0x00080800, 0x80000000, 0x110153fd };    /* QEMU: bit 31 */
	struct cpuid_regs max = { 0x00060fb1, 0x00000800, 0xf6d8320b, 0x0fcbfbfd };       /* QEMU -cpu max */
	assert_true(cpuid_knc_card(card));
	assert_false(cpuid_knc_card(strict));
	assert_false(cpuid_knc_card(max));
	max.ecx &= ~0x80000000u;
	assert_false(cpuid_knc_card(max));  /* family 0xF: no hypervisor does not make it a card */
}

static jmp_buf stopped;
static const char *stop_reason;

void kernel_stop(const char *why)
{
	stop_reason = why;
	longjmp(stopped, 1);
}

/* Linux's early CR4 (PAE | PGE, arch/x86/kernel/head_64.S), the write a 3120A faulted on; pmuos's own, PAE | PCE. */
static void test_cr4_pge_is_refused(void **state __attribute__((unused)))
{
	assert_non_null(cr4_refused(0xa0));
	assert_non_null(strstr(cr4_refused(0xa0), "CR4.PGE"));
	assert_null(cr4_refused(CR4_PAE | CR4_PCE));
	assert_null(cr4_refused(0x230)); /* a 3120A's PSE | PAE | OSFXSR: OSFXSR is arch/fpu.c's to avoid */
	stop_reason = NULL;
	if (!setjmp(stopped)) {
		write_cr4(0xa0); /* stops before the MOV, which would fault in a host process */
		fail_msg("write_cr4 of PGE went on");
	}
	assert_ptr_equal(stop_reason, cr4_refused(0xa0));
}

/*
 * 0xe0000033, what QEMU's AP ran with after the OR-ing start-up code (PG,
 * CD, NW, NE, ET, MP, PE: INIT's 0x60000010 kept); 0x60000010 itself; the
 * kernel's 0x80000033.
 */
static void test_cr0_with_caching_off_is_refused(void **state __attribute__((unused)))
{
	assert_non_null(cr0_refused(0xe0000033));
	assert_non_null(cr0_refused(0x60000010));
	assert_non_null(cr0_refused(0x80000033 | CR0_NW));
	assert_non_null(cr0_refused(0x80000033 | CR0_CD));
	assert_null(cr0_refused(0x80000033));
	assert_int_equal(CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG, 0x80000033);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_knc_cpu_has_no_leaf_b),
		cmocka_unit_test(test_knc_card),
		cmocka_unit_test(test_leaf_b_counts),
		cmocka_unit_test(test_one_thread_when_unknown),
		cmocka_unit_test(test_knc_card_is_family_0b_without_a_hypervisor),
		cmocka_unit_test(test_cr4_pge_is_refused),
		cmocka_unit_test(test_cr0_with_caching_off_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
