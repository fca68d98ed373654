/*
 * SFI table parser; see platform/sfi.h. Pure: physical memory only through
 * read(), every length checked before use.
 */
#include <pmuos/bootinfo.h>
#include "platform/sfi.h"
#include "lib/fmt.h"
#include "lib/lib.h"

#define CHUNK 64 /* bytes read at a time for checksums */

struct table {
	uint64_t addr;
	uint32_t len;
	char sig[5]; /* printable, for messages */
};

bool sfi_checksum_ok(const void *p, size_t len)
{
	return bytes_sum_to_zero(p, len);
}

/* Sum of len bytes at addr; *got = how many were readable. */
static uint8_t sum_bytes(sfi_read_fn read, void *ctx, uint64_t addr, uint32_t len, uint32_t *got)
{
	uint8_t buf[CHUNK], sum = 0;

	for (*got = 0; *got < len;) {
		size_t want = MIN((size_t)(len - *got), sizeof(buf));
		size_t n = read(ctx, addr + *got, buf, want);
		for (size_t i = 0; i < n && i < want; i++)
			sum += buf[i];
		*got += (uint32_t)MIN(n, want);
		if (n < want)
			break;
	}
	return sum;
}

static size_t entry_size(const char sig[4])
{
	if (!memcmp(sig, "SYST", 4))
		return SFI_SYST_ENTRY;
	if (!memcmp(sig, "CPUS", 4))
		return SFI_CPUS_ENTRY;
	if (!memcmp(sig, "APIC", 4))
		return SFI_APIC_ENTRY;
	if (!memcmp(sig, "MMAP", 4))
		return SFI_MMAP_ENTRY;
	return 1; /* FREQ, MTMR, OEMx, ...: only checked */
}

/*
 * Reads and checks the table at addr into *t. Returns NULL, or what was wrong
 * (in buf). syst: SYST's own extra rule, one 4 KiB page.
 */
static const char *check_table(sfi_read_fn read, void *ctx, uint64_t addr, bool syst, struct table *t,
			       char *buf, size_t buf_len)
{
	uint8_t h[8];
	uint32_t got;

	t->addr = addr;
	if (read(ctx, addr, h, sizeof(h)) < sizeof(h)) {
		snprintf(buf, buf_len, "table at %#lx: header not readable", addr);
		return buf;
	}
	for (int i = 0; i < 4; i++)
		t->sig[i] = h[i] >= 0x20 && h[i] < 0x7f ? (char)h[i] : '?';
	t->sig[4] = 0;
	t->len = get_le32(h + 4);

	size_t entry = entry_size((const char *)h);
	if (t->len < SFI_HEADER)
		snprintf(buf, buf_len, "%s at %#lx: length %u, shorter than its 24-byte header", t->sig, addr, t->len);
	else if ((t->len - SFI_HEADER) % entry)
		snprintf(buf, buf_len, "%s at %#lx: length %u is not 24 + whole %zu-byte entries", t->sig, addr,
			 t->len, entry);
	else if (t->len > SFI_TABLE_MAX)
		snprintf(buf, buf_len, "%s at %#lx: length %u, over the 1 MiB limit", t->sig, addr, t->len);
	else if (addr + t->len < addr)
		snprintf(buf, buf_len, "%s at %#lx: length %u runs past the top of memory", t->sig, addr, t->len);
	else if (syst && (addr % SFI_SYST_PAGE) + t->len > SFI_SYST_PAGE)
		snprintf(buf, buf_len, "SYST at %#lx: length %u crosses a 4 KiB boundary", addr, t->len);
	else {
		uint8_t sum = sum_bytes(read, ctx, addr, t->len, &got);
		if (got < t->len)
			snprintf(buf, buf_len, "%s at %#lx: only %u of its %u bytes readable", t->sig, addr, got, t->len);
		else if (sum)
			snprintf(buf, buf_len, "%s at %#lx: bad checksum (bytes sum to %#x, not 0)", t->sig, addr, sum);
		else
			return NULL;
	}
	return buf;
}

uint64_t sfi_find_syst(sfi_read_fn read, void *ctx, uint64_t start, uint64_t end)
{
	char unused[8]; /* a candidate that fails is skipped, not reported */

	for (uint64_t a = ALIGN_UP(start, SFI_SEARCH_STEP); a < end && a >= start; a += SFI_SEARCH_STEP) {
		struct table t;
		uint8_t sig[4];

		if (read(ctx, a, sig, 4) == 4 && !memcmp(sig, "SYST", 4) &&
		    !check_table(read, ctx, a, true, &t, unused, sizeof(unused)))
			return a;
	}
	return 0;
}

static bool overlap(const struct table *a, const struct table *b)
{
	return a->addr < b->addr + b->len && b->addr < a->addr + a->len;
}

static uint32_t read_entry32(sfi_read_fn read, void *ctx, uint64_t addr)
{
	uint8_t b[4] = { 0 };

	read(ctx, addr, b, 4); /* checked readable with the checksum */
	return get_le32(b);
}

static uint64_t read_entry64(sfi_read_fn read, void *ctx, uint64_t addr)
{
	uint8_t b[8] = { 0 };

	read(ctx, addr, b, 8);
	return get_le64(b);
}

static void take_cpus(sfi_read_fn read, void *ctx, const struct table *t, struct sfi_info *out)
{
	out->have_cpus = true;
	out->cpus_total = (t->len - SFI_HEADER) / SFI_CPUS_ENTRY;
	out->ncpus = MIN(out->cpus_total, (uint32_t)SFI_MAX_CPUS);
	for (uint32_t i = 0; i < out->ncpus; i++)
		out->cpu_apic_id[i] = read_entry32(read, ctx, t->addr + SFI_HEADER + i * SFI_CPUS_ENTRY);
}

static void take_apic(sfi_read_fn read, void *ctx, const struct table *t, struct sfi_info *out)
{
	out->have_apic = true;
	out->ioapics_total = (t->len - SFI_HEADER) / SFI_APIC_ENTRY;
	out->nioapics = MIN(out->ioapics_total, (uint32_t)SFI_MAX_IOAPICS);
	for (uint32_t i = 0; i < out->nioapics; i++)
		out->ioapic_addr[i] = read_entry64(read, ctx, t->addr + SFI_HEADER + i * SFI_APIC_ENTRY);
}

static const char *take_mmap(sfi_read_fn read, void *ctx, const struct table *t, struct sfi_info *out)
{
	out->have_mmap = true;
	out->mem_total = (t->len - SFI_HEADER) / SFI_MMAP_ENTRY;
	out->nmem = MIN(out->mem_total, (uint32_t)SFI_MAX_MEM);
	for (uint32_t i = 0; i < out->nmem; i++) {
		uint8_t e[SFI_MMAP_ENTRY];
		struct sfi_mem_range *m = &out->mem[i];

		read(ctx, t->addr + SFI_HEADER + i * SFI_MMAP_ENTRY, e, sizeof(e));
		uint64_t pages = get_le64(e + 20);
		m->type = get_le32(e);
		m->base = get_le64(e + 4);   /* phys_start; virt_start (e + 12) means nothing here */
		m->attribute = get_le64(e + 28);
		/* Its last byte, base + pages * 4 KiB - 1, must not pass 2^64 - 1. */
		if (pages > UINT64_MAX / SFI_PAGE || (pages && m->base + pages * SFI_PAGE - 1 < m->base)) {
			snprintf(out->error, sizeof(out->error), "MMAP at %#lx: entry %u (%#lx, %lu pages) runs past 2^64",
				 t->addr, i, m->base, pages);
			return out->error;
		}
		m->length = pages * SFI_PAGE;
	}
	return NULL;
}

int sfi_parse(sfi_read_fn read, void *ctx, uint64_t syst, struct sfi_info *out)
{
	struct table t[SFI_MAX_TABLES + 1];

	memset(out, 0, sizeof(*out));
	out->syst = syst;
	if (check_table(read, ctx, syst, true, &t[0], out->error, sizeof(out->error)))
		return -1;
	if (memcmp(t[0].sig, "SYST", 4)) {
		snprintf(out->error, sizeof(out->error), "no SYST at %#lx (signature '%s')", syst, t[0].sig);
		return -1;
	}
	uint32_t n = (t[0].len - SFI_HEADER) / SFI_SYST_ENTRY;
	if (n > SFI_MAX_TABLES) {
		snprintf(out->error, sizeof(out->error), "SYST at %#lx lists %u tables, more than the %u read",
			 syst, n, SFI_MAX_TABLES);
		return -1;
	}
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t addr = read_entry64(read, ctx, syst + SFI_HEADER + (i - 1) * SFI_SYST_ENTRY);
		if (check_table(read, ctx, addr, false, &t[i], out->error, sizeof(out->error)))
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (overlap(&t[i], &t[j])) {
				snprintf(out->error, sizeof(out->error), "%s at %#lx overlaps %s at %#lx",
					 t[i].sig, t[i].addr, t[j].sig, t[j].addr);
				return -1;
			}
	}
	for (uint32_t i = 1; i <= n; i++) {
		if (!memcmp(t[i].sig, "CPUS", 4) && !out->have_cpus)
			take_cpus(read, ctx, &t[i], out);
		else if (!memcmp(t[i].sig, "APIC", 4) && !out->have_apic)
			take_apic(read, ctx, &t[i], out);
		else if (!memcmp(t[i].sig, "MMAP", 4) && !out->have_mmap && take_mmap(read, ctx, &t[i], out))
			return -1;
	}
	return 0;
}

uint32_t sfi_boot_mem_type(uint32_t uefi_type)
{
	switch (uefi_type) {
	case SFI_UEFI_LOADER_CODE:
	case SFI_UEFI_LOADER_DATA:
	case SFI_UEFI_BOOT_CODE:
	case SFI_UEFI_BOOT_DATA:
	case SFI_UEFI_CONVENTIONAL:
		return BOOT_MEM_USABLE;
	case SFI_UEFI_ACPI_RECLAIM:
		return BOOT_MEM_ACPI_RECLAIM;
	case SFI_UEFI_ACPI_NVS:
		return BOOT_MEM_ACPI_NVS;
	case SFI_UEFI_UNUSABLE:
		return BOOT_MEM_BAD;
	default:
		return BOOT_MEM_RESERVED;
	}
}
