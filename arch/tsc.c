/* The TSC as the kernel's clock; see arch/tsc.h. */
#include "arch/tsc.h"
#include "arch/sync.h"

uint64_t tsc_hz = 1000000000; /* until the platform measures it */

uint64_t tsc_to_ns(uint64_t ticks)
{
	return ticks / tsc_hz * 1000000000 + ticks % tsc_hz * 1000000000 / tsc_hz;
}

uint64_t tsc_to_us(uint64_t ticks)
{
	return tsc_to_ns(ticks) / 1000;
}

uint64_t tsc_deadline_us(uint64_t us)
{
	return rdtsc() + us * (tsc_hz / 1000000);
}

void delay_us(uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	while (rdtsc() < end)
		cpu_relax();
}
