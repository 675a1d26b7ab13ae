/* SPDX-License-Identifier: MIT */
/* Resident memory of the current process, from its mm counters. */
#ifndef __LS_MEM_BPF_H
#define __LS_MEM_BPF_H

#include "core_fixes.bpf.h"
#include "maps.bpf.h"

const volatile bool mem_enabled __weak = false;
const volatile __u64 mem_threshold __weak = 262144; /* bytes of RSS change worth an event */

#define LS_PAGE_SHIFT 12

/*
 * RSS in bytes: file, anonymous and shared-memory pages (swap entries are not resident). The
 * percpu counters' shared counts lag each CPU's batch (at most 32 pages per CPU here).
 */
static __always_inline __u64 ls_mm_rss(struct mm_struct *mm)
{
	__s64 file, anon, shmem, pages;

	if (!mm)
		return 0;
	file = ls_mm_counter(mm, MM_FILEPAGES);
	anon = ls_mm_counter(mm, MM_ANONPAGES);
	shmem = ls_mm_counter(mm, MM_SHMEMPAGES);
	pages = file + anon + shmem;
	return pages > 0 ? (__u64)pages << LS_PAGE_SHIFT : 0;
}

#endif /* __LS_MEM_BPF_H */
