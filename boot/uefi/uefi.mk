# UEFI boot loader BOOTX64.EFI and the ESP tree it boots from (docs/design.md §2).
# Included by the top-level Makefile (BUILD, CC, LD, OBJCOPY come from there).
#
#   make esp   ->  $(BUILD)/esp/EFI/BOOT/BOOTX64.EFI   the loader
#                  $(BUILD)/esp/EFI/BOOT/KERNEL.ELF    copy of $(BUILD)/kernel.elf
#
# GNU-EFI comes from Debian's gnu-efi package: the loader is linked as an ELF
# shared object with GNU-EFI's crt0 and link script, then objcopy rewrites it
# as a PE32+ EFI application.

UEFI_OBJ := $(BUILD)/uefi
UEFI_ESP := $(BUILD)/esp/EFI/BOOT

UEFI_CFLAGS  = -std=gnu11 -O2 -g -Wall -Wextra
# Firmware environment: no hosted C library (GNU-EFI's libefi supplies mem*).
UEFI_CFLAGS += -ffreestanding
# The image is loaded at any address and relocates itself (crt0's _relocate).
UEFI_CFLAGS += -fpic
# L"..." literals must be UEFI's 16-bit CHAR16, not the host's 32-bit wchar_t.
UEFI_CFLAGS += -fshort-wchar
# Firmware interrupt handlers run on our stack and would clobber a red zone.
UEFI_CFLAGS += -mno-red-zone
# No __stack_chk_* runtime in firmware; no stack probing either.
UEFI_CFLAGS += -fno-stack-protector -fno-stack-check
# As GNU-EFI's own x86-64 build: outgoing arguments, including the 32-byte
# shadow area of every ms_abi call, live in space reserved once in the
# prologue instead of being pushed around each call.
UEFI_CFLAGS += -maccumulate-outgoing-args
# EFIAPI = __attribute__((ms_abi)): call firmware services directly instead
# of through uefi_call_wrapper.
UEFI_CFLAGS += -DGNU_EFI_USE_MS_ABI
# GNU-EFI headers, and include/pmuos/bootinfo.h shared with the kernel.
UEFI_CFLAGS += -I/usr/include/efi -I/usr/include/efi/x86_64 -Iinclude

# A shared object bound to itself (no dynamic loader will ever see it), laid
# out by GNU-EFI's link script; crt0 provides _start. -znocombreloc keeps the
# .rela.* input sections apart so the script's .rela rule gathers them;
# --no-undefined makes a missing symbol a link error, not a run-time one.
UEFI_LDFLAGS  = -nostdlib -shared -Bsymbolic -znocombreloc --no-undefined
UEFI_LDFLAGS += -T /usr/lib/elf_x86_64_efi.lds
UEFI_CRT0    = /usr/lib/crt0-efi-x86_64.o
# libefi: Print, pools, GUIDs; libgnuefi: _relocate, called by crt0.
UEFI_LIBS    = -L/usr/lib -lefi -lgnuefi

# The sections of the PE image, as GNU-EFI's link script emits them for
# x86-64: code; data (the script folds .rodata and .bss into it); the dynamic
# table, symbols and RELA relocations that _relocate applies at load time;
# and crt0's placeholder .reloc, which marks the image relocatable.
UEFI_SECTIONS = -j .text -j .data -j .dynamic -j .dynsym -j .rela -j .reloc

esp: $(UEFI_ESP)/BOOTX64.EFI $(UEFI_ESP)/KERNEL.ELF

$(UEFI_OBJ)/loader.o: boot/uefi/loader.c
	@mkdir -p $(dir $@)
	$(CC) $(UEFI_CFLAGS) -MMD -MP -c $< -o $@

$(UEFI_OBJ)/loader.so: $(UEFI_OBJ)/loader.o
	$(LD) $(UEFI_LDFLAGS) $(UEFI_CRT0) $< -o $@ $(UEFI_LIBS)

$(UEFI_ESP)/BOOTX64.EFI: $(UEFI_OBJ)/loader.so
	@mkdir -p $(dir $@)
	$(OBJCOPY) $(UEFI_SECTIONS) --target efi-app-x86_64 $< $@

$(UEFI_ESP)/KERNEL.ELF: $(BUILD)/kernel.elf
	@mkdir -p $(dir $@)
	cp $< $@

-include $(UEFI_OBJ)/loader.d
