/* pmuctl run: upload and run a program, show its output, exit with its status. */
#include <getopt.h>

#include "host/pmuctl.h"

enum { OPT_THREADS = 256 };

static int threads;

const struct cli_opt run_opts[] = {
	{ "cpu", 'C', "CPUS", "the card CPUs it runs on, an instance each (default 1; with --threads, its threads')" },
	THREADS_OPT(OPT_THREADS, &threads),
	{ 0 },
};

int cmd_run(struct card *c, int argc, char **argv)
{
	struct cpuset set;
	const char *cpus = "1";

	while (cli_next(argc, argv) != -1)
		cpus = optarg;
	if (optind >= argc)
		return usage_arg("no program to run: give -- PROGRAM.elf [ARGS]", NULL);
	parse_cpus(c, cpus, &set);
	return run_program(c, &set, argc - optind, argv + optind, threads ? MBOX_RUN_THREADS : 0);
}
