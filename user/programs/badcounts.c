/*
 * badcounts: SYS_PMU_COUNTS and SYS_PMU_EVENT_NAMES (<pmuos/syscall.h>) handed
 * pointers a hostile program would give: NULL, a kernel address, the
 * unmapped page under the stack, read-only text, a record running off the
 * stack's top. Each must come back -EFAULT (14) and leave the card as it
 * was; then a good pointer gets the CPU's events' counts, and their names
 * (tests/system/test_views.py).
 */
#include <stdio.h>
#include <stdint.h>
#include <pmuos/pmu.h>
#include <pmuos/syscall.h>

int main(void)
{
	static const uint64_t bad[] = {
		0,                                          /* NULL */
		0xffffffff80000000ULL,                      /* the kernel */
		USER_STACK_TOP - USER_STACK_SIZE - 4096,    /* unmapped, under the stack */
		USER_TEXT,                                  /* read-only text */
		USER_STACK_TOP - 8,                         /* runs past the stack's top */
	};
	struct pmuos_counts c;
	static struct pmuos_events e;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		printf("bad %u: %d %d\n", i, pmuos_pmu_counts((struct pmuos_counts *)(uintptr_t)bad[i]),
		       pmuos_pmu_events((struct pmuos_events *)(uintptr_t)bad[i]));
	printf("good: %d\n", pmuos_pmu_counts(&c));
	int n = pmuos_pmu_events(&e);
	printf("events: %d", n);
	for (int i = 0; i < n && i < PMUOS_COUNTS_MAX; i++)
		printf(" %s", e.name[i]);
	printf("\n");
	return 0;
}
