/*
 * A stand-in for a Xeon Phi (KNC) card's bootstrap, as far as entering a
 * bzImage goes: the system tests boot build/pmuos.bzImage's 32-bit entry
 * with it (QEMU's Linux loader only ever takes the 16-bit one).
 *
 * QEMU's Multiboot loader starts this in 32-bit protected mode with the
 * bzImage as module 0. It then does what Intel's host driver and the card's
 * bootstrap did between them (Linux drivers/misc/mic/host/mic_x100.c
 * mic_x100_load_firmware and mic_x100_load_command_line; the bootstrap's
 * side per Intel's System Software Developer's Guide 328207 §2.2.4 as quoted
 * by Lasimeri/Intel-Phi-3120A docs/research/boot-protocol.md):
 *   - the whole file at the download address (64 MiB on a real card: SPAD2
 *     bits 31:12), the NUL-terminated command line right after it;
 *   - boot_params: the image's own first page (bp=image), or a fresh zeroed
 *     page at 0x80000 (in a 3120A bootstrap's e820 RAM) with the setup
 *     header copied in (bp=page, boot.rst "32-bit Boot Protocol");
 *     cmd_line_ptr and code32_start set (whether the real bootstrap sets
 *     cmd_line_ptr is unconfirmed); loadflags' KEEP_SEGMENTS (bit 6) set,
 *     as fboot1 does "because the bootstrap's GDT layout differs" (PHI3120
 *     docs/research/boot-protocol.md, from SSDG §2.2.4);
 *   - its e820 table: the Multiboot memory map from 1 MiB up, and below
 *     1 MiB RAM only where a card's bootstrap has it, 0x50000-0x5FFFF and
 *     0x80000-0xCFFFF (PHI3120 docs/results/2026-09-14-p4-tty-smp.md), as
 *     far as this machine has RAM there: 0x50000-0x5FFFF, 0x80000 up to
 *     the BIOS's reserved 0x9FC00, and 0xC0000-0xCFFFF, opened as RAM
 *     through the PAM registers (below). QEMU's 0xA0000-0xBFFFF is the VGA
 *     window, not RAM: left out. So nothing of a PC's low RAM (0x8000, the
 *     usual AP start-up page) is in the map;
 *   - its own GDT, unlike boot.rst's (code 0x08, data 0x10: boot.rst's
 *     __BOOT_DS, 0x18, is past its limit), no stack (ESP = 0),
 *     ESI = boot_params, EBX = EDI = EBP = 0, and a jump to the 32-bit part
 *     where it lies in the copy.
 *
 * Before it enters the image it starts the APs and parks them in 64-bit
 * mode, as a card's bootstrap does ("0F" wake up APs, "10" wait for APs to
 * boot, before "12": PHI3120 docs/results/2026-09-13-reset-2.md;
 * docs/research/os-limitations.md from SSDG §2.2.3-2.2.4): INIT, SIPI and
 * SIPI to all but itself, each AP going from AP_PAGE (in the card's low
 * RAM) into long mode on the stand-in's page tables with the CR0 it had
 * ORed (INIT's CD and NW kept), counting itself in, and halting with
 * interrupts off until the OS's INIT. It stops unless every AP QEMU has
 * (fw_cfg's CPU count) checks in. It leaves EFER.LME set on the BSP (a
 * bootstrap that has run in long mode may: no public source says it
 * clears it), which the image's 32-bit code must not trip on.
 *
 * A card's bootstrap also leaves SFI tables in 0xE0000-0xFFFFF for the OS
 * to find (a 3120A's SYST sat at 0xEF180; platform/sfi.h): with sfi=ADDR
 * it copies module 1 (tests/cardsim/sfi_gen's file, made for ADDR) there,
 * after opening that window for writes as SeaBIOS's make_bios_writable
 * does (src/fw/shadow.c): the q35 MCH's PAM registers, PCI 00:00.0 config
 * 0x90-0x96 (Intel 3 Series Chipset datasheet 316966 §5.1.14-20; QEMU
 * hw/pci-host/q35.c MCH_HOST_BRIDGE_PAM0), 0x3 in a nibble = read/write RAM.
 *
 * Its command line: "[download=ADDR] [bp=image|page] [cmdline=ADDR] [sfi=ADDR]
 * [lowram=none] -- LINE", LINE being pmuos's command line; cmdline=ADDR puts
 * LINE there instead; lowram=none reports no RAM below 1 MiB at all (a
 * machine where the AP start-up code has no place).
 * Anything wrong stops it with a message on COM1 (QEMU's serial port).
 */
#include <stddef.h>
#include <stdint.h>

#include "boot/linux/bootparams.h"
#include "boot/multiboot.h"

#define MB_BOOT_FLAGS   (MB_HEADER_ALIGN | MB_HEADER_MMAP)
#define STR_(x)         #x
#define STR(x)          STR_(x)
#define SEPARATE_PAGE   0x80000u
#define COM1            0x3f8

/* Multiboot 1 header (flags: modules page-aligned, memory map wanted) and entry. */
__asm__(".section .multiboot, \"a\"\n"
	".balign 4\n"
	".long " STR(MB_HEADER_MAGIC) ", " STR(MB_BOOT_FLAGS) ", -(" STR(MB_HEADER_MAGIC) " + " STR(MB_BOOT_FLAGS) ")\n"
	".text\n"
	".globl _start\n"
	"_start:\n"
	"	movl $stack_top, %esp\n"
	"	pushl %ebx\n"
	"	pushl %eax\n"
	"	call bootstrap_main\n"
	"1:	hlt\n"
	"	jmp 1b\n"
	".bss\n"
	".balign 16\n"
	".skip 4096\n"
	"stack_top:\n");

/*
 * The APs' start-up code, copied to AP_PAGE (SIPI vector AP_PAGE >> 12):
 * real mode, then 32-bit protected mode on its own GDT, then long mode on
 * park_pml4 (the low 1 GiB in 2 MiB pages, which holds this program), then
 * park64 in this program: one more AP parked, and a halt for good.
 */
#define AP_PAGE   0x50000u
#define PARK(x)   "(" #x " - ap16_start + 0x50000)"
__asm__(".section .rodata\n"
	".globl ap16_start, ap16_end\n"
	".code16\n"
	"ap16_start:\n"
	"	cli\n"
	"	movw %cs, %ax\n"
	"	movw %ax, %ds\n"
	"	lgdtl ap_gdtr - ap16_start\n"
	"	movl %cr0, %eax\n"
	"	orl $1, %eax\n"
	"	movl %eax, %cr0\n"
	"	ljmpl $0x08, $" PARK(ap32) "\n"
	".code32\n"
	"ap32:\n"
	"	movl $0x10, %eax\n"
	"	movl %eax, %ds\n"
	"	movl %eax, %es\n"
	"	movl %eax, %ss\n"
	"	movl %cr4, %eax\n"
	"	orl $0x20, %eax\n"            /* CR4.PAE */
	"	movl %eax, %cr4\n"
	"	movl $park_pml4, %eax\n"
	"	movl %eax, %cr3\n"
	"	movl $0xc0000080, %ecx\n"     /* IA32_EFER */
	"	rdmsr\n"
	"	orl $0x100, %eax\n"           /* LME */
	"	wrmsr\n"
	"	movl %cr0, %eax\n"
	"	orl $0x80000000, %eax\n"      /* PG */
	"	movl %eax, %cr0\n"
	"	ljmpl $0x18, $park64\n"
	"	.balign 8\n"
	"ap_gdt:\n"
	"	.quad 0, 0x00cf9a000000ffff, 0x00cf92000000ffff, 0x00af9a000000ffff\n"
	"ap_gdtr:\n"
	"	.word 31\n"
	"	.long " PARK(ap_gdt) "\n"
	"ap16_end:\n"
	".text\n"
	".code64\n"
	"park64:\n"
	"	movl $aps_parked, %eax\n"
	"	lock incl (%rax)\n"
	"1:	cli\n"
	"	hlt\n"
	"	jmp 1b\n"
	".code32\n");

extern const uint8_t ap16_start[], ap16_end[];
volatile uint32_t aps_parked;
/* The low 1 GiB, identity-mapped in 2 MiB pages (PS | RW | P), for the parked APs. */
uint64_t park_pml4[512] __attribute__((aligned(4096)));
static uint64_t park_pdpt[512] __attribute__((aligned(4096)));
static uint64_t park_pd[512] __attribute__((aligned(4096)));

static const uint64_t gdt[] __attribute__((aligned(8))) = {
	0,
	0x00cf9a000000ffff, /* 0x08: code, flat */
	0x00cf92000000ffff, /* 0x10: data, flat */
};

static void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }

static void say(const char *s)
{
	while (*s)
		outb(COM1, (uint8_t)*s++);
}

static void say_dec(uint32_t v)
{
	char d[10];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		outb(COM1, (uint8_t)d[--n]);
}

static void __attribute__((noreturn)) halt(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

static void __attribute__((noreturn)) stop(const char *why)
{
	say("knc_bootstrap: ");
	say(why);
	say("\n");
	halt();
}

static void copy(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	if (dst < src)
		for (uint32_t i = 0; i < n; i++)
			dst[i] = src[i];
	else
		while (n--)
			dst[n] = src[n];
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static int starts(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

static uint32_t hex(const char *s)
{
	uint32_t v = 0;

	if (!starts(s, "0x"))
		stop("addresses are hex with 0x");
	for (s += 2; *s && *s != ' '; s++) {
		char c = *s;
		c = c >= 'A' && c <= 'F' ? (char)(c - 'A' + 'a') : c;
		uint32_t d = c >= '0' && c <= '9' ? (uint32_t)(c - '0') : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10) : 16;
		if (d > 15)
			stop("bad hex digit");
		v = v << 4 | d;
	}
	return v;
}

#define PCI_CONFIG_ADDRESS 0xcf8 /* PCI Local Bus 3.0 §3.2.2.3.2: configuration mechanism #1 */
#define PCI_CONFIG_DATA    0xcfc
#define MCH_PAM0           0x90  /* PAM0: 0xF0000-0xFFFFF in bits 5:4; PAM1-6: 32 KiB each from 0xC0000 */
#define PAM_RW             0x33  /* both halves of a PAM register: read/write to RAM */

static void pam_write(uint32_t reg, uint8_t v)
{
	outl(PCI_CONFIG_ADDRESS, 0x80000000u | (reg & 0xfc));
	outb(PCI_CONFIG_DATA + (reg & 3), v);
}

/* [from, to) within 0xC0000-0xFFFFF as read/write RAM, in the PAM registers' 32 KiB steps. */
static void open_ram(uint32_t from, uint32_t to)
{
	for (uint32_t a = from & ~0x7fffu; a < to; a += 0x8000)
		pam_write(a >= 0xf0000 ? MCH_PAM0 : MCH_PAM0 + 1 + (a - 0xc0000) / 0x8000, a >= 0xf0000 ? 0x30 : PAM_RW);
}

static uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static uint64_t rdtsc(void) { uint64_t v; __asm__ volatile("rdtsc" : "=A"(v)); return v; }

#define FW_CFG_SELECT  0x510 /* QEMU docs/specs/fw_cfg.rst: selector (16-bit), data (8-bit) */
#define FW_CFG_DATA    0x511
#define FW_CFG_NB_CPUS 0x05
#define LAPIC          0xfee00000u /* the xAPIC's registers (SDM Vol. 3A Table 10-1) */
#define LAPIC_SVR      0xf0
#define LAPIC_ICR_LO   0x300
#define ICR_ALL_BUT_SELF (3u << 18)
#define ICR_INIT       0x00004500u /* INIT, level assert */
#define ICR_SIPI       0x00004600u /* start-up, the vector in 7:0 */
#define TICKS_PER_MS   1000000u    /* the TSC under -icount shift=0: 1 GHz */

static void spin_ms(uint32_t ms)
{
	for (uint64_t t = rdtsc(); rdtsc() - t < (uint64_t)ms * TICKS_PER_MS;)
		;
}

static void lapic_write(uint32_t reg, uint32_t v) { *(volatile uint32_t *)(LAPIC + reg) = v; }

/*
 * The BSP's wait for the APs halts between ticks of the local APIC timer
 * (periodic, PARK_TICK_NS apart; SDM Vol. 3A §10.5.4): spinning, it took
 * most of QEMU's round-robin turns from the APs, 20 ms of virtual time
 * each, 5 s for 243. An interrupt gate (SDM Vol. 3A §6.11) for
 * PARK_VECTOR in the stand-in's own IDT takes each tick: an EOI, an IRET.
 * The PC's 8259 PICs, which a card lacks, are masked first: SeaBIOS left
 * the PIT's IRQ 0 on vector 8 through LINT0.
 */
#define PIC1_DATA      0x21
#define PIC2_DATA      0xa1
#define LAPIC_EOI      0xb0
#define LAPIC_LVT_TMR  0x320
#define LAPIC_TMR_INIT 0x380
#define LAPIC_TMR_DIV  0x3e0
#define LVT_MASKED     (1u << 16)
#define LVT_PERIODIC   (1u << 17)
#define TMR_DIV_1      0xb
#define PARK_VECTOR    0x20
#define PARK_TICK_NS   1000000u /* QEMU's APIC timer: one count a virtual ns at divide 1 */
#define PARK_WAIT_MS   30000u

__asm__(".text\n"
	"park_tick:\n"
	"	movl $0, " STR(LAPIC) " + " STR(LAPIC_EOI) "\n"
	"	iret\n");
extern const uint8_t park_tick[];
static uint64_t park_idt[PARK_VECTOR + 1] __attribute__((aligned(8)));

static void ticks_on(void)
{
	uint16_t cs;
	__asm__ volatile("movw %%cs, %0" : "=r"(cs));
	uint32_t at = (uint32_t)park_tick;
	park_idt[PARK_VECTOR] = (uint64_t)(at >> 16) << 48 | 0x8e00ull << 32 | (uint32_t)cs << 16 | (at & 0xffff);
	struct __attribute__((packed)) { uint16_t limit; uint32_t base; } idtr = { sizeof(park_idt) - 1, (uint32_t)park_idt };
	__asm__ volatile("lidt %0" :: "m"(idtr));
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
	lapic_write(LAPIC_TMR_DIV, TMR_DIV_1);
	lapic_write(LAPIC_LVT_TMR, LVT_PERIODIC | PARK_VECTOR);
	lapic_write(LAPIC_TMR_INIT, PARK_TICK_NS);
}

static void ticks_off(void)
{
	lapic_write(LAPIC_TMR_INIT, 0);
	lapic_write(LAPIC_LVT_TMR, LVT_MASKED);
}

/* The APs started and parked (see the top); stops unless every AP QEMU has checks in within PARK_WAIT_MS. */
static void park_aps(void)
{
	outw(FW_CFG_SELECT, FW_CFG_NB_CPUS);
	uint32_t cpus = inb(FW_CFG_DATA); /* 16 bits, little-endian, a byte per read of the data port */
	cpus |= (uint32_t)inb(FW_CFG_DATA) << 8;
	if (cpus <= 1)
		return;
	park_pml4[0] = (uint32_t)park_pdpt | 3;
	park_pdpt[0] = (uint32_t)park_pd | 3;
	for (uint32_t i = 0; i < 512; i++)
		park_pd[i] = (uint64_t)i << 21 | 0x83;
	copy((uint8_t *)AP_PAGE, ap16_start, (uint32_t)(ap16_end - ap16_start));
	lapic_write(LAPIC_SVR, 0x1ff); /* software-enabled, spurious vector 0xFF */
	lapic_write(LAPIC_ICR_LO, ICR_ALL_BUT_SELF | ICR_INIT);
	spin_ms(10);
	for (int i = 0; i < 2; i++) {
		lapic_write(LAPIC_ICR_LO, ICR_ALL_BUT_SELF | ICR_SIPI | AP_PAGE >> 12);
		spin_ms(1);
	}
	ticks_on();
	for (uint64_t t = rdtsc(); aps_parked < cpus - 1 && rdtsc() - t < (uint64_t)PARK_WAIT_MS * TICKS_PER_MS;)
		__asm__ volatile("sti; hlt; cli");
	ticks_off();
	if (aps_parked != cpus - 1) {
		say("knc_bootstrap: ");
		say_dec(aps_parked);
		say(" of ");
		say_dec(cpus - 1);
		say(" APs parked in 64-bit mode within " STR(PARK_WAIT_MS) " ms\n");
		halt();
	}
}

/* Module 1 (SFI tables made for this address) copied to `at` in the BIOS window. */
static void place_sfi(const struct mb_info *mb, uint32_t at)
{
	if (mb->mods_count < 2)
		stop("sfi= needs the SFI tables as module 1");
	const uint32_t *mod = (const uint32_t *)mb->mods_addr + 4;
	uint32_t size = mod[1] - mod[0];
	if (at < 0xc0000 || size > 0x100000 - at)
		stop("sfi= must place the tables within 0xC0000-0xFFFFF");
	open_ram(at, at + size);
	const uint8_t *src = (const uint8_t *)mod[0];
	volatile uint8_t *dst = (volatile uint8_t *)at;
	for (uint32_t i = 0; i < size; i++)
		dst[i] = src[i];
	for (uint32_t i = 0; i < size; i++)
		if (dst[i] != src[i])
			stop("the SFI tables did not stay where they were written");
}

/* A card's RAM below 1 MiB (see the top); ROM_RAM is what of it this machine gives only through PAM. */
static const uint32_t card_low_ram[][2] = { { 0x50000, 0x60000 }, { 0x80000, 0xd0000 } };
#define ROM_RAM_FROM 0xc0000
#define ROM_RAM_TO   0xd0000
#define LOW_END      0x100000

static uint32_t e820_count;
static int no_low_ram;

static void e820_add(uint8_t *bp, uint64_t base, uint64_t end, uint32_t type)
{
	if (end <= base || e820_count >= BP_E820_MAX)
		return;
	uint8_t *o = bp + BP_E820_TABLE + e820_count++ * BP_E820_ENTRY;
	put64(o, base);
	put64(o + 8, end - base);
	put32(o + 16, type);
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* bp's e820 table: a card's low RAM as far as this machine has it, then the Multiboot map from 1 MiB. */
static void build_e820(const struct mb_info *mb, uint8_t *bp)
{
	open_ram(ROM_RAM_FROM, ROM_RAM_TO);
	for (volatile uint32_t *w = (volatile uint32_t *)ROM_RAM_FROM; w < (volatile uint32_t *)ROM_RAM_TO; w += 1024) {
		*w = (uint32_t)(uintptr_t)w;
		if (*w != (uint32_t)(uintptr_t)w)
			stop("0xC0000-0xCFFFF did not become RAM");
	}
	for (unsigned r = 0; r < 2 && !no_low_ram; r++) {
		uint32_t base = card_low_ram[r][0], end = card_low_ram[r][1];
		for (uint32_t a = mb->mmap_addr; a < mb->mmap_addr + mb->mmap_length;) {
			const struct mb_mmap *e = (const struct mb_mmap *)a;
			if (e->type == 1)
				e820_add(bp, max64(base, e->base), min64(end, e->base + e->length), 1);
			a += e->size + 4;
		}
		e820_add(bp, max64(base, ROM_RAM_FROM), min64(end, ROM_RAM_TO), 1);
	}
	for (uint32_t a = mb->mmap_addr; a < mb->mmap_addr + mb->mmap_length;) {
		const struct mb_mmap *e = (const struct mb_mmap *)a;
		e820_add(bp, max64(e->base, LOW_END), e->base + e->length, e->type);
		a += e->size + 4;
	}
	bp[BP_E820_ENTRIES] = (uint8_t)e820_count;
}

void bootstrap_main(uint32_t magic, const struct mb_info *mb)
{
	uint32_t download = 0x4000000, cmdline_at = 0, sfi_at = 0;
	int in_place = 0;
	const char *line = "";

	if (magic != MB_BOOT_MAGIC || !(mb->flags & MB_INFO_MODS) || mb->mods_count < 1 || !(mb->flags & MB_INFO_MMAP))
		stop("needs a Multiboot loader, the bzImage as a module and a memory map");
	if (mb->flags & MB_INFO_CMDLINE) {
		const char *s = (const char *)mb->cmdline;
		for (; *s; s++) {
			if (starts(s, "download="))
				download = hex(s + 9);
			else if (starts(s, "cmdline="))
				cmdline_at = hex(s + 8);
			else if (starts(s, "sfi="))
				sfi_at = hex(s + 4);
			else if (starts(s, "bp=image"))
				in_place = 1;
			else if (starts(s, "lowram=none"))
				no_low_ram = 1;
			else if (starts(s, "-- ")) {
				line = s + 3;
				break;
			}
			while (*s && *s != ' ')
				s++;
			if (!*s)
				break;
		}
	}

	const uint32_t *mod = (const uint32_t *)mb->mods_addr;
	const uint8_t *file = (const uint8_t *)mod[0];
	uint32_t size = mod[1] - mod[0];
	if (size < BP_SIZE || file[BP_HEADER] != 'H' || file[BP_HEADER + 3] != 'S')
		stop("module 0 is not a bzImage");

	if (sfi_at)
		place_sfi(mb, sfi_at);

	/* The image and, right after it, the command line: Intel's placement. */
	uint8_t *image = (uint8_t *)download;
	copy(image, file, size);
	uint8_t *cmd = cmdline_at ? (uint8_t *)cmdline_at : image + size;
	uint32_t n = 0;
	for (; line[n]; n++)
		cmd[n] = (uint8_t)line[n];
	cmd[n] = 0;

	uint8_t *bp = in_place ? image : (uint8_t *)SEPARATE_PAGE;
	if (!in_place) {
		uint32_t header_end = 0x202 + image[BP_JUMP + 1];
		for (uint32_t i = 0; i < BP_SIZE; i++)
			bp[i] = i >= BP_SETUP_SECTS && i < header_end ? image[i] : 0;
	}
	uint32_t sects = image[BP_SETUP_SECTS] ? image[BP_SETUP_SECTS] : 4;
	uint32_t entry = download + (sects + 1) * 512;
	put32(bp + BP_CODE32_START, entry);
	put32(bp + BP_CMD_LINE_PTR, (uint32_t)cmd);
	bp[BP_LOADFLAGS] |= BP_KEEP_SEGMENTS;
	build_e820(mb, bp);
	park_aps();
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0xc0000080u));
	__asm__ volatile("wrmsr" :: "a"(lo | 0x100u), "d"(hi), "c"(0xc0000080u)); /* EFER.LME left set */

	struct __attribute__((packed)) { uint16_t limit; uint32_t base; } gdtr = { sizeof(gdt) - 1, (uint32_t)gdt };
	__asm__ volatile("lgdt %0\n"
			 "ljmp $0x08, $1f\n"
			 "1: movl $0x10, %%eax\n"
			 "movl %%eax, %%ds\n"
			 "movl %%eax, %%es\n"
			 "movl %%eax, %%ss\n"
			 "xorl %%esp, %%esp\n"
			 "xorl %%ebx, %%ebx\n"
			 "xorl %%edi, %%edi\n"
			 "xorl %%ebp, %%ebp\n"
			 "jmp *%%ecx\n"
			 :: "m"(gdtr), "S"(bp), "c"(entry) : "eax", "memory");
	__builtin_unreachable();
}
