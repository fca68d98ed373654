/* pmuctl boot and the card reset: a KNC card through its two BARs (host/boot.c). */
#ifndef HOST_BOOT_H
#define HOST_BOOT_H

#include <stddef.h>
#include <stdint.h>

/*
 * pmuctl --card sim:NAME|pci:BDF boot [IMAGE] [--cmdline TEXT] [--timeout S]
 * (host/pmuctl.c reads the options): checks IMAGE, resets the card (SPAD2 = 0,
 * RGCR), waits for its bootstrap (POST "12" and SPAD2 ready; POST codes on
 * stderr; "F2"/"F4" fail), copies image and command
 * line (TEXT + pmuos.mbox=0x10000000,33554432) to the download address,
 * writes SPAD5, sends the boot interrupt and waits for the mailbox to say
 * READY; timeout_s (1-3600) bounds each wait (0: 60 s for the bootstrap, 120 s for READY).
 * Returns pmuctl's exit status (0; 1 with the cause on stderr).
 */
int cmd_boot(const char *card, const char *image, const char *extra, unsigned timeout_s);
/* Whether --card names a card with registers (a BAR4 file that exists): reset --warm is RGCR's. */
int card_has_registers(const char *card);
/*
 * What POST code register value `code` says of a boot that has not reached
 * READY: the bootstrap's codes (platform/knc/sbox.h) and pmuos's marks
 * (include/pmuos/post.h, docs/knc.md "POST marks"), the milestone reached
 * and what comes next, into out (n bytes, NUL-terminated; cut to fit);
 * empty for a code with no known meaning.
 */
void post_meaning(uint32_t code, char *out, size_t n);
/*
 * pmuctl reset --warm of a card: the reset of cmd_boot, then the image and command
 * line the last boot left in card memory booted again, back to READY (or,
 * when card memory holds none, the bootstrap ready for pmuctl boot).
 * pmuctl's exit status.
 */
int cmd_card_reset(const char *card);

#endif
