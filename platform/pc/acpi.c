/* Finding the ACPI tables in physical memory; parsing is in acpi_parse.c. */
#include "platform/pc/acpi.h"
#include "kernel/console.h"
#include "lib/lib.h"

struct acpi_info acpi;

static bool rsdp_valid(uint64_t addr)
{
	const uint8_t *p = (const uint8_t *)addr;

	if (memcmp(p, "RSD PTR ", 8) != 0 || !acpi_checksum_ok(p, 20))
		return false;
	return p[15] < 2 || acpi_checksum_ok(p, *(const uint32_t *)(p + 20));
}

/* ACPI 5.2.5.1: the first KiB of the EBDA, then 0xE0000-0xFFFFF, 16-byte aligned. */
static uint64_t rsdp_scan(void)
{
	uint64_t ebda = (uint64_t)*(const uint16_t *)0x40e << 4;

	if (ebda >= 0x80000 && ebda < 0xa0000)
		for (uint64_t a = ebda; a < ebda + 1024; a += 16)
			if (rsdp_valid(a))
				return a;
	for (uint64_t a = 0xe0000; a < 0x100000; a += 16)
		if (rsdp_valid(a))
			return a;
	return 0;
}

static const uint8_t *table_checked(uint64_t addr)
{
	const uint8_t *t = (const uint8_t *)addr;
	uint32_t len = *(const uint32_t *)(t + 4);

	if (addr == 0 || addr >= (4ULL << 30) || len < 36 || len > (1u << 20) ||
	    !acpi_checksum_ok(t, len))
		return NULL;
	return t;
}

static const uint8_t *find_table(const char sig[4])
{
	const uint8_t *rsdp = (const uint8_t *)acpi.rsdp;
	bool xsdt = rsdp[15] >= 2 && *(const uint64_t *)(rsdp + 24);
	const uint8_t *sdt = table_checked(xsdt ? *(const uint64_t *)(rsdp + 24)
					   : *(const uint32_t *)(rsdp + 16));
	if (!sdt)
		return NULL;
	uint32_t len = *(const uint32_t *)(sdt + 4), step = xsdt ? 8 : 4;

	for (uint32_t off = 36; off + step <= len; off += step) {
		uint64_t a = xsdt ? *(const uint64_t *)(sdt + off) : *(const uint32_t *)(sdt + off);
		const uint8_t *t = table_checked(a);

		if (t && memcmp(t, sig, 4) == 0)
			return t;
	}
	return NULL;
}

bool acpi_init(uint64_t rsdp_hint)
{
	acpi.rsdp = rsdp_hint && rsdp_valid(rsdp_hint) ? rsdp_hint : rsdp_scan();
	acpi.s5_slp_typ = -1;
	if (!acpi.rsdp) {
		kprintf("acpi: no RSDP found\n");
		return false;
	}
	const uint8_t *madt = find_table("APIC");
	if (!madt || acpi_parse_madt(madt, *(const uint32_t *)(madt + 4), &acpi) != 0) {
		kprintf("acpi: no valid MADT\n");
		return false;
	}
	const uint8_t *fadt = find_table("FACP");
	if (fadt && acpi_parse_fadt(fadt, *(const uint32_t *)(fadt + 4), &acpi) == 0) {
		const uint8_t *dsdt = table_checked(acpi.dsdt);
		if (dsdt)
			acpi.s5_slp_typ = acpi_find_s5(dsdt, *(const uint32_t *)(dsdt + 4));
	}
	return true;
}
