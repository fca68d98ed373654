/*
 * host/cardtext.c: what pmuctl prints of the card's own text (the
 * mailbox's 16-byte kernel_version, the bootstrap's status characters):
 * bounded by the field, control characters and bytes from 0x80 escaped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/cardtext.h"

/* What print_card_text prints of n bytes at s; its return checked against the text's length. */
static char *printed(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	size_t r = print_card_text(f, s, n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(r, len);
	return buf;
}

static void check(const char *s, size_t n, const char *want)
{
	char *got = printed(s, n);
	assert_string_equal(got, want);
	free(got);
}

/* A version filling all 16 bytes, no NUL: the 16 bytes, nothing of what follows in memory. */
static void test_a_version_without_nul_stops_at_the_field(void **state)
{
	(void)state;
	struct { char version[16]; char after[8]; } hdr;
	memcpy(hdr.version, "0123456789abcdef", 16);
	memcpy(hdr.after, "SECRET!", 8);
	check(hdr.version, sizeof(hdr.version), "0123456789abcdef");
}

static void test_a_nul_ends_the_text(void **state)
{
	(void)state;
	char v[16] = "0.1.0";
	check(v, sizeof(v), "0.1.0");
	check("\0abc", 4, "");
}

/* ESC [2J (clear the screen), ESC ]0; (set the window title), BEL, CR: shown, never obeyed. */
static void test_escape_sequences_and_control_characters_are_escaped(void **state)
{
	(void)state;
	char v[16];
	memcpy(v, "\x1b[2J\x1b]0;pwn\x07\r\n\x7f\xff", 16);
	check(v, sizeof(v), "\\x1b[2J\\x1b]0;pwn\\x07\\x0d\\x0a\\x7f\\xff");
	check("\t\x80", 2, "\\x09\\x80");
}

/* A backslash is doubled: "\x1b" written by the card is not the escape of an ESC. */
static void test_a_backslash_is_doubled(void **state)
{
	(void)state;
	check("a\\x1b", 5, "a\\\\x1b");
}

/* One status character at a time, as pmuctl boot shows them as they come. */
static void test_one_character(void **state)
{
	(void)state;
	check("\x1b", 1, "\\x1b");
	check("Z", 1, "Z");
	check(" ~", 2, " ~");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_version_without_nul_stops_at_the_field),
		cmocka_unit_test(test_a_nul_ends_the_text),
		cmocka_unit_test(test_escape_sequences_and_control_characters_are_escaped),
		cmocka_unit_test(test_a_backslash_is_doubled),
		cmocka_unit_test(test_one_character),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
