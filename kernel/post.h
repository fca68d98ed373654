/*
 * The kernel's POST marks (include/pmuos/post.h): each boot milestone,
 * written where a card's host reads it, through the writer the platform
 * registers (a card's DBOX POST code register; a PC has none).
 */
#ifndef KERNEL_POST_H
#define KERNEL_POST_H

#include <stdint.h>

/* pmuos.stop='s mark (two ASCII characters, low byte first), 0 for none: boot/entry.S, set by the bzImage. */
extern uint16_t boot_post_stop;

/* From now on marks go to write(code) (a 16-bit PMUOS_POST_* value); NULL: nowhere. BSP, at boot. */
void post_register(void (*write)(uint32_t code));

/*
 * Writes mark `code` (PMUOS_POST_*) and, if it is pmuos.stop's, says so on
 * the console and halts this CPU for good with interrupts off: a boot made
 * to stop at a milestone. The boot CPU only.
 */
void post_mark(uint32_t code);

#endif
