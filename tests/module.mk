# SPDX-License-Identifier: MIT
# tests/: cmocka unit tests (unprivileged), BPF and end-to-end suites (root; fail loudly without it).
UNIT_TESTS += $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(wildcard tests/unit/test_*.c))

test-bpf: $(APP) ls-all
	$(Q)tests/run-root.sh bpf

test-e2e: $(APP) ls-all
	$(Q)tests/run-root.sh e2e

# the 3.11 layout table is checked against the interpreter's own (internal) headers
UNIT_CFLAGS_test_pylayout := -I/usr/include/python3.11 -Wno-missing-field-initializers
