/*
 * The console: output from any CPU to the device the platform registers
 * (a PC's COM1 UART: platform/pc/uart.c), input by interrupt into a ring
 * that the shell drains.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* The device behind the console (platform/). */
struct console_dev {
	/* Writes n bytes, "\n" as "\r\n"; called under the console lock. */
	void (*write)(const char *s, size_t n);
	/* Turns receiving back on after console_rx_full stopped it. */
	void (*rx_resume)(void);
};
/*
 * Sends all later output to d. The first device also gets what was written
 * before any (its first 2 KiB); output between two devices is dropped.
 */
void console_set_device(const struct console_dev *d);
/*
 * From the device's receive interrupt, before each byte: true if the ring is
 * full, and then the device must stop receiving (the byte stays in it) until
 * its rx_resume. Otherwise console_rx_put(byte) queues the byte.
 */
bool console_rx_full(void);
void console_rx_put(uint8_t c);

/* Writes n bytes, "\n" as "\r\n". Safe from any CPU and from exception handlers. */
void console_write(const char *s, size_t n);
/* Next received byte (0..255), or -1 if none is waiting. */
int console_getc(void);
/* Whether an input byte is waiting (console_getc would return it). */
bool console_has_input(void);
/*
 * If a Ctrl-C (0x03) is waiting, drops the input up to and including it and
 * returns true; otherwise leaves the input alone (it is the shell's).
 */
bool console_take_ctrl_c(void);

/* Also hands everything written to fn (the mailbox's console ring), under the console lock. */
void console_tee(void (*fn)(const char *s, size_t n));

int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vkprintf(const char *fmt, va_list ap);

#endif
