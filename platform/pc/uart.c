/*
 * The 16550 UART at COM1 (I/O 0x3F8), the console's device on a PC:
 * polled transmit, receive by interrupt into the console's ring.
 */
#include <stdint.h>
#include "platform/pc/pc.h"
#include "kernel/console.h"
#include "arch/sync.h"
#include "arch/x86.h"

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

static void uart_putc(char c)
{
	while (!(inb(COM1 + UART_LSR) & UART_LSR_THRE))
		cpu_relax();
	outb(COM1 + UART_DATA, c);
}

/* Under the console lock: "\n" as "\r\n". */
static void uart_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

static void uart_rx_resume(void)
{
	outb(COM1 + UART_IER, 0x01); /* received-data-available interrupt */
}

static const struct console_dev uart = { .write = uart_write, .rx_resume = uart_rx_resume };

void uart_init(void)
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
	console_set_device(&uart);
}

/*
 * Reads the UART into the console's ring. When the ring is full the receive
 * interrupt is turned off and the byte stays in the UART (console_rx_full).
 */
void uart_rx_irq(struct trap_frame *f)
{
	while (inb(COM1 + UART_LSR) & UART_LSR_DR) {
		if (console_rx_full()) {
			outb(COM1 + UART_IER, 0);
			return;
		}
		console_rx_put(inb(COM1 + UART_DATA));
	}
}

void uart_enable_rx_irq(void)
{
	uart_rx_resume();
}
