/*
 * The 8254 PIT of a PC: the TSC's frequency measured against it, and the
 * timer events that keep IPIs prompt under QEMU -icount.
 */
#include "platform/pc/pc.h"
#include "arch/tsc.h"
#include "arch/sync.h"

#define PIT_HZ        1193182
#define PIT_CH0       0x40
#define PIT_CH2       0x42
#define PIT_CMD       0x43
#define PIT_GATE_PORT 0x61
#define PIT_GATE      0x01
#define PIT_SPEAKER   0x02
#define PIT_OUT2      0x20
#define CALIB_US      2000 /* window; its two ends are what must be precise */
#define CALIB_TRIES   8    /* samples per end: the one least disturbed is kept */
#define PIT_CH0_ONESHOT  0x30 /* channel 0, LSB then MSB, mode 0 */
#define PIT_CH0_PERIODIC 0x34 /* channel 0, LSB then MSB, mode 2 */
#define PIT_ONESHOT_COUNT 2   /* PIT clocks (838 ns each) from an IPI to the one-shot's end */
#define PIT_BUSY_HZ      10000 /* while tasks run: turns of at most 100 us */

/*
 * One end of the calibration window: the TSC at a moment the PIT count is
 * known. Spins until channel 2's count changes; the change to `count` lies
 * between the latch before it (TSC t_a, just before) and the latch that saw
 * it (TSC t_b, just after), so the TSC of that moment is (t_a + t_b) / 2,
 * within (t_b - t_a) / 2. Of CALIB_TRIES such moments the narrowest is kept:
 * a vCPU descheduled, an SMI or an interrupt of the host widens one
 * sample, never the kept one unless all of them are disturbed.
 * Count latch and read: 8254 data sheet, "Counter Latch Command" (port
 * 0x43, SC = channel, RW = 00; then LSB, MSB from the channel's port).
 */
struct pit_sample {
	uint64_t tsc;   /* TSC ticks, mid-point of the bracket */
	uint64_t width; /* TSC ticks between the two latches */
	uint16_t count; /* PIT channel 2 count at that moment */
};

static uint16_t pit2_count(void)
{
	outb(PIT_CMD, 0x80); /* latch channel 2 */
	uint8_t lo = inb(PIT_CH2);
	return lo | inb(PIT_CH2) << 8;
}

static struct pit_sample pit_edge(void)
{
	struct pit_sample best = { .width = UINT64_MAX };

	for (int i = 0; i < CALIB_TRIES; i++) {
		uint64_t ta = rdtsc();
		uint16_t before = pit2_count(), now;
		uint64_t tb;
		for (;;) {
			tb = rdtsc();
			now = pit2_count();
			if (now != before)
				break;
			ta = tb;
		}
		tb = rdtsc();
		if (tb - ta < best.width)
			best = (struct pit_sample){ ta + (tb - ta) / 2, tb - ta, now };
	}
	return best;
}

/*
 * Measures tsc_hz against PIT channel 2 (1,193,182 Hz) over a CALIB_US window
 * whose ends are PIT count edges (pit_edge). BSP, once, interrupts off.
 * Channel 2 counts down from 65536 in mode 0 and wraps (55 ms a turn), so
 * the window's count is the 16-bit difference.
 */
void tsc_calibrate(void)
{
	uint8_t gate = inb(PIT_GATE_PORT) & ~(PIT_SPEAKER | PIT_GATE);

	outb(PIT_GATE_PORT, gate);
	outb(PIT_CMD, 0xb0); /* channel 2, lo/hi byte, mode 0 */
	outb(PIT_CH2, 0);
	outb(PIT_CH2, 0);     /* count 0 = 65536 */
	outb(PIT_GATE_PORT, gate | PIT_GATE); /* a rising gate starts the count */
	struct pit_sample a = pit_edge();
	/* Until CALIB_US of PIT counts have passed (tsc_hz is not known yet). */
	while ((uint16_t)(a.count - pit2_count()) < PIT_HZ / 1000 * CALIB_US / 1000)
		cpu_relax();
	struct pit_sample b = pit_edge();
	outb(PIT_GATE_PORT, gate);

	tsc_hz = (b.tsc - a.tsc) * PIT_HZ / (uint16_t)(a.count - b.count);
}

/*
 * PIT channel 0 as QEMU's clock for taking turns; its interrupt stays masked
 * at the 8259 and the IOAPIC, so the guest executes nothing for it and
 * counts stay exact. Under QEMU 7.2 TCG with -icount one host thread runs
 * the vCPUs in turn, each turn ending at the next virtual-clock timer event,
 * and an IPI only marks its target (accel/tcg/tcg-accel-ops.c
 * tcg_handle_interrupt: the target's thread is the sender's): the sender
 * runs on until its turn ends, up to 100 ms on an idle card (QEMU's
 * round-robin kick). Two uses:
 *  - after each IPI, a one-shot (mode 0): arming a virtual-clock timer
 *    from a vCPU ends the running vCPU's turn at once
 *    (softmmu/cpu-timers.c qemu_timer_notify_cb), so the target runs next,
 *    and no timer runs while nothing happens (an idle card costs the host
 *    next to nothing);
 *  - while tasks run, 10 kHz (mode 2): busy vCPUs take turns of at most
 *    100 us, so the CPU that serves the host, or one that an IPI woke,
 *    waits for no more; a one-shot would end it, so none is armed then.
 * Modes: 8254 data sheet, "Mode 0: Interrupt on Terminal Count", "Mode 2:
 * Rate Generator".
 *
 * No CPU ever waits for pit_lock, which keeps a CPU's three writes whole
 * (so a one-shot cannot end the periodic timer): its holder's own PIT write
 * ends its turn with the lock held, and under QEMU 7.2 a lower-numbered
 * vCPU spinning for it took every turn's whole budget while the holder got
 * none, until some host event cut a turn short (QEMU commit 83ecdb18eb65,
 * "accel/tcg/tcg-accel-ops-rr: ensure fairness with icount", QEMU 8.1, which
 * shares each budget between the vCPUs; pmuos's QEMU runs the due timer
 * between turns since scripts/qemu-fixes/0003, Debian's does neither). In the soak (issue 23) CPU 0 spun
 * in tasks_running for up to 157 s of host time while CPU 1 stood at the
 * instruction after its one-shot's last write. So a CPU that finds the lock
 * taken goes on (spin_settle): after an IPI the holder's write ends the
 * turn just the same; a change of mode is left in pit_want, which whoever
 * holds the lock looks at again after letting go, and applies.
 */
static struct spinlock pit_lock;
static volatile bool pit_want;  /* periodic, as tasks_running last asked */
static volatile bool pit_periodic; /* what channel 0 runs; written under pit_lock */

static void pit_ch0(uint8_t mode_cmd, uint16_t count)
{
	outb(PIT_CMD, mode_cmd);
	outb(PIT_CH0, count & 0xff);
	outb(PIT_CH0, count >> 8);
}

/* What a CPU asks of channel 0 beside pit_want: a one-shot, if it is not periodic. */
struct pit_ask {
	bool oneshot;
};

static bool pit_pending(void *arg)
{
	return ((struct pit_ask *)arg)->oneshot || pit_want != pit_periodic;
}

static void pit_apply(void *arg)
{
	struct pit_ask *ask = arg;
	bool want = pit_want;

	if (want != pit_periodic) {
		pit_periodic = want;
		/* A mode-0 count ends the periodic timer: one event more, then none. */
		if (want)
			pit_ch0(PIT_CH0_PERIODIC, PIT_HZ / PIT_BUSY_HZ);
		else
			pit_ch0(PIT_CH0_ONESHOT, PIT_ONESHOT_COUNT);
	} else if (ask->oneshot && !want) {
		pit_ch0(PIT_CH0_ONESHOT, PIT_ONESHOT_COUNT);
	}
	ask->oneshot = false;
}

void pit_ipi_sent(void)
{
	struct pit_ask ask = { true };

	spin_settle(&pit_lock, pit_pending, pit_apply, &ask);
}

void pit_tasks_running(bool running)
{
	struct pit_ask ask = { false };

	pit_want = running;
	spin_settle(&pit_lock, pit_pending, pit_apply, &ask);
}
