// SPDX-License-Identifier: MIT
/* Targets' credentials for the opens that follow closely: a small direct-mapped cache. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "credcache.h"
#include "monoclock.h"

#define SLOTS 64 /* processes whose files are opened within one TTL: a discovery burst */

struct slot {
	pid_t pid; /* 0: empty */
	int err;   /* what ls_creds__of_pid returned: -ESRCH is remembered too */
	uint64_t read_ns;
	struct ls_creds creds;
};

static struct slot slots[SLOTS];
static uint64_t forgets; /* a read that a forget overtook is not kept */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct slot *slot_of(pid_t pid)
{
	return &slots[((uint32_t)pid * 2654435761u) >> 26]; /* Fibonacci hash, 6 bits */
}

int ls_credcache__of_pid(pid_t pid, struct ls_creds *c)
{
	uint64_t now = ls_mono_ns(), seen;
	struct slot *s;
	int err;

	if (pid <= 0)
		return -ESRCH;
	pthread_mutex_lock(&lock);
	s = slot_of(pid);
	if (s->pid == pid && now - s->read_ns < LS_CREDCACHE_TTL_NS) {
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
	if (err && err != -ESRCH)
		return err; /* not worth remembering: a malformed or unreadable status */
	pthread_mutex_lock(&lock);
	if (forgets != seen) {
		pthread_mutex_unlock(&lock);
		return err;
	}
	s = slot_of(pid);
	s->pid = pid;
	s->err = err;
	s->read_ns = now; /* from before the read: the entry never outlives its TTL */
	if (!err)
		memcpy(&s->creds, c, sizeof(*c));
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
