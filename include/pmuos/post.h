/*
 * pmuos's POST marks: where a boot has got to, written into the POST code
 * register a card's host already reads (DBOX offset 0x242C,
 * platform/knc/sbox.h KNC_DBOX_POSTCODE) as two ASCII characters, low byte
 * first, after the bootstrap's own codes ("12": waiting for the image).
 * The public 3120A project (Lasimeri/Intel-Phi-3120A) found the faults of
 * its first Linux boots through such marks at each milestone.
 *
 * Only on a KNC core (CPUID family 0x0B) are they written: before the
 * console exists nothing else shows. docs/knc.md "POST marks" lists them;
 * pmuctl boot names the last one it saw when no READY comes
 * (platform/knc/sbox.h knc_post_meaning). pmuos.stop=MARK (two characters,
 * e.g. pmuos.stop=P4) halts the boot right after writing MARK, on the
 * bzImage path (a card's): a boot made to fail at each milestone in turn.
 *
 * Shared by the boot code (assembly), the kernel and the host: #defines only.
 */
#ifndef PMUOS_POST_H
#define PMUOS_POST_H

#define PMUOS_POST_ENTRY32   0x3150 /* "P1": the image's 32-bit entry ran (boot/linux/bzimage.S) */
#define PMUOS_POST_RELOCATED 0x3250 /* "P2": the kernel copied to its address; its 32-bit entry next */
#define PMUOS_POST_LONG_MODE 0x3350 /* "P3": 64-bit mode on the boot page tables (boot/entry.S) */
#define PMUOS_POST_KERNEL    0x3450 /* "P4": kernel_main, the platform chosen */
#define PMUOS_POST_MEMORY    0x3550 /* "P5": page allocator, kernel page tables and the platform's tables up */
#define PMUOS_POST_APS       0x3650 /* "P6": local APIC, timer and PMU up; the APs start next */
#define PMUOS_POST_APS_DONE  0x3750 /* "P7": every AP online or reported; the mailbox next */
#define PMUOS_POST_READY     0x3850 /* "P8": the mailbox says READY */

/*
 * While the boot CPU starts the AP with APIC ID id (0-255) one at a time:
 * two lowercase letters a-p, its high then low nibble ("da": APIC 0xd0).
 * No bootstrap code and no other mark uses lowercase letters.
 */
#define PMUOS_POST_AP(id)    (('a' + (((id) >> 4) & 15)) | ('a' + ((id) & 15)) << 8)

/* "R1".."R3": relocate's check n failed (boot/linux/bzimage.S "fail"). */
#define PMUOS_POST_RELOCATE_FAILED(n) ('R' | ('0' + (n)) << 8)

#endif
