// SPDX-License-Identifier: MIT
/* Targets' credentials for the opens that follow: a direct-mapped cache, checked at each use. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "credcache.h"
#include "monoclock.h"

#define SLOTS	   512 /* processes whose files are opened within one TTL: a large job's start */
#define SLOT_SHIFT 23  /* 32 - log2(SLOTS) */

struct slot {
	pid_t pid; /* 0: empty */
	int err;   /* what ls_creds__of_pid returned: -ESRCH is remembered too */
	uint64_t read_ns;
	uid_t owner_uid; /* /proc/PID's owner when it was read: its euid and egid */
	gid_t owner_gid;
	struct ls_creds creds;
};

static struct slot slots[SLOTS];
static uint64_t forgets; /* a read that a forget overtook is not kept */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct slot *slot_of(pid_t pid)
{
	return &slots[((uint32_t)pid * 2654435761u) >> SLOT_SHIFT]; /* Fibonacci hash */
}

/* /proc/PID's owner: -ESRCH when the process is gone. */
static int owner_of(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

int ls_credcache__of_pid(pid_t pid, struct ls_creds *c)
{
	uint64_t now = ls_mono_ns(), seen;
	uid_t ouid = 0;
	gid_t ogid = 0;
	struct slot *s;
	int err, oerr;

	if (pid <= 0)
		return -ESRCH;
	/* a 3 us stat: a set*id() call changes the owner (the euid, or root once not dumpable) */
	oerr = owner_of(pid, &ouid, &ogid);
	pthread_mutex_lock(&lock);
	s = slot_of(pid);
	if (s->pid == pid && now - s->read_ns < LS_CREDCACHE_TTL_NS &&
	    (s->err ? oerr == s->err : !oerr && ouid == s->owner_uid && ogid == s->owner_gid)) {
		err = s->err;
		if (!err)
			memcpy(c, &s->creds, sizeof(*c));
		pthread_mutex_unlock(&lock);
		return err;
	}
	seen = forgets;
	pthread_mutex_unlock(&lock);
	/* read outside the lock; a concurrent reader of the same pid only reads it twice */
	err = ls_creds__of_pid(pid, c);
	if ((err && err != -ESRCH) || (oerr && oerr != -ESRCH) || !err != !oerr)
		return err; /* not worth remembering: unreadable, or it ended between the two */
	pthread_mutex_lock(&lock);
	if (forgets == seen) {
		s = slot_of(pid);
		s->pid = pid;
		s->err = err;
		s->read_ns = now; /* from before the read: the entry never outlives its TTL */
		s->owner_uid = ouid;
		s->owner_gid = ogid;
		if (!err)
			memcpy(&s->creds, c, sizeof(*c));
	}
	pthread_mutex_unlock(&lock);
	return err;
}

void ls_credcache__forget(pid_t pid)
{
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = slot_of(pid);
	if (s->pid == pid)
		s->pid = 0;
	forgets++;
	pthread_mutex_unlock(&lock);
}

void ls_credcache__seed(pid_t pid, const struct ls_creds *c, uid_t euid, gid_t egid,
			uint64_t read_ns)
{
	struct slot *s;

	if (pid <= 0)
		return;
	pthread_mutex_lock(&lock);
	s = slot_of(pid);
	if (s->pid != pid || s->read_ns < read_ns) {
		s->pid = pid;
		s->err = 0;
		s->read_ns = read_ns;
		s->owner_uid = euid;
		s->owner_gid = egid;
		memcpy(&s->creds, c, sizeof(*c));
		forgets++; /* a read of pid begun before: older than this */
	}
	pthread_mutex_unlock(&lock);
}
