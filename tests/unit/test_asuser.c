// SPDX-License-Identifier: MIT
/*
 * A UNIX socket reached with a user's rights (ls_asuser__unix_socket): as root, as CI runs this,
 * for nobody (65534), who may reach a socket anyone may write and not one only root may; a
 * symlink to a socket and a regular file are refused; the descriptor reaches that very socket.
 * Files opened one after another with different rights through the one opener thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "asuser.h"

static char dir[] = "/tmp/ls-asuser-XXXXXX";

static int listen_at(const char *path, mode_t mode)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(chmod(path, mode), 0);
	return fd;
}

/* Connects through the O_PATH descriptor's /proc/self/fd name, as libcurl is told to */
static int connect_via(int pfd)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), rc;

	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d", pfd);
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return rc;
}

static void test_unix_socket(void **state)
{
	char open_sock[64], root_sock[64], link[64], file[64];
	struct ls_creds nobody;
	int l1, l2, fd;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(open_sock, sizeof(open_sock), "%s/open.sock", dir);
	snprintf(root_sock, sizeof(root_sock), "%s/root.sock", dir);
	snprintf(link, sizeof(link), "%s/link.sock", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	l1 = listen_at(open_sock, 0666);
	l2 = listen_at(root_sock, 0600);
	assert_int_equal(symlink(open_sock, link), 0);
	fclose(fopen(file, "w"));
	assert_int_equal(ls_creds__of_user(65534, 65534, &nobody), 0);

	fd = ls_asuser__unix_socket(&nobody, open_sock);
	assert_true(fd >= 0);
	assert_int_equal(connect_via(fd), 0);
	close(fd);
	assert_int_equal(ls_asuser__unix_socket(&nobody, root_sock), -EACCES);
	fd = ls_asuser__unix_socket(NULL, root_sock); /* root may */
	assert_true(fd >= 0);
	assert_int_equal(connect_via(fd), 0);
	close(fd);
	assert_int_equal(ls_asuser__unix_socket(&nobody, link), -EINVAL);
	assert_int_equal(ls_asuser__unix_socket(NULL, link), -EINVAL);
	assert_int_equal(ls_asuser__unix_socket(&nobody, file), -EINVAL);
	assert_int_equal(ls_asuser__unix_socket(&nobody, "/nonexistent/x.sock"), -ENOENT);

	close(l1);
	close(l2);
	unlink(open_sock);
	unlink(root_sock);
	unlink(link);
	unlink(file);
	rmdir(dir);
}

/*
 * One opener serves every request: what one request's credentials allow must not carry over to
 * the next. A file only group 4242 may read: uid 1 in that group opens it, uid 1 without it
 * (right after) may not, nor nobody; a file only uid 1 owns: uid 1 may, uid 2 may not; a
 * root-only file: nobody never, root itself always (it opens as itself).
 */
static void test_rights_do_not_carry_over(void **state)
{
	char d[] = "/tmp/ls-asuser-XXXXXX", grp[64], own[64], root[64];
	struct ls_creds in_grp = {.fsuid = 1, .fsgid = 1, .ngroups = 2, .groups = {1, 4242}};
	struct ls_creds no_grp = {.fsuid = 1, .fsgid = 1, .ngroups = 1, .groups = {1}};
	struct ls_creds two = {.fsuid = 2, .fsgid = 2, .ngroups = 1, .groups = {2}};
	struct ls_creds nobody;
	int fd;

	if (geteuid() != 0)
		fail_msg("needs root (the collector's rights), as make test runs it");
	assert_non_null(mkdtemp(d));
	assert_int_equal(chmod(d, 0755), 0);
	snprintf(grp, sizeof(grp), "%s/grp", d);
	snprintf(own, sizeof(own), "%s/own", d);
	snprintf(root, sizeof(root), "%s/root", d);
	fclose(fopen(grp, "w"));
	fclose(fopen(own, "w"));
	fclose(fopen(root, "w"));
	assert_int_equal(chown(grp, 0, 4242), 0);
	assert_int_equal(chmod(grp, 0040), 0);
	assert_int_equal(chown(own, 1, 1), 0);
	assert_int_equal(chmod(own, 0400), 0);
	assert_int_equal(chmod(root, 0600), 0);
	assert_int_equal(ls_creds__of_user(65534, 65534, &nobody), 0);
	for (int i = 0; i < 3; i++) {
		/* twice: the second keeps the ids the opener holds, which must still be these */
		for (int j = 0; j < 2; j++) {
			fd = ls_asuser__open(&in_grp, AT_FDCWD, grp, O_RDONLY, 0, LS_OPEN_REGULAR);
			assert_true(fd >= 0);
			close(fd);
		}
		/* then the same uid and gid with other groups: taken again, not kept */
		for (int j = 0; j < 2; j++)
			assert_int_equal(ls_asuser__open(&no_grp, AT_FDCWD, grp, O_RDONLY, 0,
							 LS_OPEN_REGULAR),
					 -EACCES);
		assert_int_equal(
			ls_asuser__open(&nobody, AT_FDCWD, grp, O_RDONLY, 0, LS_OPEN_REGULAR),
			-EACCES);
		fd = ls_asuser__open(&no_grp, AT_FDCWD, own, O_RDONLY, 0, LS_OPEN_REGULAR);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(ls_asuser__open(&two, AT_FDCWD, own, O_RDONLY, 0, LS_OPEN_REGULAR),
				 -EACCES);
		assert_int_equal(
			ls_asuser__open(&nobody, AT_FDCWD, root, O_RDONLY, 0, LS_OPEN_REGULAR),
			-EACCES);
		fd = ls_asuser__open(NULL, AT_FDCWD, root, O_RDONLY, 0, LS_OPEN_REGULAR);
		assert_true(fd >= 0);
		close(fd);
	}
	/* and the caller's own rights were never touched */
	assert_int_equal(setfsuid(-1), 0);
	unlink(grp);
	unlink(own);
	unlink(root);
	rmdir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unix_socket),
		cmocka_unit_test(test_rights_do_not_carry_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
