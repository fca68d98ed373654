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
