/* pmuctl info, ping and reset: the card itself. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cardtext.h"
#include "host/boot.h"
#include "host/doorbell.h"
#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/rings.h"

int cmd_info(struct card *c, int argc, char **argv)
{
	if (argc > 1)
		return usage_arg("unexpected argument", argv[1]);
	int st = call(c, MBOX_OP_INFO, NULL, NULL, 0, &resp);
	if (st != MBOX_OK)
		die_status(c, "info", st);
	struct mbox_info *i = (struct mbox_info *)resp.payload;
	printf("card       %s\n", c->path);
	printf("kernel     pmuos ");
	print_card_text(stdout, i->kernel_version, sizeof(i->kernel_version));
	putchar('\n');
	printf("cpus       %u (%u online)\n", i->cpu_count, i->cpus_online);
	printf("tsc        %.3f MHz\n", i->tsc_hz / 1e6);
	printf("backend    ");
	print_card_text(stdout, i->backend, sizeof(i->backend));
	putchar('\n');
	printf("exact      %s\n", i->capabilities & MBOX_CAP_EXACT ? "yes" : "no");
	printf("per-thread %s\n", i->capabilities & MBOX_CAP_OWN_THREAD ? "yes" :
	       "no: with programs on several CPUs each count includes the others' (no QEMU plugin)");
	printf("heartbeat  %llu\n", (unsigned long long)c->hdr->heartbeat);
	/* The service's transport, as the card reports it in the header (include/pmuos/mailbox.h). */
	if (!(c->hdr->capabilities & MBOX_CAP_DOORBELL))
		printf("doorbell   no: the card polls\n");
	else if (!c->bell)
		printf("doorbell   yes (card peer %u), not used: pmuctl polls\n", c->hdr->card_peer);
	else
		printf("doorbell   yes (card peer %u, pmuctl peer %u), %u rings reached the card, the last answered "
		       "%u TSC ticks after its interrupt\n", c->hdr->card_peer, doorbell_peer(c->bell), c->hdr->doorbells,
		       c->hdr->ring_ticks);
	uint32_t us = c->hdr->poll_us;
	if (us)
		printf("poll       every %u us (%u timer polls)\n", us, c->hdr->timer_polls);
	else
		printf("poll       off: no poll timer armed (%u timer polls)\n", c->hdr->timer_polls);
	return 0;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * `pmuctl ping [N [GAP_MS]]`: N INFO round trips (PING_MAX at most), GAP_MS
 * apart (PING_GAP_MAX at most; a card's idle CPUs halt meanwhile); prints
 * the median and 99th percentile in microseconds.
 */
int cmd_ping(struct card *c, int argc, char **argv)
{
	const char *arg = argc > 1 ? argv[1] : NULL, *gap_arg = argc > 2 ? argv[2] : NULL;
	char *end;
	long n = arg ? strtol(arg, &end, 10) : PING_DEFAULT, gap = 0;

	if (arg && (*end || end == arg || n < 1 || n > PING_MAX)) {
		fprintf(stderr, "pmuctl: ping %s: N is 1 to %d round trips\n", arg, PING_MAX);
		return 2;
	}
	if (gap_arg && (gap = strtol(gap_arg, &end, 10), *end || end == gap_arg || gap < 0 || gap > PING_GAP_MAX)) {
		fprintf(stderr, "pmuctl: ping %s %s: GAP_MS is 0 to %d milliseconds\n", arg, gap_arg, PING_GAP_MAX);
		return 2;
	}
	if (argc > 3)
		return usage_arg("unexpected argument", argv[3]);
	double *t = calloc(n, sizeof(*t));
	if (!t) {
		fprintf(stderr, "pmuctl: ping: no memory for %ld round trip times\n", n);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (gap)
			usleep(gap * 1000);
		double t0 = now_s();
		int st = call(c, MBOX_OP_INFO, NULL, NULL, 0, &resp);
		t[i] = (now_s() - t0) * 1e6;
		if (st != MBOX_OK)
			die_status(c, "info", st);
	}
	qsort(t, n, sizeof(*t), by_double);
	printf("info round trips: %ld, median %.1f us, p99 %.1f us\n", n, t[n / 2], t[(n * 99) / 100]);
	free(t);
	return 0;
}

enum { OPT_WARM = 256, OPT_INIT };

const struct cli_opt reset_opts[] = {
	{ "warm", OPT_WARM, NULL, "warm reset: every PMU register to 0, then READY again (a card with registers, "
				  "sim: or pci:, boots the image it kept in card memory again)" },
	{ "init", OPT_INIT, "CPU", "INIT-SIPI-SIPI one AP; its PMU state is kept and reported" },
	{ 0 },
};

/* reset's one option: OPT_WARM, or OPT_INIT with *cpu set; exits with usage if not exactly one. */
static int reset_choice(int argc, char **argv, const char **cpu)
{
	int o, what = 0, n = 0;

	while ((o = cli_next(argc, argv)) != -1) {
		what = o;
		*cpu = optarg;
		n++;
	}
	if (optind < argc)
		exit(usage_arg("unexpected argument", argv[optind]));
	if (n != 1)
		exit(usage_arg(n ? "--warm and --init together: give one" : "give --warm or --init CPU", NULL));
	return what;
}

int reset_without_mailbox(int argc, char **argv)
{
	const char *cpu;

	optind = 0;
	return reset_choice(argc, argv, &cpu) == OPT_WARM && card_has_registers(card_name);
}

int cmd_reset(struct card *c, int argc, char **argv)
{
	const char *cpu_arg = NULL;
	int what = reset_choice(argc, argv, &cpu_arg);

	if (!c)
		return cmd_card_reset(card_name);
	uint64_t from = c->hdr->console_head;
	if (what == OPT_WARM) {
		uint32_t boots = c->hdr->boot_count;
		int st = call(c, MBOX_OP_RESET_WARM, NULL, NULL, 0, &resp);
		/*
		 * A pmuctl that looked only after the card had answered and begun
		 * to boot again (a busy host) sees the reset it asked for.
		 */
		if (st != MBOX_OK && st != CARD_RESET)
			die_status(c, "reset", st);
		/*
		 * The card boots again and lays the mailbox out anew with the next
		 * boot_count, then says READY. (A heartbeat lower than before is no
		 * sign: the new boot's passes the old one as soon as it has served
		 * as long, and a host that looked too late waited here for ever.)
		 */
		double end = now_s() + 120;
		while (!(c->hdr->magic == MBOX_MAGIC && c->hdr->state == MBOX_READY && c->hdr->boot_count != boots)) {
			if (now_s() > end) {
				progress_clear();
				fprintf(stderr, "pmuctl: the card did not come back within 120 s of the reset\n");
				return 1;
			}
			progress("pmuctl: waiting for the card to boot again: %.0f s", now_s() + 120 - end);
			usleep(10000);
		}
		progress_clear();
		printf("card %s: warm reset done, READY again\n", c->path);
		return 0;
	}
	{
		char *end;
		unsigned long cpu = strtoul(cpu_arg, &end, 0);
		if (*end || cpu >= c->cpu_count) {
			fprintf(stderr, "pmuctl: --init %s: not a CPU of this card (0-%u)\n", cpu_arg,
				c->cpu_count - 1);
			return 2;
		}
		uint32_t v = cpu;
		int st = card_call(c, MBOX_OP_CPU_INIT, NULL, &v, sizeof(v), &resp, 10000);
		console_drain(c, &from, stdout);
		if (st != MBOX_OK)
			die_status(c, cpu == 0 ? "reset --init 0 (the BSP runs the card; INIT reaches APs)" : "reset --init", st);
		return 0;
	}
}
