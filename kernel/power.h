/*
 * Power control, implemented by the platform (platform/platform.h: a PC's
 * in platform/pc/power.c, a card's in platform/knc/knc.c).
 */
#ifndef KERNEL_POWER_H
#define KERNEL_POWER_H

/*
 * Turns the machine off (a PC: ACPI S5, PM1a_CNT <- SLP_TYP from \_S5 |
 * SLP_EN; QEMU exits with status 0). Returns only if that failed, with why
 * and what can be done instead.
 */
const char *power_off(void);
/*
 * Warm reset (a PC: the FADT reset register, else port 0xCF9, else the
 * 8042, else a triple fault: none of them needs ACPI). Returns only if the
 * machine cannot reset itself (a card: its host resets it), with why.
 */
const char *power_reset(void);

#endif
