/* pmuctl's commands (one file per group), for the command table in host/pmuctl.c. */
#ifndef HOST_PMUCTL_H
#define HOST_PMUCTL_H

#include <signal.h>
#include <stdint.h>
#include "host/call.h"
#include "host/cli.h"

#define MAX_EVENTS MBOX_MUX_MAX  /* stat: more than the 2 counters are time-sliced (multiplexed) */
#define PING_DEFAULT 100
#define PING_MAX 1000000 /* round trips: 8 MB of times */
#define PING_GAP_MAX 1000 /* ms between two round trips */

/* pfm.c (host/pfm.h): EvtSel without EN/INT for a libpfm4 event string; exits naming the closest events if unknown. */
uint32_t encode(const char *ev);

/* launch.c: what the command adds to the progress line while a program runs (record: samples so far). */
extern char progress_note[64];
/* launch.c: called while a program runs, and once after it ended (stat -I prints, record drains here). */
extern void (*while_running)(struct card *c, const struct cpuset *set);
/*
 * launch.c: uploads argv[0] and runs it with its arguments on `set`, flags
 * MBOX_RUN_* (MBOX_RUN_THREADS: one process, --threads); returns its exit
 * status (0-255, 128 + signal). Exits naming the failure if the card refuses it.
 */
int run_program(struct card *c, const struct cpuset *set, int argc, char **argv, uint32_t flags);
/*
 * launch.c: the tasks of run_program's launch as the card last answered
 * (struct mbox_task each); once it returned, as they ended: every thread the
 * process made (host/rings.h launch_tids).
 */
extern struct mbox_response launch_tasks;
/* --threads of run, stat and record, `key` the command's own long-only value: MBOX_RUN_THREADS when given. */
#define THREADS_OPT(key, flag_ptr)                                                                                  \
	{ "threads", key, NULL, "one process whose threads may use the CPUs of -C (its main thread on the first; "     \
	  "each thread it creates on the next CPU no thread of it holds)", .flag = flag_ptr }
/*
 * launch.c: the signal that should end what pmuctl waits for on the card
 * (Ctrl-C, a closed pipe, kill), 0 if none came; on_stop_signal, the
 * handler that notes it (run_program's, and console's for its line).
 */
extern volatile sig_atomic_t stop_signal;
void on_stop_signal(int sig);

/* The commands, as struct cli_cmd's run (host/cli.h): each returns pmuctl's exit status. */
int cmd_events(struct card *c, int argc, char **argv);
int cmd_info(struct card *c, int argc, char **argv);
int cmd_ping(struct card *c, int argc, char **argv);
int cmd_reset(struct card *c, int argc, char **argv);
int cmd_run(struct card *c, int argc, char **argv);
int cmd_console(struct card *c, int argc, char **argv);
int cmd_stat(struct card *c, int argc, char **argv);
int cmd_record(struct card *c, int argc, char **argv);
int cmd_report(struct card *c, int argc, char **argv);
int cmd_annotate(struct card *c, int argc, char **argv);
/* stat.c: whether the arguments (from "stat" on) are just "stat -M list", which needs no card. */
int stat_lists_metrics(int argc, char **argv);
/* info.c: whether reset's arguments ask for a warm reset of a card with registers (host/boot.c's, no mailbox). */
int reset_without_mailbox(int argc, char **argv);

/* Each command's options (the command table's), in the command's file. */
extern const struct cli_opt events_opts[], stat_opts[], record_opts[], report_opts[], annotate_opts[], run_opts[], reset_opts[];
/* stat's paragraph for help and the man page. */
extern const char stat_more[];

#endif
