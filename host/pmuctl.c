/*
 * pmuctl: drive a pmuos card from the host through its mailbox (docs/design.md §8).
 *   pmuctl [--card NAME|PATH|sim:NAME|pci:BDF] info
 *   pmuctl events [PATTERN]
 *   pmuctl [--card ...] stat [-e EV[,EV...]] [-M GROUP[,GROUP...]] [-C CPUS] [--spflt] [-I MS]
 *                            [--mux-interval MS] [-x SEP | --json] -- PROGRAM.elf [ARGS]
 *   pmuctl stat -M list
 *   pmuctl [--card ...] run [-C CPUS] PROGRAM.elf [ARGS]
 *   pmuctl [--card ...] record -e EV -c PERIOD [-C CPUS] [-g] [-o FILE] -- PROGRAM.elf [ARGS]
 *   pmuctl report [-i FILE] [--symfs DIR] [--kallsyms MAP] [--sort KEYS] [--folded | --to-perf PERF.DATA]
 *   pmuctl [--card ...] reset --warm | --init CPU
 *   pmuctl --card sim:NAME|pci:BDF boot [IMAGE] [--cmdline TEXT] [--timeout S]
 *   pmuctl [--card ...] console
 * Event names come from libpfm4 (its knc PMU); symbols from the program's ELF
 * (elfutils libelf); CPU sets are written "1-3,8". This file: the command
 * line and what the commands share; each group of commands has its file.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/boot.h"
#include "host/metrics.h"
#include "host/pmuctl.h"
#include "host/progress.h"

const char *card_name = "card0";
struct mbox_response resp;

/* lib/cpuset.c and lib/fmt.c, built for the host with k_ names (host/host.mk). */
bool k_cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen);

int usage(void)
{
	fprintf(stderr,
		"usage: pmuctl [--card NAME|PATH|sim:NAME[@BASE]|pci:BDF[@BASE]] COMMAND ...\n"
		"  info                                   the card: CPUs, PMU backend, exactness\n"
		"  events [PATTERN]                       KNC events (libpfm4)\n"
		"  stat [-e EV[,EV...]] [-M GROUP[,GROUP...]] [-C CPUS] [--spflt] [-I MS] [--mux-interval MS]\n"
		"       [-x SEP|--json] -- PROGRAM.elf [ARGS]\n"
		"                                         count events while the program runs (up to 8:\n"
		"                                         more than 2 take turns and are scaled, as perf\n"
		"                                         does); -I: the counts of every MS milliseconds;\n"
		"                                         -M: the events of metric groups, then their metrics\n"
		"  stat -M list                           the metric groups, their metrics and formulas\n"
		"  run [-C CPUS] PROGRAM.elf [ARGS]       upload, run, show its output, exit with its status\n"
		"  record -e EV -c PERIOD [-C CPUS] [-g] [-o FILE] -- PROGRAM.elf [ARGS]\n"
		"                                         sample every PERIOD events into FILE (pmuos.data);\n"
		"                                         -g: with each sample's call chain (frame pointers)\n"
		"  report [-i FILE] [--symfs DIR] [--kallsyms MAP] [--sort sym|srcline|sym,srcline]\n"
		"         [--folded | --to-perf PERF.DATA]\n"
		"                                         hottest functions of a recording; --folded: its\n"
		"                                         stacks for flame graphs; --to-perf: as perf.data;\n"
		"                                         the program from DIR; kernel symbols from MAP\n"
		"                                         (default: System.map beside pmuctl); --sort\n"
		"                                         srcline: the source lines (DWARF)\n"
		"  ping [N [GAP_MS]]                      N info round trips (1 to 1000000, default 100):\n"
		"                                         median and p99 latency; GAP_MS (0 to 1000) apart,\n"
		"                                         for a card whose CPUs halt in between\n"
		"  reset --warm | --init CPU              warm reset (PMU registers to 0; a card with registers:\n"
		"                                         RGCR, back to its bootstrap) or INIT one AP (kept)\n"
		"  boot [IMAGE] [--cmdline T] [--timeout S]  reset a card (sim:/pci:), boot IMAGE\n"
		"                                         (build/pmuos.bzImage), wait for READY\n"
		"  console                                the card's shell, a line at a time, through the mailbox\n");
	return 2;
}

void die_status(const struct card *c, const char *what, int st)
{
	progress_clear();
	fprintf(stderr, "pmuctl: %s: %s\n", what, card_strerror(c, st));
	exit(1);
}

int call(struct card *c, uint16_t op, const struct cpuset *set, const void *p, uint32_t len, struct mbox_response *r)
{
	return card_call(c, op, set ? set->bits : NULL, p, len, r, CALL_MS);
}

void parse_cpus(struct card *c, const char *s, struct cpuset *set)
{
	char err[96];

	if (!k_cpuset_parse(s, c->cpu_count, set, err, sizeof(err))) {
		fprintf(stderr, "pmuctl: -C %s: %s\n", s, err);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int i = 1;

	if (i + 1 < argc && strcmp(argv[i], "--card") == 0) {
		card_name = argv[i + 1];
		i += 2;
	}
	if (i >= argc)
		return usage();
	const char *cmd = argv[i];
	if (strcmp(cmd, "events") == 0)
		return cmd_events(i + 1 < argc ? argv[i + 1] : NULL);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - i, argv + i);
	if (strcmp(cmd, "stat") == 0 && stat_lists_metrics(argc - i, argv + i)) {
		metrics_list(stdout);
		return 0;
	}
	if (strcmp(cmd, "boot") == 0)
		return cmd_boot(card_name, argc - i, argv + i);
	if (strcmp(cmd, "reset") == 0 && i + 1 < argc && strcmp(argv[i + 1], "--warm") == 0 &&
	    card_has_registers(card_name))
		return cmd_card_reset(card_name);
	if (strcmp(cmd, "info") && strcmp(cmd, "stat") && strcmp(cmd, "run") && strcmp(cmd, "record") &&
	    strcmp(cmd, "ping") && strcmp(cmd, "reset") && strcmp(cmd, "console")) {
		fprintf(stderr, "pmuctl: unknown command '%s'\n", cmd);
		return usage();
	}
	struct card c;
	if (card_open(&c, card_name) != 0)
		return 1;
	int r = !strcmp(cmd, "info")   ? cmd_info(&c)
		: !strcmp(cmd, "ping")   ? cmd_ping(&c, i + 1 < argc ? argv[i + 1] : NULL, i + 2 < argc ? argv[i + 2] : NULL)
		: !strcmp(cmd, "stat")   ? cmd_stat(&c, argc - i, argv + i)
		: !strcmp(cmd, "record") ? cmd_record(&c, argc - i, argv + i)
		: !strcmp(cmd, "reset")  ? cmd_reset(&c, argc - i, argv + i)
		: !strcmp(cmd, "console") ? cmd_console(&c)
					 : cmd_run(&c, argc - i, argv + i);
	card_close(&c);
	return r;
}
