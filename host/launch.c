/* Programs on the card, as run, stat and record run them; see host/pmuctl.h run_program. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/rings.h"

char progress_note[64];
void (*while_running)(struct card *c, const struct cpuset *set);

/* The program file, checked to be an x86-64 ELF executable that fits the upload area; exits if not. */
static uint8_t *read_program(const char *path, uint32_t *len)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[MBOX_UPLOAD_SIZE + 1];

	if (!f) {
		fprintf(stderr, "pmuctl: cannot open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n > MBOX_UPLOAD_SIZE) {
		fprintf(stderr, "pmuctl: %s is too large: the card takes programs up to %u bytes\n", path,
			MBOX_UPLOAD_SIZE);
		exit(1);
	}
	/* ELF64, little-endian, x86-64 executable: the card checks the rest. */
	if (n < 64 || memcmp(buf, "\177ELF", 4) || buf[4] != 2 || buf[5] != 1 || buf[16] != 2 || buf[18] != 62) {
		fprintf(stderr, "pmuctl: %s is not a pmuos program (build it with build/bin/pmuos-cc)\n", path);
		exit(1);
	}
	*len = n;
	return buf;
}

/*
 * Following the program failed (a STATUS call, or the card while we waited):
 * pmuctl can no longer follow it. A card
 * that still serves (no answer in time, the lock kept by another process)
 * is asked once to end it, so that it does not outlive pmuctl; a card that
 * reset or panicked took it along. Says which, then exits 1.
 */
static void __attribute__((noreturn)) give_up(struct card *c, uint32_t launch, int st)
{
	char why[sizeof(c->err) + 64];

	snprintf(why, sizeof(why), "%s", card_strerror(c, st));
	progress_clear();
	if (st != CARD_TIMEOUT && st != CARD_LOCKED) {
		fprintf(stderr, "pmuctl: status: %s\n", why);
		exit(1);
	}
	int kst = call(c, MBOX_OP_KILL, NULL, &launch, sizeof(launch), &resp);
	if (kst == MBOX_OK)
		fprintf(stderr, "pmuctl: status: %s; the program was ended on the card\n", why);
	else
		fprintf(stderr, "pmuctl: status: %s; the program may still run on the card (launch %u; ending it: %s)\n",
			why, launch, card_strerror(c, kst));
	exit(1);
}

volatile sig_atomic_t stop_signal;
void on_stop_signal(int sig) { stop_signal = sig; }

struct mbox_response launch_tasks;

int run_program(struct card *c, const struct cpuset *set, int argc, char **argv, uint32_t flags)
{
	static struct outputs outs;
	uint32_t len;
	uint8_t *img = read_program(argv[0], &len);
	struct mbox_run run = { .image_len = len, .flags = flags };
	struct mbox_response *tasks = &launch_tasks; /* `resp` is every call's */
	size_t off = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = i == 0 ? (strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]) : argv[i];
		size_t n = strlen(a) + 1;
		if (argc > MBOX_RUN_ARGS || off + n > sizeof(run.args)) {
			fprintf(stderr, "pmuctl: too many or too long arguments (%d and %zu bytes at most)\n", MBOX_RUN_ARGS,
				sizeof(run.args));
			exit(2);
		}
		memcpy(run.args + off, a, n);
		off += n;
	}
	run.argc = argc;
	/*
	 * The program must not outlive us: a signal ends it on the card (and stat
	 * still prints). Caught from before the upload: one that comes while the
	 * card starts it ends it as soon as it has a launch ID.
	 */
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_stop_signal };
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
	uint64_t from = c->hdr->console_head;
	int st = card_hold(c); /* the upload area is the lock holder's */
	if (st != 0)
		die_status(c, "run", st);
	memcpy(c->upload, img, len);
	uint32_t ended = __atomic_load_n(&c->hdr->tasks_ended, __ATOMIC_ACQUIRE); /* before: an end after is seen */
	st = call(c, MBOX_OP_RUN, set, &run, sizeof(run), &resp);
	card_release(c);
	if (st != MBOX_OK) {
		console_drain(c, &from, stderr); /* the card's reason */
		die_status(c, "run", st);
	}
	/*
	 * The RUN answer names the tasks; STATUS is asked again only when a task
	 * has ended (header.tasks_ended) or a signal came, never on a timer: a
	 * request runs kernel code on the CPU that serves the mailbox, a measured
	 * one while tasks run, at host-timed points, and OS-mode counts and
	 * sample positions would differ in every run.
	 */
	struct mbox_run_answer ra;
	memcpy(&ra, resp.payload, sizeof(ra));
	uint32_t launch = ra.launch;
	tasks->len = resp.len - sizeof(ra);
	memcpy(tasks->payload, resp.payload + sizeof(ra), tasks->len);
	struct card_watch watch;
	int status, killed = 0, ask = 0;
	double t0 = now_s();
	card_watch_start(c, &watch);
	for (;;) {
		if (while_running)
			while_running(c, set);
		if (stop_signal && !killed) {
			fprintf(stderr, "pmuctl: %s: ending the program on the card\n", strsignal(stop_signal));
			if ((st = call(c, MBOX_OP_KILL, NULL, &launch, sizeof(launch), &resp)) != MBOX_OK)
				die_status(c, "kill", st);
			killed = ask = 1;
		}
		if (ask) {
			ended = __atomic_load_n(&c->hdr->tasks_ended, __ATOMIC_ACQUIRE);
			if ((st = call(c, MBOX_OP_STATUS, NULL, &launch, sizeof(launch), tasks)) != MBOX_OK)
				give_up(c, launch, st);
			ask = 0;
		}
		status = launch_status(tasks);
		outputs_drain(c, &outs, tasks, status >= 0, stdout);
		if (status >= 0)
			break;
		progress("pmuctl: %s on %d CPU(s): %.1f s%s%s", run.args, (int)(tasks->len / sizeof(struct mbox_task)),
			 now_s() - t0, progress_note[0] ? ", " : "", progress_note);
		if ((st = card_watch(c, &watch, &c->hdr->tasks_ended, ended, 20)) != 0)
			give_up(c, launch, st);
		ask = __atomic_load_n(&c->hdr->tasks_ended, __ATOMIC_ACQUIRE) != ended;
	}
	if (while_running)
		while_running(c, set);
	progress_clear();
	return stop_signal ? 128 + stop_signal : status;
}
