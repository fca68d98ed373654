# Tests (DESIGN §9): unit tests on the host (cmocka), system tests that boot
# QEMU (pytest + pexpect, Debian's python3). tests/run.py prints every result
# and ends with "N passed, N failed". TESTS="-k pattern" selects system tests.
include tests/unit.mk
include tests/fuzz.mk

test: deps all fuzz
	$(PYTHON) tests/run.py $(TESTS)
