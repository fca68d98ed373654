/*
 * lib/cpuset.c on the host: CPU sets written "all" or "0-3,8"
 * (lib/cpuset.h). cpuset.c is compiled with the kernel's snprintf/memcpy/...
 * renamed to k_ (tests/unit.mk) and linked with lib/fmt.c and lib/lib.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/cpuset.h"

/* cpuset_parse(s, ncpus) succeeds with exactly the CPUs want[0..n) (and count n). */
static void ok(const char *file, int line, const char *s, uint32_t ncpus, const uint32_t *want, size_t n)
{
	struct cpuset set;
	char err[128] = "", what[256];

	memset(&set, 0xa5, sizeof(set));
	snprintf(what, sizeof(what), "cpuset_parse(\"%s\", %u) accepts", s, ncpus);
	bool r = cpuset_parse(s, ncpus, &set, err, sizeof(err));
	if (!r)
		snprintf(what, sizeof(what), "cpuset_parse(\"%s\", %u) accepts (err: %s)", s, ncpus, err);
	_assert_true(r, what, file, line);

	bool in[CPUSET_MAX] = { false };
	for (size_t k = 0; k < n; k++)
		in[want[k]] = true;
	for (uint32_t c = 0; c < CPUSET_MAX; c++) {
		snprintf(what, sizeof(what), "\"%s\": CPU %u %s the set", s, c, in[c] ? "in" : "not in");
		_assert_true(cpuset_has(&set, c) == in[c], what, file, line);
	}
	_assert_int_equal(cpuset_count(&set), n, file, line);
}

/* cpuset_parse(s, ncpus) fails with a NUL-terminated message containing `part` (if not NULL). */
static void bad(const char *file, int line, const char *s, uint32_t ncpus, const char *part)
{
	struct cpuset set;
	char err[128], what[256];

	memset(err, 'Z', sizeof(err));
	bool r = cpuset_parse(s, ncpus, &set, err, sizeof(err));
	_assert_true(memchr(err, 0, sizeof(err)) != NULL, "err is NUL-terminated", file, line);
	snprintf(what, sizeof(what), "cpuset_parse(\"%s\", %u) rejects", s, ncpus);
	_assert_true(!r, what, file, line);
	_assert_true(err[0] != 0, "err is set", file, line);
	if (part) {
		snprintf(what, sizeof(what), "err \"%s\" names \"%s\"", err, part);
		_assert_true(strstr(err, part) != NULL, what, file, line);
	}
}

#define OK(s, ncpus, ...) do { \
	const uint32_t want_[] = { __VA_ARGS__ }; \
	ok(__FILE__, __LINE__, s, ncpus, want_, sizeof(want_) / sizeof(want_[0])); \
} while (0)
#define BAD(s, ncpus, part) bad(__FILE__, __LINE__, s, ncpus, part)

/* "all" is CPUs 0..ncpus-1 (at most CPUSET_MAX). */
static void test_all(void **state)
{
	(void)state;
	struct cpuset set;
	char err[64];

	OK("all", 1, 0);
	OK("all", 4, 0, 1, 2, 3);
	assert_true(cpuset_parse("all", 244, &set, err, sizeof(err)));
	assert_int_equal(cpuset_count(&set), 244);
	assert_true(cpuset_has(&set, 243));
	assert_false(cpuset_has(&set, 244));
	assert_true(cpuset_parse("all", CPUSET_MAX, &set, err, sizeof(err)));
	assert_int_equal(cpuset_count(&set), CPUSET_MAX);
	BAD("ALL", 4, NULL);
	BAD("all,1", 4, NULL);
}

/* Single CPUs and lists. */
static void test_numbers(void **state)
{
	(void)state;

	OK("0", 4, 0);
	OK("3", 4, 3);
	OK("2,0", 4, 0, 2);
	OK("1,1", 4, 1);
	OK("255", 256, 255);
	OK("64,63,128", 200, 63, 64, 128);
}

/* Ranges a-b, inclusive, mixed with numbers. */
static void test_ranges(void **state)
{
	(void)state;

	OK("0-3,8", 16, 0, 1, 2, 3, 8);
	OK("2-2", 4, 2);
	OK("0-3", 4, 0, 1, 2, 3);
	OK("62-65", 70, 62, 63, 64, 65); /* across a 64-bit word */
	OK("8,0-1", 16, 0, 1, 8);
}

/* Overlapping and repeated ranges give the union. */
static void test_overlap(void **state)
{
	(void)state;

	OK("0-4,2-6,5", 8, 0, 1, 2, 3, 4, 5, 6);
	OK("1-3,1-3", 8, 1, 2, 3);
	OK("3-5,0-7", 8, 0, 1, 2, 3, 4, 5, 6, 7);
}

/* Only CPUs 0..ncpus-1; the message names the CPU. */
static void test_ncpus_bound(void **state)
{
	(void)state;

	OK("3", 4, 3);
	BAD("4", 4, "4");
	BAD("0-4", 4, "4");
	BAD("1,9", 8, "9");
	BAD("256", 256, "256");
	BAD("0", 0, "0");
	BAD("4294967295", 4, "4294967295");
}

/* A backwards range is refused and named. */
static void test_backwards(void **state)
{
	(void)state;

	BAD("3-1", 4, "3-1");
	BAD("0,3-2", 4, "3-2");
}

/* Malformed strings are refused with a message. */
static void test_malformed(void **state)
{
	(void)state;

	BAD("", 4, NULL);
	BAD("1,,2", 4, NULL);
	BAD("-3", 4, NULL);
	BAD("3-", 4, NULL);
	BAD("x", 4, "x");
	BAD("1-x", 4, "x");
	BAD("1,", 4, NULL);
	BAD(",1", 4, NULL);
	BAD(" 1", 4, NULL);
	BAD("1 ", 4, NULL);
	BAD("1-2-3", 4, NULL);
	BAD("+1", 4, NULL);
	BAD("99999999999999999999", 4, NULL);
}

/* cpuset_count counts the members of any set. */
static void test_count(void **state)
{
	(void)state;
	struct cpuset s;

	memset(&s, 0, sizeof(s));
	assert_int_equal(cpuset_count(&s), 0);
	cpuset_add(&s, 0);
	cpuset_add(&s, 63);
	cpuset_add(&s, 64);
	cpuset_add(&s, 255);
	assert_int_equal(cpuset_count(&s), 4);
	cpuset_add(&s, 64);
	assert_int_equal(cpuset_count(&s), 4);
	memset(&s, 0xff, sizeof(s));
	assert_int_equal(cpuset_count(&s), 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_ncpus_bound),
		cmocka_unit_test(test_backwards),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_count),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
