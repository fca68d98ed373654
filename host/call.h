/*
 * What every command does with its card (host/mbox.h): a request with
 * pmuctl's timeout, a failed one named and pmuctl ended, a -C CPU set
 * checked against the card.
 */
#ifndef HOST_CALL_H
#define HOST_CALL_H

#include "host/mbox.h"
#include "lib/cpuset.h"

#define CALL_MS 5000 /* how long pmuctl waits for an answer, ms */

extern struct mbox_response resp; /* the last answer (96 KiB: not on the stack) */

/* "pmuctl: WHAT: <the status named>" on stderr, then exit(1); exit(2) for a value the card's PMU refused (its verdict). */
void die_status(const struct card *c, const char *what, int st) __attribute__((noreturn));

/* card_call with pmuctl's timeout (CALL_MS) and an optional CPU set. */
int call(struct card *c, uint16_t op, const struct cpuset *set, const void *p, uint32_t len,
	 struct mbox_response *r);

/* -C CPUS ("1-3,8") against the card's CPUs; exits with status 2 naming the bad part. */
void parse_cpus(struct card *c, const char *s, struct cpuset *set);

#endif
