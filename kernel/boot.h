/* What the kernel keeps from the boot path. */
#ifndef KERNEL_BOOT_H
#define KERNEL_BOOT_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/bootinfo.h>

extern struct boot_info boot_info;  /* a copy, owned by the kernel */
extern uint64_t boot_tsc;           /* TSC at the first kernel instruction */
extern uint64_t prompt_tsc;         /* TSC when the shell first prompted */

/* Converts Multiboot 1 information (boot/multiboot.c); false if magic or pointer is wrong. */
bool multiboot_to_boot_info(uint32_t magic, uint32_t info, struct boot_info *bi);
/* Converts our UEFI loader's boot_info (boot/uefi_info.c); false if its magic is wrong. */
bool uefi_to_boot_info(uint64_t info, struct boot_info *bi);
/* Converts the Linux boot protocol's boot_params (boot/linux/linux.c); false, said why, if unusable. */
bool linux_to_boot_info(uint64_t boot_params, struct boot_info *bi);

#endif
