# SPDX-License-Identifier: MIT
# tests/: cmocka unit tests (unprivileged), BPF and end-to-end suites (root; fail loudly without it).
UNIT_TESTS += $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(wildcard tests/unit/test_*.c))

test-bpf: $(APP) ls-all
	$(Q)tests/run-root.sh bpf

# test_gpu.sh drives the real injection library through the fake CUDA driver and CUPTI
test-e2e: $(APP) ls-all $(GPU_FAKE)
	$(Q)tests/run-root.sh e2e


# CPython layouts (userspace/pyversions.c): test_pyversions compares it with offsetof() values
# compiled from each interpreter's own headers; the Debian sid root (3.13-3.15) is built by
# tests/fixtures/pyroot.sh on first use (root and the Debian mirror needed then), cached after.
PYLAYOUT_DIR := $(OUTPUT)/tests/pylayouts
.PHONY: pylayouts test-pyversions
pylayouts:
	$(call msg,GEN,$(PYLAYOUT_DIR))
	$(Q)tests/tools/pylayouts.sh $(PYLAYOUT_DIR)
test-unit: pylayouts

# Live checks (root): decoder vs co_positions(), thread-state lookup, oracle vs each target's own
# stacks, for every interpreter, sid ones chrooted and one in its own pid namespace.
TEST_TARGETS += test-pyversions
test-pyversions:
	$(Q)tests/tools/check_pyoracle.sh
