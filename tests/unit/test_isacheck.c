/* plugin/isacheck.c on the host: the sites of KNC-missing instructions, bounded as plugin/isacheck.h says. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/isacheck.h"

/* One site per (address, mnemonic) up to KNC_SITES_MAX; every later one shares one site, never NULL. */
static void test_sites_are_bounded(void **state)
{
	(void)state;
	static const char cmov[] = "CMOVcc", pause[] = "PAUSE";
	struct knc_site *first = knc_site(0x1000, cmov, false);

	assert_non_null(first);
	assert_ptr_equal(knc_site(0x1000, cmov, false), first);
	assert_ptr_not_equal(knc_site(0x1000, pause, false), first);
	for (uint64_t a = 0x2000; a < 0x2000 + KNC_SITES_MAX - 2; a++)
		assert_non_null(knc_site(a, cmov, true));
	struct knc_site *shared = knc_site(0x900000, cmov, true);
	assert_non_null(shared);
	assert_int_equal(shared->vaddr, 0x900000); /* the first past the ceiling names the shared site */
	for (uint64_t a = 0x900001; a < 0x900000 + 10000; a++)
		assert_ptr_equal(knc_site(a, pause, false), shared);
	/* The sites kept stay found. */
	assert_ptr_equal(knc_site(0x1000, cmov, false), first);
	assert_int_equal(knc_site(0x2000 + KNC_SITES_MAX - 3, cmov, true)->vaddr, 0x2000 + KNC_SITES_MAX - 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sites_are_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
