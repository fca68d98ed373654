/*
 * parse_u64, memcpy and memset from lib/lib.c on the host. lib.c is compiled with its libc
 * names renamed (memcpy -> k_memcpy, ...; tests/unit.mk) so it does not
 * replace the host's; parse_u64 keeps its name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/lib.h"

/* lib.c's memcpy and memset by their renamed names; this file calls libc's as the reference. */
void *k_memcpy(void *dst, const void *src, size_t n);
void *k_memset(void *dst, int c, size_t n);

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aULL

/* parse_u64(s, max) succeeds with exactly `want`. */
static void ok(const char *file, int line, const char *s, uint64_t max, uint64_t want)
{
	uint64_t v = UNTOUCHED;
	char what[128];

	snprintf(what, sizeof(what), "parse_u64(\"%s\", %llu) accepts", s, (unsigned long long)max);
	_assert_true(parse_u64(s, max, &v), what, file, line);
	_assert_int_equal(v, want, file, line);
}

/* parse_u64(s, max) fails and leaves *out alone. */
static void bad(const char *file, int line, const char *s, uint64_t max)
{
	uint64_t v = UNTOUCHED;
	char what[128];

	snprintf(what, sizeof(what), "parse_u64(\"%s\", %llu) rejects", s, (unsigned long long)max);
	_assert_true(!parse_u64(s, max, &v), what, file, line);
	_assert_int_equal(v, UNTOUCHED, file, line);
}

#define OK(s, max, want) ok(__FILE__, __LINE__, s, max, want)
#define BAD(s, max)      bad(__FILE__, __LINE__, s, max)

/* Decimal digits, leading zeros allowed. */
/*
 * k_memcpy and k_memset against a byte-at-a-time reference, for every
 * length 0-40 and every start offset 0-7 (the 8-byte part and the byte
 * tail, aligned or not); the bytes around the destination stay as they were.
 */
static void test_memcpy_memset(void **state)
{
	(void)state;
	uint8_t src[64], dst[64], want[64];

	for (int i = 0; i < 64; i++)
		src[i] = (uint8_t)(i * 37 + 11);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n <= 40; n++) {
			memset(dst, 0xee, sizeof(dst));
			memset(want, 0xee, sizeof(want));
			for (size_t i = 0; i < n; i++)
				want[off + i] = src[i + 3];
			assert_ptr_equal(k_memcpy(dst + off, src + 3, n), dst + off);
			assert_memory_equal(dst, want, sizeof(dst));
			for (size_t i = 0; i < n; i++)
				want[off + i] = 0xa7;
			assert_ptr_equal(k_memset(dst + off, 0x1a7, n), dst + off); /* the int's low byte */
			assert_memory_equal(dst, want, sizeof(dst));
		}
}

static void test_decimal(void **state)
{
	(void)state;
	OK("0", UINT64_MAX, 0);
	OK("7", UINT64_MAX, 7);
	OK("42", UINT64_MAX, 42);
	OK("007", UINT64_MAX, 7);
	OK("1000000", UINT64_MAX, 1000000);
	OK("4294967296", UINT64_MAX, 4294967296ULL);
}

/* Hex after 0x or 0X, digits in either case. */
static void test_hex(void **state)
{
	(void)state;
	OK("0x0", UINT64_MAX, 0);
	OK("0xff", UINT64_MAX, 255);
	OK("0XFF", UINT64_MAX, 255);
	OK("0xDeadBeef", UINT64_MAX, 0xdeadbeefULL);
	OK("0x0010", UINT64_MAX, 16);
	OK("0x123456789abcdef0", UINT64_MAX, 0x123456789abcdef0ULL);
}

/* Empty input, and a prefix with no digits, fail. */
static void test_empty(void **state)
{
	(void)state;
	BAD("", UINT64_MAX);
	BAD("0x", UINT64_MAX);
	BAD("0X", UINT64_MAX);
}

/* Any character that is not a digit of the base fails: signs, spaces, letters, dots. */
static void test_stray_characters(void **state)
{
	(void)state;
	BAD("12a", UINT64_MAX);
	BAD("a12", UINT64_MAX);
	BAD("ff", UINT64_MAX);      /* hex digits need 0x */
	BAD(" 12", UINT64_MAX);
	BAD("12 ", UINT64_MAX);
	BAD("1 2", UINT64_MAX);
	BAD("-1", UINT64_MAX);
	BAD("+1", UINT64_MAX);
	BAD("1.5", UINT64_MAX);
	BAD("0x1g", UINT64_MAX);
	BAD("0xx1", UINT64_MAX);
	BAD("x12", UINT64_MAX);
	BAD("0b101", UINT64_MAX);
	BAD("12\n", UINT64_MAX);
	BAD("0x-1", UINT64_MAX);
	BAD("1x10", UINT64_MAX);
}

/* The largest 64-bit values parse; one more overflows and fails. */
static void test_u64_overflow(void **state)
{
	(void)state;
	OK("18446744073709551615", UINT64_MAX, UINT64_MAX);
	BAD("18446744073709551616", UINT64_MAX);
	BAD("18446744073709551620", UINT64_MAX);
	BAD("99999999999999999999", UINT64_MAX);
	BAD("184467440737095516150", UINT64_MAX);
	OK("0xffffffffffffffff", UINT64_MAX, UINT64_MAX);
	OK("0x0000ffffffffffffffff", UINT64_MAX, UINT64_MAX);
	BAD("0x10000000000000000", UINT64_MAX);
	BAD("0x1ffffffffffffffff", UINT64_MAX);
}

/* max is inclusive: max itself parses, max + 1 fails (the bounds the shell uses). */
static void test_max_bound(void **state)
{
	(void)state;
	OK("255", 255, 255);
	BAD("256", 255);
	OK("0xff", 255, 255);
	BAD("0x100", 255);
	OK("4294967295", UINT32_MAX, UINT32_MAX);
	BAD("4294967296", UINT32_MAX);
	OK("0xffffffff", UINT32_MAX, UINT32_MAX);
	OK("3600000", 3600000, 3600000);
	BAD("3600001", 3600000);
	BAD("36000000", 3600000);
	OK("19", 19, 19);
	BAD("20", 19);
	OK("0", 0, 0);
	OK("000", 0, 0);
}

/* A single digit above max fails too (max below the base). */
static void test_single_digit_above_max(void **state)
{
	(void)state;
	OK("3", 3, 3);
	BAD("4", 3);
	BAD("9", 3);
	BAD("1", 0);
	BAD("0xa", 9);
	BAD("0xf", 10);
	BAD("07", 5);
}

/* cmdline_find(line, key) finds `want` (NULL: finds nothing). */
static void arg(const char *file, int line, const char *cmd, const char *key, const char *want)
{
	const char *v = "untouched";
	size_t n = 99;
	bool got = cmdline_find(cmd, key, &v, &n);
	char what[200];

	snprintf(what, sizeof(what), "cmdline_find(\"%s\", \"%s\")", cmd, key);
	if (!want) {
		_assert_true(!got && n == 99 && strcmp(v, "untouched") == 0, what, file, line);
		return;
	}
	_assert_true(got, what, file, line);
	_assert_int_equal(n, strlen(want), file, line);
	_assert_true(strncmp(v, want, n) == 0, what, file, line);
}
#define ARG(cmd, key, want) arg(__FILE__, __LINE__, cmd, key, want)

/* popcount64 against the compiler's builtin over edge and pseudo-random words. */
static void test_popcount64(void **state __attribute__((unused)))
{
	uint64_t x = 88172645463325252ull;

	assert_int_equal(popcount64(0), 0);
	assert_int_equal(popcount64(~0ull), 64);
	assert_int_equal(popcount64(1ull << 63), 1);
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		assert_int_equal(popcount64(x), __builtin_popcountll(x));
	}
}

static void test_cmdline_find(void **state __attribute__((unused)))
{
	ARG("acpi=off", "acpi", "off");
	ARG("  x=1   acpi=off  ", "acpi", "off");
	ARG("acpi=off acpi=on", "acpi", "on");          /* the last word wins */
	ARG("quiet", "quiet", "");                      /* a bare key */
	ARG("acpi= y", "acpi", "");                     /* an empty value */
	ARG("acpix=off", "acpi", NULL);                 /* a longer key is another key */
	ARG("noacpi", "acpi", NULL);
	ARG("acp", "acpi", NULL);
	ARG("", "acpi", NULL);
	ARG("pmuos.mbox=0x1000,0x2000", "pmuos.mbox", "0x1000,0x2000");
	ARG("a=b=c", "a", "b=c");                       /* only the first '=' splits */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memcpy_memset),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_stray_characters),
		cmocka_unit_test(test_u64_overflow),
		cmocka_unit_test(test_cmdline_find),
		cmocka_unit_test(test_popcount64),
		cmocka_unit_test(test_max_bound),
		cmocka_unit_test(test_single_digit_above_max),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
