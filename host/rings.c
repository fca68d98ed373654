/* Reading what the card writes without a request; see host/rings.h. */
#include "host/rings.h"
#include "host/progress.h"

void console_drain(struct card *c, uint64_t *from, FILE *out)
{
	uint64_t head = __atomic_load_n(&c->hdr->console_head, __ATOMIC_ACQUIRE);
	const uint8_t *ring = c->base + c->hdr->console_off;

	if (head - *from > MBOX_CONSOLE_SIZE)
		*from = head - MBOX_CONSOLE_SIZE;
	for (; *from < head; (*from)++)
		if (ring[*from % MBOX_CONSOLE_SIZE] != '\r')
			putc(ring[*from % MBOX_CONSOLE_SIZE], out);
	fflush(out);
}

static void out_flush(struct task_out *o, FILE *out)
{
	if (!o->len)
		return;
	progress_clear();
	if (o->nranks > 1)
		fprintf(out, "[rank %u] ", o->rank);
	fwrite(o->line, 1, o->len, out);
	o->len = 0;
}

static void out_drain(struct card *c, struct task_out *o, FILE *out)
{
	const struct mbox_output_ring *r = (const struct mbox_output_ring *)(c->base + c->hdr->output_off) + o->ring;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	if (o->gone || __atomic_load_n(&r->task, __ATOMIC_ACQUIRE) != o->task) {
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

	for (size_t i = 0; i < r->len / sizeof(*t); i++) {
		if (t[i].output_ring >= MBOX_OUTPUT_RINGS)
			continue;
		int k = 0;
		while (k < o->n && o->t[k].task != t[i].id)
			k++;
		if (k == o->n) {
			if (o->n == (int)(sizeof(o->t) / sizeof(o->t[0])))
				continue;
			o->t[o->n++] = (struct task_out){ .task = t[i].id, .ring = t[i].output_ring, .rank = t[i].rank,
							  .nranks = r->len / sizeof(*t) };
		}
		out_drain(c, &o->t[k], out);
		if (last)
			out_flush(&o->t[k], out);
	}
	fflush(out);
}

int launch_status(const struct mbox_response *r)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	int n = r->len / sizeof(*t), status = 0;

	for (int i = 0; i < n; i++) {
		if (t[i].state == MBOX_TASK_READY || t[i].state == MBOX_TASK_RUNNING)
			return -1;
		if (t[i].state == MBOX_TASK_EXITED && t[i].exit_status && !status)
			status = t[i].exit_status & 0xff;
		if (t[i].state == MBOX_TASK_FAULTED)
			status = 128 + 11;
		if (t[i].state == MBOX_TASK_KILLED && !status)
			status = 128 + 9;
	}
	return status;
}

struct mbox_sample_ring *sample_ring(struct card *c, uint32_t cpu)
{
	return (struct mbox_sample_ring *)(c->base + c->hdr->samples_off) + cpu;
}

uint64_t samples_drain(struct card *c, const struct cpuset *set, FILE *out)
{
	uint64_t n = 0;

	for (uint32_t cpu = 0; cpu < c->hdr->cpu_count; cpu++) {
		if (!(set->bits[cpu / 64] >> (cpu % 64) & 1))
			continue;
		struct mbox_sample_ring *r = sample_ring(c, cpu);
		uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		for (uint32_t t = r->tail; t != head; t++) {
			fwrite(&r->slot[t % MBOX_SAMPLE_SLOTS], sizeof(struct pmu_sample), 1, out);
			n++;
		}
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	}
	return n;
}
