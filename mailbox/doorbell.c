/*
 * The mailbox's transport beside its memory: how the service learns of a
 * request and the host of an answer (docs/design.md §7). With the platform's host
 * doorbell (platform/platform.h; QEMU's ivshmem-doorbell) a ring interrupts
 * the serving CPU, the card rings the host's peer after answering, and a
 * slow poll stays as the fallback, or none (pmuos.mbox_poll=off). Without
 * one (ivshmem-plain, the mailbox in card memory, a KNC card for now) the
 * service polls: every 100 us while CPU 0 serves, every 1 ms on a CPU
 * measuring a task.
 *
 * With a doorbell, CPU 0 that has just answered (no task running) looks
 * for the host's next request for LINGER_US before it halts: a host sends
 * requests in a row (pmuctl stat, run, record), and each one found this way
 * costs no wake-up of a halted CPU, which under QEMU is the bulk of a round
 * trip (bench/mailbox.py). It halts after that; no timer is involved. Under
 * QEMU -icount the look lasts far longer in wall time than in the card's
 * (a loop that reads the TSC runs at a tenth of the virtual clock or less):
 * 100 us of the card's is a millisecond or more of a host core.
 */
#include "mailbox/internal.h"
#include "platform/platform.h"
#include "kernel/boot.h"
#include "kernel/console.h"
#include "kernel/percpu.h"
#include "kernel/trap.h"
#include "apic/apic.h"
#include "apic/regs.h"
#include "arch/sync.h"
#include "arch/tsc.h"
#include "lib/lib.h"

#define IDLE_POLL_US     100               /* no doorbell: CPU 0's poll */
#define TASK_POLL_US     MBOX_HEARTBEAT_US /* no doorbell: a task CPU's poll */
#define FALLBACK_POLL_US 10000             /* with a doorbell: a ring lost would wait this long */
#define LINGER_US        100               /* with a doorbell: CPU 0 looks for a next request this long */

static const struct host_doorbell *bell;
static bool poll_off;          /* pmuos.mbox_poll=off: the doorbell alone */
static uint32_t routed = ~0u;  /* the CPU the rings go to; written under route_lock */
static volatile uint32_t route_want = ~0u; /* the CPU they should go to */
static struct spinlock route_lock;
static uint64_t rung_tsc;      /* the last ring's interrupt, until an answer: its TSC */
static void (*on_ring)(void);  /* the service's (service.c): a hook, so this file does not call up into it */

static void doorbell_irq(struct trap_frame *f)
{
	rung_tsc = rdtsc();
	on_ring();
}

void mailbox_doorbell_init(bool region0, void (*rung)(void))
{
	on_ring = rung;
	const char *v;
	size_t n;
	bool off = cmdline_find(boot_info.cmdline, "pmuos.mbox_poll", &v, &n);

	if (off && !(n == 3 && !strncmp(v, "off", 3))) {
		kprintf("pmuos.mbox_poll=%.*s: only 'off' is known; the mailbox keeps its poll\n", (int)n, v);
		off = false;
	}
	bell = region0 ? platform_doorbell(VEC_DOORBELL) : NULL;
	if (!bell) {
		if (off)
			kprintf("pmuos.mbox_poll=off: ignored, the mailbox has no doorbell and is polled\n");
		return;
	}
	poll_off = off;
	irq_register(VEC_DOORBELL, doorbell_irq);
	mbox_hdr->card_peer = bell->peer;
	mbox_hdr->capabilities |= MBOX_CAP_DOORBELL;
	kprintf("mailbox: doorbell, peer %u, vector %#x; %s\n", bell->peer, VEC_DOORBELL,
		poll_off ? "no poll timer" : "a poll every 10 ms as its fallback");
}

uint64_t mailbox_poll_us(bool cpu0)
{
	if (bell)
		return poll_off ? 0 : FALLBACK_POLL_US;
	return cpu0 ? IDLE_POLL_US : TASK_POLL_US;
}

uint64_t mailbox_linger_us(void)
{
	return bell ? LINGER_US : 0;
}

static bool route_pending(void *unused)
{
	return READ_ONCE(route_want) != routed;
}

static void route_apply(void *unused)
{
	uint32_t want = READ_ONCE(route_want);

	if (want != routed) {
		routed = want;
		bell->route(cpu_table[want]->apic_id);
	}
}

/*
 * No CPU waits for route_lock (spin_settle): its holder's MSI-X writes are
 * device writes that can end its vCPU's turn under QEMU, and CPU 1 spinning
 * here with interrupts off kept CPU 2 from its next instruction in
 * msix_route for over 30 s (a stale heartbeat in test_pmuctl, 1 run in 8;
 * docs/design.md §10). A CPU that finds the lock taken leaves its CPU in
 * route_want, and the holder looks again after letting go.
 */
void mailbox_doorbell_route(uint32_t cpu)
{
	if (!bell)
		return;
	WRITE_ONCE(route_want, cpu);
	spin_settle(&route_lock, route_pending, route_apply, NULL);
}

void mailbox_doorbell_hold(bool hold)
{
	/* TPR: vectors of priority class TPR[7:4] and below wait in the IRR (Intel SDM Vol. 3A §10.8.3.1). */
	apic_write(APIC_TPR, hold ? VEC_DOORBELL & 0xf0 : 0);
}

void mailbox_doorbell_forward(uint32_t cpu)
{
	apic_send_fixed(cpu_table[cpu]->apic_id, VEC_DOORBELL);
}

void mailbox_doorbell_answered(void)
{
	uint32_t peer = mbox_hdr->host_peer; /* the host's: any value is only a peer to ring */

	if (rung_tsc) /* what a ring costs the card, its interrupt to the answer (bench/mailbox.py) */
		mbox_hdr->ring_ticks = (uint32_t)MIN(rdtsc() - rung_tsc, UINT32_MAX);
	rung_tsc = 0;
	if (bell && peer && peer - 1 != bell->peer && peer - 1 <= 0xffff)
		bell->ring(peer - 1);
}
