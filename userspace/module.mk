# SPDX-License-Identifier: MIT
# userspace/: the collector (CLI, loader, process tracking, CPython discovery, aggregation, store).
LIB_OBJS += $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(filter-out userspace/main.c,$(wildcard userspace/*.c)))
# userspace/lib/: the small library every part uses (log, hash map, arrays, /proc and target memory,
# ELF, files opened as another user, files written as root)
LIB_OBJS += $(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(wildcard userspace/lib/*.c))
