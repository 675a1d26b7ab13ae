# SPDX-License-Identifier: MIT
# bench/: benchmarks (not part of `make test`); each prints ratios against a baseline measured in
# the same run.
.PHONY: bench bench-pyindex
bench: $(APP) ls-all
	bench/overhead

# pyindex: indexing speed of report/pyindex.c (synthetic 2,000 files x 100 lines, then the stdlib)
$(OUTPUT)/bench/pyindex: bench/pyindex.c $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblinescope.a $(LDLIBS) -o $@

bench-pyindex: $(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex --dir /usr/lib/python3.11
