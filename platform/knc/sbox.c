/* SBOX/DBOX register decoders and accessors; see platform/knc/sbox.h for the layout and sources. */
#include "platform/knc/sbox.h"

#define FIELD(v, shift, mask) (((v) >> (shift)) & (mask))

static bool printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }

enum knc_post knc_postcode_decode(uint32_t v, char out[3])
{
	uint8_t lo = v & 0xff, hi = (v >> 8) & 0xff;

	out[0] = out[1] = '?';
	out[2] = 0;
	if (v == 0)
		return KNC_POST_NOTHING;
	if (v == KNC_POST_GONE)
		return KNC_POST_OFF_BUS;
	if (v >> 16 || !printable(lo) || !printable(hi))
		return KNC_POST_GARBLED;
	out[0] = (char)lo; /* low byte first (MPSS mic_getpostcode) */
	out[1] = (char)hi;
	return KNC_POST_CODE;
}

struct knc_meminfo knc_meminfo_decode(uint32_t v)
{
	return (struct knc_meminfo){
		.memtest_disabled = v & KNC_MEMINFO_NO_TEST,
		.usage = FIELD(v, KNC_MEMINFO_USAGE_SHIFT, KNC_MEMINFO_USAGE_MASK),
		.size = (uint64_t)(v >> KNC_MEMINFO_KIB_SHIFT) * 1024,
	};
}

struct knc_download knc_download_decode(uint32_t v)
{
	return (struct knc_download){
		.ready = v & KNC_DOWNLOAD_READY,
		.bsp_apic_id = FIELD(v, KNC_DOWNLOAD_APIC_SHIFT, KNC_DOWNLOAD_APIC_MASK),
		.addr = v & KNC_DOWNLOAD_ADDR_MASK,
	};
}

uint32_t knc_download_encode(bool ready, uint32_t bsp_apic_id, uint32_t addr)
{
	if (addr & ~KNC_DOWNLOAD_ADDR_MASK || bsp_apic_id > KNC_DOWNLOAD_APIC_MASK)
		return 0;
	return addr | bsp_apic_id << KNC_DOWNLOAD_APIC_SHIFT | (ready ? KNC_DOWNLOAD_READY : 0);
}

enum knc_bootstrap knc_bootstrap_state(uint32_t postcode, uint32_t spad2)
{
	struct knc_download dl = knc_download_decode(spad2);

	if (postcode == KNC_POST_FAILED_F2 || postcode == KNC_POST_FAILED_F4)
		return KNC_BOOTSTRAP_FAILED;
	/* All ones: SPAD2 was read while the card was off the bus, whatever POST said a moment later. */
	if (spad2 == UINT32_MAX)
		return KNC_BOOTSTRAP_BUSY;
	return postcode == KNC_POST_READY && dl.ready && dl.addr ? KNC_BOOTSTRAP_READY : KNC_BOOTSTRAP_BUSY;
}

struct knc_platform knc_platform_decode(uint32_t v)
{
	struct knc_platform p = {
		.thread_mask = v & KNC_PLATFORM_THREADS_MASK,
		.l2_kib = FIELD(v, KNC_PLATFORM_CACHE_SHIFT, KNC_PLATFORM_CACHE_MASK) == 3 ? 256 : 512,
		.gddr_channels = FIELD(v, KNC_PLATFORM_CHANNELS_SHIFT, KNC_PLATFORM_CHANNELS_MASK) + 1,
		.active_cores = FIELD(v, KNC_PLATFORM_CORES_SHIFT, KNC_PLATFORM_CORES_MASK),
		.icc_divider = FIELD(v, KNC_PLATFORM_ICC_SHIFT, KNC_PLATFORM_ICC_MASK),
		.soft_reset = v & KNC_PLATFORM_SOFT_RESET,
		.internal_flash = v & KNC_PLATFORM_INTERNAL_FLASH,
	};

	if (!p.icc_divider)
		p.icc_divider = KNC_PLATFORM_ICC_NOMINAL;
	for (uint32_t m = p.thread_mask; m; m >>= 1)
		p.threads_per_core += m & 1;
	return p;
}

struct knc_ratio knc_ratio_decode(uint32_t v)
{
	uint32_t cur = v & KNC_RATIO_MASK, ff = FIELD(cur, KNC_RATIO_FF_SHIFT, KNC_RATIO_FF_MASK);

	return (struct knc_ratio){
		.current = cur,
		.goal = FIELD(v, KNC_RATIO_GOAL_SHIFT, KNC_RATIO_MASK),
		.fb = FIELD(cur, KNC_RATIO_FB_SHIFT, KNC_RATIO_FB_MASK),
		.ff_div = ff == 3 ? 1 : ff == 2 ? 2 : 4, /* INTEL-K1OM BITS_TO_DIV */
	};
}

uint32_t knc_core_khz(uint32_t spad4, uint32_t currentratio)
{
	struct knc_platform p = knc_platform_decode(spad4);
	struct knc_ratio r = knc_ratio_decode(currentratio);

	/* Exact kHz: Intel's integer 4000 / divider loses nothing at the nominal 20. */
	return (uint32_t)((uint64_t)KNC_CORE_VCO_MHZ * 1000 * r.fb / ((uint64_t)p.icc_divider * r.ff_div));
}

struct knc_corefreq knc_corefreq_decode(uint32_t v)
{
	return (struct knc_corefreq){
		.ratio = v & KNC_COREFREQ_RATIO_MASK,
		.fuse = v & KNC_COREFREQ_FUSE,
		.async = v & KNC_COREFREQ_ASYNC,
		.booted = v & KNC_COREFREQ_BOOTED,
	};
}

uint32_t knc_corevolt_mv(uint32_t v)
{
	uint32_t code = v & KNC_COREVOLT_CODE_MASK;

	return code ? 250 + 5 * (code - 1) : 0;
}

struct knc_icr knc_icr_decode(uint32_t lo, uint32_t hi)
{
	return (struct knc_icr){
		.vector = lo & KNC_ICR_VECTOR_MASK,
		.mode = FIELD(lo, KNC_ICR_MODE_SHIFT, KNC_ICR_MODE_MASK),
		.shorthand = FIELD(lo, KNC_ICR_SHORTHAND_SHIFT, KNC_ICR_SHORTHAND_MASK),
		.logical = lo & KNC_ICR_LOGICAL,
		.pending = lo & KNC_ICR_PENDING,
		.send = lo & KNC_ICR_SEND,
		.level = lo & KNC_ICR_LEVEL,
		.trigger = lo & KNC_ICR_TRIGGER,
		.dest = hi,
	};
}

uint32_t knc_boot_icr_low(void)
{
	return KNC_BOOT_VECTOR | KNC_ICR_SEND;
}

uint32_t knc_si_doorbells(uint32_t v)
{
	return v & KNC_SI_DOORBELLS;
}

unsigned knc_status_decode(uint32_t ctrl, uint32_t data, char out[4])
{
	unsigned n = 0;

	for (int i = 0; i < 4; i++) {
		uint8_t c = (ctrl >> (8 * i)) & 0xff;
		if (c && !(c & 0x80)) /* BF host serial.c: skip empty and bit-7 bytes */
			out[n++] = (char)((data >> (8 * i)) & 0xff);
	}
	return n;
}

uint32_t knc_status_encode(const char *s, unsigned n, uint32_t *data)
{
	uint32_t ctrl = 0;

	*data = 0;
	for (unsigned i = 0; i < n && i < 4; i++) {
		*data |= (uint32_t)(uint8_t)s[i] << (8 * i);
		ctrl |= KNC_STATUS_VALID << (8 * i);
	}
	return ctrl;
}

bool knc_etc_ticks(uint32_t high1, uint32_t low, uint32_t high2, uint64_t *ticks)
{
	if (high1 != high2)
		return false; /* LOW wrapped between the reads */
	*ticks = ((uint64_t)high1 << 32 | low) >> KNC_ETC_LOW_BITS;
	return true;
}

uint64_t knc_etc_ns(uint64_t ticks)
{
	return ticks * (1000000000u / KNC_ETC_HZ); /* 64 ns exactly */
}

uint32_t knc_reg_read(volatile void *base, uint32_t off)
{
	return *(volatile uint32_t *)((volatile uint8_t *)base + off);
}

void knc_reg_write(volatile void *base, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)((volatile uint8_t *)base + off) = v;
}

uint64_t knc_etc_read(volatile void *sbox)
{
	for (;;) {
		uint64_t ticks;
		uint32_t high = knc_reg_read(sbox, KNC_ETC_HIGH);
		uint32_t low = knc_reg_read(sbox, KNC_ETC_LOW);

		if (knc_etc_ticks(high, low, knc_reg_read(sbox, KNC_ETC_HIGH), &ticks))
			return ticks;
	}
}
