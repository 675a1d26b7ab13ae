/* SPDX-License-Identifier: MIT */
/*
 * Kernel differences, resolved by CO-RE at load time (libbpf-tools' core_fixes.bpf.h pattern):
 * the ___old flavours describe layouts that vmlinux.h (6.18) no longer has.
 */
#ifndef __LS_CORE_FIXES_BPF_H
#define __LS_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/*
 * mm->rss_stat became an array of percpu_counter in 6.2 (f1a7941243c1, "mm: convert mm's rss
 * stats into percpu_counter"); before, struct mm_rss_stat held atomic_long_t count[].
 */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

static __always_inline __s64 ls_mm_counter(struct mm_struct *mm, int member)
{
	if (bpf_core_type_exists(struct mm_rss_stat___old)) {
		struct mm_struct___old *old = (void *)mm;

		return BPF_CORE_READ(old, rss_stat.count[member].counter);
	}
	return BPF_CORE_READ(mm, rss_stat[member].count);
}

#endif /* __LS_CORE_FIXES_BPF_H */
