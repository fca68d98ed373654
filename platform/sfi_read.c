/*
 * The SFI tables where a card's bootstrap leaves them, read from physical
 * memory (the kernel's side of platform/sfi.h; the parser itself is pure).
 */
#include "platform/sfi.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "lib/lib.h"

/* Physical memory for the parser: the kernel maps [0, 4 GiB) (kernel/paging.h); nothing above is read. */
static size_t read_low(void *ctx, uint64_t addr, void *dst, size_t len)
{
	const uint64_t end = 1ULL << 32;

	if (addr >= end)
		return 0;
	len = MIN(len, (size_t)(end - addr));
	memcpy(dst, (const void *)addr, len);
	return len;
}

const char *sfi_read(struct sfi_info *out)
{
	uint64_t syst = sfi_find_syst(read_low, NULL, SFI_SEARCH_START, SFI_SEARCH_END);

	if (!syst)
		return "no SFI tables (SYST in 0xE0000-0xFFFFF): the processors cannot be found";
	if (sfi_parse(read_low, NULL, syst, out) != 0) {
		kprintf("sfi: %s\n", out->error);
		return "the SFI tables are not valid";
	}
	if (!out->have_cpus || !out->ncpus)
		return "the SFI tables list no CPUS";
	kprintf("sfi: SYST at %#lx: %u CPUs, %u I/O APICs, %u memory ranges\n", syst, out->cpus_total,
		out->ioapics_total, out->mem_total);
	return NULL;
}

uint32_t sfi_cpus(const struct sfi_info *sfi, uint32_t *apic_ids, uint32_t max)
{
	uint32_t n = 0;

	uint32_t top = apic_layout()->max_id;

	for (uint32_t i = 0; i < sfi->ncpus && n < max; i++) {
		if (sfi->cpu_apic_id[i] <= top)
			apic_ids[n++] = sfi->cpu_apic_id[i];
		else
			kprintf("sfi: CPU with APIC ID %u skipped: the %s layout's IDs end at %u\n", sfi->cpu_apic_id[i],
				apic_layout()->name, top);
	}
	return n;
}
