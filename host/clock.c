/* The host's monotonic clock; see host/clock.h. */
#define _GNU_SOURCE
#include "host/clock.h"

#include <time.h>

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}
