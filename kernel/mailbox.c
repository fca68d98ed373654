/* The mailbox transport on the card; see kernel/mailbox.h. */
#include "kernel/mailbox.h"
#include "kernel/console.h"
#include "kernel/lib.h"
#include "kernel/paging.h"
#include "kernel/pci.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/sync.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "pmu/pmu.h"

#define IVSHMEM_VENDOR 0x1af4
#define IVSHMEM_DEVICE 0x1110
#define IVSHMEM_BAR    2 /* the shared memory */

static struct mbox_header *hdr;
static struct mbox_ring_ctl *req_ctl, *resp_ctl;
static struct mbox_request *req_ring;
static struct mbox_response *resp_ring;
static struct timer heartbeat;

static void beat(struct timer *t)
{
	hdr->heartbeat++;
	hdr->cpus_online = smp_online_count();
	timer_arm(t, t->deadline + MBOX_HEARTBEAT_US * (tsc_hz / 1000000), beat, NULL);
}

void mailbox_init(void)
{
	struct pci_dev d;
	uint64_t base, size;

	if (!pci_find(IVSHMEM_VENDOR, IVSHMEM_DEVICE, &d) || !pci_mem_bar(&d, IVSHMEM_BAR, &base, &size)) {
		kprintf("mailbox: no ivshmem device; host tools cannot reach this card\n");
		return;
	}
	uint32_t req_off = 8192, resp_off = ALIGN_UP(req_off + MBOX_REQ_SLOTS * sizeof(struct mbox_request) + 4096, 4096);
	uint64_t need = resp_off + MBOX_RESP_SLOTS * sizeof(struct mbox_response);
	if (size < MBOX_MIN_SIZE || size < need || (size & (size - 1))) {
		kprintf("mailbox: ivshmem BAR of %lu bytes is not a power of two of at least %lu; not used\n",
			size, MAX(need, (uint64_t)MBOX_MIN_SIZE));
		return;
	}
	if (!paging_map_identity(base, size, false)) {
		kprintf("mailbox: out of memory mapping the ivshmem BAR\n");
		return;
	}
	hdr = (struct mbox_header *)base;
	memset(hdr, 0, need);
	hdr->magic = MBOX_MAGIC;
	hdr->version = MBOX_VERSION;
	hdr->state = MBOX_BOOTING;
	hdr->size = size;
	hdr->tsc_hz = tsc_hz;
	hdr->cpu_count = cpu_count;
	hdr->cpus_online = smp_online_count();
	hdr->capabilities = pmu_counts_exact() ? MBOX_CAP_EXACT : 0;
	strlcpy(hdr->backend, pmu_backend_name(), sizeof(hdr->backend));
	strlcpy(hdr->kernel_version, PMUOS_VERSION, sizeof(hdr->kernel_version));
	hdr->req_ctl_off = req_off - 64;
	hdr->req_off = req_off;
	hdr->resp_ctl_off = resp_off - 64;
	hdr->resp_off = resp_off;
	req_ctl = (struct mbox_ring_ctl *)(base + hdr->req_ctl_off);
	resp_ctl = (struct mbox_ring_ctl *)(base + hdr->resp_ctl_off);
	req_ring = (struct mbox_request *)(base + req_off);
	resp_ring = (struct mbox_response *)(base + resp_off);
	timer_arm(&heartbeat, rdtsc(), beat, NULL);
	kprintf("mailbox: %lu KiB of ivshmem at %#lx\n", size >> 10, base);
}

void mailbox_ready(void)
{
	if (hdr)
		hdr->state = MBOX_READY;
}

static void info(struct mbox_info *out)
{
	out->cpu_count = cpu_count;
	out->cpus_online = smp_online_count();
	out->tsc_hz = tsc_hz;
	out->capabilities = hdr->capabilities;
	strlcpy(out->backend, pmu_backend_name(), sizeof(out->backend));
	strlcpy(out->kernel_version, PMUOS_VERSION, sizeof(out->kernel_version));
}

static int configure(const struct cpuset *set, int ctr, uint32_t evtsel, uint64_t period)
{
	char err[80];

	if (!evtsel)
		return pmu_unconfigure(set, ctr);
	return pmu_configure(set, ctr, evtsel, period, err, sizeof(err));
}

static int control(const struct cpuset *set, uint16_t opcode)
{
	return opcode == MBOX_OP_PMU_START ? pmu_start(set) : opcode == MBOX_OP_PMU_STOP ? pmu_stop(set)
											 : pmu_clear(set);
}

static const struct mbox_ops kernel_ops = {
	.info = info,
	.pmu_configure = configure,
	.pmu_control = control,
	.pmu_read = pmu_read,
	.counts_event = pmu_counts_event,
};

bool mailbox_poll(void)
{
	static struct mbox_request req;   /* the card's own copy */
	static struct mbox_ops ops;
	bool served = false;

	if (!hdr)
		return false;
	ops = kernel_ops;
	ops.ncpus = cpu_count;
	/* One response slot per request: serve only while the host has room for the answer. */
	while (READ_ONCE(req_ctl->tail) != READ_ONCE(req_ctl->head) &&
	       READ_ONCE(resp_ctl->head) - READ_ONCE(resp_ctl->tail) < MBOX_RESP_SLOTS) {
		uint32_t t = req_ctl->tail;
		memcpy(&req, &req_ring[t % MBOX_REQ_SLOTS], sizeof(req));
		smp_mb();
		WRITE_ONCE(req_ctl->tail, t + 1);
		uint32_t h = resp_ctl->head;
		mbox_serve(&req, &resp_ring[h % MBOX_RESP_SLOTS], &ops);
		smp_mb();
		WRITE_ONCE(resp_ctl->head, h + 1);
		served = true;
	}
	return served;
}
