/* pmuctl info: the card, its PMU backend, its mailbox transport. */
#include <stdio.h>

#include "host/cardtext.h"
#include "host/ivshmem_peer.h"
#include "host/pmuctl.h"

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
	printf("pmu        ");
	print_card_text(stdout, i->pmu, sizeof(i->pmu));
	if (i->pmu_version)
		printf(", version %u", i->pmu_version);
	printf(": %u counters of %u bits per thread", i->counters, i->counter_bits);
	if (i->fixed)
		printf(", %u fixed of %u bits in Ring 3", i->fixed, i->fixed_bits); /* pmu_fixed_setup */
	printf("%s\n", i->pmu_flags & MBOX_PMU_SPFLT ? ", SPFLT" : ", no SPFLT");
	printf("exact      %s\n", i->capabilities & MBOX_CAP_EXACT ? "yes" : "no");
	printf("per-thread %s\n", i->capabilities & MBOX_CAP_OWN_THREAD ? "yes" :
	       "no: with programs on several CPUs each count includes the others' (no QEMU plugin)");
	printf("cycles     %s\n", i->capabilities & MBOX_CAP_MODEL_CYCLES ?
	       "the QEMU plugin's KNC timing model (docs/design.md §11); the TSC is QEMU's -icount virtual time" :
	       "the PMU's; in QEMU the model's, one per instruction (the timing model needs the plugin and KNC's PMU)");
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
