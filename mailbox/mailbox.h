/*
 * The card side of the host mailbox (docs/design.md §7; wire format in
 * include/pmuos/mailbox.h). One CPU holds the service (heartbeat and
 * request polling): CPU 0 in its waits while no program runs, else a CPU
 * running a task, so idle CPUs stay halted and measured counts exact. The
 * rules that move it are in mailbox/service.c.
 */
#ifndef MAILBOX_MAILBOX_H
#define MAILBOX_MAILBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/mailbox.h>
#include "lib/cpuset.h"
#include "pmu/pmu.h"

/*
 * BSP, after SMP start-up: lays out the mailbox (state BOOTING) in
 * [base, base+size) of card memory (pmuos.mbox, boot/mmap.h; identity-mapped
 * here), or with size 0 in the platform's shared memory region 0 (a PC in
 * QEMU: the ivshmem BAR). One layout either way (include/pmuos/mailbox.h).
 */
void mailbox_init(uint64_t base, uint64_t size);
/* BSP, just before the first prompt: state READY. */
void mailbox_ready(void);
/*
 * Serves the waiting requests; true if it served any. CPU 0's shell loop
 * calls it while CPU 0 holds the service, the service timer elsewhere.
 */
bool mailbox_poll(void);
/*
 * A task CPU's beat only marks a poll as due (percpu user_work); it runs
 * here, on the way back to Ring 3 with interrupts on, because serving may
 * wait for other CPUs (cross-CPU calls), and under QEMU -icount a CPU that
 * spins with interrupts off keeps a halted CPU from ever running.
 * Interrupts off on entry and on return.
 */
void mailbox_poll_due(void);
/* The calling CPU starts to run a task: it takes the heartbeat and polling over. */
void mailbox_take_service(void);
/*
 * A launch is about to start tasks on `cpu`: if CPU 0 holds the service and
 * calls this, `cpu` takes the service over at once (its beat starts, even if
 * it still runs an earlier task) and CPU 0 stops its own timer, so it does
 * not wake again while the tasks are measured. A CPU running a task
 * keeps serving (it may launch onto itself or another busy CPU).
 */
void mailbox_hand_over(uint32_t cpu);
/*
 * Its last queued task ended: if this CPU holds the service, it goes to
 * another CPU running a task, else back to CPU 0.
 */
void mailbox_return_service(void);
/* Appends a sample to its CPU's ring in the mailbox (PMI handler; no-op without a mailbox). */
void mailbox_sample(const struct pmu_sample *s, const uint64_t *chain);
/*
 * Hands the next output ring (round-robin) to task `task` of launch
 * `launch`; returns its index, or MBOX_NO_RING without a mailbox.
 */
uint32_t mailbox_output_open(uint32_t task, uint32_t launch, uint32_t rank, uint32_t nranks);
/* Appends n bytes of a task's output to its ring (no-op for MBOX_NO_RING). */
void mailbox_output(uint32_t ring, const char *s, size_t n);
/* Whether the calling CPU holds the service now. */
bool mailbox_serving_here(void);

/*
 * What the request decoder calls (kernel: the PMU driver; tests: doubles).
 * The PMU operations check their arguments themselves and answer with the
 * PMU's verdict (pmu/rules.h), which the decoder turns into a status.
 */
struct mbox_ops {
	uint32_t ncpus;
	uint64_t tsc_hz;  /* TSC ticks per second: a request's microseconds become the PMU's ticks */
	void (*info)(struct mbox_info *out);
	/* pmu_configure (pmu/pmu.h): evtsel 0 frees the counter. */
	struct pmu_result (*pmu_configure)(const struct cpuset *set, uint64_t ctr, uint32_t evtsel, uint64_t period);
	struct pmu_result (*pmu_control)(const struct cpuset *set, uint16_t opcode); /* START, STOP, CLEAR */
	enum pmu_err (*pmu_read)(uint32_t cpu, struct pmu_reading *r);
	bool (*counts_event)(uint32_t evtsel);
	struct pmu_result (*pmu_spflt)(const struct cpuset *set, uint64_t mask);
	struct pmu_result (*pmu_callchain)(const struct cpuset *set, uint32_t frames); /* pmu_set_callchain */
	struct pmu_result (*pmu_cpu_clock)(const struct cpuset *set, uint64_t ns);    /* pmu_set_cpu_clock */
	/* pmu_mux_configure: nev as the request gives it (the list holds at most MBOX_MUX_MAX); slice in TSC ticks. */
	struct pmu_result (*pmu_mux)(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel,
				     uint32_t paired, uint64_t slice_ticks);
	/*
	 * Launches the image (already copied out of the mailbox by the callee),
	 * an instance per CPU of the set, or with `threads` one process that may
	 * use them all (MBOX_RUN_THREADS); launch id or -1.
	 */
	int (*run)(const uint8_t *image, uint32_t len, int argc, char **argv, const struct cpuset *set, bool threads);
	/* Tasks of a launch into out[0..max); how many, or -1 if there is no such launch. */
	int (*status)(uint32_t launch, struct mbox_task *out, int max);
	bool (*kill)(uint32_t launch);
	/* After the answer is out: the reset (RESET_WARM). */
	void (*reset)(void);
	/* INIT-SIPI-SIPI one AP: 0, or -1 if it cannot be (the BSP, a CPU starting), -2 if it did not come back. */
	int (*cpu_init)(uint32_t cpu);
	/*
	 * Queues a shell line for CPU 0 (it runs outside the service, like a
	 * typed line) and returns at once: 0, or -1 if a host line is still
	 * queued or running (MBOX_E_AGAIN). header.shell_done gets `seq` when
	 * the line has finished.
	 */
	int (*shell)(char *line, uint32_t seq);
	/* Ctrl-C for the host's shell line: cancels it if queued, interrupts it if running. */
	void (*shell_intr)(void);
	const uint8_t *upload;  /* the upload area (shared with the host) */
	uint32_t upload_size;
};

/*
 * Checks every field of `req` and serves it through `ops`, filling `resp`
 * (seq, status, len, payload). Pure apart from the ops: `req` is the card's
 * own copy, so the host cannot change it during the checks. Never reads or
 * writes outside the two structs.
 */
void mbox_serve(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops);
/* The status that answers a PMU verdict (one table, mailbox/mailbox_proto.c); the verdict goes along (struct mbox_verdict). */
int mbox_pmu_status(enum pmu_err err);
/* True if `req` asks for a reset, which the transport performs after publishing the answer. */
bool mbox_wants_reset(const struct mbox_request *req, const struct mbox_response *resp);

#endif
