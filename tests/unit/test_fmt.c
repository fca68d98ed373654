/*
 * lib/fmt.c on the host. The kernel's vsnprintf/snprintf are compiled as
 * k_vsnprintf/k_snprintf (tests/unit.mk); the host libc's snprintf is the
 * reference wherever C99 defines the result.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#define vsnprintf k_vsnprintf
#define snprintf k_snprintf
#include "lib/fmt.h"
#undef vsnprintf
#undef snprintf

/*
 * Formats with the kernel and checks the text and the return value against
 * `want`. With `libc` set, the host libc must produce `want` too (guards the
 * expected string itself).
 */
static void check(const char *file, int line, int libc, const char *want, const char *fmt, ...)
{
	char got[512], ref[512];
	va_list ap, ap2;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = k_vsnprintf(got, sizeof(got), fmt, ap);
	if (libc) {
		int m = vsnprintf(ref, sizeof(ref), fmt, ap2);
		_assert_string_equal(ref, want, file, line);
		_assert_int_equal(m, strlen(want), file, line);
	}
	va_end(ap2);
	va_end(ap);
	_assert_string_equal(got, want, file, line);
	_assert_int_equal(n, strlen(want), file, line);
}

/* EQ: kernel == want == libc.  KEQ: kernel == want (libc differs or the input is UB). */
#define EQ(want, ...)  check(__FILE__, __LINE__, 1, want, __VA_ARGS__)
#define KEQ(want, ...) check(__FILE__, __LINE__, 0, want, __VA_ARGS__)

/* Some cases deliberately combine flags that C says are ignored. */
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"

/* Ordinary text is copied; "%%" is one '%'. */
static void test_literal_and_percent(void **state)
{
	(void)state;
	EQ("", "");
	EQ("hello, world", "hello, world");
	EQ("100%", "100%%");
	EQ("%%", "%%%%");
	EQ("a%b", "a%%b");
}

/* %d and %i: sign, zero, extremes of int. */
static void test_signed_decimal(void **state)
{
	(void)state;
	EQ("0", "%d", 0);
	EQ("42", "%d", 42);
	EQ("-42", "%i", -42);
	EQ("2147483647", "%d", INT_MAX);
	EQ("-2147483648", "%d", INT_MIN);
	EQ("[7][-7]", "[%d][%i]", 7, -7);
}

/* %u %x %X %o: bases and letter case. */
static void test_unsigned_bases(void **state)
{
	(void)state;
	EQ("4294967295", "%u", UINT_MAX);
	EQ("ff", "%x", 255u);
	EQ("FF", "%X", 255u);
	EQ("deadbeef", "%x", 0xdeadbeefu);
	EQ("DEADBEEF", "%X", 0xdeadbeefu);
	EQ("10", "%o", 8u);
	EQ("37777777777", "%o", UINT_MAX);
	EQ("0 0 0 0", "%u %x %X %o", 0u, 0u, 0u, 0u);
}

/* %c and %s, with width and precision. */
static void test_char_and_string(void **state)
{
	(void)state;
	EQ("A", "%c", 'A');
	EQ("[    A]", "[%5c]", 'A');
	EQ("[A    ]", "[%-5c]", 'A');
	EQ("hello", "%s", "hello");
	EQ("[  abc]", "[%5s]", "abc");
	EQ("[abc  ]", "[%-5s]", "abc");
	EQ("[ab]", "[%.2s]", "abc");
	EQ("[   ab]", "[%5.2s]", "abc");
	EQ("[abc]", "[%.10s]", "abc");
	EQ("[]", "[%.0s]", "abc");
	EQ("[abcdef]", "[%2s]", "abcdef"); /* width never truncates */
}

/* A NULL %s prints "(null)" instead of faulting. */
static void test_null_string(void **state)
{
	(void)state;
	const char *null = NULL;

	KEQ("(null)", "%s", null);
	KEQ("[  (null)]", "[%8s]", null);
}

/*
 * Runs fn() in a child process and returns its exit status: 0 if fn returned
 * 0, 1 if a sanitizer (ASan) stopped it. Lets a memory error fail one test
 * instead of ending the whole binary.
 */
static int run_in_child(int (*fn)(void))
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int format_unterminated(void)
{
	char *s = malloc(3); /* exactly 3 bytes, no NUL: ASan faults on a 4th read */
	char out[8];

	memcpy(s, "xyz", 3);
	int ok = k_snprintf(out, sizeof(out), "%.3s|%.2s", s, s) == 6 && strcmp(out, "xyz|xy") == 0;
	free(s);
	return ok ? 0 : 2;
}

/* C99 7.21.6.1 %s: with a precision the array need not be NUL-terminated; no byte past it is read. */
static void test_string_precision_bounds_read(void **state)
{
	(void)state;
	/* 1: AddressSanitizer caught a read past the array (report on stderr); 2: wrong output */
	assert_int_equal(run_in_child(format_unterminated), 0);
}

/* '-' pads on the right, '0' pads with zeros after the sign, '-' beats '0'. */
static void test_width_minus_zero(void **state)
{
	(void)state;
	EQ("[   42]", "[%5d]", 42);
	EQ("[42   ]", "[%-5d]", 42);
	EQ("[00042]", "[%05d]", 42);
	EQ("[-0042]", "[%05d]", -42);
	EQ("[42   ]", "[%-05d]", 42);
	EQ("[000ff]", "[%05x]", 255u);
	EQ("[12345]", "[%3d]", 12345); /* width never truncates */
	EQ("[  -42]", "[%5d]", -42);
}

/* '+' and ' ' on signed conversions; '+' wins over ' '. */
static void test_plus_space_signed(void **state)
{
	(void)state;
	EQ("+5", "%+d", 5);
	EQ("-5", "%+d", -5);
	EQ("+0", "%+d", 0);
	EQ(" 5", "% d", 5);
	EQ("-5", "% d", -5);
	EQ("+5", "%+ d", 5);
	EQ("[   +5]", "[%+5d]", 5);
	EQ("[+0005]", "[%+05d]", 5);
	EQ("[ 0005]", "[% 05d]", 5);
}

/* C99 7.21.6.1: '+' and ' ' apply to signed conversions only. */
static void test_plus_space_ignored_for_unsigned(void **state)
{
	(void)state;
	EQ("5", "%+u", 5u);
	EQ("5", "% u", 5u);
	EQ("ff", "%+x", 255u);
	EQ("FF", "% X", 255u);
	EQ("17", "%+o", 15u);
}

/* Integer precision: minimum digits, '0' flag ignored, zero with precision 0 is empty. */
static void test_integer_precision(void **state)
{
	(void)state;
	EQ("005", "%.3d", 5);
	EQ("-005", "%.3d", -5);
	EQ("12345", "%.3d", 12345);
	EQ("[     005]", "[%8.3d]", 5);
	EQ("[005     ]", "[%-8.3d]", 5);
	EQ("[     005]", "[%08.3d]", 5);
	EQ("[    +005]", "[%+8.3d]", 5);
	EQ("00ff", "%.4x", 255u);
	EQ("", "%.0d", 0);
	EQ("", "%.d", 0);
	EQ("[     ]", "[%5.0d]", 0);
	EQ("", "%.0x", 0u);
	EQ("", "%.0u", 0u);
	EQ("1", "%.0d", 1);
}

/* '#': 0x/0X before non-zero hex, a leading 0 for octal; padding goes outside/inside. */
static void test_alt_flag(void **state)
{
	(void)state;
	EQ("0xff", "%#x", 255u);
	EQ("0XFF", "%#X", 255u);
	EQ("010", "%#o", 8u);
	EQ("[      0xff]", "[%#10x]", 255u);
	EQ("[0xff      ]", "[%-#10x]", 255u);
	EQ("[0x000000ff]", "[%#010x]", 255u);
	EQ("0x00ff", "%#.4x", 255u);
	EQ("42", "%#u", 42u);
	EQ("0x7fffffffffffffff", "%#lx", (long)LLONG_MAX);
}

/* C99 7.21.6.1 '#' for o: precision grows "if and only if necessary" to make the first digit 0. */
static void test_alt_flag_octal(void **state)
{
	(void)state;
	EQ("0", "%#o", 0u);
	EQ("0", "%#.0o", 0u);
	EQ("[    0]", "[%#5o]", 0u);
	EQ("010", "%#.3o", 8u);
	EQ("0010", "%#.4o", 8u);
}

/* C99 7.21.6.1 '#' for x/X: "a nonzero result has 0x (or 0X) prefixed to it"; zero prints "0". */
static void test_alt_flag_hex_zero(void **state)
{
	(void)state;
	EQ("0", "%#x", 0u);
	EQ("0", "%#X", 0u);
	EQ("[    0]", "[%#5x]", 0u);
	EQ("00000", "%#05x", 0u);
	EQ("", "%#.0x", 0u);
}

/* '*' takes width/precision from the arguments; negative width means '-', negative precision none. */
static void test_star(void **state)
{
	(void)state;
	EQ("[   42]", "[%*d]", 5, 42);
	EQ("[42   ]", "[%*d]", -5, 42);
	EQ("[005]", "[%.*d]", 3, 5);
	EQ("[    ab]", "[%*.*s]", 6, 2, "abcdef");
	EQ("[5]", "[%.*d]", -1, 5);
	EQ("[abcdef]", "[%.*s]", -3, "abcdef");
	EQ("[00042]", "[%0*d]", 5, 42);
	EQ("[x   |7]", "[%-*c|%d]", 4, 'x', 7); /* arguments after '*' stay in step */
}

/* Length modifiers hh h l ll z: the argument is read and converted at that size. */
static void test_length_modifiers(void **state)
{
	(void)state;
	EQ("-1", "%hhd", 255);
	EQ("127", "%hhd", 127);
	EQ("-128", "%hhi", 128);
	EQ("0", "%hhu", 256);
	EQ("ff", "%hhx", 0x1ff);
	EQ("-1", "%hd", 65535);
	EQ("0", "%hu", 65536);
	EQ("-32768", "%hd", 32768);
	EQ("-9223372036854775808", "%ld", LONG_MIN);
	EQ("9223372036854775807", "%li", LONG_MAX);
	EQ("18446744073709551615", "%lu", ULONG_MAX);
	EQ("-9223372036854775808", "%lld", LLONG_MIN);
	EQ("18446744073709551615", "%llu", ULLONG_MAX);
	EQ("ffffffffffffffff", "%llx", ULLONG_MAX);
	EQ("1777777777777777777777", "%llo", ULLONG_MAX);
	EQ("18446744073709551615", "%zu", SIZE_MAX);
	EQ("123456789abc", "%zx", (size_t)0x123456789abcULL);
	/* a 64-bit argument followed by an int: the va_list stays in step */
	EQ("4294967296 7", "%llu %d", 4294967296ULL, 7);
}

/* %p: 0x and lower-case hex digits, with field width. */
static void test_pointer(void **state)
{
	(void)state;
	EQ("0x1234", "%p", (void *)0x1234);
	EQ("0xffff800000001000", "%p", (void *)0xffff800000001000ULL);
	EQ("[     0xabc]", "[%10p]", (void *)0xabc);
	EQ("[0xabc     ]", "[%-10p]", (void *)0xabc);
}

/* Every combination in a small matrix agrees with libc. */
static void test_matrix_against_libc(void **state)
{
	(void)state;
	static const char *ifmt[] = { "%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d",
				      "%8.3d", "%-8.3d|", "%+.3d", "%+06d", "%-+6d|", "%.0d" };
	static const int ival[] = { 0, 1, -1, 9, 10, -10, 42, 999, -1000, INT_MAX, INT_MIN };
	static const char *ufmt[] = { "%u", "%x", "%X", "%o", "%8x", "%-8X|", "%08o", "%.4x",
				      "%#8x", "%#-8x|", "%#08X", "%10.5u", "%.0u" };
	static const unsigned uval[] = { 1, 7, 8, 15, 16, 255, 256, 0x7fffffff, 0xdeadbeef, UINT_MAX };
	char got[64], ref[64];

	for (size_t f = 0; f < sizeof(ifmt) / sizeof(ifmt[0]); f++)
		for (size_t v = 0; v < sizeof(ival) / sizeof(ival[0]); v++) {
			int n = k_snprintf(got, sizeof(got), ifmt[f], ival[v]);
			int m = snprintf(ref, sizeof(ref), ifmt[f], ival[v]);
			assert_string_equal(got, ref);
			assert_int_equal(n, m);
		}
	for (size_t f = 0; f < sizeof(ufmt) / sizeof(ufmt[0]); f++)
		for (size_t v = 0; v < sizeof(uval) / sizeof(uval[0]); v++) {
			int n = k_snprintf(got, sizeof(got), ufmt[f], uval[v]);
			int m = snprintf(ref, sizeof(ref), ufmt[f], uval[v]);
			assert_string_equal(got, ref);
			assert_int_equal(n, m);
		}
}

/* Truncation: at most size-1 characters, always NUL-terminated, nothing past size written. */
static void test_truncation(void **state)
{
	(void)state;
	char buf[16];

	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 5, "hello world"), 11);
	assert_memory_equal(buf, "hell\0XXXXXXXXXXX", 16);

	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 4, "%d", 123456), 6);
	assert_memory_equal(buf, "123\0XXXX", 8);

	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 1, "abc"), 3);
	assert_memory_equal(buf, "\0XX", 3);

	/* exact fit: size = length + 1 */
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 6, "%s!", "abcd"), 5);
	assert_memory_equal(buf, "abcd!\0XX", 8);

	/* one short of fitting */
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 5, "%s!", "abcd"), 5);
	assert_memory_equal(buf, "abcd\0XX", 7);

	/* padding counts too */
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(k_snprintf(buf, 4, "%10d", 1), 10);
	assert_memory_equal(buf, "   \0X", 5);
}

/* C99: size 0 writes nothing (buf may be NULL) and returns the full length. */
static void test_size_zero(void **state)
{
	(void)state;
	char buf[4] = "XYZ";

	assert_int_equal(k_snprintf(NULL, 0, "%s-%d", "abc", 12345), 9);
	assert_int_equal(k_snprintf(buf, 0, "hello"), 5);
	assert_string_equal(buf, "XYZ");
}

/* The buffer is exactly `size` bytes: ASan proves no byte past it is touched. */
static void test_truncation_heap_exact(void **state)
{
	(void)state;
	for (size_t size = 1; size <= 12; size++) {
		char *b = malloc(size);
		int n = k_snprintf(b, size, "%08x:%s", 0xcafeu, "tail");
		assert_int_equal(n, 13);
		assert_int_equal(strlen(b), size - 1);
		assert_memory_equal(b, "0000cafe:tail", size - 1);
		free(b);
	}
}

/* A '%' at the very end of the format stops output without reading past the NUL. */
static void test_trailing_percent(void **state)
{
	(void)state;
	char *f = malloc(5);

	memcpy(f, "abc%", 5);
	KEQ("abc", f);
	memcpy(f, "ab%-", 5);
	KEQ("ab", f);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal_and_percent),
		cmocka_unit_test(test_signed_decimal),
		cmocka_unit_test(test_unsigned_bases),
		cmocka_unit_test(test_char_and_string),
		cmocka_unit_test(test_null_string),
		cmocka_unit_test(test_string_precision_bounds_read),
		cmocka_unit_test(test_width_minus_zero),
		cmocka_unit_test(test_plus_space_signed),
		cmocka_unit_test(test_plus_space_ignored_for_unsigned),
		cmocka_unit_test(test_integer_precision),
		cmocka_unit_test(test_alt_flag),
		cmocka_unit_test(test_alt_flag_octal),
		cmocka_unit_test(test_alt_flag_hex_zero),
		cmocka_unit_test(test_star),
		cmocka_unit_test(test_length_modifiers),
		cmocka_unit_test(test_pointer),
		cmocka_unit_test(test_matrix_against_libc),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_size_zero),
		cmocka_unit_test(test_truncation_heap_exact),
		cmocka_unit_test(test_trailing_percent),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
