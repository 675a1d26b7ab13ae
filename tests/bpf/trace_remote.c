// SPDX-License-Identifier: MIT
/*
 * Drives userspace/remote_exec.c for tests/bpf/test_trace_remote.sh:
 *
 *	trace_remote probe PID           prints what ls_remote_exec__probe() found
 *	trace_remote send PID SCRIPT     ls_remote_exec__send()
 *	trace_remote loader SITE_DIR     prints ls_remote_exec__loader_source()
 *
 * Exits with the errno of a failure (so the test can tell them apart), 0 on success.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote_exec.h"

int main(int argc, char **argv)
{
	struct ls_remote_info info;
	char buf[16384];
	int err;

	if (argc == 3 && !strcmp(argv[1], "probe")) {
		err = ls_remote_exec__probe(atoi(argv[2]), &info);
		if (!err)
			printf("version %#" PRIx64 " enabled %d path_max %u free_threaded %d\n",
			       info.version, info.enabled, info.path_max, info.free_threaded);
	} else if (argc == 4 && !strcmp(argv[1], "send")) {
		err = ls_remote_exec__send(atoi(argv[2]), argv[3]);
	} else if (argc == 3 && !strcmp(argv[1], "loader")) {
		err = ls_remote_exec__loader_source(argv[2], buf, sizeof(buf));
		if (!err)
			fputs(buf, stdout);
	} else {
		fprintf(stderr,
			"usage: trace_remote probe PID | send PID SCRIPT | loader SITE_DIR\n");
		return 64;
	}
	return err ? -err : 0;
}
