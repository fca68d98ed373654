/*
 * Console on the 16550 UART at COM1 (I/O 0x3F8): polled transmit, receive by
 * interrupt into a ring that the shell drains.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>

void console_init(void);
/* Routes the UART receive interrupt to the calling CPU (after the IOAPIC is up). */
void console_enable_rx_irq(void);
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
