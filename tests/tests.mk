# Tests (DESIGN §9): unit tests on the host (cmocka), system tests that boot
# QEMU (pytest + pexpect, Debian's python3). tests/run.py prints every result
# and ends with "N passed, N failed". TESTS="-k pattern" selects system tests.
include tests/unit.mk
include tests/fuzz.mk

# The build runs in a second make, started after `deps`: whatever that make
# reads at parse time (file lists, system paths) sees the installed packages.
test: deps
	@$(MAKE) --no-print-directory all fuzz
	$(PYTHON) tests/run.py $(TESTS)
