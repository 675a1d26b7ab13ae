# SPDX-License-Identifier: MIT
# userspace/: the collector (CLI, loader, process tracking, CPython discovery, aggregation, store).
LIB_OBJS += $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(filter-out userspace/main.c,$(wildcard userspace/*.c)))
