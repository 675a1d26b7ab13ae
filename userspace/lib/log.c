// SPDX-License-Identifier: MIT
/* Leveled diagnostics on stderr, prefixed with the tool name. */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "log.h"

static int log_level = LS_LOG_WARN;
static void (*clear_hook)(void);

void ls_log_set_level(int level)
{
	log_level = level;
}

int ls_log_level(void)
{
	return log_level;
}

void ls_log_set_clear_hook(void (*fn)(void))
{
	clear_hook = fn;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	if (clear_hook)
		clear_hook();
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	/* one write per message keeps lines whole when threads log at once */
	fprintf(stderr, "linescope-bpf: %s%s\n", prefix, buf);
}

int ls_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
	return err;
}

int ls_warn(int err, const char *fmt, ...)
{
	va_list ap;

	if (log_level < LS_LOG_WARN)
		return err;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
	return err;
}

void ls_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LS_LOG_INFO)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void ls_dbg(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LS_LOG_DEBUG)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}

int ls_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LS_LOG_DEBUG)
		return 0;
	/* warnings (verifier logs included) at -v: our own error line says what failed */
	if (level != LIBBPF_DEBUG && log_level < LS_LOG_INFO)
		return 0;
	if (clear_hook)
		clear_hook();
	return vfprintf(stderr, fmt, ap);
}
