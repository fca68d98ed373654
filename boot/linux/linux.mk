# The kernel as a Linux bzImage, for QEMU's Linux loader (`make run
# BOOT=linux`) and a Xeon Phi card's bootstrap, and its System.map.
# Included by the top-level Makefile (BUILD, CC, LD, OBJCOPY, VERSION, PYTHON come
# from there). The kernel's side of the protocol (boot/linux/bootparams.c,
# linux.c) is part of kernel.elf; boot/linux/bzimage.S is the image around it.
#
#   $(BUILD)/pmuos.bzImage   setup header + real-mode entry + 32-bit entry + kernel
#   $(BUILD)/System.map      the kernel's symbols, `nm -n` format

LINUX_OBJ := $(BUILD)/linux

bzimage: $(BUILD)/pmuos.bzImage $(BUILD)/System.map
kernel: bzimage

# The kernel's loadable sections as one flat image from its first address
# (linker.ld: 1 MiB); .bss is not in it (linux_entry32 zeroes it).
$(LINUX_OBJ)/kernel.bin: $(BUILD)/kernel.elf
	@mkdir -p $(dir $@)
	$(OBJCOPY) -O binary $< $@

# The addresses bzimage.S needs from the kernel, as #defines.
$(LINUX_OBJ)/kernel_syms.h: $(BUILD)/kernel.elf
	@mkdir -p $(dir $@)
	nm $< | awk '$$3 == "__kernel_start" { print "#define KERNEL_START 0x" $$1 } \
		     $$3 == "__kernel_end"   { print "#define KERNEL_END 0x" $$1 } \
		     $$3 == "linux_entry32"  { print "#define LINUX_ENTRY32 0x" $$1 } \
		     $$3 == "boot_post_stop" { print "#define BOOT_POST_STOP 0x" $$1 }' > $@.tmp
	test $$(wc -l < $@.tmp) = 4 && mv $@.tmp $@

# bzimage.S holds 16- and 32-bit code: a 32-bit object.
BZIMAGE_ASFLAGS  = -m32
# Headers by path from the top (boot/linux/bootparams.h), kernel_syms.h from the build.
BZIMAGE_ASFLAGS += -I. -I$(LINUX_OBJ)
# What it embeds: the kernel's flat image (.incbin) and the version string.
BZIMAGE_ASFLAGS += -DKERNEL_BIN='"$(LINUX_OBJ)/kernel.bin"' -DPMUOS_VERSION='"$(VERSION)"'

# Linked at 0 (labels are file offsets) straight to a flat file: bzimage.ld.
BZIMAGE_LDFLAGS = -m elf_i386 -T boot/linux/bzimage.ld

# Its own code too is KNC code (scripts/knc-audit.py; the kernel in it is kernel.elf's).
$(LINUX_OBJ)/bzimage.o: boot/linux/bzimage.S boot/linux/bootparams.h arch/regs.h include/pmuos/post.h $(LINUX_OBJ)/kernel.bin $(LINUX_OBJ)/kernel_syms.h
	$(CC) $(BZIMAGE_ASFLAGS) -c $< -o $@
	$(PYTHON) scripts/knc-audit.py --kernel $@ || { rm -f $@; exit 1; }

$(BUILD)/pmuos.bzImage: $(LINUX_OBJ)/bzimage.o boot/linux/bzimage.ld
	$(LD) $(BZIMAGE_LDFLAGS) $< -o $@

# Linux's System.map format: `nm -n` less absolute (a), debugging (N),
# undefined (U) and weak undefined (w) symbols, as Linux's scripts/mksysmap.
$(BUILD)/System.map: $(BUILD)/kernel.elf
	nm -n $< | grep -v ' [aNUw] ' > $@.tmp && mv $@.tmp $@

.PHONY: bzimage
