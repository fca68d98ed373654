/* pmuctl reset: a warm reset of the card, or INIT-SIPI-SIPI of one AP. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "host/boot.h"
#include "host/clock.h"
#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/rings.h"

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
