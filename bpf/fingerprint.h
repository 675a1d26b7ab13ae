/* SPDX-License-Identifier: MIT */
/*
 * Code-object fingerprint computed identically by the BPF walker and by userspace: a freed code
 * object whose address is reused by another one gets a different fingerprint, so a cached
 * resolution is never applied to the wrong function.
 */
#ifndef __LS_FINGERPRINT_H
#define __LS_FINGERPRINT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

static inline __u32 ls_code_fp(__u64 filename, __u64 qualname, __u64 linetable, __u32 firstlineno)
{
	__u64 h = filename * 0x9e3779b97f4a7c15ULL;

	h ^= qualname + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
	h ^= linetable + 0x94d049bb133111ebULL + (h << 6) + (h >> 2);
	h ^= (__u64)firstlineno * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	return (__u32)(h ^ (h >> 32));
}

#endif
