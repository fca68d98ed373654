/*
 * shell/parse.c on the host: a shell line's words, its command and the
 * argument count, for a small command table (shell_exec passes the card's).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shell/shell.h"

static const struct shell_cmd cmds[] = {
	{ "mem", "", "", 0, 0, NULL },
	{ "kill", "ID", "", 1, 1, NULL },
	{ "echo", "[WORD...]", "", 0, SHELL_MAX_ARGS, NULL },
	{ "debug", "...", "", 1, 3, NULL },
};
#define END (cmds + sizeof(cmds) / sizeof(cmds[0]))

struct parsed {
	enum shell_parse_result r;
	int argc;
	char *argv[SHELL_MAX_ARGS + 1];
	const struct shell_cmd *cmd;
	char line[300];
};

static struct parsed *parse(const char *s)
{
	static struct parsed p;

	memset(&p, 0, sizeof(p));
	p.argc = -1;
	snprintf(p.line, sizeof(p.line), "%s", s);
	p.r = shell_parse(p.line, cmds, END, p.argv, &p.argc, &p.cmd);
	return &p;
}

static void test_words_split_on_spaces_and_tabs(void **state)
{
	(void)state;
	struct parsed *p = parse("  debug\tfault  1 \t pf\t ");
	assert_int_equal(p->r, SHELL_RUN);
	assert_int_equal(p->argc, 4);
	assert_string_equal(p->argv[0], "debug");
	assert_string_equal(p->argv[1], "fault");
	assert_string_equal(p->argv[2], "1");
	assert_string_equal(p->argv[3], "pf");
	assert_ptr_equal(p->cmd, &cmds[3]);
	/* Other bytes are part of words. */
	p = parse("echo a,b=c\x7f");
	assert_int_equal(p->argc, 2);
	assert_string_equal(p->argv[1], "a,b=c\x7f");
}

static void test_empty_and_blank_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("")->r, SHELL_EMPTY);
	assert_int_equal(parse("")->argc, 0);
	assert_int_equal(parse(" \t \t")->r, SHELL_EMPTY);
}

static void test_unknown_command(void **state)
{
	(void)state;
	struct parsed *p = parse("memory 1");
	assert_int_equal(p->r, SHELL_UNKNOWN);
	assert_string_equal(p->argv[0], "memory");
	assert_int_equal(parse("MEM")->r, SHELL_UNKNOWN); /* names are exact */
	assert_null(shell_find(cmds, END, "me"));
	assert_ptr_equal(shell_find(cmds, END, "kill"), &cmds[1]);
}

static void test_argument_counts(void **state)
{
	(void)state;
	assert_int_equal(parse("mem")->r, SHELL_RUN);
	assert_int_equal(parse("mem x")->r, SHELL_TOO_MANY_ARGS);
	assert_int_equal(parse("kill")->r, SHELL_TOO_FEW_ARGS);
	assert_ptr_equal(parse("kill")->cmd, &cmds[1]);
	assert_int_equal(parse("kill 1")->r, SHELL_RUN);
	assert_int_equal(parse("kill 1 2")->r, SHELL_TOO_MANY_ARGS);
	assert_int_equal(parse("debug a b c")->r, SHELL_RUN);
	assert_int_equal(parse("debug a b c d")->r, SHELL_TOO_MANY_ARGS);
}

static void test_at_most_sixteen_arguments(void **state)
{
	(void)state;
	char line[200] = "echo";

	for (int i = 1; i <= SHELL_MAX_ARGS; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " w%d", i);
	struct parsed *p = parse(line);
	assert_int_equal(p->r, SHELL_RUN);
	assert_int_equal(p->argc, SHELL_MAX_ARGS + 1);
	assert_string_equal(p->argv[SHELL_MAX_ARGS], "w16");
	/* One more word, even for an unknown command: refused before the lookup. */
	strcat(line, " w17");
	p = parse(line);
	assert_int_equal(p->r, SHELL_TOO_MANY_WORDS);
	assert_int_equal(p->argc, SHELL_MAX_ARGS + 1);
	assert_string_equal(p->argv[0], "echo");
	line[0] = 'X';
	assert_int_equal(parse(line)->r, SHELL_TOO_MANY_WORDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words_split_on_spaces_and_tabs),
		cmocka_unit_test(test_empty_and_blank_lines),
		cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_argument_counts),
		cmocka_unit_test(test_at_most_sixteen_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
