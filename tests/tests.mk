# Tests (docs/design.md §9): unit tests on the host (cmocka), system tests that boot
# QEMU (pytest + pexpect, Debian's python3). tests/run.py prints every result
# and ends with "N passed, N failed". TESTS="-k pattern" selects system tests.
include tests/unit.mk
include tests/fuzz.mk
include tests/cardsim/cardsim.mk

# The build runs in a second make, started after `deps`: whatever that make
# reads at parse time (file lists, system paths) sees the installed packages.
# It runs as many jobs as the host has cores (unless make was given -j), the
# two newlib builds first: they are the longest (knc-cc's about three
# minutes, gcc's one) and everything else can build beside them.
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
test: deps
	@$(MAKE) --no-print-directory $(TEST_JOBS) $(NEWLIB_LIBC) $(NEWLIB_SSE_LIBC) \
		all fuzz cardsim $(BUILD)/gen/mbox_layout.json $(BUILD)/test/memtest-linux
	$(PYTHON) tests/run.py $(TESTS)

# The soak (tests/system/soak.py, issue 23): a card under pmuctl load, a hostile
# doorbell client and the self-modifying program for SOAK_S seconds; prints the
# report (requests served, errors by name, RSS and descriptors) and PASS or FAIL.
# `make test` runs a bounded one (tests/system/test_soak.py).
SOAK_S ?= 600
soak: deps
	@$(MAKE) --no-print-directory all cardsim $(BUILD)/gen/mbox_layout.json
	$(PYTHON) tests/system/soak.py --duration $(SOAK_S)

.PHONY: soak

# memtest's Linux twin (user/programs/memtest.c without the region, with
# vectest's `vec`): the plugin's tests run it under valgrind to compare counts
# on the same object code (user/user.mk MEASURED_OBJS).
$(BUILD)/test/memtest-linux: user/programs/memtest.c user/measured.h $(MEASURED_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -DMEMTEST_LINUX -DMEMTEST_VEC -Iinclude $< $(MEASURED_OBJS) -o $@

# The mailbox layout for the system tests' own client (tests/system/mbox.py).
$(BUILD)/gen/mbox_layout.json: tests/system/tools/mbox_layout.c include/pmuos/mailbox.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Iinclude $< -o $(BUILD)/gen/mbox_layout
	$(BUILD)/gen/mbox_layout > $@.tmp && mv $@.tmp $@
