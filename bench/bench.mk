# `make bench` (docs/design.md §9): boot-time figures for pmuos beside a do-nothing
# baseline kernel booted the same way. Included by the top-level Makefile
# (BUILD, CC, PYTHON come from there).

.PHONY: bench determinism

# The bare Multiboot kernels: a do-nothing baseline for boot times (bench/boot.py) and QEMU's own
# cost of a timer interrupt, beside record's per-sample cost (bench/record.py). 32-bit, no libc, one
# loadable segment at 1 MiB (bench/null.ld); -I. for bench/multiboot.h; a segment both written and
# executed is what such a kernel is, so the linker is not to warn of it.
$(BUILD)/bench/null.mb: bench/null_kernel.S
$(BUILD)/bench/timer_floor.mb: bench/timer_floor.S
$(BUILD)/bench/null.mb $(BUILD)/bench/timer_floor.mb: bench/multiboot.h bench/null.ld
	@mkdir -p $(dir $@)
	$(CC) -m32 -I. -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--no-warn-rwx-segments -Wl,-T,bench/null.ld \
		$(filter %.S,$^) -o $@

# The SSE twins of triad and matmul (pmuos-cc --qemu-sse) that
# bench/softfloat.py runs beside the card-correct built-ins.
BENCH_SSE := $(BUILD)/bench/triad_sse.elf $(BUILD)/bench/matmul_sse.elf
$(BUILD)/bench/%_sse.elf: user/programs/%.c $(USER_RUNTIME) $(NEWLIB_SSE_LIBC)
	@mkdir -p $(dir $@)
	$(PMUOS_CC) --qemu-sse -O2 -g -Wall -o $@ $<

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/kernel.mb $(BUILD)/bench/null.mb $(BUILD)/bench/timer_floor.mb $(BUILD)/pmuctl $(PLUGIN_SO) $(BENCH_SSE) \
		$(BUILD)/user/memtest.elf $(BUILD)/user/pipes.elf $(BUILD)/user/chase.elf $(BUILD)/user/matmul.elf \
		$(BUILD)/test/memtest-linux $(BUILD)/gen/mbox_layout.json
	$(PYTHON) bench/boot.py
	$(PYTHON) bench/pmi.py
	$(PYTHON) bench/tasks.py
	$(PYTHON) bench/threads.py
	$(PYTHON) bench/mailbox.py
	$(PYTHON) bench/idle.py
	$(PYTHON) bench/startup.py
	$(PYTHON) bench/drain.py
	$(PYTHON) bench/callchain.py
	$(PYTHON) bench/record.py
	$(PYTHON) bench/plugin.py
	$(PYTHON) bench/timing.py
	$(PYTHON) bench/cache.py
	$(PYTHON) bench/softfloat.py
	$(PYTHON) bench/fullcard.py

# Issue 23's must-show 3, apart from `make bench` (about 10 minutes at RUNS=50):
# the same SPFLT region over and over while the host keeps the card busy, its
# plugin counts against valgrind's (bench/determinism.py; RUNS=N to change 50).
determinism: deps
	@$(MAKE) --no-print-directory all $(BUILD)/test/memtest-linux
	$(PYTHON) bench/determinism.py
