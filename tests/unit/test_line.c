/* shell/line.c on the host: the serial line editor, its results and its echo. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "shell/line.h"

#define BS  "\x08"
#define DEL "\x7f"
#define ERASE "\b \b" /* what one backspace echoes */
#define UP "\x1b[A"
#define DOWN "\x1b[B"

/* Everything the editor echoed, in order. */
struct echo_log {
	char buf[65536];
	size_t n;
};

static void record(const char *s, size_t n, void *ctx)
{
	struct echo_log *log = ctx;

	assert_true(log->n + n <= sizeof(log->buf));
	memcpy(log->buf + log->n, s, n);
	log->n += n;
}

struct fixture {
	struct line_editor e;
	struct echo_log log;
	unsigned done, cancel; /* LINE_DONE / LINE_CANCEL results seen */
	enum line_result last;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	line_init(&f->e, record, &f->log);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Feeds n bytes, counting the results; returns the last one. */
static enum line_result feedn(struct fixture *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		f->last = line_feed(&f->e, (uint8_t)s[i]);
		f->done += f->last == LINE_DONE;
		f->cancel += f->last == LINE_CANCEL;
	}
	return f->last;
}

static enum line_result feed(struct fixture *f, const char *s)
{
	return feedn(f, s, strlen(s));
}

/* The echo so far equals `want`; then the log is cleared. */
static void echo_is(struct fixture *f, const char *want)
{
	assert_int_equal(f->log.n, strlen(want));
	assert_memory_equal(f->log.buf, want, f->log.n);
	f->log.n = 0;
}

/* The current line is exactly `want`. */
static void line_is(struct fixture *f, const char *want)
{
	assert_int_equal(f->e.len, strlen(want));
	assert_memory_equal(f->e.buf, want, f->e.len);
}

/* Printable characters are stored and echoed; CR ends the line with "\n". */
static void test_printable_then_cr(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "ls -l"), LINE_MORE);
	line_is(f, "ls -l");
	assert_int_equal(feed(f, "\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "ls -l");
	assert_int_equal(f->e.overflow, 0);
	echo_is(f, "ls -l\n");
}

/* All 95 printable ASCII characters (0x20..0x7e) are accepted. */
static void test_all_printable_accepted(void **state)
{
	struct fixture *f = *state;
	char all[96];

	for (int c = 0x20; c <= 0x7e; c++)
		all[c - 0x20] = (char)c;
	all[95] = 0;
	feed(f, all);
	assert_int_equal(feed(f, "\n"), LINE_DONE);
	assert_string_equal(f->e.buf, all);
}

/* LF alone ends a line. */
static void test_lf_ends_line(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "abc\n"), LINE_DONE);
	assert_string_equal(f->e.buf, "abc");
	echo_is(f, "abc\n");
}

/* CRLF is one line end: its LF is swallowed (LINE_MORE, no echo). */
static void test_crlf_is_one_line(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "abc\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "abc");
	assert_int_equal(feed(f, "\n"), LINE_MORE);
	assert_int_equal(feed(f, "def\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "def");
	assert_int_equal(feed(f, "\n"), LINE_MORE);
	assert_int_equal(f->done, 2);
	echo_is(f, "abc\ndef\n");
}

/* Line ends, each sequence on a fresh editor: a CRLF counts once, any other pair twice. */
static void test_line_end_counts(void **state)
{
	static const struct { const char *in; unsigned lines; const char *echo; } cases[] = {
		{ "\r", 1, "\n" }, { "\n", 1, "\n" }, { "\r\n", 1, "\n" },
		{ "\r\r", 2, "\n\n" }, { "\n\n", 2, "\n\n" }, { "\n\r", 2, "\n\n" },
		{ "\r\n\r\n", 2, "\n\n" }, { "\r\r\n", 2, "\n\n" }, { "\r\n\n", 2, "\n\n" },
		{ "\r\n\r", 2, "\n\n" }, { "a\rb\r\nc\n", 3, "a\nb\nc\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		teardown(state);
		setup(state);
		struct fixture *f = *state;
		feed(f, cases[i].in);
		assert_int_equal(f->done, cases[i].lines);
		echo_is(f, cases[i].echo);
	}
}

/* Only the LF right after a CR is swallowed: "a\r" "b" "\n" is two lines. */
static void test_lf_not_swallowed_later(void **state)
{
	struct fixture *f = *state;

	feed(f, "a\r");
	feed(f, "b\n");
	assert_int_equal(f->done, 2);
	assert_string_equal(f->e.buf, "b");
}

/* After LINE_DONE the next byte starts an empty line. */
static void test_new_line_after_done(void **state)
{
	struct fixture *f = *state;

	feed(f, "first\n");
	assert_int_equal(feed(f, "x\n"), LINE_DONE);
	assert_string_equal(f->e.buf, "x");
}

/* BS and DEL remove the last character and echo "\b \b"; on an empty line they do nothing. */
static void test_backspace_and_del(void **state)
{
	struct fixture *f = *state;

	feed(f, "abx" BS);
	line_is(f, "ab");
	echo_is(f, "abx" ERASE);
	feed(f, "cy" DEL);
	line_is(f, "abc");
	echo_is(f, "cy" ERASE);
	feed(f, DEL BS BS BS BS);
	line_is(f, "");
	echo_is(f, ERASE ERASE ERASE);
	assert_int_equal(feed(f, "z\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "z");
}

/* Ctrl-U erases the whole line on screen and in the buffer. */
static void test_ctrl_u(void **state)
{
	struct fixture *f = *state;

	feed(f, "hello\x15");
	line_is(f, "");
	echo_is(f, "hello" ERASE ERASE ERASE ERASE ERASE);
	feed(f, "\x15"); /* empty line: nothing to erase */
	echo_is(f, "");
	assert_int_equal(feed(f, "ok\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "ok");
}

/* Ctrl-C cancels: LINE_CANCEL, "^C\n" echoed, line and history untouched by it. */
static void test_ctrl_c(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(feed(f, "abc\x03"), LINE_CANCEL);
	line_is(f, "");
	echo_is(f, "abc^C\n");
	assert_int_equal(feed(f, "x\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "x");
	echo_is(f, "x\n");
	/* the cancelled "abc" is not in the history: up shows "x", then nothing older */
	feed(f, UP UP);
	line_is(f, "x");
}

/* CSI sequences (ESC [ params final) and ESC + one char (Alt-x) are ignored: nothing stored or echoed. */
static void test_csi_sequences_ignored(void **state)
{
	struct fixture *f = *state;

	feed(f, "a\x1b[Cb\x1b[Dc\x1b[1;5Cd\x1b[3~e\x1b[200~f\x1bxg\x1b[4@h");
	line_is(f, "abcdefgh");
	echo_is(f, "abcdefgh");
}

/* SS3 sequences are escape sequences too: ESC O P (F1 on xterm), ESC O H (Home in application mode). */
static void test_ss3_sequences_ignored(void **state)
{
	struct fixture *f = *state;

	feed(f, "a\x1bOPb\x1bOHc");
	line_is(f, "abc");
	echo_is(f, "abc");
}

/* Control bytes other than the editing keys, and every byte 0x80..0xff, are ignored. */
static void test_garbage_ignored(void **state)
{
	struct fixture *f = *state;

	for (int c = 0; c < 0x20; c++) {
		if (c == 0x03 || c == 0x08 || c == '\n' || c == '\r' || c == 0x15 || c == 0x1b)
			continue;
		assert_int_equal(line_feed(&f->e, (uint8_t)c), LINE_MORE);
	}
	for (int c = 0x80; c <= 0xff; c++)
		assert_int_equal(line_feed(&f->e, (uint8_t)c), LINE_MORE);
	line_is(f, "");
	assert_int_equal(f->e.overflow, 0);
	echo_is(f, "");
	feed(f, "o\xc3\xa9k\t\x01\r"); /* UTF-8 "é" and control bytes inside a word */
	assert_string_equal(f->e.buf, "ok");
	echo_is(f, "ok\n");
}

/* Up shows older history entries, down newer ones, down past the newest an empty line. */
static void test_history_up_down(void **state)
{
	struct fixture *f = *state;

	feed(f, "one\r\ntwo\r\n");
	f->log.n = 0;
	feed(f, UP);
	line_is(f, "two");
	echo_is(f, "two");
	feed(f, UP);
	line_is(f, "one");
	echo_is(f, ERASE ERASE ERASE "one");
	feed(f, UP); /* no older entry: unchanged, silent */
	line_is(f, "one");
	echo_is(f, "");
	feed(f, DOWN);
	line_is(f, "two");
	echo_is(f, ERASE ERASE ERASE "two");
	feed(f, DOWN);
	line_is(f, "");
	echo_is(f, ERASE ERASE ERASE);
	feed(f, DOWN); /* already at the typed line: nothing */
	echo_is(f, "");
	/* a recalled entry can be edited and entered */
	assert_int_equal(feed(f, UP "!\r"), LINE_DONE);
	assert_string_equal(f->e.buf, "two!");
	assert_int_equal(f->done, 3);
}

/* Up with an empty history does nothing; empty lines are not remembered. */
static void test_history_empty_and_blank(void **state)
{
	struct fixture *f = *state;

	feed(f, UP);
	line_is(f, "");
	echo_is(f, "");
	feed(f, "abc\r\r\r\n");
	f->log.n = 0;
	feed(f, UP); /* the newest entry is "abc", not an empty line */
	line_is(f, "abc");
	echo_is(f, "abc");
	feed(f, UP);
	line_is(f, "abc");
}

/* Typing over a shown entry replaces the current line, not the stored entry. */
static void test_history_entry_not_modified(void **state)
{
	struct fixture *f = *state;

	feed(f, "abc\r");
	feed(f, UP BS BS "xy\r");
	assert_string_equal(f->e.buf, "axy");
	feed(f, UP UP);
	line_is(f, "abc");
}

/* The history keeps the LINE_HISTORY newest lines. */
static void test_history_capacity(void **state)
{
	struct fixture *f = *state;
	char line[8];

	for (int i = 0; i < 20; i++) {
		int n = 0;
		line[n++] = 'l';
		if (i >= 10)
			line[n++] = (char)('0' + i / 10);
		line[n++] = (char)('0' + i % 10);
		line[n++] = '\r';
		feedn(f, line, (size_t)n);
	}
	feed(f, UP);
	line_is(f, "l19");
	for (int i = 0; i < 15; i++)
		feed(f, UP);
	line_is(f, "l4"); /* 16th newest of l0..l19 */
	feed(f, UP);
	line_is(f, "l4");
}

/* A line holds 255 characters; more are dropped, counted in overflow and not echoed. */
static void test_overflow_counted(void **state)
{
	struct fixture *f = *state;
	char a[256];

	memset(a, 'a', 255);
	a[255] = 0;
	feed(f, a);
	assert_int_equal(f->e.len, 255);
	assert_int_equal(f->e.overflow, 0);
	feed(f, "bcd");
	assert_int_equal(f->e.len, 255);
	assert_int_equal(f->e.overflow, 3);
	assert_int_equal(feed(f, "\r"), LINE_DONE);
	assert_string_equal(f->e.buf, a);
	assert_int_equal(f->e.overflow, 3);
	assert_int_equal(f->log.n, 256);
	assert_memory_equal(f->log.buf, a, 255);
	assert_int_equal(f->log.buf[255], '\n');
}

/* BS first takes back dropped characters, then real ones; an overflowed line is not remembered. */
static void test_overflow_backspace_and_history(void **state)
{
	struct fixture *f = *state;
	char a[258];

	memset(a, 'q', 257);
	a[257] = 0;
	feed(f, a);
	assert_int_equal(f->e.overflow, 2);
	f->log.n = 0;
	feed(f, BS);
	assert_int_equal(f->e.overflow, 1);
	assert_int_equal(f->e.len, 255);
	echo_is(f, "");
	feed(f, BS BS);
	assert_int_equal(f->e.overflow, 0);
	assert_int_equal(f->e.len, 254);
	echo_is(f, ERASE);
	feed(f, "zz"); /* room for one: z stored, z dropped */
	assert_int_equal(f->e.len, 255);
	assert_int_equal(f->e.overflow, 1);
	feed(f, "\r");
	feed(f, "x" UP); /* new line starts with overflow 0; no history entry to show */
	assert_int_equal(f->e.overflow, 0);
	line_is(f, "x");
}

/* A 10,000-character line stays inside the buffer: 255 kept, 9,745 counted. */
static void test_long_line(void **state)
{
	struct fixture *f = *state;
	char *big = malloc(10001);

	for (int i = 0; i < 10000; i++)
		big[i] = (char)('a' + i % 26);
	big[10000] = 0;
	f->e.history[0][0] = 0x5a; /* sentinel right after buf */
	feed(f, big);
	assert_int_equal(f->e.len, 255);
	assert_int_equal(f->e.overflow, 9745);
	assert_int_equal((uint8_t)f->e.history[0][0], 0x5a);
	assert_int_equal(feed(f, "\n"), LINE_DONE);
	assert_int_equal(strlen(f->e.buf), 255);
	assert_memory_equal(f->e.buf, big, 255);
	assert_int_equal(f->log.n, 256);
	free(big);
}

/* Ctrl-U also clears the overflow count. */
static void test_ctrl_u_clears_overflow(void **state)
{
	struct fixture *f = *state;
	char a[301];

	memset(a, 'w', 300);
	a[300] = 0;
	feed(f, a);
	feed(f, "\x15" "ok\r");
	assert_string_equal(f->e.buf, "ok");
	assert_int_equal(f->e.overflow, 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_printable_then_cr),
		T(test_all_printable_accepted),
		T(test_lf_ends_line),
		T(test_crlf_is_one_line),
		T(test_line_end_counts),
		T(test_lf_not_swallowed_later),
		T(test_new_line_after_done),
		T(test_backspace_and_del),
		T(test_ctrl_u),
		T(test_ctrl_c),
		T(test_csi_sequences_ignored),
		T(test_ss3_sequences_ignored),
		T(test_garbage_ignored),
		T(test_history_up_down),
		T(test_history_empty_and_blank),
		T(test_history_entry_not_modified),
		T(test_history_capacity),
		T(test_overflow_counted),
		T(test_overflow_backspace_and_history),
		T(test_long_line),
		T(test_ctrl_u_clears_overflow),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
