# OpenMP for card programs (docs/programs.md, Threads): GCC's libgomp, built
# from Debian's gcc-12-source on user/pthread.c's threads, into
# build/user/lib/libgomp.a, with its omp.h in build/user/lib/include;
# `pmuos-cc -fopenmp` compiles with gcc (scripts/knc-cc says why) and links
# it. Included by user/user.mk (PMUOS_CC, USERLIB, KNC_AUDIT, NEWLIB_LIBC
# come from there).
#
# libgomp's configure expects a GCC build tree; what it would write is
# written here instead: user/gomp/config.h (its answers for newlib and
# pthread.c), gstdint.h, an empty semaphore.h (newlib has none), and
# omp.h and libgomp_f.h from their templates (scripts/gomp-headers.py, the
# locks' sizes as the card compiler lays them out). The target is
# libgomp's generic POSIX one (config/posix/, which configure.tgt gives a
# system it does not know), compiled by knc-cc (clang, soft-float) like
# the rest of the runtime, audited as it is.
GCC_TARS  := /usr/src/gcc-12/gcc-*-dfsg.tar.*
GOMP_DIR  := $(BUILD)/gomp
GOMP_SRC  := $(GOMP_DIR)/src
GOMP_LIB  := $(USERLIB)/libgomp.a
GOMP_INC  := $(USERLIB)/include
# libgomp/Makefile.am's libgomp_la_SOURCES, but fortran.c (the Fortran API's wrappers).
GOMP_NAMES := alloc atomic barrier critical env error icv icv-device iter iter_ull loop loop_ull ordered \
	parallel scope sections single task team work lock mutex proc sem bar ptrlock time affinity \
	target splay-tree libgomp-plugin oacc-parallel oacc-host oacc-init oacc-mem oacc-async oacc-plugin \
	oacc-cuda priority_queue affinity-fmt teams allocator oacc-profiling oacc-target
GOMP_OBJS := $(patsubst %,$(GOMP_DIR)/obj/%.o,$(GOMP_NAMES))
# Ours first (config.h, the empty semaphore.h), then the generated libgomp_f.h, then libgomp's: its
# target's directory before its own, as its Makefile has them; -w: GCC's code, its warnings not ours.
GOMP_CFLAGS = -O2 -g -w -Iuser/gomp -I$(GOMP_DIR) -I$(GOMP_SRC)/libgomp/config/posix -I$(GOMP_SRC)/libgomp \
	-I$(GOMP_SRC)/include
# gcc's builtin for acc_on_device (oacc-init.c), which clang lacks, as gcc expands it on the host.
GOMP_ACC_ON_DEVICE = -D'__builtin_acc_on_device(d)=((d) == acc_device_host || (d) == acc_device_none)'

# Only libgomp/ and the top include/ (gomp-constants.h) of the 80 MB tarball. The deallocator form
# of the malloc attribute, __malloc__ (omp_free), is GCC 11's and clang's error: taken out of
# omp.h.in (a diagnostic's aid, no code); the greps fail the build if another release differs.
$(GOMP_SRC)/.unpacked:
	@set -- $(GCC_TARS); test -f "$$1" || { echo "gcc-12-source is not installed (make deps)"; exit 1; }
	@echo "libgomp: unpacking it from gcc-12-source, once"
	rm -rf $(GOMP_SRC) && mkdir -p $(GOMP_SRC)
	set -- $(GCC_TARS); tar -C $(GOMP_SRC) --strip-components=1 --no-wildcards-match-slash -xf "$$1" \
		--wildcards '*/libgomp/*' '*/include/*'
	grep -q '__malloc__ (omp_free)' $(GOMP_SRC)/libgomp/omp.h.in
	sed -i -e 's/__malloc__, __malloc__ (omp_free),/__malloc__,/' -e 's/__malloc__ (omp_free), //' \
		$(GOMP_SRC)/libgomp/omp.h.in
	! grep -q 'omp_free)' $(GOMP_SRC)/libgomp/omp.h.in
	touch $@

$(GOMP_DIR)/.headers: $(GOMP_SRC)/.unpacked scripts/gomp-headers.py user/gomp/config.h $(PMUOS_CC) $(NEWLIB_LIBC)
	@mkdir -p $(GOMP_INC)
	$(PYTHON) scripts/gomp-headers.py $(GOMP_SRC) $(GOMP_DIR) $(PMUOS_CC) $(GOMP_CFLAGS)
	mv $(GOMP_DIR)/omp.h $(GOMP_INC)/omp.h
	touch $@

# A name's source: config/posix's if the target has one, else libgomp's own.
$(GOMP_DIR)/obj/%.o: $(GOMP_DIR)/.headers $(wildcard user/gomp/*.h) user/gomp.mk
	@mkdir -p $(dir $@)
	src=$(GOMP_SRC)/libgomp/config/posix/$*.c; test -f $$src || src=$(GOMP_SRC)/libgomp/$*.c; \
	$(PMUOS_CC) $(GOMP_CFLAGS) $(if $(filter oacc-init,$*),$(GOMP_ACC_ON_DEVICE)) -c $$src -o $@

$(GOMP_LIB): $(GOMP_OBJS) $(KNC_AUDIT)
	rm -f $@
	ar rcs $@ $(GOMP_OBJS)
	$(PYTHON) $(KNC_AUDIT) $@

# omp, the OpenMP program (user/programs/omp.c).
$(BUILD)/user/omp.elf: user/programs/omp.c $(USER_RUNTIME) $(GOMP_LIB)
	$(PMUOS_CC) -fopenmp -O2 -g -Wall -o $@ $<
