// SPDX-License-Identifier: MIT
/*
 * A UNIX socket reached with a user's rights (ls_asuser__unix_socket): as root, as CI runs this,
 * for nobody (65534), who may reach a socket anyone may write and not one only root may; a
 * symlink to a socket and a regular file are refused; the descriptor reaches that very socket.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unix_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
