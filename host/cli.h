/*
 * pmuctl's command line: one table of commands (host/pmuctl.c), each
 * command in host/builtin/, and their options (host/cli.c, below every
 * command file). From the table
 * come the option parsing (getopt_long(3)), `pmuctl --help`, `pmuctl help
 * CMD`, `CMD --help`, the man page pmuctl(1) and the bash completion.
 */
#ifndef HOST_CLI_H
#define HOST_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "host/mbox.h"

/*
 * One option of a command: its long name, short letter (0: none), ARG name
 * (NULL: none) and help, and where its value goes, as perf's
 * parse-options tables say it (OPT_STRING, OPT_BOOLEAN, OPT_UINTEGER):
 * cli_next stores it there and goes on. An option with none of them is
 * returned to the command, which acts on it (a repeated -e, a choice
 * among actions).
 */
struct cli_opt {
	const char *name;
	int key;         /* a letter, or a value from 256 on for a long-only option */
	const char *arg; /* the argument's name in the help, NULL for a flag */
	const char *help;
	uint64_t lo, hi;  /* hi > 0: a whole number from lo to hi, checked before any card is opened */
	const char **str; /* ARG as given */
	int *flag;        /* 1 when given */
	int *ival;        /* the number (hi at most INT_MAX) */
	uint64_t *uval;   /* the number */
};

enum cli_card {
	CLI_NO_CARD,   /* works without a card */
	CLI_CARD,      /* pmuctl opens the card's mailbox before the command runs */
	CLI_CARD_NAME, /* the command reaches the card named by --card itself (its registers) */
};

struct cli_cmd {
	const char *name;
	enum cli_card card;
	const char *args; /* what follows the options, e.g. "-- PROGRAM.elf [ARGS]" */
	const char *help; /* one line */
	const struct cli_opt *opts; /* ends with { 0 } */
	/* argv[0] is the command's name; c is NULL unless card is CLI_CARD. Returns the exit status. */
	int (*run)(struct card *c, int argc, char **argv);
	/* Optional: whether these arguments need no card (stat -M list, reset --warm of a card with registers). */
	int (*without_card)(int argc, char **argv);
	const char *more; /* optional: a paragraph for help CMD and the man page */
	int program;      /* its operands are a program and its arguments: options stop at the first operand */
};

extern const char *card_name;     /* --card NAME|PATH|sim:NAME|pci:BDF, PMUOS_CARD, or "card0" */

/*
 * The next option of the running command's argv, as getopt_long(3) with the
 * command's table, that the table does not store (struct cli_opt): its key,
 * optarg set; -1 after the last. -h/--help prints
 * the command's help and exits 0; a bad option prints the command's usage
 * and exits 2. A command that runs a program stops at the first operand (the
 * program's options are its own); others take options anywhere.
 */
int cli_next(int argc, char **argv);

/* Runs `cmd` with argc/argv (argv[0] its name): options checked first (help, bad ones: no card needed). */
int cli_run(const struct cli_cmd *cmd, int argc, char **argv);

/* "usage: pmuctl CMD ..." for the running command on stderr; returns 2, the exit status for bad arguments. */
int usage(void);
/* "pmuctl CMD: WHY 'ARG'" (ARG NULL: "pmuctl CMD: WHY"), then usage(): the argument it could not take named. 2. */
int usage_arg(const char *why, const char *arg);

/* The whole table's help (pmuctl --help) and one command's (help CMD), on `f`. */
void cli_help_all(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals);
void cli_help_cmd(FILE *f, const struct cli_cmd *cmd);

/* The man page pmuctl(1) (troff) and a bash completion script, from the table. */
void cli_man(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals, const char *version);
void cli_bash_completion(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals);

/* A whole decimal number from lo to hi for option OPT; exits with status 2 naming the option and range. */
uint64_t cli_number(const char *opt, const char *s, uint64_t lo, uint64_t hi);

#endif
