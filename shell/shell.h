/*
 * Serial shell: prompt "pmuos> ", a line editor (shell/line.h), and a table
 * of commands that any directory can extend with SHELL_COMMAND().
 */
#ifndef SHELL_SHELL_H
#define SHELL_SHELL_H

#include <stdint.h>
#include <stdbool.h>

#define SHELL_PROMPT "pmuos> "
#define SHELL_MAX_ARGS 16

struct shell_cmd {
	const char *name;
	const char *usage;  /* arguments, e.g. "CPU [pf|ud|de|gp]" */
	const char *help;   /* one line */
	int min_args, max_args;
	/* argv[0] is the command name. Returns 0, or non-zero after printing an error. */
	int (*fn)(int argc, char **argv);
};

/* Places a command in the .shell_cmds section the shell walks. */
#define SHELL_COMMAND(id, ...)                                                   \
	static const struct shell_cmd shell_cmd_##id                             \
		__attribute__((used, section(".shell_cmds"), aligned(8))) = { __VA_ARGS__ }

/*
 * The pure part of running a line (shell/parse.c, fuzzed on the host): splits
 * `line` in place into words separated by spaces and tabs (argv[0] is the
 * command; at most SHELL_MAX_ARGS arguments), looks the command up in the
 * table [first, end) and checks its argument count. *argc and argv are set
 * for every result but SHELL_EMPTY (with SHELL_TOO_MANY_WORDS, argv holds the
 * first SHELL_MAX_ARGS + 1 words); *cmd is set for SHELL_RUN and the two
 * argument-count results.
 */
enum shell_parse_result {
	SHELL_RUN,            /* call (*cmd)->fn(*argc, argv) */
	SHELL_EMPTY,          /* no word: nothing to do */
	SHELL_TOO_MANY_WORDS, /* more than SHELL_MAX_ARGS arguments */
	SHELL_UNKNOWN,        /* no command argv[0] */
	SHELL_TOO_FEW_ARGS,   /* fewer than (*cmd)->min_args */
	SHELL_TOO_MANY_ARGS,  /* more than (*cmd)->max_args */
};
enum shell_parse_result shell_parse(char *line, const struct shell_cmd *first, const struct shell_cmd *end,
				    char *argv[SHELL_MAX_ARGS + 1], int *argc, const struct shell_cmd **cmd);
/* The command called `name` in the table [first, end), or NULL. */
const struct shell_cmd *shell_find(const struct shell_cmd *first, const struct shell_cmd *end, const char *name);

/* The BSP's shell loop. Does not return. */
void shell_run(void) __attribute__((noreturn));
/* Runs one line as if typed (no echo). Returns the command's result, -1 if unknown. */
int shell_exec(char *line);

/*
 * Queues a line from the host for the shell loop on CPU 0, which runs it
 * like a typed line between serial lines (so it may wait: no lock is held
 * for it). Returns false if the previous host line has not finished.
 * done(tag) is called when it has finished or was cancelled.
 */
bool shell_submit(const char *line, void (*done)(uint32_t tag), uint32_t tag);
/* Ctrl-C for the host's line: cancels it if it has not started, else interrupts it. */
void shell_interrupt(void);
/*
 * Whether the command running now should stop: Ctrl-C typed at the serial
 * console, or sent by the host for its line. Consumes it.
 */
bool shell_interrupted(void);

/* Prints "error: CMD: message" on its own line; returns 1 for `return shell_error(...)`. */
int shell_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a CPU number in 0..cpu_count-1, printing an error naming the bad input. */
bool shell_parse_cpu(const char *cmd, const char *s, uint32_t *cpu);

#endif
