/* 16550 UART console; see kernel/console.h. */
#include <stdint.h>
#include "kernel/console.h"
#include "kernel/fmt.h"
#include "kernel/percpu.h"
#include "kernel/sync.h"
#include "kernel/irq.h"
#include "apic/apic.h"

#define COM1      0x3f8
#define UART_DATA 0 /* RBR/THR */
#define UART_IER  1
#define UART_FCR  2 /* write */
#define UART_IIR  2 /* read: bits 7:6 = 11 when the FIFOs are on */
#define UART_LCR  3
#define UART_MCR  4
#define UART_LSR  5
#define UART_LSR_DR   0x01 /* data ready */
#define UART_LSR_THRE 0x20 /* transmit holding register empty */
#define UART_IRQ  4        /* ISA IRQ of COM1 */

#define RX_RING 4096

static struct {
	volatile uint32_t owner; /* CPU number + 1 holding the lock, 0 = free */
	struct spinlock lock;
} tx;

static void (*tee)(const char *s, size_t n);

void console_tee(void (*fn)(const char *s, size_t n))
{
	tee = fn;
}

static struct {
	uint8_t buf[RX_RING];
	volatile uint32_t head, tail; /* head: producer (IRQ), tail: consumer */
} rx;

void console_init(void)
{
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, 0x80);   /* DLAB: set the divisor */
	outb(COM1 + UART_DATA, 1);     /* 115200 baud */
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, 0x03);   /* 8N1 */
	/*
	 * Turning the FIFOs on or off clears them, losing input that arrived
	 * before we ran (piped input does). Keep them as found; trigger at 1 byte.
	 */
	outb(COM1 + UART_FCR, (inb(COM1 + UART_IIR) & 0xc0) == 0xc0 ? 0x01 : 0x00);
	outb(COM1 + UART_MCR, 0x0b);   /* DTR, RTS, OUT2 (gates the IRQ line on a PC) */
}

static volatile bool rx_paused;

/*
 * Reads the UART into the ring. When the ring is full the receive interrupt
 * is turned off and the byte stays in the UART: the sender (QEMU's chardev, a
 * person typing) waits, and nothing is lost. console_getc turns it back on.
 */
static void uart_rx_irq(struct trap_frame *f)
{
	while (inb(COM1 + UART_LSR) & UART_LSR_DR) {
		uint32_t next = (rx.head + 1) % RX_RING;

		if (next == READ_ONCE(rx.tail)) {
			rx_paused = true;
			outb(COM1 + UART_IER, 0);
			return;
		}
		rx.buf[rx.head] = inb(COM1 + UART_DATA);
		WRITE_ONCE(rx.head, next);
	}
}

void console_enable_rx_irq(void)
{
	irq_route_isa(UART_IRQ, uart_rx_irq);
	outb(COM1 + UART_IER, 0x01); /* received-data-available interrupt */
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
		outb(COM1 + UART_IER, 0x01); /* a byte still waiting in the UART interrupts at once */
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


static void uart_putc(char c)
{
	while (!(inb(COM1 + UART_LSR) & UART_LSR_THRE))
		cpu_relax();
	outb(COM1 + UART_DATA, c);
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
	spin_lock(&tx.lock);
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
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
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

static void put_formatted(char c, void *ctx)
{
	write_locked(&c, 1);
}

int vkprintf(const char *fmt, va_list ap)
{
	uint64_t flags;
	bool taken = tx_lock(&flags);
	int n = fmt_vformat(put_formatted, NULL, fmt, ap);

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
