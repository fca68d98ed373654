/*
 * arch/fpu.c's clean MXCSR on the host: on family 0x0B only, the KNC
 * erratum's bit 21 (DUE) alone, 0x200000, as Intel's card kernel (k1om
 * Linux i387.c; a 3120A's bootstrap leaves that value and its FXSAVE MXCSR
 * mask 0x30e07f has no bit of 0x1f80's masks: Lasimeri/Intel-Phi-3120A
 * docs/results/2026-09-14-p4-tty-smp.md); the reset value 0x1f80 (SDM
 * Vol. 1, 10.2.3) elsewhere. CPUID.1:EAX values: family in
 * bits 11:8, model 7:4, stepping 3:0, extended family 27:20 (SDM Vol. 2A,
 * CPUID); KNC is family 11, model 1 (Linux drivers/misc/mic/card/mic_x100.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "arch/fpu.h"
#include "arch/x86.h"

/* arch/x86.h's write_cr4 stops the CPU through this: never called here (fpu_cpu_init does not run). */
void kernel_stop(const char *why)
{
	fail_msg("kernel_stop: %s", why);
	abort();
}

static void test_knc_gets_due(void **state __attribute__((unused)))
{
	for (uint32_t stepping = 0; stepping < 16; stepping++)
		assert_int_equal(fpu_clean_mxcsr(0x00000b10 | stepping), 0x200000);
	assert_int_equal(fpu_clean_mxcsr(0x00000b00), 0x200000); /* any model of family 0x0B */
	/* Every bit set lies in the 3120A's FXSAVE MXCSR mask: FXRSTOR takes it. */
	assert_int_equal(fpu_clean_mxcsr(0x00000b12) & ~0x30e07fu, 0);
}

static void test_others_get_the_reset_value(void **state __attribute__((unused)))
{
	assert_int_equal(fpu_clean_mxcsr(0x000806f8), 0x1f80); /* family 6 (Sapphire Rapids, QEMU -cpu max) */
	assert_int_equal(fpu_clean_mxcsr(0x00000a10), 0x1f80); /* family 0x0A */
	assert_int_equal(fpu_clean_mxcsr(0x00000c10), 0x1f80); /* family 0x0C */
	assert_int_equal(fpu_clean_mxcsr(0x00a20f10), 0x1f80); /* 0xF + extended 0x0A: family 0x19 */
	assert_int_equal(fpu_clean_mxcsr(0x00b00610), 0x1f80); /* extended family counts only with 0xF */
}

static void test_cpuid_family(void **state __attribute__((unused)))
{
	assert_int_equal(cpuid_family(0x00000b11), CPUID_FAMILY_KNC);
	assert_int_equal(cpuid_family(0x000806f8), 6);
	assert_int_equal(cpuid_family(0x00a20f10), 0x19);
	assert_int_equal(cpuid_family(0x00b00610), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_knc_gets_due),
		cmocka_unit_test(test_others_get_the_reset_value),
		cmocka_unit_test(test_cpuid_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
