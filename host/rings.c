/* Reading what the card writes without a request; see host/rings.h. */
#include "host/rings.h"

#include <string.h>

#include "host/progress.h"

void console_drain(struct card *c, uint64_t *from, FILE *out)
{
	uint64_t head = __atomic_load_n(&c->hdr->console_head, __ATOMIC_ACQUIRE);

	if (head < *from)
		*from = head;
	if (head - *from > MBOX_CONSOLE_SIZE)
		*from = head - MBOX_CONSOLE_SIZE;
	while (*from < head) { /* runs of bytes up to a '\r' or the ring's end */
		uint64_t off = *from % MBOX_CONSOLE_SIZE, n = head - *from;
		const uint8_t *p = c->console + off;
		if (n > MBOX_CONSOLE_SIZE - off)
			n = MBOX_CONSOLE_SIZE - off;
		const uint8_t *cr = memchr(p, '\r', n);
		if (cr)
			n = cr - p;
		fwrite(p, 1, n, out);
		*from += n + (cr != NULL);
	}
	fflush(out);
}

int (*output_line_hook)(const char *line, size_t len, uint32_t cpu);

static void out_flush(struct task_out *o, FILE *out)
{
	if (!o->len)
		return;
	if (output_line_hook && output_line_hook(o->line, o->len, o->cpu)) {
		o->len = 0;
		return;
	}
	progress_clear();
	if (o->nranks > 1)
		fprintf(out, "[rank %u] ", o->rank);
	fwrite(o->line, 1, o->len, out);
	o->len = 0;
}

static void out_drain(struct card *c, struct task_out *o, FILE *out)
{
	const struct mbox_output_ring *r = &c->outputs[o->ring];
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	if (o->gone || __atomic_load_n(&r->task, __ATOMIC_ACQUIRE) != o->task || head < o->pos) {
		if (!o->gone)
			fprintf(stderr, "pmuctl: rank %u's output ring went to a newer task; its output is lost\n", o->rank);
		o->gone = 1;
		return;
	}
	if (head - o->pos > MBOX_OUTPUT_SIZE) {
		fprintf(stderr, "pmuctl: rank %u: %llu bytes of output lost (written faster than read)\n", o->rank,
			(unsigned long long)(head - o->pos - MBOX_OUTPUT_SIZE));
		o->pos = head - MBOX_OUTPUT_SIZE;
	}
	for (; o->pos < head; o->pos++) {
		char ch = r->data[o->pos % MBOX_OUTPUT_SIZE];
		o->line[o->len++] = ch;
		if (ch == '\n' || o->len == sizeof(o->line))
			out_flush(o, out);
	}
}

void outputs_drain(struct card *c, struct outputs *o, const struct mbox_response *r, int last, FILE *out)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	size_t n = r->len / sizeof(*t);
	uint32_t nranks = 1;

	for (size_t i = 0; i < n; i++) /* a threaded launch's tasks are all rank 0: no prefix */
		if (t[i].rank >= nranks)
			nranks = t[i].rank + 1;
	for (size_t i = 0; i < n; i++) {
		if (t[i].output_ring >= MBOX_OUTPUT_RINGS)
			continue;
		int k = 0;
		while (k < o->n && o->t[k].ring != t[i].output_ring) /* by ring: a process's threads share one */
			k++;
		if (k == o->n) {
			if (o->n == (int)(sizeof(o->t) / sizeof(o->t[0])))
				continue;
			o->t[o->n++] = (struct task_out){ .task = t[i].id, .ring = t[i].output_ring, .rank = t[i].rank,
							  .cpu = t[i].cpu, .nranks = nranks };
		}
		if (o->t[k].drain == o->drains + 1) /* drained at an earlier task of this answer */
			continue;
		o->t[k].drain = o->drains + 1;
		out_drain(c, &o->t[k], out);
		if (last)
			out_flush(&o->t[k], out);
	}
	o->drains++;
	fflush(out);
}

int launch_status(const struct mbox_response *r)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	size_t n = r->len / sizeof(*t);
	int status = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].state == MBOX_TASK_READY || t[i].state == MBOX_TASK_RUNNING)
			return -1;
		if (t[i].state == MBOX_TASK_EXITED && t[i].exit_status && !status && t[i].thread == 0)
			status = t[i].exit_status & 0xff;
		if (t[i].state == MBOX_TASK_FAULTED)
			status = 128 + 11;
		if (t[i].state == MBOX_TASK_KILLED && !status)
			status = 128 + 9;
	}
	return status;
}

int launch_tids(const struct mbox_response *r, int threads, uint32_t tid[CPUSET_MAX])
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	size_t n = r->len / sizeof(*t);
	int cpus = 0;

	for (size_t i = 0; i < n; i++)
		threads &= t[i].rank == 0;
	memset(tid, 0, CPUSET_MAX * sizeof(tid[0]));
	for (size_t i = 0; i < n; i++) {
		if (t[i].cpu >= CPUSET_MAX || tid[t[i].cpu])
			continue;
		tid[t[i].cpu] = PERF_PID + (threads ? t[i].thread : t[i].cpu);
		cpus += tid[t[i].cpu] != 0; /* a thread number that wraps it to 0 names none */
	}
	return cpus;
}

int samples_drain(struct card *c, const struct cpuset *set, FILE *out, uint64_t *n)
{
	int st = card_alive(c); /* a restarted card's rings start again from 0 */

	for (uint32_t cpu = 0; cpu < c->cpu_count && st == 0; cpu++) {
		if (!cpuset_has(set, cpu))
			continue;
		struct mbox_sample_ring *r = &c->samples[cpu];
		uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), tail = r->tail;
		if (head - tail > MBOX_SAMPLE_SLOTS) {
			snprintf(c->err, sizeof(c->err), "the card broke the mailbox protocol: CPU %u's sample ring "
				 "head %u is %u from its tail %u (it holds %u)", cpu, head, head - tail, tail,
				 MBOX_SAMPLE_SLOTS);
			return CARD_PROTOCOL;
		}
		while (tail != head) { /* a sample and its chain's slots; at most the ring's slots */
			struct pmu_sample s = r->slot[tail % MBOX_SAMPLE_SLOTS]; /* the card's, copied once */
			uint32_t slots = 1 + PMU_CHAIN_SLOTS(s.nframes);
			if (s.nframes > PMU_CALLCHAIN_MAX || head - tail < slots) {
				snprintf(c->err, sizeof(c->err), "the card broke the mailbox protocol: CPU %u's sample at "
					 "slot %u says it has %u frames (at most %d), %u slots of chain before the head",
					 cpu, tail, s.nframes, PMU_CALLCHAIN_MAX, head - tail - 1);
				return CARD_PROTOCOL;
			}
			fwrite(&s, sizeof(s), 1, out);
			for (uint32_t k = 1; k < slots; k++)
				fwrite(&r->slot[(tail + k) % MBOX_SAMPLE_SLOTS], sizeof(struct pmu_sample), 1, out);
			tail += slots;
			++*n;
		}
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	}
	return st;
}
