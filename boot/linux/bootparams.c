/*
 * boot_params -> struct boot_info; see boot/linux/bootparams.h. Pure: reads
 * only the boot_params bytes given and what read() returns.
 */
#include "boot/linux/bootparams.h"
#include "lib/lib.h"

#define VERSION_CMD_LINE_PTR 0x0202 /* cmd_line_ptr exists from protocol 2.02 */

_Static_assert(BP_PMUOS_CMDLINE_SIZE == BOOT_INFO_CMDLINE - 1, "the bzImage's cmdline_size is boot_info's");

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* boot.rst "Assigned boot loader ids"; IDs above 0xD come through ext_loader_type. */
static const char *const loader_ids[] = {
	[0x00] = "LILO",     [0x01] = "Loadlin", [0x02] = "bootsect-loader",
	[0x03] = "Syslinux", [0x04] = "Etherboot/gPXE/iPXE", [0x05] = "ELILO",
	[0x07] = "GRUB",     [0x08] = "U-Boot",  [0x09] = "Xen",
	[0x0a] = "Gujin",    [0x0b] = "QEMU",    [0x0c] = "Arcturus Networks uCbootloader",
	[0x0d] = "kexec-tools", [0x11] = "Minimal Linux Bootloader",
	[0x12] = "OVMF UEFI virtualization stack",
};

static void set_loader(char *out, uint8_t type, uint8_t ext_type)
{
	static const char hex[] = "0123456789abcdef";
	static const char unnamed[] = "loader ID 0x";
	unsigned id = type >> 4;
	const char *name;

	if (type == 0xff)
		name = "undefined loader (0xFF)";
	else {
		if (id == 0xe)
			id = ext_type + 0x10u;
		name = id < ARRAY_SIZE(loader_ids) ? loader_ids[id] : NULL;
	}
	if (name) {
		size_t n = MIN(strlen(name), (size_t)BOOT_INFO_LOADER - 1);
		memcpy(out, name, n);
		out[n] = 0;
		return;
	}
	/* e.g. "loader ID 0x10": at most 0x10d, three digits. */
	size_t n = sizeof(unnamed) - 1;
	memcpy(out, unnamed, n);
	if (id > 0xff)
		out[n++] = hex[id >> 8];
	out[n++] = hex[(id >> 4) & 15];
	out[n++] = hex[id & 15];
	out[n] = 0;
}

static void read_cmdline(const uint8_t *bp, bp_read_fn read, void *ctx, struct boot_info *bi,
			 struct bp_report *rep)
{
	if ((bp[BP_VERSION] | bp[BP_VERSION + 1] << 8) < VERSION_CMD_LINE_PTR)
		return;
	rep->cmdline_addr = rd32(bp + BP_CMD_LINE_PTR) | (uint64_t)rd32(bp + BP_EXT_CMD_LINE_PTR) << 32;
	if (!rep->cmdline_addr)
		return; /* boot.rst: 0 means the loader gives no command line */

	size_t got = read(ctx, rep->cmdline_addr, bi->cmdline, BOOT_INFO_CMDLINE);
	size_t len = strnlen(bi->cmdline, MIN(got, (size_t)BOOT_INFO_CMDLINE));

	if (len == BOOT_INFO_CMDLINE) {
		len = BOOT_INFO_CMDLINE - 1;
		rep->cmdline_truncated = true; /* boot.rst: "automatically truncated by the kernel" */
	} else if (len == got) {
		rep->cmdline_unreadable = true; /* no NUL in what could be read */
	}
	memset(bi->cmdline + len, 0, BOOT_INFO_CMDLINE - len);
}

struct range {
	uint64_t start, end; /* [start, end) bytes; end == 0 means 2^64 */
	uint32_t type;
};

static struct range e820_entry(const uint8_t *bp, uint32_t i)
{
	const uint8_t *e = bp + BP_E820_TABLE + i * BP_E820_ENTRY;
	struct range r = { rd64(e), rd64(e) + rd64(e + 8), rd32(e + 16) };

	if (r.end < r.start && r.end != 0)
		r.end = 0; /* the size runs past 2^64: up to the top */
	if (r.type < BOOT_MEM_USABLE || r.type > BOOT_MEM_BAD)
		r.type = BOOT_MEM_RESERVED;
	return r;
}

/* End compared as a number where 0 is 2^64. */
static bool before_end(uint64_t a, uint64_t end) { return end == 0 || a < end; }
static bool empty(struct range r) { return r.end == r.start; }

/*
 * A sweep over the entries' start and end points, in order: each piece
 * between two neighbouring points gets the highest type of the entries
 * covering it. At most 2 * BP_E820_MAX points, so at most 2 * BP_E820_MAX - 1
 * pieces: boot_info has room for all of them.
 */
_Static_assert(2 * BP_E820_MAX - 1 <= BOOT_INFO_MMAP_MAX, "boot_info.mmap too small for a swept e820 map");

static void sweep_e820(const uint8_t *bp, uint32_t n, struct boot_info *bi, struct bp_report *rep)
{
	bool started = false;
	uint64_t cur = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct range r = e820_entry(bp, i);
		if (!empty(r) && (!started || r.start < cur))
			cur = r.start, started = true;
	}
	while (started) {
		/* The next point after cur; none left when cur is already 2^64. */
		bool more = false;
		uint64_t next = 0;
		uint32_t type = 0, covering = 0;

		for (uint32_t i = 0; i < n; i++) {
			struct range r = e820_entry(bp, i);
			if (empty(r))
				continue;
			if (r.start > cur && (!more || r.start < next))
				next = r.start, more = true;
			if (before_end(cur, r.end) && r.end != 0 && (!more || r.end < next))
				next = r.end, more = true;
			if (r.start <= cur && before_end(cur, r.end)) {
				covering++;
				type = MAX(type, r.type);
			}
		}
		if (!more) {
			/* Only entries reaching 2^64 remain: their piece ends there. */
			if (!type)
				break;
			next = 0;
		}
		if (covering > 1)
			rep->e820_overlap = true;
		if (type) {
			struct boot_mmap_entry *last = bi->mmap_count ? &bi->mmap[bi->mmap_count - 1] : NULL;
			if (last && last->type == type && last->base + last->length == cur)
				last->length += next - cur;
			else
				bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){ cur, next - cur, type, 0 };
		}
		if (next == 0)
			break;
		cur = next;
	}
}

int bootparams_to_boot_info(const uint8_t *bp, bp_read_fn read, void *ctx, struct boot_info *bi,
			    struct bp_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	memset(bi, 0, sizeof(*bi));
	if (rd32(bp + BP_HEADER) != BP_HDRS) {
		rep->error = "no \"HdrS\" signature at 0x202: not a Linux boot protocol boot_params";
		return -1;
	}
	rep->e820_given = bp[BP_E820_ENTRIES];
	rep->e820_used = MIN(rep->e820_given, (uint32_t)BP_E820_MAX);
	sweep_e820(bp, rep->e820_used, bi, rep);
	if (!bi->mmap_count) {
		rep->error = "no memory map: the e820 table has no entry of non-zero size";
		return -1;
	}
	bi->magic = BOOT_INFO_MAGIC;
	bi->boot_path = BOOT_PATH_LINUX;
	set_loader(bi->loader, bp[BP_TYPE_OF_LOADER], bp[BP_EXT_LOADER_TYPE]);
	read_cmdline(bp, read, ctx, bi, rep);
	return 0;
}
