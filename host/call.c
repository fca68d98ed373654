/* What every command does with its card: requests, their failures, -C; see host/call.h. */
#include "host/call.h"

#include <stdio.h>
#include <stdlib.h>

#include "host/progress.h"

struct mbox_response resp;

/* lib/cpuset.c, built for the host with k_ names (host/host.mk). */
bool k_cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen);

void die_status(const struct card *c, const char *what, int st)
{
	progress_clear();
	fprintf(stderr, "pmuctl: %s: %s\n", what, card_strerror(c, st));
	/* A value the card's PMU refused (its verdict) came from the command line: bad arguments, as pmuctl's own checks. */
	exit(c->verdict[0] && (st == MBOX_E_RANGE || st == MBOX_E_EVENT) ? 2 : 1);
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

