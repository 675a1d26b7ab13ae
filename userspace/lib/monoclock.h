/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), and of every *_ns time in a profile. */
#ifndef LS_MONOCLOCK_H
#define LS_MONOCLOCK_H

#include <stdint.h>
#include <time.h>

/* A timespec in ns (any clock's: a file's times too). */
static inline uint64_t ls_timespec_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

static inline uint64_t ls_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ls_timespec_ns(&ts);
}

#endif
