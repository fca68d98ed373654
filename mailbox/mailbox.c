/*
 * The mailbox on the card: its layout in shared memory and the rings; the
 * serving CPU (service.c) takes requests and publishes answers through the
 * primitives at the end. See mailbox/mailbox.h.
 */
#include "mailbox/internal.h"
#include "kernel/console.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "platform/platform.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "arch/sync.h"
#include "arch/tsc.h"
#include "kernel/idle.h"
#include "pmu/pmu.h"

uint64_t mbox_capabilities(void)
{
	return (pmu_counts_exact() ? MBOX_CAP_EXACT : 0) | (pmu_counts_own_thread() ? MBOX_CAP_OWN_THREAD : 0) |
	       (pmu_plugin_present() ? MBOX_CAP_MODEL_CYCLES : 0);
}

/*
 * The card's own view of the mailbox. The layout is decided here once and
 * never read back from shared memory, and the indices the card produces
 * (request tail, response head, sample, output and console heads) are kept
 * here and only published: whatever a host writes into the mailbox, the card
 * reads and writes only inside it (issue 9).
 */
struct mbox_header *mbox_hdr;
static struct mbox_ring_ctl *req_ctl, *resp_ctl;
static struct mbox_request *req_ring;
static struct mbox_response *resp_ring;
static uint8_t *console_ring, *upload;
static struct mbox_sample_ring *sample_rings;
static struct mbox_output_ring *output_rings;
static uint32_t req_tail, resp_head;
static uint32_t sample_head[MAX_CPUS];
static uint64_t output_head[MBOX_OUTPUT_RINGS], console_head;

/* The head moves past a sample and its chain at once: the host never sees half a chain. */
static void publish_sample(struct mbox_sample_ring *r, uint32_t cpu, uint32_t head)
{
	smp_mb();
	sample_head[cpu] = head;
	WRITE_ONCE(r->head, head);
}

/* A chain's frames in the `slots` - 1 slots after its sample at h, zero-padded. */
static void __attribute__((noinline)) put_chain(struct mbox_sample_ring *r, uint32_t cpu, uint32_t h, uint32_t slots,
						uint32_t nframes, const uint64_t *chain)
{
	for (uint32_t k = 1; k < slots; k++) {
		uint64_t *w = (uint64_t *)&r->slot[(h + k) % MBOX_SAMPLE_SLOTS];
		for (uint32_t i = 0; i < PMU_FRAMES_PER_SLOT; i++) {
			uint32_t j = (k - 1) * PMU_FRAMES_PER_SLOT + i;
			w[i] = j < nframes ? chain[j] : 0;
		}
	}
	publish_sample(r, cpu, h + slots);
}

/*
 * The sample, then its chain in the slots after it (include/pmuos/sample.h).
 * One producer per ring (the CPU's own PMI, interrupts off): no lock. A
 * sample without a chain is a copy and a publish, without a frame.
 */
void mailbox_sample(const struct pmu_sample *s, const uint64_t *chain)
{
	if (!sample_rings)
		return;
	struct mbox_sample_ring *r = &sample_rings[s->cpu];
	uint32_t h = sample_head[s->cpu], slots = s->nframes ? 1 + PMU_CHAIN_SLOTS(s->nframes) : 1;

	if (h - READ_ONCE(r->tail) > MBOX_SAMPLE_SLOTS - slots) {
		r->lost++;
		return;
	}
	r->slot[h % MBOX_SAMPLE_SLOTS] = *s;
	if (slots > 1)
		put_chain(r, s->cpu, h, slots, s->nframes, chain);
	else
		publish_sample(r, s->cpu, h + 1);
}

uint32_t mailbox_output_open(uint32_t task, uint32_t launch, uint32_t rank, uint32_t nranks)
{
	static uint32_t next;

	if (!output_rings)
		return MBOX_NO_RING;
	uint32_t i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % MBOX_OUTPUT_RINGS;
	struct mbox_output_ring *r = &output_rings[i];
	r->task = 0; /* the host ignores the ring while it changes hands */
	smp_mb();
	r->launch = launch;
	r->rank = rank;
	r->nranks = nranks;
	output_head[i] = 0;
	r->head = 0;
	smp_mb();
	WRITE_ONCE(r->task, task);
	return i;
}

void mailbox_output(uint32_t ring, const char *s, size_t n)
{
	if (!output_rings || ring >= MBOX_OUTPUT_RINGS)
		return;
	struct mbox_output_ring *r = &output_rings[ring];
	uint64_t h = output_head[ring];

	for (size_t i = 0; i < n; i++)
		r->data[(h + i) % MBOX_OUTPUT_SIZE] = s[i];
	smp_mb();
	output_head[ring] = h + n;
	WRITE_ONCE(r->head, h + n);
}

/* Console output goes to the host as well (`pmuctl console`, program output); under the console lock. */
static void console_to_host(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		console_ring[(console_head + i) % MBOX_CONSOLE_SIZE] = s[i];
	console_head += n;
	smp_mb();
	mbox_hdr->console_head = console_head;
}

bool mailbox_layout(uint64_t base, uint64_t size)
{
	const char *where = size ? "card memory (pmuos.mbox)" : "shared memory";

	pmu_set_sample_sink(mailbox_sample);
	if (!size && !platform_shared_memory(0, &base, &size)) {
		kprintf("mailbox: no memory shared with the host; host tools cannot reach this card\n");
		return false;
	}
	uint32_t req_off = 8192, resp_off = ALIGN_UP(req_off + MBOX_REQ_SLOTS * sizeof(struct mbox_request) + 4096, 4096);
	uint32_t console_off = ALIGN_UP(resp_off + MBOX_RESP_SLOTS * sizeof(struct mbox_response), 4096);
	uint32_t upload_off = console_off + MBOX_CONSOLE_SIZE;
	uint32_t output_off = upload_off + MBOX_UPLOAD_SIZE;
	uint32_t samples_off = output_off + MBOX_OUTPUT_RINGS * sizeof(struct mbox_output_ring);
	uint64_t need = samples_off + (uint64_t)cpu_count * sizeof(struct mbox_sample_ring);
	if (size < MBOX_MIN_SIZE || size < need || (size & (size - 1))) {
		kprintf("mailbox: shared memory of %lu bytes is not a power of two of at least %lu; not used\n",
			size, MAX(need, (uint64_t)MBOX_MIN_SIZE));
		return false;
	}
	if (!paging_map_identity(base, size, false)) {
		kprintf("mailbox: out of memory mapping the shared memory\n");
		return false;
	}
	mbox_hdr = (struct mbox_header *)base;
	uint32_t boots = mbox_hdr->magic == MBOX_MAGIC ? mbox_hdr->boot_count : 0; /* a warm reset keeps the memory */
	memset(mbox_hdr, 0, need);
	mbox_hdr->boot_count = boots + 1;
	mbox_hdr->magic = MBOX_MAGIC;
	mbox_hdr->version = MBOX_VERSION;
	mbox_hdr->state = MBOX_BOOTING;
	mbox_hdr->size = size;
	mbox_hdr->tsc_hz = tsc_hz;
	mbox_hdr->cpu_count = cpu_count;
	mbox_hdr->cpus_online = smp_online_count();
	mbox_hdr->capabilities = mbox_capabilities();
	strlcpy(mbox_hdr->backend, pmu_backend_name(), sizeof(mbox_hdr->backend));
	strlcpy(mbox_hdr->pmu, pmu_description()->pfm, sizeof(mbox_hdr->pmu));
	strlcpy(mbox_hdr->kernel_version, PMUOS_VERSION, sizeof(mbox_hdr->kernel_version));
	mbox_hdr->req_ctl_off = req_off - 64;
	mbox_hdr->req_off = req_off;
	mbox_hdr->resp_ctl_off = resp_off - 64;
	mbox_hdr->resp_off = resp_off;
	mbox_hdr->console_off = console_off;
	mbox_hdr->upload_off = upload_off;
	mbox_hdr->samples_off = samples_off;
	mbox_hdr->output_off = output_off;
	upload = (uint8_t *)(base + upload_off);
	output_rings = (struct mbox_output_ring *)(base + output_off);
	sample_rings = (struct mbox_sample_ring *)(base + samples_off);
	console_ring = (uint8_t *)(base + console_off);
	req_ctl = (struct mbox_ring_ctl *)(base + req_off - 64);
	resp_ctl = (struct mbox_ring_ctl *)(base + resp_off - 64);
	req_ring = (struct mbox_request *)(base + req_off);
	resp_ring = (struct mbox_response *)(base + resp_off);
	console_tee(console_to_host);
	kprintf("mailbox: %lu KiB of %s at %#lx\n", size >> 10, where, base);
	return true;
}

void mailbox_ready(void)
{
	if (mbox_hdr)
		mbox_hdr->state = MBOX_READY;
}

const uint8_t *mailbox_upload(void)
{
	return upload;
}

struct mbox_response *mailbox_request_peek(struct mbox_request *req)
{
	uint32_t head = READ_ONCE(req_ctl->head);

	if (head == req_tail)
		return NULL;
	if (head - req_tail > MBOX_REQ_SLOTS) {
		/* Not a ring state; skipped unanswered, response n still answering request n. */
		kprintf("mailbox: request ring head %u is %u slots past the card's %u; skipped\n", head,
			head - req_tail, req_tail);
		resp_head += head - req_tail;
		req_tail = head;
		WRITE_ONCE(req_ctl->tail, req_tail);
		WRITE_ONCE(resp_ctl->head, resp_head);
		return NULL;
	}
	/* One response slot per request: serve only while the host has room for the answer. */
	if (resp_head - READ_ONCE(resp_ctl->tail) >= MBOX_RESP_SLOTS)
		return NULL;
	memcpy(req, &req_ring[req_tail % MBOX_REQ_SLOTS], sizeof(*req));
	smp_mb();
	return &resp_ring[resp_head % MBOX_RESP_SLOTS];
}

void mailbox_request_take(void)
{
	WRITE_ONCE(req_ctl->tail, ++req_tail);
}

void mailbox_response_publish(void)
{
	smp_mb();
	WRITE_ONCE(resp_ctl->head, ++resp_head);
}
