/*
 * The Xeon Phi x100 (Knights Corner) SBOX and DBOX registers pmuos and its
 * host tool use, described once: offsets, fields, and decoders/encoders for
 * each register word (platform/knc/sbox.c; unit tests tests/unit/test_sbox.c).
 * The accessors take the register block's base from the caller: the card
 * sees its SBOX at KNC_CARD_SBOX_BASE, the host at BAR4 + KNC_BAR4_SBOX.
 *
 * Sources, named in each comment (docs/knc.md lists them):
 *   LNX-H/LNX-C  Linux drivers/misc/mic/host/mic_x100.h, mic_x100.c (v3.13-v5.9)
 *   LNX-CARD     Linux drivers/misc/mic/card/mic_x100.c, mic_x100.h
 *   MPSS         Intel mpss-modules 3.2.3: include/mic_common.h,
 *                include/mic/micsboxdefine.h, host/uos_download.c, ras/micras_*.c
 *   INTEL-K1OM   Intel's card kernel 2.6.38.8+mpss3.5.1: arch/x86/kernel/intelmic.c,
 *                mic_etc.c, include/asm/mic_def.h, asm/mic/mic_knc/micsboxdefine.h
 *   BF           Barrelfish devices/xeon_phi/{xeon_phi_boot,xeon_phi_apic,
 *                xeon_phi_sbox,xeon_phi_serial,xeon_phi_scratch}.dev, tools/weever
 *   PHI3120      Lasimeri/Intel-Phi-3120A: readings from a real card (3120A)
 * Where sources disagree the comment says which one is followed and why.
 */
#ifndef PLATFORM_KNC_SBOX_H
#define PLATFORM_KNC_SBOX_H

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------ where */

#define KNC_PCI_VENDOR       0x8086
#define KNC_PCI_DEVICE_FIRST 0x2250 /* x100 device IDs 0x2250..0x225e (LNX-H MIC_X100_PCI_DEVICE_*) */
#define KNC_PCI_DEVICE_LAST  0x225e
#define KNC_APERTURE_BAR     0      /* card memory: BAR0 offset x is card physical x (LNX-H MIC_X100_APER_BAR) */
#define KNC_MMIO_BAR         4      /* DBOX then SBOX, 128 KiB (LNX-H MIC_X100_MMIO_BAR) */
#define KNC_BAR4_DBOX        0x00000 /* MPSS HOST_DBOX_BASE_ADDRESS */
#define KNC_BAR4_SBOX        0x10000 /* LNX-H MIC_X100_SBOX_BASE_ADDRESS */
#define KNC_CARD_DBOX_BASE   0x08007c0000ULL /* LNX-CARD MIC_X100_MMIO_BASE */
#define KNC_CARD_SBOX_BASE   0x08007d0000ULL /* INTEL-K1OM MIC_SBOX_BASE; = DBOX + 0x10000 */

/* ------------------------------------------------------------ DBOX */

/* POST code: the bootstrap's progress, two ASCII characters, low byte first
 * (LNX-H MIC_X100_POSTCODE, read without the SBOX base; MPSS mic_getpostcode
 * prints "%c%c" of bits 7:0, 15:8; BF xeon_phi_boot.dev postcode). DBOX offset. */
#define KNC_DBOX_POSTCODE    0x242c
#define KNC_POST_READY       0x3231 /* "12": waiting for the OS download (BF postcode_ready) */
#define KNC_POST_DONE        0x4646 /* "FF": bootstrap finished (BF; PHI3120 postcode.rs) */
#define KNC_POST_GONE        0xffffffffu /* all ones: the card is off the bus (reset; PHI3120 reset-2.md, MPSS RESETFAIL) */
/* The bootstrap's own failures after a reset: MPSS reset_timer gives the reset up on either
 * (MPSS uos_download.c RESET_FAILED_F2 12870, RESET_FAILED_F4 13382; BF postcode_memtf
 * "F2 GDDR failed memory training", postcode_mempf "F4 Memory preservation failure"). */
#define KNC_POST_FAILED_F2   0x3246
#define KNC_POST_FAILED_F4   0x3446
/* GDDR training shows "30".."3F" (BF postcodes memtrain..fintrain): first character (the low
 * byte) '3'. A 3120A walks "30" "39" "34" "37" "39" "3C" "3d" "3E" "3F" in 7.4 s after each
 * RGCR reset, and reaches "12" 9.3 s after it (PHI3120 results/2026-09-13-reset-2.md). */
#define KNC_POST_TRAINING '3'

/* ------------------------------------------------------------ SBOX: scratchpads */

/* SCRATCH0..15 ("SPAD"): software scratch, read/write from both sides
 * (LNX-H MIC_X100_SBOX_SPAD0 0xAB20; INTEL-K1OM SBOX_SCRATCH0..15; BF xeon_phi_scratch.dev). */
#define KNC_SPAD(n)          (0xab20u + 4u * (n))
#define KNC_SPADS            16

/* SPAD0: memory info the bootstrap leaves (MPSS SCRATCH0_MEM_TEST_DISABLE/USAGE/MEM_SIZE_KB, get_adapter_memsize). */
#define KNC_SPAD_MEMINFO     0
#define KNC_MEMINFO_NO_TEST  (1u << 0)  /* memory test disabled */
#define KNC_MEMINFO_USAGE_SHIFT 1       /* 2:1: 0 all, 1 half, 2 third, 3 quarter */
#define KNC_MEMINFO_USAGE_MASK  0x3u
#define KNC_MEMINFO_KIB_SHIFT   3       /* 31:3: memory size in KiB */

/* SPAD2: download info the bootstrap publishes (LNX-H MIC_X100_SPAD2_*; MPSS SCRATCH2_*; BF download). */
#define KNC_SPAD_DOWNLOAD    2
#define KNC_DOWNLOAD_READY   (1u << 0)     /* bit 0: bootstrap ready for an image */
#define KNC_DOWNLOAD_APIC_SHIFT 1           /* 9:1: APIC ID of the BSP to interrupt */
#define KNC_DOWNLOAD_APIC_MASK  0x1ffu
#define KNC_DOWNLOAD_ADDR_MASK  0xfffff000u /* 31:12: download address, card physical */
#define KNC_DOWNLOAD_ADDR_MAX   (1ULL << 31) /* LNX-C mic_x100_get_boot_addr refuses more */
/* Before an RGCR reset the host writes SPAD2 = 0 (LNX-C mic_x100_reset_fw_ready, called by
 * mic_boot.c mic_reset before the reset; MPSS adapter_reset: "Write 0 to uos download status
 * otherwise we might continue booting before reset has completed"): the scratchpads keep their
 * value across the reset (a 3120A read 0x040001C1 before and during it, PHI3120 reset-2.md),
 * so a ready bit the host did not clear is the last boot's, not this one's. */

/* SPAD3: what the host reserves for the card OS, bytes (MPSS set_uos_reserved_size; BF res_size). */
#define KNC_SPAD_OS_RESERVED 3

/* SPAD4: platform word (INTEL-K1OM union sboxScratch4RegDef; MPSS SHIFT/MASK_ACTIVE_CORES, icc_fwd). */
#define KNC_SPAD_PLATFORM    4
#define KNC_PLATFORM_THREADS_MASK  0xfu  /* 3:0: thread mask per core */
#define KNC_PLATFORM_CACHE_SHIFT   4     /* 5:4: L2 size code: 0..2 512 KiB, 3 256 KiB */
#define KNC_PLATFORM_CACHE_MASK    0x3u
#define KNC_PLATFORM_CHANNELS_SHIFT 6    /* 9:6: GDDR channels - 1 */
#define KNC_PLATFORM_CHANNELS_MASK 0xfu
#define KNC_PLATFORM_CORES_SHIFT   10    /* 15:10: active cores (MPSS SHIFT_ACTIVE_CORES 10, MASK 0x3f) */
#define KNC_PLATFORM_CORES_MASK    0x3fu
#define KNC_PLATFORM_ICC_SHIFT     25    /* 29:25: ICC divider; 0 means the nominal 20 (MPSS icc_fwd) */
#define KNC_PLATFORM_ICC_MASK      0x1fu
#define KNC_PLATFORM_ICC_NOMINAL   20
#define KNC_PLATFORM_SOFT_RESET    (1u << 30) /* booted by a soft reset */
#define KNC_PLATFORM_INTERNAL_FLASH (1u << 31)

/* SPAD5: the image size in bytes, "the bootstrap reads to determine how large is uOS image"
 * (LNX-H MIC_X100_FW_SIZE; MPSS set_uos_size; BF os_size). */
#define KNC_SPAD_IMAGE_SIZE  5

/* Early status characters, Barrelfish's convention, not Intel's (BF xeon_phi_serial.dev,
 * kernel/arch/k1om/serial.c, host usr/drivers/xeon_phi/serial.c, tools/weever/boot.S):
 * data = SPAD15, four characters, byte 0 first; ctrl = SPAD8, byte i 0x7A ('z') when
 * data byte i is valid, 0 when empty. The host takes a byte whose ctrl byte is non-zero
 * without bit 7, then writes ctrl = 0 to acknowledge. SPAD8 reads 0x00008086 at
 * bootstrap-ready on a 3120A (PHI3120 first-contact.md): bit 7 keeps it out. */
#define KNC_SPAD_STATUS_CTRL 8
#define KNC_SPAD_STATUS_DATA 15
#define KNC_STATUS_VALID     0x7au

/* ------------------------------------------------------------ SBOX: reset, clocks */

#define KNC_RGCR             0x4010   /* reset control (LNX-H MIC_X100_SBOX_RGCR) */
#define KNC_RGCR_RESET       (1u << 0) /* read, OR in, write; then wait >= 1 s (LNX-C mic_x100_hw_reset) */

/* CURRENTRATIO: the core PLL's ratio (INTEL-K1OM intelmic.c get_core_freq, KNC branch,
 * MIC_SBOX_CURRENT_CLK_RATIO 0x402C; MPSS micras_knc.c). 0x3004, in BF and MPSS's host
 * header, is the Knights Ferry offset: it reads 0 on a 3120A (PHI3120 first-boot.md). */
#define KNC_CURRENTRATIO     0x402c
#define KNC_RATIO_MASK       0xfffu  /* 11:0 current ratio; 27:16 goal ratio */
#define KNC_RATIO_GOAL_SHIFT 16
#define KNC_RATIO_FB_SHIFT   1       /* in a ratio: 8:1 feedback divider */
#define KNC_RATIO_FB_MASK    0xffu
#define KNC_RATIO_FF_SHIFT   9       /* 10:9 feedforward code: 3 -> /1, 2 -> /2, else /4 */
#define KNC_RATIO_FF_MASK    0x3u
#define KNC_CORE_VCO_MHZ     4000    /* INTEL-K1OM CORE_VCO: reference = 4000 MHz / ICC divider */

/* COREFREQ (BF xeon_phi_sbox.dev corefreq; INTEL-K1OM sboxCorefreqReg). */
#define KNC_COREFREQ         0x4100
#define KNC_COREFREQ_RATIO_MASK 0xfffu   /* 11:0 programmed ratio */
#define KNC_COREFREQ_FUSE    (1u << 15)
#define KNC_COREFREQ_ASYNC   (1u << 16)
#define KNC_COREFREQ_BOOTED  (1u << 31)  /* 0: default 600 MHz MCLK; 1: the programmed ratio */

/* COREVOLT: VR12 SVID code in 7:0, mV = 250 + 5 (code - 1), 0 = off (BF corevolt; MPSS svid2volt). */
#define KNC_COREVOLT         0x4104
#define KNC_COREVOLT_CODE_MASK 0xffu

/* ETC, the elapsed time counter: 64 bits at a fixed 15.625 MHz, "the LSB 5 bits hardwired
 * to zero ... increments by 100000b every 64nsecs" (INTEL-K1OM asm/mic_def.h ETC_TICK_RATE
 * 15625000, mic_etc.c etc_readl; MPSS uos_download.c etc_read). Read HIGH, LOW, HIGH again
 * until the HIGHs agree. From Intel's code; no reading from a card confirms the rate. */
#define KNC_ETC_LOW          0x1074
#define KNC_ETC_HIGH         0x1078
#define KNC_ETC_HZ           15625000u
#define KNC_ETC_LOW_BITS     5
/* THERMAL_STATUS_INTERRUPT holds the ETC freeze bit; Intel writes the whole register 0
 * before use (INTEL-K1OM mic_etc_init). Sources put the bit at 31 or 10: write 0, not a bit. */
#define KNC_THERMAL_STATUS_INTERRUPT 0x107c

/* ------------------------------------------------------------ SBOX: interrupts, doorbells */

/* APICICR0..7: host -> card interrupts through the card's APIC (LNX-H MIC_X100_SBOX_APICICR0
 * 0xA9D0, APICICR7 0xAA08; BF xeon_phi_apic.dev icr_lo [8; 0x8], icr_hi at +4). Low dword
 * as a local APIC ICR; the high dword is the destination APIC ID as a plain integer (LNX-C
 * writes SPAD2's APIC ID unshifted). Sending: write the high dword, order the writes, then
 * the low dword with SEND ("MIC card only triggers when we write the lower part", MPSS). */
#define KNC_APICICR(n)       (0xa9d0u + 8u * (n))
#define KNC_APICICR_HI(n)    (KNC_APICICR(n) + 4u)
#define KNC_APICICRS         8
#define KNC_APICICR_BOOT     7          /* the bootstrap's (BF irq_idx bootstrap = 7) */
#define KNC_ICR_VECTOR_MASK  0xffu      /* 7:0 */
#define KNC_ICR_MODE_SHIFT   8          /* 10:8 delivery mode: 0 fixed, 4 NMI, 5 INIT, 6 startup */
#define KNC_ICR_MODE_MASK    0x7u
#define KNC_ICR_LOGICAL      (1u << 11) /* destination mode */
#define KNC_ICR_PENDING      (1u << 12) /* delivery status, read-only */
#define KNC_ICR_SEND         (1u << 13) /* BF boot_notify; LNX-C mic_x100_send_firmware_intr */
#define KNC_ICR_LEVEL        (1u << 14)
#define KNC_ICR_TRIGGER      (1u << 15)
#define KNC_ICR_SHORTHAND_SHIFT 18      /* 19:18 */
#define KNC_ICR_SHORTHAND_MASK  0x3u
#define KNC_BOOT_VECTOR      229        /* LNX-H MIC_X100_BSP_INTERRUPT_VECTOR; BF vec_bsp */

/* RDMASR0..7: the host writes any value to interrupt the card (LNX-H MIC_X100_SBOX_RDMASR0,
 * LNX-C mic_x100_send_rdmasr_intr: Intel's doorbells 8 and up). */
#define KNC_RDMASR(n)        (0xb180u + 4u * (n))
#define KNC_RDMASRS          8

/* SDBIC0..3: card -> host doorbells. The card writes DBREQ; the host sees SICR0 doorbell n
 * (LNX-CARD mic_send_intr, MIC_X100_SBOX_SDBIC0_DBREQ_BIT; LNX-H MIC_X100_SBOX_SDBIC0 0xCC90).
 * INTEL-K1OM's generated header says 0x2030; its own intelmic.c uses 0xCC94 for SDBIC1 on
 * KNC, as do LNX-H, MPSS (CONFIG_MK1OM) and BF: 0xCC90 is followed. Intel's card kernel put
 * a state code in SDBIC1's low bits (INTEL-K1OM mic_shutdown). */
#define KNC_SDBIC(n)         (0xcc90u + 4u * (n))
#define KNC_SDBICS           4
#define KNC_SDBIC_DBREQ      (1u << 31)

/* SICR0: the host's interrupt cause (LNX-H MIC_X100_SBOX_SICR0, SICR0_DBR/DMA). Acknowledge
 * by writing back what was read (LNX-C mic_x100_ack_interrupt). SICE0 enables the same bits,
 * SICC0 disables them (write the bits), SIAC0 auto-clears them, MSI-X only (LNX-C
 * mic_x100_enable_interrupts: "legacy and MSI mode cannot have auto-clear enabled"). BF
 * gives the doorbell field 5 bits; LNX-H's 4 (and 4 SDBICs) are followed. */
#define KNC_SICR0            0x9004
#define KNC_SICE0            0x900c
#define KNC_SICC0            0x9010
#define KNC_SIAC0            0x9014
#define KNC_SI_DOORBELL(n)   (1u << (n))        /* 3:0: SDBIC n rang */
#define KNC_SI_DOORBELLS     0xfu
#define KNC_SI_DMA(c)        (1u << (8 + (c)))  /* 15:8: DMA channel c */
#define KNC_SI_DMAS          0xff00u
#define KNC_SI_SBOX_ERROR    (1u << 30)
#define KNC_SI_SPI_DONE      (1u << 31)

/* MXAR0..15: bit s routes interrupt source s (doorbells 0..3, DMA 8..15, error 30) to MSI-X
 * vector n (LNX-H MIC_X100_SBOX_MXAR0 0x9044, *_IDX_START; 0x9040 is Knights Ferry's). */
#define KNC_MXAR(n)          (0x9044u + 4u * (n))
#define KNC_MXARS            16
/* MSIXPBACR: write 1 to clear the MSI-X pending bits (A0 workaround, LNX-C
 * mic_x100_intr_workarounds; 0x9080 is Knights Ferry's). */
#define KNC_MSIXPBACR        0x9084

/* ------------------------------------------------------------ decoded words */

struct knc_meminfo {
	bool memtest_disabled;
	uint32_t usage;      /* 0 all, 1 half, 2 third, 3 quarter */
	uint64_t size;       /* bytes */
};

struct knc_download {
	bool ready;          /* bootstrap waits for an image */
	uint32_t bsp_apic_id;
	uint32_t addr;       /* card physical, 4 KiB aligned */
};

struct knc_platform {
	uint32_t thread_mask;     /* threads per core present, bit per thread */
	uint32_t threads_per_core;
	uint32_t l2_kib;          /* 512 or 256 */
	uint32_t gddr_channels;
	uint32_t active_cores;
	uint32_t icc_divider;     /* 0 in the register reads as the nominal 20 */
	bool soft_reset, internal_flash;
};

struct knc_ratio {
	uint32_t current, goal; /* 12-bit ratio encodings */
	uint32_t fb;            /* feedback divider of the current ratio */
	uint32_t ff_div;        /* 1, 2 or 4 */
};

struct knc_corefreq {
	uint32_t ratio;         /* programmed ratio, CURRENTRATIO's encoding */
	bool fuse, async, booted;
};

struct knc_icr {
	uint32_t vector, mode, shorthand;
	bool logical, pending, send, level, trigger;
	uint32_t dest;          /* APIC ID (the high dword) */
};

/* Where a bootstrap is after a reset, from its POST code and SPAD2 (knc_bootstrap_state). */
enum knc_bootstrap {
	KNC_BOOTSTRAP_BUSY,    /* off the bus, training, starting its cores: card memory is not the host's */
	KNC_BOOTSTRAP_READY,   /* POST "12" and SPAD2's ready bit with a download address */
	KNC_BOOTSTRAP_FAILED,  /* POST "F2" or "F4": the reset failed (MPSS) */
};

enum knc_post {
	KNC_POST_CODE,     /* two printable characters */
	KNC_POST_NOTHING,  /* 0: nothing written yet */
	KNC_POST_OFF_BUS,  /* all ones: the card does not answer */
	KNC_POST_GARBLED,  /* anything else */
};

/* ------------------------------------------------------------ decoders (pure) */

/* POST code register -> its two characters in out ("12"), or "??" and why not. */
enum knc_post knc_postcode_decode(uint32_t v, char out[3]);
/* SPAD0 -> memory size (bytes: KiB field * 1024), usage, memory-test flag. */
struct knc_meminfo knc_meminfo_decode(uint32_t v);
/* SPAD2 <-> download info. encode: addr must be 4 KiB aligned, apic_id < 512; returns 0 if not. */
struct knc_download knc_download_decode(uint32_t v);
uint32_t knc_download_encode(bool ready, uint32_t bsp_apic_id, uint32_t addr);
/*
 * The POST code register and SPAD2 -> where the bootstrap is. READY needs both
 * POST "12" (waiting for the OS download: BF postcode_ready; PHI3120 keyed its
 * loader on it after aperture writes during GDDR training reset its host,
 * results/2026-09-14-first-boot.md) and SPAD2's ready bit with a non-zero
 * download address (LNX-C mic_x100_is_fw_ready, mic_x100_get_boot_addr):
 * off the bus both read all ones, and a SPAD2 the host did not clear before
 * the reset says ready all through training. An all-ones SPAD2 is BUSY
 * whatever the POST code: the two are read one after the other, and the
 * card can come back on the bus between them.
 */
enum knc_bootstrap knc_bootstrap_state(uint32_t postcode, uint32_t spad2);
/* SPAD4 -> the platform word. */
struct knc_platform knc_platform_decode(uint32_t v);
/* CURRENTRATIO -> its current and goal ratios and the current one's dividers. */
struct knc_ratio knc_ratio_decode(uint32_t v);
/*
 * Core (= TSC) clock in kHz from SPAD4 and CURRENTRATIO: 4000 MHz / ICC divider
 * * fb / ff divider (INTEL-K1OM get_core_freq; MPSS micras_knc.c). E.g. SPAD4
 * 0x2800e6cf (divider 20), CURRENTRATIO 0x04160416 (fb 11, /2): 1100000 kHz.
 * 0 when fb is 0 (no ratio programmed).
 */
uint32_t knc_core_khz(uint32_t spad4, uint32_t currentratio);
/* COREFREQ -> its fields; the ratio means the clock only when booted is set. */
struct knc_corefreq knc_corefreq_decode(uint32_t v);
/* COREVOLT -> mV; 0 for code 0 (regulator off). */
uint32_t knc_corevolt_mv(uint32_t v);
/* APICICR low and high dwords <-> fields. */
struct knc_icr knc_icr_decode(uint32_t lo, uint32_t hi);
/* The boot interrupt's low dword: KNC_BOOT_VECTOR, fixed, physical, SEND (0x20e5). */
uint32_t knc_boot_icr_low(void);
/* SICR0/SICE0 -> the doorbells (bit n = SDBIC n) it shows. */
uint32_t knc_si_doorbells(uint32_t v);
/*
 * Status characters (BF convention): the valid characters of data under ctrl into
 * out (up to 4); returns how many. knc_status_encode packs up to 4 characters of
 * s (n of them) into *data and returns the matching ctrl word.
 */
unsigned knc_status_decode(uint32_t ctrl, uint32_t data, char out[4]);
uint32_t knc_status_encode(const char *s, unsigned n, uint32_t *data);
/* ETC reading (two HIGH reads around a LOW) -> 15.625 MHz ticks; false if the HIGHs differ. */
bool knc_etc_ticks(uint32_t high1, uint32_t low, uint32_t high2, uint64_t *ticks);
/* 15.625 MHz ticks -> ns (64 ns each). */
uint64_t knc_etc_ns(uint64_t ticks);

/* ------------------------------------------------------------ accessors */

/* 32-bit register at byte offset off of a mapped SBOX or DBOX at base (uncached). */
uint32_t knc_reg_read(volatile void *base, uint32_t off);
void knc_reg_write(volatile void *base, uint32_t off, uint32_t v);
/* The ETC from a mapped SBOX: 15.625 MHz ticks, read until consistent. */
uint64_t knc_etc_read(volatile void *sbox);

#endif
