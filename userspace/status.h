/* SPDX-License-Identifier: MIT */
/* The one-line live status on stderr while recording (only on a terminal, and not with -q). */
#ifndef LS_STATUS_H
#define LS_STATUS_H

#include <stdbool.h>
#include <stdint.h>

void ls_status__init(bool enabled);
void ls_status__update(double elapsed_s, unsigned procs, unsigned threads, uint64_t samples,
		       uint64_t lost);
/* Erases the line (before other output and at the end). */
void ls_status__clear(void);

#endif
