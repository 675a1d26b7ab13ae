// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The counters every BPF file shares (declared in maps.bpf.h), defined once. */
#include "maps.bpf.h"

__u32 self_tgid;
__u64 procs_changes;
struct ls_cpu_clock cpu_clocks[LS_CLOCK_CPUS];
struct ls_stats stats;
