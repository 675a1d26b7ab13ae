# SPDX-License-Identifier: MIT
# userspace/: the collector (CLI, loader, process tracking, CPython discovery, aggregation, store).
LIB_OBJS += $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(filter-out userspace/main.c,$(wildcard userspace/*.c)))
# userspace/lib/: small helpers the report uses too (hash map, growable arrays, logging)
LIB_OBJS += $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(wildcard userspace/lib/*.c))
