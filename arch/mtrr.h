/*
 * Memory type range registers (Intel SDM Vol. 3A §11.11): what the BSP's
 * hold, copied to each AP as it starts, as the SDM asks of an MP system
 * (§11.11.8: "all processors [must] use the same MTRR memory map"). INIT
 * leaves the MTRRs as they were on a real processor (SDM Vol. 3A Table 9-1)
 * but a bootstrap that set only the BSP's, or QEMU's INIT, which resets
 * them, would leave an AP's memory types unlike the BSP's. A KNC card
 * reports MTRR in CPUID.1:EDX (Linux on a card lists "mtrr"; docs/knc.md).
 */
#ifndef ARCH_MTRR_H
#define ARCH_MTRR_H

#include <stdbool.h>
#include <stdint.h>

#define MTRR_VAR_MAX   16 /* variable pairs kept; IA32_MTRRCAP.VCNT is 8 bits, 8 or 10 on Intel's parts */
#define MTRR_FIXED_MSRS 11

struct mtrr_state {
	bool present;                     /* CPUID.1:EDX.MTRR[bit 12] */
	uint32_t vcnt;                    /* variable pairs (IA32_MTRRCAP 7:0), at most MTRR_VAR_MAX */
	bool fixed;                       /* fixed-range MTRRs (IA32_MTRRCAP bit 8) */
	uint64_t def_type;                /* IA32_MTRR_DEF_TYPE */
	uint64_t fixed_regs[MTRR_FIXED_MSRS];
	uint64_t var[2 * MTRR_VAR_MAX];   /* PHYSBASEn, PHYSMASKn */
};

/* Reads the calling CPU's MTRRs into s (present = false where CPUID has none). */
void mtrr_save(struct mtrr_state *s);
/*
 * Loads s into the calling CPU's MTRRs by the SDM's procedure (§11.11.8:
 * caching off with CR0.CD, WBINVD, CR3 reload, MTRRs disabled, written,
 * enabled, WBINVD, CR3 reload, caching on); leaves CR0.CD and NW clear.
 * Interrupts must be off. Does nothing if s->present is false.
 */
void mtrr_load(const struct mtrr_state *s);

#endif
