/*
 * Power control, implemented by the platform (a PC: platform/pc/power.c,
 * ACPI soft-off and warm reset).
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
 * 8042, else a triple fault: none of them needs ACPI). Does not return.
 */
void __attribute__((noreturn)) power_reset(void);

#endif
