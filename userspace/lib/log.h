/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics on stderr. ls_err() and ls_warn() return their first argument so that a failure is
 * logged once, where its context is, and returned in the same statement:
 *	return ls_err(-ENOENT, "no maps for pid %d", pid);
 * Messages are lowercase, lead with what failed and end with a remedy when one is known.
 * Thread-safe (one fprintf per message).
 */
#ifndef LS_LOG_H
#define LS_LOG_H

#include <stdarg.h>
#include <bpf/libbpf.h>

enum ls_log_level {
	LS_LOG_QUIET = -1, /* errors only */
	LS_LOG_WARN = 0,   /* default */
	LS_LOG_INFO = 1,   /* -v */
	LS_LOG_DEBUG = 2,  /* -vv: also libbpf's debug output */
};

void ls_log_set_level(int level);
int ls_log_level(void);

int ls_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ls_warn(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ls_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ls_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf_set_print() hook: warnings always, debug output only at -vv. */
int ls_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* Clears the live status line before a message is printed (set by the status module). */
void ls_log_set_clear_hook(void (*fn)(void));

#endif
