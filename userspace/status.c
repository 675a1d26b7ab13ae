// SPDX-License-Identifier: MIT
/* Live status line: rewritten in place with \r, erased before any log message. */
#include <stdio.h>
#include <unistd.h>
#include "log.h"
#include "status.h"

static bool enabled, shown;

void ls_status__clear(void)
{
	if (shown) {
		fputs("\r\033[K", stderr);
		shown = false;
	}
}

void ls_status__init(bool on)
{
	enabled = on && isatty(STDERR_FILENO);
	if (enabled)
		ls_log_set_clear_hook(ls_status__clear);
}

void ls_status__update(double elapsed_s, unsigned procs, unsigned threads, uint64_t samples,
		       uint64_t lost)
{
	if (!enabled)
		return;
	fprintf(stderr,
		"\r\033[Klinescope-bpf: %.1fs  %u process%s  %u thread%s  %llu samples  %llu lost",
		elapsed_s, procs, procs == 1 ? "" : "es", threads, threads == 1 ? "" : "s",
		(unsigned long long)samples, (unsigned long long)lost);
	fflush(stderr);
	shown = true;
}
