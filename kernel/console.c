/*
 * The console, device-independent: one lock for all output (safe from any
 * CPU and from exception handlers), the tee to the host, kprintf, and the
 * ring received input waits in. The device behind it (the 16550 UART on a
 * PC, platform/pc/uart.c) registers itself; see kernel/console.h.
 */
#include <stdint.h>
#include "kernel/console.h"
#include "lib/fmt.h"
#include "kernel/percpu.h"
#include "arch/sync.h"

#define RX_RING 4096

static struct {
	volatile uint32_t owner; /* CPU number + 1 holding the lock, 0 = free */
	struct spinlock lock;
} tx;

static const struct console_dev *dev;
static void (*tee)(const char *s, size_t n);

/*
 * Output before the first device, kept for it (up to EARLY_BYTES): the
 * kernel reads its boot info, whose command line may name the platform,
 * before the platform's console exists (init/main.c).
 */
#define EARLY_BYTES 2048
static char early[EARLY_BYTES];
static size_t early_len;
static bool early_done;

void console_set_device(const struct console_dev *d)
{
	dev = d;
	if (d && !early_done) {
		early_done = true;
		d->write(early, early_len);
	}
}

void console_tee(void (*fn)(const char *s, size_t n))
{
	tee = fn;
}

static struct {
	uint8_t buf[RX_RING];
	volatile uint32_t head, tail; /* head: producer (IRQ), tail: consumer */
} rx;

static volatile bool rx_paused;

/*
 * When the ring is full the device turns its receive interrupt off and the
 * byte stays in it: the sender (QEMU's chardev, a person typing) waits, and
 * nothing is lost. console_getc turns it back on.
 */
bool console_rx_full(void)
{
	if ((rx.head + 1) % RX_RING != READ_ONCE(rx.tail))
		return false;
	rx_paused = true;
	return true;
}

void console_rx_put(uint8_t c)
{
	rx.buf[rx.head] = c;
	WRITE_ONCE(rx.head, (rx.head + 1) % RX_RING);
}

bool console_has_input(void)
{
	return READ_ONCE(rx.tail) != READ_ONCE(rx.head);
}

int console_getc(void)
{
	if (READ_ONCE(rx.tail) == READ_ONCE(rx.head))
		return -1;
	int c = rx.buf[rx.tail];
	WRITE_ONCE(rx.tail, (rx.tail + 1) % RX_RING);
	if (rx_paused) {
		rx_paused = false;
		dev->rx_resume(); /* a byte still waiting in the device interrupts at once */
	}
	return c;
}

bool console_take_ctrl_c(void)
{
	for (uint32_t i = READ_ONCE(rx.tail); i != READ_ONCE(rx.head); i = (i + 1) % RX_RING) {
		if (rx.buf[i] == 0x03) {
			WRITE_ONCE(rx.tail, (i + 1) % RX_RING);
			return true;
		}
	}
	return false;
}

/*
 * The lock knows its owner, so an exception taken while this CPU prints
 * (the fault report) does not deadlock on itself.
 */
static bool tx_lock(uint64_t *flags)
{
	uint32_t me = this_cpu()->cpu + 1;

	*flags = irq_save();
	if (READ_ONCE(tx.owner) == me)
		return false;
	/*
	 * Waited for with interrupts as the caller had them: 243 tasks ending
	 * their line at once under QEMU (one host thread runs the vCPUs in
	 * turn, each spinner its whole turn) waited minutes, the CPU serving
	 * the mailbox among them with its heartbeat and doorbell masked: the
	 * host saw a card that had stopped (issue 23.10).
	 */
	while (!spin_trylock(&tx.lock)) {
		irq_restore(*flags);
		while (READ_ONCE(tx.lock.locked))
			cpu_relax();
		*flags = irq_save();
	}
	tx.owner = me;
	return true;
}

static void tx_unlock(bool taken, uint64_t flags)
{
	if (taken) {
		tx.owner = 0;
		spin_unlock(&tx.lock);
	}
	irq_restore(flags);
}

static void write_locked(const char *s, size_t n)
{
	if (dev) {
		dev->write(s, n);
	} else if (!early_done) {
		size_t k = n < EARLY_BYTES - early_len ? n : EARLY_BYTES - early_len;
		for (size_t i = 0; i < k; i++)
			early[early_len + i] = s[i];
		early_len += k;
	}
	if (tee)
		tee(s, n);
}

void console_write(const char *s, size_t n)
{
	uint64_t flags;
	bool taken = tx_lock(&flags);

	write_locked(s, n);
	tx_unlock(taken, flags);
}

/* Formatted output goes to the device and the tee a run at a time, not a call per character. */
struct fmt_run {
	char buf[120];
	size_t n;
};

static void put_formatted(char c, void *ctx)
{
	struct fmt_run *r = ctx;

	r->buf[r->n++] = c;
	if (r->n == sizeof(r->buf)) {
		write_locked(r->buf, r->n);
		r->n = 0;
	}
}

int vkprintf(const char *fmt, va_list ap)
{
	uint64_t flags;
	struct fmt_run run = { .n = 0 };
	bool taken = tx_lock(&flags);
	int n = fmt_vformat(put_formatted, &run, fmt, ap);

	if (run.n)
		write_locked(run.buf, run.n);
	tx_unlock(taken, flags);
	return n;
}

int kprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vkprintf(fmt, ap);
	va_end(ap);
	return n;
}
