/* pmuctl's commands (one file per group) and what they share (host/pmuctl.c). */
#ifndef HOST_PMUCTL_H
#define HOST_PMUCTL_H

#include <stdint.h>
#include "host/mbox.h"
#include "lib/cpuset.h"

#define CALL_MS 5000  /* how long pmuctl waits for an answer, ms */
#define MAX_EVENTS MBOX_MUX_MAX  /* stat: more than the 2 counters are time-sliced (multiplexed) */
#define PING_DEFAULT 100
#define PING_MAX 1000000 /* round trips: 8 MB of times */
#define PING_GAP_MAX 1000 /* ms between two round trips */

extern const char *card_name;       /* --card NAME|PATH */
extern struct mbox_response resp;   /* the last answer (96 KiB: not on the stack) */

/* pmuctl.c: the usage text on stderr; returns 2, the exit status for bad arguments. */
int usage(void);

/* pmuctl.c: "pmuctl: WHAT: <the status named>" on stderr, then exit(1). */
void die_status(const struct card *c, const char *what, int st) __attribute__((noreturn));

/* pmuctl.c: card_call with pmuctl's timeout (CALL_MS) and an optional CPU set. */
int call(struct card *c, uint16_t op, const struct cpuset *set, const void *p, uint32_t len,
	 struct mbox_response *r);

/* pmuctl.c: -C CPUS ("1-3,8") against the card's CPUs; exits with status 2 naming the bad part. */
void parse_cpus(struct card *c, const char *s, struct cpuset *set);

/* events.c: libpfm4 with the knc PMU; exits if it cannot. */
void pfm_setup(void);
/* events.c: EvtSel without EN/INT for a libpfm4 event string; exits naming the closest events if unknown. */
uint32_t encode(const char *ev);

/* run.c: what the command adds to the progress line while a program runs (record: samples so far). */
extern char progress_note[64];
/* run.c: called while a program runs, and once after it ended (stat -I prints, record drains here). */
extern void (*while_running)(struct card *c, const struct cpuset *set);
/* run.c: uploads argv[0] and runs it with its arguments on `set`; returns its exit status. */
int run_program(struct card *c, const struct cpuset *set, int argc, char **argv);

/* The commands: each returns pmuctl's exit status. */
int cmd_events(const char *pattern);
int cmd_info(struct card *c);
int cmd_ping(struct card *c, const char *n, const char *gap_ms);
int cmd_reset(struct card *c, int argc, char **argv);
int cmd_run(struct card *c, int argc, char **argv);
int cmd_console(struct card *c);
int cmd_stat(struct card *c, int argc, char **argv);
/* stat.c: whether the arguments (from "stat" on) are just "stat -M list", which needs no card. */
int stat_lists_metrics(int argc, char **argv);
int cmd_record(struct card *c, int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
