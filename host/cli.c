/*
 * pmuctl's command line: options, help, the man page; see host/cli.h. This
 * file is below every command file: it knows the command table only as the
 * argument it is given.
 */
#define _GNU_SOURCE
#include "host/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "host/progress.h"

const char *card_name = "card0";
static uint64_t cli_num; /* the last numeric option's value (one with hi > 0), for store() */

#define OPTS_MAX 24
static const struct cli_cmd *running; /* the command cli_run runs */
static const struct cli_opt help_opt = { "help", 'h', NULL, "this help (no card needed)" };

/* The command's getopt_long(3) tables, built from its options and -h/--help. */
static void getopt_tables(const struct cli_cmd *cmd, char *shorts, struct option *longs)
{
	int n = 0, s = 0;

	if (cmd->program)
		shorts[s++] = '+'; /* stop at the first operand: the program's arguments are its own */
	shorts[s++] = ':'; /* a missing argument is told apart from an unknown option */
	for (const struct cli_opt *o = cmd->opts; ; o++) {
		if (!o->name)
			o = &help_opt;
		longs[n++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, o->key };
		if (o->key < 256) {
			shorts[s++] = o->key;
			if (o->arg)
				shorts[s++] = ':';
		}
		if (o == &help_opt)
			break;
	}
	longs[n] = (struct option){ 0 };
	shorts[s] = 0;
}

static const struct cli_opt *opt_by_key(const struct cli_cmd *cmd, int key)
{
	for (const struct cli_opt *o = cmd->opts; o->name; o++)
		if (o->key == key)
			return o;
	return NULL;
}

/* A whole decimal number from lo to hi for option OPT; exits with status 2 naming the option and range. */
uint64_t cli_number(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *end || s[0] == '-' || errno || v < lo || v > hi) {
		fprintf(stderr, "pmuctl: %s %s: %s; %s takes %llu to %llu\n", opt, s,
			end == s || *end || s[0] == '-' ? "not a whole number" : "out of range", opt,
			(unsigned long long)lo, (unsigned long long)hi);
		exit(2);
	}
	return v;
}

/* Stores option o's value where its table entry says; false if it says nowhere. */
static bool store(const struct cli_opt *o)
{
	if (o->str)
		*o->str = optarg;
	else if (o->flag)
		*o->flag = 1;
	else if (o->ival)
		*o->ival = (int)cli_num;
	else if (o->uval)
		*o->uval = cli_num;
	else
		return false;
	return true;
}

int cli_next(int argc, char **argv)
{
	static const struct cli_cmd *built;
	static char shorts[2 * OPTS_MAX + 3];
	static struct option longs[OPTS_MAX + 1];

	if (!running->opts[0].name) { /* no options: every argument is an operand (ping -1: a bad N) */
		if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			cli_help_cmd(stdout, running);
			exit(0);
		}
		optind = 1;
		return -1;
	}
	if (built != running) {
		getopt_tables(running, shorts, longs);
		built = running;
	}
	opterr = 0;
	for (;;) { /* until an option the table does not store, or the end */
		int o = getopt_long(argc, argv, shorts, longs, NULL);
		if (o == 'h') {
			cli_help_cmd(stdout, running);
			exit(0);
		}
		if (o == '?' || o == ':') {
			const char *bad = argv[optind - 1];
			const struct cli_opt *known = opt_by_key(running, optopt);
			if (o == ':')
				fprintf(stderr, "pmuctl %s: option %s needs %s\n", running->name, bad, known && known->arg ? known->arg : "an argument");
			else if (optopt && bad[0] == '-' && bad[1] != '-')
				fprintf(stderr, "pmuctl %s: unknown option '-%c'\n", running->name, optopt);
			else
				fprintf(stderr, "pmuctl %s: unknown option '%s'\n", running->name, bad);
			exit(usage());
		}
		const struct cli_opt *opt = o >= 0 ? opt_by_key(running, o) : NULL;
		if (opt && opt->hi) {
			char name[40];
			if (o < 256)
				snprintf(name, sizeof(name), "-%c", o);
			else
				snprintf(name, sizeof(name), "--%s", opt->name);
			cli_num = cli_number(name, optarg, opt->lo, opt->hi);
		}
		if (!opt || !store(opt))
			return o;
	}
}

/* What the command line says of the card for `cmd`: "[--card NAME] " or "". */
static const char *card_part(const struct cli_cmd *cmd)
{
	return cmd->card == CLI_NO_CARD ? "" : "[--card NAME] ";
}

int usage(void)
{
	fprintf(stderr, "usage: pmuctl %s%s%s %s\n(pmuctl help %s: its options)\n", card_part(running), running->name,
		running->opts[0].name ? " [OPTIONS]" : "", running->args, running->name);
	return 2;
}

int usage_arg(const char *why, const char *arg)
{
	if (arg)
		fprintf(stderr, "pmuctl %s: %s '%s'\n", running->name, why, arg);
	else
		fprintf(stderr, "pmuctl %s: %s\n", running->name, why);
	return usage();
}

int cli_run(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct card c, *cp = NULL;

	running = cmd;
	optind = 0; /* 0: GNU getopt starts afresh */
	while (cli_next(argc, argv) != -1)
		;
	if (cmd->card == CLI_CARD && !(cmd->without_card && cmd->without_card(argc, argv))) {
		if (card_open(&c, card_name) != 0)
			return 1;
		cp = &c;
	}
	optind = 0;
	int r = cmd->run(cp, argc, argv);
	if (cp)
		card_close(cp);
	return r;
}

/* "  -e, --event=EV  help" */
static void help_opt_line(FILE *f, const struct cli_opt *o)
{
	char left[64];

	snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->key < 256 ? '-' : ' ', o->key < 256 ? o->key : ' ',
		 o->key < 256 ? ',' : ' ', o->name, o->arg ? "=" : "", o->arg ? o->arg : "");
	fprintf(f, "  %-28s %s", left, o->help);
	if (o->hi)
		fprintf(f, " (%llu to %llu)", (unsigned long long)o->lo, (unsigned long long)o->hi);
	fputc('\n', f);
}

void cli_help_all(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals)
{
	fprintf(f, "usage: pmuctl [OPTIONS] COMMAND [ARGS]\n\noptions:\n");
	for (const struct cli_opt *o = globals; o->name; o++)
		help_opt_line(f, o);
	fprintf(f, "\ncommands:\n");
	for (const struct cli_cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-10s %s%s\n", c->name, c->help, c->card == CLI_NO_CARD ? " (no card needed)" : "");
	fprintf(f, "\n'pmuctl help COMMAND' or 'pmuctl COMMAND --help': a command's options. man pmuctl: the manual.\n");
}

void cli_help_cmd(FILE *f, const struct cli_cmd *cmd)
{
	fprintf(f, "usage: pmuctl %s%s%s %s\n\n%s.\n", card_part(cmd), cmd->name, cmd->opts[0].name ? " [OPTIONS]" : "",
		cmd->args, cmd->help);
	if (cmd->more)
		fprintf(f, "\n%s\n", cmd->more);
	fprintf(f, "\n%s\n\noptions:\n", cmd->card == CLI_NO_CARD     ? "No card needed."
					 : cmd->card == CLI_CARD_NAME ? "Reaches the card named by --card through its registers."
								      : "Needs a card: --card NAME, PMUOS_CARD, or card0.");
	for (const struct cli_opt *o = cmd->opts; o->name; o++)
		help_opt_line(f, o);
	help_opt_line(f, &help_opt);
}
