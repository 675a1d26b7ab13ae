/* SPDX-License-Identifier: MIT */
/* Tests: the process row most profiles made by tests hold, for each test to add to. */
#ifndef LS_TEST_PROC_H
#define LS_TEST_PROC_H

#include "store.h"

/* Row 1: python3, pid 100 (100 in its own namespace), parent pid 1 not profiled, no spawn line */
static inline struct ls_store_proc ls_test_proc(void)
{
	return (struct ls_store_proc){
		.id = 1,
		.pid = 100,
		.ppid = 1,
		.nspid = 100,
		.parent_id = -1,
		.spawn_stack = -1,
		.spawn_tid = -1,
		.comm = "python3",
	};
}

/* A CPython 3.11 row still alive (no end, no exit code, no cgroup); comm and argv are borrowed. */
static inline struct ls_store_proc ls_test_proc_at(int64_t id, int pid, const char *comm,
						   const char *argv)
{
	struct ls_store_proc p = ls_test_proc();

	p.id = id;
	p.pid = p.nspid = pid;
	p.comm = comm;
	p.argv = argv;
	p.exe = "/usr/bin/python3.11";
	p.end_ns = -1;
	p.exit_code = -1;
	p.python = "3.11.2";
	p.cgroup_id = -1;
	return p;
}

#endif
