/*
 * platform/platform.h for a Xeon Phi (KNC) card: no ACPI, no port I/O and
 * no legacy PC devices (SSDG §4.2.2 per PHI3120; docs/knc.md). The
 * processors come from SFI, the TSC's rate from the SBOX (SPAD4's ICC
 * divider and CURRENTRATIO), early status goes out through SBOX scratchpads
 * (Barrelfish's status characters), the mailbox lives in card memory
 * (pmuos.mbox=). Chosen when CPUID reports family 0x0B, or by platform=knc.
 *
 * Simulated here: scripts/qemu.sh KNC_MMIO puts a BAR4 file at the card's
 * DBOX/SBOX addresses (a QEMU pc-dimm at 0x8007C0000), and the simulated
 * card (tests/cardsim/card.py) plays the host side of these registers.
 */
#include "platform/knc/knc.h"
#include "platform/knc/sbox.h"
#include "platform/sfi.h"
#include "kernel/console.h"
#include "kernel/paging.h"
#include "arch/sync.h"
#include "arch/tsc.h"

#define BAR4_BYTES   0x20000 /* DBOX + SBOX */
/*
 * How long a status word waits for the host to take the last, in TSC ticks
 * (about 15 ms on a card or under QEMU's -icount; the rate is not known yet
 * when the first words go out). pmuctl boot reads them until the mailbox is
 * READY; past that wait the host is taken as gone and status output stops
 * for good (the mailbox's console ring carries everything): a card without
 * a reader stalls once, for this long.
 */
#define STATUS_WAIT_TICKS (1ULL << 24)

static volatile uint8_t *sbox; /* mapped at KNC_CARD_SBOX_BASE by knc_init */
static struct sfi_info sfi;
static bool host_gone;

static uint32_t rd(uint32_t off) { return knc_reg_read(sbox, off); }

/* Whether the host has taken the last status word (no valid byte left in SPAD8). */
static bool status_taken(void)
{
	char c[4];
	return knc_status_decode(rd(KNC_SPAD(KNC_SPAD_STATUS_CTRL)), 0, c) == 0;
}

static void status_word(const char *c, unsigned n)
{
	uint32_t data, ctrl = knc_status_encode(c, n, &data);

	if (host_gone)
		return;
	for (uint64_t start = rdtsc(); !status_taken();)
		if (rdtsc() - start > STATUS_WAIT_TICKS) {
			host_gone = true;
			return;
		}
	knc_reg_write(sbox, KNC_SPAD(KNC_SPAD_STATUS_DATA), data);
	knc_reg_write(sbox, KNC_SPAD(KNC_SPAD_STATUS_CTRL), ctrl); /* the host takes it on this */
}

/* The console device: 4 characters per status word, under the console lock. */
static void status_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 4)
		status_word(s + i, n - i < 4 ? (unsigned)(n - i) : 4);
}

/* No receiving here (console input comes only through the mailbox): nothing to resume. */
static void status_rx_resume(void) {}

static const struct console_dev status_console = { .write = status_write, .rx_resume = status_rx_resume };

static void knc_console_init(void)
{
	console_set_device(NULL); /* nothing until the SBOX is mapped (knc_init): no UART on a card */
}

static const char *knc_init(const struct boot_info *bi)
{
	if (!paging_map_identity(KNC_CARD_DBOX_BASE, BAR4_BYTES, true))
		return "cannot map the SBOX (out of page-table memory)";
	sbox = (volatile uint8_t *)KNC_CARD_SBOX_BASE;
	/* Nothing of this boot's is there yet: a stale ctrl word (a 3120A's bootstrap leaves 0x00008086) would
	 * hold the first word back, or be taken for characters by a host that does not clear it (BF's card
	 * serial_early_init clears it too). */
	knc_reg_write(sbox, KNC_SPAD(KNC_SPAD_STATUS_CTRL), 0);
	console_set_device(&status_console);
	kprintf("pmuos: KNC platform: SBOX at %#llx, no ACPI, no legacy devices\n", KNC_CARD_SBOX_BASE);
	return sfi_read(&sfi);
}

/* The DBOX page is mapped by the boot page tables (boot/entry.S) until paging_init, by knc_init after. */
static void knc_post(uint32_t code)
{
	knc_reg_write((volatile void *)KNC_CARD_DBOX_BASE, KNC_DBOX_POSTCODE, code);
}

static void knc_time_init(void)
{
	uint32_t spad4 = rd(KNC_SPAD(KNC_SPAD_PLATFORM)), ratio = rd(KNC_CURRENTRATIO);
	uint32_t khz = knc_core_khz(spad4, ratio);

	if (!khz) {
		kprintf("knc: SPAD4 %#x and CURRENTRATIO %#x give no core clock; TSC taken as 1100 MHz (a 3120A's)\n",
			spad4, ratio);
		khz = 1100000;
	}
	tsc_hz = (uint64_t)khz * 1000;
}

static void knc_irq_init(void)
{
	/* No legacy interrupt sources, and no console input but the mailbox's. */
}

static uint32_t knc_cpus(uint32_t *apic_ids, uint32_t max)
{
	return sfi_cpus(&sfi, apic_ids, max);
}

static bool knc_shared_memory(unsigned n, uint64_t *base, uint64_t *size)
{
	return false; /* only card memory: the mailbox's place comes with pmuos.mbox= */
}

/*
 * Not yet: a card's host rings through an SBOX APICICR the card programs
 * with a vector and its APIC ID, and the card rings the host with SDBIC
 * DBREQ (docs/knc.md, "Doorbells"). The card polls its mailbox meanwhile.
 */
static const struct host_doorbell *knc_doorbell(uint8_t vector)
{
	return NULL;
}

static const char *knc_power_off(void)
{
	return "a card is powered off by its host; `pmuctl reset --warm` resets it through RGCR";
}

static const char *knc_power_reset(void)
{
	return "a card cannot reset itself: its host resets it (`pmuctl reset --warm`, RGCR)";
}

const struct platform platform_knc = {
	.name = "knc",
	.apic_layout = &apic_layout_knc,
	.console_init = knc_console_init,
	.init = knc_init,
	.time_init = knc_time_init,
	.irq_init = knc_irq_init,
	.cpus = knc_cpus,
	.shared_memory = knc_shared_memory,
	.doorbell = knc_doorbell,
	.power_off = knc_power_off,
	.power_reset = knc_power_reset,
	.post = knc_post,
};
