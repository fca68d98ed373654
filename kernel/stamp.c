/* The stamps' clock; see kernel/stamp.h. */
#include "kernel/stamp.h"
#include "lib/lib.h"

const volatile uint64_t *stamp_clock;

extern const uint64_t __stamp_sites_start[], __stamp_sites_end[];

void stamp_use_clock(const volatile uint64_t *clock)
{
	/*
	 * RDTSC; SHL $32, RDX; OR RDX, RAX becomes MOV (RDX), RAX; MOV RAX, RAX;
	 * MOV RDX, RDX: RDX holds stamp_clock, and the count of instructions
	 * stays 3 (no long NOPs on a KNC core, docs/design.md §3).
	 */
	static const uint8_t load[9] = { 0x48, 0x8b, 0x02, 0x48, 0x89, 0xc0, 0x48, 0x89, 0xd2 };

	stamp_clock = clock;
	for (const uint64_t *s = __stamp_sites_start; s < __stamp_sites_end; s++)
		memcpy((void *)*s, load, sizeof(load));
}
