# SPDX-License-Identifier: MIT
# bench/: rules for this directory (see the top-level Makefile for the variables it extends).

# pyindex: indexing speed of report/pyindex.c (synthetic 2,000 files x 100 lines, then the stdlib)
$(OUTPUT)/bench/pyindex: bench/pyindex.c $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblinescope.a $(LDLIBS) -o $@

.PHONY: bench-pyindex
bench-pyindex: $(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex --dir /usr/lib/python3.11
