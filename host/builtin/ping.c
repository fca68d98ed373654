/* pmuctl ping: INFO round trips, their median and 99th percentile. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/pmuctl.h"

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
