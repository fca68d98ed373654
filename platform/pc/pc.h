/* A PC in QEMU: what platform/pc/'s files share (platform/platform.h is the interface). */
#ifndef PLATFORM_PC_PC_H
#define PLATFORM_PC_PC_H

#include "kernel/trap.h"
#include "platform/platform.h"

/* The PC's ops (pc.c). */
extern const struct platform platform_pc;

/* 8254 PIT (pit.c): measures tsc_hz (10 ms gate on channel 2), BSP, interrupts off. */
void tsc_calibrate(void);
/* PIT channel 0, its interrupt masked (see pit.c): a one-shot after each IPI sent, periodic while tasks run. */
void pit_ipi_sent(void);
void pit_tasks_running(bool running);

/* COM1 (uart.c): sets it up and makes it the console's device. */
void uart_init(void);
#define UART_IRQ 4 /* ISA IRQ of COM1 */
/* Its receive interrupt's handler, for pc_route_isa_irq; then uart_enable_rx_irq turns the interrupt on. */
void uart_rx_irq(struct trap_frame *f);
void uart_enable_rx_irq(void);

/*
 * Routes ISA IRQ `irq` (0..15) through the IOAPIC to the calling CPU, with
 * the MADT's interrupt source overrides, and installs h on its vector.
 */
void pc_route_isa_irq(unsigned irq, irq_handler h);

/* ivshmem.c: the platform's shared_memory and doorbell ops (QEMU's ivshmem devices). */
bool pc_shared_memory(unsigned n, uint64_t *base, uint64_t *size);
const struct host_doorbell *pc_doorbell(uint8_t vector);

/* power.c: the platform's power ops. */
const char *pc_power_off(void);
const char *pc_power_reset(void);

#endif
