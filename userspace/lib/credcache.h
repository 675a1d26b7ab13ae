/* SPDX-License-Identifier: MIT */
/*
 * A target's credentials, read from /proc/PID/status once for the opens that follow closely.
 * Every file of a target is opened with its rights, and a new process's discovery, identity and
 * sources open a few dozen: reading and parsing status (20 us here) before each was a quarter of
 * the collector's CPU with 500 processes. An entry lives LS_CREDCACHE_TTL_NS at most, is
 * forgotten at the process's exec, and is used only while /proc/PID's owner is what it was when
 * read (a stat: setuid() and setgid() change it); a gone process is remembered as gone as long.
 */
#ifndef LS_CREDCACHE_H
#define LS_CREDCACHE_H

#include <sys/types.h>
#include "asuser.h"

/*
 * How stale a target's rights may be when a file is opened with them, where the owner check
 * cannot tell (its groups or fsuid alone changed): rights it held that long ago. A pid is not
 * reused that soon (the kernel cycles through pid_max first). A loaded machine handles a
 * process's records over seconds: 200 ms still missed most of them.
 */
#define LS_CREDCACHE_TTL_NS (1000 * 1000000ULL)

/* ls_creds__of_pid(pid, c), from the cache while its entry is fresh. Thread-safe. */
int ls_credcache__of_pid(pid_t pid, struct ls_creds *c);
/* pid exec'd (a set-uid image changes them): its next lookup reads status again. */
void ls_credcache__forget(pid_t pid);
/*
 * pid's credentials c as the kernel gave them at read_ns (an exec record's), its euid and egid
 * being /proc/PID's owner then: an entry as if status had been read then, under the same checks.
 * A newer entry of pid stays.
 */
void ls_credcache__seed(pid_t pid, const struct ls_creds *c, uid_t euid, gid_t egid,
			uint64_t read_ns);

#endif
