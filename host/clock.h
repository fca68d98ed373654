/* The host's monotonic clock, read in one place (CLOCK_MONOTONIC, clock_gettime(2)). */
#ifndef HOST_CLOCK_H
#define HOST_CLOCK_H

#include <stdint.h>

/* Microseconds on the monotonic clock (since an arbitrary start; never goes back). */
uint64_t now_us(void);

/* The same clock in milliseconds and in seconds. */
static inline uint64_t now_ms(void) { return now_us() / 1000; }
static inline double now_s(void) { return now_us() / 1e6; }

#endif
