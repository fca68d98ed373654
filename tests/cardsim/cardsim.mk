# The simulated card's pieces (issue 11), built for the system tests.
# Included by tests/tests.mk (BUILD, CC and PYTHON come from the top Makefile).
#
#   $(BUILD)/cardsim/knc_bootstrap.elf   a KNC bootstrap stand-in: enters the
#                                        bzImage's 32-bit entry (QEMU Multiboot)
#   $(BUILD)/cardsim/sfi_gen             SFI tables for N CPUs (QEMU has none)
#   $(BUILD)/cardsim/mmap_only.so        LD_PRELOAD: the card's files take mmap only, as sysfs
#                                        resource files of memory BARs do

CARDSIM := $(BUILD)/cardsim

# A 32-bit freestanding program: QEMU's Multiboot loader takes ELF32 and
# starts it in 32-bit protected mode, as a card's bootstrap runs.
KNCBOOT_CFLAGS  = -m32 -std=gnu11 -O2 -g -Wall -Wextra
# KNC code (scripts/knc-audit.py checks it): the Pentium's ISA, which has no
# CMOV (it came with the P6, as did the long NOP; 327364-001 App. B).
KNCBOOT_CFLAGS += -march=pentium
# No C library; absolute addresses (linked at 16 MiB, never moved); no canary
# runtime; no unwind tables to discard.
KNCBOOT_CFLAGS += -ffreestanding -fno-pic -fno-pie -fno-stack-protector -fno-asynchronous-unwind-tables
# boot/linux/bootparams.h by path from the top (it includes <pmuos/bootinfo.h>).
KNCBOOT_CFLAGS += -I. -Iinclude
# A static image laid out by its own link script.
# One RWX segment is fine for a test program that only runs once in QEMU.
KNCBOOT_LDFLAGS = -m32 -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--no-warn-rwx-segments
KNCBOOT_LDFLAGS += -T tests/cardsim/knc_bootstrap.ld

$(CARDSIM)/knc_bootstrap.elf: tests/cardsim/knc_bootstrap.c tests/cardsim/knc_bootstrap.ld boot/linux/bootparams.h boot/multiboot.h tests/cardsim/cardsim.mk
	@mkdir -p $(dir $@)
	$(CC) $(KNCBOOT_CFLAGS) $(KNCBOOT_LDFLAGS) $< -o $@
	$(PYTHON) scripts/knc-audit.py --kernel $@ || { rm -f $@; exit 1; }

# A host program: the top Makefile's compiler, warnings on; platform/sfi.h by path.
SFIGEN_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -I.

$(CARDSIM)/sfi_gen: tests/cardsim/sfi_gen.c platform/sfi.h
	@mkdir -p $(dir $@)
	$(CC) $(SFIGEN_CFLAGS) $< -o $@

# A shared object for LD_PRELOAD (position-independent); dlsym needs -ldl on older glibc.
MMAPONLY_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -shared -fPIC

$(CARDSIM)/mmap_only.so: tests/cardsim/mmap_only.c
	@mkdir -p $(dir $@)
	$(CC) $(MMAPONLY_CFLAGS) $< -o $@ -ldl

cardsim: $(CARDSIM)/knc_bootstrap.elf $(CARDSIM)/sfi_gen $(CARDSIM)/mmap_only.so
.PHONY: cardsim
