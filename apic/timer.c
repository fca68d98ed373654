/*
 * The local APIC timer behind each CPU's software timer queue (docs/design.md §4;
 * the queue and the interrupt handler are the core's, kernel/timer.c): it
 * only raises its vector at a TSC deadline. TSC-deadline mode where
 * CPUID.1:ECX[24] offers it, else one-shot mode calibrated against the TSC.
 */
#include "apic/apic.h"
#include "arch/tsc.h"

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CALIB_US    1000 /* window; its ends are bracketed by the TSC */
#define CALIB_TRIES 8    /* reads per end: the narrowest bracket is kept */

static bool use_deadline;
/*
 * APIC timer ticks per TSC tick, 32.32 fixed point, rounded up: a deadline
 * becomes a count with one multiplication, no division (the overflow timer
 * of the PMU model is set on every sample), and never fires before it.
 */
static uint64_t ticks_per_tsc;

/*
 * The current count (SDM Vol. 3A 10.5.4, offset 0x390) and the TSC when it
 * was read: the mid-point of the narrowest of CALIB_TRIES rdtsc-read-rdtsc
 * brackets, so a read delayed (a vCPU descheduled, an interrupt of the host)
 * is not the one kept.
 */
static uint32_t timer_sample(uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	uint32_t count = 0;

	for (int i = 0; i < CALIB_TRIES; i++) {
		uint64_t ta = rdtsc();
		uint32_t c = apic_read(APIC_TIMER_CUR);
		uint64_t tb = rdtsc();
		if (tb - ta < best) {
			best = tb - ta;
			count = c;
			*tsc = ta + (tb - ta) / 2;
		}
	}
	return count;
}

/* Needs tsc_hz (the platform's time_init). BSP, once, interrupts off. */
void apic_timer_calibrate(void)
{
	uint64_t t0 = 0, t1 = 0; /* timer_sample sets them: its first try is always kept */

	use_deadline = cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE;
	if (use_deadline)
		return;
	apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | APIC_LVT_TIMER_ONESHOT);
	apic_write(APIC_TIMER_INIT, 0xffffffff);
	uint32_t c0 = timer_sample(&t0);
	delay_us(CALIB_US);
	uint32_t c1 = timer_sample(&t1);
	apic_write(APIC_TIMER_INIT, 0);
	uint64_t timer_hz = (uint64_t)(c0 - c1) * tsc_hz / (t1 - t0);
	ticks_per_tsc = (timer_hz << 32) / tsc_hz + 1; /* timer_hz < 2^32: an APIC bus under 4.3 GHz */
}

void apic_timer_set(uint64_t deadline)
{
	if (use_deadline) {
		wrmsr(MSR_TSC_DEADLINE, deadline);
		return;
	}
	if (!deadline) {
		apic_write(APIC_TIMER_INIT, 0);
		return;
	}
	uint64_t now = rdtsc(), d = deadline;
	uint64_t delta = d > now ? d - now : 0;
	unsigned __int128 ticks = ((unsigned __int128)delta * ticks_per_tsc) >> 32;

	apic_write(APIC_TIMER_INIT, ticks == 0 ? 1 : ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks);
}

void apic_timer_init_local(uint8_t vector)
{
	if (use_deadline) {
		apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_TSCDEADLINE | APIC_LVT_VECTOR(vector));
	} else {
		apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_1);
		apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_ONESHOT | APIC_LVT_VECTOR(vector));
	}
}
