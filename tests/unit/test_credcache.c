// SPDX-License-Identifier: MIT
/*
 * The credentials cache (userspace/lib/credcache.c): a child changes its filesystem uid while
 * the test watches (which /proc/PID's owner does not show); within the TTL the cache gives what
 * the child had, after a forget (its exec) or the TTL what it has; a child that changes its
 * effective ids is read again at once; a reaped child is gone, and stays so from the cache. As
 * root, as make test runs it (set*id needs CAP_SETUID).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "credcache.h"
#include "monoclock.h"

/* The child's first change: its fsuid alone, to 65534 (/proc/PID's owner stays root). */
static int fsuid_nobody(void)
{
	setfsuid(65534);
	return setfsuid(-1) == 65534 ? 0 : -1;
}

/* The second test's: a user's process (1000) whose set-uid part takes another user's euid. */
static int as_user(void)
{
	return setresgid(1000, 1000, 0) || setresuid(1000, 1000, 0) ? -1 : 0;
}

static int euid_2000(void)
{
	/* back to euid 0 (the saved id allows it), then to 2000 */
	return setresuid(-1, 0, -1) || setresuid(-1, 2000, -1) ? -1 : 0;
}

/*
 * A child that runs before (when not NULL), waits for a byte on go, runs change, says so on
 * done, then waits for another byte and exits.
 */
static pid_t child(int go[2], int done[2], int (*before)(void), int (*change)(void))
{
	pid_t pid;
	char c;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if ((before && before()) || read(go[0], &c, 1) != 1 || change() ||
		    write(done[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(done[1]); /* a child that failed ends the test's reads */
	return pid;
}

static void test_fresh_stale_forgotten(void **state)
{
	int go[2], done[2], status;
	struct ls_creds c;
	uint64_t t0;
	pid_t pid;
	char x;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	pid = child(go, done, NULL, fsuid_nobody);
	t0 = ls_mono_ns();
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 0);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(done[0], &x, 1), 1);
	/* the uncached read sees the change at once */
	assert_int_equal(ls_creds__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 65534);
	/* the cache, within its TTL (checked: a slow machine may have passed it), the old rights */
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	if (ls_mono_ns() - t0 < LS_CREDCACHE_TTL_NS)
		assert_int_equal(c.fsuid, 0);
	ls_credcache__forget(pid);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 65534);
	/* gone: -ESRCH, from the cache too */
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	ls_credcache__forget(pid);
	assert_int_equal(ls_credcache__of_pid(pid, &c), -ESRCH);
	assert_int_equal(ls_credcache__of_pid(pid, &c), -ESRCH);
	assert_int_equal(ls_credcache__of_pid(0, &c), -ESRCH);
	assert_int_equal(ls_credcache__of_pid(-1, &c), -ESRCH);
}

/* A child that takes another euid (setresuid, which also makes it not dumpable): read again. */
static void test_owner_change(void **state)
{
	int go[2], done[2], status;
	struct ls_creds c;
	pid_t pid;
	char x;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	pid = child(go, done, as_user, euid_2000);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	/* may still be root if the child has not switched yet: wait for a read of 1000 */
	for (int i = 0; c.fsuid != 1000; i++) {
		assert_true(i < 1000000);
		ls_credcache__forget(pid);
		assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	}
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(done[0], &x, 1), 1);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 2000); /* within the TTL, yet read again */
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
}

/* An entry is read again once its TTL has passed. */
static void test_ttl(void **state)
{
	struct timespec ts = {.tv_sec = (LS_CREDCACHE_TTL_NS + 10000000) / 1000000000,
			      .tv_nsec = (LS_CREDCACHE_TTL_NS + 10000000) % 1000000000};
	int go[2], done[2], status;
	struct ls_creds c;
	pid_t pid;
	char x;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	pid = child(go, done, NULL, fsuid_nobody);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 0);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(done[0], &x, 1), 1);
	nanosleep(&ts, NULL); /* the TTL itself is what is tested: no event to wait for */
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 65534);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/*
 * An exec record's rights (ls_credcache__seed): used while the owner they came with is /proc/PID's
 * and their time is within the TTL; a seed with another owner, a stale one, or one older than
 * the entry there, is not.
 */
static void test_seed(void **state)
{
	struct ls_creds fake = {.fsuid = 4242, .fsgid = 4343, .ngroups = 1, .groups = {7}}, c;
	int go[2], done[2], status;
	uint64_t now;
	pid_t pid;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	pid = child(go, done, NULL, fsuid_nobody); /* root, waiting: its status says fsuid 0 */
	now = ls_mono_ns();
	ls_credcache__seed(pid, &fake, 0, 0, now);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	if (ls_mono_ns() - now < LS_CREDCACHE_TTL_NS) {
		assert_int_equal(c.fsuid, 4242);
		assert_int_equal(c.fsgid, 4343);
		assert_int_equal(c.ngroups, 1);
		assert_int_equal(c.groups[0], 7);
	}
	/* an older seed leaves the newer entry */
	ls_credcache__seed(pid, &(struct ls_creds){.fsuid = 99}, 0, 0, now - 1);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	if (ls_mono_ns() - now < LS_CREDCACHE_TTL_NS)
		assert_int_equal(c.fsuid, 4242);
	/* the owner it came with is not /proc/PID's (a set*id() since): status is read */
	ls_credcache__forget(pid);
	ls_credcache__seed(pid, &fake, 1234, 0, ls_mono_ns());
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 0);
	/* taken longer than the TTL ago: status is read */
	ls_credcache__forget(pid);
	ls_credcache__seed(pid, &fake, 0, 0, ls_mono_ns() - LS_CREDCACHE_TTL_NS - 1);
	assert_int_equal(ls_credcache__of_pid(pid, &c), 0);
	assert_int_equal(c.fsuid, 0);
	assert_int_equal(write(go[1], "xx", 2), 2); /* its change, then its exit */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_stale_forgotten),
		cmocka_unit_test(test_owner_change),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
