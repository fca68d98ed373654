/*
 * The local APIC timer behind each CPU's software timer queue (DESIGN §4;
 * the queue and the interrupt handler are the core's, kernel/timer.c): it
 * only raises its vector at a TSC deadline. TSC-deadline mode where
 * CPUID.1:ECX[24] offers it, else one-shot mode calibrated against the TSC.
 */
#include "apic/apic.h"
#include "arch/tsc.h"

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CALIB_US 10000

static bool use_deadline;
static uint64_t timer_hz;

bool apic_timer_tsc_deadline(void) { return use_deadline; }
uint64_t apic_timer_hz(void) { return timer_hz; }

void apic_timer_calibrate(void)
{
	use_deadline = cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE;
	if (use_deadline)
		return;
	apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | APIC_LVT_TIMER_ONESHOT);
	apic_write(APIC_TIMER_INIT, 0xffffffff);
	uint64_t t0 = rdtsc();
	delay_us(CALIB_US);
	uint32_t left = apic_read(APIC_TIMER_CUR);
	uint64_t t1 = rdtsc();
	apic_write(APIC_TIMER_INIT, 0);
	timer_hz = (uint64_t)(0xffffffffu - left) * tsc_hz / (t1 - t0);
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
	uint64_t ticks = delta / tsc_hz * timer_hz + delta % tsc_hz * timer_hz / tsc_hz;

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
