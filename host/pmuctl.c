/*
 * pmuctl: drive a pmuos card from the host through its mailbox (docs/design.md §8).
 * This file: the command table, from which come the option parsing, the
 * help, the man page and the bash completion (host/cli.c), and main. Each
 * command has its file in host/builtin/ (perf's builtin-*.c); what they
 * share is the library in host/ (the card: mbox.c and call.c; programs:
 * launch.c; formats, pictures, files), which never calls a command.
 * Event names come from libpfm4 (its knc PMU); symbols from the program's
 * ELF (elfutils libelf); CPU sets are written "1-3,8".
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/boot.h"
#include "host/pmuctl.h"

enum { OPT_CARD = 256, OPT_STALE, OPT_VERSION, OPT_MAN, OPT_COMPLETION, OPT_CMDLINE, OPT_TIMEOUT };

static const struct cli_opt global_opts[] = {
	{ "card", OPT_CARD, "NAME", "the card: NAME (/dev/shm/pmuos-NAME), PATH, sim:NAME[@BASE] or pci:BDF[@BASE]; "
				    "default $PMUOS_CARD, else card0" },
	{ "stale-after", OPT_STALE, "S", "seconds without a heartbeat after which the card counts as stopped "
					 "(default 30: a loaded host can hold a full card's vCPUs that long)", 1, 3600 },
	{ "version", OPT_VERSION, NULL, "pmuctl's version" },
	{ "help", 'h', NULL, "this help" },
	{ 0 },
};

static const struct cli_opt no_opts[] = { { 0 } };
static const struct cli_opt help_opts[] = {
	{ "man", OPT_MAN, NULL, "the manual page pmuctl(1), troff (make install writes it)" },
	{ "bash-completion", OPT_COMPLETION, NULL, "the bash completion script (make install writes it)" },
	{ 0 },
};
/* boot's options, as its table stores them (timeout 0: the defaults). */
static struct {
	const char *cmdline;
	int timeout_s;
} boot_opt = { .cmdline = "" };

static const struct cli_opt boot_opts[] = {
	{ "cmdline", OPT_CMDLINE, "TEXT", "added to the kernel command line (pmuos.stop=MARK: the boot halts at that "
					  "POST mark, and pmuctl says so at once)", .str = &boot_opt.cmdline },
	{ "timeout", OPT_TIMEOUT, "S", "seconds each wait may take: the bootstrap (default 60), READY (120)", 1, 3600,
	  .ival = &boot_opt.timeout_s },
	{ 0 },
};

static const struct cli_cmd commands[];

static int cmd_help(struct card *c, int argc, char **argv)
{
	int o;

	(void)c;
	while ((o = cli_next(argc, argv)) != -1) {
		if (o == OPT_MAN)
			cli_man(stdout, commands, global_opts, PMUOS_VERSION);
		else
			cli_bash_completion(stdout, commands, global_opts);
		return 0;
	}
	if (optind >= argc) {
		cli_help_all(stdout, commands, global_opts);
		return 0;
	}
	for (const struct cli_cmd *cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, argv[optind])) {
			cli_help_cmd(stdout, cmd);
			return 0;
		}
	fprintf(stderr, "pmuctl: help %s: no such command (pmuctl --help lists them)\n", argv[optind]);
	return 2;
}

static int cmd_boot_args(struct card *c, int argc, char **argv)
{
	(void)c;
	while (cli_next(argc, argv) != -1) /* the table stores every option */
		;
	if (argc - optind > 1)
		return usage_arg("one image at a time; unexpected argument", argv[optind + 1]);
	return cmd_boot(card_name, optind < argc ? argv[optind] : "build/pmuos.bzImage", boot_opt.cmdline,
			(unsigned)boot_opt.timeout_s);
}

static const struct cli_cmd commands[] = {
	{ .name = "info", .card = CLI_CARD, .args = "", .opts = no_opts, .run = cmd_info,
	  .help = "the card: CPUs, TSC, PMU backend, whether counts are exact, doorbell" },
	{ .name = "events", .card = CLI_NO_CARD, .args = "[PATTERN]", .opts = events_opts, .run = cmd_events,
	  .help = "the KNC events libpfm4 knows (names holding PATTERN, in any case)" },
	{ .name = "list", .card = CLI_NO_CARD, .args = "[PATTERN]", .opts = events_opts, .run = cmd_events,
	  .help = "perf's name for events" },
	{ .name = "stat", .card = CLI_CARD, .program = 1, .args = "-- PROGRAM.elf [ARGS]", .opts = stat_opts, .run = cmd_stat,
	  .help = "count events while the program runs, as perf stat", .without_card = stat_lists_metrics,
	  .more = stat_more },
	{ .name = "record", .card = CLI_CARD, .program = 1, .args = "-- PROGRAM.elf [ARGS]", .opts = record_opts, .run = cmd_record,
	  .help = "sample every PERIOD events into a file, as perf record" },
	{ .name = "report", .card = CLI_NO_CARD, .args = "", .opts = report_opts, .run = cmd_report,
	  .help = "the hottest functions of a recording" },
	{ .name = "annotate", .card = CLI_NO_CARD, .args = "FUNC", .opts = annotate_opts, .run = cmd_annotate,
	  .help = "the source lines of function FUNC of a recording with their shares of its samples" },
	{ .name = "run", .card = CLI_CARD, .program = 1, .args = "PROGRAM.elf [ARGS]", .opts = run_opts, .run = cmd_run,
	  .help = "upload and run a program, show its output, exit with its status",
	  .more = "Output streams ([rank N] before each line when there are several instances). Ctrl-C (or any "
		  "signal that ends pmuctl) ends the program on the card; pmuctl then exits with 128 + the signal." },
	{ .name = "ping", .card = CLI_CARD, .args = "[N [GAP_MS]]", .opts = no_opts, .run = cmd_ping,
	  .help = "N info round trips (1 to 1000000, default 100), GAP_MS (0 to 1000) apart: median and p99 latency" },
	{ .name = "reset", .card = CLI_CARD, .args = "", .opts = reset_opts, .run = cmd_reset,
	  .help = "warm reset of the card, or INIT-SIPI-SIPI of one AP", .without_card = reset_without_mailbox },
	{ .name = "boot", .card = CLI_CARD_NAME, .args = "[IMAGE]", .opts = boot_opts, .run = cmd_boot_args,
	  .help = "reset a card (sim:NAME or pci:BDF), boot IMAGE (build/pmuos.bzImage), wait until it is READY" },
	{ .name = "console", .card = CLI_CARD, .args = "", .opts = no_opts, .run = cmd_console,
	  .help = "the card's shell, a line at a time, through the mailbox" },
	{ .name = "help", .card = CLI_NO_CARD, .args = "[COMMAND]", .opts = help_opts, .run = cmd_help,
	  .help = "this list, or a command's options" },
	{ 0 },
};

int main(int argc, char **argv)
{
	enum { GLOBALS = sizeof(global_opts) / sizeof(*global_opts) - 1 };
	struct option longs[GLOBALS + 1];
	int o;

	if (getenv("PMUOS_CARD") && *getenv("PMUOS_CARD"))
		card_name = getenv("PMUOS_CARD");
	for (int i = 0; i < GLOBALS; i++)
		longs[i] = (struct option){ global_opts[i].name, global_opts[i].arg ? required_argument : no_argument,
					    NULL, global_opts[i].key };
	longs[GLOBALS] = (struct option){ 0 };
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
		switch (o) {
		case OPT_CARD: card_name = optarg; break;
		case OPT_STALE: card_stale_s = cli_number("--stale-after", optarg, 1, 3600); break;
		case OPT_VERSION: printf("pmuctl %s\n", PMUOS_VERSION); return 0;
		case 'h': cli_help_all(stdout, commands, global_opts); return 0;
		default:
			fprintf(stderr, "pmuctl: %s '%s' (pmuctl --help lists the options)\n",
				o == ':' || optopt == OPT_CARD || optopt == OPT_STALE ? "this option needs an argument:" : "unknown option",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		cli_help_all(stderr, commands, global_opts);
		return 2;
	}
	for (const struct cli_cmd *cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, argv[optind]))
			return cli_run(cmd, argc - optind, argv + optind);
	fprintf(stderr, "pmuctl: unknown command '%s' (pmuctl --help lists the commands)\n", argv[optind]);
	return 2;
}
