/*
 * The 8254 PIT of a PC: the TSC's frequency measured against it, and the
 * heartbeat that keeps IPIs to halted CPUs prompt under QEMU -icount.
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
#define CALIB_MS      10
#define PIT_HEARTBEAT_HZ 10000

/* Measures tsc_hz against PIT channel 2 (10 ms gate). BSP, once, interrupts off. */
void tsc_calibrate(void)
{
	uint16_t count = PIT_HZ * CALIB_MS / 1000;
	uint8_t gate = inb(PIT_GATE_PORT) & ~(PIT_SPEAKER | PIT_GATE);

	outb(PIT_GATE_PORT, gate);
	outb(PIT_CMD, 0xb0); /* channel 2, lo/hi byte, mode 0 (interrupt on terminal count) */
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	outb(PIT_GATE_PORT, gate | PIT_GATE); /* a rising gate starts the count */
	uint64_t t0 = rdtsc();
	while (!(inb(PIT_GATE_PORT) & PIT_OUT2))
		cpu_relax();
	uint64_t t1 = rdtsc();
	outb(PIT_GATE_PORT, gate);

	tsc_hz = (t1 - t0) * PIT_HZ / count;
}

/*
 * Under QEMU TCG with -icount, a halted vCPU notices a pending IPI (INIT,
 * SIPI, a cross-CPU call) only at the next virtual-clock timer event. A
 * 10 kHz PIT, whose interrupt stays masked at the 8259 and the IOAPIC, is
 * such an event: the guest never sees it and executes nothing for it, so
 * counts stay exact, and IPIs reach halted CPUs within 100 us.
 */
void pit_heartbeat_start(void)
{
	uint16_t count = PIT_HZ / PIT_HEARTBEAT_HZ;

	outb(PIT_CMD, 0x34); /* channel 0, lo/hi byte, mode 2 (rate generator) */
	outb(PIT_CH0, count & 0xff);
	outb(PIT_CH0, count >> 8);
}
