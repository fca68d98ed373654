# The Ring-3 side (docs/design.md §6): newlib built from Debian's newlib-source for a
# bare x86_64 target, crt0 and the system-call layer (libpmuos.a), the
# soft-float helpers, build/bin/pmuos-cc, and the programs in user/programs/,
# which are built with pmuos-cc and embedded in the kernel image.
# Included by the top-level Makefile (BUILD, CC, PYTHON come from there).
#
# Two ABIs, which cannot mix (a double travels in an XMM register in one and
# in a general register in the other, printf's varargs included):
#  - card-correct, the default: clang through scripts/knc-cc (no CMOV, MMX,
#    SSE, AVX or long NOP; double and float in general registers, arithmetic
#    by glibc's soft-fp, long double = double), newlib built the same way.
#    Every ELF pmuos-cc writes passes scripts/knc-audit.py.
#  - QEMU-only (pmuos-cc --qemu-sse): gcc's x86-64 code, SSE included, and
#    its own newlib built by gcc, for programs that use SSE as the stand-in
#    for KNC's VPU (the plugin counts VPU events on SSE instructions). Not
#    audited: such a program ends with #UD on a card.
# crt0 and libpmuos pass no floating-point values: one card-correct build
# serves both.

# Debian's source tarballs are looked up when the libraries are built, not
# when make reads this file: on a fresh machine `deps` installs them after parsing.
NEWLIB_TARS   := /usr/src/newlib/newlib-*.tar.*
GLIBC_TARS    := /usr/src/glibc/glibc-*.tar.*
NEWLIB_DIR    := $(BUILD)/newlib
NEWLIB_PREFIX := $(abspath $(NEWLIB_DIR)/install)
NEWLIB_LIBC   := $(NEWLIB_PREFIX)/x86_64-elf/lib/libc.a
NEWLIB_SSE_DIR    := $(BUILD)/newlib-sse
NEWLIB_SSE_PREFIX := $(abspath $(NEWLIB_SSE_DIR)/install)
NEWLIB_SSE_LIBC   := $(NEWLIB_SSE_PREFIX)/x86_64-elf/lib/libc.a
KNC_CC        := $(CURDIR)/scripts/knc-cc
KNC_AUDIT     := scripts/knc-audit.py
PMUOS_CC      := $(BUILD)/bin/pmuos-cc
USERLIB       := $(BUILD)/user/lib
SOFTFP_DIR    := $(BUILD)/softfp
SOFTFP_LIB    := $(USERLIB)/libsoftfp.a
USER_PROGRAMS := $(patsubst user/programs/%.c,%,$(wildcard user/programs/*.c))
USER_ELFS     := $(patsubst %,$(BUILD)/user/%.elf,$(USER_PROGRAMS))
# The kernel image holds the programs for the shell's `run` without their
# debug information (objcopy --strip-debug; symbols and build ID stay): with
# it, threads and omp took the image past 0x800000, where OVMF keeps its
# own memory (its SEC page tables), and UEFI boots failed ("pmuos-uefi:
# program header 1: cannot allocate 2050 pages at 0x11D000"). Stripped, the
# programs take a quarter of the room. pmuctl and perf read the files in
# build/user/, debug information and all.
BUILTIN_ELFS := $(patsubst %,$(BUILD)/user/builtin/%.elf,$(USER_PROGRAMS))
$(BUILTIN_ELFS): $(BUILD)/user/builtin/%.elf: $(BUILD)/user/%.elf
	@mkdir -p $(dir $@)
	objcopy --strip-debug $< $@
# The programs built with --qemu-sse, and why (each is a card-correct
# program's source built with a -D that adds its SSE part):
#  vectest: memtest with `vec`, which runs user/measured_vec.c's ms_vec,
#  SSE2 (MOVAPD, ADDPD), the VPU stand-in the plugin's VPU tests count
#  (tests/system/test_plugin.py).
#  ssefault: fault whose fpu-dirty and fpu-check kinds also write and read
#  every XMM register and MXCSR, to show that QEMU's SSE state does not leak
#  from task to task (tests/system/test_hostile.py).
SSE_PROGRAMS  := vectest ssefault

# newlib, configured in $(1) with compiler $(2) and flags $(3), after the
# shell command $(4) has adapted the unpacked source; $(5): how long it takes
# here, said before it starts (nothing else is printed meanwhile). Each build runs once
# (gcc's about a minute; knc-cc's, with its three steps per file, about
# three) and is kept under build/; with make -j the two run in parallel.
# Position-independent code: programs are linked at USER_TEXT, above 4 GiB,
# out of reach of the small code model's 32-bit absolute addresses.
# Threads (user/pthread.c, docs/design.md §6.1): __DYNAMIC_REENT__ makes
# newlib ask __getreent() for the calling thread's reentrancy structure
# (errno, strtok's state ...); pmuos-cc passes it to programs too, so that
# their _REENT is the same. The configure options below give newlib's
# locks to user/pthread.c (malloc, stdio, atexit) and keep one stdin,
# stdout and stderr for all threads, as POSIX has them.
# After the install, newlib's own __getreent (its one global reentrancy
# structure) and no-op locks (misc/lock.c) leave libc.a: user/pthread.c
# defines the real ones, and a program naming -lc before the runtime
# (pmuos-cc ... -lc, as cc takes it) pulled newlib's in first and failed
# to link on two of each.
NEWLIB_CFLAGS = -O2 -g -ffreestanding -fno-stack-protector -fpie -D__DYNAMIC_REENT__
define build_newlib
	@set -- $(NEWLIB_TARS); test -f "$$1" || { echo "newlib-source is not installed (make deps)"; exit 1; }
	@echo "newlib: building the C library for card programs in $(1), once (about $(5) on 2 cores; log: $(1)/build.log)"
	rm -rf $(1)/src $(1)/obj
	mkdir -p $(1)/src $(1)/obj
	set -- $(NEWLIB_TARS); tar -C $(1)/src --strip-components=1 -xf "$$1"
	cd $(1)/src && $(4)
	cd $(1)/obj && ../src/configure --target=x86_64-elf --prefix=$(abspath $(1)/install) \
		--disable-multilib --disable-newlib-supplied-syscalls --disable-nls \
		--enable-newlib-retargetable-locking --enable-newlib-global-stdio-streams \
		CC_FOR_TARGET="$(2)" AR_FOR_TARGET=ar AS_FOR_TARGET=as LD_FOR_TARGET=ld \
		RANLIB_FOR_TARGET=ranlib NM_FOR_TARGET=nm \
		CFLAGS_FOR_TARGET="$(3)" > ../configure.log 2>&1
	$(MAKE) -C $(1)/obj all-target-newlib > $(1)/build.log 2>&1
	$(MAKE) -C $(1)/obj install-target-newlib > $(1)/install.log 2>&1
	ar t $(1)/install/x86_64-elf/lib/libc.a | grep -qx lib_a-getreent.o
	ar d $(1)/install/x86_64-elf/lib/libc.a lib_a-getreent.o lib_a-lock.o
endef

# The card-correct newlib leaves out newlib's x86_64 code that is not KNC
# code: libc's memcpy.S and memset.S (PREFETCHNTA, MOVNTI, SFENCE; the
# portable C versions in libc/string take their place) and libm's fenv (SSE's
# MXCSR and the x87 status word; libm/fenv's portable stubs take its place,
# right for soft-float, which keeps no flags and rounds to nearest).
# setjmp.S stays: plain moves (scripts/knc-audit.py checks libc.a).
# The greps fail the build if another newlib release no longer matches.
NEWLIB_KNC_PATCH = sed -i '/libm_machine_dir=x86_64/d' newlib/configure.host && \
	sed -i -e 's/^lib_a_SOURCES = setjmp.S memcpy.S memset.S$$/lib_a_SOURCES = setjmp.S/' \
	       -e '/^am_lib_a_OBJECTS = lib_a-setjmp/{N;s/ lib_a-memcpy.*\n.*lib_a-memset.$$(OBJEXT)$$//}' \
	       newlib/libc/machine/x86_64/Makefile.in && \
	grep -q '^lib_a_SOURCES = setjmp.S$$' newlib/libc/machine/x86_64/Makefile.in && \
	grep -q '^am_lib_a_OBJECTS = lib_a-setjmp.$$(OBJEXT)$$' newlib/libc/machine/x86_64/Makefile.in

KNC_CC_DEPS := scripts/knc-cc scripts/nocmov.py user/knc-include/stdarg.h
$(NEWLIB_LIBC): $(KNC_CC_DEPS)
	$(call build_newlib,$(NEWLIB_DIR),$(KNC_CC),$(NEWLIB_CFLAGS),$(NEWLIB_KNC_PATCH),3 minutes)
	$(PYTHON) $(KNC_AUDIT) $(NEWLIB_PREFIX)/x86_64-elf/lib/libc.a $(NEWLIB_PREFIX)/x86_64-elf/lib/libm.a

$(NEWLIB_SSE_LIBC):
	$(call build_newlib,$(NEWLIB_SSE_DIR),$(CC),$(NEWLIB_CFLAGS),true,1 minute)

# The soft-float helpers clang calls under -msoft-float (__adddf3, __ltdf2,
# __fixdfdi...), from glibc's soft-fp (Debian's glibc-source; GCC's libgcc
# carries a copy of the same files, but gcc-12-source is four times the
# download for them). Its machine description is ours: user/softfp/sfp-machine.h.
SOFTFP_FUNCS := $(foreach t,df sf,add$(t)3 sub$(t)3 mul$(t)3 div$(t)3 neg$(t)2 eq$(t)2 ge$(t)2 le$(t)2 unord$(t)2 \
	$(foreach i,si di ti,fix$(t)$(i) fixuns$(t)$(i) float$(i)$(t) floatun$(i)$(t))) extendsfdf2 truncdfsf2
SOFTFP_OBJS  := $(patsubst %,$(SOFTFP_DIR)/%.o,$(SOFTFP_FUNCS))
# Compiled as newlib is (NEWLIB_CFLAGS), and: longlong.h's umul_ppmm writes
# to cast asm outputs, a GCC extension clang takes only with
# -fheinous-gnu-extensions; glibc's code, not ours, so its warnings are off
# (-w); our sfp-machine.h first, then soft-fp's headers beside the sources.
# -fno-omit-frame-pointer: __muldf3 & co. are where float programs spend
# their time; with a frame each, a call chain names the function that called
# them (pmuctl record -g walks frame pointers).
SOFTFP_CFLAGS = $(NEWLIB_CFLAGS) -fno-omit-frame-pointer -fheinous-gnu-extensions -w -Iuser/softfp \
		-I$(SOFTFP_DIR)/src/soft-fp

$(SOFTFP_DIR)/src/.unpacked:
	@set -- $(GLIBC_TARS); test -f "$$1" || { echo "glibc-source is not installed (make deps)"; exit 1; }
	rm -rf $(SOFTFP_DIR)/src && mkdir -p $(SOFTFP_DIR)/src
	set -- $(GLIBC_TARS); tar -C $(SOFTFP_DIR)/src --strip-components=1 -xf "$$1" --wildcards '*/soft-fp/*' '*/stdlib/longlong.h'
	cp $(SOFTFP_DIR)/src/stdlib/longlong.h $(SOFTFP_DIR)/src/soft-fp/
	touch $@

$(SOFTFP_DIR)/%.o: $(SOFTFP_DIR)/src/.unpacked user/softfp/sfp-machine.h $(KNC_CC_DEPS) user/user.mk
	$(KNC_CC) $(SOFTFP_CFLAGS) -c $(SOFTFP_DIR)/src/soft-fp/$*.c -o $@

$(SOFTFP_LIB): $(SOFTFP_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(PMUOS_CC): scripts/pmuos-cc.in
	@mkdir -p $(dir $@)
	sed -e 's|@NEWLIB@|$(NEWLIB_PREFIX)/x86_64-elf|' -e 's|@NEWLIB_SSE@|$(NEWLIB_SSE_PREFIX)/x86_64-elf|' \
	    -e 's|@USERLIB@|$(abspath $(USERLIB))|' -e 's|@TOP@|$(CURDIR)|' $< > $@
	chmod +x $@

$(USERLIB)/crt0.o: user/crt0.S $(PMUOS_CC) $(NEWLIB_LIBC)
	@mkdir -p $(dir $@)
	$(PMUOS_CC) -c $< -o $@

$(USERLIB)/%.o: user/%.c $(PMUOS_CC) $(NEWLIB_LIBC) include/pmuos/pmu.h include/pmuos/syscall.h
	@mkdir -p $(dir $@)
	$(PMUOS_CC) -O2 -g -Wall -Wextra -c $< -o $@

$(USERLIB)/%.o: user/sys.h include/pmuos/thread.h
$(USERLIB)/libpmuos.a: $(USERLIB)/syscalls.o $(USERLIB)/regions.o $(USERLIB)/pthread.o $(USERLIB)/start.o
	rm -f $@
	ar rcs $@ $^

USER_RUNTIME := $(USERLIB)/libpmuos.a $(USERLIB)/crt0.o user/user.ld $(KNC_AUDIT)
SSE_ELFS     := $(patsubst %,$(BUILD)/user/%.elf,$(SSE_PROGRAMS))
$(filter-out $(SSE_ELFS),$(USER_ELFS)): $(SOFTFP_LIB)
# private: not passed on to prerequisites (vectest's measured.o is card code).
$(SSE_ELFS): private PMUOS_ABI := --qemu-sse
$(SSE_ELFS): $(NEWLIB_SSE_LIBC)

# A program: its source, linked with the objects it depends on (below) beyond the runtime.
$(BUILD)/user/%.elf: user/programs/%.c $(USER_RUNTIME)
	$(PMUOS_CC) $(PMUOS_ABI) -O2 -g -Wall -o $@ $< $(filter %.o,$(filter-out $(USER_RUNTIME),$^))

# smc rewrites its own code: it asks for writable and executable memory with
# ld's executable-stack mark (kernel/elf.h), which pmuos-cc otherwise clears.
$(BUILD)/user/smc.elf: user/programs/smc.c $(USER_RUNTIME)
	$(PMUOS_CC) -O2 -g -Wall -Wl,-z,execstack -Wl,--no-warn-rwx-segments -o $@ $<

# Functions the plugin's tests measure, compiled once and linked into memtest
# and into its Linux twin (tests/tests.mk), which valgrind measures: the same
# object code on both sides. No library calls (the libraries differ): the
# object must have no undefined symbols. Functions start on a cache line
# (-falign-functions=64), so the lines their code spans do not depend on where
# the two programs link them. Leaf functions without a frame
# (-fomit-frame-pointer, after pmuos-cc's default): the plugin's tests count
# their exact instruction pattern, which a frame's push/pop %rbp would change
# (a POP then RET are two reading instructions in a row: one DATA_READ:e edge
# for two reads in ms_walk). measured.o is card code; measured_vec.o, ms_vec,
# SSE2 (the VPU stand-in), is QEMU-only and linked into vectest and the twin.
MEASURED_OBJS := $(BUILD)/user/measured.o $(BUILD)/user/measured_vec.o
$(BUILD)/user/measured.o: $(NEWLIB_LIBC)
$(BUILD)/user/measured_vec.o: private PMUOS_ABI := --qemu-sse
$(BUILD)/user/measured_vec.o: $(NEWLIB_SSE_LIBC)
$(MEASURED_OBJS): $(BUILD)/user/%.o: user/%.c user/measured.h user/user.mk $(PMUOS_CC)
	@mkdir -p $(dir $@)
	$(PMUOS_CC) $(PMUOS_ABI) -O2 -g -Wall -Wextra -falign-functions=64 -fomit-frame-pointer -c $< -o $@
	@test -z "$$(nm -u $@)" || { echo "$@ calls a library: $$(nm -u $@)"; rm -f $@; exit 1; }

# The programs that link measured functions; vectest and ssefault include
# the source they extend.
$(BUILD)/user/memtest.elf: $(BUILD)/user/measured.o
$(BUILD)/user/vectest.elf: user/programs/memtest.c $(MEASURED_OBJS)
$(BUILD)/user/ssefault.elf: user/programs/fault.c

# The programs, embedded in the kernel for the shell's `run`; the QEMU-only
# ones (SSE_PROGRAMS) marked, so that a CPU without SSE refuses them by name.
$(BUILD)/gen/programs.S: $(BUILTIN_ELFS) user/user.mk
	@mkdir -p $(dir $@)
	{ echo '/* Generated by user/user.mk: the programs `run` can start. */'; \
	  echo '.section .rodata'; \
	  for p in $(USER_PROGRAMS); do \
	    echo ".balign 16"; echo "img_$$p: .incbin \"$(BUILD)/user/builtin/$$p.elf\""; echo "img_$${p}_end:"; \
	    echo "name_$$p: .asciz \"$$p\""; done; \
	  echo '.balign 8'; echo '.globl user_programs, user_program_count'; echo 'user_programs:'; \
	  $(foreach p,$(USER_PROGRAMS),echo ".quad name_$(p), img_$(p), img_$(p)_end, $(if $(filter $(p),$(SSE_PROGRAMS)),1,0)";) \
	  echo "user_program_count: .quad $(words $(USER_PROGRAMS))"; } > $@

user: $(PMUOS_CC) $(USER_ELFS)
.PHONY: user

include user/gomp.mk
